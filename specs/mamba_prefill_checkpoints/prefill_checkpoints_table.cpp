// The prefill checkpoint planner's property suite (specs/mamba_prefill_checkpoints):
// the shared properties over its generators (invariant 5, the lockstep with
// the chunker, is among the invariants), and its relations: no alignment
// plans nothing, each row is planned on its own (split and join), and the
// plan fed to the chunker ends a chunk exactly at each planned position.
#include "chunkmeta/properties/table_helpers.hpp"
#include "mamba_checkpointed_chunks/checkpointed_chunks_spec.hpp"
#include "prefill_checkpoints_generators.hpp"
#include "prefill_checkpoints_spec.hpp"

namespace chunkmeta::properties {
namespace {

using namespace tables;
using harness::Arrays;

Arrays join_halves(const Arrays& left, const Arrays& right, std::int64_t, std::int64_t) {
  Arrays joined = left;
  for (std::size_t out = 0; out < joined.size() && out < right.size(); ++out)
    joined[out].insert(joined[out].end(), right[out].begin(), right[out].end());
  return joined;
}

Property no_alignment_plans_nothing(const Spec& spec, const ValueModel& values) {
  return builders::agrees_with_relation(
      spec, "PlansNothingWithoutAnAlignment",
      "plans no checkpoint (offsets 0, columns -1) when checkpoint_alignment is None",
      "without an alignment (the backend cannot export) a checkpoint was planned",
      gen::map(values.valid, [](Workload w) {
        w.optional_scalar.reset();
        return w;
      }),
      values.classes,
      [](const Workload& w, const Outcome&) -> std::optional<builders::Prediction> {
        if (w.optional_scalar) return std::nullopt;
        Arrays nothing{Int32Array(w.rows(), 0), Int32Array(w.rows(), -1)};
        return builders::Prediction{Outcome(std::move(nothing)),
                                    {"no alignment: every offset 0, every column -1", w, std::nullopt, nullptr}};
      });
}

// The chunker's workload of the whole plan at C = H (the hash grid), or nullopt when its rows make many chunks.
std::optional<Workload> chunker_batch(const Workload& plan, const Arrays& planned) {
  Workload chunker = harness::chunker_workload_of(plan, planned[0], plan.chunk_size);
  const auto chunks = harness::checkpointed_chunks_spec().chunks(chunker);
  if (!chunks || *chunks > (std::int64_t{1} << 16)) return std::nullopt;
  return chunker;
}

Property plan_ends_a_chunk(const Spec& spec, const ValueModel& values) {
  return builders::agrees_with_relation(
      spec, "EndsAChunkAtEachPlannedCheckpointWhenFedToTheChunker",
      "fed to the chunker with the rows' computed tokens (the whole batch, C = H), ends a chunk exactly at each planned "
      "position and names it",
      "the chunker, fed the plan, does not end a chunk at the planned position",
      values.valid, values.classes,
      [](const Workload& w, const Outcome& actual) -> std::optional<builders::Prediction> {
        if (!actual.ok() || actual.value().size() != 2 || actual.value()[0].size() != w.rows()) return std::nullopt;
        const auto chunker = chunker_batch(w, actual.value());
        if (!chunker) return std::nullopt;
        Outcome chunks = harness::checkpointed_chunks_spec().reference(*chunker);
        if (!chunks.ok()) {  // the plan is not valid input to the chunker: what the plan should have been says why
          return builders::Prediction{harness::prefill_checkpoints_spec().reference(w),
                                      {"the plan fed to the chunker (refused)", *chunker, std::move(chunks),
                                       &harness::checkpointed_chunks_spec()}};
        }
        // Where the chunker's checkpoint chunks end, as offsets into each query: the plan, when in lockstep.
        Arrays predicted = actual.value();
        const auto& cu = chunks.value()[0];
        const auto& at = chunks.value()[3];
        for (std::size_t i = 0; i < w.rows(); ++i) {
          if (at[i] < 0) continue;
          predicted[0][i] = static_cast<std::int32_t>(cu[static_cast<std::size_t>(at[i]) + 1] - chunker->query_start_loc[i]);
        }
        return builders::Prediction{Outcome(std::move(predicted)),
                                    {"the plan fed to the chunker (its checkpoint chunks' ends)", *chunker, std::move(chunks),
                                     &harness::checkpointed_chunks_spec()}};
      });
}

}  // namespace

std::vector<Suite> suites_of_mamba_prefill_checkpoints() {
  const ValueModel values{planner_valid_workloads(),   planner_edge_classes,        all_planner_edge_classes(),
                          planner_huge_batches(),      planner_huge_batch_classes,  all_planner_huge_batch_classes(),
                          planner_invalid_workloads(), all_planner_invalid_rules()};
  const Spec& spec = harness::prefill_checkpoints_spec();
  TablePlan plan;
  plan.huge_sentence = "matches the reference on batches of 2^15 to 140,000 rows, alignment 1";
  plan.invariants_sentence = "satisfies the contract's invariant 5 (each checkpoint on the hash grid inside its query at the "
                             "last boundary allowed, a multiple of the alignment, its column past the initial state's "
                             "block; none without an alignment; each row's plan ends the chunker's checkpoint chunk there)";
  plan.relations = {no_alignment_plans_nothing(spec, values), plan_ends_a_chunk(spec, values),
                    builders::split_and_join(spec, values.valid, values.classes, join_halves)};
  plan.invalid_first = false;
  std::vector<Suite> suites;
  suites.push_back({house_table(spec, values, planner_invalid_cases(), planner_invalid_of, std::move(plan)), values});
  return suites;
}

}  // namespace chunkmeta::properties
