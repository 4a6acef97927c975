// The virtual batches of chunked local attention
// (specs/local_attn_virtual_batches): validation, vLLM's numpy procedure
// ported step by step, the one-pass writer, and the block-table gather.
#include "chunkmeta/local_attention.hpp"

#include <algorithm>
#include <vector>

#include "checked_sizes.hpp"

namespace chunkmeta::local_attn {
namespace {

constexpr std::string_view kAttnChunkSize = "attn_chunk_size";
constexpr std::string_view kBlockSize = "block_size";
constexpr std::string_view kQueryStartLoc = "query_start_loc";
constexpr std::string_view kSeqLens = "seq_lens";
constexpr std::string_view kOutputNames[] = {"cu_seqlens_q_local", "seqlens_k_local", "num_computed_tokens_local",
                                             "virtual_row", "block_start"};

std::optional<Error> check_scalar(std::string_view field, std::int64_t value) noexcept {
  if (value < 1) return Error{ErrorCode::not_positive, field, Error::kNoIndex, value, 1};
  if (value > kMaxValue) return Error{ErrorCode::value_too_large, field, Error::kNoIndex, value, kMaxValue};
  return std::nullopt;
}

// Rules 1-3.
std::optional<Error> check_sizes(std::int64_t attn_chunk_size, std::int64_t block_size) noexcept {
  if (auto bad = check_scalar(kAttnChunkSize, attn_chunk_size)) return bad;
  if (auto bad = check_scalar(kBlockSize, block_size)) return bad;
  if (attn_chunk_size % block_size != 0)
    return Error{ErrorCode::not_a_multiple, kAttnChunkSize, Error::kNoIndex, attn_chunk_size, block_size};
  return std::nullopt;
}

// Rules 1-4.
template <typename Int>
std::optional<Error> check_shape(const BasicView<Int>& view) noexcept {
  if (auto bad = check_sizes(view.attn_chunk_size, view.block_size)) return bad;
  if (view.query_start_loc.empty()) return Error{ErrorCode::length_mismatch, kQueryStartLoc, 0, 0, 1};
  const auto rows = static_cast<std::int64_t>(view.query_start_loc.size()) - 1;
  const auto given = static_cast<std::int64_t>(view.seq_lens.size());
  if (given != rows) return Error{ErrorCode::length_mismatch, kSeqLens, std::min(given, rows), given, rows};
  return std::nullopt;
}

// An entry in [0, 2^31-1], or the rule it breaks.
std::optional<Error> check_entry(std::string_view field, std::size_t index, std::int64_t value) noexcept {
  const auto at = static_cast<std::int64_t>(index);
  if (value < 0) return Error{ErrorCode::negative_value, field, at, value, 0};
  if (value > kMaxValue) return Error{ErrorCode::value_too_large, field, at, value, kMaxValue};
  return std::nullopt;
}

// How a row is cut: n new tokens of s in all (c = s - n computed before), f
// of them in the first piece, L pieces, e keys in the last. Every value is in
// [0, 2^31-1] and the arithmetic is 64-bit.
struct Cut {
  std::int64_t new_tokens;
  std::int64_t seq_len;
  std::int64_t first;
  std::int64_t pieces;
  std::int64_t last_keys;
};

Cut cut_row(std::int64_t A, std::int64_t n, std::int64_t s) noexcept {
  const std::int64_t c = s - n;
  const std::int64_t first = std::min(A - c % A, n);
  return {n, s, first, 1 + (n - first + A - 1) / A, (s - 1) % A + 1};
}

// Every row's cut, in one pass that checks rule 5: `each(i, cut, before)` is
// called per row while every entry so far is valid, `before` the pieces of
// the rows before it. Returns V, or the first broken rule.
template <typename Int, typename Each>
Result<std::int64_t> count_pieces(const BasicView<Int>& view, Each&& each) noexcept {
  if (auto bad = check_shape(view)) return *bad;
  const auto q = view.query_start_loc;
  const auto s = view.seq_lens;
  if (auto bad = check_entry(kQueryStartLoc, 0, q[0])) return *bad;
  std::int64_t total = 0;
  for (std::size_t i = 0; i + 1 < q.size(); ++i) {
    const std::int64_t next = q[i + 1];
    const std::int64_t previous = q[i];
    const auto at = static_cast<std::int64_t>(i + 1);
    if (auto bad = check_entry(kQueryStartLoc, i + 1, next)) return *bad;
    if (next < previous) return Error{ErrorCode::query_start_loc_decreasing, kQueryStartLoc, at, next, previous};
    if (next == previous) return Error{ErrorCode::not_increasing, kQueryStartLoc, at, next, previous};
    if (auto bad = check_entry(kSeqLens, i, s[i])) return *bad;
    const std::int64_t n = next - previous;
    if (s[i] < n) return Error{ErrorCode::below_minimum, kSeqLens, static_cast<std::int64_t>(i), s[i], n};
    const Cut cut = cut_row(view.attn_chunk_size, n, s[i]);
    each(i, cut, total);
    total += cut.pieces;
  }
  return total;
}

Error too_large(std::int64_t pieces, const Limits& limits) noexcept {
  Error error = detail::output_too_large(pieces, detail::chunk_cap(limits));
  error.field = kOutputNames[0];
  return error;
}

template <typename Int>
Result<Sizes> sizes_of(const BasicView<Int>& view, const Limits& limits) noexcept {
  const auto pieces = count_pieces(view, [](std::size_t, const Cut&, std::int64_t) {});
  if (!pieces.ok()) return pieces.error();
  if (pieces.value() > detail::chunk_cap(limits)) return too_large(pieces.value(), limits);
  return Sizes{static_cast<std::int64_t>(view.query_start_loc.size()) - 1, pieces.value()};
}

template <typename Int>
Result<Sizes> write_batches(const BasicView<Int>& view, const Buffers& out, const Limits& limits) noexcept {
  const std::span<std::int32_t> buffers[] = {out.cu_seqlens_q_local, out.seqlens_k_local, out.num_computed_tokens_local,
                                             out.virtual_row, out.block_start};
  std::int64_t room = static_cast<std::int64_t>(out.cu_seqlens_q_local.size()) - 1;
  for (std::size_t b = 1; b < 5; ++b) room = std::min(room, static_cast<std::int64_t>(buffers[b].size()));
  const std::int64_t A = view.attn_chunk_size;
  const std::int64_t P = view.block_size;
  const std::int64_t first_offset = view.query_start_loc.empty() ? 0 : view.query_start_loc[0];
  const auto pieces = count_pieces(view, [&](std::size_t i, const Cut& cut, std::int64_t before) {
    if (before + cut.pieces > room) return;
    const std::int64_t row_start = view.query_start_loc[i] - first_offset;
    for (std::int64_t j = 0; j < cut.pieces; ++j) {
      const auto v = static_cast<std::size_t>(before + j);
      const std::int64_t done = j == 0 ? 0 : cut.first + (j - 1) * A;  // the row's new tokens in earlier pieces
      const std::int64_t queries = j == 0 ? cut.first : std::min(cut.new_tokens - done, A);
      const std::int64_t keys = j + 1 == cut.pieces ? cut.last_keys : A;
      const std::int64_t key_start = cut.seq_len - ((cut.pieces - 1 - j) * A + cut.last_keys);
      out.cu_seqlens_q_local[v] = static_cast<std::int32_t>(row_start + done);
      out.seqlens_k_local[v] = static_cast<std::int32_t>(keys);
      out.num_computed_tokens_local[v] = static_cast<std::int32_t>(keys - queries);
      out.virtual_row[v] = static_cast<std::int32_t>(i);
      out.block_start[v] = static_cast<std::int32_t>(key_start / P);
    }
  });
  if (!pieces.ok()) return pieces.error();
  const std::int64_t V = pieces.value();
  if (V > detail::chunk_cap(limits)) return too_large(V, limits);
  for (std::size_t b = 0; b < 5; ++b) {
    const std::int64_t needed = b == 0 ? V + 1 : V;
    if (static_cast<std::int64_t>(buffers[b].size()) < needed)
      return detail::buffer_too_small(kOutputNames[b], static_cast<std::int64_t>(buffers[b].size()), needed);
  }
  const auto& q = view.query_start_loc;
  out.cu_seqlens_q_local[static_cast<std::size_t>(V)] = static_cast<std::int32_t>(q[q.size() - 1] - q[0]);
  return Sizes{static_cast<std::int64_t>(q.size()) - 1, V};
}

template <typename Int>
Result<VirtualBatches> returned_batches(const BasicView<Int>& view, const Limits& limits) {
  const auto sizes = sizes_of(view, limits);
  if (!sizes.ok()) return sizes.error();
  const auto V = static_cast<std::size_t>(sizes.value().virtual_batches);
  VirtualBatches batches{Int32Array(V + 1), Int32Array(V), Int32Array(V), Int32Array(V), Int32Array(V)};
  const auto written = write_batches(view,
                                     {batches.cu_seqlens_q_local, batches.seqlens_k_local,
                                      batches.num_computed_tokens_local, batches.virtual_row, batches.block_start},
                                     limits);
  if (!written.ok()) return written.error();
  return batches;
}

// numpy's repeat(values, counts).
std::vector<std::int64_t> repeat(const std::vector<std::int64_t>& values, const std::vector<std::int64_t>& counts) {
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < values.size(); ++i) out.insert(out.end(), static_cast<std::size_t>(counts[i]), values[i]);
  return out;
}

// Python's a % b for b < 0 (the result in (b, 0]), a >= 0.
std::int64_t python_mod_negative(std::int64_t a, std::int64_t b) {
  const std::int64_t r = a % -b;
  return r == 0 ? 0 : r + b;
}

}  // namespace

std::optional<Error> validate(const View32& view, const Limits& limits) noexcept {
  return detail::error_of(sizes_of(view, limits));
}
std::optional<Error> validate(const View64& view, const Limits& limits) noexcept {
  return detail::error_of(sizes_of(view, limits));
}

Result<Sizes> output_sizes(const View32& view, const Limits& limits) noexcept { return sizes_of(view, limits); }
Result<Sizes> output_sizes(const View64& view, const Limits& limits) noexcept { return sizes_of(view, limits); }

Result<Sizes> max_output_sizes(std::int64_t max_tokens, std::int64_t max_rows, std::int64_t attn_chunk_size,
                               std::int64_t block_size, const Limits& limits) noexcept {
  if (auto bad = check_sizes(attn_chunk_size, block_size)) return *bad;
  if (auto bad = detail::check_engine_limits(max_tokens, max_rows)) return *bad;
  // Every row has a token: no more rows than tokens, no more tokens than 2^31-1.
  const std::int64_t tokens = std::min(max_tokens, kMaxValue);
  const std::int64_t rows = std::min(max_rows, tokens);
  const std::int64_t rest = tokens - rows;  // tokens past each row's first
  const std::int64_t seconds = std::min(rows, rest);
  const std::int64_t pieces = rows + seconds + (rest - seconds) / attn_chunk_size;
  if (pieces > detail::chunk_cap(limits)) return too_large(pieces, limits);
  return Sizes{std::min(max_rows, kMaxValue + 1), pieces};
}

// vLLM's make_local_attention_virtual_batches, step by step (its variable
// names), 64-bit: first the pieces per row, then the batched arange, then
// each output as numpy computes it.
Result<VirtualBatches> reference(const View64& view, const Limits& limits) {
  const auto sizes = sizes_of(view, limits);
  if (!sizes.ok()) return sizes.error();
  const std::int64_t A = view.attn_chunk_size;
  const auto B = static_cast<std::size_t>(sizes.value().rows);
  const auto& q = view.query_start_loc;
  std::vector<std::int64_t> q_seqlens(B), seq_lens(B), q_tokens_in_first_block(B), tokens_in_last_block(B),
      local_blocks(B);
  for (std::size_t i = 0; i < B; ++i) {
    q_seqlens[i] = q[i + 1] - q[i];
    seq_lens[i] = view.seq_lens[i];
    // np.minimum(attn_chunk_size - ((seq_lens_np - q_seqlens) % attn_chunk_size), q_seqlens)
    q_tokens_in_first_block[i] = std::min(A - (seq_lens[i] - q_seqlens[i]) % A, q_seqlens[i]);
    // attn_chunk_size + (seq_lens_np % -attn_chunk_size)
    tokens_in_last_block[i] = A + python_mod_negative(seq_lens[i], -A);
    // 1 + cdiv(q_seqlens - q_tokens_in_first_block, attn_chunk_size)
    local_blocks[i] = 1 + (q_seqlens[i] - q_tokens_in_first_block[i] + A - 1) / A;
  }
  // cu_num_blocks = np.cumsum(local_blocks); virtual_batches = cu_num_blocks[-1]
  std::vector<std::int64_t> cu_num_blocks(B);
  std::int64_t running = 0;
  for (std::size_t i = 0; i < B; ++i) cu_num_blocks[i] = running += local_blocks[i];
  const auto virtual_batches = static_cast<std::size_t>(running);
  // block_offsets = np.repeat(cu_num_blocks - local_blocks, local_blocks); arange; rarange
  std::vector<std::int64_t> starts(B);
  for (std::size_t i = 0; i < B; ++i) starts[i] = cu_num_blocks[i] - local_blocks[i];
  const auto block_offsets = repeat(starts, local_blocks);
  std::vector<std::int64_t> arange(virtual_batches), rarange(virtual_batches);
  const auto repeated_blocks = repeat(local_blocks, local_blocks);
  for (std::size_t v = 0; v < virtual_batches; ++v) {
    arange[v] = static_cast<std::int64_t>(v) - block_offsets[v];
    rarange[v] = repeated_blocks[v] - arange[v] - 1;
  }
  // seqlens_q_local = np.repeat(q_seqlens - q_tokens_in_first_block, local_blocks)
  std::vector<std::int64_t> rest(B);
  for (std::size_t i = 0; i < B; ++i) rest[i] = q_seqlens[i] - q_tokens_in_first_block[i];
  auto seqlens_q_local = repeat(rest, local_blocks);
  // seqlens_q_local[arange == 0] = q_tokens_in_first_block
  std::size_t row = 0;
  for (std::size_t v = 0; v < virtual_batches; ++v) {
    if (arange[v] == 0) seqlens_q_local[v] = q_tokens_in_first_block[row++];
  }
  // seqlens_q_local[arange > 0] = np.minimum(seqlens_q_local - attn_chunk_size * (arange - 1), attn_chunk_size)[arange > 0]
  for (std::size_t v = 0; v < virtual_batches; ++v) {
    if (arange[v] > 0) seqlens_q_local[v] = std::min(seqlens_q_local[v] - A * (arange[v] - 1), A);
  }
  // seqlens_k_local = np.full(virtual_batches, attn_chunk_size); seqlens_k_local[cu_num_blocks - 1] = tokens_in_last_block
  std::vector<std::int64_t> seqlens_k_local(virtual_batches, A);
  for (std::size_t i = 0; i < B; ++i) seqlens_k_local[static_cast<std::size_t>(cu_num_blocks[i] - 1)] = tokens_in_last_block[i];
  // k_seqstarts_absolute = np.repeat(seq_lens_np, local_blocks) - (rarange * attn_chunk_size + np.repeat(tokens_in_last_block, local_blocks))
  const auto repeated_seq_lens = repeat(seq_lens, local_blocks);
  const auto repeated_last = repeat(tokens_in_last_block, local_blocks);
  std::vector<std::int64_t> rows(B);
  for (std::size_t i = 0; i < B; ++i) rows[i] = static_cast<std::int64_t>(i);
  const auto batch_indices = repeat(rows, local_blocks);
  VirtualBatches out;
  for (std::size_t v = 0; v < virtual_batches; ++v) {
    // np.cumsum(seqlens_q_local, out=cu_seqlens_q_local[1:]); cu_seqlens_q_local[0] = 0
    out.cu_seqlens_q_local.push_back(static_cast<std::int32_t>(out.cu_seqlens_q_local.back() + seqlens_q_local[v]));
    out.seqlens_k_local.push_back(static_cast<std::int32_t>(seqlens_k_local[v]));
    // num_computed_tokens_local = seqlens_k_local - seqlens_q_local
    out.num_computed_tokens_local.push_back(static_cast<std::int32_t>(seqlens_k_local[v] - seqlens_q_local[v]));
    out.virtual_row.push_back(static_cast<std::int32_t>(batch_indices[v]));
    const std::int64_t k_seqstarts_absolute = repeated_seq_lens[v] - (rarange[v] * A + repeated_last[v]);
    // block_starts = k_seqstarts_absolute // block_size (never negative here)
    out.block_start.push_back(static_cast<std::int32_t>(k_seqstarts_absolute / view.block_size));
  }
  return out;
}

Result<Sizes> virtual_batches_into(const View32& view, const Buffers& out, const Limits& limits) noexcept {
  return write_batches(view, out, limits);
}
Result<Sizes> virtual_batches_into(const View64& view, const Buffers& out, const Limits& limits) noexcept {
  return write_batches(view, out, limits);
}

Result<VirtualBatches> virtual_batches(const View32& view, const Limits& limits) { return returned_batches(view, limits); }
Result<VirtualBatches> virtual_batches(const View64& view, const Limits& limits) { return returned_batches(view, limits); }

Result<std::int64_t> gather_block_table(std::int64_t attn_chunk_size, std::int64_t block_size,
                                        std::span<const std::int32_t> block_table, std::int64_t rows,
                                        std::int64_t columns, std::span<const std::int32_t> virtual_row,
                                        std::span<const std::int32_t> block_start,
                                        std::span<std::int32_t> out) noexcept {
  if (auto bad = check_sizes(attn_chunk_size, block_size)) return *bad;
  if (columns < 1) return Error{ErrorCode::not_positive, "block_table columns", Error::kNoIndex, columns, 1};
  if (rows < 0 || static_cast<std::int64_t>(block_table.size()) != rows * columns)
    return Error{ErrorCode::length_mismatch, "block_table", Error::kNoIndex, static_cast<std::int64_t>(block_table.size()),
                 rows * columns};
  if (block_start.size() != virtual_row.size())
    return Error{ErrorCode::length_mismatch, "block_start", Error::kNoIndex,
                 static_cast<std::int64_t>(block_start.size()), static_cast<std::int64_t>(virtual_row.size())};
  const auto V = static_cast<std::int64_t>(virtual_row.size());
  for (std::size_t v = 0; v < virtual_row.size(); ++v) {
    const auto at = static_cast<std::int64_t>(v);
    if (virtual_row[v] < 0) return Error{ErrorCode::negative_value, "virtual_row", at, virtual_row[v], 0};
    if (virtual_row[v] >= rows) return Error{ErrorCode::value_too_large, "virtual_row", at, virtual_row[v], rows - 1};
    if (block_start[v] < 0) return Error{ErrorCode::negative_value, "block_start", at, block_start[v], 0};
  }
  const std::int64_t pages = attn_chunk_size / block_size;
  if (static_cast<std::int64_t>(out.size()) < V * pages)
    return detail::buffer_too_small("block_table_local", static_cast<std::int64_t>(out.size()), V * pages);
  // block_indices = (block_starts[:, None] + np.arange(pages)).clip(max=columns - 1); block_table[batch_indices, block_indices]:
  // the columns within the table copied as one run, the clipped rest the row's last column.
  for (std::int64_t v = 0; v < V; ++v) {
    const std::int32_t* table_row = block_table.data() + virtual_row[static_cast<std::size_t>(v)] * columns;
    const std::int64_t first = std::min<std::int64_t>(block_start[static_cast<std::size_t>(v)], columns - 1);
    const std::int64_t inside = std::min(pages, columns - first);
    std::int32_t* local = out.data() + v * pages;
    std::copy_n(table_row + first, inside, local);
    std::fill(local + inside, local + pages, table_row[columns - 1]);
  }
  return V;
}

}  // namespace chunkmeta::local_attn
