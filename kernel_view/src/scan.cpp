// Mamba-2's chunked scan on states that name their own position (SPEC Part 8),
// the block ends the prefix cache needs, and mamba_ssm's chunk-indices form
// read into the scan's three arrays.
#include <algorithm>
#include <sstream>
#include <string_view>

#include "chunkmeta/kernel_view/kernel_view.hpp"
#include "words.hpp"

namespace chunkmeta::kernel_view {

std::string count_words(std::int64_t count, const std::string& noun) {
  if (count == 1) return "1 " + noun;
  const bool y = noun.size() > 1 && noun.back() == 'y' && std::string_view("aeiou").find(noun[noun.size() - 2]) == std::string_view::npos;
  return std::to_string(count) + " " + (y ? noun.substr(0, noun.size() - 1) + "ies" : noun + "s");
}

std::string to_string(State state, const char* unit) {
  if (state.bad()) return "a BAD state";
  return "the state after " + count_words(state.tokens, "token") + " of " + unit + " " + std::to_string(state.row);
}

std::string to_string(const Fault& fault) { return fault.rule + ": " + fault.what; }

namespace {

constexpr const char* kKernel = "kernel-adequate";

// The row whose packed span [q[r] - q[0], q[r+1] - q[0]) holds packed token t (rows without tokens hold none).
std::int64_t row_of_token(const Batch& batch, std::int64_t t) {
  const auto& q = batch.query_start_loc;
  const auto at = std::upper_bound(q.begin(), q.end(), t + q.front());
  return std::clamp<std::int64_t>(at - q.begin() - 1, 0, static_cast<std::int64_t>(batch.rows()) - 1);
}

// row_of_token for tokens asked mostly in packed order (a piece list): the last answer's row, walked
// forward a few rows, else searched.
class RowOfToken {
 public:
  explicit RowOfToken(const Batch& batch) : batch_(batch) {}
  std::int64_t operator()(std::int64_t t) {
    const auto& q = batch_.query_start_loc;
    const auto rows = static_cast<std::int64_t>(batch_.rows());
    const std::int64_t at = t + q.front();
    for (int step = 0; step < 4 && row_ < rows; ++step) {
      const auto r = static_cast<std::size_t>(row_);
      if (q[r] > at) break;
      if (row_ + 1 >= rows || q[r + 1] > at) return row_;  // the last row starting at or before t
      ++row_;
    }
    row_ = row_of_token(batch_, t);
    return row_;
  }

 private:
  const Batch& batch_;
  std::int64_t row_ = 0;
};

}  // namespace

Scan scan(const Batch& batch, std::int64_t chunk_size, const ThreeArrays& chunks) {
  Scan out;
  const auto& cu = chunks.cu_chunk_seqlen;
  const auto& seq_idx = chunks.seq_idx;
  const auto& q = batch.query_start_loc;
  const std::size_t rows = batch.rows();
  const std::size_t count = seq_idx.size();
  const auto fail = [&out](std::string what, std::int64_t row, std::int64_t chunk) {
    out.fault = Fault{kKernel, std::move(what), row, chunk};
    return out;
  };
  if (cu.size() != count + 1) {
    return fail("cu_chunk_seqlen has " + count_words(static_cast<std::int64_t>(cu.size()), "entry") + " for " +
                    count_words(static_cast<std::int64_t>(count), "chunk") + " (seq_idx): a kernel reads one boundary more than chunks",
                -1, -1);
  }
  if (chunks.last_chunk_indices.size() != rows) {
    return fail("last_chunk_indices has " + count_words(static_cast<std::int64_t>(chunks.last_chunk_indices.size()), "entry") +
                    " for " + count_words(static_cast<std::int64_t>(rows), "row") + ": a row's final state is read from none",
                -1, -1);
  }
  const std::int64_t total = rows == 0 ? 0 : q[rows] - q[0];
  if (cu[0] != 0) {
    return fail("the scan starts at packed token " + std::to_string(cu[0]) +
                    (cu[0] > 0 ? ": packed " + tokens_words(0, cu[0]) + (cu[0] == 1 ? " is" : " are") + " never run" : ", before the batch"),
                -1, -1);
  }
  out.ends.reserve(count);
  for (std::size_t k = 0; k < count; ++k) {
    const auto chunk = static_cast<std::int64_t>(k);
    const std::int64_t start = cu[k], end = cu[k + 1];
    if (end < start) {
      return fail("chunk " + std::to_string(k) + " ends at packed token " + std::to_string(end) + ", before it starts at " +
                      std::to_string(start) + ": the scan runs tokens out of order",
                  -1, chunk);
    }
    if (end - start > chunk_size) {
      return fail("chunk " + std::to_string(k) + " holds " + std::to_string(end - start) +
                      " tokens, more than chunk_size " + std::to_string(chunk_size) + ": the kernel runs " +
                      std::to_string(chunk_size) + " of them",
                  -1, chunk);
    }
    const std::int64_t row = seq_idx[k];
    if (row < 0 || row >= static_cast<std::int64_t>(rows)) {
      return fail("chunk " + std::to_string(k) + " runs as row " + std::to_string(row) + "; the batch has " +
                      count_words(static_cast<std::int64_t>(rows), "row"),
                  -1, chunk);
    }
    const State initial{row, batch.computed_of(static_cast<std::size_t>(row))};
    const State from = k > 0 && seq_idx[k - 1] == seq_idx[k] ? out.ends.back() : initial;
    if (start == end) {  // runs no token: the state passes through
      out.ends.push_back(from);
      continue;
    }
    const std::int64_t row_start = q[row] - q[0], row_end = q[row + 1] - q[0];
    if (start < row_start || end > row_end || start >= total) {
      const std::int64_t stray = start < row_start ? start : std::max(start, row_end);
      std::string whose = stray >= total ? "past the batch's " + std::to_string(total) + " tokens"
                                         : "row " + std::to_string(row_of_token(batch, stray)) + "'s";
      return fail("chunk " + std::to_string(k) + " runs packed " + tokens_words(start, end) + " as row " +
                      std::to_string(row) + ", but packed token " + std::to_string(stray) + " is " + whose +
                      ": its state is BAD",
                  row, chunk);
    }
    const std::int64_t first = batch.computed_of(static_cast<std::size_t>(row)) + start - row_start;
    if (from != State{row, first}) {
      return fail("chunk " + std::to_string(k) + " runs row " + std::to_string(row) + "'s " +
                      tokens_words(first, first + end - start) + " from " + to_string(from) + ": its state is BAD",
                  row, chunk);
    }
    out.ends.push_back(State{row, first + end - start});
  }
  if (cu[count] != total) {
    return fail(cu[count] < total ? "the chunks end at packed token " + std::to_string(cu[count]) +
                                        ": packed " + tokens_words(cu[count], total) + (total - cu[count] == 1 ? " is" : " are") + " never run"
                                  : "the chunks run to packed token " + std::to_string(cu[count]) + "; the batch has " +
                                        std::to_string(total),
                -1, static_cast<std::int64_t>(count) - 1);
  }
  for (std::size_t r = 0; r < rows; ++r) {
    const auto row = static_cast<std::int64_t>(r);
    const std::int64_t last = chunks.last_chunk_indices[r];
    const State want{row, batch.computed_of(r) + batch.tokens_of(r)};
    const bool exists = last >= 0 && last < static_cast<std::int64_t>(count);
    if (batch.tokens_of(r) == 0) {
      // No kernel needs this row's final state, but the engine gathers states[last_chunk_indices] for every row:
      // an index past the chunks reads outside them (-1, Part 1's row 0 and the grid's "none", reads no chunk).
      if (!exists && last != -1) {
        return fail("row " + std::to_string(r) + " has no tokens, and its final state is gathered from chunk " +
                        std::to_string(last) + ", which does not exist (" + count_words(static_cast<std::int64_t>(count), "chunk") + ")",
                    row, last);
      }
      continue;
    }
    if (!exists) {
      return fail("row " + std::to_string(r) + "'s final state is read from chunk " + std::to_string(last) +
                      ", which does not exist (" + count_words(static_cast<std::int64_t>(count), "chunk") + "); it must be " + to_string(want),
                  row, last);
    }
    if (out.ends[last] != want) {
      return fail("row " + std::to_string(r) + "'s final state is read from chunk " + std::to_string(last) + ", " +
                      to_string(out.ends[last]) + "; it must be " + to_string(want),
                  row, last);
    }
  }
  return out;
}

std::optional<Fault> cache_adequate(const Batch& batch, std::int64_t block_size, const ThreeArrays& chunks,
                                    const Scan& scanned, bool for_every_multiple) {
  const std::string size_words = for_every_multiple ? "block size chunk_size = " + std::to_string(block_size) +
                                                          ", and so any multiple of it"
                                                    : "block size " + std::to_string(block_size);
  // The next block end each row needs a chunk to end at, walked with the chunks in order.
  const std::size_t rows = batch.rows();
  std::vector<std::int64_t> needed(rows);
  for (std::size_t r = 0; r < rows; ++r) needed[r] = (batch.computed_of(r) / block_size + 1) * block_size;
  const auto missing = [&](std::size_t r, std::int64_t chunk) {
    const std::int64_t end = needed[r];
    std::string what = "no chunk of row " + std::to_string(r) + " ends after " + std::to_string(end) +
                       " tokens, where its block " + std::to_string(end / block_size - 1) + " ends (" + size_words +
                       "): the state that block claims is never computed";
    if (chunk >= 0) {
      const State from = chunk > 0 && chunks.seq_idx[chunk - 1] == static_cast<std::int32_t>(r)
                             ? scanned.ends[chunk - 1]
                             : State{static_cast<std::int64_t>(r), batch.computed_of(r)};
      what += "; chunk " + std::to_string(chunk) + " runs it from " + std::to_string(from.tokens) + " to " +
              std::to_string(scanned.ends[chunk].tokens) + " tokens";
    }
    return Fault{"cache-adequate", std::move(what), static_cast<std::int64_t>(r), chunk};
  };
  for (std::size_t k = 0; k < scanned.ends.size(); ++k) {
    const State end = scanned.ends[k];
    if (end.bad()) continue;
    const auto r = static_cast<std::size_t>(end.row);
    const std::int64_t stop = batch.computed_of(r) + batch.tokens_of(r);
    if (needed[r] >= stop) continue;
    if (end.tokens == needed[r]) {
      needed[r] += block_size;
    } else if (end.tokens > needed[r]) {
      return missing(r, static_cast<std::int64_t>(k));
    }
  }
  for (std::size_t r = 0; r < rows; ++r) {
    if (needed[r] < batch.computed_of(r) + batch.tokens_of(r)) return missing(r, -1);
  }
  return std::nullopt;
}

std::optional<Fault> read_chunk_indices(const Batch& batch, std::int64_t chunk_size, const ChunkIndices& pieces,
                                        ThreeArrayStorage& storage) {
  const std::size_t count = pieces.chunk_indices.size();
  const auto fail = [](std::string what, std::int64_t chunk) { return Fault{kKernel, std::move(what), -1, chunk}; };
  if (pieces.chunk_offsets.size() != count) {
    return fail("chunk_offsets has " + std::to_string(pieces.chunk_offsets.size()) + " entries for " +
                    std::to_string(count) + " pieces (chunk_indices)",
                -1);
  }
  const std::size_t rows = batch.rows();
  const std::int64_t total = rows == 0 ? 0 : batch.query_start_loc[rows] - batch.query_start_loc[0];
  storage = {};
  storage.cu_chunk_seqlen.reserve(count + 1);
  storage.seq_idx.reserve(count);
  storage.last_chunk_indices.assign(rows, -1);
  RowOfToken row_of(batch);
  for (std::size_t k = 0; k < count; ++k) {
    const std::int64_t offset = pieces.chunk_offsets[k];
    if (offset < 0 || offset >= chunk_size) {
      return fail("piece " + std::to_string(k) + " starts " + std::to_string(offset) + " tokens into physical chunk " +
                      std::to_string(pieces.chunk_indices[k]) + "; a chunk has " + std::to_string(chunk_size),
                  static_cast<std::int64_t>(k));
    }
    const std::int64_t start = std::int64_t{pieces.chunk_indices[k]} * chunk_size + offset;
    // The kernel runs a piece as the row its start lies in, and ends it at the next piece's start.
    const std::int64_t row = rows == 0 ? -1 : row_of(std::clamp<std::int64_t>(start, 0, std::max<std::int64_t>(total - 1, 0)));
    storage.cu_chunk_seqlen.push_back(static_cast<std::int32_t>(std::clamp<std::int64_t>(start, INT32_MIN, INT32_MAX)));
    storage.seq_idx.push_back(static_cast<std::int32_t>(row));
    if (row >= 0) storage.last_chunk_indices[row] = static_cast<std::int32_t>(k);
  }
  storage.cu_chunk_seqlen.push_back(static_cast<std::int32_t>(total));
  return std::nullopt;
}

}  // namespace chunkmeta::kernel_view
