// The oracle: the one place that decides whether an implementation's output
// for a workload is right. Properties, fuzz targets and the CLI all call it.
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

#include "chunkmeta/chunkmeta.hpp"

namespace chunkmeta::harness {

using Outcome = Result<ChunkMetadata>;

// Anything that maps a workload to chunk metadata (or an error): the built-in
// implementations, test mutants, and later plugins and subprocesses.
struct Implementation {
  std::string name;
  std::string description;
  std::function<Outcome(const Workload&)> compute;
};

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

enum class FindingKind {
  mismatch,            // both succeeded, outputs differ from the reference
  invariant_violated,  // output breaks a SPEC invariant (even if equal to the reference)
  unexpected_error,    // valid workload refused
  accepted_invalid,    // invalid workload computed instead of rejected
  wrong_error,         // rejected, but not with the reference's code, field and index
  relation_broken,     // a metamorphic relation does not hold
};
std::string_view to_string(FindingKind kind) noexcept;

struct Finding {
  FindingKind kind{};
  std::string summary;
  std::optional<Outcome> expected;
  std::optional<Outcome> actual;
  std::optional<Divergence> divergence;
  std::optional<InvariantViolation> invariant;
};

// The SPEC's seven invariants, checked independently of the reference port.
// `workload` must be valid.
std::optional<InvariantViolation> check_invariants(const Workload& workload, const ChunkMetadata& result);

std::optional<Divergence> first_divergence(const ChunkMetadata& expected, const ChunkMetadata& actual);

// Compares an outcome with the one it should equal (errors by code, field, index, values).
std::optional<Finding> compare_outcomes(const Outcome& expected, const Outcome& actual);

// The differential oracle: `actual` against the reference procedure, then the invariants.
std::optional<Finding> judge(const Workload& workload, const Outcome& actual);
// The same with the reference's outcome already computed, and optionally the
// invariant verdict on it, which an identical `actual` shares (to judge
// several implementations of one workload cheaply).
std::optional<Finding> judge(const Workload& workload, const Outcome& actual, const Outcome& expected,
                             const std::optional<InvariantViolation>* expected_violation = nullptr);

// Runs `implementation` on `workload` and judges the outcome.
std::optional<Finding> check_implementation(const Implementation& implementation, const Workload& workload);

std::ostream& operator<<(std::ostream& os, const Divergence& divergence);
std::ostream& operator<<(std::ostream& os, const InvariantViolation& violation);
std::ostream& operator<<(std::ostream& os, const Finding& finding);

}  // namespace chunkmeta::harness
