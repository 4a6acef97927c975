// The judge: the one place that decides whether an implementation's answer
// for a workload is right, against its spec's reference and invariants. The
// run loop, the corpus replay, fuzz targets and the CLI all call it.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::harness {

// First place where two results differ. A missing value means that array ended.
struct Divergence {
  std::string array;
  std::int64_t index = 0;   // the entry (for a 2-column array: row * 2 + column)
  int columns = 1;          // of the array, to name a pair's row and column
  std::optional<std::int64_t> expected;
  std::optional<std::int64_t> actual;
};

struct Finding {
  FindingKind kind{};
  std::string summary;
  std::optional<Outcome> expected;
  std::optional<Outcome> actual;
  std::optional<Divergence> divergence;
  std::optional<InvariantViolation> invariant;
  std::string detail;  // a misbehaviour's evidence (stderr, the printed line), else empty
  bool idle = false;   // timed_out while idle: stuck (Misbehaviour::idle), confirmed as it is
  bool cut_past_the_timeout = false;  // timed_out past the timeout, by its size (Misbehaviour's): confirmed as it is
  // The kernels' view of the actual output (SPEC Part 8), for a spec that has
  // one: its first fault, or none when every state is the one it claims.
  bool states_judged = false;
  std::optional<kernel_view::Fault> state_fault{};
};

// A workload tied to the main one by a metamorphic relation ("left half", ...).
struct RelatedWorkload {
  std::string role;
  Workload workload;
  std::optional<Outcome> actual;
  const Spec* spec = nullptr;  // when it is another spec's (a relation across the family)
};

// What a failure leaves: the finding on a workload, and what reproduces it.
struct Counterexample {
  std::string implementation;
  const Spec* spec = nullptr;
  std::string property;  // the property, or "replay x.json" / "fuzz ..."
  Workload workload;     // the (shrunk) workload the finding is about
  Finding finding;
  std::vector<RelatedWorkload> related;
  std::optional<std::uint64_t> seed;  // of the run
  std::string reproduce;              // how to draw this case again ("seed S, case N")
  std::string rerun_command;          // re-runs the property that found it
  int cases_before_failure = 0;
  // How far shrinking got: "shrinking" while it runs, then "minimal" or "not
  // fully shrunk (why)"; empty where the workload is as found (a replay).
  std::string status;
  // An earlier property's report of the same bug, when this failure is it.
  std::string duplicate_of;
};

inline constexpr const char* kShrinking = "shrinking";
inline constexpr const char* kMinimal = "minimal";

Finding finding_of(const Misbehaviour& misbehaviour, std::optional<Outcome> expected);

std::optional<Divergence> first_divergence(const Spec& spec, const Arrays& expected, const Arrays& actual);

// Compares an outcome with the one it should equal (errors by code, field, index).
std::optional<Finding> compare_outcomes(const Spec& spec, const Outcome& expected, const Outcome& actual);

// What a spec's own checks say of a valid workload's outputs: its invariants,
// then the kernels' view (the first of each, or none).
OutputVerdict verdict_on(const Spec& spec, const Workload& workload, const Arrays& arrays);

// The differential oracle: `answer` against the spec's reference, then its
// invariants and the kernels' view (a spec not judged by its reference: the
// kernels' view alone).
std::optional<Finding> judge(const Spec& spec, const Workload& workload, const Answer& answer);
// The same with the reference's outcome already computed and, optionally, the
// verdict on it, which an identical answer shares (to judge several
// implementations of one workload cheaply).
std::optional<Finding> judge(const Spec& spec, const Workload& workload, const Answer& answer, const Outcome& expected,
                             const OutputVerdict* expected_verdict = nullptr);

// The writer's contract on caller buffers (Spec::write_into) for a valid
// workload, each buffer of the needed entries plus `slack[i]` (negative:
// short): it names the first short buffer (output_buffer_too_small, its
// field, the entries needed), or fills each buffer's needed prefix exactly
// like the reference and, where the spec's writer promises it, leaves every
// entry past it as it was. `refusal`, if
// given, receives the writer's error when it rightly refused.
std::optional<Finding> check_caller_buffers(const Spec& spec, const Workload& workload,
                                            std::span<const std::int64_t> slack, Error* refusal = nullptr);

// Runs `implementation` on `workload` and judges its answer.
std::optional<Finding> check_implementation(const Implementation& implementation, const Workload& workload);

// A failure of `kind` asked again the way `chunkmeta replay` asks it: `workload`
// alone, in a fresh process when the failure ends its process (ends_its_process:
// the door's restart). Its answer, and the finding on it: any failure fails
// again (a replay reports any), whatever its kind (a crash answered wrong, a
// skipped line unanswered alone); no finding, and the answer is a right one.
struct AskedAgain {
  Answer answer;
  std::optional<Finding> finding;
  bool failed() const { return finding.has_value(); }
};
AskedAgain ask_again_as_a_replay_does(const Implementation& implementation, const Workload& workload,
                                      FindingKind kind);

// Runs the oracle on every implementation; one counterexample per failure,
// labelled with `property` (e.g. "replay x.json", "fuzz differential").
std::vector<Counterexample> check_all(const Workload& workload, std::span<const Implementation> implementations,
                                      std::string_view property);
// The same for one implementation, for a fuzz target's one call per
// execution. With `reference_invariants` false, an answer equal to the
// reference's is not checked against the invariants again: they are the
// reference's own verdict, which executions that pick the reference check.
// A differing answer is always checked (its report names the broken rule).
std::vector<Counterexample> check_one(const Workload& workload, const Implementation& implementation,
                                      std::string_view property, bool reference_invariants);

std::ostream& operator<<(std::ostream& os, const Divergence& divergence);
std::ostream& operator<<(std::ostream& os, const Finding& finding);

}  // namespace chunkmeta::harness
