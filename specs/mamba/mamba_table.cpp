// Mamba's property suite (specs/mamba): the shared properties over its
// generators, the chunk-multiple relation only computed tokens have, and the
// library's own properties (validation, the cap, fast_into's buffers).
#include <algorithm>

#include "chunkmeta/chunkmeta.hpp"
#include "chunkmeta/properties/table_helpers.hpp"
#include "mamba_generators.hpp"
#include "mamba_spec.hpp"

namespace chunkmeta::properties {
namespace {

using namespace tables;

const harness::Spec& spec() { return harness::mamba_spec(); }

// num_computed_tokens[i] += multiples[i] * chunk_size.
Workload add_chunk_multiples(const Workload& w, const std::vector<std::int64_t>& multiples) {
  Workload moved = w;
  for (std::size_t i = 0; i < moved.num_computed_tokens.size() && i < multiples.size(); ++i)
    moved.num_computed_tokens[i] += multiples[i] * w.chunk_size;
  return moved;
}


// The whole batch's outputs from its halves': the right half's chunk starts
// move by `shift`, its rows by `left_rows`, its last chunks by the left's count.
Arrays join_halves(const Arrays& left, const Arrays& right, std::int64_t shift, std::int64_t left_rows) {
  Arrays joined = left;
  auto& cu = joined[0];
  // The left half's closing entry is the right half's opening one.
  if (!cu.empty()) cu.pop_back();
  const auto left_chunks = static_cast<std::int64_t>(left[1].size());
  for (auto v : right[0]) cu.push_back(static_cast<std::int32_t>(v + shift));
  for (auto v : right[1]) joined[1].push_back(static_cast<std::int32_t>(v + left_rows));
  for (auto v : right[2]) joined[2].push_back(static_cast<std::int32_t>(v + left_chunks));
  return joined;
}

// num_computed_tokens[i] moved by multiples of C that keep it in range, for the (maybe shrunk) workload.
std::vector<std::int64_t> multiples_of(const Case& c) {
  const Workload& w = c.workload;
  std::vector<std::int64_t> multiples;
  for (std::size_t i = 0; i < w.rows(); ++i) {
    const std::int64_t computed = w.num_computed_tokens[i];
    const std::int64_t tokens = w.query_start_loc[i + 1] - w.query_start_loc[i];
    const std::int64_t lo = -(computed / w.chunk_size);
    const std::int64_t hi = (kMaxValue - computed - tokens) / w.chunk_size;
    multiples.push_back(std::clamp<std::int64_t>(i < c.parameters.size() ? c.parameters[i] : 0, lo, hi));
  }
  return multiples;
}

Property chunk_multiples_invariance() {
  Property p;
  p.name = "IgnoresMultiplesOfChunkSizeInComputedTokens";
  p.sentence = "gives the same result when multiples of chunk_size are added to computed tokens";
  const auto cases = gen::mapcat(valid_workloads(), [](const Workload& w) {
    auto salts = gen::container<std::vector<std::int64_t>>(w.rows(), inclusive_range(0, std::int64_t{1} << 62));
    return gen::map(salts, [w](const std::vector<std::int64_t>& salt) {
      Case c{w, {}};
      for (std::size_t i = 0; i < salt.size(); ++i) {
        const std::int64_t computed = w.num_computed_tokens[i];
        const std::int64_t tokens = w.query_start_loc[i + 1] - w.query_start_loc[i];
        const std::int64_t lo = -(computed / w.chunk_size);
        const std::int64_t hi = (kMaxValue - computed - tokens) / w.chunk_size;
        c.parameters.push_back(lo + salt[i] % (hi - lo + 1));
      }
      return c;
    });
  });
  p.draw = [cases](const rc::Random& random, int size) { return pick(cases, random, size); };
  p.asks = [](const Case& c) { return std::vector<Workload>{c.workload, add_chunk_multiples(c.workload, multiples_of(c))}; };
  p.judge = [](const Implementation&, const Case& c, std::span<const Answer> answers) -> std::optional<Counterexample> {
    const Workload moved = add_chunk_multiples(c.workload, multiples_of(c));
    // Both answers are outcomes: the engine reports a misbehaviour before a judge runs (builders::outcome_of).
    const Outcome& original = builders::outcome_of(answers[0]);
    const Outcome& after = builders::outcome_of(answers[1]);
    if (original.ok() && after.ok() && !harness::compare_outcomes(spec(), original, after)) return std::nullopt;
    return builders::expect_relation(spec(), c.workload,
                                     "adding multiples of chunk_size to computed tokens changed the output",
                                     {{"computed tokens moved by multiples of chunk_size", moved, after, nullptr},
                                      {"original", c.workload, original, nullptr}},
                                     original, after);
  };
  p.classes = [](const Case& c) { return edge_classes(c.workload); };
  return p;
}


}  // namespace

std::vector<Suite> suites_of_mamba() {
  const ValueModel values{valid_workloads(),    edge_classes,       all_edge_classes(), huge_batches(), huge_batch_classes,
                          all_huge_batch_classes(), invalid_workloads(), all_invalid_rules()};
  TablePlan plan;
  plan.huge_sentence =
      "matches the reference on batches of 2^15 to 140,000 rows, with chunks at row indices past 2^15 and 2^16";
  plan.invariants_sentence = "satisfies the spec's seven invariants";
  plan.relations = {builders::split_and_join(spec(), values.valid, values.classes, join_halves),
                    builders::shift_invariance(spec(), "IgnoresAShiftOfQueryStartLoc",
                                               "gives the same result when every query_start_loc entry is shifted",
                                               values.valid, values.classes),
                    chunk_multiples_invariance()};
  plan.invalid_first = false;
  std::vector<Suite> suites;
  suites.push_back({house_table(spec(), values, invalid_cases(), invalid_of, std::move(plan)), values});
  return suites;
}

}  // namespace chunkmeta::properties
