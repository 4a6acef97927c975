// What a spec's property suite gives the run loop: properties that draw cases
// with RapidCheck's public generators, say which workloads a case asks the
// implementation for, and judge the answers. The loop, batching, shrinking and
// reports are the engine's (run.hpp); the tables are properties/'s, per spec.
#pragma once

#include <rapidcheck/Random.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chunkmeta/harness/oracle.hpp"

namespace chunkmeta::engine {

using harness::Answer;
using harness::Counterexample;
using harness::Implementation;
using harness::Workload;

enum class Scope {
  implementation,  // run against the implementation under test
  library,         // checks the library itself; run once, not per implementation
};

// A generated case: a valid workload of the spec and the property's own
// parameters (a split point, a shift, per-row multiples, a broken rule and
// its salts, buffer slacks). A property clamps its parameters into what the
// workload allows when it uses them, so any shrink of either is still a case.
struct Case {
  Workload workload;
  std::vector<std::int64_t> parameters;
  friend bool operator==(const Case&, const Case&) = default;
};

struct Property {
  std::string name;      // a behaviour sentence in CamelCase, used as the test name
  std::string sentence;  // the same, for people
  Scope scope = Scope::implementation;
  bool sends_invalid_input = false;  // skipped for implementations that take valid workloads only
  // Share of the suite's case count this property runs (at least one case):
  // below 1 for cases that cost thousands of ordinary ones (huge batches).
  double case_share = 1.0;
  // Case number i of a run, from the run's i-th random split at RapidCheck's
  // size for it (0 to 100 over the run: small cases first).
  std::function<Case(const rc::Random& random, int size)> draw;
  // The workloads whose answers judging the case needs, in order (none for a library property).
  std::function<std::vector<Workload>(const Case&)> asks;
  // What the property checks beyond the truth: the engine first judges every
  // answer against the reference and the invariants (so a relation adds checks,
  // never replaces them), then calls this, if set, on answers that all held.
  // nullopt, or the counterexample (its workload, finding and related
  // workloads; the engine adds the rest).
  std::function<std::optional<Counterexample>(const Implementation&, const Case&, std::span<const Answer>)> judge;
  // The edge classes the case exercises, tallied over the cases that pass.
  std::function<std::vector<std::string>(const Case&)> classes;
};

// Edge classes listed in the summary: a group's names in order, each with its
// count (`always_shown`: also when no case met it), labelled with `prefix`.
struct ClassGroup {
  std::string prefix;
  std::vector<std::string> names;
  bool always_shown = false;
};

struct PropertyTable {
  const harness::Spec* spec = nullptr;
  std::vector<Property> properties;
  std::vector<ClassGroup> classes;
  // The edge classes of a valid workload (the first group's names): what a
  // stated domain leaves out (SuiteOptions::excluded_classes).
  std::function<std::vector<std::string>(const Workload&)> workload_classes;
  const Property* find(std::string_view name) const;
  // The names a domain can leave out, "a", "b", ... for messages.
  std::string edge_class_names() const;
  // The first of `names` that is not an edge class of this table, or nullopt.
  std::optional<std::string> unknown_edge_class(std::span<const std::string> names) const;
};

}  // namespace chunkmeta::engine
