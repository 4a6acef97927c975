// The packed grid's cache-adequacy relation (SPEC Part 8 across the seam):
// judged on the reference's answer it holds, and on an answer that is
// cache-adequate where the relation says the grid cannot be, it fails.
#include <gtest/gtest.h>

#include "chunkmeta/properties/tables.hpp"
#include "packed_grid_spec.hpp"

namespace chunkmeta {
namespace {

using harness::Arrays;
using chunkmeta::Int32Array;

const engine::Property& relation() {
  const auto* property = properties::table_of(harness::packed_grid_spec())
                             .find("IsCacheAdequateExactlyWhenEveryResumedRowStartsOnItsGrid");
  EXPECT_NE(property, nullptr);
  return *property;
}

TEST(PackedGridCacheRelation, HoldsOnTheReferenceAndFailsAnAnswerTheCacheCouldUseOffTheGrid) {
  // C = 4, q = [0, 5, 12]; M = 4 (parameter 0), c = [0, 6] (salts 0 and 13): row 1 starts off its grid.
  const engine::Case c{harness::Workload{4, {0, 0}, {0, 5, 12}}, {0, 0, 13}};
  const harness::Implementation any{};
  const harness::Answer reference = harness::packed_grid_spec().reference(c.workload);
  EXPECT_FALSE(relation().judge(any, c, std::span(&reference, 1)));
  // The builder's chunks for c = [0, 6] (cu, last, seq_idx): a block end at 8 for row 1, which the grid cannot give.
  const harness::Answer builders = harness::Outcome(Arrays{Int32Array{0, 4, 5, 7, 11, 12}, Int32Array{1, 4},
                                                           Int32Array{0, 0, 1, 1, 1}});
  const auto broken = relation().judge(any, c, std::span(&builders, 1));
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->finding.kind, harness::FindingKind::relation_broken);
  EXPECT_EQ(broken->finding.summary,
            "with computed tokens [0, 6] and block size 4: cache-adequate, though row 1 starts off its grid with a "
            "block end inside its new tokens");
}

}  // namespace
}  // namespace chunkmeta
