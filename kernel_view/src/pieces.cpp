// The kernels that tile each row from its own start (SPEC Part 8): FLA's
// chunked state passing (chunk_indices' pairs and chunk_offsets' state
// entries) and the causal conv1d programs; both read as a walk through each
// row's pieces in order, the first difference said in tokens.
#include <algorithm>

#include "chunkmeta/kernel_view/kernel_view.hpp"
#include "words.hpp"

namespace chunkmeta::kernel_view {
namespace {

constexpr const char* kKernel = "kernel-adequate";

std::int64_t pieces_of(std::int64_t tokens, std::int64_t size) { return tokens <= 0 ? 0 : (tokens - 1) / size + 1; }

// The pieces of each row in order, (row, piece), compared with what the kernel
// is given: `at(k)` is the k-th unit of work, nullopt for one that does nothing
// (padding). `work` names one ("chunk", "program"), `unit` a row ("sequence").
struct Tiling {
  std::span<const std::int64_t> offsets;
  std::int64_t size;
  const char* work;
  const char* unit;

  std::string tokens_of(std::int64_t row, std::int64_t piece) const {  // "tokens 8..15"
    const std::int64_t length = offsets[row + 1] - offsets[row];
    return tokens_words(piece * size, std::min((piece + 1) * size, length));
  }
  // "tokens 8..15 are never run" (`here`: "are not run here, in order", where a later unit may still run them).
  std::string never_run(std::int64_t row, std::int64_t piece, bool here = false) const {
    const std::int64_t length = offsets[row + 1] - offsets[row];
    const bool one = std::min((piece + 1) * size, length) - piece * size == 1;
    return tokens_of(row, piece) + (one ? " is" : " are") + (here ? " not run here, in their order" : " never run");
  }

  // `at(k)`: the k-th unit's (row, piece), or nullopt for one that does nothing. A template, and words built
  // only for a fault: this runs on every answer the judge sees.
  template <typename At>
  std::optional<Fault> walk(std::size_t count, const At& at) const {
    const auto rows = static_cast<std::int64_t>(offsets.size()) - 1;
    std::int64_t row = 0, piece = 0;  // the next piece the kernel needs
    std::int64_t row_pieces = rows > 0 ? pieces_of(offsets[1] - offsets[0], size) : 0;
    const auto skip_empty = [&] {
      while (row < rows && piece >= row_pieces) {
        ++row;
        piece = 0;
        row_pieces = row < rows ? pieces_of(offsets[row + 1] - offsets[row], size) : 0;
      }
    };
    skip_empty();
    for (std::size_t k = 0; k < count; ++k) {
      const auto given = at(k);
      if (!given) continue;
      const auto [r, j] = *given;
      if (r == row && j == piece) {  // the one the kernel needs: the common case
        ++piece;
        skip_empty();
        continue;
      }
      const auto chunk = static_cast<std::int64_t>(k);
      const std::string named = std::string(work) + " " + std::to_string(k) + " is (" + std::to_string(r) + ", " +
                                std::to_string(j) + ")";
      if (r < 0 || r >= rows) {
        return Fault{kKernel, named + ": the batch has " + count_words(rows, unit), -1, chunk};
      }
      const std::int64_t has = pieces_of(offsets[r + 1] - offsets[r], size);
      if (j < 0 || j >= has) {
        return Fault{kKernel,
                     named + ": " + unit + " " + std::to_string(r) + " has " + count_words(has, "piece") + " of " +
                         std::to_string(size) + " tokens (" +
                         std::to_string(offsets[r + 1] - offsets[r]) + " tokens), so it runs none",
                     r, chunk};
      }
      if (row >= rows) {
        return Fault{kKernel,
                     named + ": it runs " + unit + " " + std::to_string(r) + "'s " + tokens_of(r, j) +
                         " again, after every token has run",
                     r, chunk};
      }
      const bool again = std::pair{r, j} < std::pair{row, piece};
      return Fault{kKernel,
                   named + ", " + unit + " " + std::to_string(r) + "'s " + tokens_of(r, j) + " from the state after " +
                       std::to_string(j * size) + " of its tokens, where the kernel needs " + unit + " " +
                       std::to_string(row) + "'s " + tokens_of(row, piece) + ": " +
                       (again ? unit + std::string(" ") + std::to_string(r) + "'s " + tokens_of(r, j) + " run twice"
                              : unit + std::string(" ") + std::to_string(row) + "'s " + never_run(row, piece, true)),
                   r, chunk};
    }
    if (row < rows) {
      return Fault{kKernel,
                   std::string(unit) + " " + std::to_string(row) + "'s " + never_run(row, piece) + ": the " + work +
                       "s end after " + std::to_string(count),
                   row, -1};
    }
    return std::nullopt;
  }
};

}  // namespace

std::optional<Fault> fla_pairs(std::span<const std::int64_t> cu_seqlens, std::int64_t chunk_size,
                               std::span<const std::int32_t> pairs) {
  if (pairs.size() % 2 != 0) {
    return Fault{kKernel, "chunk_indices has " + std::to_string(pairs.size()) + " entries: not pairs", -1, -1};
  }
  const Tiling tiling{cu_seqlens, chunk_size, "chunk", "sequence"};
  return tiling.walk(pairs.size() / 2, [pairs](std::size_t k) {
    return std::optional{std::pair<std::int64_t, std::int64_t>{pairs[2 * k], pairs[2 * k + 1]}};
  });
}

std::optional<Fault> fla_state_entries(std::span<const std::int64_t> cu_seqlens, std::int64_t chunk_size,
                                       std::span<const std::int32_t> chunk_offsets) {
  const std::size_t rows = cu_seqlens.size() - 1;
  if (chunk_offsets.size() != rows + 1) {
    return Fault{kKernel,
                 "chunk_offsets has " + std::to_string(chunk_offsets.size()) + " entries for " + std::to_string(rows) +
                     " sequences: the kernel reads one more than sequences",
                 -1, -1};
  }
  const std::int64_t entries = chunk_offsets[rows];
  struct Range {
    std::int64_t begin, end, row;
  };
  std::vector<Range> used;
  used.reserve(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    const std::int64_t pieces = pieces_of(cu_seqlens[i + 1] - cu_seqlens[i], chunk_size);
    if (pieces == 0) continue;
    const Range range{chunk_offsets[i], std::int64_t{chunk_offsets[i]} + pieces, static_cast<std::int64_t>(i)};
    if (range.begin < 0 || range.end > entries) {
      return Fault{kKernel,
                   "sequence " + std::to_string(i) + "'s " + std::to_string(pieces) + " piece states are entries " +
                       span_words(range.begin, range.end) + "; the state array has " + std::to_string(entries) +
                       " (chunk_offsets[" + std::to_string(rows) + "])",
                   range.row, -1};
    }
    used.push_back(range);
  }
  std::sort(used.begin(), used.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
  for (std::size_t u = 1; u < used.size(); ++u) {
    const Range& a = used[u - 1];
    const Range& b = used[u];
    if (b.begin < a.end) {
      const std::int64_t entry = b.begin;
      return Fault{kKernel,
                   "state entry " + std::to_string(entry) + " holds both the state after " +
                       std::to_string((entry - a.begin) * chunk_size) + " tokens of sequence " + std::to_string(a.row) +
                       " and after " + std::to_string((entry - b.begin) * chunk_size) + " tokens of sequence " +
                       std::to_string(b.row) + ": one of them reads the other's",
                   std::min(a.row, b.row), -1};
    }
  }
  return std::nullopt;
}

std::optional<Fault> conv1d_programs(std::span<const std::int64_t> query_start_loc, std::int64_t block_m,
                                     std::span<const std::int32_t> batch_ptr,
                                     std::span<const std::int32_t> token_chunk_offset_ptr) {
  if (batch_ptr.size() != token_chunk_offset_ptr.size()) {
    return Fault{kKernel,
                 "batch_ptr has " + std::to_string(batch_ptr.size()) + " entries and token_chunk_offset_ptr " +
                     std::to_string(token_chunk_offset_ptr.size()) + ": a program reads one of each",
                 -1, -1};
  }
  const Tiling tiling{query_start_loc, block_m, "program", "row"};
  return tiling.walk(batch_ptr.size(), [&](std::size_t p) -> std::optional<std::pair<std::int64_t, std::int64_t>> {
    if (batch_ptr[p] == -1) return std::nullopt;  // vLLM's PAD_SLOT_ID: the program does nothing
    return std::pair<std::int64_t, std::int64_t>{batch_ptr[p], token_chunk_offset_ptr[p]};
  });
}

}  // namespace chunkmeta::kernel_view
