// Each spec's property suite: its properties (differential, invariants,
// relations, invalid input, the library's own), drawn from its generators, with
// the edge classes its summary lists, and its value model. Each spec folder
// gives its suites (specs/registry.hpp); the run loop is the engine's.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "chunkmeta/engine/property.hpp"
#include "chunkmeta/properties/generators.hpp"

namespace chunkmeta::properties {

// What a spec's values are, as its folder generates them: valid workloads and
// the edge classes each hits, huge batches and theirs, invalid workloads and
// the rules they break. The generic tests (generators_test) read every spec's.
struct ValueModel {
  rc::Gen<Workload> valid;
  std::function<std::vector<std::string>(const Workload&)> classes;
  std::vector<std::string> all_classes;
  rc::Gen<Workload> huge;
  std::function<std::vector<std::string>(const Workload&)> huge_classes;
  std::vector<std::string> all_huge_classes;
  rc::Gen<InvalidWorkload> invalid;
  std::vector<std::string> all_rules;
};

// One spec's suite: its property table (table.spec names the spec) and its values.
struct Suite {
  engine::PropertyTable table;
  ValueModel values;
};

// The suite of a registered spec (every one has one: a test checks it).
const engine::PropertyTable& table_of(const harness::Spec& spec);
const ValueModel& values_of(const harness::Spec& spec);
// Whether a spec folder gave `spec` a suite.
bool has_suite(const harness::Spec& spec);

// The behaviour sentences of a spec's implementation properties, in order.
std::vector<std::string> implementation_property_names(const harness::Spec& spec);

}  // namespace chunkmeta::properties
