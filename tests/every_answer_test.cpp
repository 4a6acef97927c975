// No property's answers escape the reference: a function that turns wrong
// after its first calls (a warmed-up fast path, a cache taking over, a graph
// captured after N calls) is consistently wrong, so properties that compare
// its answers with each other (split and join, shifts) would hold. Every
// answer is judged against the reference and the invariants whatever the
// property (engine: Round::against_the_truth); these tests prove it for every
// spec and every property that asks anything.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <random>

#include "chunkmeta/engine/check.hpp"
#include "chunkmeta/engine/run.hpp"
#include "chunkmeta/harness/spec.hpp"
#include "chunkmeta/properties/tables.hpp"
#include "scratch_dir.hpp"

namespace chunkmeta {
namespace {

using harness::Answer;
using harness::Implementation;
using harness::Outcome;
using harness::Workload;

constexpr std::uint64_t kSeed = 20261207;

// Another answer than the reference's: an output with one entry moved, or
// the other side of the accept/refuse line.
Outcome wrong(const harness::Spec& spec, const Workload& w) {
  Outcome right = spec.reference(w);
  if (!right.ok()) return Outcome(harness::Arrays(spec.outputs().size()));
  harness::Arrays arrays = right.value();
  for (auto& array : arrays) {
    if (!array.empty()) {
      array.back() += array.back() == 0 ? 1 : -1;
      return Outcome(std::move(arrays));
    }
  }
  return Outcome(Error{ErrorCode::chunk_size_not_positive, "chunk_size", Error::kNoIndex, w.chunk_size});
}

// The reference for its first `right_calls` calls, wrong on every call after.
Implementation wrong_after(const harness::Spec& spec, long long right_calls, std::shared_ptr<std::atomic<long long>> calls) {
  return harness::in_process("wrong-after-" + std::to_string(right_calls), "the reference, then wrong", spec,
                             [&spec, right_calls, calls](const Workload& w) -> Answer {
                               if (++*calls <= right_calls) return spec.reference(w);
                               return wrong(spec, w);
                             });
}

// What a comparison with the reference reports (a relation's own finding is relation_broken).
bool judged_by_the_reference(harness::FindingKind kind) {
  using harness::FindingKind;
  return kind == FindingKind::mismatch || kind == FindingKind::accepted_invalid || kind == FindingKind::unexpected_error ||
         kind == FindingKind::wrong_error;
}

engine::SuiteOptions options_for(const std::string& name) {
  engine::SuiteOptions options;
  options.seed = kSeed;
  options.default_cases = 100;
  options.include_library = false;
  options.stop_at_first_failure = true;
  options.shrink_budget_seconds = 5;
  options.report_dir = scratch_dir("every-answer-" + name);
  return options;
}

struct SpecProperty {
  const harness::Spec* spec;
  std::string property;
};

std::vector<SpecProperty> every_property_that_asks() {
  std::vector<SpecProperty> all;
  for (const auto* spec : harness::all_specs()) {
    for (const auto& p : properties::table_of(*spec).properties) {
      if (p.scope == engine::Scope::implementation) all.push_back({spec, p.name});
    }
  }
  return all;
}

class EveryProperty : public testing::TestWithParam<SpecProperty> {};

TEST_P(EveryProperty, FailsAFunctionThatIsWrongAfterItsFirstCalls) {
  const auto& [spec, name] = GetParam();
  const auto& table = properties::table_of(*spec);
  const engine::Property& property = *table.find(name);
  auto calls = std::make_shared<std::atomic<long long>>(0);
  // Right on its first call only: the huge batches' property runs 2 cases.
  const Implementation impl = wrong_after(*spec, 1, calls);
  const auto result = engine::run_property(property, impl, options_for(std::string(spec->name()) + "-" + name), &table);
  ASSERT_FALSE(result.passed) << spec->name() << " " << name << " passed " << result.cases
                              << " cases of a function wrong after its first call (" << *calls << " calls)";
  ASSERT_TRUE(result.counterexample.has_value()) << result.message;
  EXPECT_TRUE(judged_by_the_reference(result.counterexample->finding.kind))
      << "judged as " << harness::to_string(result.counterexample->finding.kind) << ", not against the reference";
}

// The flood bound (Spec::most_answer_entries) never refuses a right answer: every workload any property
// asks, huge batches included, has a reference answer within three quarters of it.
TEST_P(EveryProperty, AsksNoWorkloadWhoseRightAnswerIsRefusedAsAFlood) {
  const auto& [spec, name] = GetParam();
  const auto& table = properties::table_of(*spec);
  auto largest = std::make_shared<double>(0);  // the largest share of the bound a right answer took
  const Implementation measuring = harness::in_process(
      "measuring", "the reference, measured against the flood bound", *spec, [spec = spec, largest](const Workload& w) -> Answer {
        Outcome right = spec->reference(w);
        if (right.ok()) {
          std::size_t entries = 0;
          for (const auto& output : right.value()) entries += output.size();
          *largest = std::max(*largest, static_cast<double>(entries) / static_cast<double>(spec->most_answer_entries(w)));
        }
        return right;
      });
  const auto result = engine::run_property(*table.find(name), measuring, options_for("flood-" + std::string(spec->name())), &table);
  EXPECT_TRUE(result.passed) << result.message;
  EXPECT_LT(*largest, 0.75) << "a right answer took " << *largest << " of the flood bound";
}

INSTANTIATE_TEST_SUITE_P(EverySpec, EveryProperty, testing::ValuesIn(every_property_that_asks()),
                         [](const testing::TestParamInfo<SpecProperty>& info) {
                           std::string name = std::string(info.param.spec->name()) + "_" + info.param.property;
                           for (auto& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

// The issue's own case: right for every call the reference properties make
// (counted on the reference), wrong after. The relations that follow must
// fail it, and on the reference's word.
class EverySpec : public testing::TestWithParam<const harness::Spec*> {};

TEST_P(EverySpec, IsNotVerifiedWhenItsFunctionTurnsWrongAfterTheReferenceProperties) {
  const harness::Spec& spec = *GetParam();
  const auto& table = properties::table_of(spec);
  auto options = options_for(std::string(spec.name()) + "-suite");
  // The calls of the properties before the first that judges more than the truth.
  auto counted = std::make_shared<std::atomic<long long>>(0);
  const Implementation counting = wrong_after(spec, std::numeric_limits<long long>::max(), counted);
  std::size_t first_relation = 0;
  for (; first_relation < table.properties.size(); ++first_relation) {
    const auto& p = table.properties[first_relation];
    if (p.scope != engine::Scope::implementation) continue;
    if (p.judge) break;
    ASSERT_TRUE(engine::run_property(p, counting, options, &table).passed) << p.name << " fails the reference";
  }
  if (first_relation == table.properties.size()) GTEST_SKIP() << spec.name() << " has no property beyond the truth";

  auto calls = std::make_shared<std::atomic<long long>>(0);
  const Implementation impl = wrong_after(spec, counted->load(), calls);
  const auto suite = engine::run_suite(table, impl, options);
  ASSERT_FALSE(suite.passed()) << spec.name() << ": VERIFIED a function wrong after " << *counted << " calls ("
                               << *calls << " calls made)";
  const auto* failed = suite.first_failure();
  ASSERT_NE(failed, nullptr);
  ASSERT_TRUE(failed->counterexample.has_value()) << failed->message;
  EXPECT_TRUE(judged_by_the_reference(failed->counterexample->finding.kind))
      << failed->property << " judged it as " << harness::to_string(failed->counterexample->finding.kind);
}

INSTANTIATE_TEST_SUITE_P(All, EverySpec, testing::ValuesIn(harness::all_specs()),
                         [](const testing::TestParamInfo<const harness::Spec*>& info) {
                           std::string name(info.param->name());
                           for (auto& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

// A failure seen once is never mislabelled: a function wrong on one call only
// (a race) is reported as found, "flaky", with both of its answers, and no
// "draws it again" promise.
TEST(AFailure, SeenOnceIsReportedFlakyWithBothAnswersAndHowOftenItWasAskedAgain) {
  const harness::Spec& spec = *harness::all_specs().front();
  const auto& table = properties::table_of(spec);
  auto calls = std::make_shared<std::atomic<long long>>(0);
  const Implementation once = harness::in_process("wrong-once", "wrong on call 40 only", spec,
                                                  [&spec, calls](const Workload& w) -> Answer {
                                                    return ++*calls == 40 ? wrong(spec, w) : spec.reference(w);
                                                  });
  const auto result = engine::run_property(table.properties.front(), once, options_for("flaky-once"), &table);
  ASSERT_FALSE(result.passed) << "a wrong answer, even once, is a failure";
  ASSERT_TRUE(result.counterexample.has_value());
  const auto& cx = *result.counterexample;
  EXPECT_EQ(cx.status.rfind("flaky (", 0), 0u) << cx.status;
  EXPECT_NE(cx.status.find("3 times"), std::string::npos) << cx.status;
  EXPECT_NE(cx.reproduce.find("it passed 3 of them"), std::string::npos) << cx.reproduce;
  ASSERT_FALSE(cx.related.empty());
  EXPECT_EQ(cx.related.front().workload, cx.workload);
  ASSERT_TRUE(cx.related.front().actual.has_value());
  EXPECT_TRUE(*cx.related.front().actual == spec.reference(cx.workload)) << "the answer when asked again";
  EXPECT_EQ(result.shrinks, 0) << "a failure that does not hold is not shrunk";
}

// A random slip (1 call in 30) does not lead the shrinker on: a step is taken
// only when its failure holds, and after a few that did not, shrinking stops.
TEST(AFailure, ThatStrikesAtRandomDoesNotLeadTheShrinkerOn) {
  const harness::Spec& spec = *harness::all_specs().front();
  const auto& table = properties::table_of(spec);
  auto random = std::make_shared<std::mt19937_64>(7);
  auto calls = std::make_shared<std::atomic<long long>>(0);
  const Implementation slips = harness::in_process("wrong-at-random", "wrong on 1 call in 30", spec,
                                                   [&spec, random, calls](const Workload& w) -> Answer {
                                                     ++*calls;
                                                     return (*random)() % 30 == 0 ? wrong(spec, w) : spec.reference(w);
                                                   });
  auto options = options_for("flaky-random");
  options.shrink_budget_seconds = 600;  // only the flakes may stop it
  const auto result = engine::run_property(table.properties.front(), slips, options, &table);
  ASSERT_FALSE(result.passed);
  ASSERT_TRUE(result.counterexample.has_value());
  EXPECT_NE(result.counterexample->status.find("flaky"), std::string::npos) << result.counterexample->status;
  EXPECT_LT(*calls, 5000) << "the shrinker followed random failures for " << result.shrinks << " steps";
}

// A crash is asked again when found, in a fresh process (as a replay asks it),
// and its shrink steps are not asked twice (each crash costs a process start):
// the case the shrink reached is asked again once it is done. A crash seen
// once is never mislabelled: one that never comes again is reported flaky.
Answer crashed() { return harness::Misbehaviour{harness::FindingKind::crashed, "the process was killed by signal 11", ""}; }

TEST(ACrash, SeenOnceIsReportedFlaky) {
  const harness::Spec& spec = *harness::all_specs().front();
  const auto& table = properties::table_of(spec);
  auto calls = std::make_shared<std::atomic<long long>>(0);
  const Implementation once = harness::in_process("crash-once", "crashes on call 40 only", spec,
                                                  [&spec, calls](const Workload& w) -> Answer {
                                                    return ++*calls == 40 ? crashed() : Answer(spec.reference(w));
                                                  });
  const auto result = engine::run_property(table.properties.front(), once, options_for("crash-once"), &table);
  ASSERT_FALSE(result.passed) << "a crash, even once, is a failure";
  ASSERT_TRUE(result.counterexample.has_value());
  EXPECT_EQ(result.counterexample->finding.kind, harness::FindingKind::crashed);
  EXPECT_EQ(result.counterexample->status.rfind("flaky (", 0), 0u) << result.counterexample->status;
  EXPECT_NE(result.counterexample->reproduce.find("it passed 3 of them"), std::string::npos);
}

// A crash that follows from the calls before it in its process (its 5th call,
// a leak) crashes on whatever case comes 5th, shrink candidates included: it is
// asked again as a replay asks the report, the workload it crashed on alone in
// a process started for it (after its 2 warm-up calls), where it passes. So it
// is flaky in every property, relations too (whose 3 asks in a fresh process
// would be its calls 3 to 5), never minimal.
TEST(ACrash, ThatFollowsFromTheCallsBeforeItInItsProcessIsReportedFlakyByEveryProperty) {
  const harness::Spec& spec = *harness::all_specs().front();
  const auto& table = properties::table_of(spec);
  constexpr int kWarmUpCalls = 2;  // what the subprocess door sends a process before any workload
  int properties_run = 0;
  for (const auto& property : table.properties) {
    if (property.scope != engine::Scope::implementation) continue;
    SCOPED_TRACE(property.name);
    auto calls_in_process = std::make_shared<std::atomic<int>>(kWarmUpCalls);
    auto restarts = std::make_shared<std::atomic<int>>(0);
    Implementation fifth = harness::in_process("crash-on-call-5", "crashes on its process's 5th call", spec,
                                               [&spec, calls_in_process](const Workload& w) -> Answer {
                                                 if (++*calls_in_process < 5) return spec.reference(w);
                                                 *calls_in_process = kWarmUpCalls;  // the process died: a new one's
                                                 return crashed();
                                               });
    fifth.restart = [calls_in_process, restarts] {
      *calls_in_process = kWarmUpCalls;
      ++*restarts;
    };
    fifth.rejects_invalid_input = false;
    const auto result = engine::run_property(property, fifth, options_for("crash-fifth"), &table);
    if (result.passed) continue;  // asked fewer than 5 times in all
    ++properties_run;
    ASSERT_TRUE(result.counterexample.has_value());
    const auto& cx = *result.counterexample;
    EXPECT_EQ(cx.finding.kind, harness::FindingKind::crashed);
    EXPECT_EQ(cx.status.rfind("flaky (", 0), 0u) << cx.status;
    EXPECT_NE(cx.status.find("in a fresh process"), std::string::npos) << cx.status;
    EXPECT_NE(cx.reproduce.find("it passed 3 of them"), std::string::npos) << cx.reproduce;
    EXPECT_GE(restarts->load(), 3) << "each time it was asked again, it was in a process of its own";
  }
  EXPECT_GE(properties_run, 5);
}

TEST(ACrash, ThatHoldsIsShrunkThenAskedAgainOnTheCaseItReached) {
  const harness::Spec& spec = *harness::all_specs().front();
  const auto& table = properties::table_of(spec);
  auto minimal_asked = std::make_shared<std::atomic<int>>(0);
  const Implementation crashes = harness::in_process("crash-from-2-rows", "crashes on 2 rows or more", spec,
                                                     [&spec, minimal_asked](const Workload& w) -> Answer {
                                                       if (w.rows() < 2) return spec.reference(w);
                                                       if (w.rows() == 2) ++*minimal_asked;
                                                       return crashed();
                                                     });
  const auto result = engine::run_property(table.properties.front(), crashes, options_for("crash-holds"), &table);
  ASSERT_FALSE(result.passed);
  ASSERT_TRUE(result.counterexample.has_value());
  const auto& cx = *result.counterexample;
  EXPECT_EQ(cx.finding.kind, harness::FindingKind::crashed);
  EXPECT_EQ(cx.status, harness::kMinimal);
  EXPECT_EQ(cx.workload.rows(), 2u);
  EXPECT_GT(result.shrinks, 0);
  EXPECT_NE(cx.reproduce.find("draws it again"), std::string::npos) << cx.reproduce;
  EXPECT_GE(minimal_asked->load(), 2) << "the case reported failed when asked again, fresh";
}

}  // namespace
}  // namespace chunkmeta

namespace chunkmeta {
namespace {

// A corpus of one Mamba entry of two rows, in a scratch folder of this name.
std::filesystem::path one_entry_corpus(const std::string& name) {
  const auto corpus = scratch_dir(name);
  std::filesystem::create_directories(corpus);
  std::ofstream entry(corpus / "entry.json");
  entry << R"({"chunk_size":4,"num_computed_tokens":[3,0],"query_start_loc":[0,5,9]})";
  return corpus;
}

// The corpus replay asks again as the run loop does: a corpus entry that fails
// once (a wrong answer, or a crash, asked again in a fresh process) is
// reported as found, flaky, not shrunk as if it failed each time.
TEST(ACorpusEntry, ThatFailsOnceIsReportedFlakyWhateverTheFailure) {
  const harness::Spec& spec = *harness::all_specs().front();
  const auto& table = properties::table_of(spec);
  const auto corpus = one_entry_corpus("flaky-corpus");
  for (const bool crash : {false, true}) {
    SCOPED_TRACE(crash ? "a crash" : "a wrong answer");
    auto calls = std::make_shared<std::atomic<long long>>(0);
    Implementation once = harness::in_process("fails-once", "fails on its first call only", spec,
                                              [&spec, calls, crash](const Workload& w) -> Answer {
                                                if (++*calls > 1) return spec.reference(w);
                                                return crash ? crashed() : Answer(wrong(spec, w));
                                              });
    auto restarts = std::make_shared<std::atomic<int>>(0);
    once.restart = [restarts] { ++*restarts; };
    engine::CheckOptions options;
    options.suite = options_for(crash ? "flaky-corpus-crash" : "flaky-corpus-wrong");
    options.corpus = {corpus};
    options.generate = false;
    const auto result = engine::check(table, {once}, options);
    ASSERT_EQ(result.replay.reported.size(), 1u);
    const auto& cx = result.replay.reported.front().counterexample;
    EXPECT_EQ(cx.status.rfind("flaky (", 0), 0u) << cx.status;
    EXPECT_EQ(cx.workload.rows(), 2u) << "reported as found, not shrunk";
    EXPECT_EQ(cx.status.find("fresh process") != std::string::npos, crash) << cx.status;
    EXPECT_EQ(restarts->load(), crash ? 3 : 0) << "a crash is asked again in a fresh process each time";
    ASSERT_FALSE(cx.related.empty()) << "the right answer it gave when asked again, beside the failing one";
    EXPECT_EQ(cx.related.front().workload, cx.workload);
    EXPECT_TRUE(cx.related.front().actual == std::optional<Outcome>(spec.reference(cx.workload))) << "its right answer";
    EXPECT_NE(cx.related.front().role.find("right 3 of them"), std::string::npos) << cx.related.front().role;
    EXPECT_EQ(cx.related.front().role.find("fresh process") != std::string::npos, crash) << cx.related.front().role;
  }
}

// A corpus entry is flaky exactly when one of its asks passes: a failure of another kind on an ask (a crash,
// then a wrong answer; a wrong answer, then a raise) still fails, and its right answer is never one that failed.
TEST(ACorpusEntry, IsFlakyExactlyWhenAnAskPassesWhateverKindEachFailureIs) {
  const harness::Spec& spec = *harness::all_specs().front();
  const auto& table = properties::table_of(spec);
  const auto corpus = one_entry_corpus("flaky-or-not-corpus");
  enum class Then { right, wrong, crash, raise };
  const auto answer = [&spec](Then how, const Workload& w) -> Answer {
    switch (how) {
      case Then::right: return spec.reference(w);
      case Then::wrong: return wrong(spec, w);
      case Then::crash: return crashed();
      case Then::raise: return harness::Misbehaviour{harness::FindingKind::raised, "raised ValueError: boom", ""};
    }
    return spec.reference(w);
  };
  const char* const names[] = {"right", "wrong", "crash", "raise"};
  for (const Then first : {Then::wrong, Then::crash}) {
    for (const Then later : {Then::right, Then::wrong, Then::crash, Then::raise}) {
      if (later == first) continue;
      for (const int failing_asks : {1, 2}) {
        SCOPED_TRACE(std::string(names[static_cast<int>(first)]) + ", then " + names[static_cast<int>(later)] + " after " +
                     std::to_string(failing_asks) + " failing asks");
        auto calls = std::make_shared<std::atomic<long long>>(0);
        const Implementation impl = harness::in_process(
            "first-then", "fails one way, then another or not at all", spec,
            [&answer, calls, first, later, failing_asks](const Workload& w) -> Answer {
              return ++*calls <= failing_asks ? answer(first, w) : answer(later, w);
            });
        engine::CheckOptions options;
        options.suite = options_for("flaky-or-not");
        options.corpus = {corpus};
        options.generate = false;
        const auto result = engine::check(table, {impl}, options);
        ASSERT_EQ(result.replay.reported.size(), 1u);
        const auto& cx = result.replay.reported.front().counterexample;
        const bool flaky = later == Then::right;
        EXPECT_EQ(cx.status.rfind("flaky (", 0) == 0, flaky) << cx.status;
        const bool right_shown = !cx.related.empty() && cx.related.front().role.find("right") != std::string::npos;
        EXPECT_EQ(right_shown, flaky) << "a right answer is shown exactly when one came";
        if (right_shown) {
          EXPECT_TRUE(cx.related.front().actual == std::optional<Outcome>(spec.reference(cx.workload)));
        }
      }
    }
  }
}

}  // namespace
}  // namespace chunkmeta
