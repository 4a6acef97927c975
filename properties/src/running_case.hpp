// The link between the property bodies, which fail through fail_with(), and
// the run loop, which reports what they found: the state of the property
// running on this thread.
#pragma once

#include <functional>
#include <optional>

#include "chunkmeta/properties/suite.hpp"

namespace chunkmeta::properties::detail {

struct RunningCase {
  const Property* property = nullptr;
  // The counterexample of the latest failing case. RapidCheck runs its shrink
  // candidates after the first failure, and each failing one is smaller than
  // the last, so after a run this holds the smallest one found.
  std::optional<harness::Counterexample> latest_failure;
  // Told each failing case as it fails: the first, then each smaller one.
  std::function<void(const harness::Counterexample&)> on_failure;
};

RunningCase& running_case();

}  // namespace chunkmeta::properties::detail
