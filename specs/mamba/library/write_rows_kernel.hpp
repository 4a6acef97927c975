// The row pass (see write_rows.hpp), a block of rows at a time: copy the
// block's inputs as 32-bit values, plan it in vector lanes (row_lanes.hpp),
// run the one serial step (the prefix sum of chunk counts, which also gives
// last_chunk_indices), then write in whole vector stores where the buffers
// have room; the entries past a row's own are scratch that the following
// rows overwrite.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "row_lanes.hpp"
#include "write_rows.hpp"

// No std:: templates in here (raw pointers, not spans): an instantiation built for AVX2 could
// be the copy the linker keeps for baseline callers too.

namespace chunkmeta::detail::CHUNKMETA_KERNEL_ISA {

inline constexpr std::size_t kBlockRows = 256;  // the plan lives on the stack: fast_into allocates nothing
inline constexpr std::size_t kNarrowLanes = 4;
#if defined(__AVX2__)
inline constexpr std::uint32_t kSummedChunks = 16;  // write_eights' rows
#else
inline constexpr std::uint32_t kSummedChunks = kNarrowLanes;
#endif

#if defined(__AVX2__)
// For each key of 4 rows (bit r: row r has 1 chunk, bit 4 + r: it has 2),
// the lane of [first starts of rows 0-3, second starts of rows 0-3] that
// each of 8 output slots takes, one byte per slot. Row r's lane is r or
// 4 + r, so `lane & 3` is the row. Slots past the rows' chunks take lane 0:
// scratch that the next rows overwrite.
struct PairSlots {
  std::uint64_t lanes[256];
};
consteval PairSlots make_pair_slots() {  // consteval: built by the compiler, no run-time code
  PairSlots slots{};
  for (unsigned key = 0; key < 256; ++key) {
    unsigned slot = 0;
    for (unsigned row = 0; row < 4; ++row) {
      const unsigned chunks = (key >> row & 1u) + 2 * (key >> (row + 4) & 1u);  // 3 never occurs
      for (unsigned j = 0; j < chunks && slot < 8; ++j, ++slot)
        slots.lanes[key] |= std::uint64_t{row + 4 * j} << (8 * slot);
    }
  }
  return slots;
}
inline constexpr PairSlots kPairSlots = make_pair_slots();
#endif

class RowWriter {
 public:
  explicit RowWriter(std::uint32_t chunk) noexcept : chunk_(chunk), group_step_(8 * chunk) {
    for (std::uint32_t j = 0; j < 8; ++j) offsets_[j / kLanes][j % kLanes] = j * chunk;  // wraps: scratch lanes only
  }

  // Chunk slots from k in whole stores (4 lanes, or groups of 8 slots):
  // max(pos, base + j*C) and the row. Real entries are at most 2^31-1, so
  // wrapping 32-bit arithmetic is exact for them.
  void write_narrow(std::int32_t* cu, std::int32_t* seq, std::int64_t k, std::uint32_t pos, std::uint32_t base,
                    std::int32_t row) const noexcept {
    const I32x4 start = I32x4{} + static_cast<std::int32_t>(pos);
    const auto at = reinterpret_cast<I32x4>(first_four() + base);
    store_lanes(cu + k, larger(at, start));
    store_lanes(seq + k, I32x4{} + row);
  }
  void write_groups(std::int32_t* cu, std::int32_t* seq, std::int64_t k, std::uint32_t pos, std::uint32_t base,
                    std::int32_t row, std::uint32_t groups) const noexcept {
    const LaneI32 start = LaneI32{} + static_cast<std::int32_t>(pos);
    const LaneI32 rows = LaneI32{} + row;
    LaneU32 at[kVectors];
    for (std::size_t h = 0; h < kVectors; ++h) at[h] = offsets_[h] + base;
    for (std::uint32_t v = 0; v < groups; ++v) {
      for (std::size_t h = 0; h < kVectors; ++h) {
        const auto value = reinterpret_cast<LaneI32>(at[h]);
        store_lanes(cu + k + 8 * v + kLanes * h, larger(value, start));
        store_lanes(seq + k + 8 * v + kLanes * h, rows);
        at[h] += group_step_;
      }
    }
  }

#if defined(__AVX2__)
  // Rows [i, i + 8) of a plan whose rows have at most 16 chunks each, with
  // one 8-slot store per row and array: the rows' first 8 chunk starts are
  // computed a slot at a time across the 8 rows, then transposed. A row of
  // more than 8 chunks first gets slots 8-15; the scratch that leaves past
  // its chunks is under the next rows' stores, which come after it.
  // `slot[r]` is row i + r's first slot; 16 slots from each are in the buffers.
  void write_eights(std::int32_t* cu, std::int32_t* seq, const std::int64_t* slot, const std::uint32_t* pos,
                    const std::uint32_t* base, const std::uint32_t* chunks, std::int32_t row) const noexcept {
    const auto start = load_lanes<LaneI32>(pos);
    const auto first_base = load_lanes<LaneU32>(base);
    unsigned long_rows = rows_above(chunks, 8);
    while (long_rows != 0) {
      const auto r = static_cast<std::size_t>(__builtin_ctz(long_rows));
      long_rows &= long_rows - 1;
      write_groups(cu, seq, slot[r] + 8, pos[r], base[r] + group_step_, row + static_cast<std::int32_t>(r), 1);
    }
    __m256i at[8];
    LaneU32 next = first_base;
#pragma GCC unroll 8
    for (std::size_t j = 0; j < 8; ++j, next += chunk_) {
      at[j] = reinterpret_cast<__m256i>(larger(as_signed(next), start));
    }
    transpose(at);
#pragma GCC unroll 8
    for (std::size_t r = 0; r < 8; ++r) {
      store_lanes(cu + slot[r], at[r]);
      store_lanes(seq + slot[r], LaneI32{} + (row + static_cast<std::int32_t>(r)));
    }
  }

  // Whether write_pairs can write rows [i, i + 8): each has at most 2 chunks.
  static bool fits_pairs(const std::uint32_t* chunks) noexcept { return rows_above(chunks, 2) == 0; }

  // Rows [i, i + 8) of a plan whose rows have at most 2 chunks each, in four
  // stores: each 4 rows' chunks fill at most 8 slots, so one permutation of
  // the 4 rows' first and second chunk starts lays them out, chosen by which
  // rows have 1 and which 2 chunks. k_low and k_high are the slots of rows
  // i and i + 4; the 8 slots from each must be inside the buffers.
  void write_pairs(std::int32_t* cu, std::int32_t* seq, std::int64_t k_low, std::int64_t k_high,
                   const std::uint32_t* pos, const std::uint32_t* base, const std::uint32_t* chunks,
                   std::int32_t row) const noexcept {
    const auto start = load_lanes<LaneI32>(pos);
    const auto at = load_lanes<LaneI32>(base);
    const LaneI32 first = larger(at, start);
    const LaneI32 second = at + static_cast<std::int32_t>(chunk_);
    const auto counts = load_lanes<LaneU32>(chunks);
    const unsigned ones = sign_bits(counts << 31);
    const unsigned twos = sign_bits(counts << 30);
    write_four(cu, seq, k_low, __builtin_shufflevector(first, second, 0, 1, 2, 3, 8, 9, 10, 11),
               (ones & 0xFu) | (twos & 0xFu) << 4, row);
    write_four(cu, seq, k_high, __builtin_shufflevector(first, second, 4, 5, 6, 7, 12, 13, 14, 15),
               ones >> 4 | (twos & 0xF0u), row + 4);
  }
#endif

  // Any length; writes exactly the row's own entries.
  void write_exact(std::int32_t* cu, std::int32_t* seq, std::int64_t k, std::uint32_t pos, std::uint32_t base,
                   std::uint32_t chunks, std::int32_t row) const noexcept {
    const auto start = static_cast<std::int32_t>(pos);
    for (std::uint32_t j = 0; j < chunks; ++j) {
      const auto at = static_cast<std::int32_t>(base + j * chunk_);
      cu[k + j] = at < start ? start : at;
    }
    for (std::uint32_t j = 0; j < chunks; ++j) seq[k + j] = row;
  }

 private:
  static constexpr std::size_t kVectors = 8 / kLanes;  // vectors per group of 8 slots

#if defined(__AVX2__)
  // v[j] lane r becomes v[r] lane j.
  static void transpose(__m256i* v) noexcept {
    __m256i pairs[8];
    for (std::size_t j = 0; j < 8; j += 2) {
      pairs[j] = _mm256_unpacklo_epi32(v[j], v[j + 1]);
      pairs[j + 1] = _mm256_unpackhi_epi32(v[j], v[j + 1]);
    }
    __m256i quads[8];
    for (std::size_t j = 0; j < 8; j += 4) {
      quads[j] = _mm256_unpacklo_epi64(pairs[j], pairs[j + 2]);
      quads[j + 1] = _mm256_unpackhi_epi64(pairs[j], pairs[j + 2]);
      quads[j + 2] = _mm256_unpacklo_epi64(pairs[j + 1], pairs[j + 3]);
      quads[j + 3] = _mm256_unpackhi_epi64(pairs[j + 1], pairs[j + 3]);
    }
    for (std::size_t r = 0; r < 4; ++r) {
      v[r] = _mm256_permute2x128_si256(quads[r], quads[r + 4], 0x20);
      v[r + 4] = _mm256_permute2x128_si256(quads[r], quads[r + 4], 0x31);
    }
  }

  static unsigned sign_bits(LaneU32 x) noexcept {
    return static_cast<unsigned>(_mm256_movemask_ps(reinterpret_cast<__m256>(x)));
  }
  // Bit r set where row r of the 8 has more than `most` chunks: bit 31 of
  // chunks + 2^31 - (most + 1) (a planned row has at most 2^31-1 chunks).
  static unsigned rows_above(const std::uint32_t* chunks, std::uint32_t most) noexcept {
    return sign_bits(load_lanes<LaneU32>(chunks) + (0x80000000u - (most + 1)));
  }
  // `starts` holds 4 rows' first chunk starts then their second ones; `key`
  // has bit r set for a row r of 1 chunk and bit 4 + r for one of 2.
  static void write_four(std::int32_t* cu, std::int32_t* seq, std::int64_t k, LaneI32 starts, unsigned key,
                         std::int32_t row) noexcept {
    // The intrinsic, not __builtin_convertvector: GCC 12 widens 8 bytes one at a time.
    const auto lane = reinterpret_cast<LaneI32>(
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(&kPairSlots.lanes[key]))));
    const __m256i laid_out =
        _mm256_permutevar8x32_epi32(reinterpret_cast<__m256i>(starts), reinterpret_cast<__m256i>(lane));
    store_lanes(cu + k, reinterpret_cast<LaneI32>(laid_out));
    store_lanes(seq + k, (lane & 3) + row);
  }
#endif

  U32x4 first_four() const noexcept {
#if defined(__AVX2__)
    return __builtin_shufflevector(offsets_[0], offsets_[0], 0, 1, 2, 3);
#else
    return offsets_[0];
#endif
  }

  std::uint32_t chunk_;
  std::uint32_t group_step_;
  LaneU32 offsets_[kVectors];  // j * C for slot j of a group
};

// For a block whose rows have at most kSummedChunks chunks each: the
// exclusive prefix sum of its chunk counts into `offset` (from the block's
// first chunk), and each row's last chunk, k + inclusive sum - 1, into
// `last` when it is not null. In 32-bit vector lanes: the block's sum is at
// most 16 x kBlockRows. Returns the block's chunks.
inline std::uint32_t sum_block_chunks(const std::uint32_t* chunks, std::size_t count, std::int64_t k,
                                      std::uint32_t* offset, std::int32_t* last) noexcept {
  const LaneU32 last_of_first = LaneU32{} + (static_cast<std::uint32_t>(k) - 1);  // int32 entries: low bits only
  LaneU32 carry{};
  for (std::size_t i = 0; i < count; i += kLanes) {
    const auto own = load_lanes<LaneU32>(chunks + i);  // lanes past count hold empty rows' zeros
    const LaneU32 local = prefix_sum(own);
    const LaneU32 inclusive = local + carry;
    store_lanes(offset + i, inclusive - own);
    if (last != nullptr) {
      const LaneU32 last_chunk = inclusive + last_of_first;
      if (i + kLanes <= count) {
        store_lanes(last + i, last_chunk);
      } else {
        for (std::size_t j = 0; i + j < count; ++j) last[i + j] = static_cast<std::int32_t>(last_chunk[j]);
      }
    }
    carry += LaneU32{} + local[kLanes - 1];  // not inclusive's: the carry's chain is one add per vector
  }
  return carry[0];
}

// Asks for the output lines about 1 KB ahead of slot `at` in both arrays,
// for writing. Without it, a batch whose outputs outgrow the L1 cache waits
// on each line's read-for-ownership when its first store reaches it: C=64
// rows ran at about half speed called back to back. Prefetching never
// faults, so the address may be past the buffers (it is formed as an
// integer, not a pointer).
inline void prefetch_for_write(std::int32_t* cu, std::int32_t* seq, std::int64_t at) noexcept {
  constexpr std::int64_t kAheadBytes = 1024;
  const auto ahead = static_cast<std::uintptr_t>(at * 4 + kAheadBytes);
  __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(cu) + ahead), 1);
  __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(seq) + ahead), 1);
}

// Where a summed block's rows go: row first + i's chunks start at slot
// k + offset[i] of cu and seq, which have `room` slots. Passed by value and
// read into locals: through a reference, each field would be reloaded after
// every store (the stores are memcpy, which may alias anything).
struct BlockSlots {
  std::int32_t* cu;
  std::int32_t* seq;
  std::int64_t room;
  std::int64_t k;
  const std::uint32_t* offset;
  std::int32_t first;
};

// How many whole groups of 8 rows (the last one padded with the plan's empty
// rows) have `slots` slots free from their last row's first slot: the
// offsets only grow, so those are a prefix of the block.
inline std::size_t groups_that_fit(const BlockSlots& to, std::size_t count, std::int64_t slots) noexcept {
  std::size_t groups = (count + 7) / 8;
  while (groups > 0 && to.k + to.offset[8 * groups - 1] + slots > to.room) --groups;
  return groups;
}

// Rows of at most 4 chunks: with AVX2, 8 at a time, 4 rows per store where
// the 8 have at most 2 chunks each (a block of such rows skips that check:
// it measured 5% faster) and a 4-lane store per row otherwise; without, a
// 4-lane store per row. Returns how many of the first rows it wrote.
template <typename Plan>
std::size_t write_narrow_rows(const RowWriter writer, const Plan& plan, std::size_t count,
                              std::uint32_t most_chunks, const BlockSlots to) noexcept {
  std::int32_t* const cu = to.cu;
  std::int32_t* const seq = to.seq;
  const std::int64_t k = to.k;
  const std::uint32_t* const offset = to.offset;
  const std::int32_t first = to.first;
#if defined(__AVX2__)
  const std::size_t groups = groups_that_fit(to, count, 8);
  const auto write_groups = [&](auto pairs_only) {
    for (std::size_t g = 0; g < groups; ++g) {
      const std::size_t i = 8 * g;
      if (pairs_only || writer.fits_pairs(plan.chunks + i)) {
        writer.write_pairs(cu, seq, k + offset[i], k + offset[i + 4], plan.pos + i, plan.base + i, plan.chunks + i,
                           first + static_cast<std::int32_t>(i));
      } else {
        for (std::size_t j = i; j < i + 8 && j < count; ++j)
          writer.write_narrow(cu, seq, k + offset[j], plan.pos[j], plan.base[j], first + static_cast<std::int32_t>(j));
      }
    }
  };
  if (most_chunks <= 2) {
    write_groups(std::true_type{});
  } else {
    write_groups(std::false_type{});
  }
  return 8 * groups < count ? 8 * groups : count;
#else
  (void)most_chunks;
  std::size_t narrow = count;
  while (narrow > 0 && k + offset[narrow - 1] + static_cast<std::int64_t>(kNarrowLanes) > to.room) --narrow;
  for (std::size_t i = 0; i < narrow; ++i)
    writer.write_narrow(cu, seq, k + offset[i], plan.pos[i], plan.base[i], first + static_cast<std::int32_t>(i));
  return narrow;
#endif
}

// Rows of 5 to kSummedChunks chunks: with AVX2, 8 at a time, transposed
// (write_eights). Returns how many of the first rows it wrote.
template <typename Plan>
std::size_t write_summed_rows(const RowWriter writer, const Plan& plan, std::size_t count,
                              const BlockSlots to) noexcept {
#if defined(__AVX2__)
  std::int32_t* const cu = to.cu;
  std::int32_t* const seq = to.seq;
  const std::int64_t k = to.k;
  const std::uint32_t* const offset = to.offset;
  const std::size_t groups = groups_that_fit(to, count, 16);
  for (std::size_t g = 0; g < groups; ++g) {
    const std::size_t i = 8 * g;
    std::int64_t slot[8];
    for (std::size_t r = 0; r < 8; ++r) slot[r] = k + offset[i + r];
    prefetch_for_write(cu, seq, slot[0]);
    writer.write_eights(cu, seq, slot, plan.pos + i, plan.base + i, plan.chunks + i,
                        to.first + static_cast<std::int32_t>(i));
  }
  return 8 * groups < count ? 8 * groups : count;
#else
  (void)writer, (void)plan, (void)count, (void)to;
  return 0;  // never called: kSummedChunks is kNarrowLanes
#endif
}

template <typename Int>
RowsWritten write_rows(const RowInputs<Int>& in, const Destination& out) noexcept {
  const auto chunk = static_cast<std::uint32_t>(in.chunk_size);
  const LaneChunk lanes(chunk);
  const RowWriter writer(chunk);
  const std::size_t rows = in.rows;
  RowReader<Int> reader(in.computed, in.starts);
  // Locals, not `out.` fields: the vector stores are memcpy, which may alias
  // anything, so fields read through a reference would be reloaded per store.
  std::int32_t* const cu = out.cu;
  std::int32_t* const seq = out.seq;
  std::int32_t* const last = out.last_fits ? out.last : nullptr;
  const std::int64_t room = out.room;
  RowPlan<kBlockRows> plan;
  alignas(32) std::uint32_t offset[kBlockRows];
  bool overflowed = false;
  std::int64_t k = 0;  // chunks before the block
  if (!reader.in_domain()) return {0, true, false};  // query_start_loc[0], the one value of an empty batch
  for (std::size_t first = 0; first < rows; first += kBlockRows) {
    const std::size_t count = rows - first < kBlockRows ? rows - first : kBlockRows;
    const std::uint32_t most_chunks = lanes.cut(plan, reader, first, count);
    // Nothing of a block is written before its values are known to be in
    // the domain: an out-of-domain value could make any chunk count.
    if (!reader.in_domain()) return {k, true, overflowed};

    // A block whose rows have few chunks (kSummedChunks) gets its offsets
    // and last chunks in vector lanes, then vector stores of several rows or
    // one row each, with no branch per row, for the rows it fits (the
    // offsets only grow, so those are a prefix of the block). The rest take
    // whole groups of 8 slots where the buffers have room, else exact
    // writes, one row at a time.
    const bool summed = most_chunks <= kSummedChunks;
    std::size_t narrow = 0;
    std::int64_t at = k;
    if (summed) {
      const std::uint32_t block_chunks =
          sum_block_chunks(plan.chunks, count, k, offset, last == nullptr ? nullptr : last + first);
      const BlockSlots slots{cu, seq, room, k, offset, static_cast<std::int32_t>(first)};
      narrow = most_chunks <= kNarrowLanes ? write_narrow_rows(writer, plan, count, most_chunks, slots)
                                           : write_summed_rows(writer, plan, count, slots);
      at = narrow < count ? k + offset[narrow] : k + block_chunks;
    }
    for (std::size_t i = narrow; i < count; ++i) {
      const std::uint32_t chunks = plan.chunks[i];
      const std::uint32_t groups = (chunks + 7) / 8;
      const auto row = static_cast<std::int32_t>(first + i);
      if (last != nullptr && !summed) last[first + i] = static_cast<std::int32_t>(at + chunks - 1);
      prefetch_for_write(cu, seq, at);
      if (at + 8 * std::int64_t{groups} <= room) {
        writer.write_groups(cu, seq, at, plan.pos[i], plan.base[i], row, groups);
      } else if (at + chunks <= room) {
        writer.write_exact(cu, seq, at, plan.pos[i], plan.base[i], chunks, row);
      } else {
        overflowed = true;  // keep counting: the error reports the size needed
      }
      at += chunks;
    }
    k = at;
  }
  const auto tokens = rows == 0 ? 0u : static_cast<std::uint32_t>(in.starts[rows] - in.starts[0]);
  if (k < out.cu_size && !overflowed) cu[k] = static_cast<std::int32_t>(tokens);
  return {k, false, overflowed};
}

}  // namespace chunkmeta::detail::CHUNKMETA_KERNEL_ISA
