// Mamba's drop-in: compute_chunk_metadata with vLLM's signature, reading
// tensors, arrays or lists in place where it can and answering in the caller's
// kind, or writing into the caller's buffers (out=); and max_output_sizes.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "chunkmeta/checkpointed_chunks.hpp"
#include "chunkmeta/chunkmeta.hpp"
#include "fastcall.hpp"

namespace chunkmeta::python {
namespace {


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
  const auto written = write_outputs(view, {cu.entries<std::int32_t>(), seq.entries<std::int32_t>(),
                                            last.entries<std::int32_t>()});
  if (!written.ok()) raise_invalid(written.error());
  const auto& n = written.value();
  PyObject* lengths = Py_BuildValue("(LLL)", static_cast<long long>(n.cu_chunk_seqlen), static_cast<long long>(n.seq_idx),
                                    static_cast<long long>(n.last_chunk_indices));
  if (lengths == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(lengths);
}

// With checkpoint_offsets_p (vLLM #57329): the chunks also cut at each row's checkpoint, and a fourth
// array, checkpoint_chunk_indices (specs/mamba_checkpointed_chunks).
constexpr const char* kCheckpointedOutputs[] = {"out[0] (cu_chunk_seqlen)", "out[1] (seq_idx)",
                                                "out[2] (last_chunk_indices)", "out[3] (checkpoint_chunk_indices)"};

template <typename Int>
Result<checkpointed_chunks::Sizes> write_checkpointed(const checkpointed_chunks::BasicView<Int>& view,
                                                      const checkpointed_chunks::Buffers& out) {
  return without_gil_if_large(static_cast<std::int64_t>(out.seq_idx.size() + out.last_chunk_indices.size()),
                              [&] { return checkpointed_chunks::chunks_into(view, out); });
}

template <typename Int>
py::object checkpointed(const checkpointed_chunks::BasicView<Int>& view, ArrayKind kind, py::handle out) {
  if (out.is_none()) {
    const auto sizes = checkpointed_chunks::output_sizes(view);
    if (!sizes.ok()) raise_invalid(sizes.error());
    const auto& n = sizes.value();
    Results results(kind, IntType::int32, {n.chunks.cu_chunk_seqlen, n.chunks.seq_idx, n.chunks.last_chunk_indices, n.checkpoints});
    const auto written = write_checkpointed(view, {results.array<std::int32_t>(0), results.array<std::int32_t>(1),
                                                   results.array<std::int32_t>(2), results.array<std::int32_t>(3)});
    if (!written.ok()) raise_invalid(written.error());
    return results.finish({n.chunks.cu_chunk_seqlen, n.chunks.seq_idx, n.chunks.last_chunk_indices, n.checkpoints});
  }
  if (!(PyTuple_Check(out.ptr()) || PyList_Check(out.ptr())) || py::len(out) != 4) {
    throw py::type_error("out must be a tuple of four int32 buffers (cu_chunk_seqlen, seq_idx, last_chunk_indices, "
                         "checkpoint_chunk_indices) when checkpoint_offsets_p is given, not " +
                         std::string(Py_TYPE(out.ptr())->tp_name));
  }
  PyObject** buffers = PySequence_Fast_ITEMS(out.ptr());
  const OutBuffer cu(buffers[0], kCheckpointedOutputs[0], IntType::int32);
  const OutBuffer seq(buffers[1], kCheckpointedOutputs[1], IntType::int32);
  const OutBuffer last(buffers[2], kCheckpointedOutputs[2], IntType::int32);
  const OutBuffer ckpt(buffers[3], kCheckpointedOutputs[3], IntType::int32);
  const auto written = write_checkpointed(view, {cu.entries<std::int32_t>(), seq.entries<std::int32_t>(),
                                                 last.entries<std::int32_t>(), ckpt.entries<std::int32_t>()});
  if (!written.ok()) raise_invalid(written.error());
  const auto& n = written.value();
  PyObject* lengths = Py_BuildValue("(LLLL)", static_cast<long long>(n.chunks.cu_chunk_seqlen),
                                    static_cast<long long>(n.chunks.seq_idx),
                                    static_cast<long long>(n.chunks.last_chunk_indices), static_cast<long long>(n.checkpoints));
  if (lengths == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(lengths);
}

py::object compute_checkpointed(std::int64_t c, const InputArray& computed, const InputArray& starts,
                                py::handle offsets_given, py::handle out) {
  // None: no row has a checkpoint (every entry -1), as the PR's function gives.
  std::optional<InputArray> offsets;
  std::vector<std::int32_t> none;
  if (!offsets_given.is_none()) {
    offsets.emplace(offsets_given, "checkpoint_offsets_p");
  } else {
    none.assign(computed.size(), 0);
  }
  const ArrayKind kind = offsets ? kind_of_results({computed.kind(), starts.kind(), offsets->kind()})
                                 : kind_of_results({computed.kind(), starts.kind()});
  if (!computed.copied() && !starts.copied() && (!offsets || !offsets->copied())) {
    const checkpointed_chunks::View32 view{c, computed.int32(), starts.int32(),
                                           offsets ? offsets->int32() : std::span<const std::int32_t>(none)};
    return checkpointed(view, kind, out);
  }
  const auto wide_computed = computed.widened();
  const auto wide_starts = starts.widened();
  const auto wide_offsets = offsets ? offsets->widened() : std::vector<std::int64_t>(computed.size(), 0);
  const checkpointed_chunks::View64 view{c, wide_computed, wide_starts, wide_offsets};
  return checkpointed(view, kind, out);
}

py::object compute_chunk_metadata(py::handle chunk_size, py::handle num_prefills, py::handle num_computed_tokens,
                                  py::handle query_start_loc, PyObject* checkpoint_offsets, py::handle out) {
  const std::int64_t c = to_int64(chunk_size, "chunk_size");
  const std::int64_t rows = to_int64(num_prefills, "num_prefills");
  const InputArray computed(num_computed_tokens, "num_computed_tokens_p_cpu");
  const InputArray starts(query_start_loc, "query_start_loc_p_cpu");
  if (rows != static_cast<std::int64_t>(computed.size())) {
    raise_invalid("num_prefills is " + std::to_string(rows) + " but num_computed_tokens_p_cpu has " +
                      std::to_string(computed.size()) + " entries; they must agree",
                  "length_mismatch", "num_prefills", Error::kNoIndex, "invalid_input");
  }
  if (checkpoint_offsets != nullptr) return compute_checkpointed(c, computed, starts, checkpoint_offsets, out);
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
    {"chunk_size", "num_prefills", "num_computed_tokens_p_cpu", "query_start_loc_p_cpu", "checkpoint_offsets_p", "out"},
    5,
    4};

PyObject* compute_chunk_metadata_fastcall(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&] {
    std::array<PyObject*, 6> given{};
    bind_arguments(kComputeSignature, args, nargs, kwnames, given);
    // checkpoint_offsets_p given at all (None included) asks for the fourth array, as the PR's function returns it.
    return compute_chunk_metadata(given[0], given[1], given[2], given[3], given[4], or_none(given[5]));
  });
}

const char* const kComputeDoc = R"doc(compute_chunk_metadata(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu, checkpoint_offsets_p=..., *, out=None)
--

The engine's chunk metadata (specs/mamba), computed by chunkmeta's fast implementation.

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

Without checkpoint_offsets_p (the signature's `...`), three arrays are returned. With
checkpoint_offsets_p (vLLM #57329's internal prefill checkpoints: one
offset per row from its query start, 0 for none; a list, tensor or array, or
None for none at all), the chunks are also cut at each row's checkpoint
(specs/mamba_checkpointed_chunks) and a fourth array is returned,
checkpoint_chunk_indices: the chunk that ends at each checkpoint, -1 for a row
without one. With out=, four buffers and four lengths.

Raises chunkmeta.InvalidWorkload (a ValueError) with the code, field and index
of the broken rule, or output_too_large above the library's cap of 2**26 chunks.)doc";


PyMethodDef methods[] = {
    {"compute_chunk_metadata", fastcall(&compute_chunk_metadata_fastcall), METH_FASTCALL | METH_KEYWORDS, kComputeDoc},
    {nullptr, nullptr, 0, nullptr}};

// For bench/python_bench.py: the library alone, in the same process.
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

}  // namespace

void add_mamba(py::module_& m) {
  add_fastcall_methods(m, methods);
  py::options options;
  options.disable_function_signatures();
  m.def(
      "max_output_sizes",
      [](py::handle max_tokens_given, py::handle max_rows_given, py::handle chunk_size_given) {
        const std::int64_t max_tokens = to_int64(max_tokens_given, "max_tokens");
        const std::int64_t max_rows = to_int64(max_rows_given, "max_rows");
        const std::int64_t chunk_size = to_int64(chunk_size_given, "chunk_size");
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
  m.def("_fast_into_nanoseconds", &fast_into_nanoseconds, py::arg("chunk_size"), py::arg("num_computed_tokens"),
        py::arg("query_start_loc"), py::arg("iterations"));
}

}  // namespace chunkmeta::python
