// The prefix-cache checkpoint plan (specs/mamba_checkpoint_plan): validation,
// the contract's procedure ported step by step on top of Mamba's reference
// chunk metadata, and the one-pass fast implementation whose chunk indices
// are closed-form. 64-bit arithmetic throughout (vLLM's (c + M) / M in int32
// overflows for c near 2^31).
#include "chunkmeta/checkpoint_plan.hpp"

#include <algorithm>

#include "checked_sizes.hpp"
#include "chunkmeta/chunkmeta.hpp"

namespace chunkmeta::checkpoint {
namespace {

constexpr std::string_view kBlockSize = "block_size";

// The rules of block_size, once Mamba's domain holds (so chunk_size is valid).
std::optional<Error> check_block_size(std::int64_t block_size, std::int64_t chunk_size) noexcept {
  if (block_size < 1) return Error{ErrorCode::not_positive, kBlockSize, Error::kNoIndex, block_size, 0};
  if (block_size > kMaxValue) return Error{ErrorCode::value_too_large, kBlockSize, Error::kNoIndex, block_size, kMaxValue};
  if (block_size % chunk_size != 0)
    return Error{ErrorCode::not_a_multiple, kBlockSize, Error::kNoIndex, block_size, chunk_size};
  return std::nullopt;
}

template <typename Int>
std::optional<Error> validate_view(const BasicView<Int>& view, const Limits& limits) noexcept {
  // Mamba's domain without its cap, then block_size, then the cap: a rule of
  // the domain is named before a resource limit.
  Limits uncapped;
  uncapped.max_chunks = Limits::kMaxChunksCap;
  if (auto error = chunkmeta::validate(detail::mamba_workload_of(view), uncapped)) return error;
  if (auto error = check_block_size(view.block_size, view.chunk_size)) return error;
  return chunkmeta::validate(detail::mamba_workload_of(view), limits);
}

// One row of the fast pass: its blocks, and Mamba's chunks of it.
struct Row {
  std::int64_t tokens = 0;  // new tokens
  std::int64_t last_computed_block = 0;
  std::int64_t first_block = 0;
  std::int64_t last_block = 0;
  std::int64_t head = 0;     // 1 when c is not a multiple of C: the realigning chunk (emitted even without tokens)
  std::int64_t aligned = 0;  // the first multiple of C at or above c, where the head ends
  std::int64_t chunk = 1;
  std::int64_t chunks = 0;   // Mamba's chunks of the row

  // Writes of the row: one per block boundary strictly inside (c, c + n), and the final one.
  std::int64_t writes() const noexcept { return tokens == 0 ? 0 : last_block - first_block + 1; }
  // The chunk that ends at absolute token `end`, a multiple of C above c, given
  // the row's first chunk index: the head ends at `aligned`, each later chunk C on.
  std::int64_t chunk_ending_at(std::int64_t end, std::int64_t first_chunk) const noexcept {
    return first_chunk + head + (end - aligned) / chunk - 1;
  }
};

template <typename Int>
Row row_of(const BasicView<Int>& view, std::size_t i) noexcept {
  const std::int64_t c = view.num_computed_tokens[i];
  const std::int64_t n = std::int64_t{view.query_start_loc[i + 1]} - std::int64_t{view.query_start_loc[i]};
  const std::int64_t C = view.chunk_size;
  const std::int64_t M = view.block_size;
  Row row;
  row.tokens = n;
  row.last_computed_block = c == 0 ? 0 : (c - 1) / M;
  row.first_block = c / M;
  row.last_block = c + n == 0 ? 0 : (c + n - 1) / M;
  row.head = c % C != 0 ? 1 : 0;
  row.aligned = (c + C - 1) / C * C;
  row.chunk = C;
  const std::int64_t head_tokens = row.head == 1 ? std::min(row.aligned - c, n) : 0;
  row.chunks = row.head + (n - head_tokens + C - 1) / C;
  return row;
}

template <typename Int>
Result<Sizes> sizes_of(const BasicView<Int>& view, const Limits& limits) noexcept {
  if (auto error = validate_view(view, limits)) return *error;
  Sizes sizes{static_cast<std::int64_t>(view.num_computed_tokens.size()), 0};
  for (std::size_t i = 0; i < view.num_computed_tokens.size(); ++i) sizes.writes += row_of(view, i).writes();
  return sizes;
}

// The first buffer shorter than its output, or nullopt.
std::optional<Error> short_buffer(const Buffers& out, const Sizes& sizes) noexcept {
  const std::pair<std::string_view, std::span<std::int32_t>> per_row[] = {
      {"block_idx_last_computed_token", out.block_idx_last_computed_token},
      {"block_idx_first_scheduled_token", out.block_idx_first_scheduled_token},
      {"block_idx_last_scheduled_token", out.block_idx_last_scheduled_token}};
  for (const auto& [name, buffer] : per_row) {
    if (static_cast<std::int64_t>(buffer.size()) < sizes.rows) return detail::buffer_too_small(name, static_cast<std::int64_t>(buffer.size()), sizes.rows);
  }
  const std::pair<std::string_view, std::span<std::int32_t>> per_write[] = {
      {"write_row", out.write_row}, {"write_block", out.write_block}, {"write_chunk", out.write_chunk}};
  for (const auto& [name, buffer] : per_write) {
    if (static_cast<std::int64_t>(buffer.size()) < sizes.writes) return detail::buffer_too_small(name, static_cast<std::int64_t>(buffer.size()), sizes.writes);
  }
  return std::nullopt;
}

template <typename Int>
Result<Sizes> write_plan(const BasicView<Int>& view, const Buffers& out, const Limits& limits) noexcept {
  auto sizes = sizes_of(view, limits);
  if (!sizes.ok()) return sizes.error();
  if (auto error = short_buffer(out, sizes.value())) return *error;
  std::int64_t first_chunk = 0;  // the row's first chunk index: chunks of the rows before it
  std::size_t w = 0;
  for (std::size_t i = 0; i < view.num_computed_tokens.size(); ++i) {
    const Row row = row_of(view, i);
    out.block_idx_last_computed_token[i] = static_cast<std::int32_t>(row.last_computed_block);
    out.block_idx_first_scheduled_token[i] = static_cast<std::int32_t>(row.first_block);
    out.block_idx_last_scheduled_token[i] = static_cast<std::int32_t>(row.last_block);
    if (row.tokens > 0) {
      for (std::int64_t b = row.first_block; b < row.last_block; ++b, ++w) {
        out.write_row[w] = static_cast<std::int32_t>(i);
        out.write_block[w] = static_cast<std::int32_t>(b);
        out.write_chunk[w] = static_cast<std::int32_t>(row.chunk_ending_at((b + 1) * view.block_size, first_chunk));
      }
      out.write_row[w] = static_cast<std::int32_t>(i);
      out.write_block[w] = static_cast<std::int32_t>(row.last_block);
      out.write_chunk[w] = static_cast<std::int32_t>(first_chunk + row.chunks - 1);
      ++w;
    }
    first_chunk += row.chunks;
  }
  return sizes;
}

Buffers buffers_of(Plan& plan) noexcept {
  return {plan.block_idx_last_computed_token, plan.block_idx_first_scheduled_token,
          plan.block_idx_last_scheduled_token, plan.write_row, plan.write_block, plan.write_chunk};
}

template <typename Int>
Result<Plan> plan_of(const BasicView<Int>& view, const Limits& limits) {
  auto sizes = sizes_of(view, limits);
  if (!sizes.ok()) return sizes.error();
  const auto rows = static_cast<std::size_t>(sizes.value().rows);
  const auto writes = static_cast<std::size_t>(sizes.value().writes);
  Plan plan{Int32Array(rows), Int32Array(rows), Int32Array(rows),
            Int32Array(writes), Int32Array(writes), Int32Array(writes)};
  auto written = write_plan(view, buffers_of(plan), limits);
  if (!written.ok()) return written.error();
  return plan;
}

}  // namespace

std::optional<Error> validate(const View64& view, const Limits& limits) noexcept { return validate_view(view, limits); }
std::optional<Error> validate(const View32& view, const Limits& limits) noexcept { return validate_view(view, limits); }
Result<Sizes> output_sizes(const View64& view, const Limits& limits) noexcept { return sizes_of(view, limits); }
Result<Sizes> output_sizes(const View32& view, const Limits& limits) noexcept { return sizes_of(view, limits); }
Result<Plan> plan(const View64& view, const Limits& limits) { return plan_of(view, limits); }
Result<Plan> plan(const View32& view, const Limits& limits) { return plan_of(view, limits); }
Result<Sizes> plan_into(const View64& view, const Buffers& out, const Limits& limits) noexcept {
  return write_plan(view, out, limits);
}
Result<Sizes> plan_into(const View32& view, const Buffers& out, const Limits& limits) noexcept {
  return write_plan(view, out, limits);
}

Result<Sizes> max_output_sizes(std::int64_t max_tokens, std::int64_t max_rows, std::int64_t chunk_size,
                               std::int64_t block_size) noexcept {
  if (auto bad = detail::check_chunk_size(chunk_size)) return *bad;
  if (auto error = check_block_size(block_size, chunk_size)) return *error;
  if (auto bad = detail::check_engine_limits(max_tokens, max_rows)) return *bad;
  // A row of n tokens crosses at most (n - 1) / M + 1 boundaries and writes once more; only rows with tokens write.
  const std::int64_t tokens = std::min(max_tokens, kMaxValue);
  const std::int64_t rows = std::min(max_rows, kMaxValue + 1);
  return Sizes{rows, tokens / block_size + 2 * std::min(rows, tokens)};
}

// The contract's procedure. For each row i (n_i new tokens, s_i = c_i + n_i):
//   1. block_idx_last_computed_token = max(ceil(c_i / M) - 1, 0);
//   2. block_idx_first_scheduled_token = floor(c_i / M);
//   3. block_idx_last_scheduled_token = max(ceil(s_i / M) - 1, 0);
//   4. with n_i >= 1: for each block b = first .. last - 1, the entry (i, b, k)
//      with k the chunk of Mamba's metadata that ends exactly at the row's
//      absolute token (b + 1) M; then (i, last, last_chunk_indices[i]).
Result<Plan> reference(const View64& view, const Limits& limits) {
  if (auto error = validate_view(view, limits)) return *error;
  auto metadata = chunkmeta::reference(detail::mamba_workload_of(view), limits);
  if (!metadata.ok()) return metadata.error();
  const auto& cu = metadata.value().cu_chunk_seqlen;
  const auto& seq = metadata.value().seq_idx;
  const auto& last = metadata.value().last_chunk_indices;
  const std::int64_t M = view.block_size;
  const auto& q = view.query_start_loc;
  Plan out;
  std::size_t k = 0;  // walks every chunk once, row by row
  for (std::size_t i = 0; i < view.num_computed_tokens.size(); ++i) {
    const std::int64_t c = view.num_computed_tokens[i];
    const std::int64_t n = q[i + 1] - q[i];
    const std::int64_t s = c + n;
    const std::int64_t ceil_c = (c + M - 1) / M;
    const std::int64_t ceil_s = (s + M - 1) / M;
    const std::int64_t first = c / M;
    const std::int64_t last_block = std::max<std::int64_t>(ceil_s - 1, 0);
    out.block_idx_last_computed_token.push_back(static_cast<std::int32_t>(std::max<std::int64_t>(ceil_c - 1, 0)));
    out.block_idx_first_scheduled_token.push_back(static_cast<std::int32_t>(first));
    out.block_idx_last_scheduled_token.push_back(static_cast<std::int32_t>(last_block));
    const std::int64_t start = q[i] - q[0];  // the row's first packed position
    for (std::int64_t b = first; n >= 1 && b < last_block; ++b) {
      // The chunk of this row that ends at the row's absolute token (b + 1) M.
      while (k < seq.size() && (seq[k] < static_cast<std::int32_t>(i) || c + (cu[k + 1] - start) < (b + 1) * M)) ++k;
      out.write_row.push_back(static_cast<std::int32_t>(i));
      out.write_block.push_back(static_cast<std::int32_t>(b));
      out.write_chunk.push_back(static_cast<std::int32_t>(k));
    }
    if (n >= 1) {
      out.write_row.push_back(static_cast<std::int32_t>(i));
      out.write_block.push_back(static_cast<std::int32_t>(last_block));
      out.write_chunk.push_back(last[i]);
    }
  }
  return out;
}

}  // namespace chunkmeta::checkpoint
