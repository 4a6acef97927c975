// The oracle: the one place that decides whether an implementation's output
// for a workload is right. Properties, fuzz targets and the CLI all call it.
#pragma once

#include <array>
#include <functional>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "chunkmeta/chunkmeta.hpp"

namespace chunkmeta::harness {

using Outcome = Result<ChunkMetadata>;

enum class FindingKind {
  mismatch,            // both succeeded, outputs differ from the reference
  invariant_violated,  // output breaks a SPEC invariant (even if equal to the reference)
  unexpected_error,    // valid workload refused
  accepted_invalid,    // invalid workload computed instead of rejected
  wrong_error,         // rejected, but not with the reference's code, field and index
  relation_broken,     // a metamorphic relation does not hold
  // No usable answer at all (implementations outside this process, and plugins):
  crashed,             // the process exited or was killed before answering
  timed_out,           // no answer within the per-case timeout
  malformed_output,    // the answer is not an outcome (not JSON, wrong shape, broken ABI)
  missing_output,      // the answer to this workload was skipped (a later one came first)
  raised,              // the implementation raised an exception instead of answering
};
std::string_view to_string(FindingKind kind) noexcept;
bool is_misbehaviour(FindingKind kind) noexcept;  // crashed ... raised

// An implementation that gave no usable answer; `kind` is one of the last five above.
struct Misbehaviour {
  FindingKind kind = FindingKind::crashed;
  std::string summary;  // one sentence: "the process was killed by signal 11 (SIGSEGV)"
  std::string detail;   // evidence: the end of its stderr, the line it printed, a traceback
};

// What an implementation gives back for one workload.
using Answer = std::variant<Outcome, Misbehaviour>;

// Anything that maps a workload to chunk metadata (or an error): the built-in
// implementations, test mutants, plugins and subprocesses.
struct Implementation {
  std::string name;
  std::string description;
  std::function<Answer(const Workload&)> compute;
  // Optional: answers many workloads in one go, in order (a subprocess keeps
  // its pipe full). The property suite uses it to prefetch a run's answers.
  // It may answer a prefix only, ending with a misbehaviour (a crash).
  std::function<std::vector<Answer>(std::span<const Workload>)> compute_batch;
  // False for an implementation whose contract covers valid workloads only
  // (an engine function): invalid inputs, and valid ones above the library's
  // size cap, are then not sent to it.
  bool rejects_invalid_input = true;
};

// Answers for every workload, in order: through compute_batch where the
// implementation has it (sending again what a crash left unanswered).
std::vector<Answer> answer_all(const Implementation& implementation, std::span<const Workload> workloads);

// An implementation in this process: one call per workload, invalid input included.
Implementation in_process(std::string name, std::string description,
                          std::function<Answer(const Workload&)> compute);

// First place where two results differ. A missing value means that array ended.
struct Divergence {
  std::string array;
  std::int64_t index = 0;
  std::optional<std::int64_t> expected;
  std::optional<std::int64_t> actual;
};

// A broken SPEC invariant (numbered as in SPEC.md), with the row and chunk at fault.
struct InvariantViolation {
  int number = 0;
  std::string name;
  std::int64_t row = -1;    // -1: not specific to a row
  std::int64_t chunk = -1;  // -1: not specific to a chunk
  std::string detail;
};

struct Finding {
  FindingKind kind{};
  std::string summary;
  std::optional<Outcome> expected;
  std::optional<Outcome> actual;
  std::optional<Divergence> divergence;
  std::optional<InvariantViolation> invariant;
  std::string detail;  // a misbehaviour's evidence (stderr, the printed line), else empty
};

Finding finding_of(const Misbehaviour& misbehaviour, std::optional<Outcome> expected);

// The SPEC's seven invariants, checked independently of the reference port.
// `workload` must be valid.
std::optional<InvariantViolation> check_invariants(const Workload& workload, const ChunkMetadata& result);

std::optional<Divergence> first_divergence(const ChunkMetadata& expected, const ChunkMetadata& actual);

// Compares an outcome with the one it should equal (errors by code, field, index, values).
std::optional<Finding> compare_outcomes(const Outcome& expected, const Outcome& actual);

// The differential oracle: `actual` against the reference procedure, then the invariants.
std::optional<Finding> judge(const Workload& workload, const Answer& actual);
// The same with the reference's outcome already computed, and optionally the
// invariant verdict on it, which an identical `actual` shares (to judge
// several implementations of one workload cheaply).
std::optional<Finding> judge(const Workload& workload, const Answer& actual, const Outcome& expected,
                             const std::optional<InvariantViolation>* expected_violation = nullptr);

// Runs `implementation` on `workload` and judges the outcome.
std::optional<Finding> check_implementation(const Implementation& implementation, const Workload& workload);

// fast_into's contract on caller buffers of the needed sizes plus `slack`
// (cu_chunk_seqlen, seq_idx, last_chunk_indices; negative: short): it names
// the first short buffer (output_buffer_too_small, its field, the size
// needed), or fills each buffer's needed prefix exactly like the reference.
// `workload` must be valid. `refusal`, if given, receives the error fast_into
// named a short buffer with (for callers that also check how it prints).
std::optional<Finding> check_fast_into_buffers(const Workload& workload, const std::array<std::int64_t, 3>& slack,
                                               Error* refusal = nullptr);

std::ostream& operator<<(std::ostream& os, const Divergence& divergence);
std::ostream& operator<<(std::ostream& os, const InvariantViolation& violation);
std::ostream& operator<<(std::ostream& os, const Finding& finding);

}  // namespace chunkmeta::harness
