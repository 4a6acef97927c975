// The conv1d program map's drop-in: causal_conv1d_program_map(query_start_loc,
// block_m=8, *, out=None), reading a tensor, array or list in place where it
// can and answering three int32 arrays of the caller's kind, or writing into
// the engine's persistent buffers (out=) padded with -1; and its size helper.
#include <cstdint>
#include <string>

#include "chunkmeta/conv1d_program_map.hpp"
#include "fastcall.hpp"

namespace chunkmeta::python {
namespace {

template <typename Int>
Result<conv1d::Sizes> write_map(const conv1d::BasicView<Int>& view, const conv1d::Buffers& out) {
  return without_gil_if_large(static_cast<std::int64_t>(out.batch_ptr.size() + out.nums.size()),
                              [&] { return conv1d::program_map_into(view, out); });
}

template <typename Int>
py::object map_view(const conv1d::BasicView<Int>& view, ArrayKind kind) {
  const auto sizes = conv1d::output_sizes(view);
  if (!sizes.ok()) raise_invalid(sizes.error());
  const std::int64_t rows = sizes.value().rows;
  const std::int64_t tot = sizes.value().programs;
  Results results(kind, IntType::int32, {rows, tot, tot});
  const auto written =
      write_map(view, {results.array<std::int32_t>(0), results.array<std::int32_t>(1), results.array<std::int32_t>(2)});
  if (!written.ok()) raise_invalid(written.error());
  return results.finish({rows, tot, tot});
}

// out=: the three int32 buffers (nums, batch_ptr, token_chunk_offset_ptr),
// written in place, the rest of the last two padded with -1; (B, tot) returned.
template <typename Int>
py::object map_into_buffers(const conv1d::BasicView<Int>& view, py::handle out) {
  if (!(PyTuple_Check(out.ptr()) || PyList_Check(out.ptr())) || py::len(out) != 3) {
    throw py::type_error("out must be a tuple of three int32 buffers (nums, batch_ptr, token_chunk_offset_ptr), not " +
                         std::string(Py_TYPE(out.ptr())->tp_name));
  }
  PyObject** given = PySequence_Fast_ITEMS(out.ptr());
  const OutBuffer nums(given[0], "out[0] (nums)", IntType::int32);
  const OutBuffer batch(given[1], "out[1] (batch_ptr)", IntType::int32);
  const OutBuffer offsets(given[2], "out[2] (token_chunk_offset_ptr)", IntType::int32);
  const auto written =
      write_map(view, {nums.entries<std::int32_t>(), batch.entries<std::int32_t>(), offsets.entries<std::int32_t>()});
  if (!written.ok()) raise_invalid(written.error());
  return py::make_tuple(written.value().rows, written.value().programs);
}

py::object causal_conv1d_program_map(py::handle query_start_loc, py::handle block_m, py::handle out) {
  const std::int64_t M = block_m.is_none() ? conv1d::kDefaultBlockM : to_int64(block_m, "block_m");
  const InputArray q(query_start_loc, "query_start_loc", /*int64_allowed=*/true);
  const auto compute = [&](const auto& view) { return out.is_none() ? map_view(view, q.kind()) : map_into_buffers(view, out); };
  if (q.copied()) {
    const auto wide = q.widened();
    return compute(conv1d::View64{wide, M});
  }
  if (q.type() == IntType::int32) return compute(conv1d::View32{q.int32(), M});
  return compute(conv1d::View64{q.int64(), M});
}

const Signature kMapSignature{"causal_conv1d_program_map", {"query_start_loc", "block_m", "out"}, 2, 1};

PyObject* causal_conv1d_program_map_fastcall(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&] {
    std::array<PyObject*, 3> given{};
    bind_arguments(kMapSignature, args, nargs, kwnames, given);
    return causal_conv1d_program_map(given[0], or_none(given[1]), or_none(given[2]));
  });
}

const char* const kMapDoc = R"doc(causal_conv1d_program_map(query_start_loc, block_m=8, *, out=None)
--

The causal conv1d kernel's program map (specs/conv1d_program_map), computed by
chunkmeta's fast implementation, for vLLM's compute_causal_conv1d_metadata:
returns (nums, batch_ptr, token_chunk_offset_ptr), three int32 arrays of the
input's kind (CPU tensors for a tensor, numpy arrays for an array, lists for a
list). nums has one entry per row, ceil(n_i / block_m); program p of the
tot = sum(nums) handles row batch_ptr[p], tokens [q[r] + block_m o,
min(q[r] + block_m (o + 1), q[r + 1])) with o = token_chunk_offset_ptr[p].

query_start_loc: B + 1 non-decreasing offsets (rows may be empty), an int32 or
int64 CPU tensor or numpy array (read in place), or a sequence of ints. With
out=, a tuple of three writable int32 buffers (nums, batch_ptr,
token_chunk_offset_ptr) -- the engine's persistent buffers, sized once by
causal_conv1d_program_map_max_output_sizes or as vLLM sizes them,
2 max(1024, tot) -- the map is written into them, every entry of batch_ptr and
token_chunk_offset_ptr after it set to -1 (PAD_SLOT_ID, "no work" to the
kernel), and (B, tot) is returned.

Raises chunkmeta.InvalidWorkload with the code, field and index of the broken
rule (a buffer too short: output_buffer_too_small, naming it).)doc";

PyMethodDef methods[] = {{"causal_conv1d_program_map", fastcall(&causal_conv1d_program_map_fastcall),
                          METH_FASTCALL | METH_KEYWORDS, kMapDoc},
                         {nullptr, nullptr, 0, nullptr}};

}  // namespace

void add_conv1d_program_map(py::module_& m) {
  add_fastcall_methods(m, methods);
  py::options options;
  options.disable_function_signatures();
  m.def(
      "causal_conv1d_program_map_max_output_sizes",
      [](py::handle max_tokens_given, py::handle max_rows_given, py::handle block_m_given) {
        const std::int64_t max_tokens = to_int64(max_tokens_given, "max_tokens");
        const std::int64_t max_rows = to_int64(max_rows_given, "max_rows");
        const std::int64_t block_m = to_int64(block_m_given, "block_m");
        const auto sizes = conv1d::max_output_sizes(max_tokens, max_rows, block_m);
        if (!sizes.ok()) raise_invalid(sizes.error());
        return py::make_tuple(sizes.value().rows, sizes.value().programs, sizes.value().programs);
      },
      py::arg("max_tokens"), py::arg("max_rows"), py::arg("block_m") = conv1d::kDefaultBlockM,
      R"doc(causal_conv1d_program_map_max_output_sizes(max_tokens, max_rows, block_m=8)
--

Returns (nums, batch_ptr, token_chunk_offset_ptr) buffer sizes that hold
causal_conv1d_program_map's results for every step of an engine whose steps
have at most max_tokens new tokens and max_rows rows: size the out= buffers once.)doc");
}

}  // namespace chunkmeta::python
