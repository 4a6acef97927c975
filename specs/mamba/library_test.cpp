// Unit tests of the library's contract: the spec's example, the empty batch,
// every validation code with its field and index, and the buffer entry point.
#include <gtest/gtest.h>

#include <limits>
#include <sstream>

#include "chunkmeta/chunkmeta.hpp"

namespace chunkmeta {
namespace {

Workload spec_example() { return {64, {0, 70, 128, 1}, {0, 130, 230, 294, 296}}; }

ChunkMetadata spec_example_result() {
  return {{0, 64, 128, 130, 188, 230, 294, 296}, {0, 0, 0, 1, 1, 2, 3}, {2, 4, 5, 6}};
}

TEST(Reference, ReproducesTheSpecExample) {
  auto result = reference(spec_example());
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result.value(), spec_example_result());
}

TEST(Fast, ReproducesTheSpecExample) {
  auto result = fast(spec_example());
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result.value(), spec_example_result());
}

// The spec's example as the engine's int32 arrays (chunk size 64).
const std::vector<std::int32_t> kSpecComputed32 = {0, 70, 128, 1};
const std::vector<std::int32_t> kSpecStarts32 = {0, 130, 230, 294, 296};

TEST(EveryImplementation, ReadsEngineInt32ArraysInPlace) {
  const WorkloadView32 view{64, kSpecComputed32, kSpecStarts32};
  for (const auto& result : {reference(view), fast(view)}) {
    ASSERT_TRUE(result.ok()) << result.error();
    EXPECT_EQ(result.value(), spec_example_result());
  }
}

TEST(Fast, WritesCallerBuffersOfExactlyTheAnnouncedSize) {
  const Workload w = spec_example();
  auto sizes = output_sizes(view_of(w));
  ASSERT_TRUE(sizes.ok());
  EXPECT_EQ(sizes.value(), (OutputSizes{8, 7, 4}));
  Int32Array cu(8), seq(7), last(4);
  auto written = fast_into(view_of(w), {cu, seq, last});
  ASSERT_TRUE(written.ok()) << written.error();
  EXPECT_EQ(written.value(), sizes.value());
  EXPECT_EQ((ChunkMetadata{cu, seq, last}), spec_example_result());
}

TEST(Fast, NamesTheBufferThatIsTooShort) {
  const Workload w = spec_example();
  std::vector<std::int32_t> cu(8), seq(6), last(4);
  auto written = fast_into(view_of(w), {cu, seq, last});
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.error().code, ErrorCode::output_buffer_too_small);
  EXPECT_EQ(written.error().field, "seq_idx");
  EXPECT_EQ(written.error().value, 6);
  EXPECT_EQ(written.error().bound, 7);
  EXPECT_EQ(kind_of(written.error().code), ErrorKind::resource_limit);
}

TEST(Fast, RefusesEmptyBuffersForAnEmptyBatchWithoutWritingThem) {
  // Regression: the closing cu_chunk_seqlen entry was written into a zero-length buffer.
  const std::vector<std::int32_t> none;
  const std::vector<std::int32_t> start = {0};
  auto written = fast_into(WorkloadView32{8, none, start}, {std::span<std::int32_t>{}, {}, {}});
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.error().code, ErrorCode::output_buffer_too_small);
  EXPECT_EQ(written.error().field, "cu_chunk_seqlen");
  EXPECT_EQ(written.error().bound, 1);
}

TEST(EveryImplementation, GivesOneZeroEntryForAnEmptyBatch) {
  const Workload empty{256, {}, {0}};
  for (auto result : {reference(empty), fast(empty)}) {
    ASSERT_TRUE(result.ok()) << result.error();
    EXPECT_EQ(result.value(), (ChunkMetadata{{0}, {}, {}}));
  }
}

TEST(EveryImplementation, EmitsTheEmptyRealigningChunkForAZeroTokenUnalignedRow) {
  // Row 0: computed 5 (unaligned), no new tokens -> one empty chunk. Row 1: aligned, no tokens -> no chunk.
  const Workload w{8, {5, 8}, {0, 0, 0}};
  const ChunkMetadata expected{{0, 0}, {0}, {0, 0}};
  EXPECT_EQ(reference(w).value(), expected);
  EXPECT_EQ(fast(w).value(), expected);
}

TEST(EveryImplementation, PointsARowWithoutChunksAtThePreviousChunkOrMinusOne) {
  const Workload w{4, {0, 0, 0}, {0, 0, 4, 4}};
  const ChunkMetadata expected{{0, 4}, {1}, {-1, 0, 0}};
  EXPECT_EQ(reference(w).value(), expected);
  EXPECT_EQ(fast(w).value(), expected);
}

TEST(EveryImplementation, HandlesValuesAtTwoToTheThirtyOneMinusOne) {
  // computed + new tokens == 2^31-1 exactly, with a chunk size that is not a power of two.
  const std::int64_t top = kMaxValue;
  const Workload w{1056, {top - 3000}, {top - 3000, top}};
  auto expected = reference(w);
  ASSERT_TRUE(expected.ok()) << expected.error();
  EXPECT_EQ(fast(w).value(), expected.value());
  EXPECT_EQ(expected.value().cu_chunk_seqlen.back(), 3000);
}

struct ValidationCase {
  std::string name;
  Workload workload;
  ErrorCode code;
  std::string_view field;
  std::int64_t index;
  friend void PrintTo(const ValidationCase& c, std::ostream* os) { *os << c.name; }
};

class Validation : public testing::TestWithParam<ValidationCase> {};

TEST_P(Validation, NamesCodeFieldAndIndex) {
  const auto& c = GetParam();
  auto error = validate(c.workload);
  ASSERT_TRUE(error.has_value()) << "accepted " << c.workload;
  EXPECT_EQ(error->code, c.code) << *error;
  EXPECT_EQ(error->field, c.field) << *error;
  EXPECT_EQ(error->index, c.index) << *error;
  EXPECT_FALSE(error->message().empty());
  EXPECT_EQ(kind_of(error->code), ErrorKind::invalid_input);
  // Every implementation refuses the same way, and never computes.
  EXPECT_FALSE(reference(c.workload).ok());
  EXPECT_FALSE(fast(c.workload).ok());
  EXPECT_EQ(fast(c.workload).error(), *error);
}

const std::int64_t kTop = kMaxValue;
INSTANTIATE_TEST_SUITE_P(
    EveryRule, Validation,
    testing::Values(
        ValidationCase{"ChunkSizeZero", {0, {0}, {0, 1}}, ErrorCode::chunk_size_not_positive, "chunk_size", -1},
        ValidationCase{"ChunkSizeNegative", {-64, {0}, {0, 1}}, ErrorCode::chunk_size_not_positive, "chunk_size", -1},
        ValidationCase{"ChunkSizeTooLarge", {kTop + 1, {0}, {0, 1}}, ErrorCode::value_too_large, "chunk_size", -1},
        ValidationCase{"QueryStartLocEmpty", {8, {}, {}}, ErrorCode::length_mismatch, "query_start_loc", 0},
        ValidationCase{"QueryStartLocShort", {8, {0, 0}, {0, 1}}, ErrorCode::length_mismatch, "query_start_loc", 2},
        ValidationCase{"QueryStartLocLong", {8, {0}, {0, 1, 2}}, ErrorCode::length_mismatch, "query_start_loc", 2},
        ValidationCase{"ComputedNegative", {8, {0, -1}, {0, 1, 2}}, ErrorCode::negative_value, "num_computed_tokens", 1},
        ValidationCase{"ComputedTooLarge", {8, {kTop + 1, 0}, {0, 1, 2}}, ErrorCode::value_too_large, "num_computed_tokens", 0},
        ValidationCase{"QueryStartLocNegative", {8, {0, 0}, {0, -3, 2}}, ErrorCode::negative_value, "query_start_loc", 1},
        ValidationCase{"QueryStartLocTooLarge", {8, {0, 0}, {0, 1, kTop + 1}}, ErrorCode::value_too_large, "query_start_loc", 2},
        ValidationCase{"QueryStartLocDecreasing", {8, {0, 0}, {0, 5, 4}}, ErrorCode::query_start_loc_decreasing, "query_start_loc", 2},
        ValidationCase{"SequenceTooLong", {8, {0, kTop}, {0, 1, 2}}, ErrorCode::sequence_too_long, "num_computed_tokens", 1}),
    [](const auto& info) { return info.param.name; });

TEST(Validation, RefusesOutputAboveTheCapAsAResourceLimit) {
  const Workload w{1, {0}, {0, 1000}};  // 1000 chunks
  EXPECT_FALSE(validate(w, Limits{1000}).has_value());
  auto error = validate(w, Limits{999});
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, ErrorCode::output_too_large);
  EXPECT_EQ(error->value, 1000);
  EXPECT_EQ(kind_of(error->code), ErrorKind::resource_limit);
  EXPECT_EQ(fast(w, Limits{999}).error(), *error);
  EXPECT_EQ(reference(w, Limits{999}).error(), *error);
}

TEST(Validation, RefusesTwoToTheThirtyOneChunksWithTheDefaultCapWithoutAllocating) {
  const Workload w{1, {0}, {0, kTop}};
  auto error = validate(w);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, ErrorCode::output_too_large);
  EXPECT_EQ(error->value, kTop);
  EXPECT_EQ(fast(w).error(), *error);
}

TEST(Errors, AnUnnamedCodeValueIsSpelledUnknownError) {
  // An enum class holds any value of its underlying type; a code from a newer
  // build read by an older one must still print.
  EXPECT_EQ(to_string(static_cast<ErrorCode>(99)), "unknown_error");
}

TEST(Printing, WorkloadsResultsAndSizesReadAsTheirFields) {
  std::ostringstream os;
  os << spec_example();
  EXPECT_EQ(os.str(), "{chunk_size: 64, num_computed_tokens: [0, 70, 128, 1], query_start_loc: [0, 130, 230, 294, 296]}");
  os.str("");
  os << Result<ChunkMetadata>(spec_example_result());
  EXPECT_EQ(os.str(), "{cu_chunk_seqlen: [0, 64, 128, 130, 188, 230, 294, 296], seq_idx: [0, 0, 0, 1, 1, 2, 3], "
                      "last_chunk_indices: [2, 4, 5, 6]}");
  os.str("");
  os << OutputSizes{8, 7, 4};
  EXPECT_EQ(os.str(), "{cu_chunk_seqlen: 8, seq_idx: 7, last_chunk_indices: 4}");
  os.str("");
  os << Result<OutputSizes>(Error{ErrorCode::negative_value, "num_computed_tokens", 0, -1, 0});
  EXPECT_EQ(os.str().rfind("error negative_value at num_computed_tokens[0]", 0), 0u) << os.str();
  os.str("");
  os << fast(Workload{0, {}, {0}});
  EXPECT_EQ(os.str().rfind("error chunk_size_not_positive at chunk_size: chunk_size is 0", 0), 0u) << os.str();
  os.str("");
  os << Result<OutputSizes>(OutputSizes{1, 0, 0});
  EXPECT_EQ(os.str(), "{cu_chunk_seqlen: 1, seq_idx: 0, last_chunk_indices: 0}");
}

TEST(Equality, ComparesEveryFieldOfEveryValueType) {
  const Workload w = spec_example();
  for (int field = 0; field < 3; ++field) {
    Workload other = w;
    if (field == 0) other.chunk_size += 1;
    if (field == 1) other.num_computed_tokens[0] += 1;
    if (field == 2) other.query_start_loc.back() += 1;
    EXPECT_NE(other, w) << "field " << field;
  }
  const ChunkMetadata m = spec_example_result();
  for (int field = 0; field < 3; ++field) {
    ChunkMetadata other = m;
    if (field == 0) other.cu_chunk_seqlen.back() += 1;
    if (field == 1) other.seq_idx.back() += 1;
    if (field == 2) other.last_chunk_indices.back() += 1;
    EXPECT_NE(other, m) << "field " << field;
  }
  const OutputSizes sizes{8, 7, 4};
  EXPECT_NE((OutputSizes{9, 7, 4}), sizes);
  EXPECT_NE((OutputSizes{8, 6, 4}), sizes);
  EXPECT_NE((OutputSizes{8, 7, 3}), sizes);
  const Error e{ErrorCode::negative_value, "num_computed_tokens", 1, -1, 0};
  EXPECT_NE((Error{ErrorCode::value_too_large, e.field, e.index, e.value, e.bound}), e);
  EXPECT_NE((Error{e.code, "query_start_loc", e.index, e.value, e.bound}), e);
  EXPECT_NE((Error{e.code, e.field, 2, e.value, e.bound}), e);
  EXPECT_NE((Error{e.code, e.field, e.index, -2, e.bound}), e);
  EXPECT_NE((Error{e.code, e.field, e.index, e.value, 5}), e);
  // Same rule: code, field and index; value and bound are detail for people.
  EXPECT_TRUE((Error{e.code, e.field, e.index, -9, 7}).same_rule(e));
  EXPECT_FALSE((Error{ErrorCode::value_too_large, e.field, e.index, e.value, e.bound}).same_rule(e));
  EXPECT_FALSE((Error{e.code, "query_start_loc", e.index, e.value, e.bound}).same_rule(e));
  EXPECT_FALSE((Error{e.code, e.field, 2, e.value, e.bound}).same_rule(e));
}

TEST(Validation, ReadsEngineInt32ArraysInPlace) {
  EXPECT_FALSE(validate(WorkloadView32{64, kSpecComputed32, kSpecStarts32}).has_value());
  const std::vector<std::int32_t> decreasing = {0, 130, 230, 229, 296};
  const auto error = validate(WorkloadView32{64, kSpecComputed32, decreasing});
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, ErrorCode::query_start_loc_decreasing);
  EXPECT_EQ(error->index, 3);
}

TEST(Validation, ClampsACapAboveTheLargestIndexableCount) {
  // A cap above 2^31-2 chunks would let an index overflow int32: it is clamped.
  const Workload w{1, {0}, {0, 10}};
  EXPECT_FALSE(validate(w, Limits{std::numeric_limits<std::int64_t>::max()}).has_value());
  const auto error = validate(Workload{1, {0}, {0, kMaxValue}}, Limits{std::numeric_limits<std::int64_t>::max()});
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, ErrorCode::output_too_large);
  EXPECT_EQ(error->bound, Limits::kMaxChunksCap);
}

TEST(Fast, CountsExactlyWhenItsQuickUpperBoundIsAboveTheCap) {
  // The returning fast sizes its output from tokens/C + 2 rows (9 here); above
  // the cap it counts exactly (3 chunks) before refusing.
  const Workload w{64, {0, 0, 0}, {0, 64, 128, 192}};
  const auto result = fast(w, Limits{5});
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result.value(), reference(w).value());
  EXPECT_EQ(fast(w, Limits{2}).error().code, ErrorCode::output_too_large);
}

TEST(Results, GiveTheirValueByMoveAndTestAsBooleans) {
  Result<ChunkMetadata> result = fast(spec_example());
  EXPECT_TRUE(static_cast<bool>(result));
  const ChunkMetadata moved = std::move(result).value();
  EXPECT_EQ(moved, spec_example_result());
  EXPECT_FALSE(static_cast<bool>(fast(Workload{0, {}, {0}})));
}

}  // namespace
}  // namespace chunkmeta

// The division-free quotient and remainder behind fast and validation.
#include <random>

#include "row_math.hpp"

namespace chunkmeta {
namespace {

TEST(Divisor, MatchesHardwareDivisionOnEdgeAndRandomOperands) {
  std::vector<std::uint32_t> divisors = {1, 2, 3, 7, 64, 255, 256, 257, 528, 1056, 2048, 65535, 65536, 65537,
                                         (1u << 30) - 1, 1u << 30, (1u << 31) - 2, (1u << 31) - 1};
  std::vector<std::uint32_t> numerators = {0, 1, 2, 3, 255, 256, 257, 65535, 65536, (1u << 31) - 2, (1u << 31) - 1,
                                           1u << 31, 0xFFFFFFFEu, 0xFFFFFFFDu};
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) divisors.push_back(1 + rng() % 0x7FFFFFFFu);
  for (int i = 0; i < 2000; ++i) numerators.push_back(static_cast<std::uint32_t>(rng()));
  for (auto d : divisors) {
    const detail::Divisor divisor(d);
    for (auto n : numerators) {
      ASSERT_EQ(divisor.quotient(n), n / d) << n << " / " << d;
      ASSERT_EQ(divisor.remainder(n), n % d) << n << " % " << d;
    }
  }
}

}  // namespace
}  // namespace chunkmeta

// Validation's slow path, called only for workloads its fast scan flagged.
#include "checked_sizes.hpp"

namespace chunkmeta {
namespace {

TEST(FirstBrokenRule, SaysValueTooLargeWithoutAnIndexWhenCalledOnAValidWorkload) {
  // A caller whose fast scan flagged a valid workload (a bug) gets a rule
  // that names no entry, rather than one invented for an entry that is fine.
  const Workload valid{64, {0, 70}, {0, 130, 230}};
  const Error error = detail::first_broken_rule(view_of(valid));
  EXPECT_EQ(error.code, ErrorCode::value_too_large);
  EXPECT_EQ(error.field, "query_start_loc");
  EXPECT_EQ(error.index, Error::kNoIndex);
}

}  // namespace
}  // namespace chunkmeta

namespace chunkmeta {
namespace {

// max_output_sizes() bounds every workload within the limits it is given, and
// is reached: buffers sized by it once hold every step of an engine.
TEST(MaxOutputSizes, HoldEveryWorkloadWithinTheLimitsAndAreReached) {
  std::mt19937_64 random(20261205);
  for (int i = 0; i < 20000; ++i) {
    const std::int64_t chunk = std::int64_t{1} + static_cast<std::int64_t>(random() % (i % 2 ? 8 : 3000));
    const auto rows = static_cast<std::size_t>(random() % 40);
    Workload w{chunk, {}, {0}};
    for (std::size_t r = 0; r < rows; ++r) {
      // Often one or two tokens short of or past a boundary, after an unaligned start.
      const std::int64_t tokens = random() % 3 == 0 ? static_cast<std::int64_t>(random() % 5000)
                                                    : static_cast<std::int64_t>(random() % 4) * chunk + static_cast<std::int64_t>(random() % 3);
      w.num_computed_tokens.push_back(random() % 2 ? chunk - 1 : static_cast<std::int64_t>(random() % 100000));
      w.query_start_loc.push_back(w.query_start_loc.back() + tokens);
    }
    const auto sizes = output_sizes(view_of(w));
    ASSERT_TRUE(sizes.ok());
    const auto bound = max_output_sizes(w.query_start_loc.back(), static_cast<std::int64_t>(rows), chunk);
    ASSERT_TRUE(bound.ok());
    ASSERT_LE(sizes.value().num_chunks(), bound.value().num_chunks()) << Workload(w);
    EXPECT_EQ(bound.value().cu_chunk_seqlen, bound.value().num_chunks() + 1);
    EXPECT_EQ(bound.value().last_chunk_indices, static_cast<std::int64_t>(rows));
  }
  for (const std::int64_t chunk : {2, 3, 64, 2048}) {
    const Workload one_row{chunk, {chunk - 1}, {0, chunk + 2}};
    EXPECT_EQ(output_sizes(view_of(one_row)).value(), max_output_sizes(chunk + 2, 1, chunk).value());
    const Workload empty_rows{chunk, {1, 1, 1}, {0, 0, 0, 0}};
    EXPECT_EQ(output_sizes(view_of(empty_rows)).value(), max_output_sizes(0, 3, chunk).value());
  }
  const Workload chunk_one{1, {5, 0}, {0, 7, 9}};
  EXPECT_EQ(output_sizes(view_of(chunk_one)).value(), max_output_sizes(9, 2, 1).value());
}

TEST(MaxOutputSizes, NameALimitTheyCannotTake) {
  EXPECT_EQ(max_output_sizes(10, 1, 0).error().code, ErrorCode::chunk_size_not_positive);
  EXPECT_EQ(max_output_sizes(10, 1, kMaxValue + 1).error().code, ErrorCode::value_too_large);
  EXPECT_EQ(max_output_sizes(-1, 1, 8).error().field, "max_tokens");
  EXPECT_EQ(max_output_sizes(10, -1, 8).error().field, "max_rows");
  EXPECT_EQ(max_output_sizes(kMaxValue, 1, 1).error().code, ErrorCode::output_too_large);
  EXPECT_EQ(max_output_sizes(std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::max(), 2)
                .error().code,
            ErrorCode::output_too_large);
}

}  // namespace
}  // namespace chunkmeta
