// The packed-grid formulation's drop-ins: vLLM's compute_varlen_chunk_metadata
// (its kernel tests' helper) and TensorRT-LLM's (and SGLang's)
// cu_seqlens_to_chunk_indices_offsets, with their signatures, reading the
// offsets in place (int32 or int64) and answering int32 arrays of the input's
// kind, or writing into the caller's buffers (out=).
#include <cstdint>
#include <string>

#include "chunkmeta/packed_grid.hpp"
#include "fastcall.hpp"

namespace chunkmeta::python {
namespace {

template <typename Int>
py::object varlen_metadata(const packed_grid::BasicView<Int>& view, ArrayKind kind, py::handle out) {
  if (out.is_none()) {
    const auto sizes = packed_grid::output_sizes(view);  // the results' sizes, before they are made
    if (!sizes.ok()) raise_invalid(sizes.error());
    const auto& n = sizes.value();
    Results results(kind, IntType::int32, {n.pieces + 1, n.rows, n.pieces});
    const auto written = without_gil_if_large(2 * n.pieces, [&] {
      return packed_grid::metadata_into(view, {results.array<std::int32_t>(0), results.array<std::int32_t>(1),
                                               results.array<std::int32_t>(2)});
    });
    if (!written.ok()) raise_invalid(written.error());
    return results.finish({n.pieces + 1, n.rows, n.pieces});
  }
  if (!(PyTuple_Check(out.ptr()) || PyList_Check(out.ptr())) || py::len(out) != 3) {
    throw py::type_error("out must be a tuple of three int32 buffers (cu_chunk_seqlens, last_chunk_indices, seq_idx), not " +
                         std::string(Py_TYPE(out.ptr())->tp_name));
  }
  PyObject** buffers = PySequence_Fast_ITEMS(out.ptr());
  const OutBuffer cu(buffers[0], "out[0] (cu_chunk_seqlens)", IntType::int32);
  const OutBuffer last(buffers[1], "out[1] (last_chunk_indices)", IntType::int32);
  const OutBuffer seq(buffers[2], "out[2] (seq_idx)", IntType::int32);
  const auto written = without_gil_if_large(static_cast<std::int64_t>(seq.entries<std::int32_t>().size()), [&] {
    return packed_grid::metadata_into(view, {cu.entries<std::int32_t>(), last.entries<std::int32_t>(),
                                             seq.entries<std::int32_t>()});
  });
  if (!written.ok()) raise_invalid(written.error());
  const auto& n = written.value();
  return py::make_tuple(n.pieces + 1, n.rows, n.pieces);
}

template <typename Int>
py::object indices_offsets(const packed_grid::BasicView<Int>& view, ArrayKind kind, py::handle out) {
  if (out.is_none()) {
    const auto sizes = packed_grid::output_sizes(view, {}, packed_grid::Offsets::cu_seqlens);  // before they are made
    if (!sizes.ok()) raise_invalid(sizes.error());
    const std::int64_t pieces = sizes.value().pieces;
    Results results(kind, IntType::int32, {pieces, pieces});
    const auto written = without_gil_if_large(2 * pieces, [&] {
      return packed_grid::chunk_indices_into(view, {results.array<std::int32_t>(0), results.array<std::int32_t>(1)});
    });
    if (!written.ok()) raise_invalid(written.error());
    return results.finish({pieces, pieces});
  }
  if (!(PyTuple_Check(out.ptr()) || PyList_Check(out.ptr())) || py::len(out) != 2) {
    throw py::type_error("out must be a tuple of two int32 buffers (chunk_indices, chunk_offsets), not " +
                         std::string(Py_TYPE(out.ptr())->tp_name));
  }
  PyObject** buffers = PySequence_Fast_ITEMS(out.ptr());
  const OutBuffer indices(buffers[0], "out[0] (chunk_indices)", IntType::int32);
  const OutBuffer offsets(buffers[1], "out[1] (chunk_offsets)", IntType::int32);
  const auto written = without_gil_if_large(static_cast<std::int64_t>(2 * indices.entries<std::int32_t>().size()), [&] {
    return packed_grid::chunk_indices_into(view, {indices.entries<std::int32_t>(), offsets.entries<std::int32_t>()});
  });
  if (!written.ok()) raise_invalid(written.error());
  return py::int_(written.value().pieces);
}

// Either form from the offsets as given: int32 or int64 read in place, a list copied.
template <typename Compute>
py::object with_offsets(py::handle offsets, const char* name, py::handle chunk_size, Compute&& compute) {
  const std::int64_t C = to_int64(chunk_size, "chunk_size");
  const InputArray q(offsets, name, true);
  if (!q.copied() && q.type() == IntType::int32) return compute(packed_grid::View32{C, q.int32()}, q.kind());
  if (!q.copied()) return compute(packed_grid::View64{C, q.int64()}, q.kind());
  const auto wide = q.widened();
  return compute(packed_grid::View64{C, wide}, q.kind());
}

const Signature kVarlenSignature{"compute_varlen_chunk_metadata", {"query_start_loc", "chunk_size", "out"}, 2, 2};
const Signature kIndicesSignature{"cu_seqlens_to_chunk_indices_offsets", {"cu_seqlens", "chunk_size", "out"}, 2, 2};

PyObject* varlen_fastcall(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&] {
    std::array<PyObject*, 3> given{};
    bind_arguments(kVarlenSignature, args, nargs, kwnames, given);
    const py::handle out = or_none(given[2]);
    return with_offsets(given[0], "query_start_loc", given[1],
                        [&](const auto& view, ArrayKind kind) { return varlen_metadata(view, kind, out); });
  });
}

PyObject* indices_fastcall(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&] {
    std::array<PyObject*, 3> given{};
    bind_arguments(kIndicesSignature, args, nargs, kwnames, given);
    const py::handle out = or_none(given[2]);
    return with_offsets(given[0], "cu_seqlens", given[1],
                        [&](const auto& view, ArrayKind kind) { return indices_offsets(view, kind, out); });
  });
}

const char* const kVarlenDoc = R"doc(compute_varlen_chunk_metadata(query_start_loc, chunk_size, *, out=None)
--

vLLM's compute_varlen_chunk_metadata (the helper its Mamba kernel tests use;
specs/mamba_packed_grid): the pieces of the packed batch cut at every multiple
of chunk_size and at every row start. Returns (cu_chunk_seqlens,
last_chunk_indices, seq_idx), int32 of the input's kind: the pieces' starts
then T, each row's last piece (-1 for a row without tokens), each piece's row.
Note: this is not what vLLM's metadata builder computes when a row starts off
the grid (compute_chunk_metadata is that). out=: three int32 buffers; the
three lengths are returned.)doc";

const char* const kIndicesDoc = R"doc(cu_seqlens_to_chunk_indices_offsets(cu_seqlens, chunk_size, *, out=None)
--

TensorRT-LLM's and SGLang's cu_seqlens_to_chunk_indices_offsets (mamba_ssm's
varlen formulation; specs/mamba_packed_grid): for each logical chunk, the
physical chunk it lies in (chunk_indices) and its start's offset in it
(chunk_offsets), int32 of the input's kind. A row without tokens adds no
chunk (their torch function raises IndexError or emits a zero-length chunk
there). out=: two int32 buffers; the count is returned.)doc";

PyMethodDef methods[] = {
    {"compute_varlen_chunk_metadata", fastcall(&varlen_fastcall), METH_FASTCALL | METH_KEYWORDS, kVarlenDoc},
    {"cu_seqlens_to_chunk_indices_offsets", fastcall(&indices_fastcall), METH_FASTCALL | METH_KEYWORDS, kIndicesDoc},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void add_mamba_packed_grid(py::module_& m) { add_fastcall_methods(m, methods); }

}  // namespace chunkmeta::python
