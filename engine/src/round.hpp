// One property on one implementation for one seed (a Round): the cases
// drawn and answered (round_search.cpp, round_answers.cpp), then the shrink of
// the first failure and its report (round_shrink.cpp). run_loop.cpp runs the
// rounds of a suite.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "chunkmeta/engine/run.hpp"
#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/shrink.hpp"
#include "shrink_watch.hpp"

namespace chunkmeta::engine::detail {

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Answers given while shrinking, shared by the properties of one suite run:
// they start from the same seed, so their shrinks ask for many of the same
// workloads, and a hang or a crash costs seconds each time it is asked again.
// (Shrinking already assumes a deterministic implementation.)
class AnswerMemo {
 public:
  const Answer* find(const harness::Spec& spec, const Workload& workload) const {
    const auto it = answers_.find(harness::request_line(0, spec, workload));
    return it == answers_.end() ? nullptr : &it->second;
  }
  void keep(const harness::Spec& spec, const Workload& workload, const Answer& answer) {
    std::string key = harness::request_line(0, spec, workload);
    std::size_t bytes = 2 * key.size() + 256;
    if (const auto* outcome = std::get_if<harness::Outcome>(&answer); outcome != nullptr && outcome->ok())
      bytes += 4 * spec.entries(outcome->value());
    if (bytes > kLargestAnswerBytes) return;  // copying it costs more than asking again
    if (bytes_ + bytes > kBudgetBytes) {
      answers_.clear();
      bytes_ = 0;
    }
    // A later answer replaces an earlier one: a timeout that did not hold, a failure that did not fail
    // again. (Erased and made anew: GCC 12 takes a variant's copy-assignment for a use of uninitialized memory.)
    const bool replaced = answers_.erase(key) > 0;
    answers_.emplace(std::move(key), answer);
    if (!replaced) bytes_ += bytes;
  }

 private:
  static constexpr std::size_t kBudgetBytes = std::size_t{256} << 20;  // then it starts again empty
  static constexpr std::size_t kLargestAnswerBytes = std::size_t{4} << 20;
  std::unordered_map<std::string, Answer> answers_;
  std::size_t bytes_ = 0;
};

// A failing case: its counterexample as the property judged it.
struct Failure {
  Case found;
  Counterexample counterexample;
  int index = -1;               // its case number in the run (as the search found it)
  std::vector<Answer> answers;  // the answers judged, when one timed out: a confirmation asks those again
};

// One property on one implementation for one seed: the cases, then the
// shrink of the first failure.
class Round {
 public:
  Round(const Property& property, const Implementation& impl, const SuiteOptions& options,
        const PropertyTable* table, AnswerMemo* memo, const std::vector<Counterexample>* known)
      : property_(property), impl_(impl), spec_(*impl.spec), options_(options), table_(table), memo_(memo),
        known_(known) {}

  PropertyResult run(std::uint64_t seed, int cases);

 private:
  // --- Answers ---

  // What the implementation is sent for `ask`: a valid-only implementation
  // (an engine function) is not sent what the reference refuses (invalid
  // input, or above the size cap); it is answered with the refusal.
  std::optional<Answer> not_sent(const Workload& ask) const;

  // Answers to `asks`, in order, one call each (memoised while shrinking).
  std::vector<Answer> answer_one_by_one(std::span<const Workload> asks, bool shrinking);

  // The same in round trips through compute_batch, for what is not known or
  // refused. `decided`, told after each round trip how many answers from the
  // front are in, may end the fetching there: the rest of a batch that a
  // crash or a hang cut short is then not sent again when what is in decides.
  // Thread-safe against nothing: one batch at a time, never alongside another call.
  // Returns how many workloads were sent.
  std::size_t answer_in_batch(std::span<const Workload> asks, bool shrinking, std::vector<std::optional<Answer>>& answers,
                              const std::function<bool(std::size_t)>& decided = nullptr);

  bool batches() const { return options_.prefetch && static_cast<bool>(impl_.compute_batch); }

  // --- Timeouts re-confirmed ---

  static bool timed_out(const Answer& answer);

  // Whether an earlier property of this run reported a timeout, confirmed: the
  // verdict is then NOT VERIFIED whatever comes, and a re-confirmation (4 s or
  // more each) would only cost time, property after property of a real hang.
  bool timeout_confirmed_before() const;

  // A timeout counts only when it holds: the workloads whose answers timed
  // out are asked once more, with the ordinary limit (a stall of the machine
  // is over by then) or a longer one (the door's
  // harness::CallBudget::confirmation_limit, where a second timeout is the
  // finding and says it was asked twice). An answer then is judged like any
  // other, and the call is counted as slow.
  enum class Limit { ordinary, longer };
  void ask_timeouts_again(std::span<const Workload> asks, std::vector<Answer>& answers, Limit limit);
  // A confirmation's answer, or, when it is right but came far slower than
  // its size predicts (Implementation::cost_growth), a superlinear_cost finding.
  Answer judged_for_its_time(const Workload& ask, Answer answer) const;

  // --- Generation ---

  // Cases drawn together, their asks, and (through a batching implementation)
  // their answers, fetched on another thread while the cases before are judged.
  // The fetch stops at the first misbehaviour (the case it belongs to fails:
  // what comes after is not needed, and through a crashing or hanging
  // implementation each answer could cost a restart or a timeout), and when
  // the chunk is cancelled (a case before it failed); the answers not fetched
  // are asked for one by one if they are needed after all.
  struct Chunk {
    std::vector<int> index;  // per case, its number in the run
    std::vector<Case> cases;
    std::vector<std::size_t> first_ask;  // per case, and one past the last
    std::vector<Workload> asks;
    std::atomic<bool> cancelled{false};
    std::future<std::vector<std::optional<Answer>>> in_flight;
    std::vector<std::optional<Answer>> answers;
  };

  // On the heap: a chunk's answers are fetched from its asks on another
  // thread, which must find them where they were while the chunk is handed on.
  // The run's next `count` cases, but those asking for a workload outside
  // the stated domain (tallied, never sent); fewer if none is left.
  std::unique_ptr<Chunk> draw_chunk(rc::Random& random, int& next_case, int count, int cases);

  void land(Chunk* chunk);

  void cancel_and_land(Chunk* chunk);

  // The run's cases from case `from` on, judged in order; the first failure, or nullopt.
  std::optional<Failure> search(std::uint64_t seed, int cases, int from, detail::ShrinkWatch& watch);

  // The excluded class one of these workloads is in, or "" (SuiteOptions::excluded_classes).
  std::string excluded(std::span<const Workload> asks) const;
  std::string excluded(const Case& c) const;

  void count_passed(const Case& c);

  // The verdict on a case from the answers to its asks (property_.asks(c),
  // which every caller holds): every answer against the reference and the
  // invariants (against_the_truth), then the property's own judgement.
  std::optional<Counterexample> judge(const Case& c, std::span<const Workload> asks, std::span<const Answer> answers);
  std::optional<Counterexample> against_the_truth(const Case& c, std::span<const Workload> asks,
                                                  std::span<const Answer> answers) const;

  // --- Shrinking ---

  // A candidate made by one step from the case: of its workload (the shared
  // shrinker's steps) or of one parameter (toward 0, halving the distance).
  struct Step {
    bool of_workload = true;
    harness::ShrinkStep workload_step;
    std::size_t parameter = 0;
    std::int64_t value = 0;
  };

  static std::vector<std::int64_t> towards_zero(std::int64_t x);

  static std::vector<Step> steps_of(const Case& c, const std::optional<Step>& accepted);

  static Case apply(const Case& c, const Step& step);

  // The first failing candidate of `candidates`, in order, with its verdict.
  // `only`: a candidate fails only with a finding of this kind.
  std::optional<std::pair<std::size_t, Counterexample>> first_failing(std::span<const Case> candidates,
                                                                       std::optional<harness::FindingKind> only = {});

  // The failure shrunk by the greedy loop (harness/greedy_shrink.hpp) over
  // its case's steps, in batches of up to 64 candidates.
  Failure shrink(Failure failure, detail::ShrinkWatch& watch);

  // A timeout counts only once asked again with a longer limit
  // (ask_timeouts_again): not when the door cannot ask again, nor once a
  // timeout of this run was confirmed (the verdict is NOT VERIFIED already).
  bool unconfirmed_timeout(const Counterexample& cx) const;

  // The failure as judged once its timeouts are asked again (its answers as
  // the search kept them, else asked through the shrink's memo), or nullopt
  // when it then answers correctly: a stall, counted as a slow call.
  std::optional<Failure> asked_again(Failure failure);

  // A timeout is confirmed once, on the smallest case the shrink reached: a
  // real hang pays the long limit once, not for the case found and again for
  // the minimal one. If the minimal one answers, the shrink followed a stall
  // of the machine: the case found is asked again, and reported (not fully
  // shrunk) if it holds. nullopt: nothing held, the failure is withdrawn.
  std::optional<Failure> confirmed(const Failure& found, Failure minimal, detail::ShrinkWatch& watch);

  // --- Failures that must fail again ---

  // A failure counts once it fails again: shrinking assumes a deterministic
  // implementation, and a report says "reproduce". A race, a cache or a
  // random slip fails once and passes when asked again: the case found is
  // asked again (reproduces(): fresh, never from the memo), and each shrink
  // step taken is asked once more before it is taken, but for failures that
  // end their process (below). Timeouts have their own confirmation (confirmed()).
  // Smaller cases that failed once and passed when asked again before the
  // shrink stops following random failures.
  static constexpr int kMostFlakes = 3;
  bool interrupted() const;  // stop_requested said so
  // A crash, or a skipped answer (after which the program is killed): each
  // costs a process start, so a shrink step that crashes is not asked twice;
  // the case the shrink reached is asked again once it is done
  // (confirmed_after_the_shrink), since a crash that follows from the calls
  // before it (every 7th call) crashes on whichever candidate comes at the
  // wrong moment (harness::ends_its_process).
  static bool asked_again_when_shrinking(const Counterexample& cx);
  // The shrunk failure of a crash confirmed: `held` when it fails again, else
  // the case found (which failed again when it was found), not fully shrunk.
  Failure confirmed_after_the_shrink(const Failure& found, Failure held, detail::ShrinkWatch& watch);
  int passed_when_asked_again_ = 0;  // reproduces(): how often the case found passed, for its "reproduce"
  // The case `c` asked once more in the process that runs (never from the memo; the memo keeps the
  // new answers): its verdict.
  std::optional<Counterexample> case_fails_again(const Case& c);
  // A failure asked again as it must hold: the case's asks (any failure of
  // the case); or, for one that ends its process, the workload it ended on
  // alone, in a process started for it, ending it the same way: as a replay
  // asks the report. A crash that follows from the calls before it (the
  // process's 5th call, the 3rd ask of a relation) then passes, and is
  // flaky, never minimal. `right`: its answer to the finding's workload when
  // that was right. True too once the run is interrupted (the doors then
  // answer with the reference: asking proves nothing).
  bool fails_again(const Failure& failure, std::optional<harness::Outcome>* right = nullptr);
  // The found failure asked again (detail::passes_when_asked_again): false
  // when it passed (a failure by chance or by what ran before: a shrink
  // would follow it astray); it is then reported as found, its status
  // "flaky (...)", with the answer it gave when it passed.
  bool reproduces(Failure& found, detail::ShrinkWatch& watch);

  // The earlier properties' minimal reports (not duplicates themselves).
  std::vector<const Counterexample*> earlier_reports() const;

  // This property's failure on an earlier property's report, before any
  // search: that bug again (unless it is a timeout still to be confirmed).
  // The report's workload is the case, with the parameters of this
  // property's first case set to 0 (a shrink of any case is still a case).
  std::optional<Failure> earlier_bug(std::uint64_t seed);

  // The same bug as an earlier property's minimal report: this property
  // fails on that report's workload too (its own parameters kept), so that
  // workload is this failure's report, without shrinking it again.
  std::optional<Failure> known_bug(const Failure& failure);

  // The earlier report this minimal failure is (the same workload, failing
  // the same way), or "": under distinct_bugs, the only test of sameness.
  std::string shrunk_to_earlier(const Counterexample& cx) const;

  // Shrinks a failure and writes its report, as it shrinks and once done.
  // False when it did not hold (a timeout that answered when asked again):
  // its report is withdrawn and the case counts as passed.
  bool report(Failure& found, std::uint64_t seed, detail::ShrinkWatch& watch);

  std::string rerun_command(std::uint64_t seed) const;

  // The most a timeout's shrink takes (its confirmation comes after): the first report and a small
  // one within about 10 s when every call that hangs costs seconds.
  static constexpr double kMostSecondsShrinkingATimeout = 6;
  static constexpr int kLargestBatch = 256;  // ~1 s of answers through Python at 4 ms each
  static constexpr int kMostSkipped = 10000;  // draws in a row outside the stated domain before the run gives up

  const Property& property_;
  const Implementation& impl_;
  const harness::Spec& spec_;
  const SuiteOptions& options_;
  const PropertyTable* table_;  // for the stated domain (nullptr: none)
  AnswerMemo* memo_;
  const std::vector<Counterexample>* known_;
  PropertyResult result_;
  bool domain_exhausted_ = false;
};

}  // namespace chunkmeta::engine::detail
