// The checkpoint plan's drop-in: mamba_checkpoint_plan(chunk_size, block_size,
// num_computed_tokens_p, query_start_loc_p, *, out=None), reading tensors,
// arrays or lists in place where it can and answering six int32 arrays of the
// caller's kind, or writing into the caller's buffers (out=); and its size helper.
#include <cstdint>
#include <string>
#include <vector>

#include "chunkmeta/checkpoint_plan.hpp"
#include "fastcall.hpp"

namespace chunkmeta::python {
namespace {

constexpr const char* kOutputNames[] = {"block_idx_last_computed_token", "block_idx_first_scheduled_token",
                                        "block_idx_last_scheduled_token", "write_row", "write_block", "write_chunk"};

template <typename Int>
Result<checkpoint::Sizes> write_plan(const checkpoint::BasicView<Int>& view, const checkpoint::Buffers& out) {
  return without_gil_if_large(static_cast<std::int64_t>(out.write_row.size() + out.block_idx_last_computed_token.size()),
                              [&] { return checkpoint::plan_into(view, out); });
}

template <typename Int>
py::object plan_view(const checkpoint::BasicView<Int>& view, ArrayKind kind) {
  const auto sizes = checkpoint::output_sizes(view);
  if (!sizes.ok()) raise_invalid(sizes.error());
  const std::int64_t rows = sizes.value().rows;
  const std::int64_t writes = sizes.value().writes;
  Results results(kind, IntType::int32, {rows, rows, rows, writes, writes, writes});
  const auto written = write_plan(view, {results.array<std::int32_t>(0), results.array<std::int32_t>(1),
                                         results.array<std::int32_t>(2), results.array<std::int32_t>(3),
                                         results.array<std::int32_t>(4), results.array<std::int32_t>(5)});
  if (!written.ok()) raise_invalid(written.error());
  return results.finish({rows, rows, rows, writes, writes, writes});
}

// out=: six int32 buffers in the outputs' order, written in place; the six lengths written are returned.
template <typename Int>
py::object plan_into_buffers(const checkpoint::BasicView<Int>& view, py::handle out) {
  if (!(PyTuple_Check(out.ptr()) || PyList_Check(out.ptr())) || py::len(out) != 6) {
    throw py::type_error("out must be a tuple of six int32 buffers (block_idx_last_computed_token, "
                         "block_idx_first_scheduled_token, block_idx_last_scheduled_token, write_row, write_block, "
                         "write_chunk), not " + std::string(Py_TYPE(out.ptr())->tp_name));
  }
  PyObject** given = PySequence_Fast_ITEMS(out.ptr());
  std::vector<std::string> names;
  for (int i = 0; i < 6; ++i) names.push_back("out[" + std::to_string(i) + "] (" + kOutputNames[i] + ")");
  const OutBuffer b0(given[0], names[0].c_str(), IntType::int32);
  const OutBuffer b1(given[1], names[1].c_str(), IntType::int32);
  const OutBuffer b2(given[2], names[2].c_str(), IntType::int32);
  const OutBuffer b3(given[3], names[3].c_str(), IntType::int32);
  const OutBuffer b4(given[4], names[4].c_str(), IntType::int32);
  const OutBuffer b5(given[5], names[5].c_str(), IntType::int32);
  const auto written = write_plan(view, {b0.entries<std::int32_t>(), b1.entries<std::int32_t>(), b2.entries<std::int32_t>(),
                                         b3.entries<std::int32_t>(), b4.entries<std::int32_t>(), b5.entries<std::int32_t>()});
  if (!written.ok()) raise_invalid(written.error());
  const auto rows = static_cast<long long>(written.value().rows);
  const auto writes = static_cast<long long>(written.value().writes);
  PyObject* lengths = Py_BuildValue("(LLLLLL)", rows, rows, rows, writes, writes, writes);
  if (lengths == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(lengths);
}

py::object mamba_checkpoint_plan(py::handle chunk_size, py::handle block_size, py::handle num_computed_tokens,
                                 py::handle query_start_loc, py::handle out) {
  const std::int64_t C = to_int64(chunk_size, "chunk_size");
  const std::int64_t M = to_int64(block_size, "block_size");
  const InputArray computed(num_computed_tokens, "num_computed_tokens_p");
  const InputArray starts(query_start_loc, "query_start_loc_p");
  const ArrayKind kind = kind_of_results({computed.kind(), starts.kind()});
  if (!computed.copied() && !starts.copied()) {
    const checkpoint::View32 view{C, M, computed.int32(), starts.int32()};
    return out.is_none() ? plan_view(view, kind) : plan_into_buffers(view, out);
  }
  const auto wide_computed = computed.widened();
  const auto wide_starts = starts.widened();
  const checkpoint::View64 view{C, M, wide_computed, wide_starts};
  return out.is_none() ? plan_view(view, kind) : plan_into_buffers(view, out);
}

const Signature kPlanSignature{
    "mamba_checkpoint_plan",
    {"chunk_size", "block_size", "num_computed_tokens_p", "query_start_loc_p", "out"},
    4,
    4};

PyObject* mamba_checkpoint_plan_fastcall(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&] {
    std::array<PyObject*, 5> given{};
    bind_arguments(kPlanSignature, args, nargs, kwnames, given);
    return mamba_checkpoint_plan(given[0], given[1], given[2], given[3], or_none(given[4]));
  });
}

const char* const kPlanDoc = R"doc(mamba_checkpoint_plan(chunk_size, block_size, num_computed_tokens_p, query_start_loc_p, *, out=None)
--

Mamba's prefix-cache checkpoint plan (specs/mamba_checkpoint_plan), computed
by chunkmeta's fast implementation, for vLLM's "all" prefix-caching mode:
returns (block_idx_last_computed_token, block_idx_first_scheduled_token,
block_idx_last_scheduled_token, write_row, write_block, write_chunk), six
int32 arrays of the input's kind (CPU tensors for tensors, numpy arrays for
arrays, lists for lists). The first three have one entry per row; the write
plan's three have one entry per write: the engine runs
ssm_state[block_table[write_row, write_block]] = varlen_states[write_chunk],
whose chunks are compute_chunk_metadata's for the same batch. A row without
new tokens writes nothing.

chunk_size C and block_size M (a multiple of C) are ints;
num_computed_tokens_p (B entries) and query_start_loc_p (B + 1) are int32 CPU
tensors or numpy arrays (read in place), or sequences of ints. With out=, a
tuple of six writable int32 buffers (sized once by
mamba_checkpoint_plan_max_output_sizes), the plan is written into them and the
six lengths written are returned.

Raises chunkmeta.InvalidWorkload with the code, field and index of the broken
rule (block_size not a multiple of chunk_size: not_a_multiple).)doc";

PyMethodDef methods[] = {
    {"mamba_checkpoint_plan", fastcall(&mamba_checkpoint_plan_fastcall), METH_FASTCALL | METH_KEYWORDS, kPlanDoc},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void add_mamba_checkpoint_plan(py::module_& m) {
  add_fastcall_methods(m, methods);
  py::options options;
  options.disable_function_signatures();
  m.def(
      "mamba_checkpoint_plan_max_output_sizes",
      [](py::handle max_tokens_given, py::handle max_rows_given, py::handle chunk_size_given, py::handle block_size_given) {
        const std::int64_t max_tokens = to_int64(max_tokens_given, "max_tokens");
        const std::int64_t max_rows = to_int64(max_rows_given, "max_rows");
        const std::int64_t chunk_size = to_int64(chunk_size_given, "chunk_size");
        const std::int64_t block_size = to_int64(block_size_given, "block_size");
        const auto sizes = checkpoint::max_output_sizes(max_tokens, max_rows, chunk_size, block_size);
        if (!sizes.ok()) raise_invalid(sizes.error());
        const std::int64_t rows = sizes.value().rows;
        const std::int64_t writes = sizes.value().writes;
        return py::make_tuple(rows, rows, rows, writes, writes, writes);
      },
      py::arg("max_tokens"), py::arg("max_rows"), py::arg("chunk_size"), py::arg("block_size"),
      R"doc(mamba_checkpoint_plan_max_output_sizes(max_tokens, max_rows, chunk_size, block_size)
--

Returns the six buffer sizes that hold mamba_checkpoint_plan's results for
every step of an engine whose steps have at most max_tokens new tokens and
max_rows requests, at chunk_size and block_size: size the out= buffers once.)doc");
}

}  // namespace chunkmeta::python
