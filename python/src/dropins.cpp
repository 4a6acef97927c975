// The drop-ins: Mamba's compute_chunk_metadata with vLLM's signature, and
// FLA's prepare_chunk_indices / prepare_chunk_offsets with FLA's, each
// reading tensors, arrays or lists in place where it can and answering in the
// callers' kind, or writing into the caller's buffers (out=).
#include <array>
#include <chrono>
#include <type_traits>
#include <cstdint>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "chunkmeta/chunkmeta.hpp"
#include "chunkmeta/fla.hpp"
#include "module.hpp"

namespace chunkmeta::python {
namespace {

// --- Arguments: a METH_FASTCALL function's, by position or keyword ---

// A function's arguments: the first `positional` may come by position, the
// first `required` must come; the rest are keyword-only. Each slot of `given`
// is the argument or nullptr.
struct Signature {
  const char* function;
  std::initializer_list<const char*> names;
  Py_ssize_t positional;
  Py_ssize_t required;
};

template <std::size_t N>
void bind_arguments(const Signature& signature, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                    std::array<PyObject*, N>& given) {
  given.fill(nullptr);
  const auto* names = signature.names.begin();
  const auto count = static_cast<Py_ssize_t>(signature.names.size());
  if (nargs > signature.positional) {
    throw py::type_error(std::string(signature.function) + "() takes " + std::to_string(signature.positional) +
                         " positional arguments (" + std::to_string(nargs) + " given)");
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) given[static_cast<std::size_t>(i)] = args[i];
  const Py_ssize_t keywords = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t k = 0; k < keywords; ++k) {
    PyObject* name = PyTuple_GET_ITEM(kwnames, k);
    Py_ssize_t slot = -1;
    for (Py_ssize_t i = 0; i < count && slot < 0; ++i) {
      if (PyUnicode_CompareWithASCIIString(name, names[i]) == 0) slot = i;
    }
    if (slot < 0 || given[static_cast<std::size_t>(slot)] != nullptr) {
      const std::string spelled = py::str(name);
      throw py::type_error(slot < 0 ? std::string(signature.function) + "() got an unexpected keyword argument '" +
                                          spelled + "'"
                                    : std::string(signature.function) + "() got multiple values for '" + spelled + "'");
    }
    given[static_cast<std::size_t>(slot)] = args[nargs + k];
  }
  for (Py_ssize_t i = 0; i < signature.required; ++i) {
    if (given[static_cast<std::size_t>(i)] == nullptr) {
      throw py::type_error(std::string(signature.function) + "() missing argument '" + names[i] + "'");
    }
  }
}

py::handle or_none(PyObject* argument) { return argument != nullptr ? py::handle(argument) : py::handle(Py_None); }

// Runs `body` as a METH_FASTCALL function body: Python errors set, never thrown through C.
template <typename Body>
PyObject* guarded(Body&& body) {
  try {
    return body().release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (py::builtin_exception& e) {
    e.set_error();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

// Below this much output the computation takes well under a microsecond,
// less than handing the GIL over and back; above it, other threads run meanwhile.
constexpr std::int64_t kReleaseGilAbove = 4096;

template <typename Compute>
auto without_gil_if_large(std::int64_t entries, Compute&& compute) {
  if (entries > kReleaseGilAbove && !tensor_memory_in_use()) {
    py::gil_scoped_release unlocked;
    return compute();
  }
  return compute();
}

template <typename Int>
Region region(std::span<Int> values, const char* name) {
  return {values.data(), values.size_bytes(), name};
}

// --- Mamba: compute_chunk_metadata ---

// Chunks of a well-shaped workload are at most tokens/C + 2B (a head and a
// partial tail per row), at most 2B + 1 above the exact count. Allocating
// that lets one fast_into pass validate, count and write; -1 when the shape
// is wrong or the bound is large enough that exact sizing is worth a pass.
template <typename Int>
std::int64_t chunk_bound(const BasicWorkloadView<Int>& view) {
  constexpr std::int64_t kLargest = std::int64_t{1} << 20;
  const auto& q = view.query_start_loc;
  const auto rows = static_cast<std::int64_t>(view.num_computed_tokens.size());
  if (view.chunk_size < 1 || q.size() != view.num_computed_tokens.size() + 1 || q.back() < q.front()) return -1;
  const std::int64_t tokens = static_cast<std::int64_t>(q.back()) - static_cast<std::int64_t>(q.front());
  if (tokens > kMaxValue || rows > kLargest) return -1;
  const std::int64_t bound = tokens / view.chunk_size + 2 * rows;
  return bound <= kLargest ? bound : -1;
}

template <typename Int>
Result<OutputSizes> write_outputs(const BasicWorkloadView<Int>& view, const OutputBuffers& out) {
  return without_gil_if_large(static_cast<std::int64_t>(out.seq_idx.size() + out.last_chunk_indices.size()),
                              [&] { return fast_into(view, out); });
}

template <typename Int>
py::object compute_view(const BasicWorkloadView<Int>& view, ArrayKind kind) {
  const auto rows = static_cast<std::int64_t>(view.num_computed_tokens.size());
  const auto write = [&view](const Results& results) {
    return write_outputs(view, {results.array<std::int32_t>(0), results.array<std::int32_t>(1),
                                results.array<std::int32_t>(2)});
  };
  if (const std::int64_t bound = chunk_bound(view); bound >= 0) {
    Results results(kind, IntType::int32, {bound + 1, bound, rows});
    const auto written = write(results);
    if (written.ok()) {
      const auto& n = written.value();
      return results.finish({n.cu_chunk_seqlen, n.seq_idx, n.last_chunk_indices});
    }
    if (written.error().code != ErrorCode::output_buffer_too_small) raise_invalid(written.error());
  }
  // Exact sizes first (a validating pass), then one write.
  const auto sizes = output_sizes(view);
  if (!sizes.ok()) raise_invalid(sizes.error());
  const auto& n = sizes.value();
  Results results(kind, IntType::int32, {n.cu_chunk_seqlen, n.seq_idx, n.last_chunk_indices});
  const auto written = write(results);
  if (!written.ok()) raise_invalid(written.error());
  return results.finish({n.cu_chunk_seqlen, n.seq_idx, n.last_chunk_indices});
}

// out=(cu_chunk_seqlen, seq_idx, last_chunk_indices): the caller's int32
// buffers, written in place; the three lengths written are returned.
template <typename Int>
py::object compute_into(const BasicWorkloadView<Int>& view, py::handle out) {
  if (!(PyTuple_Check(out.ptr()) || PyList_Check(out.ptr())) || py::len(out) != 3) {
    throw py::type_error("out must be a tuple of three int32 buffers (cu_chunk_seqlen, seq_idx, last_chunk_indices), not " +
                         std::string(Py_TYPE(out.ptr())->tp_name));
  }
  PyObject** buffers = PySequence_Fast_ITEMS(out.ptr());  // a tuple or a list
  const OutBuffer cu(buffers[0], "out[0] (cu_chunk_seqlen)", IntType::int32);
  const OutBuffer seq(buffers[1], "out[1] (seq_idx)", IntType::int32);
  const OutBuffer last(buffers[2], "out[2] (last_chunk_indices)", IntType::int32);
  refuse_overlaps({region(cu.entries<std::int32_t>(), "out[0] (cu_chunk_seqlen)"),
                   region(seq.entries<std::int32_t>(), "out[1] (seq_idx)"),
                   region(last.entries<std::int32_t>(), "out[2] (last_chunk_indices)")},
                  {region(view.num_computed_tokens, "num_computed_tokens_p_cpu"),
                   region(view.query_start_loc, "query_start_loc_p_cpu")});
  const auto written = write_outputs(view, {cu.entries<std::int32_t>(), seq.entries<std::int32_t>(),
                                            last.entries<std::int32_t>()});
  if (!written.ok()) raise_invalid(written.error());
  const auto& n = written.value();
  PyObject* lengths = Py_BuildValue("(LLL)", static_cast<long long>(n.cu_chunk_seqlen), static_cast<long long>(n.seq_idx),
                                    static_cast<long long>(n.last_chunk_indices));
  if (lengths == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(lengths);
}

py::object compute_chunk_metadata(py::handle chunk_size, py::handle num_prefills, py::handle num_computed_tokens,
                                  py::handle query_start_loc, py::handle out) {
  const std::int64_t c = to_int64(chunk_size, "chunk_size");
  const std::int64_t rows = to_int64(num_prefills, "num_prefills");
  const InputArray computed(num_computed_tokens, "num_computed_tokens_p_cpu");
  const InputArray starts(query_start_loc, "query_start_loc_p_cpu");
  if (rows != static_cast<std::int64_t>(computed.size())) {
    raise_invalid("num_prefills is " + std::to_string(rows) + " but num_computed_tokens_p_cpu has " +
                      std::to_string(computed.size()) + " entries; they must agree",
                  "length_mismatch", "num_prefills", Error::kNoIndex, "invalid_input");
  }
  const ArrayKind kind = kind_of_results({computed.kind(), starts.kind()});
  if (!computed.copied() && !starts.copied()) {
    const WorkloadView32 view{c, computed.int32(), starts.int32()};
    return out.is_none() ? compute_view(view, kind) : compute_into(view, out);
  }
  const auto wide_computed = computed.widened();
  const auto wide_starts = starts.widened();
  const WorkloadView view{c, wide_computed, wide_starts};
  return out.is_none() ? compute_view(view, kind) : compute_into(view, out);
}

const Signature kComputeSignature{
    "compute_chunk_metadata",
    {"chunk_size", "num_prefills", "num_computed_tokens_p_cpu", "query_start_loc_p_cpu", "out"},
    4,
    4};

PyObject* compute_chunk_metadata_fastcall(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&] {
    std::array<PyObject*, 5> given{};
    bind_arguments(kComputeSignature, args, nargs, kwnames, given);
    return compute_chunk_metadata(given[0], given[1], given[2], given[3], or_none(given[4]));
  });
}

const char* const kComputeDoc = R"doc(compute_chunk_metadata(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu, *, out=None)
--

The engine's chunk metadata (SPEC Part 1), computed by chunkmeta's fast implementation.

Inputs: chunk_size and num_prefills are ints; the arrays are int32 CPU tensors
(read in place, no copy), int32 numpy arrays or other buffers (read in place),
or lists or tuples of ints. A tensor or array of another dtype, device, shape or
layout, or any other object (a dict, a generator), raises TypeError; nothing is
converted silently.

Returns (cu_chunk_seqlen, seq_idx, last_chunk_indices) of exactly K+1, K and
num_prefills int32 entries, of the inputs' kind: CPU tensors for tensor inputs,
numpy arrays for arrays, lists for lists. With out=(cu, seq, last), writable
int32 tensors or arrays (views of the engine's persistent buffers), the results
are written into them instead and the three lengths are returned; a buffer
too small raises InvalidWorkload (output_buffer_too_small) naming it and the
size needed. max_output_sizes() sizes them once from the engine's limits.
The GIL is released while large workloads are computed.

Raises chunkmeta.InvalidWorkload (a ValueError) with the code, field and index
of the broken rule, or output_too_large above the library's cap of 2**26 chunks.)doc";

// --- FLA: prepare_chunk_indices, prepare_chunk_offsets ---

// cu_seqlens as FLA's functions take it: values from `cu_seqlens_cpu` when
// given (FLA's host copy of a device tensor), else from `cu_seqlens`.
struct CuSeqlens {
  CuSeqlens(py::handle cu_seqlens, py::handle cu_seqlens_cpu)
      : device_tensor(cu_seqlens_cpu.is_none() ? py::handle() : cu_seqlens),
        values(cu_seqlens_cpu.is_none() ? cu_seqlens : cu_seqlens_cpu,
               cu_seqlens_cpu.is_none() ? "cu_seqlens" : "cu_seqlens_cpu", /*int64_allowed=*/true) {}

  // Calls compute(view) with the values in place (int32 or int64) or widened (a copied list).
  template <typename Compute>
  auto with_view(std::int64_t chunk_size, Compute&& compute) const {
    if (values.copied()) {
      const auto wide = values.widened();
      return compute(fla::View64{chunk_size, wide});
    }
    if (values.type() == IntType::int32) return compute(fla::View32{chunk_size, values.int32()});
    return compute(fla::View64{chunk_size, values.int64()});
  }

  // With cu_seqlens_cpu given, the result goes where FLA's goes: to cu_seqlens' device and dtype.
  py::object placed(py::object result) const {
    if (!device_tensor || !py::hasattr(device_tensor, "device") || !py::hasattr(result, "to")) return result;
    return result.attr("to")(device_tensor);
  }

  py::handle device_tensor;
  InputArray values;
};

py::object prepare_chunk_indices(py::handle cu_seqlens, py::handle chunk_size, py::handle cu_seqlens_cpu,
                                 py::handle out) {
  const std::int64_t c = to_int64(chunk_size, "chunk_size");
  const CuSeqlens cu(cu_seqlens, cu_seqlens_cpu);
  return cu.with_view(c, [&](const auto& view) -> py::object {
    using Int = typename std::decay_t<decltype(view.cu_seqlens)>::value_type;
    const IntType type = sizeof(Int) == 4 ? IntType::int32 : IntType::int64;
    const auto write = [&view](std::span<Int> buffer) {
      return without_gil_if_large(static_cast<std::int64_t>(buffer.size()),
                                  [&] { return fla::chunk_indices_into(view, buffer); });
    };
    if (!out.is_none()) {
      const OutBuffer buffer(out, "out (chunk_indices)", type, 2);
      refuse_overlaps({region(buffer.entries<Int>(), "out (chunk_indices)")}, {region(view.cu_seqlens, "cu_seqlens")});
      const auto written = write(buffer.entries<Int>());
      if (!written.ok()) raise_invalid(written.error());
      return py::int_(written.value());
    }
    const auto sizes = fla::output_sizes(view);
    if (!sizes.ok()) raise_invalid(sizes.error());
    const std::int64_t rows = sizes.value().chunks;
    Results results(cu.values.kind(), type, {rows}, {2});
    const auto written = write(results.array<Int>(0));
    if (!written.ok()) raise_invalid(written.error());
    return cu.placed(results.finish({rows}));
  });
}

py::object prepare_chunk_offsets(py::handle cu_seqlens, py::handle chunk_size, py::handle cu_seqlens_cpu,
                                 py::handle out) {
  const std::int64_t c = to_int64(chunk_size, "chunk_size");
  const CuSeqlens cu(cu_seqlens, cu_seqlens_cpu);
  return cu.with_view(c, [&](const auto& view) -> py::object {
    const auto write = [&view](std::span<std::int64_t> buffer) {
      return without_gil_if_large(static_cast<std::int64_t>(buffer.size()),
                                  [&] { return fla::chunk_offsets_into(view, buffer); });
    };
    if (!out.is_none()) {
      const OutBuffer buffer(out, "out (chunk_offsets)", IntType::int64);
      refuse_overlaps({region(buffer.entries<std::int64_t>(), "out (chunk_offsets)")},
                      {region(view.cu_seqlens, "cu_seqlens")});
      const auto written = write(buffer.entries<std::int64_t>());
      if (!written.ok()) raise_invalid(written.error());
      return py::int_(written.value());
    }
    const auto sizes = fla::output_sizes(view);
    if (!sizes.ok()) raise_invalid(sizes.error());
    const std::int64_t entries = sizes.value().offsets;
    Results results(cu.values.kind(), IntType::int64, {entries});
    const auto written = write(results.array<std::int64_t>(0));
    if (!written.ok()) raise_invalid(written.error());
    return cu.placed(results.finish({entries}));
  });
}

const Signature kIndicesSignature{"prepare_chunk_indices", {"cu_seqlens", "chunk_size", "cu_seqlens_cpu", "out"}, 3, 2};
const Signature kOffsetsSignature{"prepare_chunk_offsets", {"cu_seqlens", "chunk_size", "cu_seqlens_cpu", "out"}, 3, 2};

PyObject* prepare_chunk_indices_fastcall(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&] {
    std::array<PyObject*, 4> given{};
    bind_arguments(kIndicesSignature, args, nargs, kwnames, given);
    return prepare_chunk_indices(given[0], given[1], or_none(given[2]), or_none(given[3]));
  });
}

PyObject* prepare_chunk_offsets_fastcall(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&] {
    std::array<PyObject*, 4> given{};
    bind_arguments(kOffsetsSignature, args, nargs, kwnames, given);
    return prepare_chunk_offsets(given[0], given[1], or_none(given[2]), or_none(given[3]));
  });
}

const char* const kIndicesDoc = R"doc(prepare_chunk_indices(cu_seqlens, chunk_size, cu_seqlens_cpu=None, *, out=None)
--

FLA's chunk_indices (SPEC Part 2), computed by chunkmeta's fast implementation:
one row (i, j) per chunk of chunk_size tokens, i the sequence (an empty one has
no row and shifts no id), j the chunk within it. An (N, 2) array of cu_seqlens'
dtype, of its kind: a CPU tensor for a tensor, a numpy array for an array, a
list of [i, j] lists for a list.

cu_seqlens: B + 1 non-decreasing offsets, an int32 or int64 CPU tensor, numpy
array or buffer (read in place), or a list or tuple of ints. With
cu_seqlens_cpu (FLA's host copy of a device tensor), its values are read and
the result is moved to cu_seqlens' device and dtype, as FLA does. With out=, a
writable (rows, 2) buffer of cu_seqlens' dtype, the rows are written into it
and their count N is returned (output_buffer_too_small names it otherwise).

Raises chunkmeta.InvalidWorkload with the code, field and index of the broken
rule, TypeError for an argument of another kind.)doc";

const char* const kOffsetsDoc = R"doc(prepare_chunk_offsets(cu_seqlens, chunk_size, cu_seqlens_cpu=None, *, out=None)
--

FLA's chunk_offsets (SPEC Part 2), computed by chunkmeta's fast implementation:
B + 1 int64 entries, offsets[0] = 0 and offsets[i + 1] = offsets[i] +
ceil(len_i / chunk_size), whatever cu_seqlens' dtype; of its kind (a CPU
tensor, a numpy array, a list). Arguments as prepare_chunk_indices'; out= is a
writable 1-D int64 buffer, and B + 1 is returned.)doc";

PyMethodDef fastcall_methods[] = {
    {"compute_chunk_metadata", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&compute_chunk_metadata_fastcall)),
     METH_FASTCALL | METH_KEYWORDS, kComputeDoc},
    {"prepare_chunk_indices", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&prepare_chunk_indices_fastcall)),
     METH_FASTCALL | METH_KEYWORDS, kIndicesDoc},
    {"prepare_chunk_offsets", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&prepare_chunk_offsets_fastcall)),
     METH_FASTCALL | METH_KEYWORDS, kOffsetsDoc},
    {nullptr, nullptr, 0, nullptr}};

// --- For bench/python_bench.py: the library alone, in the same process ---

// Nanoseconds per C++ call on the same inputs into buffers allocated once, so
// a Python call's overhead over the library is measured on one workload.
template <typename Call>
double nanoseconds_per_call(int iterations, Call&& call) {
  const auto start = std::chrono::steady_clock::now();
  std::int64_t written = 0;
  for (int i = 0; i < iterations; ++i) {
    written += call();
    asm volatile("" : : "r"(written) : "memory");  // keep every call and its stores
  }
  const std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / iterations;
}

double fast_into_nanoseconds(std::int64_t chunk_size, py::handle num_computed_tokens, py::handle query_start_loc,
                             int iterations) {
  const InputArray computed(num_computed_tokens, "num_computed_tokens");
  const InputArray starts(query_start_loc, "query_start_loc");
  if (computed.copied() || starts.copied()) throw py::type_error("int32 tensors or arrays expected");
  const WorkloadView32 view{chunk_size, computed.int32(), starts.int32()};
  const auto sizes = output_sizes(view);
  if (!sizes.ok()) raise_invalid(sizes.error());
  std::vector<std::int32_t> cu(static_cast<std::size_t>(sizes.value().cu_chunk_seqlen));
  std::vector<std::int32_t> seq(static_cast<std::size_t>(sizes.value().seq_idx));
  std::vector<std::int32_t> last(static_cast<std::size_t>(sizes.value().last_chunk_indices));
  return nanoseconds_per_call(iterations, [&] {
    const auto result = fast_into(view, {cu, seq, last});
    return result.ok() ? result.value().seq_idx : -1;
  });
}

// Both FLA outputs from int32 cu_seqlens, as the drop-ins compute them.
double fla_into_nanoseconds(std::int64_t chunk_size, py::handle cu_seqlens, int iterations) {
  const InputArray cu(cu_seqlens, "cu_seqlens");
  if (cu.copied()) throw py::type_error("an int32 tensor or array expected");
  const fla::View32 view{chunk_size, cu.int32()};
  const auto sizes = fla::output_sizes(view);
  if (!sizes.ok()) raise_invalid(sizes.error());
  std::vector<std::int32_t> indices(static_cast<std::size_t>(2 * sizes.value().chunks));
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(sizes.value().offsets));
  return nanoseconds_per_call(iterations, [&] {
    const auto rows = fla::chunk_indices_into(view, std::span<std::int32_t>(indices));
    const auto entries = fla::chunk_offsets_into(view, std::span<std::int64_t>(offsets));
    return (rows.ok() ? rows.value() : -1) + (entries.ok() ? entries.value() : -1);
  });
}

}  // namespace

void add_dropins(py::module_& m) {
  // Each docstring starts with its signature in CPython's form ("name(...)\n--\n\n"):
  // inspect.signature() reads it, as for the fast-call functions above.
  py::options options;
  options.disable_function_signatures();
  if (PyModule_AddFunctions(m.ptr(), fastcall_methods) != 0) throw py::error_already_set();
  m.def(
      "max_output_sizes",
      [](std::int64_t max_tokens, std::int64_t max_rows, std::int64_t chunk_size) {
        const auto sizes = chunkmeta::max_output_sizes(max_tokens, max_rows, chunk_size);
        if (!sizes.ok()) raise_invalid(sizes.error());
        return py::make_tuple(sizes.value().cu_chunk_seqlen, sizes.value().seq_idx, sizes.value().last_chunk_indices);
      },
      py::arg("max_tokens"), py::arg("max_rows"), py::arg("chunk_size"),
      R"doc(max_output_sizes(max_tokens, max_rows, chunk_size)
--

Returns (cu_chunk_seqlen, seq_idx, last_chunk_indices): buffer sizes that hold compute_chunk_metadata's results for every prefill step
of an engine whose steps have at most max_tokens new tokens (its max batched
tokens) and max_rows requests, at chunk_size: size the out= buffers once.)doc");
  m.def(
      "fla_max_output_sizes",
      [](std::int64_t max_tokens, std::int64_t max_sequences, std::int64_t chunk_size) {
        const auto sizes = fla::max_output_sizes(max_tokens, max_sequences, chunk_size);
        if (!sizes.ok()) raise_invalid(sizes.error());
        return py::make_tuple(sizes.value().chunks, sizes.value().offsets);
      },
      py::arg("max_tokens"), py::arg("max_sequences"), py::arg("chunk_size"),
      R"doc(fla_max_output_sizes(max_tokens, max_sequences, chunk_size)
--

Returns (chunk_indices_rows, chunk_offsets_entries): buffer sizes that hold prepare_chunk_indices' rows and prepare_chunk_offsets'
entries for every step with at most max_tokens tokens and max_sequences
sequences at chunk_size: size the out= buffers once.)doc");
  m.def("_fast_into_nanoseconds", &fast_into_nanoseconds, py::arg("chunk_size"), py::arg("num_computed_tokens"),
        py::arg("query_start_loc"), py::arg("iterations"));
  m.def("_fla_into_nanoseconds", &fla_into_nanoseconds, py::arg("chunk_size"), py::arg("cu_seqlens"),
        py::arg("iterations"));
}

}  // namespace chunkmeta::python
