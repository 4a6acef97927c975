// The prefix cache across steps (SPEC Part 8): writes of the scan's chunk-end
// states into blocks, the next step's read, and internal checkpoints. A block
// claims the state after the tokens it ends at; a write or a checkpoint is
// right when the state it stores is that one.
#include <algorithm>
#include <utility>
#include <vector>

#include "chunkmeta/kernel_view/kernel_view.hpp"
#include "words.hpp"

namespace chunkmeta::kernel_view {
namespace {

constexpr const char* kCache = "cache-adequate";

std::string block_words(std::int64_t row, std::int64_t block) {
  return "block (" + std::to_string(row) + ", " + std::to_string(block) + ")";
}

}  // namespace

State ChunkEnds::operator[](std::size_t chunk) const {
  if (scanned_ != nullptr) return scanned_->ends[chunk];
  // An adequate chunk of row r ending at packed token e holds the state after c_r + e - (q[r] - q[0]) tokens.
  const auto row = static_cast<std::size_t>(adequate_.seq_idx[chunk]);
  const auto& q = batch_.query_start_loc;
  return State{static_cast<std::int64_t>(row),
               batch_.computed_of(row) + adequate_.cu_chunk_seqlen[chunk + 1] - (q[row] - q[0])};
}

std::optional<Fault> cache_writes(const Batch& batch, std::int64_t block_size, const ChunkEnds& ends,
                                  const WritePlan& writes, std::span<const std::int32_t> read_blocks) {
  const std::size_t rows = batch.rows();
  const auto row_count = static_cast<std::int64_t>(rows);
  const auto chunks = static_cast<std::int64_t>(ends.size());
  // What a block of a row with tokens claims: the state after its last token, or the row's last.
  const auto claim = [&](std::int64_t row, std::int64_t block) {
    const auto r = static_cast<std::size_t>(row);
    return State{row, std::min((block + 1) * block_size, batch.computed_of(r) + batch.tokens_of(r))};
  };
  for (std::size_t r = 0; r < read_blocks.size() && r < rows; ++r) {
    const std::int64_t computed = batch.computed_of(r);
    if (computed == 0) continue;  // the zero state: nothing is read from the cache
    const std::int64_t holds = (computed - 1) / block_size;  // the block the step that computed them wrote last
    if (read_blocks[r] != holds) {
      const std::int64_t read = read_blocks[r];
      const std::string there = read < 0       ? "which does not exist"
                                : read < holds ? "which holds the state after " + std::to_string((read + 1) * block_size) +
                                                     " tokens of row " + std::to_string(r)
                                               : "which no step has written yet";
      return Fault{kCache,
                   "row " + std::to_string(r) + " reads its initial state from " +
                       block_words(static_cast<std::int64_t>(r), read) + ", " + there + "; it has computed " +
                       std::to_string(computed) + " tokens, held by " + block_words(static_cast<std::int64_t>(r), holds),
                   static_cast<std::int64_t>(r), -1};
    }
  }
  const std::size_t count = writes.rows.size();
  if (writes.blocks.size() != count || writes.chunks.size() != count) {
    return Fault{kCache, "the write plan's arrays differ in length (rows, blocks, chunks)", -1, -1};
  }
  // The cache after the writes in order: each (row, block) written, with the last write to it, in (row, block)
  // order. A plan in that order already (every plan of the engine's) is the cache itself, read in place; any
  // other is sorted once (stable: among writes to one block the last is the latest), never a node per write.
  bool ordered = true;
  for (std::size_t w = 0; w < count; ++w) {
    const std::int64_t row = writes.rows[w], block = writes.blocks[w], chunk = writes.chunks[w];
    const auto index = static_cast<std::int64_t>(w);
    if (row < 0 || row >= row_count || block < 0) {
      return Fault{kCache, "write " + std::to_string(w) + " stores into " + block_words(row, block) + ", which does not exist",
                   -1, index};
    }
    if (chunk < 0 || chunk >= chunks) {
      return Fault{kCache,
                   "write " + std::to_string(w) + " stores chunk " + std::to_string(chunk) + "'s state into " +
                       block_words(row, block) + "; the scan has " + std::to_string(chunks) + " chunks",
                   row, index};
    }
    if (w > 0 && std::pair{writes.rows[w - 1], writes.blocks[w - 1]} >= std::pair{writes.rows[w], writes.blocks[w]})
      ordered = false;
  }
  std::vector<std::size_t> cache;  // write indices, when the plan is not in order
  if (!ordered) {
    cache.resize(count);
    for (std::size_t w = 0; w < count; ++w) cache[w] = w;
    const auto key = [&](std::size_t w) { return std::pair{writes.rows[w], writes.blocks[w]}; };
    std::stable_sort(cache.begin(), cache.end(), [&](std::size_t x, std::size_t y) { return key(x) < key(y); });
    std::size_t kept = 0;
    for (const std::size_t w : cache) {
      if (kept > 0 && key(cache[kept - 1]) == key(w)) {
        cache[kept - 1] = w;
      } else {
        cache[kept++] = w;
      }
    }
    cache.resize(kept);
  }
  const std::size_t stored_count = ordered ? count : cache.size();
  const auto stored_at = [&](std::size_t i) { return ordered ? i : cache[i]; };
  for (std::size_t i = 0; i < stored_count; ++i) {
    const std::size_t write = stored_at(i);
    const std::int64_t row = writes.rows[write], block = writes.blocks[write];
    const auto r = static_cast<std::size_t>(row);
    const std::int64_t end = batch.computed_of(r) + batch.tokens_of(r);
    const State held = ends[static_cast<std::size_t>(writes.chunks[write])];
    // Every block below the row's end claims a state (one an earlier step wrote, when it lies below the
    // computed tokens: writing it again is right only with that state); a block past the end claims none.
    const bool claimed = block * block_size < end;
    if (!claimed || held != claim(row, block)) {
      const std::string claims = claimed ? "it claims " + to_string(claim(row, block))
                                         : "row " + std::to_string(row) + " does not reach it (" +
                                               std::to_string(end) + " tokens)";
      return Fault{kCache,
                   block_words(row, block) + " holds " + to_string(held) + " (write " + std::to_string(write) +
                       ", chunk " + std::to_string(writes.chunks[write]) + "); " + claims,
                   row, static_cast<std::int64_t>(write)};
    }
  }
  // Every block a row with tokens reaches is written: walked beside the cache, O(writes + rows).
  std::size_t next = 0;
  const auto row_of = [&](std::size_t i) { return static_cast<std::int64_t>(writes.rows[stored_at(i)]); };
  const auto block_of = [&](std::size_t i) { return static_cast<std::int64_t>(writes.blocks[stored_at(i)]); };
  for (std::size_t r = 0; r < rows; ++r) {
    const auto row = static_cast<std::int64_t>(r);
    while (next < stored_count && row_of(next) < row) ++next;
    if (batch.tokens_of(r) == 0) continue;
    const std::int64_t end = batch.computed_of(r) + batch.tokens_of(r);
    for (std::int64_t block = batch.computed_of(r) / block_size; block * block_size < end; ++block) {
      while (next < stored_count && row_of(next) == row && block_of(next) < block) ++next;
      if (next == stored_count || row_of(next) != row || block_of(next) != block) {
        return Fault{kCache,
                     block_words(row, block) + " is never written: it should hold " + to_string(claim(row, block)) +
                         ", which a later step resumes from",
                     row, -1};
      }
    }
  }
  return std::nullopt;
}

std::optional<Fault> checkpoints(const Batch& batch, std::span<const std::int64_t> offsets, const Scan& scanned,
                                 std::span<const std::int32_t> checkpoint_chunk_indices) {
  const std::size_t rows = batch.rows();
  if (checkpoint_chunk_indices.size() != rows) {
    return Fault{"checkpoint",
                 "checkpoint_chunk_indices has " + std::to_string(checkpoint_chunk_indices.size()) + " entries for " +
                     std::to_string(rows) + " rows",
                 -1, -1};
  }
  const auto chunks = static_cast<std::int64_t>(scanned.ends.size());
  for (std::size_t r = 0; r < rows; ++r) {
    const auto row = static_cast<std::int64_t>(r);
    const std::int64_t offset = r < offsets.size() ? offsets[r] : 0;
    const std::int64_t chunk = checkpoint_chunk_indices[r];
    if (offset == 0) {
      if (chunk != -1) {
        return Fault{"checkpoint",
                     "row " + std::to_string(r) + " has no checkpoint (offset 0), but chunk " + std::to_string(chunk) +
                         "'s state is published as one",
                     row, chunk};
      }
      continue;
    }
    const State wanted{row, batch.computed_of(r) + offset};
    if (chunk < 0 || chunk >= chunks) {
      return Fault{"checkpoint",
                   "row " + std::to_string(r) + "'s checkpoint is read from chunk " + std::to_string(chunk) +
                       ", which does not exist; it must be " + to_string(wanted),
                   row, chunk};
    }
    if (scanned.ends[chunk] != wanted) {
      return Fault{"checkpoint",
                   "row " + std::to_string(r) + "'s checkpoint (chunk " + std::to_string(chunk) + ") holds " +
                       to_string(scanned.ends[chunk]) + "; it claims " + to_string(wanted),
                   row, chunk};
    }
  }
  return std::nullopt;
}

}  // namespace chunkmeta::kernel_view
