// Randomized differential test with a generator independent of the property
// suite's (plain std::mt19937_64, fixed seed): every built-in implementation
// against the reference through the oracle, on 100,000+ valid workloads.
#include <gtest/gtest.h>

#include <random>

#include "chunkmeta/harness/implementations.hpp"
#include "chunkmeta/harness/json.hpp"

namespace chunkmeta {
namespace {

class WorkloadSource {
 public:
  explicit WorkloadSource(std::uint64_t seed) : rng_(seed) {}

  Workload next() {
    const std::int64_t chunk = chunk_size();
    const std::int64_t rows = pick({0, 1, 2, 3, 8, 32, 128, 1024}, {3, 20, 15, 10, 25, 15, 10, 2});
    Workload w{chunk, {}, {offset()}};
    for (std::int64_t i = 0; i < rows; ++i) {
      const std::int64_t computed = computed_tokens(chunk);
      const std::int64_t room = std::min(kMaxValue - computed, kMaxValue - w.query_start_loc.back());
      w.num_computed_tokens.push_back(computed);
      w.query_start_loc.push_back(w.query_start_loc.back() + std::min(room, new_tokens(chunk, computed)));
    }
    return w;
  }

 private:
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
    return hi <= lo ? lo : std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
  }
  std::int64_t pick(std::vector<std::int64_t> values, std::vector<double> weights) {
    std::discrete_distribution<std::size_t> d(weights.begin(), weights.end());
    return values[d(rng_)];
  }
  std::int64_t chunk_size() {
    switch (uniform(0, 4)) {
      case 0: return std::int64_t{1} << uniform(0, 12);
      case 1: return pick({8, 64, 256, 2048, 1024, 1056, 528}, {1, 1, 1, 1, 1, 1, 1});
      case 2: return uniform(1, 3000);
      case 3: return uniform(1 << 16, kMaxValue);
      default: return pick({1, 2, 3, 255, 257, kMaxValue}, {1, 1, 1, 1, 1, 1});
    }
  }
  std::int64_t offset() { return uniform(0, 9) == 0 ? uniform(0, 1 << 30) : 0; }
  std::int64_t computed_tokens(std::int64_t chunk) {
    switch (uniform(0, 5)) {
      case 0: return 0;
      case 1: return chunk * uniform(1, std::min<std::int64_t>(1 << 20, kMaxValue / chunk));
      case 2: return uniform(0, kMaxValue);
      case 3: return std::max<std::int64_t>(0, kMaxValue - uniform(0, 2 * chunk));
      default: return uniform(1, std::min(kMaxValue, 4 * chunk));
    }
  }
  std::int64_t new_tokens(std::int64_t chunk, std::int64_t computed) {
    const std::int64_t gap = (chunk - computed % chunk) % chunk;
    switch (uniform(0, 6)) {
      case 0: return 0;
      case 1: return std::max<std::int64_t>(0, gap + uniform(-1, 1));
      case 2: return gap + chunk * uniform(0, 4) + uniform(-1, 1) + 1;
      case 3: return uniform(0, std::min<std::int64_t>(kMaxValue, 32 * chunk));
      default: return uniform(0, std::min<std::int64_t>(16384, 64 * chunk));
    }
  }

  std::mt19937_64 rng_;
};

TEST(Differential, EveryBuiltinMatchesTheReferenceOnOneHundredThousandRandomWorkloads) {
  WorkloadSource source(0xC4A11CE);
  constexpr int kWorkloads = 100000;
  int chunks = 0;
  for (int i = 0; i < kWorkloads; ++i) {
    const Workload w = source.next();
    ASSERT_FALSE(validate(w).has_value()) << "the source made an invalid workload: " << *validate(w);
    for (const auto& impl : harness::builtin_implementations()) {
      if (impl.name == "reference") continue;
      if (auto finding = harness::check_implementation(impl, w)) {
        FAIL() << impl.name << " on workload #" << i << " " << harness::to_json(w).dump() << "\n" << *finding;
      }
    }
    chunks += static_cast<int>(output_sizes(view_of(w)).value().num_chunks());
  }
  std::cout << "  " << kWorkloads << " workloads, " << chunks << " chunks\n";
}

}  // namespace
}  // namespace chunkmeta
