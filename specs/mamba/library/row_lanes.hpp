// The per-row cut of a block of rows, computed for many rows per instruction.
// Only the chunk count's prefix sum is serial; what this file computes is
// independent per row, so it runs as its own pass in vector lanes (GCC/Clang
// vector extensions: portable source, instructions chosen for the target).
// Included by each kernel's translation unit inside its own namespace
// (CHUNKMETA_KERNEL_ISA), so copies built for different instruction sets
// never meet at link time. kernel_test checks every kernel against the
// reference.
#pragma once

#ifndef CHUNKMETA_KERNEL_ISA
#error "include row_lanes.hpp from a kernel translation unit that defines CHUNKMETA_KERNEL_ISA"
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace chunkmeta::detail::CHUNKMETA_KERNEL_ISA {

using U32x8 = std::uint32_t __attribute__((vector_size(32)));
using I32x8 = std::int32_t __attribute__((vector_size(32)));
using U32x4 = std::uint32_t __attribute__((vector_size(16)));
using I32x4 = std::int32_t __attribute__((vector_size(16)));
using F64x4 = double __attribute__((vector_size(32)));

// The lane width the target has registers for: generic 32-byte vectors on a
// 16-byte target are lowered piecewise, some operations (compares) to scalar
// code, so the portable kernel works on 4 lanes and the AVX2 one on 8.
#if defined(__AVX2__)
using LaneU32 = U32x8;
using LaneI32 = I32x8;
#else
using LaneU32 = U32x4;
using LaneI32 = I32x4;
#endif
inline constexpr std::size_t kLanes = sizeof(LaneU32) / sizeof(std::uint32_t);

// Unaligned vector load and store (memcpy is how the standard spells them).
template <typename V, typename T>
inline V load_lanes(const T* from) noexcept {
  V v;
  std::memcpy(&v, from, sizeof v);
  return v;
}
template <typename T, typename V>
inline void store_lanes(T* to, const V& v) noexcept {
  std::memcpy(to, &v, sizeof v);
}

// Inclusive prefix sum across the lanes: log2(kLanes) shifted adds.
inline LaneU32 prefix_sum(LaneU32 x) noexcept {
#if defined(__AVX2__)
  // In each 128-bit half (byte shifts stay within halves), then the low
  // half's total into the high half: 7 instructions, where whole-vector
  // shuffles take 9.
  x += reinterpret_cast<LaneU32>(_mm256_slli_si256(reinterpret_cast<__m256i>(x), 4));
  x += reinterpret_cast<LaneU32>(_mm256_slli_si256(reinterpret_cast<__m256i>(x), 8));
  const __m256i low_total = _mm256_shuffle_epi32(reinterpret_cast<__m256i>(x), 0xFF);
  x += reinterpret_cast<LaneU32>(_mm256_permute2x128_si256(low_total, low_total, 0x08));
#else
  const LaneU32 zero{};
  x += __builtin_shufflevector(x, zero, 4, 0, 1, 2);
  x += __builtin_shufflevector(x, zero, 4, 4, 0, 1);
#endif
  return x;
}

// Lane-wise `mask ? a : b` for a comparison's all-ones/zero mask (spelled
// with bit operations: Clang and GCC differ on the vector ?: operator).
template <typename V, typename Mask>
inline V select(Mask mask, V a, V b) noexcept {
  const V bits = reinterpret_cast<V>(mask);
  return (a & bits) | (b & ~bits);
}

inline LaneI32 as_signed(LaneU32 x) noexcept { return reinterpret_cast<LaneI32>(x); }

// Lane-wise signed maximum and minimum of 32-bit lanes: one instruction with
// AVX2 (SSE4.1's for 4 lanes), a compare and select on SSE2.
template <typename V>
inline V larger(V a, V b) noexcept {
#if defined(__AVX2__)
  if constexpr (sizeof(V) == 32) {
    return reinterpret_cast<V>(_mm256_max_epi32(reinterpret_cast<__m256i>(a), reinterpret_cast<__m256i>(b)));
  } else {
    return reinterpret_cast<V>(_mm_max_epi32(reinterpret_cast<__m128i>(a), reinterpret_cast<__m128i>(b)));
  }
#else
  static_assert(sizeof(V) == sizeof(I32x4));  // the portable kernel's lanes
  return select(reinterpret_cast<I32x4>(a) < reinterpret_cast<I32x4>(b), b, a);
#endif
}
template <typename V>
inline V smaller(V a, V b) noexcept {
#if defined(__AVX2__)
  if constexpr (sizeof(V) == 32) {
    return reinterpret_cast<V>(_mm256_min_epi32(reinterpret_cast<__m256i>(a), reinterpret_cast<__m256i>(b)));
  } else {
    return reinterpret_cast<V>(_mm_min_epi32(reinterpret_cast<__m128i>(a), reinterpret_cast<__m128i>(b)));
  }
#else
  static_assert(sizeof(V) == sizeof(I32x4));
  return select(reinterpret_cast<I32x4>(a) < reinterpret_cast<I32x4>(b), a, b);
#endif
}

// floor(x / d) for 32-bit lanes and a divisor d >= 3 (so every quotient fits
// in 31 bits). The double product x * fl(1/d) is (x/d)(1 + e), |e| <= 2^-52,
// and x/d < 2^32/d, so it is off by less than 2^-20/d + 2^-52 < 1/d, the
// distance from x/d up to the next integer when x/d is not one: truncating
// it never overshoots, and undershoots by one only when x/d is an integer
// and the product lands just below it. The exact remainder in double (every
// value is an integer below 2^53) catches that case.
class LaneDivisor {
 public:
  explicit LaneDivisor(std::uint32_t divisor) noexcept
      : divisor_(static_cast<double>(divisor)), inverse_(1.0 / static_cast<double>(divisor)) {}

  LaneU32 quotient(LaneU32 x) const noexcept {
#if defined(__AVX2__)
    const U32x4 low = quotient4(__builtin_shufflevector(x, x, 0, 1, 2, 3));
    const U32x4 high = quotient4(__builtin_shufflevector(x, x, 4, 5, 6, 7));
    return __builtin_shufflevector(low, high, 0, 1, 2, 3, 4, 5, 6, 7);
#else
    return quotient4(x);
#endif
  }

 private:
  U32x4 quotient4(U32x4 x) const noexcept {
    // Unsigned to double through the signed conversion: flip the top bit, add 2^31 back.
    const auto flipped = reinterpret_cast<I32x4>(x ^ 0x80000000u);
    const F64x4 value = __builtin_convertvector(flipped, F64x4) + 2147483648.0;
    const I32x4 guess = __builtin_convertvector(value * inverse_, I32x4);
    const F64x4 remainder = value - __builtin_convertvector(guess, F64x4) * divisor_;
    const I32x4 low = __builtin_convertvector(remainder >= divisor_, I32x4);  // -1 where guess is one too low
    return reinterpret_cast<U32x4>(guess - low);
  }

  double divisor_;
  double inverse_;
};

// One vector of rows as the lane pass reads them: computed tokens, new
// tokens, and the position of the row's first token (from the batch's first).
struct RowLanes {
  LaneU32 computed;
  LaneU32 new_tokens;
  LaneU32 pos;
};

// The input integers in vector lanes, kLanes of them: 32-bit inputs are the
// lanes themselves; 64-bit inputs are narrowed after the domain check.
template <typename Int>
struct InputLanes;
template <>
struct InputLanes<std::int32_t> {
  using type = LaneU32;
};
template <>
struct InputLanes<std::int64_t> {
  using type = std::uint64_t __attribute__((vector_size(8 * kLanes)));
};

// Reads a block's rows straight from the caller's arrays and checks the
// value rules on the way (rules 3-5: every value, step and c_i + n_i in
// [0, 2^31-1]), so a valid workload is read once. Branch-free: bits at 31
// and up are ORed together, and `in_domain` looks at them once per block.
// With every input in [0, 2^31-1], a decreasing step wraps to a value with
// its top bit set, and c + n < 2^32 is exact in 32 bits.
template <typename Int>
class RowReader {
 public:
  using Wide = typename InputLanes<Int>::type;

  RowReader(const Int* computed, const Int* starts) noexcept
      : computed_(computed), starts_(starts), origin_(static_cast<std::uint32_t>(starts[0])) {
    wide_bits_ = Wide{} + static_cast<std::make_unsigned_t<Int>>(starts[0]);
  }

  // Rows [row, row + kLanes), all of which exist.
  RowLanes at(std::size_t row) noexcept { return read(computed_ + row, starts_ + row); }

  // Rows [row, row + count) with count < kLanes, padded with rows of no
  // tokens (which have no chunks).
  RowLanes tail(std::size_t row, std::size_t count) noexcept {
    Int computed[kLanes] = {};
    Int starts[kLanes + 1];
    for (std::size_t j = 0; j <= kLanes; ++j) starts[j] = starts_[row + (j < count ? j : count)];
    for (std::size_t j = 0; j < count; ++j) computed[j] = computed_[row + j];
    return read(computed, starts);
  }

  bool in_domain() const noexcept {
    const Wide wide = wide_bits_ >> 31;
    const LaneU32 narrow = narrow_bits_ >> 31;
    bool any = false;
    for (std::size_t j = 0; j < kLanes; ++j) any |= (wide[j] | narrow[j]) != 0;
    return !any;
  }

 private:
  RowLanes read(const Int* computed, const Int* starts) noexcept {
    const auto c = load_lanes<Wide>(computed);
    const auto s0 = load_lanes<Wide>(starts);
    const auto s1 = load_lanes<Wide>(starts + 1);
    const Wide n = s1 - s0;
    wide_bits_ |= c | s1 | n;
    const RowLanes lanes{narrow(c), narrow(n), narrow(s0) - origin_};
    narrow_bits_ |= lanes.computed + lanes.new_tokens;
    return lanes;
  }
  static LaneU32 narrow(Wide x) noexcept { return __builtin_convertvector(x, LaneU32); }

  const Int* computed_;
  const Int* starts_;
  std::uint32_t origin_;
  Wide wide_bits_;
  LaneU32 narrow_bits_{};
};

// What the writes need of each row of a block: its position, its chunk
// count, and `base`, the wrapped 32-bit value pos + head - has_head*C. Chunk
// j of the row starts at base + j*C, except a head chunk, which starts at
// pos: the formula puts it below pos (head < C), so max(pos, base + j*C) is
// right for every j.
template <std::size_t Rows>
struct RowPlan {
  static_assert(Rows % 8 == 0);
  alignas(32) std::uint32_t pos[Rows];
  alignas(32) std::uint32_t chunks[Rows];
  alignas(32) std::uint32_t base[Rows];
};

// The chunk size as the lanes need it: a shift and mask for powers of two
// (engines' chunk sizes), the double-precision divisor otherwise.
class LaneChunk {
 public:
  explicit LaneChunk(std::uint32_t chunk) noexcept
      : chunk_(chunk),
        power_of_two_((chunk & (chunk - 1)) == 0),  // not has_single_bit: no popcount call on baseline x86-64
        shift_(static_cast<std::uint32_t>(__builtin_ctz(chunk | 0x80000000u))),
        divisor_(chunk) {}

  // Plans rows [first, first + count) of the batch into plan[0, count), read
  // through `rows`, and returns the largest chunk count among them. Lanes
  // past `count` (up to the next multiple of kLanes) are planned as empty rows.
  template <std::size_t Rows, typename Int>
  std::uint32_t cut(RowPlan<Rows>& plan, RowReader<Int>& rows, std::size_t first, std::size_t count) const noexcept {
    if (power_of_two_) {
      return cut_lanes(plan, rows, first, count, [this](LaneU32 x) { return x >> shift_; },
                       [this](LaneU32 x) { return x & (chunk_ - 1); });
    }
    return cut_lanes(plan, rows, first, count, [this](LaneU32 x) { return divisor_.quotient(x); },
                     [this](LaneU32 x) { return x - divisor_.quotient(x) * chunk_; });
  }

 private:
  template <std::size_t Rows, typename Int, typename Quotient, typename Remainder>
  std::uint32_t cut_lanes(RowPlan<Rows>& plan, RowReader<Int>& rows, std::size_t first, std::size_t count,
                          Quotient quotient, Remainder remainder) const noexcept {
    LaneU32 most{};
    const auto plan_lanes = [&](std::size_t i, const RowLanes& row) {
      const LaneU32 chunks = cut_one(row, quotient, remainder, plan.base + i);
      store_lanes(plan.pos + i, row.pos);
      store_lanes(plan.chunks + i, chunks);
      most = larger(most, chunks);  // a row of a valid block has at most 2^31-1 chunks
    };
    std::size_t i = 0;
    for (; i + kLanes <= count; i += kLanes) plan_lanes(i, rows.at(first + i));
    if (i < count) plan_lanes(i, rows.tail(first + i, count - i));
    std::uint32_t largest = 0;
    for (std::size_t j = 0; j < kLanes; ++j) largest = most[j] > largest ? most[j] : largest;
    return largest;
  }

  // cut_row's steps (row_math.hpp) in lanes; stores base and returns the chunk counts.
  template <typename Quotient, typename Remainder>
  LaneU32 cut_one(const RowLanes& row, Quotient quotient, Remainder remainder, std::uint32_t* base) const noexcept {
    const LaneU32 misalignment = remainder(row.computed);
    const auto misaligned = reinterpret_cast<LaneU32>(misalignment != 0);  // all ones or zero
    const LaneU32 gap = (chunk_ - misalignment) & misaligned;
    // Signed compares (values below 2^31): SSE2 has no unsigned one, and GCC
    // turns an unsigned vector compare into scalar code there.
    const LaneU32 head = smaller(row.new_tokens, gap);
    store_lanes(base, row.pos + head - (chunk_ & misaligned));
    return (misaligned & 1u) + quotient(row.new_tokens - head + (chunk_ - 1));
  }

  std::uint32_t chunk_;
  bool power_of_two_;
  std::uint32_t shift_;
  LaneDivisor divisor_;
};

}  // namespace chunkmeta::detail::CHUNKMETA_KERNEL_ISA
