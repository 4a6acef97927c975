// The catalogue judged by the kernels' view alone (SPEC Part 8), with no
// reference: each slip of a spec whose outputs a kernel or the cache reads is
// caught because a state comes out wrong, or it is one of the few named below
// that differ from the reference where no state depends on it. The table it
// prints is docs/properties.md's.
#include <gtest/gtest.h>

#include <set>

#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/oracle.hpp"
#include "chunkmeta/properties/tables.hpp"
#include "mutants.hpp"

namespace chunkmeta {
namespace {

constexpr std::uint64_t kSeed = 20261207;
constexpr int kValidCases = 10000;
constexpr int kHugeCases = 20;

// Slips that change outputs no state depends on (docs/properties.md says why, each): a chunk or piece of no
// tokens added or dropped (it runs nothing: the state passes through), or the last chunk of a row without
// tokens (its gathered state is another row's in every formulation: only the index's range is judged).
const std::set<std::string>& changes_no_state() {
  static const std::set<std::string> names = {
      "drops-empty-head",                     // no empty realigning chunk for a row without new tokens
      "rowless-last-is-minus-one",            // last_chunk_indices of a row without tokens
      "seq-idx-by-searchsorted",              // an empty chunk given to the next row
      "ceil-as-floor-plus-one",               // an empty chunk more where n is a multiple of C
      "grid-zero-length-logical-chunk",       // a zero-length piece
      "grid-empty-row-last-from-row-before",  // last_chunk_indices of a row without tokens
      "grid-builder-chunks",                  // the builder's chunks with every row at 0 computed tokens: the same states
      "ckpt-empty-chunk-on-the-grid",         // an empty chunk after a checkpoint on the grid
  };
  return names;
}

struct Verdict {
  std::optional<harness::Workload> differs;  // the first drawn workload on which it differs from the reference
  std::optional<harness::Workload> caught;   // the first on which a state comes out wrong
  std::optional<kernel_view::Fault> fault;
};

Verdict judge_by_states(const mutants::Mutant& mutant) {
  const harness::Spec& spec = *mutant.implementation.spec;
  const auto& values = properties::values_of(spec);
  Verdict verdict;
  rc::Random random(kSeed);
  for (int i = 0; i < kValidCases + kHugeCases && !verdict.caught; ++i) {
    const harness::Workload w = i < kValidCases ? properties::pick(values.valid, random.split(), i % 101)
                                                : properties::pick(values.huge, random.split(), 100);
    const harness::Outcome expected = spec.reference(w);
    if (!expected.ok()) continue;
    const harness::Answer answer = mutant.implementation.compute(w);
    const auto* actual = std::get_if<harness::Outcome>(&answer);
    if (actual == nullptr || !actual->ok()) {
      if (!verdict.differs) verdict.differs = w;
      continue;  // a refusal of a valid workload: no output for a kernel to read (the reference's finding)
    }
    if (!verdict.differs && harness::compare_outcomes(spec, expected, *actual)) verdict.differs = w;
    if (auto fault = spec.kernels_view(w, actual->value())) {
      verdict.caught = w;
      verdict.fault = std::move(fault);
    }
  }
  return verdict;
}

std::vector<std::string>& table() {
  static std::vector<std::string> rows;
  return rows;
}

class KernelsView : public testing::TestWithParam<mutants::Mutant> {};

// The slips with outputs a kernel reads: of a spec with a kernels' view, and not of validation (no output).
bool judged(const mutants::Mutant& mutant) {
  return mutant.implementation.spec->has_kernels_view() && !mutant.slip_of_validation;
}

std::vector<mutants::Mutant> judged_mutants() {
  std::vector<mutants::Mutant> some;
  for (const auto& mutant : mutants::catalogue()) {
    if (judged(mutant)) some.push_back(mutant);
  }
  return some;
}

TEST_P(KernelsView, CatchesEverySlipThatChangesAState) {
  const auto& mutant = GetParam();
  const harness::Spec& spec = *mutant.implementation.spec;
  const std::string& name = mutant.implementation.name;
  const Verdict verdict = judge_by_states(mutant);
  ASSERT_TRUE(verdict.differs) << name << " never differs from the reference in " << kValidCases << " + " << kHugeCases
                               << " draws: the test cannot say what it changes";
  if (changes_no_state().contains(name)) {
    EXPECT_FALSE(verdict.caught) << name << " is listed as changing no state, but " << kernel_view::to_string(*verdict.fault)
                                 << " on " << harness::to_json(spec, *verdict.caught).dump();
    table().push_back("| " + name + " | " + std::string(spec.name()) + " | changes no state | |");
    return;
  }
  ASSERT_TRUE(verdict.caught) << name << " (" << mutant.slip << ") differs from the reference on "
                              << harness::to_json(spec, *verdict.differs).dump()
                              << " but no state came out wrong in any draw";
  table().push_back("| " + name + " | " + std::string(spec.name()) + " | " + verdict.fault->rule + " | " +
                    verdict.fault->what + " |");
}

INSTANTIATE_TEST_SUITE_P(Mutants, KernelsView, testing::ValuesIn(judged_mutants()),
                         [](const auto& info) { return mutants::test_name_of(info.param); });

class PrintTable : public testing::Environment {
 public:
  void TearDown() override {
    if (table().empty()) return;
    std::cout << "\nThe catalogue judged by the kernels' view alone (seed " << kSeed << ", " << kValidCases
              << " valid workloads and " << kHugeCases << " huge batches each):\n"
              << "| mutant | spec | caught as | the first fault on a drawn workload |\n|---|---|---|---|\n";
    for (const auto& row : table()) std::cout << row << "\n";
    for (const auto& mutant : mutants::catalogue()) {
      if (judged(mutant)) continue;
      std::cout << "| " << mutant.implementation.name << " | " << mutant.implementation.spec->name() << " | "
                << (mutant.slip_of_validation ? "a slip of validation: no output to run" : "its spec has no kernels' view")
                << " | |\n";
    }
  }
};
const auto* const kTable = testing::AddGlobalTestEnvironment(new PrintTable);

}  // namespace
}  // namespace chunkmeta
