#include "chunkmeta/properties/builders.hpp"

#include <algorithm>
#include <sstream>

#include "chunkmeta/properties/relations.hpp"

namespace chunkmeta::properties::builders {

namespace gen = rc::gen;
using harness::Answer;
using harness::FindingKind;
using harness::Implementation;
using harness::Outcome;

Counterexample counterexample(const Workload& workload, Finding finding) {
  Counterexample cx;
  cx.workload = workload;
  cx.finding = std::move(finding);
  return cx;
}

std::function<Case(const rc::Random&, int)> workload_cases(rc::Gen<Workload> workloads) {
  return [workloads](const rc::Random& random, int size) { return Case{pick(workloads, random, size), {}}; };
}

const Outcome& outcome_of(const Answer& answer) {
  // A misbehaviour was the engine's finding before any judge ran (Property::judge): never met here.
  return std::get<Outcome>(answer);
}

namespace {

std::function<std::vector<std::string>(const Case&)> case_classes(Classes classes) {
  return [classes](const Case& c) { return classes(c.workload); };
}

std::vector<Workload> ask_workload(const Case& c) { return {c.workload}; }


}  // namespace

std::optional<Counterexample> expect_relation(const Spec& spec, const Workload& w, const std::string& relation,
                                              std::vector<harness::RelatedWorkload> related, const Outcome& predicted,
                                              const Outcome& whole) {
  // Outputs can hold tens of millions of entries: the related workloads are moved, never copied.
  for (const auto& r : related) {
    if (r.actual && !r.actual->ok()) {
      Counterexample cx = counterexample(r.workload, Finding{FindingKind::unexpected_error,
                                                             "refused a valid workload (" + r.role + ")", std::nullopt,
                                                             *r.actual, std::nullopt, std::nullopt, {}});
      cx.related = std::move(related);
      return cx;
    }
  }
  if (auto finding = harness::compare_outcomes(spec, predicted, whole)) {
    finding->kind = FindingKind::relation_broken;
    finding->summary = relation;
    Counterexample cx = counterexample(w, std::move(*finding));
    cx.related = std::move(related);
    return cx;
  }
  return std::nullopt;
}

Property agrees_with_relation(const Spec& spec, std::string name, std::string sentence, std::string relation,
                              rc::Gen<Workload> workloads, Classes classes, Predict predict) {
  Property p;
  p.name = std::move(name);
  p.sentence = std::move(sentence);
  p.draw = workload_cases(std::move(workloads));
  p.asks = [](const Case& c) { return std::vector<Workload>{c.workload}; };
  p.judge = [&spec, relation = std::move(relation), predict = std::move(predict)](
                const Implementation&, const Case& c, std::span<const Answer> answers) -> std::optional<Counterexample> {
    const Outcome& actual = outcome_of(answers[0]);
    auto prediction = predict(c.workload, actual);
    if (!prediction) return std::nullopt;
    if (actual.ok() && !harness::compare_outcomes(spec, prediction->predicted, actual)) return std::nullopt;
    std::vector<harness::RelatedWorkload> related;
    related.push_back(std::move(prediction->related));
    return expect_relation(spec, c.workload, relation, std::move(related), prediction->predicted, actual);
  };
  p.classes = [classes = std::move(classes)](const Case& c) { return classes(c.workload); };
  return p;
}

namespace {

std::size_t split_of(const Case& c) {
  return static_cast<std::size_t>(std::clamp<std::int64_t>(c.parameters.at(0), 0, static_cast<std::int64_t>(c.workload.rows())));
}

// A shift that keeps every entry in [0, 2^31-1], for the (maybe shrunk) workload.
std::int64_t shift_of(const Case& c) {
  const auto& q = c.workload.query_start_loc;
  return std::clamp<std::int64_t>(c.parameters.at(0), -q.front(), kMaxValue - q.back());
}

}  // namespace

Property matches_reference(std::string name, std::string sentence, rc::Gen<Workload> workloads,
                           Classes classes, double case_share) {
  Property p;
  p.name = std::move(name);
  p.sentence = std::move(sentence);
  p.case_share = case_share;
  p.draw = workload_cases(std::move(workloads));
  p.asks = ask_workload;
  // No judgement of its own: the engine judges every answer against the reference (Round::against_the_truth).
  p.classes = case_classes(std::move(classes));
  return p;
}

Property satisfies_invariants(rc::Gen<Workload> workloads, Classes classes) {
  Property p;
  p.name = "SatisfiesSpecInvariants";
  p.sentence = "satisfies the spec's invariants";
  p.draw = workload_cases(std::move(workloads));
  p.asks = ask_workload;
  // No judgement of its own: the engine judges every answer against the reference and then the invariants
  // (Round::against_the_truth, harness::judge), which names the broken invariant with any finding.
  p.classes = case_classes(std::move(classes));
  return p;
}

Property split_and_join(const Spec& spec, rc::Gen<Workload> workloads, Classes classes, JoinResults join) {
  Property p;
  p.name = "GivesTheSameResultWhenTheBatchIsSplitAndJoined";
  p.sentence = "gives the same result when the batch is split in two and the halves' results joined";
  // Counts are small more often than not, as batches are.
  const auto left_rows = gen::weightedOneOf<std::int64_t>(
      {{3, inclusive_range(0, 4)}, {4, inclusive_range(0, 32)}, {3, inclusive_range(0, 1024)}});
  const auto cases = gen::apply(
      [](const Workload& w, std::int64_t left) {
        return Case{w, {std::min(left, static_cast<std::int64_t>(w.rows()))}};
      },
      std::move(workloads), left_rows);
  p.draw = [cases](const rc::Random& random, int size) { return pick(cases, random, size); };
  p.asks = [](const Case& c) {
    auto [left, right] = split_batch(c.workload, split_of(c));
    return std::vector<Workload>{c.workload, std::move(left), std::move(right)};
  };
  p.judge = [&spec, join = std::move(join)](const Implementation&, const Case& c,
                                            std::span<const Answer> answers) -> std::optional<Counterexample> {
    const std::size_t split = split_of(c);
    const auto [left, right] = split_batch(c.workload, split);
    const Outcome& whole = outcome_of(answers[0]);
    const Outcome& left_out = outcome_of(answers[1]);
    const Outcome& right_out = outcome_of(answers[2]);
    // expect_relation reports a refused part before comparing, so `predicted` only matters when all succeeded.
    const std::int64_t shift = c.workload.query_start_loc[split] - c.workload.query_start_loc[0];
    const bool all_ok = whole.ok() && left_out.ok() && right_out.ok();
    const Outcome predicted =
        all_ok ? Outcome(join(left_out.value(), right_out.value(), shift, static_cast<std::int64_t>(split)))
               : whole;
    // The related workloads (and copies of their outputs) are gathered only for a failure.
    if (all_ok && !harness::compare_outcomes(spec, predicted, whole)) return std::nullopt;
    return expect_relation(spec, c.workload,
                           "the whole batch's output differs from its two parts' outputs joined (split before " +
                               std::string(spec.unit()) + " " + std::to_string(split) + ")",
                           {{"whole batch", c.workload, whole, nullptr},
                            {"left part (" + std::string(spec.unit()) + "s before " + std::to_string(split) + ")", left,
                             left_out, nullptr},
                            {"right part", right, right_out, nullptr}},
                           predicted, whole);
  };
  p.classes = case_classes(std::move(classes));
  return p;
}

Property shift_invariance(const Spec& spec, std::string name, std::string sentence, rc::Gen<Workload> workloads,
                          Classes classes) {
  Property p;
  p.name = std::move(name);
  p.sentence = std::move(sentence);
  const auto cases = gen::mapcat(std::move(workloads), [](const Workload& w) {
    const std::int64_t down = -w.query_start_loc.front();
    const std::int64_t up = kMaxValue - w.query_start_loc.back();
    auto delta = gen::weightedOneOf<std::int64_t>({{6, inclusive_range(down, up)}, {2, gen::just(down)}, {2, gen::just(up)}});
    return gen::map(delta, [w](std::int64_t d) { return Case{w, {d}}; });
  });
  p.draw = [cases](const rc::Random& random, int size) { return pick(cases, random, size); };
  p.asks = [](const Case& c) { return std::vector<Workload>{c.workload, shift_query_start_loc(c.workload, shift_of(c))}; };
  p.judge = [&spec](const Implementation&, const Case& c, std::span<const Answer> answers) -> std::optional<Counterexample> {
    const std::int64_t delta = shift_of(c);
    const Workload shifted = shift_query_start_loc(c.workload, delta);
    const Outcome& original = outcome_of(answers[0]);
    const Outcome& moved = outcome_of(answers[1]);
    if (original.ok() && moved.ok() && !harness::compare_outcomes(spec, original, moved)) return std::nullopt;
    return expect_relation(spec, c.workload,
                           "shifting every " + std::string(spec.field(harness::Slot::offsets)) + " entry by " + std::to_string(delta) +
                               " changed the output",
                           {{"shifted by " + std::to_string(delta), shifted, moved, nullptr},
                            {"original", c.workload, original, nullptr}},
                           original, moved);
  };
  p.classes = case_classes(std::move(classes));
  return p;
}

Property rejects_invalid(rc::Gen<InvalidCase> cases, std::function<InvalidWorkload(const InvalidCase&)> invalid_of) {
  Property p;
  p.name = "RejectsInvalidWorkloadsLikeTheReference";
  p.sentence = "rejects every invalid workload with the reference's code, field and index";
  p.sends_invalid_input = true;
  p.draw = [cases](const rc::Random& random, int size) {
    InvalidCase drawn = pick(cases, random, size);
    return Case{std::move(drawn.valid), std::move(drawn.parameters)};
  };
  p.asks = [invalid_of](const Case& c) { return std::vector<Workload>{invalid_of({c.workload, c.parameters}).workload}; };
  // No judgement of its own: the engine judges the answer against the reference's refusal (Round::against_the_truth).
  p.classes = [invalid_of](const Case& c) { return std::vector<std::string>{invalid_of({c.workload, c.parameters}).rule}; };
  return p;
}

Property validate_names_rule(const Spec& spec, rc::Gen<InvalidCase> cases,
                             std::function<InvalidWorkload(const InvalidCase&)> invalid_of) {
  Property p;
  p.name = "ValidateNamesTheBrokenRule";
  p.sentence = "validate() names the code, field and index of the broken rule";
  p.scope = engine::Scope::library;
  p.draw = [cases](const rc::Random& random, int size) {
    InvalidCase drawn = pick(cases, random, size);
    return Case{std::move(drawn.valid), std::move(drawn.parameters)};
  };
  p.asks = [](const Case&) { return std::vector<Workload>{}; };
  p.judge = [&spec, invalid_of](const Implementation&, const Case& c, std::span<const Answer>) -> std::optional<Counterexample> {
    const InvalidWorkload invalid = invalid_of({c.workload, c.parameters});
    const auto error = spec.validate(invalid.workload);
    if (error && error->same_rule(invalid.expected)) return std::nullopt;
    return counterexample(invalid.workload,
                          Finding{error ? FindingKind::wrong_error : FindingKind::accepted_invalid,
                                  "validate() does not name the broken rule " + invalid.rule, Outcome(invalid.expected),
                                  error ? std::optional<Outcome>(*error) : std::nullopt, std::nullopt, std::nullopt, {}});
  };
  p.classes = [invalid_of](const Case& c) { return std::vector<std::string>{invalid_of({c.workload, c.parameters}).rule}; };
  return p;
}

Property validate_accepts_valid(const Spec& spec, rc::Gen<Workload> workloads, Classes classes) {
  Property p;
  p.name = "ValidateAcceptsEveryValidWorkload";
  p.sentence = "validate() accepts every valid workload";
  p.scope = engine::Scope::library;
  p.draw = workload_cases(std::move(workloads));
  p.asks = [](const Case&) { return std::vector<Workload>{}; };
  p.judge = [&spec](const Implementation&, const Case& c, std::span<const Answer>) -> std::optional<Counterexample> {
    const auto error = spec.validate(c.workload);
    if (!error) return std::nullopt;
    return counterexample(c.workload, Finding{FindingKind::unexpected_error, "validate() refused a valid workload",
                                              std::nullopt, Outcome(*error), std::nullopt, std::nullopt, {}});
  };
  p.classes = case_classes(std::move(classes));
  return p;
}

Property validate_applies_cap(const Spec& spec, rc::Gen<Workload> workloads, Classes classes) {
  Property p;
  p.name = "ValidateRefusesOutputAboveTheCap";
  p.sentence = "validate() refuses exactly the workloads above the chunk cap";
  p.scope = engine::Scope::library;
  p.draw = workload_cases(std::move(workloads));
  p.asks = [](const Case&) { return std::vector<Workload>{}; };
  p.judge = [&spec](const Implementation&, const Case& c, std::span<const Answer>) -> std::optional<Counterexample> {
    const std::int64_t chunks = spec.chunks(c.workload).value_or(-1);
    const auto at_cap = spec.validate(c.workload, Limits{chunks});
    const auto below_cap = spec.validate(c.workload, Limits{chunks - 1});
    const bool refused_right = below_cap && below_cap->code == ErrorCode::output_too_large && below_cap->value == chunks;
    if (chunks >= 0 && !at_cap && (chunks < 1 || refused_right)) return std::nullopt;
    std::ostringstream why;
    why << "with " << chunks << " chunks: cap " << chunks << " gives "
        << (at_cap ? to_string(at_cap->code) : std::string_view("acceptance")) << ", cap " << chunks - 1 << " gives "
        << (below_cap ? to_string(below_cap->code) : std::string_view("acceptance"));
    return counterexample(c.workload, Finding{FindingKind::wrong_error, why.str(), std::nullopt, std::nullopt,
                                              std::nullopt, std::nullopt, {}});
  };
  p.classes = case_classes(std::move(classes));
  return p;
}

Property writes_into_any_buffer(const Spec& spec, rc::Gen<Workload> workloads, Classes classes) {
  Property p;
  p.name = "WritesIntoAnyLargeEnoughBufferOrNamesTheShortOne";
  p.sentence = "the writer into caller buffers names the first one too short, or fills any larger ones correctly";
  p.scope = engine::Scope::library;
  const auto slack = gen::weightedOneOf<std::int64_t>(
      {{6, gen::just<std::int64_t>(0)}, {3, inclusive_range(1, 40)}, {2, inclusive_range(-3, -1)}});
  const auto slacks = gen::container<std::vector<std::int64_t>>(spec.outputs().size(), slack);
  const auto cases = gen::apply([](const Workload& w, std::vector<std::int64_t> s) { return Case{w, std::move(s)}; },
                                std::move(workloads), slacks);
  p.draw = [cases](const rc::Random& random, int size) { return pick(cases, random, size); };
  p.asks = [](const Case&) { return std::vector<Workload>{}; };
  p.judge = [&spec](const Implementation&, const Case& c, std::span<const Answer>) -> std::optional<Counterexample> {
    // Above the cap the writer refuses before looking at a buffer: the cap's property judges that.
    if (spec.validate(c.workload)) return std::nullopt;
    if (auto finding = harness::check_caller_buffers(spec, c.workload, c.parameters))
      return counterexample(c.workload, std::move(*finding));
    return std::nullopt;
  };
  p.classes = case_classes(std::move(classes));
  return p;
}

}  // namespace chunkmeta::properties::builders
