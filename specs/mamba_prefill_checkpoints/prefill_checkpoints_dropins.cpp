// The prefill checkpoint planner's drop-in: compute_mamba_prefill_checkpoints
// with vLLM's signature (lists in, as the builder has them; tensors and arrays
// read too), int32 offsets and int64 columns out, or written into the
// caller's buffers (out=).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chunkmeta/prefill_checkpoints.hpp"
#include "fastcall.hpp"

namespace chunkmeta::python {
namespace {

py::object compute_mamba_prefill_checkpoints(py::handle seq_lens, py::handle query_lens, py::handle hash_block_size,
                                             py::handle mamba_block_size, py::handle checkpoint_alignment,
                                             py::handle drop_eagle_block, py::handle out) {
  const InputArray seqs(seq_lens, "seq_lens", true);
  const InputArray queries(query_lens, "query_lens", true);
  const std::int64_t H = to_int64(hash_block_size, "hash_block_size");
  const std::int64_t M = to_int64(mamba_block_size, "mamba_block_size");
  const std::optional<std::int64_t> alignment =
      checkpoint_alignment.is_none() ? std::nullopt : std::optional(to_int64(checkpoint_alignment, "checkpoint_alignment"));
  const bool drop = to_flag(drop_eagle_block, "drop_eagle_block");
  const auto s = seqs.widened();
  const auto n = queries.widened();
  const prefill_checkpoints::View view{s, n, H, M, alignment, drop};
  const auto rows = static_cast<std::int64_t>(s.size());  // checkpoints_into validates, query_lens' length too
  if (out.is_none()) {
    const ArrayKind kind = kind_of_results({seqs.kind(), queries.kind()});
    Results offsets(kind, IntType::int32, {rows});
    Results cols(kind, IntType::int64, {rows});
    const auto written = prefill_checkpoints::checkpoints_into(view, {offsets.array<std::int32_t>(0), cols.array<std::int64_t>(0)});
    if (!written.ok()) raise_invalid(written.error());
    return py::make_tuple(offsets.finish({rows}), cols.finish({rows}));
  }
  if (!(PyTuple_Check(out.ptr()) || PyList_Check(out.ptr())) || py::len(out) != 2) {
    throw py::type_error("out must be a tuple of two buffers (checkpoint_offsets int32, checkpoint_cols int64), not " +
                         std::string(Py_TYPE(out.ptr())->tp_name));
  }
  PyObject** buffers = PySequence_Fast_ITEMS(out.ptr());
  const OutBuffer offsets(buffers[0], "out[0] (checkpoint_offsets)", IntType::int32);
  const OutBuffer cols(buffers[1], "out[1] (checkpoint_cols)", IntType::int64);
  const auto written = prefill_checkpoints::checkpoints_into(view, {offsets.entries<std::int32_t>(), cols.entries<std::int64_t>()});
  if (!written.ok()) raise_invalid(written.error());
  return py::int_(written.value());
}

const Signature kSignature{"compute_mamba_prefill_checkpoints",
                           {"seq_lens", "query_lens", "hash_block_size", "mamba_block_size", "checkpoint_alignment",
                            "drop_eagle_block", "out"},
                           6,
                           6};

PyObject* compute_mamba_prefill_checkpoints_fastcall(PyObject*, PyObject* const* args, Py_ssize_t nargs,
                                                     PyObject* kwnames) {
  return guarded([&] {
    std::array<PyObject*, 7> given{};
    bind_arguments(kSignature, args, nargs, kwnames, given);
    return compute_mamba_prefill_checkpoints(given[0], given[1], given[2], given[3], given[4], given[5],
                                             or_none(given[6]));
  });
}

const char* const kDoc =
    R"doc(compute_mamba_prefill_checkpoints(seq_lens, query_lens, hash_block_size, mamba_block_size, checkpoint_alignment, drop_eagle_block, *, out=None)
--

Where each prefill row may export its internal Mamba checkpoint
(specs/mamba_prefill_checkpoints): vLLM's compute_mamba_prefill_checkpoints.

seq_lens and query_lens are per row (lists of ints, as the builder has them,
or int32/int64 tensors or arrays); checkpoint_alignment is an int or None (the
backend cannot export); drop_eagle_block is a bool. Returns
(checkpoint_offsets, checkpoint_cols): int32 offsets from each row's query
start (0: no checkpoint) and int64 block-table columns (-1: none), of the
inputs' kind. With out=(offsets, cols), an int32 and an int64 writable buffer,
they are written in place and B is returned. Raises chunkmeta.InvalidWorkload
naming the broken rule (a sequence shorter than its query, an alignment
below 1, a block size below 1).)doc";

PyMethodDef methods[] = {{"compute_mamba_prefill_checkpoints", fastcall(&compute_mamba_prefill_checkpoints_fastcall),
                          METH_FASTCALL | METH_KEYWORDS, kDoc},
                         {nullptr, nullptr, 0, nullptr}};

}  // namespace

void add_mamba_prefill_checkpoints(py::module_& m) { add_fastcall_methods(m, methods); }

}  // namespace chunkmeta::python
