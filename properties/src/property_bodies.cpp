// The properties: generators for dependent cases and one body per property.
#include "chunkmeta/properties/suite.hpp"

#include <rapidcheck.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <random>
#include <sstream>

#include "chunkmeta/properties/generators.hpp"
#include "chunkmeta/properties/relations.hpp"
#include "running_case.hpp"

namespace chunkmeta::properties {
namespace {

namespace gen = rc::gen;
using harness::Counterexample;
using harness::Finding;
using harness::FindingKind;
using harness::Implementation;
using harness::Answer;
using harness::Outcome;

Counterexample counterexample(const Implementation& impl, const Workload& w, Finding finding) {
  Counterexample cx;
  cx.implementation = impl.name;
  const Property* running = detail::running_case().property;
  cx.property = running != nullptr ? running->name : "";
  cx.workload = w;
  cx.finding = std::move(finding);
  return cx;
}

// --- Generators for the metamorphic relations (dependent values built with mapcat). ---

struct SplitCase {
  Workload workload;
  std::size_t split = 0;
};
void showValue(const SplitCase& c, std::ostream& os) {
  showValue(c.workload, os);
  os << " split before row " << c.split;
}

struct ShiftCase {
  Workload workload;
  std::int64_t delta = 0;
};
void showValue(const ShiftCase& c, std::ostream& os) {
  showValue(c.workload, os);
  os << " query_start_loc shifted by " << c.delta;
}

struct MultiplesCase {
  Workload workload;
  std::vector<std::int64_t> multiples;
};
void showValue(const MultiplesCase& c, std::ostream& os) {
  showValue(c.workload, os);
  os << " computed tokens plus chunk_size times";
  for (auto m : c.multiples) os << ' ' << m;
}

const rc::Gen<Workload>& valid() {
  static const rc::Gen<Workload> g = valid_workloads();
  return g;
}

// The split point is drawn apart from the workload, as a count of rows for the
// left part (clamped to the batch): drawn after it (gen::mapcat), it was drawn
// again after every shrink step of the workload, so a failure that needs a
// given split rarely survived a step and the relation shrank for minutes.
// Counts are small more often than not, as batches are.
rc::Gen<SplitCase> split_cases() {
  const auto left_rows = gen::weightedOneOf<std::int64_t>(
      {{3, inclusive_range(0, 4)}, {4, inclusive_range(0, 32)}, {3, inclusive_range(0, 1024)}});
  return gen::apply(
      [](const Workload& w, std::int64_t left) {
        const auto rows = static_cast<std::int64_t>(w.num_computed_tokens.size());
        return SplitCase{w, static_cast<std::size_t>(std::min(left, rows))};
      },
      valid(), left_rows);
}

rc::Gen<ShiftCase> shift_cases() {
  return gen::mapcat(valid(), [](const Workload& w) {
    const std::int64_t down = -w.query_start_loc.front();
    const std::int64_t up = kMaxValue - w.query_start_loc.back();
    auto delta = gen::weightedOneOf<std::int64_t>({{6, inclusive_range(down, up)}, {2, gen::just(down)}, {2, gen::just(up)}});
    return gen::map(delta, [w](std::int64_t d) { return ShiftCase{w, d}; });
  });
}

rc::Gen<MultiplesCase> multiples_cases() {
  return gen::mapcat(valid(), [](const Workload& w) {
    const std::size_t rows = w.num_computed_tokens.size();
    auto salts = gen::container<std::vector<std::int64_t>>(rows, inclusive_range(0, std::int64_t{1} << 62));
    return gen::map(salts, [w](const std::vector<std::int64_t>& salt) {
      MultiplesCase c{w, {}};
      for (std::size_t i = 0; i < salt.size(); ++i) {
        const std::int64_t computed = w.num_computed_tokens[i];
        const std::int64_t tokens = w.query_start_loc[i + 1] - w.query_start_loc[i];
        const std::int64_t lo = -(computed / w.chunk_size);
        const std::int64_t hi = (kMaxValue - computed - tokens) / w.chunk_size;
        c.multiples.push_back(lo + salt[i] % (hi - lo + 1));
      }
      return c;
    });
  });
}

// --- Property bodies. ---
// Each body draws its case and asks the implementation first, and judges after:
// the recording pass (running_case().recording) returns once it has asked.

bool recording() { return detail::running_case().recording; }

// The oracle on the implementation's answer for `w`.
void check_with_oracle(const Implementation& impl, const Workload& w) {
  if (recording()) {
    impl.compute(w);
    return;
  }
  if (auto finding = harness::check_implementation(impl, w)) fail_with(counterexample(impl, w, std::move(*finding)));
}

// The implementation's answer; the case fails when it gave none (crash, hang...).
Outcome answer_of(const Implementation& impl, const Workload& w) {
  Answer answer = impl.compute(w);
  if (recording()) return Outcome(ChunkMetadata{});
  if (const auto* misbehaviour = std::get_if<harness::Misbehaviour>(&answer))
    fail_with(counterexample(impl, w, harness::finding_of(*misbehaviour, reference(w))));
  return std::get<Outcome>(std::move(answer));
}

void matches_reference(const Implementation& impl) {
  const Workload w = *valid();
  tag_edge_classes(w);
  check_with_oracle(impl, w);
}

void matches_reference_on_huge_batches(const Implementation& impl) {
  static const rc::Gen<Workload> huge = huge_batches();
  const Workload w = *huge;
  if (!recording()) {
    for (const auto& cls : huge_batch_classes(w)) RC_TAG(cls);
  }
  check_with_oracle(impl, w);
}

void satisfies_invariants(const Implementation& impl) {
  const Workload w = *valid();
  tag_edge_classes(w);
  const Outcome actual = answer_of(impl, w);
  if (recording()) return;
  if (!actual.ok()) {
    fail_with(counterexample(impl, w, Finding{FindingKind::unexpected_error, "refused a valid workload",
                                              std::nullopt, actual, std::nullopt, std::nullopt, {}}));
  }
  if (auto violation = harness::check_invariants(w, actual.value())) {
    fail_with(counterexample(impl, w, Finding{FindingKind::invariant_violated, "output breaks a SPEC invariant",
                                              std::nullopt, actual, std::nullopt, std::move(violation), {}}));
  }
}

// Fails when `whole` differs from `predicted`, naming the related workloads.
void expect_relation(const Implementation& impl, const Workload& w, const std::string& relation,
                     std::vector<harness::RelatedWorkload> related, const Outcome& predicted,
                     const Outcome& whole) {
  // Outputs can hold tens of millions of entries: the related workloads are moved, never copied.
  for (const auto& r : related) {
    if (r.actual && !r.actual->ok()) {
      Counterexample cx = counterexample(impl, r.workload, Finding{FindingKind::unexpected_error,
                                                                   "refused a valid workload (" + r.role + ")",
                                                                   std::nullopt, *r.actual, std::nullopt, std::nullopt, {}});
      cx.related = std::move(related);
      fail_with(std::move(cx));
    }
  }
  if (auto finding = harness::compare_outcomes(predicted, whole)) {
    finding->kind = FindingKind::relation_broken;
    finding->summary = relation;
    Counterexample cx = counterexample(impl, w, std::move(*finding));
    cx.related = std::move(related);
    fail_with(std::move(cx));
  }
}

void split_and_join(const Implementation& impl) {
  const SplitCase c = *split_cases();
  tag_edge_classes(c.workload);
  const auto [left, right] = split_batch(c.workload, c.split);
  const Outcome whole = answer_of(impl, c.workload);
  const Outcome left_out = answer_of(impl, left);
  const Outcome right_out = answer_of(impl, right);
  if (recording()) return;
  // expect_relation reports a refused part before comparing, so `predicted` only matters when all succeeded.
  const std::int64_t shift = c.workload.query_start_loc[c.split] - c.workload.query_start_loc[0];
  const Outcome predicted =
      whole.ok() && left_out.ok() && right_out.ok()
          ? Outcome(join_results(left_out.value(), right_out.value(), shift, static_cast<std::int64_t>(c.split)))
          : whole;
  // The related workloads (and copies of their outputs) are gathered only for a failure.
  if (whole.ok() && left_out.ok() && right_out.ok() && !harness::compare_outcomes(predicted, whole)) return;
  expect_relation(impl, c.workload,
                  "the whole batch's output differs from its two parts' outputs joined (split before row " +
                      std::to_string(c.split) + ")",
                  {{"whole batch", c.workload, whole},
                   {"left part (rows before " + std::to_string(c.split) + ")", left, left_out},
                   {"right part", right, right_out}},
                  predicted, whole);
}

void shift_invariance(const Implementation& impl) {
  const ShiftCase c = *shift_cases();
  tag_edge_classes(c.workload);
  const Workload shifted = shift_query_start_loc(c.workload, c.delta);
  const Outcome original = answer_of(impl, c.workload);
  const Outcome moved = answer_of(impl, shifted);
  if (recording()) return;
  if (original.ok() && moved.ok() && !harness::compare_outcomes(original, moved)) return;
  expect_relation(impl, c.workload,
                  "shifting every query_start_loc entry by " + std::to_string(c.delta) + " changed the output",
                  {{"shifted by " + std::to_string(c.delta), shifted, moved}, {"original", c.workload, original}},
                  original, moved);
}

void chunk_multiples_invariance(const Implementation& impl) {
  const MultiplesCase c = *multiples_cases();
  tag_edge_classes(c.workload);
  const Workload moved = add_chunk_multiples(c.workload, c.multiples);
  const Outcome original = answer_of(impl, c.workload);
  const Outcome after = answer_of(impl, moved);
  if (recording()) return;
  if (original.ok() && after.ok() && !harness::compare_outcomes(original, after)) return;
  expect_relation(impl, c.workload, "adding multiples of chunk_size to computed tokens changed the output",
                  {{"computed tokens moved by multiples of chunk_size", moved, after}, {"original", c.workload, original}},
                  original, after);
}

void rejects_invalid_like_reference(const Implementation& impl) {
  const InvalidWorkload invalid = *invalid_workloads();
  RC_TAG(invalid.rule);
  check_with_oracle(impl, invalid.workload);
}

void validate_names_rule(const Implementation& impl) {
  const InvalidWorkload invalid = *invalid_workloads();
  RC_TAG(invalid.rule);
  const auto error = validate(invalid.workload);
  if (!error || !error->same_rule(invalid.expected)) {
    Finding finding{error ? FindingKind::wrong_error : FindingKind::accepted_invalid,
                    "validate() does not name the broken rule " + invalid.rule, Outcome(invalid.expected),
                    error ? std::optional<Outcome>(*error) : std::nullopt, std::nullopt, std::nullopt, {}};
    fail_with(counterexample(impl, invalid.workload, std::move(finding)));
  }
}

void validate_accepts_valid(const Implementation& impl) {
  const Workload w = *valid();
  tag_edge_classes(w);
  if (auto error = validate(w)) {
    fail_with(counterexample(impl, w, Finding{FindingKind::unexpected_error, "validate() refused a valid workload",
                                              std::nullopt, Outcome(*error), std::nullopt, std::nullopt, {}}));
  }
}

void validate_applies_cap(const Implementation& impl) {
  const Workload w = *valid();
  tag_edge_classes(w);
  const auto sizes = output_sizes(view_of(w));
  const std::int64_t chunks = sizes.ok() ? sizes.value().num_chunks() : -1;
  const auto at_cap = validate(w, Limits{chunks});
  const auto below_cap = validate(w, Limits{chunks - 1});
  const bool refused_right = below_cap && below_cap->code == ErrorCode::output_too_large && below_cap->value == chunks;
  if (!sizes.ok() || at_cap || (chunks >= 1 && !refused_right)) {
    std::ostringstream why;
    why << "with " << chunks << " chunks: cap " << chunks << " gives "
        << (at_cap ? to_string(at_cap->code) : std::string_view("acceptance")) << ", cap " << chunks - 1 << " gives "
        << (below_cap ? to_string(below_cap->code) : std::string_view("acceptance"));
    fail_with(counterexample(impl, w, Finding{FindingKind::wrong_error, why.str(), std::nullopt, std::nullopt,
                                              std::nullopt, std::nullopt, {}}));
  }
}

struct BufferCase {
  Workload workload;
  std::int64_t slack[3] = {0, 0, 0};  // buffer size minus needed size: cu, seq, last
};
void showValue(const BufferCase& c, std::ostream& os) {
  showValue(c.workload, os);
  os << " buffer slack cu " << c.slack[0] << ", seq " << c.slack[1] << ", last " << c.slack[2];
}

rc::Gen<BufferCase> buffer_cases() {
  const auto slack = gen::weightedOneOf<std::int64_t>({{6, gen::just<std::int64_t>(0)}, {3, inclusive_range(1, 40)}, {2, inclusive_range(-3, -1)}});
  return gen::mapcat(valid(), [slack](const Workload& w) {
    return gen::apply([w](std::int64_t a, std::int64_t b, std::int64_t c) { return BufferCase{w, {a, b, c}}; }, slack,
                      slack, slack);
  });
}

// fast_into with buffers shorter, equal or longer than needed: it must name
// the first short buffer, or fill the needed prefix exactly like the reference.
void fast_into_any_buffers(const Implementation& impl) {
  const BufferCase c = *buffer_cases();
  tag_edge_classes(c.workload);
  if (auto finding = harness::check_fast_into_buffers(c.workload, {c.slack[0], c.slack[1], c.slack[2]}))
    fail_with(counterexample(impl, c.workload, std::move(*finding)));
}

std::vector<Property> make_properties() {
  using S = Scope;
  // One constructor keeps the table short and every field set.
  auto make = [](std::string name, std::string sentence, S scope, auto run_case, bool sends_invalid = false,
                 double case_share = 1.0) {
    return Property{std::move(name), std::move(sentence), scope, run_case, sends_invalid, case_share};
  };
  return {
      make("MatchesReferenceOnEveryValidWorkload", "matches the reference, element for element, on every valid workload",
       S::implementation, matches_reference),
      // Second: a slip that only huge batches show is then found seconds into a
      // run through a slow door (20 cases, ~3 s through Python), not after the
      // 5,000 cases of the properties below; the first property still comes first.
      make("MatchesReferenceOnHugeBatches",
       "matches the reference on batches of 2^15 to 140,000 rows, with chunks at row indices past 2^15 and 2^16",
       S::implementation, matches_reference_on_huge_batches, false, 0.02),
      make("SatisfiesSpecInvariants", "satisfies the SPEC's seven invariants", S::implementation, satisfies_invariants),
      make("GivesTheSameResultWhenTheBatchIsSplitAndJoined",
       "gives the same result when the batch is split in two and the halves' results joined", S::implementation,
       split_and_join),
      make("IgnoresAShiftOfQueryStartLoc", "gives the same result when every query_start_loc entry is shifted",
       S::implementation, shift_invariance),
      make("IgnoresMultiplesOfChunkSizeInComputedTokens",
       "gives the same result when multiples of chunk_size are added to computed tokens", S::implementation,
       chunk_multiples_invariance),
      make("RejectsInvalidWorkloadsLikeTheReference",
       "rejects every invalid workload with the reference's code, field and index", S::implementation,
       rejects_invalid_like_reference, true),
      make("ValidateNamesTheBrokenRule", "validate() names the code, field and index of the broken rule", S::library,
       validate_names_rule),
      make("ValidateAcceptsEveryValidWorkload", "validate() accepts every valid workload", S::library,
       validate_accepts_valid),
      make("ValidateRefusesOutputAboveTheCap", "validate() refuses exactly the workloads above the chunk cap",
       S::library, validate_applies_cap),
      make("FastIntoNamesTheShortBufferOrFillsAnyLargeEnoughOne",
       "fast_into names the first buffer that is too short, or fills buffers of any larger size correctly",
       S::library, fast_into_any_buffers),
  };
}

}  // namespace

namespace detail {
RunningCase& running_case() {
  thread_local RunningCase running;
  return running;
}
}  // namespace detail

const std::vector<Property>& all_properties() {
  static const std::vector<Property> properties = make_properties();
  return properties;
}

const Property* find_property(const std::string& name) {
  for (const auto& p : all_properties()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

void fail_with(Counterexample cx) {
  // RapidCheck's own message stays short: it is made for every failing shrink
  // candidate, and the report (rendered once, at the end) says everything.
  const std::string text = std::string(harness::to_string(cx.finding.kind)) + ": " + cx.finding.summary;
  auto& running = detail::running_case();
  if (running.on_failure) running.on_failure(cx);  // may mark it "shrinking"; moved below, never copied
  running.latest_failure = std::move(cx);
  RC_FAIL(text);
  std::abort();  // unreachable: RC_FAIL throws
}

void tag_edge_classes(const Workload& workload) {
  if (recording()) return;  // the recording pass's tally is not shown
  for (const auto& cls : edge_classes(workload)) RC_TAG(cls);
}

}  // namespace chunkmeta::properties
