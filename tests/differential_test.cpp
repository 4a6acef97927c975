// Randomized differential test with a generator independent of the property
// suite's (plain std::mt19937_64, fixed seed): every built-in implementation
// of every spec against its reference through the oracle, on 100,000+ valid
// workloads each.
#include <gtest/gtest.h>

#include <random>

#include "chunkmeta/chunkmeta.hpp"
#include "chunkmeta/harness/json.hpp"
#include "fla/fla_spec.hpp"
#include "mamba/mamba_spec.hpp"

namespace chunkmeta {
namespace {

using harness::Workload;

class WorkloadSource {
 public:
  explicit WorkloadSource(std::uint64_t seed) : rng_(seed) {}

  // A Mamba workload; with `computed` false, one without computed tokens
  // (FLA's: cu_seqlens is query_start_loc) and of either offsets dtype.
  Workload next(bool computed_tokens_too = true) {
    const std::int64_t chunk = chunk_size();
    const std::int64_t rows = pick({0, 1, 2, 3, 8, 32, 128, 1024}, {3, 20, 15, 10, 25, 15, 10, 2});
    Workload w{chunk, {}, {offset()}, harness::Dtype::int32};
    if (!computed_tokens_too && uniform(0, 1) == 1) w.dtype = harness::Dtype::int64;
    for (std::int64_t i = 0; i < rows; ++i) {
      const std::int64_t computed = computed_tokens_too ? computed_tokens(chunk) : 0;
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

// `source`'s workloads through every built-in implementation of `spec` but the reference.
void expect_builtins_match_reference(const harness::Spec& spec, WorkloadSource& source, bool computed_tokens) {
  constexpr int kWorkloads = 100000;
  std::int64_t chunks = 0;
  for (int i = 0; i < kWorkloads; ++i) {
    const Workload w = source.next(computed_tokens);
    ASSERT_FALSE(spec.validate(w).has_value()) << "the source made an invalid workload: " << *spec.validate(w);
    for (const auto& impl : spec.builtins()) {
      if (impl.name == "reference") continue;
      if (auto finding = harness::check_implementation(impl, w)) {
        FAIL() << spec.name() << " " << impl.name << " on workload #" << i << " "
               << harness::to_json(spec, w).dump() << "\n" << *finding;
      }
    }
    chunks += spec.chunks(w).value();
  }
  std::cout << "  " << spec.name() << ": " << kWorkloads << " workloads, " << chunks << " chunks\n";
}

TEST(Differential, EveryMambaBuiltinMatchesTheReferenceOnOneHundredThousandRandomWorkloads) {
  WorkloadSource source(0xC4A11CE);
  expect_builtins_match_reference(harness::mamba_spec(), source, true);
}

TEST(Differential, EveryFlaBuiltinMatchesTheReferenceOnOneHundredThousandRandomCuSeqlens) {
  WorkloadSource indices_source(0xF1A);
  expect_builtins_match_reference(harness::fla_chunk_indices_spec(), indices_source, false);
  WorkloadSource offsets_source(0xF1A);
  expect_builtins_match_reference(harness::fla_chunk_offsets_spec(), offsets_source, false);
}

}  // namespace
}  // namespace chunkmeta
