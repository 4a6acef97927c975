// Where a prefill may export its internal checkpoint
// (specs/mamba_prefill_checkpoints): validation, the contract's rule ported
// condition by condition, and the one-pass writer. The reference divides in
// 64 bits with floor division (floor((a - 1) / M) is -1 for a query starting
// at 0, and s + M leaves int32 for s near 2^31); the writer in unsigned 32
// bits, which the validated range allows (plan_row).
#include "chunkmeta/prefill_checkpoints.hpp"

#include <algorithm>

#include "checked_sizes.hpp"

namespace chunkmeta::prefill_checkpoints {
namespace {

constexpr std::string_view kSeqLens = "seq_lens";
constexpr std::string_view kQueryLens = "query_lens";

// Floor and ceiling division for a divisor d >= 1 and any numerator.
constexpr std::int64_t floor_div(std::int64_t x, std::int64_t d) noexcept { return x >= 0 ? x / d : -((-x + d - 1) / d); }
constexpr std::int64_t ceil_div(std::int64_t x, std::int64_t d) noexcept { return -floor_div(-x, d); }

std::optional<Error> check_scalar(std::string_view field, std::int64_t value) noexcept {
  if (value < 1) return Error{ErrorCode::not_positive, field, Error::kNoIndex, value, 0};
  if (value > kMaxValue) return Error{ErrorCode::value_too_large, field, Error::kNoIndex, value, kMaxValue};
  return std::nullopt;
}

std::optional<Error> check_entry(std::string_view field, std::int64_t at, std::int64_t value) noexcept {
  if (value < 0) return Error{ErrorCode::negative_value, field, at, value, 0};
  if (value > kMaxValue) return Error{ErrorCode::value_too_large, field, at, value, kMaxValue};
  return std::nullopt;
}

// Row i's checkpoint: its offset from the query start and its column, or (0, -1).
struct Planned {
  std::int64_t offset = 0;
  std::int64_t col = -1;
};

// The fast path's row, the same conditions in the order that rejects soonest:
// once validated every value is in [0, 2^31 - 1], so a + H and s + M - 1 stay
// below 2^32 and each quotient is a 32-bit unsigned division (a 64-bit one
// costs several times more), and a row whose query starts off the hash grid
// is settled by one remainder.
// p < s always holds (p <= s - 1), and a + H <= p implies a < p.
Planned plan_row(std::uint32_t s, std::uint32_t n, std::uint32_t H, std::uint32_t M, std::uint32_t alignment,
                 bool drop_eagle_block) noexcept {
  const std::uint32_t a = s - n;
  if (s == 0 || a % H != 0) return {};
  std::uint32_t p = (s - 1) / H * H;
  if (drop_eagle_block) p = p >= H ? p - H : 0;
  if (a + H > p || (p - a) % alignment != 0) return {};
  const std::int64_t col = static_cast<std::int64_t>((s + (M - 1)) / M) - 2;
  // floor((a - 1) / M) is -1 for a query starting at 0.
  const std::int64_t initial_block = a == 0 ? -1 : static_cast<std::int64_t>((a - 1) / M);
  if (col <= initial_block) return {};
  return Planned{static_cast<std::int64_t>(p - a), col};
}

std::optional<Error> short_buffer(const Buffers& out, std::int64_t rows) noexcept {
  if (static_cast<std::int64_t>(out.checkpoint_offsets.size()) < rows)
    return detail::buffer_too_small("checkpoint_offsets", static_cast<std::int64_t>(out.checkpoint_offsets.size()), rows);
  if (static_cast<std::int64_t>(out.checkpoint_cols.size()) < rows)
    return detail::buffer_too_small("checkpoint_cols", static_cast<std::int64_t>(out.checkpoint_cols.size()), rows);
  return std::nullopt;
}

}  // namespace

std::optional<Error> validate(const View& view, const Limits& limits) noexcept {
  if (auto error = check_scalar("hash_block_size", view.hash_block_size)) return error;
  if (auto error = check_scalar("mamba_block_size", view.mamba_block_size)) return error;
  if (view.checkpoint_alignment) {
    if (auto error = check_scalar("checkpoint_alignment", *view.checkpoint_alignment)) return error;
  }
  const auto rows = static_cast<std::int64_t>(view.seq_lens.size());
  const auto given = static_cast<std::int64_t>(view.query_lens.size());
  if (given != rows) return Error{ErrorCode::length_mismatch, kQueryLens, std::min(given, rows), given, rows};
  for (std::size_t i = 0; i < view.seq_lens.size(); ++i) {
    const auto at = static_cast<std::int64_t>(i);
    if (auto error = check_entry(kSeqLens, at, view.seq_lens[i])) return error;
    if (auto error = check_entry(kQueryLens, at, view.query_lens[i])) return error;
    if (view.seq_lens[i] < view.query_lens[i])
      return Error{ErrorCode::below_minimum, kSeqLens, at, view.seq_lens[i], view.query_lens[i]};
  }
  if (rows > detail::chunk_cap(limits)) return detail::output_too_large(rows, detail::chunk_cap(limits));
  return std::nullopt;
}

Result<Checkpoints> reference(const View& view) {
  if (auto error = validate(view)) return *error;
  Checkpoints result;
  const std::int64_t H = view.hash_block_size;
  const std::int64_t M = view.mamba_block_size;
  for (std::size_t i = 0; i < view.seq_lens.size(); ++i) {
    const std::int64_t s = view.seq_lens[i];
    const std::int64_t n = view.query_lens[i];
    const std::int64_t a = s - n;  // where the query starts
    // The position: the last hash-block boundary before the sequence's last token, one block earlier
    // when the last block is the speculative one, never below 0.
    std::int64_t p = floor_div(s - 1, H) * H;
    if (view.drop_eagle_block) p -= H;
    p = std::max(p, std::int64_t{0});
    // Its column: the block before the one the sequence ends in.
    const std::int64_t col = ceil_div(s, M) - 2;
    // Valid only when every condition holds; without an alignment, the backend cannot export.
    bool valid = view.checkpoint_alignment.has_value();
    valid = valid && a % H == 0;                                   // the query starts on the hash grid
    valid = valid && col > floor_div(a - 1, M);                    // not the initial state's block
    valid = valid && a + H <= p;                                   // at least a hash block of new tokens first
    valid = valid && a < p && p < s;                               // strictly inside the query
    valid = valid && (p - a) % *view.checkpoint_alignment == 0;    // where the backend can export
    result.checkpoint_offsets.push_back(static_cast<std::int32_t>(valid ? p - a : 0));
    result.checkpoint_cols.push_back(valid ? col : -1);
  }
  return result;
}

Result<Checkpoints> checkpoints(const View& view) {
  if (auto error = validate(view)) return *error;
  Checkpoints result;
  result.checkpoint_offsets.resize(view.seq_lens.size());
  result.checkpoint_cols.resize(view.seq_lens.size());
  auto written = checkpoints_into(view, {result.checkpoint_offsets, result.checkpoint_cols});
  if (!written.ok()) return written.error();
  return result;
}

Result<std::int64_t> checkpoints_into(const View& view, const Buffers& out) noexcept {
  if (auto error = validate(view)) return *error;
  const auto rows = static_cast<std::int64_t>(view.seq_lens.size());
  if (auto error = short_buffer(out, rows)) return *error;
  if (!view.checkpoint_alignment) {  // the backend cannot export: nothing planned
    std::fill_n(out.checkpoint_offsets.begin(), rows, 0);
    std::fill_n(out.checkpoint_cols.begin(), rows, -1);
    return rows;
  }
  const auto H = static_cast<std::uint32_t>(view.hash_block_size);
  const auto M = static_cast<std::uint32_t>(view.mamba_block_size);
  const auto alignment = static_cast<std::uint32_t>(*view.checkpoint_alignment);
  for (std::size_t i = 0; i < view.seq_lens.size(); ++i) {
    const Planned planned = plan_row(static_cast<std::uint32_t>(view.seq_lens[i]), static_cast<std::uint32_t>(view.query_lens[i]),
                                     H, M, alignment, view.drop_eagle_block);
    out.checkpoint_offsets[i] = static_cast<std::int32_t>(planned.offset);
    out.checkpoint_cols[i] = planned.col;
  }
  return rows;
}

}  // namespace chunkmeta::prefill_checkpoints
