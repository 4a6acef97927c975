// FLA's drop-ins: prepare_chunk_indices and prepare_chunk_offsets with FLA's
// signature, reading tensors, arrays or lists in place where it can and
// answering in the caller's kind, or writing into its buffers (out=); and
// fla_max_output_sizes.
#include <cstdint>
#include <string>
#include <vector>

#include "chunkmeta/fla.hpp"
#include "fastcall.hpp"

namespace chunkmeta::python {
namespace {


// cu_seqlens as FLA's functions take it: values from `cu_seqlens_cpu` when
// given (FLA's host copy of a device tensor), else from `cu_seqlens`.
struct CuSeqlens {
  CuSeqlens(py::handle cu_seqlens, py::handle cu_seqlens_cpu)
      : device_tensor(cu_seqlens_cpu.is_none() ? py::handle() : cu_seqlens),
        values(cu_seqlens_cpu.is_none() ? cu_seqlens : cu_seqlens_cpu,
               cu_seqlens_cpu.is_none() ? "cu_seqlens" : "cu_seqlens_cpu", /*int64_allowed=*/true) {
    // Not read then, but the caller's all the same: out= may not be written over it.
    if (!cu_seqlens_cpu.is_none()) unread.enter_argument(cu_seqlens, "cu_seqlens");
  }

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
  MemoryInUse unread;  // cu_seqlens' memory when its values come from cu_seqlens_cpu
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
      const OutBuffer buffer(out, "out (chunk_indices)", type, Shape::table_of(2));
      const auto written = write(buffer.entries<Int>());
      if (!written.ok()) raise_invalid(written.error());
      return py::int_(written.value());
    }
    const auto sizes = fla::output_sizes(view);
    if (!sizes.ok()) raise_invalid(sizes.error());
    const std::int64_t rows = sizes.value().chunks;
    Results results(cu.values.kind(), type, {rows}, {Shape::table_of(2)});
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

FLA's chunk_indices (specs/fla), computed by chunkmeta's fast implementation:
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

FLA's chunk_offsets (specs/fla), computed by chunkmeta's fast implementation:
B + 1 int64 entries, offsets[0] = 0 and offsets[i + 1] = offsets[i] +
ceil(len_i / chunk_size), whatever cu_seqlens' dtype; of its kind (a CPU
tensor, a numpy array, a list). Arguments as prepare_chunk_indices'; out= is a
writable 1-D int64 buffer, and B + 1 is returned.)doc";

PyMethodDef methods[] = {
    {"prepare_chunk_indices", fastcall(&prepare_chunk_indices_fastcall), METH_FASTCALL | METH_KEYWORDS, kIndicesDoc},
    {"prepare_chunk_offsets", fastcall(&prepare_chunk_offsets_fastcall), METH_FASTCALL | METH_KEYWORDS, kOffsetsDoc},
    {nullptr, nullptr, 0, nullptr}};

// For bench/python_bench.py: the library alone, in the same process.
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

void add_fla(py::module_& m) {
  add_fastcall_methods(m, methods);
  py::options options;
  options.disable_function_signatures();
  m.def(
      "fla_max_output_sizes",
      [](py::handle max_tokens_given, py::handle max_sequences_given, py::handle chunk_size_given) {
        const std::int64_t max_tokens = to_int64(max_tokens_given, "max_tokens");
        const std::int64_t max_sequences = to_int64(max_sequences_given, "max_sequences");
        const std::int64_t chunk_size = to_int64(chunk_size_given, "chunk_size");
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
  m.def("_fla_into_nanoseconds", &fla_into_nanoseconds, py::arg("chunk_size"), py::arg("cu_seqlens"),
        py::arg("iterations"));
}

}  // namespace chunkmeta::python
