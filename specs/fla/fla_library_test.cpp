// chunkmeta::fla: the spec's example, empty sequences, every rule of the
// domain named, both integer types, and the buffers of the one-pass writer.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <vector>

#include "chunkmeta/fla.hpp"

namespace chunkmeta::fla {
namespace {

template <typename Int>
BasicView<Int> view(std::int64_t chunk_size, const std::vector<Int>& cu_seqlens) {
  return {chunk_size, cu_seqlens};
}

// specs/fla: C = 4, cu_seqlens = [0, 0, 5, 5, 9].
TEST(Fla, GivesTheSpecExampleInBothIntegerTypes) {
  const std::vector<std::int32_t> cu32 = {0, 0, 5, 5, 9};
  const std::vector<std::int64_t> cu64 = {0, 0, 5, 5, 9};
  EXPECT_EQ(chunk_indices(view(4, cu32)).value(), (std::vector<std::int32_t>{1, 0, 1, 1, 3, 0}));
  EXPECT_EQ(chunk_indices(view(4, cu64)).value(), (std::vector<std::int64_t>{1, 0, 1, 1, 3, 0}));
  EXPECT_EQ(chunk_offsets(view(4, cu32)).value(), (std::vector<std::int64_t>{0, 0, 2, 2, 3}));
  EXPECT_EQ(chunk_offsets(view(4, cu64)).value(), (std::vector<std::int64_t>{0, 0, 2, 2, 3}));
  const auto reference_outputs = reference(view(4, cu64)).value();
  EXPECT_EQ(reference_outputs.chunk_indices, (std::vector<std::int64_t>{1, 0, 1, 1, 3, 0}));
  EXPECT_EQ(reference_outputs.chunk_offsets, (std::vector<std::int64_t>{0, 0, 2, 2, 3}));
  EXPECT_EQ(output_sizes(view(4, cu32)).value(), (Sizes{3, 5}));
}

TEST(Fla, GivesNoChunkToAnEmptyBatchOrEmptySequences) {
  const std::vector<std::int32_t> none = {7};
  EXPECT_TRUE(chunk_indices(view(64, none)).value().empty());
  EXPECT_EQ(chunk_offsets(view(64, none)).value(), std::vector<std::int64_t>{0});
  const std::vector<std::int32_t> empty = {3, 3, 3};
  EXPECT_TRUE(chunk_indices(view(64, empty)).value().empty());
  EXPECT_EQ(chunk_offsets(view(64, empty)).value(), (std::vector<std::int64_t>{0, 0, 0}));
}

TEST(Fla, CountsChunksOfLengthsNearTwoToTheThirtyOneWithoutWrapping) {
  // len + C - 1 exceeds 2^31-1: a 32-bit signed round-up would wrap.
  const std::vector<std::int32_t> cu = {0, std::numeric_limits<std::int32_t>::max()};
  const std::int64_t chunk = std::int64_t{1} << 20;
  EXPECT_EQ(chunk_offsets(view(chunk, cu)).value(), (std::vector<std::int64_t>{0, 2048}));
  const auto indices = chunk_indices(view(chunk, cu)).value();
  ASSERT_EQ(indices.size(), 2u * 2048);
  EXPECT_EQ(indices[2 * 2047], 0);
  EXPECT_EQ(indices[2 * 2047 + 1], 2047);
}

struct Broken {
  std::int64_t chunk_size;
  std::vector<std::int64_t> cu_seqlens;
  ErrorCode code;
  std::int64_t index;
};

TEST(Fla, NamesEveryBrokenRuleWithItsFieldAndIndex) {
  const std::vector<Broken> cases = {
      {0, {0, 4}, ErrorCode::chunk_size_not_positive, Error::kNoIndex},
      {std::int64_t{1} << 31, {0, 4}, ErrorCode::value_too_large, Error::kNoIndex},
      {4, {}, ErrorCode::length_mismatch, 0},
      {4, {0, -1, 3}, ErrorCode::negative_value, 1},
      {4, {0, std::int64_t{1} << 31}, ErrorCode::value_too_large, 1},
      {4, {0, 9, 5, -1}, ErrorCode::cu_seqlens_decreasing, 2},
      {4, {-2}, ErrorCode::negative_value, 0},
  };
  for (const auto& broken : cases) {
    const auto v = view(broken.chunk_size, broken.cu_seqlens);
    for (const auto& error : {validate(v), std::optional<Error>(reference(v).error()),
                              std::optional<Error>(chunk_indices(v).error()), std::optional<Error>(chunk_offsets(v).error())}) {
      ASSERT_TRUE(error.has_value());
      EXPECT_EQ(error->code, broken.code) << *error;
      const bool chunk_size_rule = broken.index == Error::kNoIndex;
      EXPECT_EQ(error->field, chunk_size_rule ? "chunk_size" : "cu_seqlens") << *error;
      EXPECT_EQ(error->index, broken.index) << *error;
      EXPECT_FALSE(error->message().empty());
    }
  }
  // int32 arrays: a negative entry, and a decreasing step.
  const std::vector<std::int32_t> negative = {0, 5, -3};
  EXPECT_EQ(validate(view(4, negative))->code, ErrorCode::negative_value);
  EXPECT_EQ(validate(view(4, negative))->index, 2);
}

TEST(Fla, RefusesMoreChunksThanTheCapAsAResourceLimit) {
  const std::vector<std::int32_t> cu = {0, std::numeric_limits<std::int32_t>::max()};
  const auto error = validate(view(1, cu));
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, ErrorCode::output_too_large);
  EXPECT_EQ(error->field, "chunk_indices");
  EXPECT_EQ(kind_of(error->code), ErrorKind::resource_limit);
  EXPECT_EQ(validate(view(3, std::vector<std::int32_t>{0, 10}), Limits{3})->code, ErrorCode::output_too_large);
  EXPECT_FALSE(validate(view(3, std::vector<std::int32_t>{0, 10}), Limits{4}).has_value());
}

TEST(Fla, NamesTheBufferThatIsTooShortAndTheSizeItNeeds) {
  const std::vector<std::int32_t> cu = {0, 0, 5, 5, 9};
  std::vector<std::int32_t> indices(5);
  const auto short_indices = chunk_indices_into(view(4, cu), std::span<std::int32_t>(indices));
  ASSERT_FALSE(short_indices.ok());
  EXPECT_EQ(short_indices.error().code, ErrorCode::output_buffer_too_small);
  EXPECT_EQ(short_indices.error().field, "chunk_indices");
  EXPECT_EQ(short_indices.error().bound, 6);
  std::vector<std::int64_t> offsets(4);
  const auto short_offsets = chunk_offsets_into(view(4, cu), std::span<std::int64_t>(offsets));
  ASSERT_FALSE(short_offsets.ok());
  EXPECT_EQ(short_offsets.error().field, "chunk_offsets");
  EXPECT_EQ(short_offsets.error().bound, 5);
  // Longer buffers: the prefix written, the rest untouched.
  std::vector<std::int32_t> roomy(10, -7);
  EXPECT_EQ(chunk_indices_into(view(4, cu), std::span<std::int32_t>(roomy)).value(), 3);
  EXPECT_EQ(roomy, (std::vector<std::int32_t>{1, 0, 1, 1, 3, 0, -7, -7, -7, -7}));
  std::vector<std::int64_t> roomy_offsets(7, -7);
  EXPECT_EQ(chunk_offsets_into(view(4, cu), std::span<std::int64_t>(roomy_offsets)).value(), 5);
  EXPECT_EQ(roomy_offsets, (std::vector<std::int64_t>{0, 0, 2, 2, 3, -7, -7}));
}

TEST(Fla, FastEqualsTheReferenceOnRandomInputsWithEmptySequences) {
  std::mt19937_64 random(20261205);
  for (int trial = 0; trial < 20000; ++trial) {
    const std::int64_t chunk = trial % 3 == 0 ? 1 + static_cast<std::int64_t>(random() % 5)
                                              : std::int64_t{1} << (random() % 12);
    std::vector<std::int64_t> cu = {static_cast<std::int64_t>(random() % 100)};
    const auto sequences = random() % 12;
    for (std::size_t i = 0; i < sequences; ++i) {
      const auto kind = random() % 4;
      const std::int64_t length = kind == 0 ? 0 : kind == 1 ? static_cast<std::int64_t>(random() % 3) * chunk + (static_cast<std::int64_t>(random() % 3) - 1)
                                                            : static_cast<std::int64_t>(random() % 700);
      cu.push_back(cu.back() + std::max<std::int64_t>(0, length));
    }
    const std::vector<std::int32_t> cu32(cu.begin(), cu.end());
    const auto expected = reference(view(chunk, cu)).value();
    const auto wide = chunk_indices(view(chunk, cu)).value();
    const auto narrow = chunk_indices(view(chunk, cu32)).value();
    ASSERT_EQ(wide, expected.chunk_indices);
    ASSERT_EQ(std::vector<std::int64_t>(narrow.begin(), narrow.end()), expected.chunk_indices);
    ASSERT_EQ(chunk_offsets(view(chunk, cu)).value(), expected.chunk_offsets);
    ASSERT_EQ(chunk_offsets(view(chunk, cu32)).value(), expected.chunk_offsets);
    const auto bound = max_output_sizes(cu.back() - cu.front(), static_cast<std::int64_t>(sequences), chunk).value();
    ASSERT_LE(static_cast<std::int64_t>(expected.chunk_indices.size() / 2), bound.chunks);
    ASSERT_EQ(bound.offsets, static_cast<std::int64_t>(sequences) + 1);
  }
}

TEST(Fla, MaxOutputSizesAreReachedAndNameALimitTheyCannotTake) {
  // Sequences of one token each, fewer than C of them: one chunk each.
  const std::vector<std::int32_t> ones = {0, 1, 2, 3};
  EXPECT_EQ(output_sizes(view(64, ones)).value(), max_output_sizes(3, 3, 64).value());
  EXPECT_EQ(max_output_sizes(-1, 1, 4).error().field, "max_tokens");
  EXPECT_EQ(max_output_sizes(1, -1, 4).error().field, "max_sequences");
  EXPECT_EQ(max_output_sizes(1, 1, 0).error().code, ErrorCode::chunk_size_not_positive);
}

}  // namespace
}  // namespace chunkmeta::fla
