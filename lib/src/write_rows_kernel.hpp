// The row pass (see write_rows.hpp), a block of rows at a time: copy the
// block's inputs as 32-bit values, plan it in vector lanes (row_lanes.hpp),
// run the one serial step (the prefix sum of chunk counts, which also gives
// last_chunk_indices), then write in whole vector stores where the buffers
// have room; the entries past a row's own are scratch that the following
// rows overwrite.
#pragma once

#include <cstddef>
#include <cstdint>

#include "row_lanes.hpp"
#include "write_rows.hpp"

// No std:: templates in here (raw pointers, not spans): an instantiation built for AVX2 could
// be the copy the linker keeps for baseline callers too.

namespace chunkmeta::detail::CHUNKMETA_KERNEL_ISA {

inline constexpr std::size_t kBlockRows = 256;  // the plan lives on the stack: fast_into allocates nothing
inline constexpr std::size_t kNarrowLanes = 4;

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
    store_lanes(cu + k, select(at < start, start, at));
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
        store_lanes(cu + k + 8 * v + kLanes * h, select(value < start, start, value));
        store_lanes(seq + k + 8 * v + kLanes * h, rows);
        at[h] += group_step_;
      }
    }
  }

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

template <typename Int>
RowsWritten write_rows(const RowInputs<Int>& in, const Destination& out) noexcept {
  const auto chunk = static_cast<std::uint32_t>(in.chunk_size);
  const LaneChunk lanes(chunk);
  const RowWriter writer(chunk);
  const std::size_t rows = in.rows;
  const Int* const computed = in.computed;
  const Int* const starts = in.starts;
  // Locals, not `out.` fields: the vector stores are memcpy, which may alias
  // anything, so fields read through a reference would be reloaded per store.
  std::int32_t* const cu = out.cu;
  std::int32_t* const seq = out.seq;
  std::int32_t* const last = out.last_fits ? out.last : nullptr;
  const std::int64_t room = out.room;
  RowPlan<kBlockRows> plan;
  alignas(32) std::int64_t first_chunk[kBlockRows];
  std::uint32_t sequence_bits = 0;  // OR of every c_i + n_i (< 2^32): bit 31 set iff one is too long
  bool overflowed = false;
  std::int64_t k = 0;  // chunks so far
  for (std::size_t first = 0; first < rows; first += kBlockRows) {
    const std::size_t count = rows - first < kBlockRows ? rows - first : kBlockRows;
    const std::size_t padded = (count + kLanes - 1) / kLanes * kLanes;
    for (std::size_t i = 0; i < count; ++i) {
      plan.computed[i] = static_cast<std::uint32_t>(computed[first + i]);
      plan.new_tokens[i] = static_cast<std::uint32_t>(starts[first + i + 1] - starts[first + i]);
      plan.pos[i] = static_cast<std::uint32_t>(starts[first + i] - starts[0]);
      sequence_bits |= plan.computed[i] + plan.new_tokens[i];
    }
    for (std::size_t i = count; i < padded; ++i) plan.computed[i] = plan.new_tokens[i] = plan.pos[i] = 0;
    const std::uint32_t most_chunks = lanes.cut(plan, padded);

    std::int64_t next = k;  // a local the compiler keeps in a register (k is read after the loop)
    for (std::size_t i = 0; i < count; ++i) {
      first_chunk[i] = next;
      next += plan.chunks[i];
    }
    k = next;
    if (last != nullptr) {
      for (std::size_t i = 0; i < count; ++i)
        last[first + i] = static_cast<std::int32_t>(first_chunk[i] + plan.chunks[i] - 1);
    }

    // A block whose rows have at most 4 chunks each takes one 4-lane store
    // per row and array, with no branch per row, for the rows it fits
    // (first_chunk only grows, so those are a prefix of the block). The rest
    // take whole groups of 8 slots where the buffers have room, else exact
    // writes.
    std::size_t narrow = 0;
    if (most_chunks <= kNarrowLanes) {
      narrow = count;
      while (narrow > 0 && first_chunk[narrow - 1] + static_cast<std::int64_t>(kNarrowLanes) > room) --narrow;
      for (std::size_t i = 0; i < narrow; ++i)
        writer.write_narrow(cu, seq, first_chunk[i], plan.pos[i], plan.base[i], static_cast<std::int32_t>(first + i));
    }
    for (std::size_t i = narrow; i < count; ++i) {
      const std::int64_t at = first_chunk[i];
      const std::uint32_t chunks = plan.chunks[i];
      const std::uint32_t groups = (chunks + 7) / 8;
      const auto row = static_cast<std::int32_t>(first + i);
      if (at + 8 * std::int64_t{groups} <= room) {
        writer.write_groups(cu, seq, at, plan.pos[i], plan.base[i], row, groups);
      } else if (at + chunks <= room) {
        writer.write_exact(cu, seq, at, plan.pos[i], plan.base[i], chunks, row);
      } else {
        overflowed = true;  // keep counting: the error reports the size needed
      }
    }
  }
  const auto tokens = rows == 0 ? 0u : static_cast<std::uint32_t>(starts[rows] - starts[0]);
  if (k < out.cu_size && !overflowed) cu[k] = static_cast<std::int32_t>(tokens);
  return {k, (sequence_bits >> 31) != 0, overflowed};
}

}  // namespace chunkmeta::detail::CHUNKMETA_KERNEL_ISA
