// Closed-form arithmetic for one row, shared by validation (sizing) and the
// fast fill so that the counted and the written number of chunks cannot drift.
#pragma once

#include <cstdint>

namespace chunkmeta::detail {

// How the reference procedure cuts one row: an optional realigning "head"
// chunk (emitted whenever computed tokens are not a multiple of the chunk
// size, even with zero new tokens), then ceil(rest / chunk) body chunks.
// Every operand is in [0, 2^31-1], so 32-bit unsigned arithmetic is exact:
// rest + chunk - 1 <= 2^32 - 3.
struct RowCut {
  std::uint32_t has_head;     // 0 or 1
  std::uint32_t head_length;  // tokens in the head chunk (0 when absent)
  std::uint32_t body_chunks;  // chunks after the head
  std::uint32_t chunks() const { return has_head + body_chunks; }
};

inline RowCut cut_row(std::uint32_t computed, std::uint32_t new_tokens, std::uint32_t chunk) {
  const std::uint32_t misalignment = computed % chunk;
  const std::uint32_t gap = misalignment != 0 ? chunk - misalignment : 0;
  const std::uint32_t head = new_tokens < gap ? new_tokens : gap;
  const std::uint32_t rest = new_tokens - head;
  return {misalignment != 0 ? 1u : 0u, head, (rest + chunk - 1) / chunk};
}

}  // namespace chunkmeta::detail
