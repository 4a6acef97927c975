// A batch's cumulative offsets (FLA's cu_seqlens, the conv1d map's
// query_start_loc): read once, entry by entry, each row cut in pieces of one
// size. Every spec whose input is such offsets shares these rules and their
// order; it names its field and its rule of order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "chunkmeta/types.hpp"
#include "row_math.hpp"

namespace chunkmeta::detail {

struct OffsetsField {
  std::string_view name;
  ErrorCode decreasing;  // the spec's code for an entry below the one before
};

template <typename Int>
bool in_value_range(Int value) noexcept {
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(value)) <= static_cast<std::uint64_t>(kMaxValue);
}

// The rule broken at entry j, every entry before it in range and
// non-decreasing: out of range (negative or too large), else below the one before.
template <typename Int>
Error broken_offset(std::span<const Int> offsets, std::size_t j, const OffsetsField& field) noexcept {
  const std::int64_t value = offsets[j];
  const auto index = static_cast<std::int64_t>(j);
  if (value < 0) return Error{ErrorCode::negative_value, field.name, index, value, 0};
  if (value > kMaxValue) return Error{ErrorCode::value_too_large, field.name, index, value, kMaxValue};
  return Error{field.decreasing, field.name, index, value, offsets[j - 1]};
}

// Every row's count of pieces of `piece` tokens (ceil(length / piece)), in one
// pass that also checks every entry: `each(i, count, before)` is called per
// row while every entry so far is valid, `before` the pieces of the rows
// before it. Returns the total, or the first broken rule. `offsets` is not
// empty and `piece` is in [1, 2^31-1]: a row's length and piece - 1 are below
// 2^31, so their sum fits 32 unsigned bits exactly.
template <typename Int, typename Each>
Result<std::int64_t> count_pieces(std::span<const Int> offsets, std::int64_t piece, const OffsetsField& field,
                                  Each&& each) noexcept {
  const Divisor divisor(static_cast<std::uint32_t>(piece));
  const auto round_up = static_cast<std::uint32_t>(piece - 1);
  if (!in_value_range(offsets[0])) return broken_offset(offsets, 0, field);
  std::int64_t total = 0;
  for (std::size_t i = 0; i + 1 < offsets.size(); ++i) {
    if (!in_value_range(offsets[i + 1]) || offsets[i + 1] < offsets[i]) return broken_offset(offsets, i + 1, field);
    const auto length = static_cast<std::uint32_t>(offsets[i + 1] - offsets[i]);
    const std::uint32_t count = divisor.quotient(length + round_up);
    each(i, count, total);
    total += count;
  }
  return total;
}

}  // namespace chunkmeta::detail
