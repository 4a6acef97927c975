// The properties every spec has, built for a spec from its generators: one
// body each, shared by the family (each judgement is the harness's oracle).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "chunkmeta/engine/property.hpp"
#include "chunkmeta/properties/generators.hpp"
#include "chunkmeta/properties/relations.hpp"

namespace chunkmeta::properties::builders {

using engine::Case;
using engine::Property;
using harness::Counterexample;
using harness::Finding;
using harness::Spec;

using Classes = std::function<std::vector<std::string>(const Workload&)>;

// A counterexample of `finding` on `workload` (the engine names the rest).
Counterexample counterexample(const Workload& workload, Finding finding);

// Draws a case from a generator of workloads: the workload alone.
std::function<Case(const rc::Random&, int)> workload_cases(rc::Gen<Workload> workloads);

// Judged by the oracle alone (the engine judges every answer against the reference and the invariants):
// these properties draw the cases, and have no check of their own.
Property matches_reference(std::string name, std::string sentence, rc::Gen<Workload> workloads,
                           Classes classes, double case_share = 1.0);
Property satisfies_invariants(rc::Gen<Workload> workloads, Classes classes);
// The split point is drawn apart from the workload, as a count of rows for the
// left part (clamped to the batch): drawn after it (gen::mapcat), it was drawn
// again after every shrink step of the workload.
Property split_and_join(const Spec& spec, rc::Gen<Workload> workloads, Classes classes, JoinResults join);
Property shift_invariance(const Spec& spec, std::string name, std::string sentence, rc::Gen<Workload> workloads,
                          Classes classes);
Property rejects_invalid(rc::Gen<InvalidCase> cases, std::function<InvalidWorkload(const InvalidCase&)> invalid_of);
// Library properties: validation names the broken rule, accepts every valid
// workload, and refuses exactly the workloads above the cap.
Property validate_names_rule(const Spec& spec, rc::Gen<InvalidCase> cases,
                             std::function<InvalidWorkload(const InvalidCase&)> invalid_of);
Property validate_accepts_valid(const Spec& spec, rc::Gen<Workload> workloads, Classes classes);
Property validate_applies_cap(const Spec& spec, rc::Gen<Workload> workloads, Classes classes);
// The library's writer into caller buffers (harness::check_caller_buffers),
// each buffer of the needed entries plus a drawn slack: mostly none, some
// room, or one to three entries short.
Property writes_into_any_buffer(const Spec& spec, rc::Gen<Workload> workloads, Classes classes);

// A relation to another computation of the family: for a case's workload and
// the implementation's answer, what the relation says the output is and the
// workload of the other spec it read (with that spec's reference outcome);
// nullopt when the relation has nothing to say (the other spec refuses: above
// its cap, which the differential property judges).
struct Prediction {
  harness::Outcome predicted;
  harness::RelatedWorkload related;
};
using Predict = std::function<std::optional<Prediction>(const Workload&, const harness::Outcome& actual)>;
// The property that the implementation's answer is what `predict` says,
// `relation` the finding's summary when it is not.
Property agrees_with_relation(const Spec& spec, std::string name, std::string sentence, std::string relation,
                              rc::Gen<Workload> workloads, Classes classes, Predict predict);

// Fails when `whole` differs from `predicted`, naming the related workloads
// (moved into the counterexample); a related workload refused is named first.
std::optional<Counterexample> expect_relation(const Spec& spec, const Workload& workload, const std::string& relation,
                                              std::vector<harness::RelatedWorkload> related,
                                              const harness::Outcome& predicted, const harness::Outcome& whole);

// The outcome an answer a property's judge is given holds. A judge never
// sees a misbehaviour (a crash, a hang, a malformed answer, a changed input):
// the engine judges every answer against the reference first
// (Round::against_the_truth), returns on any finding, and calls a property's
// judge only on answers that all held (Property::judge), so each is an Outcome.
const harness::Outcome& outcome_of(const harness::Answer& answer);

}  // namespace chunkmeta::properties::builders
