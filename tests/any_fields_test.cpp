// The seam takes a workload of any shape a spec names: a spec of every kind of
// field, more of each than any computation of the family has today (three
// scalars, an optional scalar and a second one, three flags, four arrays per
// row, one passed as a list), goes through every layer that moves a workload
// (the JSON forms, the wire's compact and DOM readers, the C ABI's scalars and
// arrays, printing, splitting a batch, the shrinker), each field intact, and
// the shrinker takes a failure that needs a few of them to exactly those.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/plugin.hpp"
#include "chunkmeta/harness/shrink.hpp"
#include "chunkmeta/harness/spec.hpp"
#include "chunkmeta/properties/relations.hpp"

namespace chunkmeta {
namespace {

using harness::Input;
using harness::Slot;
using harness::Workload;

constexpr Input kInputs[] = {
    {"chunk_size", Slot::chunk_size},
    {"rows", Slot::rows},
    {"first", Slot::per_row},
    {"starts", Slot::offsets},
    {"second", Slot::second_per_row},
    {"third", Slot::more_per_row, false, false, 0},
    {"fourth", Slot::more_per_row, false, true, 1},  // a list of ints, whatever the arrays are
    {"block", Slot::block_size},
    {"alpha", Slot::more_scalar, false, false, 0},
    {"cap", Slot::optional_scalar},
    {"limit", Slot::more_optional, false, false, 0},
    {"strict", Slot::flag},
    {"loose", Slot::more_flag, false, false, 0},
    {"verbose", Slot::more_flag, false, false, 1},
};
constexpr harness::OutputArray kOutputs[] = {{"sums"}};

// Each row's sum of every field (so that every field shows in the output).
std::int64_t row_sum(const Workload& w, std::size_t row) {
  std::int64_t sum = w.num_computed_tokens[row] + (w.query_start_loc[row + 1] - w.query_start_loc[row]) +
                     w.second_per_row[row] + w.chunk_size + w.block_size + w.optional_scalar.value_or(0) + (w.flag ? 1 : 0);
  for (const auto& values : w.more_per_row) sum += values[row];
  for (const auto v : w.more_scalars) sum += v;
  for (const auto& v : w.more_optionals) sum += v.value_or(0);
  for (const auto f : w.more_flags) sum += f;
  return sum;
}

class AnyFieldsSpec final : public harness::Spec {
 public:
  std::string_view name() const override { return "test.any_fields"; }
  std::string_view summary() const override { return "every kind of field, more of each than the family has"; }
  std::span<const Input> inputs() const override { return kInputs; }
  std::string_view unit() const override { return "row"; }
  std::span<const harness::OutputArray> outputs() const override { return kOutputs; }
  std::optional<Error> validate(const Workload& w, const Limits& = {}) const override {
    const auto rows = static_cast<std::int64_t>(w.rows());
    if (w.chunk_size < 1) return Error{ErrorCode::not_positive, "chunk_size", Error::kNoIndex, w.chunk_size, 1};
    if (w.block_size < 1) return Error{ErrorCode::not_positive, "block", Error::kNoIndex, w.block_size, 1};
    if (static_cast<std::int64_t>(w.query_start_loc.size()) != rows + 1)
      return Error{ErrorCode::length_mismatch, "starts", Error::kNoIndex, 0, rows + 1};
    const auto check_rows = [&](const std::vector<std::int64_t>& values, std::string_view field) -> std::optional<Error> {
      if (static_cast<std::int64_t>(values.size()) != rows) return Error{ErrorCode::length_mismatch, field, Error::kNoIndex, 0, rows};
      for (std::size_t i = 0; i < values.size(); ++i) {
        if (values[i] < 0) return Error{ErrorCode::negative_value, field, static_cast<std::int64_t>(i), values[i], 0};
      }
      return std::nullopt;
    };
    if (auto e = check_rows(w.num_computed_tokens, "first")) return e;
    if (auto e = check_rows(w.second_per_row, "second")) return e;
    if (w.more_per_row.size() != 2) return Error{ErrorCode::length_mismatch, "third", Error::kNoIndex, 0, 2};
    if (auto e = check_rows(w.more_per_row[0], "third")) return e;
    if (auto e = check_rows(w.more_per_row[1], "fourth")) return e;
    for (std::size_t i = 1; i < w.query_start_loc.size(); ++i) {
      if (w.query_start_loc[i] < w.query_start_loc[i - 1])
        return Error{ErrorCode::query_start_loc_decreasing, "starts", static_cast<std::int64_t>(i), 0, 0};
    }
    if (w.query_start_loc[0] < 0) return Error{ErrorCode::negative_value, "starts", 0, w.query_start_loc[0], 0};
    if (w.more_scalars.size() != 1 || w.more_scalars[0] < 0)
      return Error{ErrorCode::negative_value, "alpha", Error::kNoIndex, 0, 0};
    return std::nullopt;
  }
  std::optional<std::int64_t> chunks(const Workload& w) const override {
    return validate(w) ? std::nullopt : std::optional<std::int64_t>(static_cast<std::int64_t>(w.rows()));
  }
  std::optional<std::vector<std::int64_t>> output_entries(const Workload& w) const override {
    if (validate(w)) return std::nullopt;
    return std::vector<std::int64_t>{static_cast<std::int64_t>(w.rows())};
  }
  harness::Outcome reference(const Workload& w) const override {
    if (auto error = validate(w)) return *error;
    Int32Array sums;
    for (std::size_t row = 0; row < w.rows(); ++row) sums.push_back(static_cast<std::int32_t>(row_sum(w, row)));
    return harness::Arrays{std::move(sums)};
  }
  std::optional<harness::InvariantViolation> check_invariants(const Workload&, const harness::Arrays&) const override {
    return std::nullopt;
  }
  const std::vector<harness::Implementation>& builtins() const override {
    static const std::vector<harness::Implementation> none;
    return none;
  }
  Result<std::vector<std::vector<std::int64_t>>> write_into(const Workload& w, std::span<const std::int64_t>,
                                                            std::int64_t) const override {
    return Error{ErrorCode::output_buffer_too_small, "sums", Error::kNoIndex, 0, static_cast<std::int64_t>(w.rows())};
  }
  std::string_view fuzz_target() const override { return ""; }
  Workload decode_fuzz_input(std::span<const std::uint8_t>) const override { return {}; }
  std::optional<std::vector<std::uint8_t>> encode_fuzz_input(const Workload&) const override { return std::nullopt; }
  harness::BufferRest rest_of_buffer(std::size_t) const override { return harness::BufferRest::kept; }
};

const AnyFieldsSpec& any_fields_spec() {
  static const AnyFieldsSpec spec;
  return spec;
}

// A valid workload of the spec with every field drawn (none at its default half the time).
Workload random_workload(std::mt19937_64& random) {
  const auto draw = [&](std::int64_t most) { return static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(most + 1)); };
  Workload w;
  const auto rows = static_cast<std::size_t>(draw(6));
  w.chunk_size = 1 + draw(300);
  w.block_size = 1 + draw(50);
  w.query_start_loc = {draw(1000)};
  w.more_per_row.resize(2);
  for (std::size_t row = 0; row < rows; ++row) {
    w.num_computed_tokens.push_back(draw(4000));
    w.query_start_loc.push_back(w.query_start_loc.back() + draw(500));
    w.second_per_row.push_back(draw(90));
    w.more_per_row[0].push_back(draw(70));
    w.more_per_row[1].push_back(draw(60));
  }
  w.more_scalars = {draw(40)};
  if (draw(1) == 1) w.optional_scalar = draw(30);
  w.more_optionals = {draw(1) == 1 ? std::optional<std::int64_t>(draw(20)) : std::nullopt};
  w.flag = draw(1) == 1;
  w.more_flags = {static_cast<std::uint8_t>(draw(1)), static_cast<std::uint8_t>(draw(1))};
  return w;
}

class AnyFields : public testing::Test {
 protected:
  harness::TemporarySpec registered{any_fields_spec()};
  std::mt19937_64 random{20261206};
};

TEST_F(AnyFields, EveryFieldIsDescribedWithItsKindAndWhichOfItsSlotItIs) {
  const auto described = harness::description_json(any_fields_spec());
  std::vector<std::string> kinds;
  for (const auto& input : described.at("inputs")) kinds.push_back(input.at("name").get<std::string>() + ":" + input.at("kind").get<std::string>());
  EXPECT_EQ(kinds, (std::vector<std::string>{"chunk_size:scalar", "rows:rows", "first:array", "starts:array", "second:array",
                                             "third:array", "fourth:list", "block:scalar", "alpha:scalar", "cap:optional",
                                             "limit:optional", "strict:flag", "loose:flag", "verbose:flag"}));
  EXPECT_EQ(described.at("inputs")[6].at("index"), 1);
  EXPECT_FALSE(described.at("inputs")[4].contains("index"));  // a named slot's field needs none
}

TEST_F(AnyFields, EveryFieldSurvivesTheJsonFormAndTheWiresCompactAndDomReaders) {
  for (int round = 0; round < 300; ++round) {
    const Workload w = random_workload(random);
    ASSERT_FALSE(any_fields_spec().validate(w).has_value()) << w;
    const auto parsed = harness::parse_workload(harness::to_json(any_fields_spec(), w));
    ASSERT_TRUE(std::holds_alternative<harness::SpecWorkload>(parsed)) << harness::to_json(any_fields_spec(), w).dump();
    EXPECT_EQ(std::get<harness::SpecWorkload>(parsed).workload, w) << harness::to_json(any_fields_spec(), w).dump();

    const std::string line = harness::request_line(7, any_fields_spec(), w);
    for (const auto& request : {harness::parse_request_line(line), harness::parse_request_dom(line)}) {
      ASSERT_EQ(request.spec, &any_fields_spec()) << line;
      ASSERT_TRUE(std::holds_alternative<Workload>(request.workload)) << line;
      EXPECT_EQ(std::get<Workload>(request.workload), w) << line;
    }
  }
}

TEST_F(AnyFields, EveryScalarSurvivesTheCAbisScalarsInTheSpecsOrder) {
  for (int round = 0; round < 300; ++round) {
    const Workload w = random_workload(random);
    const auto scalars = harness::abi_scalars(any_fields_spec(), w);
    // chunk_size, block, alpha, cap (given, value), limit (given, value), strict, loose, verbose.
    ASSERT_EQ(scalars.size(), 10u);
    Workload read = w;
    read.chunk_size = read.block_size = 0;
    read.more_scalars = {0};
    read.optional_scalar.reset();
    read.more_optionals = {std::nullopt};
    read.flag = false;
    read.more_flags = {0, 0};
    harness::read_abi_scalars(any_fields_spec(), scalars, read);
    EXPECT_EQ(read, w);
  }
}

TEST_F(AnyFields, PrintingShowsEveryField) {
  Workload w;
  w.chunk_size = 3;
  w.block_size = 5;
  w.num_computed_tokens = {1};
  w.query_start_loc = {0, 2};
  w.second_per_row = {4};
  w.more_per_row = {{6}, {7}};
  w.more_scalars = {8};
  w.more_optionals = {9};
  w.more_flags = {0, 1};
  std::ostringstream printed;
  printed << w;
  for (const char* shown : {"more_scalars=[8]", "more_per_row=[[6], [7]]", "more_optionals=[9]", "more_flags=[false, true]",
                            "second_per_row=[4]", "block_size=5"})
    EXPECT_NE(printed.str().find(shown), std::string::npos) << shown << " not in " << printed.str();
}

TEST_F(AnyFields, EveryRowEditCarriesEveryArrayPerRowAndKeepsTheScalars) {
  for (int round = 0; round < 200; ++round) {
    const Workload w = random_workload(random);
    for (const auto& step : harness::shrink_steps(w)) {
      const Workload candidate = harness::apply(w, step);
      for (const auto* values : {&candidate.second_per_row, &candidate.more_per_row[0], &candidate.more_per_row[1]})
        ASSERT_EQ(values->size(), candidate.rows()) << "step " << static_cast<int>(step.kind) << " of " << w;
      ASSERT_EQ(candidate.more_scalars.size(), 1u);
      ASSERT_EQ(candidate.more_optionals.size(), 1u);
      ASSERT_EQ(candidate.more_flags.size(), 2u);
    }
    for (std::size_t split = 0; split <= w.rows(); ++split) {
      const auto [left, right] = properties::split_batch(w, split);
      ASSERT_EQ(left.more_per_row.size(), 2u);
      for (std::size_t k = 0; k < 2; ++k) {
        std::vector<std::int64_t> joined = left.more_per_row[k];
        joined.insert(joined.end(), right.more_per_row[k].begin(), right.more_per_row[k].end());
        EXPECT_EQ(joined, w.more_per_row[k]);
      }
      EXPECT_EQ(left.more_scalars, w.more_scalars);
      EXPECT_EQ(right.more_optionals, w.more_optionals);
      EXPECT_EQ(right.more_flags, w.more_flags);
    }
  }
}

TEST_F(AnyFields, TheShrinkerTakesAFailureToTheFieldsItNeedsAtTheirSimplest) {
  // Wrong exactly when `verbose` is set, some row's `fourth` is at least 5 and `limit` is given: the
  // minimal failure is one row with fourth = 5, verbose, limit 0, and every other field at its simplest.
  const auto fails = [](const Workload& w) {
    const bool big = std::any_of(w.more_per_row[1].begin(), w.more_per_row[1].end(), [](std::int64_t v) { return v >= 5; });
    return w.more_flags[1] != 0 && big && w.more_optionals[0].has_value();
  };
  int shrunk = 0;
  for (int round = 0; round < 400 && shrunk < 20; ++round) {
    const Workload w = random_workload(random);
    if (!fails(w)) continue;
    ++shrunk;
    const auto result = harness::shrink_batched(w, [&](std::span<const Workload> candidates) -> std::optional<std::size_t> {
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        if (!any_fields_spec().validate(candidates[i]) && fails(candidates[i])) return i;
      }
      return std::nullopt;
    });
    ASSERT_TRUE(result.minimal);
    Workload expected;
    expected.chunk_size = 1;
    expected.block_size = 1;
    expected.num_computed_tokens = {0};
    expected.query_start_loc = {0, 0};
    expected.second_per_row = {0};
    expected.more_per_row = {{0}, {5}};
    expected.more_scalars = {0};
    expected.more_optionals = {0};
    expected.more_flags = {0, 1};
    EXPECT_EQ(result.workload, expected) << "from " << w << " to " << result.workload;
  }
  EXPECT_GE(shrunk, 10);
}

}  // namespace
}  // namespace chunkmeta
