// FLA's fuzz encoding of cu_seqlens and their dtype.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "chunkmeta/harness/fuzz_input.hpp"
#include "fla_generators.hpp"
#include "fla_spec.hpp"

namespace chunkmeta::properties {
namespace {

TEST(FuzzInputs, EncodeThenDecodeGivesBackTheCuSeqlensAndTheirDtype) {
  int encoded = 0;
  std::map<harness::Dtype, int> dtypes;
  for (const auto& w : draw_values(fla_valid_workloads(), 3000)) {
    if (auto bytes = harness::encode_valid_cu_seqlens(w)) {
      ASSERT_EQ(harness::decode_valid_cu_seqlens(*bytes), w);
      ++encoded;
      ++dtypes[w.dtype];
    }
  }
  EXPECT_GT(encoded, 1000);
  EXPECT_GT(dtypes[harness::Dtype::int32], 100);
  EXPECT_GT(dtypes[harness::Dtype::int64], 100);
}

TEST(FuzzInputs, DecodingAnyBytesGivesValidCuSeqlensWithinBudgetInAnArrayOfExactlyItsSize) {
  std::mt19937 rng(99);
  for (int i = 0; i < 20000; ++i) {
    std::vector<std::uint8_t> bytes(rng() % 200);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
    const Workload cu = harness::decode_valid_cu_seqlens(bytes);
    const auto& fla = harness::fla_chunk_indices_spec();
    ASSERT_FALSE(fla.validate(cu).has_value()) << *fla.validate(cu) << " for " << cu;
    ASSERT_LE(fla.chunks(cu).value(), 256) << cu;
    ASSERT_EQ(cu.query_start_loc.capacity(), cu.query_start_loc.size()) << cu;
  }
}

}  // namespace
}  // namespace chunkmeta::properties
