// Proves the harness finds bugs: every mutant in the catalogue must be caught
// by the property suite, with a shrunk counterexample of at most two rows that
// no further shrink step can simplify, and a report that replays the failure.
#include <gtest/gtest.h>

#include <iomanip>
#include <sstream>

#include "chunkmeta/engine/run.hpp"
#include "chunkmeta/harness/corpus.hpp"
#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/shrink.hpp"
#include "chunkmeta/properties/tables.hpp"
#include "mutants.hpp"

namespace chunkmeta {
namespace {

// Fixed so the catalogue's verdicts do not depend on the day's random seed.
constexpr std::uint64_t kSeed = 20261202;

std::vector<std::string>& table() {
  static std::vector<std::string> rows;
  return rows;
}

class Catalogue : public testing::TestWithParam<mutants::Mutant> {};

TEST_P(Catalogue, IsCaughtWithASmallReplayableCounterexample) {
  const auto& mutant = GetParam();
  engine::SuiteOptions options;
  options.seed = kSeed;
  options.default_cases = 10000;
  options.include_library = false;
  options.stop_at_first_failure = true;
  options.report_dir = testing::TempDir() + "chunkmeta-mutant-reports/" + mutant.implementation.name;
  const auto suite = engine::run_suite(properties::table_of(*mutant.implementation.spec), mutant.implementation, options);

  ASSERT_FALSE(suite.passed()) << mutant.implementation.name << " (" << mutant.slip << ") was not caught in "
                               << suite.cases() << " cases";
  ASSERT_NE(suite.first_failure(), nullptr);
  const auto& failed = *suite.first_failure();
  ASSERT_TRUE(failed.counterexample.has_value()) << failed.message;
  const auto& cx = *failed.counterexample;
  const harness::Workload& w = cx.workload;
  std::cout << harness::render(cx, failed.files);

  // As small as the slip allows: the fewest rows that can show it, and never more than 2 when that is 0-2.
  EXPECT_EQ(w.rows(), mutant.fewest_failing_rows) << "counterexample not shrunk to the fewest rows";
  if (failed.property == "MatchesReferenceOnEveryValidWorkload") {
    // Locally minimal: every simpler workload the shrinker knows passes.
    for (const auto& step : harness::shrink_steps(w)) {
      const harness::Workload simpler = harness::apply(w, step);
      EXPECT_FALSE(harness::check_implementation(mutant.implementation, simpler).has_value())
          << "a simpler workload still fails: " << harness::to_json(*mutant.implementation.spec, simpler).dump();
    }
  }

  // The report on disk replays the failure.
  ASSERT_TRUE(failed.files.has_value()) << failed.message;
  auto entry = harness::load_corpus_entry(failed.files->corpus_entry);
  ASSERT_TRUE(std::holds_alternative<harness::CorpusEntry>(entry)) << std::get<std::string>(entry);
  const auto& loaded = std::get<harness::CorpusEntry>(entry);
  EXPECT_EQ(loaded.workload, w);
  const bool replays = !harness::replay(loaded, std::span(&mutant.implementation, 1)).empty();
  // A relation failure may need its related workloads; the differential replay
  // still catches it unless the mutant is right on the main workload alone.
  if (failed.property == "MatchesReferenceOnEveryValidWorkload") {
    EXPECT_TRUE(replays);
  }

  int cases = 0;
  for (const auto& p : suite.properties) cases += p.cases;
  std::ostringstream row;
  row << "| " << mutant.implementation.name << " | " << failed.property << " | " << cases + 1 << " | "
      << failed.shrinks << " | " << w.rows() << " | `" << harness::to_json(*mutant.implementation.spec, w).dump() << "` |";
  table().push_back(row.str());
}

INSTANTIATE_TEST_SUITE_P(Mutants, Catalogue, testing::ValuesIn(mutants::catalogue()),
                         [](const auto& info) { return mutants::test_name_of(info.param); });

class PrintTable : public testing::Environment {
 public:
  void TearDown() override {
    if (table().empty()) return;
    std::cout << "\nMutant catalogue (seed " << kSeed << "):\n"
              << "| mutant | caught by | cases to catch | shrink steps | rows | shrunk counterexample |\n"
              << "|---|---|---|---|---|---|\n";
    for (const auto& row : table()) std::cout << row << "\n";
  }
};
const auto* const kTable = testing::AddGlobalTestEnvironment(new PrintTable);

}  // namespace
}  // namespace chunkmeta
