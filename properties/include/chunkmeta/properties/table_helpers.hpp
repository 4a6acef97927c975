// The names every spec folder's property table uses, and the hook each
// folder defines (specs/registry.hpp): its suites, one per spec.
#pragma once

#include "chunkmeta/properties/builders.hpp"
#include "chunkmeta/properties/tables.hpp"
#include "registry.hpp"

namespace chunkmeta::properties {

namespace tables {
namespace gen = rc::gen;
using builders::counterexample;
using engine::Case;
using engine::Property;
using harness::Answer;
using harness::Counterexample;
using harness::Finding;
using harness::FindingKind;
using harness::Implementation;
using harness::Outcome;
using harness::Spec;
}  // namespace tables

// What a spec's property table says in its own words; the rest is the house's.
struct TablePlan {
  std::string valid_sentence = "matches the reference, element for element, on every valid workload";
  std::string huge_sentence;        // MatchesReferenceOnHugeBatches: what its huge batches hold
  std::string invariants_sentence;  // which invariants satisfies_invariants checks
  // The spec's relations (metamorphic, and to other specs of the family), in order.
  std::vector<engine::Property> relations;
  // Invalid input before the invariants and the relations: a slip of the domain is
  // then met early (a 1,000-case run reaches it after 1,000 valid cases, not 5,000;
  // the mutant catalogue's 10,000-case runs after 10,000, not 20,000).
  bool invalid_first = true;
};

// A spec's table in the house's order: the reference on every valid workload,
// then on huge batches (second: a slip only they show is met seconds into a run
// through a slow door, not after the 5,000 cases of the properties below), then
// invalid input rejected, the invariants and the relations (plan.invalid_first;
// else the invariants, the relations, then invalid input), then validate's three
// properties and the writer into caller buffers; its workload and summary
// classes from `values`.
engine::PropertyTable house_table(const harness::Spec& spec, const ValueModel& values, rc::Gen<InvalidCase> invalid_cases,
                                  std::function<InvalidWorkload(const InvalidCase&)> invalid_of, TablePlan plan);

#define CHUNKMETA_DECLARE_SUITES_OF(folder) std::vector<Suite> suites_of_##folder();
CHUNKMETA_SPEC_FOLDERS(CHUNKMETA_DECLARE_SUITES_OF)
#undef CHUNKMETA_DECLARE_SUITES_OF

}  // namespace chunkmeta::properties
