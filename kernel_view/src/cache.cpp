// The prefix cache across steps (SPEC Part 8): writes of the scan's chunk-end
// states into blocks, the next step's read, and internal checkpoints. A block
// claims the state after the tokens it ends at; a write or a checkpoint is
// right when the state it stores is that one.
#include <algorithm>
#include <map>

#include "chunkmeta/kernel_view/kernel_view.hpp"
#include "words.hpp"

namespace chunkmeta::kernel_view {
namespace {

constexpr const char* kCache = "cache-adequate";

std::string block_words(std::int64_t row, std::int64_t block) {
  return "block (" + std::to_string(row) + ", " + std::to_string(block) + ")";
}

}  // namespace

std::optional<Fault> cache_writes(const Batch& batch, std::int64_t block_size, const Scan& scanned,
                                  const WritePlan& writes, std::span<const std::int32_t> read_blocks) {
  const std::size_t rows = batch.rows();
  const auto row_count = static_cast<std::int64_t>(rows);
  const auto chunks = static_cast<std::int64_t>(scanned.ends.size());
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
  // The cache after the writes in order: (row, block) -> (the state stored, by which write).
  std::map<std::pair<std::int64_t, std::int64_t>, std::pair<State, std::int64_t>> cache;
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
    cache[{row, block}] = {scanned.ends[chunk], index};
  }
  for (const auto& [where, stored] : cache) {
    const auto [row, block] = where;
    const auto r = static_cast<std::size_t>(row);
    const std::int64_t end = batch.computed_of(r) + batch.tokens_of(r);
    // Every block below the row's end claims a state (one an earlier step wrote, when it lies below the
    // computed tokens: writing it again is right only with that state); a block past the end claims none.
    const bool claimed = block * block_size < end;
    if (!claimed || stored.first != claim(row, block)) {
      const std::string claims = claimed ? "it claims " + to_string(claim(row, block))
                                         : "row " + std::to_string(row) + " does not reach it (" + std::to_string(end) +
                                               " tokens)";
      return Fault{kCache,
                   block_words(row, block) + " holds " + to_string(stored.first) + " (write " +
                       std::to_string(stored.second) + ", chunk " + std::to_string(writes.chunks[stored.second]) + "); " + claims,
                   row, stored.second};
    }
  }
  for (std::size_t r = 0; r < rows; ++r) {
    if (batch.tokens_of(r) == 0) continue;
    const auto row = static_cast<std::int64_t>(r);
    const std::int64_t end = batch.computed_of(r) + batch.tokens_of(r);
    for (std::int64_t block = batch.computed_of(r) / block_size; block * block_size < end; ++block) {
      const auto at = cache.find({row, block});
      if (at == cache.end()) {
        return Fault{kCache,
                     block_words(row, block) + " is never written: it should hold " + to_string(claim(row, block)) +
                         ", which a later step resumes from",
                     row, -1};
      }
      // O(writes): a right plan writes each of these blocks, and the first gap ends the walk.
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
