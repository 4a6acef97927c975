// Where a prefill may export its internal checkpoint
// (specs/mamba_prefill_checkpoints): validation, the contract's rule ported
// condition by condition, and the one-pass writer. 64-bit arithmetic with
// floor division throughout: floor((a - 1) / M) is -1 for a query starting
// at 0, and s + M leaves int32 for s near 2^31.
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

Planned plan_row(const View& view, std::size_t i) noexcept {
  const std::int64_t H = view.hash_block_size;
  const std::int64_t M = view.mamba_block_size;
  const std::int64_t s = view.seq_lens[i];
  const std::int64_t a = s - view.query_lens[i];
  const std::int64_t p = std::max(floor_div(s - 1, H) * H - (view.drop_eagle_block ? H : 0), std::int64_t{0});
  const std::int64_t col = ceil_div(s, M) - 2;
  const std::int64_t alignment = view.checkpoint_alignment.value_or(1);
  const bool valid = view.checkpoint_alignment.has_value() && a % H == 0 && col > floor_div(a - 1, M) &&
                     a + H <= p && a < p && p < s && (p - a) % alignment == 0;
  return valid ? Planned{p - a, col} : Planned{};
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
  for (std::size_t i = 0; i < view.seq_lens.size(); ++i) {
    const Planned planned = plan_row(view, i);
    out.checkpoint_offsets[i] = static_cast<std::int32_t>(planned.offset);
    out.checkpoint_cols[i] = planned.col;
  }
  return rows;
}

}  // namespace chunkmeta::prefill_checkpoints
