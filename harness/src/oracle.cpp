#include "chunkmeta/harness/oracle.hpp"

#include "chunkmeta/harness/printable.hpp"

#include <algorithm>
#include <ostream>
#include <sstream>

namespace chunkmeta::harness {

std::optional<Divergence> first_divergence(const Spec& spec, const Arrays& expected, const Arrays& actual) {
  const auto outputs = spec.outputs();
  for (std::size_t a = 0; a < outputs.size(); ++a) {
    static const Int32Array kNone;
    const Int32Array& want = a < expected.size() ? expected[a] : kNone;
    const Int32Array& got = a < actual.size() ? actual[a] : kNone;
    // Equal arrays are the common case: one memcmp, checked by ASan as a range.
    if (std::equal(want.begin(), want.end(), got.begin(), got.end())) continue;
    const std::size_t common = std::min(want.size(), got.size());
    Divergence d{std::string(outputs[a].name), static_cast<std::int64_t>(common), outputs[a].columns, std::nullopt,
                 std::nullopt};
    for (std::size_t i = 0; i < common; ++i) {
      if (want[i] != got[i]) {
        d.index = static_cast<std::int64_t>(i);
        d.expected = want[i];
        d.actual = got[i];
        return d;
      }
    }
    if (common < want.size()) d.expected = want[common];
    if (common < got.size()) d.actual = got[common];
    return d;
  }
  return std::nullopt;
}

std::optional<Finding> compare_outcomes(const Spec& spec, const Outcome& expected, const Outcome& actual) {
  const auto finding = [&](FindingKind kind, std::string summary) {
    return Finding{kind, std::move(summary), expected, actual, std::nullopt, std::nullopt, {}};
  };
  if (!expected.ok()) {
    if (actual.ok()) return finding(FindingKind::accepted_invalid, "computed a result for input that must be rejected");
    if (!actual.error().same_rule(expected.error())) return finding(FindingKind::wrong_error, "rejected with the wrong error");
    return std::nullopt;
  }
  if (!actual.ok()) return finding(FindingKind::unexpected_error, "refused a valid workload");
  if (auto divergence = first_divergence(spec, expected.value(), actual.value())) {
    Finding f = finding(FindingKind::mismatch, "output differs from the expected output");
    f.divergence = std::move(divergence);
    return f;
  }
  return std::nullopt;
}

Finding finding_of(const Misbehaviour& misbehaviour, std::optional<Outcome> expected) {
  // The one way an implementation's own words enter a finding: made printable here (printable.hpp).
  Finding finding{misbehaviour.kind, printable_line(misbehaviour.summary), std::move(expected), std::nullopt,
                  std::nullopt,      std::nullopt,         printable_lines(misbehaviour.detail)};
  finding.idle = misbehaviour.idle;
  finding.cut_past_the_timeout = misbehaviour.cut_past_the_timeout;
  return finding;
}

std::optional<Finding> judge(const Spec& spec, const Workload& workload, const Answer& answer) {
  return judge(spec, workload, answer, spec.reference(workload));
}

OutputVerdict verdict_on(const Spec& spec, const Workload& workload, const Arrays& arrays) {
  return spec.verdict_on(workload, arrays);
}

std::optional<Finding> judge(const Spec& spec, const Workload& workload, const Answer& answer, const Outcome& expected,
                             const OutputVerdict* expected_verdict) {
  // A formulation's "reference" output is one answer among many right ones: never shown as the expected one.
  const bool hides_expected = !spec.judged_by_reference() && expected.ok();
  if (const auto* misbehaviour = std::get_if<Misbehaviour>(&answer)) {
    return finding_of(*misbehaviour, hides_expected ? std::nullopt : std::optional(expected));
  }
  const Outcome& actual = std::get<Outcome>(answer);
  // A formulation judged by the kernels' view alone has no outputs to compare with: only the domain's verdict.
  const bool by_reference = spec.judged_by_reference() || !expected.ok() || !actual.ok();
  auto finding = by_reference ? compare_outcomes(spec, expected, actual) : std::nullopt;
  if (actual.ok() && expected.ok()) {
    // The invariants and the kernels' view judge even when the reference port itself is wrong.
    // An output equal to the reference has the reference's verdict: reuse it when given.
    const bool same = by_reference && !finding;
    OutputVerdict verdict = same && expected_verdict != nullptr ? *expected_verdict : verdict_on(spec, workload, actual.value());
    if (!finding && verdict.invariant) {
      finding = Finding{FindingKind::invariant_violated, "output equals the reference but breaks an invariant of its spec",
                        expected, actual, std::nullopt, std::nullopt, {}};
    } else if (!finding && verdict.state_fault) {
      finding = Finding{FindingKind::wrong_state,
                        by_reference ? "output equals the reference but a kernel reading it computes a wrong state"
                                     : "a kernel reading the output computes a wrong state",
                        expected, actual, std::nullopt, std::nullopt, {}};
    }
    if (finding) {
      finding->invariant = std::move(verdict.invariant);
      finding->states_judged = spec.has_kernels_view();
      finding->state_fault = std::move(verdict.state_fault);
    }
  }
  if (finding && hides_expected) finding->expected.reset();
  if (finding && finding->kind == FindingKind::mismatch) finding->summary = "output differs from the reference";
  return finding;
}

std::optional<Finding> check_caller_buffers(const Spec& spec, const Workload& workload,
                                            std::span<const std::int64_t> slack, Error* refusal) {
  constexpr std::int64_t kUntouched = -7;  // what every entry holds before the call
  const std::vector<std::int64_t> needed = spec.output_entries(workload).value();
  std::vector<std::int64_t> sizes(needed.size());
  std::optional<std::size_t> first_short;
  for (std::size_t b = 0; b < needed.size(); ++b) {
    sizes[b] = std::max<std::int64_t>(0, needed[b] + (b < slack.size() ? slack[b] : 0));
    if (!first_short && sizes[b] < needed[b]) first_short = b;
  }
  const auto written = spec.write_into(workload, sizes, kUntouched);
  Outcome actual = Error{};
  std::optional<std::size_t> broke_rest;  // the first output whose rest the writer broke its promise on
  if (written.ok()) {
    Arrays prefixes;
    for (std::size_t b = 0; b < needed.size(); ++b) {
      const auto& buffer = written.value()[b];
      const auto end = buffer.begin() + std::min<std::int64_t>(needed[b], static_cast<std::int64_t>(buffer.size()));
      prefixes.emplace_back(buffer.begin(), end);
      const BufferRest rest = spec.rest_of_buffer(b);
      const std::int64_t left = rest == BufferRest::padded ? kPadding : kUntouched;
      if (!broke_rest && rest != BufferRest::scratch &&
          std::any_of(end, buffer.end(), [left](std::int64_t v) { return v != left; }))
        broke_rest = b;
    }
    actual = std::move(prefixes);
  } else {
    actual = written.error();
  }
  if (first_short) {
    const std::string_view field = spec.outputs()[*first_short].name;
    const Error named{ErrorCode::output_buffer_too_small, field, Error::kNoIndex, 0, needed[*first_short]};
    if (!written.ok() && written.error().same_rule(named) && written.error().bound == named.bound) {
      if (refusal != nullptr) *refusal = written.error();
      return std::nullopt;
    }
    return Finding{FindingKind::wrong_error, "the writer did not name the short buffer " + std::string(field),
                   Outcome(named), std::move(actual), std::nullopt, std::nullopt, {}};
  }
  const Outcome expected = spec.reference(workload);
  if (auto finding = compare_outcomes(spec, expected, actual)) {
    finding->summary = "the writer into buffers of the needed sizes or larger differs from the reference";
    return finding;
  }
  if (broke_rest) {
    const std::string field(spec.outputs()[*broke_rest].name);
    const std::string summary = spec.rest_of_buffer(*broke_rest) == BufferRest::padded
                                    ? "the writer left entries of " + field + " past the ones it returned unpadded (not " +
                                          std::to_string(kPadding) + ")"
                                    : "the writer wrote past the entries of " + field + " it returned";
    return Finding{FindingKind::mismatch, summary, expected, std::move(actual), std::nullopt, std::nullopt, {}};
  }
  return std::nullopt;
}

std::optional<Finding> check_implementation(const Implementation& implementation, const Workload& workload) {
  return judge(*implementation.spec, workload, implementation.compute(workload));
}

AskedAgain ask_again_as_a_replay_does(const Implementation& implementation, const Workload& workload,
                                      FindingKind kind) {
  if (ends_its_process(kind) && implementation.restart) implementation.restart();
  AskedAgain again{implementation.compute(workload), std::nullopt};
  again.finding = judge(*implementation.spec, workload, again.answer);
  return again;
}

namespace {

// check_all's body. An implementation that takes valid workloads only (an
// engine function) is sent none the reference refuses: invalid input is
// outside its contract, and a workload above the size cap has no answer to
// compare with. An implementation of another spec is not sent it at all.
std::vector<Counterexample> check_each(const Workload& workload, std::span<const Implementation> implementations,
                                       std::string_view property, bool reference_invariants) {
  std::vector<Counterexample> failures;
  if (implementations.empty()) return failures;
  const Spec& spec = *implementations.front().spec;
  const Outcome expected = spec.reference(workload);
  const OutputVerdict expected_verdict =
      expected.ok() && reference_invariants && spec.judged_by_reference() ? verdict_on(spec, workload, expected.value())
                                                                          : OutputVerdict{};
  for (const Implementation& implementation : implementations) {
    if (implementation.spec != &spec) continue;
    if (!expected.ok() && !implementation.rejects_invalid_input) continue;
    if (auto finding = judge(spec, workload, implementation.compute(workload), expected, &expected_verdict)) {
      Counterexample cx;
      cx.implementation = implementation.name;
      cx.spec = &spec;
      cx.property = property;
      cx.workload = workload;
      cx.finding = std::move(*finding);
      failures.push_back(std::move(cx));
    }
  }
  return failures;
}

}  // namespace

std::vector<Counterexample> check_all(const Workload& workload, std::span<const Implementation> implementations,
                                      std::string_view property) {
  return check_each(workload, implementations, property, true);
}

std::vector<Counterexample> check_one(const Workload& workload, const Implementation& implementation,
                                      std::string_view property, bool reference_invariants) {
  return check_each(workload, std::span<const Implementation>(&implementation, 1), property, reference_invariants);
}

std::ostream& operator<<(std::ostream& os, const Divergence& d) {
  os << d.array << '[';
  if (d.columns > 1) {
    os << d.index / d.columns << "][" << d.index % d.columns;
  } else {
    os << d.index;
  }
  os << "]: expected ";
  if (d.expected) os << *d.expected; else os << "(end of array)";
  os << ", actual ";
  if (d.actual) os << *d.actual; else os << "(end of array)";
  return os;
}

std::ostream& operator<<(std::ostream& os, const InvariantViolation& v) {
  os << "invariant " << v.number << " (" << v.name << ")";
  if (v.row >= 0) os << ", row " << v.row;
  if (v.chunk >= 0) os << ", chunk " << v.chunk;
  return os << ": " << v.detail;
}

std::ostream& operator<<(std::ostream& os, const Finding& f) {
  os << to_string(f.kind) << ": " << f.summary;
  if (f.divergence) os << "\n  first divergence: " << *f.divergence;
  if (f.invariant) os << "\n  " << *f.invariant;
  if (f.state_fault) os << "\n  kernels' view: " << kernel_view::to_string(*f.state_fault);
  if (!f.detail.empty()) os << "\n  detail:   " << f.detail;
  return os;
}

}  // namespace chunkmeta::harness
