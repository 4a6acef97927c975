// White-box tests of the row pass's kernels (lib/src/write_rows.hpp): every
// kernel this CPU runs, not only the one fast() picks, writes what the
// reference writes, on operands at the edges of the 32-bit lane arithmetic
// (chunk sizes and sums near 2^31, non-powers of two through the
// double-precision quotient) and with buffers that are exact, roomy or short.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "chunkmeta/chunkmeta.hpp"
#include "write_rows.hpp"

namespace chunkmeta {
namespace {

using detail::Kernel;

std::vector<Kernel> runnable_kernels() {
  std::vector<Kernel> kernels;
  for (Kernel kernel : {Kernel::baseline, Kernel::avx2}) {
    if (detail::kernel_available(kernel)) kernels.push_back(kernel);
  }
  return kernels;
}

const char* name_of(Kernel kernel) { return kernel == Kernel::avx2 ? "avx2" : "baseline"; }

// Runs one kernel into buffers `slack` entries longer (or shorter) than the
// reference's output and checks the written prefix and the counts.
template <typename Int>
void expect_kernel_matches_reference(Kernel kernel, const Workload& workload, std::int64_t slack) {
  const auto expected = reference(workload);
  ASSERT_TRUE(expected.ok()) << workload;
  const ChunkMetadata& want = expected.value();
  const auto chunks = static_cast<std::int64_t>(want.seq_idx.size());
  std::vector<Int> computed(workload.num_computed_tokens.begin(), workload.num_computed_tokens.end());
  std::vector<Int> starts(workload.query_start_loc.begin(), workload.query_start_loc.end());
  const BasicWorkloadView<Int> view{workload.chunk_size, computed, starts};
  const auto cu_size = std::max<std::int64_t>(0, chunks + 1 + slack);
  const auto seq_size = std::max<std::int64_t>(0, chunks + slack);
  std::vector<std::int32_t> cu(static_cast<std::size_t>(cu_size), -7), seq(static_cast<std::size_t>(seq_size), -7);
  std::vector<std::int32_t> last(workload.num_computed_tokens.size(), -7);
  const detail::Destination out{cu.data(),
                                seq.data(),
                                last.data(),
                                std::max<std::int64_t>(0, std::min(cu_size - 1, seq_size)),
                                cu_size,
                                true};
  const detail::RowsWritten written = detail::write_rows_with(kernel, view, out);
  std::ostringstream where;
  where << name_of(kernel) << " kernel, slack " << slack << ", " << workload;
  ASSERT_EQ(written.chunks, chunks) << where.str();
  EXPECT_FALSE(written.out_of_domain) << where.str();
  EXPECT_EQ(written.overflowed, slack < 0 && chunks > 0) << where.str();
  EXPECT_EQ(last, want.last_chunk_indices) << where.str();
  if (slack < 0) return;  // short buffers: only the count and the overflow flag are promised
  cu.resize(static_cast<std::size_t>(chunks + 1));
  seq.resize(static_cast<std::size_t>(chunks));
  EXPECT_EQ(cu, want.cu_chunk_seqlen) << where.str();
  EXPECT_EQ(seq, want.seq_idx) << where.str();
}

void expect_all_kernels_match(const Workload& workload) {
  for (Kernel kernel : runnable_kernels()) {
    for (std::int64_t slack : {0, 1, 3, 16, 40, -1}) {
      expect_kernel_matches_reference<std::int32_t>(kernel, workload, slack);
      expect_kernel_matches_reference<std::int64_t>(kernel, workload, slack);
    }
  }
}

const std::vector<std::int64_t> kChunkSizes = {1,     2,     3,     5,          7,         64,        255,
                                               256,   257,   1000,  2048,       65535,     65537,     (1 << 30) - 1,
                                               1 << 30, (std::int64_t{1} << 31) - 3, (std::int64_t{1} << 31) - 1};

// Rows whose new tokens make at most ~40 chunks, with computed tokens and
// new tokens at the edges the lane arithmetic must get exactly right.
Workload edge_workload(std::int64_t chunk, std::mt19937_64& rng, int rows) {
  Workload w{chunk, {}, {0}};
  const std::int64_t most_new = std::min<std::int64_t>(kMaxValue, chunk * 40);
  for (int i = 0; i < rows; ++i) {
    const std::int64_t room_left = kMaxValue - w.query_start_loc.back();
    std::int64_t n = 0;
    switch (rng() % 6) {
      case 0: n = 0; break;
      case 1: n = std::min<std::int64_t>(chunk - 1 + static_cast<std::int64_t>(rng() % 3), most_new); break;
      case 2: n = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(most_new + 1)); break;
      case 3: n = std::min<std::int64_t>(chunk * static_cast<std::int64_t>(1 + rng() % 4), most_new); break;
      case 4: n = most_new; break;
      default: n = static_cast<std::int64_t>(rng() % 5); break;
    }
    n = std::min(n, room_left);
    std::int64_t c = 0;
    switch (rng() % 5) {
      case 0: c = 0; break;
      case 1: c = kMaxValue - n; break;  // the longest sequence the domain allows
      case 2: c = std::min<std::int64_t>(kMaxValue - n, chunk * static_cast<std::int64_t>(rng() % 3) + 1); break;
      case 3: c = std::min<std::int64_t>(kMaxValue - n, chunk - 1); break;
      default: c = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(kMaxValue - n + 1)); break;
    }
    w.num_computed_tokens.push_back(c);
    w.query_start_loc.push_back(w.query_start_loc.back() + n);
  }
  return w;
}

TEST(Kernels, EveryRunnableKernelWritesWhatTheReferenceWritesAtTheEdges) {
  std::mt19937_64 rng(20261204);
  for (std::int64_t chunk : kChunkSizes) {
    for (int rows : {0, 1, 2, 7, 8, 9, 33, 255, 256, 257, 600}) {
      for (int repeat = 0; repeat < 3; ++repeat) expect_all_kernels_match(edge_workload(chunk, rng, rows));
    }
  }
}

// Rows of at most `widest` chunks: with widest 2 or 4, 0-2 mostly (and with
// 4, about one row in 16 has 3 or 4): engines' short prompts at large chunk
// sizes, which the AVX2 kernel writes 4 rows per store; with widest 16, 0-8
// mostly and one row in 4 has 9-16: prompts at C=256, which it writes 8 rows
// at a time, transposed.
Workload narrow_workload(std::int64_t chunk, std::mt19937_64& rng, int rows, int widest) {
  Workload w{chunk, {}, {0}};
  for (int i = 0; i < rows; ++i) {
    int chunks = static_cast<int>(rng() % 7 < 1 ? 0 : 1 + rng() % 2);
    if (widest == 4 && rng() % 16 == 0) chunks = 3 + static_cast<int>(rng() % 2);
    if (widest == 16) chunks = static_cast<int>(rng() % 4 == 0 ? 9 + rng() % 8 : rng() % 9);
    const std::int64_t computed = rng() % 2 == 0 ? chunk * static_cast<std::int64_t>(rng() % 4)
                                                 : static_cast<std::int64_t>(rng() % 8192);
    const std::int64_t gap = (chunk - computed % chunk) % chunk;  // the head chunk's room, 0 when aligned
    // New tokens in (low, high] make `chunks` chunks; a misaligned row has at least its head chunk.
    std::int64_t low = -1;
    std::int64_t high = 0;
    if (gap > 0 && chunks <= 1) {
      high = gap;
    } else if (gap > 0) {
      low = gap + (chunks - 2) * chunk;
      high = low + chunk;
    } else if (chunks > 0) {
      low = (chunks - 1) * chunk;
      high = low + chunk;
    }
    const std::int64_t n = low + 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(high - low));
    w.num_computed_tokens.push_back(computed);
    w.query_start_loc.push_back(w.query_start_loc.back() + n);
  }
  return w;
}

TEST(Kernels, EveryRunnableKernelWritesWhatTheReferenceWritesForRowsOfAFewChunks) {
  std::mt19937_64 rng(2048);
  for (std::int64_t chunk : {1, 2, 3, 7, 64, 1000, 2048, 65537}) {
    for (int rows : {1, 3, 4, 5, 8, 12, 16, 17, 255, 256, 257, 600}) {
      for (int widest : {2, 4, 16}) expect_all_kernels_match(narrow_workload(chunk, rng, rows, widest));
    }
  }
}

TEST(Kernels, EveryRunnableKernelWritesWhatTheReferenceWritesOnRandomChunkSizes) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const std::int64_t chunk = 1 + static_cast<std::int64_t>(rng() % (trial % 2 == 0 ? 5000 : 0x7FFFFFFF));
    expect_all_kernels_match(edge_workload(chunk, rng, static_cast<int>(rng() % 300)));
  }
}

// Runs one kernel on `workload` as Int arrays (roomy buffers) and says
// whether it refused the values.
template <typename Int>
bool kernel_refuses(Kernel kernel, const Workload& workload) {
  std::vector<Int> computed(workload.num_computed_tokens.begin(), workload.num_computed_tokens.end());
  std::vector<Int> starts(workload.query_start_loc.begin(), workload.query_start_loc.end());
  const BasicWorkloadView<Int> view{workload.chunk_size, computed, starts};
  const std::size_t room = 64 * computed.size() + 64;
  std::vector<std::int32_t> cu(room + 1), seq(room), last(computed.size());
  const detail::Destination out{cu.data(), seq.data(), last.data(), static_cast<std::int64_t>(room),
                                static_cast<std::int64_t>(room + 1), true};
  return detail::write_rows_with(kernel, view, out).out_of_domain;
}

// The row pass checks the value rules (3-5) as it reads the rows, so fast()
// and fast_into() have no separate scan: every break, in every lane of a
// vector and every block, with 32- and 64-bit inputs, must be refused, and
// nothing else.
TEST(Kernels, EveryRunnableKernelRefusesEachValueRuleBreakWhereverItIs) {
  std::mt19937_64 rng(4);
  constexpr std::int64_t kHuge = std::int64_t{1} << 40;
  for (Kernel kernel : runnable_kernels()) {
    for (int rows : {0, 1, 7, 8, 9, 255, 256, 257, 600}) {
      Workload valid{(rows % 2 == 0) ? 64 : 7, {}, {static_cast<std::int64_t>(rng() % 100)}};
      for (int i = 0; i < rows; ++i) {
        valid.num_computed_tokens.push_back(static_cast<std::int64_t>(rng() % 1000));
        valid.query_start_loc.push_back(valid.query_start_loc.back() + static_cast<std::int64_t>(rng() % 300));
      }
      ASSERT_FALSE(validate(valid).has_value());
      EXPECT_FALSE(kernel_refuses<std::int32_t>(kernel, valid)) << name_of(kernel) << ", " << valid;
      EXPECT_FALSE(kernel_refuses<std::int64_t>(kernel, valid)) << name_of(kernel) << ", " << valid;
      std::vector<std::size_t> places = {0, static_cast<std::size_t>(rows / 2), static_cast<std::size_t>(rows)};
      for (std::size_t edge : {7, 8, 255, 256, 257}) places.push_back(std::min<std::size_t>(edge, static_cast<std::size_t>(rows)));
      for (std::size_t at : places) {
        std::vector<Workload> broken;
        auto with = [&](auto change) {
          Workload w = valid;
          change(w);
          broken.push_back(w);
        };
        with([&](Workload& w) { w.query_start_loc[at] = -1; });
        with([&](Workload& w) { w.query_start_loc[at] = kMaxValue + 1; });
        with([&](Workload& w) { w.query_start_loc[at] = std::numeric_limits<std::int64_t>::min(); });
        if (at > 0) with([&](Workload& w) { w.query_start_loc[at] = w.query_start_loc[at - 1] - 1; });
        if (at < static_cast<std::size_t>(rows)) {
          with([&](Workload& w) { w.num_computed_tokens[at] = -1; });
          with([&](Workload& w) { w.num_computed_tokens[at] = kHuge; });
          with([&](Workload& w) {
            w.num_computed_tokens[at] = kMaxValue - (w.query_start_loc[at + 1] - w.query_start_loc[at]) + 1;
          });
        }
        for (const Workload& w : broken) {
          ASSERT_TRUE(validate(w).has_value()) << w;
          EXPECT_TRUE(kernel_refuses<std::int64_t>(kernel, w)) << name_of(kernel) << ", int64, " << w;
          const bool fits_int32 =
              std::all_of(w.query_start_loc.begin(), w.query_start_loc.end(),
                          [](std::int64_t v) { return v == static_cast<std::int32_t>(v); }) &&
              std::all_of(w.num_computed_tokens.begin(), w.num_computed_tokens.end(),
                          [](std::int64_t v) { return v == static_cast<std::int32_t>(v); });
          if (fits_int32) {
            EXPECT_TRUE(kernel_refuses<std::int32_t>(kernel, w)) << name_of(kernel) << ", int32, " << w;
          }
        }
      }
    }
  }
}

TEST(Kernels, TheBaselineKernelIsAlwaysAvailableAndAnUnknownOneNever) {
  EXPECT_TRUE(detail::kernel_available(Kernel::baseline));
  EXPECT_FALSE(detail::kernel_available(static_cast<Kernel>(7)));
}

}  // namespace
}  // namespace chunkmeta
