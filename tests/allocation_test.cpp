// fast_into must not touch the heap. This binary replaces the global
// operator new to count allocations, and checks the count around the calls.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "chunkmeta/chunkmeta.hpp"

namespace {
std::atomic<long> allocations{0};
std::atomic<std::size_t> largest_allocation{0};
}  // namespace

// The replacements below pair malloc with free; GCC cannot see that through
// inlining and warns about a mismatch that is not there.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  std::size_t seen = largest_allocation.load(std::memory_order_relaxed);
  while (size > seen && !largest_allocation.compare_exchange_weak(seen, size, std::memory_order_relaxed)) {
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace chunkmeta {
namespace {

long allocations_during(const auto& action) {
  const long before = allocations.load();
  action();
  return allocations.load() - before;
}

TEST(FastInto, AllocatesNothingOnValidOrInvalidInput) {
  // Engine-shaped int32 input: 256 unaligned rows, chunk size 256.
  std::vector<std::int32_t> computed, starts{0};
  for (int i = 0; i < 256; ++i) {
    computed.push_back(1 + (i * 37) % 8191);
    starts.push_back(starts.back() + 768 + (i * 131) % 1536);
  }
  const WorkloadView32 view{256, computed, starts};
  const auto sizes = output_sizes(view).value();
  std::vector<std::int32_t> cu(sizes.cu_chunk_seqlen), seq(sizes.seq_idx), last(sizes.last_chunk_indices);
  const OutputBuffers out{cu, seq, last};

  EXPECT_EQ(allocations_during([&] { ASSERT_TRUE(fast_into(view, out).ok()); }), 0);

  std::vector<std::int32_t> short_seq(1);
  EXPECT_EQ(allocations_during([&] { ASSERT_FALSE(fast_into(view, {cu, short_seq, last}).ok()); }), 0);

  const std::vector<std::int32_t> decreasing = {0, 5, 3};
  const std::vector<std::int32_t> two_rows = {0, 0};
  EXPECT_EQ(allocations_during([&] { ASSERT_FALSE(fast_into(WorkloadView32{8, two_rows, decreasing}, out).ok()); }), 0);
}

// A long token span sizes fast()'s quick bound at tens of millions of
// entries; a row that breaks the sequence rule must be found before any of
// that is allocated (the robustness fuzz target ran at ~900 exec/s while it was not).
TEST(Fast, RejectsALongSpanThatBreaksTheSequenceRuleBeforeAllocatingItsOutput) {
  const std::int64_t span = std::int64_t{1} << 25;  // 2^25 tokens, chunk size 1: a 128 MB bound per array
  const Workload w{1, {kMaxValue - 5}, {0, span}};
  largest_allocation.store(0);
  const auto result = fast(w);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::sequence_too_long);
  EXPECT_LT(largest_allocation.load(), std::size_t{1} << 20) << "bytes in fast()'s largest allocation";
}

TEST(FastInto, CounterSeesTheReturningEntryPointAllocate) {
  // Guards the test above: the counter must see the three output vectors.
  const Workload w{64, {0, 70}, {0, 130, 230}};
  EXPECT_GE(allocations_during([&] { ASSERT_TRUE(fast(w).ok()); }), 3);
}

}  // namespace
}  // namespace chunkmeta
