// The link between the property bodies, which fail through fail_with(), and
// the run loop, which reports what they found: the state of the property
// running on this thread.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>

#include "chunkmeta/properties/suite.hpp"

namespace chunkmeta::properties::detail {

// Answers given while shrinking, shared by the properties of one suite run:
// they start from the same seed, so their shrinks try many of the same
// workloads, and a hang or a crash costs seconds each time it is asked again.
// (Shrinking already assumes a deterministic implementation.)
class AnswerMemo {
 public:
  const harness::Answer* find(const Workload& workload) const;
  void keep(const Workload& workload, const harness::Answer& answer);

 private:
  static constexpr std::size_t kBudgetBytes = std::size_t{256} << 20;  // then it starts again empty
  static constexpr std::size_t kLargestAnswerBytes = std::size_t{4} << 20;  // larger ones are not kept: copying costs too
  std::unordered_map<std::string, harness::Answer> answers_;
  std::size_t bytes_ = 0;
};

struct RunningCase {
  const Property* property = nullptr;
  // The counterexample of the latest failing case. RapidCheck runs its shrink
  // candidates after the first failure, and each failing one is smaller than
  // the last, so after a run this holds the smallest one found.
  std::optional<harness::Counterexample> latest_failure;
  // Told each failing case as it fails: the first, then each smaller one.
  std::function<void(harness::Counterexample&)> on_failure;
  AnswerMemo* memo = nullptr;  // set by run_suite
  // The pass that only records the workloads a run will ask for (to fetch their
  // answers in batches): bodies stop once they have asked, judging nothing.
  bool recording = false;
  // Set while a property shrinks through an implementation that answers in
  // batches: answers these shrink candidates ahead, into the memo, in one
  // round trip. RapidCheck still tries candidates in order, so the minimal
  // case is the same; only the round trips are fewer.
  std::function<void(std::span<const Workload>)> answer_ahead;
};

RunningCase& running_case();

}  // namespace chunkmeta::properties::detail
