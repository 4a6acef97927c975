// The checkpoint plan's property suite (specs/mamba_checkpoint_plan): the
// shared properties over its generators, invariant 5 (a row's tokens in one
// step or split across two leave every cache block holding the state after
// the same number of tokens), and the library's own properties.
#include <algorithm>
#include <string>
#include <tuple>

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

// The writes a step's plan makes, in order: (row, block) and the tokens of
// the row whose state is saved there (the absolute end of the chunk, from
// Mamba's metadata of that step); nullopt when the plan names a chunk the step
// does not have.
struct Write {
  std::int64_t row;
  std::int64_t block;
  std::int64_t tokens;
};
using Writes = std::vector<Write>;

std::optional<Writes> writes_of(const Workload& w, const harness::Arrays& plan) {
  // The library's fast metadata: its own suite proves it equal to the reference, at a fraction of the cost.
  const auto metadata = fast(view_of(w));
  if (!metadata.ok() || plan.size() != 6) return std::nullopt;
  const auto& cu = metadata.value().cu_chunk_seqlen;
  const auto& seq = metadata.value().seq_idx;
  const auto& q = w.query_start_loc;
  Writes writes;
  const std::size_t count = std::min({plan[3].size(), plan[4].size(), plan[5].size()});
  writes.reserve(count);
  for (std::size_t e = 0; e < count; ++e) {
    const std::int64_t k = plan[5][e];
    if (k < 0 || k >= static_cast<std::int64_t>(seq.size())) return std::nullopt;
    const auto row = static_cast<std::size_t>(seq[static_cast<std::size_t>(k)]);
    writes.push_back({plan[3][e], plan[4][e], w.num_computed_tokens[row] + cu[static_cast<std::size_t>(k) + 1] - (q[row] - q[0])});
  }
  return writes;
}

// The cache the writes leave: per (row, block), the last write's tokens, sorted by (row, block).
Writes cache_of(Writes writes) {
  std::stable_sort(writes.begin(), writes.end(),
                   [](const Write& a, const Write& b) { return std::tie(a.row, a.block) < std::tie(b.row, b.block); });
  Writes cache;
  for (const auto& write : writes) {
    if (!cache.empty() && cache.back().row == write.row && cache.back().block == write.block) {
      cache.back() = write;  // a later write replaces an earlier one
    } else {
      cache.push_back(write);
    }
  }
  return cache;
}

// Where two caches differ, for people; "" when they hold the same.
std::string difference(const Writes& one, const Writes& two) {
  const auto key = [](const Write& w) { return std::pair(w.row, w.block); };
  std::size_t a = 0;
  std::size_t b = 0;
  while (a < one.size() || b < two.size()) {
    if (b == two.size() || (a < one.size() && key(one[a]) < key(two[b])))
      return "row " + std::to_string(one[a].row) + "'s block " + std::to_string(one[a].block) +
             " holds the state after " + std::to_string(one[a].tokens) + " tokens in one step, nothing in two";
    if (a == one.size() || key(two[b]) < key(one[a]))
      return "row " + std::to_string(two[b].row) + "'s block " + std::to_string(two[b].block) +
             " is written only in two steps (the state after " + std::to_string(two[b].tokens) + " tokens)";
    if (one[a].tokens != two[b].tokens)
      return "row " + std::to_string(one[a].row) + "'s block " + std::to_string(one[a].block) +
             " holds the state after " + std::to_string(one[a].tokens) + " tokens in one step, after " +
             std::to_string(two[b].tokens) + " in two";
    ++a;
    ++b;
  }
  return "";
}

Property same_cache_over_two_steps() {
  Property p;
  p.name = "LeavesTheSameCacheWhenARowsTokensAreSplitAcrossTwoSteps";
  // A case asks three plans and computes three steps' metadata (~4x a differential case): a
  // third of the cases keeps the suite's cost near Mamba's, over the same generators.
  p.case_share = 0.3;
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
    // The three answers are outcomes: the engine reports a misbehaviour before a judge runs (builders::outcome_of).
    const Outcome* outcomes[] = {&builders::outcome_of(answers[0]), &builders::outcome_of(answers[1]),
                                 &builders::outcome_of(answers[2])};
    const bool all_ok = outcomes[0]->ok() && outcomes[1]->ok() && outcomes[2]->ok();
    std::string where = "a plan names a chunk its step does not have";
    if (all_ok) {
      const auto one = writes_of(c.workload, outcomes[0]->value());
      auto first_writes = writes_of(first, outcomes[1]->value());
      const auto second_writes = writes_of(second, outcomes[2]->value());
      if (one && first_writes && second_writes) {
        first_writes->insert(first_writes->end(), second_writes->begin(), second_writes->end());
        where = difference(cache_of(*one), cache_of(std::move(*first_writes)));
        if (where.empty()) return std::nullopt;
      }
    }
    return builders::expect_relation(spec(), c.workload,
                                     "the cache differs when each row's new tokens are split across two steps: " + where,
                                     {{"first step", first, *outcomes[1], nullptr},
                                      {"second step (computed tokens moved on)", second, *outcomes[2], nullptr}},
                                     all_ok ? *outcomes[0] : *outcomes[1], *outcomes[0]);
  };
  p.classes = [](const Case& c) { return checkpoint_edge_classes(c.workload); };
  return p;
}

}  // namespace

std::vector<Suite> suites_of_mamba_checkpoint_plan() {
  const ValueModel values{checkpoint_workloads(),         checkpoint_edge_classes,        all_checkpoint_edge_classes(),
                          checkpoint_huge_batches(),      checkpoint_huge_batch_classes,  all_checkpoint_huge_batch_classes(),
                          checkpoint_invalid_workloads(), all_checkpoint_invalid_rules()};
  TablePlan plan;
  plan.huge_sentence = "matches the reference on batches of 2^15 to 140,000 rows, with rows past 2^15 and 2^16";
  plan.invariants_sentence = "satisfies the contract's invariants 1-4 (position, count, order, chain)";
  // Invalid input first: a block size accepted against its rule (vLLM #57278) is met early.
  plan.relations = {same_cache_over_two_steps(),
                    builders::shift_invariance(spec(), "IgnoresAShiftOfQueryStartLoc",
                                               "gives the same result when every query_start_loc entry is shifted",
                                               values.valid, values.classes)};
  std::vector<Suite> suites;
  suites.push_back({house_table(spec(), values, checkpoint_invalid_cases(), checkpoint_invalid_of, std::move(plan)), values});
  return suites;
}

}  // namespace chunkmeta::properties
