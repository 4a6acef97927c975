// The checkpoint plan's property suite (specs/mamba_checkpoint_plan): the
// shared properties over its generators, invariant 5 (a row's tokens in one
// step or split across two leave every cache block holding the state after
// the same number of tokens), and the library's own properties.
#include <map>

#include "checkpoint_plan_generators.hpp"
#include "checkpoint_plan_spec.hpp"
#include "chunkmeta/chunkmeta.hpp"
#include "chunkmeta/properties/table_helpers.hpp"

namespace chunkmeta::properties {
namespace {

using namespace tables;

const Spec& spec() { return harness::checkpoint_plan_spec(); }

// Each row's new tokens split at a drawn share: the first step computes n1 of
// them, the second (with computed = c + n1) the rest.
std::pair<Workload, Workload> two_steps(const Workload& w, const std::vector<std::int64_t>& shares) {
  Workload first = w;
  Workload second = w;
  first.query_start_loc.assign(1, w.query_start_loc.front());
  second.query_start_loc.assign(1, w.query_start_loc.front());
  for (std::size_t i = 0; i < w.rows(); ++i) {
    const std::int64_t n = w.query_start_loc[i + 1] - w.query_start_loc[i];
    const std::int64_t share = i < shares.size() ? shares[i] : 0;
    const std::int64_t n1 = n == 0 ? 0 : std::clamp<std::int64_t>(share, 0, 1000) * n / 1000;
    first.query_start_loc.push_back(first.query_start_loc.back() + n1);
    second.num_computed_tokens[i] = w.num_computed_tokens[i] + n1;
    second.query_start_loc.push_back(second.query_start_loc.back() + (n - n1));
  }
  return {std::move(first), std::move(second)};
}

// The cache a step's plan leaves, (row, block) -> the tokens of the row whose
// state the block holds (the absolute end of the chunk saved there, from
// Mamba's metadata of that step); nullopt when the plan names a chunk the step
// does not have.
using Cache = std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t>;
std::optional<Cache> apply_plan(const Workload& w, const harness::Arrays& plan, Cache cache) {
  const auto metadata = reference(view_of(w));
  if (!metadata.ok() || plan.size() != 6) return std::nullopt;
  const auto& cu = metadata.value().cu_chunk_seqlen;
  const auto& seq = metadata.value().seq_idx;
  const auto& q = w.query_start_loc;
  for (std::size_t e = 0; e < plan[3].size() && e < plan[4].size() && e < plan[5].size(); ++e) {
    const std::int64_t k = plan[5][e];
    if (k < 0 || k >= static_cast<std::int64_t>(seq.size())) return std::nullopt;
    const auto row = static_cast<std::size_t>(seq[static_cast<std::size_t>(k)]);
    const std::int64_t end = w.num_computed_tokens[row] + cu[static_cast<std::size_t>(k) + 1] - (q[row] - q[0]);
    cache[{plan[3][e], plan[4][e]}] = end;
  }
  return cache;
}

Property same_cache_over_two_steps() {
  Property p;
  p.name = "LeavesTheSameCacheWhenARowsTokensAreSplitAcrossTwoSteps";
  p.sentence = "leaves every cache block with the state after the same tokens whether a row's new tokens come in one "
               "step or two";
  const auto cases = gen::mapcat(checkpoint_workloads(), [](const Workload& w) {
    const auto share = gen::weightedOneOf<std::int64_t>(
        {{2, gen::just<std::int64_t>(0)}, {2, gen::just<std::int64_t>(1000)}, {6, inclusive_range(0, 1000)}});
    return gen::map(gen::container<std::vector<std::int64_t>>(w.rows(), share),
                    [w](std::vector<std::int64_t> shares) { return Case{w, std::move(shares)}; });
  });
  p.draw = [cases](const rc::Random& random, int size) { return pick(cases, random, size); };
  p.asks = [](const Case& c) {
    auto [first, second] = two_steps(c.workload, c.parameters);
    return std::vector<Workload>{c.workload, std::move(first), std::move(second)};
  };
  p.judge = [](const Implementation&, const Case& c, std::span<const Answer> answers) -> std::optional<Counterexample> {
    const auto [first, second] = two_steps(c.workload, c.parameters);
    const Workload* asked[] = {&c.workload, &first, &second};
    std::vector<Outcome> outcomes;
    for (std::size_t i = 0; i < 3; ++i) {
      auto outcome = builders::outcome_of(spec(), *asked[i], answers[i]);
      if (auto* cx = std::get_if<Counterexample>(&outcome)) return std::move(*cx);
      outcomes.push_back(std::get<Outcome>(std::move(outcome)));
    }
    const bool all_ok = outcomes[0].ok() && outcomes[1].ok() && outcomes[2].ok();
    std::optional<Cache> one;
    std::optional<Cache> two;
    if (all_ok) {
      one = apply_plan(c.workload, outcomes[0].value(), {});
      const auto after_first = apply_plan(first, outcomes[1].value(), {});
      if (after_first) two = apply_plan(second, outcomes[2].value(), *after_first);
      if (one && two && *one == *two) return std::nullopt;
    }
    std::string where = "a plan names a chunk its step does not have";
    if (one && two) {
      for (const auto& [block, tokens] : *one) {
        const auto other = two->find(block);
        if (other == two->end() || other->second != tokens) {
          where = "row " + std::to_string(block.first) + "'s block " + std::to_string(block.second) + " holds the state "
                  "after " + std::to_string(tokens) + " tokens in one step, " +
                  (other == two->end() ? std::string("nothing") : "after " + std::to_string(other->second) + " tokens") +
                  " in two";
          break;
        }
      }
      for (const auto& [block, tokens] : *two) {
        if (one->count(block) == 0) {
          where = "row " + std::to_string(block.first) + "'s block " + std::to_string(block.second) +
                  " is written only in two steps (the state after " + std::to_string(tokens) + " tokens)";
          break;
        }
      }
    }
    return builders::expect_relation(spec(), c.workload,
                                     "the cache differs when each row's new tokens are split across two steps: " + where,
                                     {{"first step", first, outcomes[1], nullptr},
                                      {"second step (computed tokens moved on)", second, outcomes[2], nullptr}},
                                     all_ok ? outcomes[0] : outcomes[1], outcomes[0]);
  };
  p.classes = [](const Case& c) { return checkpoint_edge_classes(c.workload); };
  return p;
}

engine::PropertyTable checkpoint_plan_table() {
  using namespace builders;
  const auto valid = checkpoint_workloads();
  const Classes classes = [](const Workload& w) { return checkpoint_edge_classes(w); };
  engine::PropertyTable table;
  table.spec = &spec();
  table.properties = {
      matches_reference(spec(), "MatchesReferenceOnEveryValidWorkload",
                        "matches the reference, element for element, on every valid workload", valid, classes),
      matches_reference(spec(), "MatchesReferenceOnHugeBatches",
                        "matches the reference on batches of 2^15 to 140,000 rows, with rows past 2^15 and 2^16",
                        checkpoint_huge_batches(), [](const Workload& w) { return checkpoint_huge_batch_classes(w); },
                        0.02),
      satisfies_invariants(spec(), valid, classes),
      same_cache_over_two_steps(),
      shift_invariance(spec(), "IgnoresAShiftOfQueryStartLoc",
                       "gives the same result when every query_start_loc entry is shifted", valid, classes),
      rejects_invalid(spec(), checkpoint_invalid_cases(), checkpoint_invalid_of),
      validate_names_rule(spec(), checkpoint_invalid_cases(), checkpoint_invalid_of),
      validate_accepts_valid(spec(), valid, classes),
      validate_applies_cap(spec(), valid, classes),
      writes_into_any_buffer(spec(), valid, classes),
  };
  table.properties[2].sentence = "satisfies the contract's invariants 1-4 (position, count, order, chain)";
  table.workload_classes = [](const Workload& w) { return checkpoint_edge_classes(w); };
  table.classes = {{"", all_checkpoint_edge_classes(), true},
                   {"invalid: ", all_checkpoint_invalid_rules(), false},
                   {"huge batch: ", all_checkpoint_huge_batch_classes(), false}};
  return table;
}

}  // namespace

std::vector<Suite> suites_of_mamba_checkpoint_plan() {
  std::vector<Suite> suites;
  suites.push_back({checkpoint_plan_table(),
                    {checkpoint_workloads(), checkpoint_edge_classes, all_checkpoint_edge_classes(),
                     checkpoint_huge_batches(), checkpoint_huge_batch_classes, all_checkpoint_huge_batch_classes(),
                     checkpoint_invalid_workloads(), all_checkpoint_invalid_rules()}});
  return suites;
}

}  // namespace chunkmeta::properties
