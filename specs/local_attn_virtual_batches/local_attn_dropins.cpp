// The virtual batches' drop-ins: local_attention_virtual_batches(attn_chunk_size,
// block_size, query_start_loc, seq_lens, *, out=None), reading tensors, arrays
// or lists in place where it can and answering five int32 arrays of the
// caller's kind, or writing into the caller's buffers (out=); its size helper;
// and local_attention_block_table, the engine's block table gathered as vLLM does.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chunkmeta/local_attention.hpp"
#include "fastcall.hpp"

namespace chunkmeta::python {
namespace {

constexpr const char* kOutputNames[] = {"out[0] (cu_seqlens_q_local)", "out[1] (seqlens_k_local)",
                                        "out[2] (num_computed_tokens_local)", "out[3] (virtual_row)",
                                        "out[4] (block_start)"};

// A column of int32 values (virtual_row, block_start; a table's entries), narrowed from a copied list.
std::vector<std::int32_t> int32_values(const InputArray& array, const char* argument) {
  std::vector<std::int32_t> out;
  for (const std::int64_t v : array.widened()) {
    if (v < INT32_MIN || v > INT32_MAX)
      throw py::value_error(std::string(argument) + " entries must be int32 values, not " + std::to_string(v));
    out.push_back(static_cast<std::int32_t>(v));
  }
  return out;
}

// An int32 input read in place, or its copied list narrowed (kept in `copy`).
std::span<const std::int32_t> int32_entries(const InputArray& array, std::vector<std::int32_t>& copy, const char* name) {
  if (!array.copied()) return array.int32();
  copy = int32_values(array, name);
  return copy;
}

// The engine's block table (rows x columns, int32), read in place where it can.
struct BlockTable {
  explicit BlockTable(py::handle table) : values(table, "block_table", InputArray::Table{}) {
    entries = int32_entries(values, copy, "block_table");
    columns = values.columns();
    rows = columns == 0 ? 0 : static_cast<std::int64_t>(entries.size()) / columns;
  }
  Result<std::int64_t> gather(std::int64_t A, std::int64_t P, std::span<const std::int32_t> virtual_row,
                              std::span<const std::int32_t> block_start, std::span<std::int32_t> into) const {
    return local_attn::gather_block_table(A, P, entries, rows, columns, virtual_row, block_start, into);
  }
  InputArray values;
  std::vector<std::int32_t> copy;
  std::span<const std::int32_t> entries;
  std::int64_t rows = 0;
  std::int64_t columns = 0;
};

// The local table's width, A / P, once the sizes are valid (validation names them otherwise).
int pages_of(std::int64_t A, std::int64_t P) {
  return P >= 1 && A >= P && A % P == 0 && A <= kMaxValue ? static_cast<int>(A / P) : 1;
}

// The local block table takes V x pages entries: above the library's cap (a
// chunk size of 2^31-1 one-token pages) it is refused as output_too_large,
// the resource limit every spec has, before anything is allocated.
void refuse_huge_local_table(std::int64_t V, int pages) {
  const std::int64_t cap = Limits{}.max_chunks;
  if (V > 0 && pages > cap / V)
    raise_invalid(Error{ErrorCode::output_too_large, "block_table_local", Error::kNoIndex, V * pages, cap});
}

template <typename Int>
Result<local_attn::Sizes> write_batches(const local_attn::BasicView<Int>& view, const local_attn::Buffers& out) {
  return without_gil_if_large(static_cast<std::int64_t>(5 * out.seqlens_k_local.size()),
                              [&] { return local_attn::virtual_batches_into(view, out); });
}

// The five arrays, and with a block table the local one (vLLM's
// make_block_table) as a sixth, gathered from what was just written.
template <typename Int>
py::object batches_view(const local_attn::BasicView<Int>& view, ArrayKind kind, const BlockTable* table) {
  const auto sizes = local_attn::output_sizes(view);
  if (!sizes.ok()) raise_invalid(sizes.error());
  const std::int64_t V = sizes.value().virtual_batches;
  const int pages = pages_of(view.attn_chunk_size, view.block_size);
  std::optional<Results> results;
  if (table == nullptr) {
    results.emplace(kind, IntType::int32, std::initializer_list<std::int64_t>{V + 1, V, V, V, V});
  } else {
    refuse_huge_local_table(V, pages);
    results.emplace(kind, IntType::int32, std::initializer_list<std::int64_t>{V + 1, V, V, V, V, V},
                    std::initializer_list<Shape>{{}, {}, {}, {}, {}, Shape::table_of(pages)});
  }
  const auto written = write_batches(view, {results->array<std::int32_t>(0), results->array<std::int32_t>(1),
                                            results->array<std::int32_t>(2), results->array<std::int32_t>(3),
                                            results->array<std::int32_t>(4)});
  if (!written.ok()) raise_invalid(written.error());
  if (table == nullptr) return results->finish({V + 1, V, V, V, V});
  const auto gathered = table->gather(view.attn_chunk_size, view.block_size, results->array<std::int32_t>(3),
                                      results->array<std::int32_t>(4), results->array<std::int32_t>(5));
  if (!gathered.ok()) raise_invalid(gathered.error());
  return results->finish({V + 1, V, V, V, V, V});
}

// out=: five int32 buffers in the outputs' order (six with a block table: the
// local table's last), written in place; the lengths written are returned.
template <typename Int>
py::object batches_into_buffers(const local_attn::BasicView<Int>& view, py::handle out, const BlockTable* table) {
  const std::size_t count = table == nullptr ? 5 : 6;
  if (!(PyTuple_Check(out.ptr()) || PyList_Check(out.ptr())) || py::len(out) != count) {
    throw py::type_error(std::string("out must be a tuple of ") + (table == nullptr ? "five" : "six") +
                         " int32 buffers (cu_seqlens_q_local, seqlens_k_local, num_computed_tokens_local, virtual_row, "
                         "block_start" + (table == nullptr ? "" : ", block_table_local") + "), not " +
                         std::string(Py_TYPE(out.ptr())->tp_name));
  }
  PyObject** given = PySequence_Fast_ITEMS(out.ptr());
  const OutBuffer b0(given[0], kOutputNames[0], IntType::int32);
  const OutBuffer b1(given[1], kOutputNames[1], IntType::int32);
  const OutBuffer b2(given[2], kOutputNames[2], IntType::int32);
  const OutBuffer b3(given[3], kOutputNames[3], IntType::int32);
  const OutBuffer b4(given[4], kOutputNames[4], IntType::int32);
  const int pages = pages_of(view.attn_chunk_size, view.block_size);
  std::optional<OutBuffer> b5;
  if (table != nullptr) b5.emplace(given[5], "out[5] (block_table_local)", IntType::int32, Shape::table_of(pages));
  const std::span<std::int32_t> local = b5 ? b5->entries<std::int32_t>() : std::span<std::int32_t>();
  const auto written = write_batches(view, {b0.entries<std::int32_t>(), b1.entries<std::int32_t>(), b2.entries<std::int32_t>(),
                                            b3.entries<std::int32_t>(), b4.entries<std::int32_t>()});
  if (!written.ok()) raise_invalid(written.error());
  const auto V = static_cast<long long>(written.value().virtual_batches);
  if (table != nullptr) {
    const auto rows = b3.entries<std::int32_t>().first(static_cast<std::size_t>(V));
    const auto starts = b4.entries<std::int32_t>().first(static_cast<std::size_t>(V));
    const auto gathered = table->gather(view.attn_chunk_size, view.block_size, rows, starts, local);
    if (!gathered.ok()) raise_invalid(gathered.error());
  }
  PyObject* lengths = table == nullptr ? Py_BuildValue("(LLLLL)", V + 1, V, V, V, V)
                                       : Py_BuildValue("(LLLLLL)", V + 1, V, V, V, V, V);
  if (lengths == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(lengths);
}

py::object local_attention_virtual_batches(py::handle attn_chunk_size, py::handle block_size,
                                           py::handle query_start_loc, py::handle seq_lens, py::handle block_table,
                                           py::handle out) {
  const std::int64_t A = to_int64(attn_chunk_size, "attn_chunk_size");
  const std::int64_t P = to_int64(block_size, "block_size");
  const InputArray starts(query_start_loc, "query_start_loc");
  const InputArray lengths(seq_lens, "seq_lens");
  std::optional<BlockTable> table;
  if (!block_table.is_none()) table.emplace(block_table);
  const BlockTable* gather_from = table ? &*table : nullptr;
  const ArrayKind kind = kind_of_results({starts.kind(), lengths.kind()});
  if (!starts.copied() && !lengths.copied()) {
    const local_attn::View32 view{A, P, starts.int32(), lengths.int32()};
    return out.is_none() ? batches_view(view, kind, gather_from) : batches_into_buffers(view, out, gather_from);
  }
  const auto wide_starts = starts.widened();
  const auto wide_lengths = lengths.widened();
  const local_attn::View64 view{A, P, wide_starts, wide_lengths};
  return out.is_none() ? batches_view(view, kind, gather_from) : batches_into_buffers(view, out, gather_from);
}

py::object local_attention_block_table(py::handle block_table, py::handle virtual_row, py::handle block_start,
                                        py::handle attn_chunk_size, py::handle block_size, py::handle out) {
  const std::int64_t A = to_int64(attn_chunk_size, "attn_chunk_size");
  const std::int64_t P = to_int64(block_size, "block_size");
  const BlockTable table(block_table);
  const InputArray rows_of(virtual_row, "virtual_row");
  const InputArray starts_of(block_start, "block_start");
  std::vector<std::int32_t> copied_rows, copied_starts;
  const auto rows = int32_entries(rows_of, copied_rows, "virtual_row");
  const auto starts = int32_entries(starts_of, copied_starts, "block_start");
  const auto V = static_cast<std::int64_t>(rows.size());
  const int pages = pages_of(A, P);
  if (!out.is_none()) {
    const OutBuffer buffer(out, "out (block_table_local)", IntType::int32, Shape::table_of(pages));
    const auto written = table.gather(A, P, rows, starts, buffer.entries<std::int32_t>());
    if (!written.ok()) raise_invalid(written.error());
    return py::int_(written.value());
  }
  const ArrayKind kind = table.values.kind();
  refuse_huge_local_table(V, pages);
  Results results(kind, IntType::int32, {V}, {Shape::table_of(pages)});
  const auto written = table.gather(A, P, rows, starts, results.array<std::int32_t>(0));
  if (!written.ok()) raise_invalid(written.error());
  return results.finish({V});
}

const Signature kBatchesSignature{"local_attention_virtual_batches",
                                   {"attn_chunk_size", "block_size", "query_start_loc", "seq_lens", "block_table", "out"},
                                   4,
                                   4};
const Signature kBlockTableSignature{
    "local_attention_block_table", {"block_table", "virtual_row", "block_start", "attn_chunk_size", "block_size", "out"},
    5, 5};

PyObject* local_attention_virtual_batches_fastcall(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&] {
    std::array<PyObject*, 6> given{};
    bind_arguments(kBatchesSignature, args, nargs, kwnames, given);
    return local_attention_virtual_batches(given[0], given[1], given[2], given[3], or_none(given[4]), or_none(given[5]));
  });
}

PyObject* local_attention_block_table_fastcall(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&] {
    std::array<PyObject*, 6> given{};
    bind_arguments(kBlockTableSignature, args, nargs, kwnames, given);
    return local_attention_block_table(given[0], given[1], given[2], given[3], given[4], or_none(given[5]));
  });
}

const char* const kBatchesDoc =
    R"doc(local_attention_virtual_batches(attn_chunk_size, block_size, query_start_loc, seq_lens, *, block_table=None, out=None)
--

The virtual batches of chunked local attention (specs/local_attn_virtual_batches),
computed by chunkmeta's fast implementation, for vLLM's
make_local_attention_virtual_batches: returns (cu_seqlens_q_local,
seqlens_k_local, num_computed_tokens_local, virtual_row, block_start), five
int32 arrays of the input's kind (CPU tensors for tensors, numpy arrays for
arrays, lists for lists). Each row's new tokens are cut at attention-chunk
boundaries of the absolute position; each piece is a request of its own
(V in all, cu_seqlens_q_local has V + 1 entries); block_start is the first
block-table column of its keys (local_attention_block_table gathers them).

attn_chunk_size A and block_size P (A a multiple of P) are ints;
query_start_loc (B + 1 entries, every row with new tokens) and seq_lens (B,
each row's tokens in all) are int32 CPU tensors or numpy arrays (read in
place), or sequences of ints. With out=, a tuple of five writable int32
buffers (sized once by local_attention_virtual_batches_max_output_sizes), the
virtual batches are written into them and the five lengths written returned.
With block_table= (the engine's, rows x columns int32), the local block table
that local_attention_block_table gathers comes back as a sixth array, (V, A / P),
in the same call as vLLM's function returns it (with out=, a sixth buffer).

Raises chunkmeta.InvalidWorkload with the code, field and index of the broken
rule (a row without new tokens: not_increasing; seq_lens below the row's new
tokens: below_minimum; A not a multiple of P: not_a_multiple).)doc";

const char* const kBlockTableDoc =
    R"doc(local_attention_block_table(block_table, virtual_row, block_start, attn_chunk_size, block_size, *, out=None)
--

The local block table, gathered from the engine's block table (rows x
columns, int32) as vLLM gathers it: for each virtual batch v, A / P columns
from block_start[v] of row virtual_row[v], each clipped to the table's last
column. Returns a (V, A / P) int32 array of block_table's kind; with out= (a
writable int32 buffer of V x A / P entries), writes it and returns V.)doc";

PyMethodDef methods[] = {
    {"local_attention_virtual_batches", fastcall(&local_attention_virtual_batches_fastcall),
     METH_FASTCALL | METH_KEYWORDS, kBatchesDoc},
    {"local_attention_block_table", fastcall(&local_attention_block_table_fastcall), METH_FASTCALL | METH_KEYWORDS,
     kBlockTableDoc},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void add_local_attn_virtual_batches(py::module_& m) {
  add_fastcall_methods(m, methods);
  py::options options;
  options.disable_function_signatures();
  m.def(
      "local_attention_virtual_batches_max_output_sizes",
      [](py::handle max_tokens_given, py::handle max_rows_given, py::handle attn_chunk_size_given, py::handle block_size_given) {
        const std::int64_t max_tokens = to_int64(max_tokens_given, "max_tokens");
        const std::int64_t max_rows = to_int64(max_rows_given, "max_rows");
        const std::int64_t attn_chunk_size = to_int64(attn_chunk_size_given, "attn_chunk_size");
        const std::int64_t block_size = to_int64(block_size_given, "block_size");
        const auto sizes = local_attn::max_output_sizes(max_tokens, max_rows, attn_chunk_size, block_size);
        if (!sizes.ok()) raise_invalid(sizes.error());
        const std::int64_t V = sizes.value().virtual_batches;
        return py::make_tuple(V + 1, V, V, V, V);
      },
      py::arg("max_tokens"), py::arg("max_rows"), py::arg("attn_chunk_size"), py::arg("block_size"),
      R"doc(local_attention_virtual_batches_max_output_sizes(max_tokens, max_rows, attn_chunk_size, block_size)
--

Returns the five buffer sizes that hold local_attention_virtual_batches'
results for every step of an engine whose steps have at most max_tokens new
tokens and max_rows rows: V <= B + min(B, T - B) + (T - 2B) / A (a row's
second piece may take one token, each further one A). Buffers sized by the
batch alone are too small (vLLM #49980).)doc");
}

}  // namespace chunkmeta::python
