// The catalogue through requests' lives (steps/): every slip of the four
// functions a step is made of (the chunker, with and without checkpoints, the
// checkpoint plan, the checkpoint planner), put in place of chunkmeta's own, is
// caught by the kernels' view across a life's steps with a minimal life, or is
// named below with why no life can see it.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "chunkmeta/steps/through_implementations.hpp"
#include "mutants.hpp"

namespace chunkmeta {
namespace {

constexpr std::int64_t kLives = 2000;
constexpr std::uint64_t kSeed = 20261207;

// Slips no life can see, and why.
const std::map<std::string, std::string>& unseen_by_lives() {
  static const std::map<std::string, std::string> why = {
      {"rowless-last-is-minus-one", "changes no state: last_chunk_indices of a row without tokens is read by no step"},
      {"seq-idx-by-searchsorted", "changes no state: an empty chunk given to the next row runs no token"},
      {"ckpt-empty-chunk-on-the-grid", "changes no state: an empty chunk after a checkpoint on the grid"},
      {"ckpt-no-realignment-after-checkpoint",
       "align mode keeps no state at a chunk end but the checkpoint's and the row's: the grid after a checkpoint is "
       "read by a cache of every multiple of C (kernels_view_catalogue_test catches it there)"},
      {"ckpt-int32-round-up-after-checkpoint",
       "align mode keeps no state at a chunk end but the checkpoint's and the row's (as the grid after a checkpoint "
       "above)"},
      {"plan-int32-block-count",
       "plans no checkpoint within M of 2^31: nothing wrong is stored (a prefix lost to the cache, not a wrong one)"},
      {"plan-eagle-block-ignored",
       "a life has no speculative tokens: the state planned inside the EAGLE block is right for the tokens it ran"},
      {"float32-ceil", "needs over 2^24 new tokens in one step: beyond a life's pieces (the spec's huge batches)"},
      {"int8-seq-idx", "needs 129 rows in a step: beyond a life's requests (the spec's huge batches)"},
      {"int16-seq-idx-wide-rows", "needs 32,769 rows in a step: beyond a life's requests (the spec's huge batches)"},
  };
  return why;
}

// Slips whose output grows with a drawn value: lives with the engines' sizes, not the smallest ones.
// int32-first-block wraps to a first block near -2^31 / M and writes every block from there.
const std::map<std::string, std::pair<std::int64_t, std::int64_t>>& sized() {
  static const std::map<std::string, std::pair<std::int64_t, std::int64_t>> sizes = {
      {"int32-first-block", {std::int64_t{1} << 10, std::int64_t{1} << 20}}};
  return sizes;
}

struct Placed {
  steps::Mode mode;
  steps::Implementations replaced;
};

// Where a mutant's spec is one of the step's functions: the mode that calls it, and it in its place.
std::optional<Placed> placed(const mutants::Mutant& mutant) {
  const std::string_view spec = mutant.implementation.spec->name();
  const harness::Implementation* impl = &mutant.implementation;
  if (spec == steps::chunks_spec(steps::Mode::all)) return Placed{steps::Mode::all, {impl, nullptr, nullptr}};
  if (spec == steps::chunks_spec(steps::Mode::align)) return Placed{steps::Mode::align, {impl, nullptr, nullptr}};
  if (spec == steps::kPlanSpec) return Placed{steps::Mode::all, {nullptr, impl, nullptr}};
  if (spec == steps::kCheckpointsSpec) return Placed{steps::Mode::align, {nullptr, nullptr, impl}};
  return std::nullopt;
}

std::vector<mutants::Mutant> of_the_steps() {
  std::vector<mutants::Mutant> chosen;
  for (const auto& mutant : mutants::catalogue()) {
    if (placed(mutant) && !mutant.slip_of_validation) chosen.push_back(mutant);
  }
  return chosen;
}

class StepsCatalogue : public ::testing::TestWithParam<mutants::Mutant> {};

TEST_P(StepsCatalogue, IsCaughtAcrossALifesStepsWithAMinimalLife) {
  const mutants::Mutant& mutant = GetParam();
  const Placed where = *placed(mutant);
  const steps::Functions functions = steps::functions_of(where.replaced);
  steps::DrawOptions options;
  options.mode = where.mode;
  if (const auto it = sized().find(mutant.implementation.name); it != sized().end()) {
    options.chunk_size = it->second.first;
    options.block_size = it->second.second;
  }
  const steps::CheckResult result = steps::check(functions, kLives, kSeed, options);
  const auto unseen = unseen_by_lives().find(mutant.implementation.name);
  if (unseen != unseen_by_lives().end()) {
    EXPECT_FALSE(result.minimal) << mutant.implementation.name << " is listed as unseen (" << unseen->second
                                 << ") but a life catches it: " << to_string(result.minimal->fault);
    return;
  }
  ASSERT_TRUE(result.minimal) << mutant.implementation.name << " (" << mutant.slip << ") lives " << result.lives
                              << " lives in mode " << steps::to_string(where.mode);
  const steps::Life& life = result.minimal->life;
  EXPECT_LE(life.steps(), 2) << steps::to_json(life) << ": " << to_string(result.minimal->fault);
  EXPECT_LE(life.rows(), 2u) << steps::to_json(life) << ": " << to_string(result.minimal->fault);
  RecordProperty("minimal", steps::to_json(life) + ": " + to_string(result.minimal->fault));
}

INSTANTIATE_TEST_SUITE_P(OfTheStepsFunctions, StepsCatalogue, ::testing::ValuesIn(of_the_steps()),
                         [](const auto& info) { return mutants::test_name_of(info.param); });

TEST(StepsCatalogue, NamesOnlySlipsOfTheStepsFunctions) {
  std::set<std::string> names;
  for (const auto& mutant : of_the_steps()) names.insert(mutant.implementation.name);
  for (const auto& [name, why] : unseen_by_lives()) EXPECT_TRUE(names.count(name)) << name << ": " << why;
  for (const auto& [name, sizes] : sized()) EXPECT_TRUE(names.count(name)) << name;
}

}  // namespace
}  // namespace chunkmeta
