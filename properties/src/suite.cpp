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

namespace chunkmeta::properties {
namespace {

namespace gen = rc::gen;
using harness::Counterexample;
using harness::Finding;
using harness::FindingKind;
using harness::Implementation;
using harness::Answer;
using harness::Outcome;

// The counterexample recorded by the latest failing case of the running
// property. RapidCheck runs the shrunk minimum last among failing cases, so
// after a failure this holds the minimal one; only it is ever written out.
thread_local std::optional<Counterexample> latest_failure;
thread_local const Property* running_property = nullptr;

Counterexample counterexample(const Implementation& impl, const Workload& w, Finding finding) {
  Counterexample cx;
  cx.implementation = impl.name;
  cx.property = running_property != nullptr ? running_property->name : "";
  cx.workload = w;
  cx.finding = std::move(finding);
  return cx;
}

// --- Dependent generators for the metamorphic relations (built with mapcat). ---

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

rc::Gen<SplitCase> split_cases() {
  return gen::mapcat(valid(), [](const Workload& w) {
    const auto rows = static_cast<std::int64_t>(w.num_computed_tokens.size());
    return gen::map(inclusive_range(0, rows), [w](std::int64_t split) { return SplitCase{w, static_cast<std::size_t>(split)}; });
  });
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

// The implementation's answer; the case fails when it gave none (crash, hang...).
Outcome answer_of(const Implementation& impl, const Workload& w) {
  Answer answer = impl.compute(w);
  if (const auto* misbehaviour = std::get_if<harness::Misbehaviour>(&answer))
    fail_with(counterexample(impl, w, harness::finding_of(*misbehaviour, reference(w))));
  return std::get<Outcome>(std::move(answer));
}

void matches_reference(const Implementation& impl) {
  const Workload w = *valid();
  tag_edge_classes(w);
  if (auto finding = harness::check_implementation(impl, w)) fail_with(counterexample(impl, w, std::move(*finding)));
}

void satisfies_invariants(const Implementation& impl) {
  const Workload w = *valid();
  tag_edge_classes(w);
  const Outcome actual = answer_of(impl, w);
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
                     const std::vector<harness::RelatedWorkload>& related, const Outcome& predicted,
                     const Outcome& whole) {
  for (const auto& r : related) {
    if (r.actual && !r.actual->ok()) {
      Counterexample cx = counterexample(impl, r.workload, Finding{FindingKind::unexpected_error,
                                                                   "refused a valid workload (" + r.role + ")",
                                                                   std::nullopt, *r.actual, std::nullopt, std::nullopt, {}});
      cx.related = related;
      fail_with(std::move(cx));
    }
  }
  if (auto finding = harness::compare_outcomes(predicted, whole)) {
    finding->kind = FindingKind::relation_broken;
    finding->summary = relation;
    Counterexample cx = counterexample(impl, w, std::move(*finding));
    cx.related = related;
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
  std::vector<harness::RelatedWorkload> related = {
      {"whole batch", c.workload, whole},
      {"left part (rows before " + std::to_string(c.split) + ")", left, left_out},
      {"right part", right, right_out}};
  // expect_relation reports a refused part before comparing, so `predicted` only matters when all succeeded.
  const std::int64_t shift = c.workload.query_start_loc[c.split] - c.workload.query_start_loc[0];
  const Outcome predicted =
      whole.ok() && left_out.ok() && right_out.ok()
          ? Outcome(join_results(left_out.value(), right_out.value(), shift, static_cast<std::int64_t>(c.split)))
          : whole;
  expect_relation(impl, c.workload,
                  "the whole batch's output differs from its two parts' outputs joined (split before row " +
                      std::to_string(c.split) + ")",
                  related, predicted, whole);
}

void shift_invariance(const Implementation& impl) {
  const ShiftCase c = *shift_cases();
  tag_edge_classes(c.workload);
  const Workload shifted = shift_query_start_loc(c.workload, c.delta);
  const Outcome original = answer_of(impl, c.workload);
  const Outcome moved = answer_of(impl, shifted);
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
  expect_relation(impl, c.workload, "adding multiples of chunk_size to computed tokens changed the output",
                  {{"computed tokens moved by multiples of chunk_size", moved, after}, {"original", c.workload, original}},
                  original, after);
}

void rejects_invalid_like_reference(const Implementation& impl) {
  const InvalidWorkload invalid = *invalid_workloads();
  RC_TAG(invalid.rule);
  if (auto finding = harness::check_implementation(impl, invalid.workload))
    fail_with(counterexample(impl, invalid.workload, std::move(*finding)));
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
  const auto need = output_sizes(view_of(c.workload)).value();
  const std::int64_t needed[3] = {need.cu_chunk_seqlen, need.seq_idx, need.last_chunk_indices};
  const char* names[3] = {"cu_chunk_seqlen", "seq_idx", "last_chunk_indices"};
  std::vector<std::int32_t> buffers[3];
  int first_short = -1;
  for (int b = 0; b < 3; ++b) {
    buffers[b].assign(static_cast<std::size_t>(std::max<std::int64_t>(0, needed[b] + c.slack[b])), -7);
    if (first_short < 0 && static_cast<std::int64_t>(buffers[b].size()) < needed[b]) first_short = b;
  }
  const auto written = fast_into(view_of(c.workload), {buffers[0], buffers[1], buffers[2]});
  const Outcome expected = reference(c.workload);
  Outcome actual = written.ok() ? Outcome(ChunkMetadata{{buffers[0].begin(), buffers[0].begin() + needed[0]},
                                                         {buffers[1].begin(), buffers[1].begin() + needed[1]},
                                                         {buffers[2].begin(), buffers[2].begin() + needed[2]}})
                                : Outcome(written.error());
  if (first_short >= 0) {
    const bool named = !written.ok() && written.error().code == ErrorCode::output_buffer_too_small &&
                       written.error().field == names[first_short] && written.error().bound == needed[first_short];
    if (!named) {
      fail_with(counterexample(impl, c.workload,
                               Finding{FindingKind::wrong_error,
                                       std::string("fast_into did not name the short buffer ") + names[first_short],
                                       Outcome(Error{ErrorCode::output_buffer_too_small, names[first_short],
                                                     Error::kNoIndex, 0, needed[first_short]}),
                                       actual, std::nullopt, std::nullopt, {}}));
    }
    return;
  }
  if (auto finding = harness::compare_outcomes(expected, actual)) {
    finding->summary = "fast_into with larger buffers differs from the reference";
    fail_with(counterexample(impl, c.workload, std::move(*finding)));
  }
}

std::vector<Property> make_properties() {
  using S = Scope;
  // One constructor keeps the table short and every field set.
  auto make = [](std::string name, std::string sentence, S scope, auto run_case, bool sends_invalid = false) {
    return Property{std::move(name), std::move(sentence), scope, run_case, sends_invalid};
  };
  return {
      make("MatchesReferenceOnEveryValidWorkload", "matches the reference, element for element, on every valid workload",
       S::implementation, matches_reference),
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

// Tallies edge classes of generated (not shrunk) cases, and accepted shrinks.
class Tally : public rc::detail::TestListener {
 public:
  std::map<std::string, int> classes;
  int shrinks = 0;
  void onTestCaseFinished(const rc::detail::CaseDescription& description) override {
    if (description.result.type != rc::detail::CaseResult::Type::Success) return;
    for (const auto& tag : description.tags) {
      // RapidCheck shows string tags quoted.
      const bool quoted = tag.size() >= 2 && tag.front() == '"' && tag.back() == '"';
      ++classes[quoted ? tag.substr(1, tag.size() - 2) : tag];
    }
  }
  void onShrinkTried(const rc::detail::CaseDescription&, bool accepted) override { shrinks += accepted ? 1 : 0; }
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

bool rc_params_mention(const char* key) {
  const char* params = std::getenv("RC_PARAMS");
  return params != nullptr && std::string(params).find(key) != std::string::npos;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

}  // namespace

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

double case_scale() {
  const char* scale = std::getenv("CHUNKMETA_CASE_SCALE");
  if (scale == nullptr || *scale == '\0') return 1.0;
  const double value = std::strtod(scale, nullptr);
  return value > 0 ? value : 1.0;
}

void fail_with(Counterexample cx) {
  const std::string text = harness::render(cx);
  latest_failure = std::move(cx);
  RC_FAIL(text);
  std::abort();  // unreachable: RC_FAIL throws
}

void tag_edge_classes(const Workload& workload) {
  for (const auto& cls : edge_classes(workload)) RC_TAG(cls);
}

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// RapidCheck's id of a property run: the key of its reproduce string.
std::string test_id(const Property& property, const Implementation& impl) { return impl.name + "/" + property.name; }

rc::detail::TestResult check_with(const Property& property, const Implementation& impl,
                                  const rc::detail::TestParams& params, rc::detail::TestListener& listener,
                                  const std::function<bool()>& stop_requested = nullptr) {
  rc::detail::TestMetadata metadata;
  metadata.id = test_id(property, impl);
  metadata.description = property.sentence;
  const auto run_case = [&property, &impl, &stop_requested] {
    if (stop_requested && stop_requested()) RC_SUCCEED("stopped");
    property.run_case(impl);
  };
  return rc::detail::checkProperty(rc::detail::toProperty(run_case), metadata, params, listener,
                                   rc::detail::configuration().reproduce);
}

// Batched answers for the workloads a reference-only pass over the same cases
// asked for. RapidCheck replays the same cases for the same seed, so the real
// pass asks for them in order; answers are fetched in batches that double in
// size (a case that fails early costs one small batch, a passing run few round
// trips). From the first workload that differs (shrinking has begun) every
// call goes to the implementation.
struct Prefetched {
  std::vector<Workload> workloads;
  std::vector<Answer> answers;  // for a prefix of workloads
  std::size_t next = 0;
  std::size_t batch = 64;
};

Prefetched record_workloads(const Property& property, const Implementation& impl,
                            const rc::detail::TestParams& params) {
  Prefetched cache;
  Implementation recorder = impl;
  recorder.compute = [&cache](const Workload& w) -> Answer {
    cache.workloads.push_back(w);
    return reference(w);
  };
  Tally ignored;
  const std::optional<Counterexample> saved = latest_failure;
  check_with(property, recorder, params, ignored);
  latest_failure = saved;
  return cache;
}

// `impl` with its calls counted and timed, answered from `cache` while it lasts.
Implementation instrumented(const Implementation& impl, Prefetched* cache, PropertyResult& stats) {
  Implementation out = impl;
  out.compute_batch = nullptr;
  out.compute = [&impl, cache, &stats](const Workload& w) -> Answer {
    ++stats.implementation_calls;
    if (cache != nullptr && cache->next < cache->workloads.size()) {
      if (cache->workloads[cache->next] == w) {
        if (cache->next == cache->answers.size()) {
          const std::size_t end = std::min(cache->workloads.size(), cache->next + cache->batch);
          cache->batch *= 2;
          const auto start = Clock::now();
          auto fetched = impl.compute_batch(
              std::span<const Workload>(cache->workloads).subspan(cache->next, end - cache->next));
          stats.implementation_seconds += seconds_since(start);
          for (auto& answer : fetched) cache->answers.push_back(std::move(answer));
        }
        if (cache->next < cache->answers.size()) {
          ++stats.prefetched;
          return cache->answers[cache->next++];
        }
      }
      cache->next = cache->workloads.size();
    }
    const auto start = Clock::now();
    Answer answer = impl.compute(w);
    stats.implementation_seconds += seconds_since(start);
    return answer;
  };
  return out;
}

// One RapidCheck run of `property` with `params`.
PropertyResult run_round(const Property& property, const Implementation& impl, const SuiteOptions& options,
                         const rc::detail::TestParams& params) {
  PropertyResult result;
  result.property = property.name;
  result.implementation = impl.name;
  result.seed = params.seed;
  result.rounds = 1;
  const auto start = Clock::now();

  latest_failure.reset();
  running_property = &property;
  std::optional<Prefetched> cache;
  if (options.prefetch && impl.compute_batch) cache = record_workloads(property, impl, params);
  const Implementation measured = instrumented(impl, cache ? &*cache : nullptr, result);
  Tally tally;
  const auto outcome = check_with(property, measured, params, tally, options.stop_requested);
  running_property = nullptr;
  result.seconds = seconds_since(start);

  result.edge_classes = std::move(tally.classes);
  result.shrinks = tally.shrinks;
  if (outcome.is<rc::detail::SuccessResult>()) {
    result.passed = true;
    result.cases = outcome.get<rc::detail::SuccessResult>().numSuccess;
    return result;
  }
  std::ostringstream message;
  rc::detail::printResultMessage(outcome, message);
  result.message = message.str();
  if (!outcome.is<rc::detail::FailureResult>()) return result;  // gave up, or an error inside RapidCheck
  const auto* failure = &outcome.get<rc::detail::FailureResult>();

  result.cases = failure->numSuccess;
  rc::detail::Configuration reproduce_config;
  reproduce_config.reproduce[test_id(property, impl)] = failure->reproduce;
  const std::string reproduce = rc::detail::configToMinimalString(reproduce_config);

  Counterexample cx;
  if (latest_failure) {
    cx = std::move(*latest_failure);
  } else {
    // The implementation threw or crashed the case some other way: keep RapidCheck's words.
    cx.implementation = impl.name;
    cx.property = property.name;
    cx.finding = Finding{FindingKind::unexpected_error, failure->description, std::nullopt, std::nullopt,
                         std::nullopt, std::nullopt, {}};
  }
  cx.seed = params.seed;
  cx.reproduce = reproduce;
  cx.cases_before_failure = failure->numSuccess;
  if (!options.rerun_command.empty()) {
    cx.rerun_command = "RC_PARAMS=\"" + reproduce + "\" " +
                       replace_all(replace_all(options.rerun_command, "{property}", property.name),
                                   "{implementation}", harness::shell_quote(impl.name));
  }
  if (options.write_reports) {
    std::string error;
    const auto dir = options.report_dir.empty() ? harness::default_report_dir() : options.report_dir;
    result.files = harness::write_counterexample(cx, dir, &error);
    if (!result.files) result.message += "\n(could not write the report: " + error + ")";
  }
  result.counterexample = std::move(cx);
  return result;
}

// The latest round's verdict (and counterexample), with the counts of all rounds;
// a passing run keeps its first seed.
void add_round(PropertyResult& total, PropertyResult round) {
  round.cases += total.cases;
  round.rounds += total.rounds;
  round.seconds += total.seconds;
  round.implementation_seconds += total.implementation_seconds;
  round.implementation_calls += total.implementation_calls;
  round.prefetched += total.prefetched;
  for (const auto& [name, count] : total.edge_classes) round.edge_classes[name] += count;
  if (round.passed && total.rounds > 0) round.seed = total.seed;
  total = std::move(round);
}

}  // namespace

PropertyResult run_property(const Property& property, const Implementation& impl, const SuiteOptions& options) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  int target = 0;
  if (options.cases > 0) {
    target = options.cases;
  } else if (rc_params_mention("max_success")) {
    target = params.maxSuccess;
  } else if (options.time_budget_seconds > 0) {
    target = 1 << 30;  // the budget alone decides
  } else {
    target = std::max(1, static_cast<int>(std::lround(options.default_cases * case_scale())));
  }
  if (options.seed) params.seed = *options.seed;
  if (options.time_budget_seconds <= 0) {
    params.maxSuccess = target;
    return run_round(property, impl, options, params);
  }

  // Rounds: a small first one measures the rate, later ones fill the budget.
  PropertyResult total;
  const auto start = Clock::now();
  const std::uint64_t base_seed = params.seed;
  for (int round = 0; total.cases < target; ++round) {
    const double left = options.time_budget_seconds - seconds_since(start);
    if (round > 0 && left < 0.02 * options.time_budget_seconds) break;
    const double rate = total.seconds > 0 ? total.cases / total.seconds : 0;
    const double planned = round == 0 ? 200.0 : std::max(50.0, 0.9 * rate * left);
    params.maxSuccess = static_cast<int>(std::min<double>(target - total.cases, planned));
    params.seed = base_seed + static_cast<std::uint64_t>(round);
    add_round(total, run_round(property, impl, options, params));
    if (!total.passed || (options.stop_requested && options.stop_requested())) break;
  }
  return total;
}

bool SuiteResult::passed() const {
  for (const auto& p : properties) {
    if (!p.passed) return false;
  }
  return true;
}

double SuiteResult::seconds() const {
  double total = 0;
  for (const auto& p : properties) total += p.seconds;
  return total;
}

double SuiteResult::implementation_seconds() const {
  double total = 0;
  for (const auto& p : properties) total += p.implementation_seconds;
  return total;
}

int SuiteResult::cases() const {
  int total = 0;
  for (const auto& p : properties) total += p.cases;
  return total;
}

SuiteResult run_suite(const Implementation& impl, const SuiteOptions& options) {
  SuiteResult suite;
  std::vector<const Property*> selected;
  for (const auto& property : all_properties()) {
    if (property.scope == Scope::library && !options.include_library) continue;
    if (!options.only.empty() && std::find(options.only.begin(), options.only.end(), property.name) == options.only.end())
      continue;
    selected.push_back(&property);
  }
  const auto start = Clock::now();
  for (std::size_t i = 0; i < selected.size(); ++i) {
    const Property& property = *selected[i];
    if (property.sends_invalid_input && !impl.rejects_invalid_input) {
      PropertyResult skipped;
      skipped.property = property.name;
      skipped.implementation = impl.name;
      skipped.passed = true;
      skipped.skipped = true;
      suite.properties.push_back(std::move(skipped));
      continue;
    }
    SuiteOptions share = options;
    if (options.time_budget_seconds > 0) {
      const double left = options.time_budget_seconds - seconds_since(start);
      share.time_budget_seconds = std::max(0.05, left / static_cast<double>(selected.size() - i));
    }
    suite.properties.push_back(run_property(property, impl, share));
    if (options.stop_at_first_failure && !suite.properties.back().passed) break;
    if (options.stop_requested && options.stop_requested()) break;
  }
  return suite;
}

std::string summarize(const std::vector<SuiteResult>& results) {
  std::ostringstream os;
  int properties = 0;
  int cases = 0;
  int failures = 0;
  std::map<std::string, int> classes;
  for (const auto& suite : results) {
    if (!suite.properties.empty()) os << suite.properties.front().implementation << ":\n";
    for (const auto& p : suite.properties) {
      if (p.skipped) {
        os << "  SKIP  " << std::left << std::setw(54) << p.property << std::right
           << "  (sends invalid input; the implementation takes valid workloads only)\n";
        continue;
      }
      ++properties;
      cases += p.cases;
      os << (p.passed ? "  PASS  " : "  FAIL  ") << std::left << std::setw(54) << p.property << std::right
         << std::setw(8) << p.cases << " cases\n";
      for (const auto& [name, count] : p.edge_classes) classes[name] += count;
      if (p.passed) continue;
      ++failures;
      if (p.counterexample) {
        os << harness::render(*p.counterexample, p.files);
      }
      if (!p.message.empty() && !p.counterexample) os << p.message << "\n";
    }
  }
  os << "Edge classes seen (cases):\n";
  for (const auto& name : all_edge_classes()) os << "  " << std::setw(8) << classes[name] << "  " << name << "\n";
  for (const auto& name : all_invalid_rules()) {
    if (classes.count(name)) os << "  " << std::setw(8) << classes[name] << "  invalid: " << name << "\n";
  }
  if (!results.empty() && !results.front().properties.empty()) {
    const auto seed = results.front().properties.front().seed;
    os << "Seed: " << seed << " (RC_PARAMS=\"seed=" << seed << "\" repeats this run)\n";
  }
  os << "Summary: " << properties << " properties, " << cases << " cases, " << failures << " failed\n";
  return os.str();
}

}  // namespace chunkmeta::properties
