// Closed-form arithmetic for one row, shared by validation (sizing) and the
// fast fill so that the counted and the written number of chunks cannot drift.
#pragma once

#include <cstdint>

namespace chunkmeta::detail {

// Division and remainder by the batch's chunk size without a divide
// instruction (Lemire, Kaser, Kurz, "Faster remainder by direct computation",
// 2019): exact for every 32-bit numerator and divisor. The chunk size is
// fixed for a whole batch, so the 64-bit magic number is computed once.
class Divisor {
 public:
  explicit Divisor(std::uint32_t divisor) noexcept
      : divisor_(divisor), magic_(divisor <= 1 ? 0 : ~std::uint64_t{0} / divisor + 1) {}

  std::uint32_t divisor() const noexcept { return divisor_; }
  std::uint32_t quotient(std::uint32_t n) const noexcept {
    return divisor_ == 1 ? n : static_cast<std::uint32_t>(high_product(magic_, n));
  }
  std::uint32_t remainder(std::uint32_t n) const noexcept {
    return divisor_ == 1 ? 0 : static_cast<std::uint32_t>(high_product(magic_ * n, divisor_));
  }

 private:
  static std::uint64_t high_product(std::uint64_t a, std::uint64_t b) noexcept {
    __extension__ using u128 = unsigned __int128;  // GCC and Clang; __extension__ keeps -Wpedantic quiet
    return static_cast<std::uint64_t>((static_cast<u128>(a) * b) >> 64);
  }

  std::uint32_t divisor_;
  std::uint64_t magic_;
};

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

inline RowCut cut_row(std::uint32_t computed, std::uint32_t new_tokens, const Divisor& chunk) {
  const std::uint32_t misalignment = chunk.remainder(computed);
  const std::uint32_t gap = misalignment != 0 ? chunk.divisor() - misalignment : 0;
  const std::uint32_t head = new_tokens < gap ? new_tokens : gap;
  const std::uint32_t rest = new_tokens - head;
  return {misalignment != 0 ? 1u : 0u, head, chunk.quotient(rest + chunk.divisor() - 1)};
}

}  // namespace chunkmeta::detail
