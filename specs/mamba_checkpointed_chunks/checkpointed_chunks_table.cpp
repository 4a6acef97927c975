// The checkpointed chunks' property suite (specs/mamba_checkpointed_chunks):
// the shared properties over its generators, and the contract's relations to
// Part 1 (every offset 0 gives Mamba's chunks; a row with a checkpoint chunks
// as Mamba's two rows), split and join, and a shift of query_start_loc.
#include <algorithm>

#include "checkpointed_chunks_generators.hpp"
#include "checkpointed_chunks_spec.hpp"
#include "chunkmeta/properties/table_helpers.hpp"
#include "mamba/mamba_generators.hpp"
#include "mamba/mamba_spec.hpp"

namespace chunkmeta::properties {
namespace {

using namespace tables;
using harness::Arrays;

enum Output : std::size_t { cu_chunk_seqlen, seq_idx, last_chunk_indices, checkpoint_chunk_indices };

// The whole batch's outputs from its halves': the right half's chunk starts move
// by `shift`, its rows by `left_rows`, its chunk indices by the left's count.
Arrays join_halves(const Arrays& left, const Arrays& right, std::int64_t shift, std::int64_t left_rows) {
  Arrays joined = left;
  if (!joined[cu_chunk_seqlen].empty()) joined[cu_chunk_seqlen].pop_back();  // the left's end is the right's start
  const auto left_chunks = static_cast<std::int64_t>(left[seq_idx].size());
  for (auto v : right[cu_chunk_seqlen]) joined[cu_chunk_seqlen].push_back(static_cast<std::int32_t>(v + shift));
  for (auto v : right[seq_idx]) joined[seq_idx].push_back(static_cast<std::int32_t>(v + left_rows));
  for (auto v : right[last_chunk_indices]) joined[last_chunk_indices].push_back(static_cast<std::int32_t>(v + left_chunks));
  for (auto v : right[checkpoint_chunk_indices])
    joined[checkpoint_chunk_indices].push_back(static_cast<std::int32_t>(v < 0 ? v : v + left_chunks));
  return joined;
}

Workload without_checkpoints(Workload w) {
  w.second_per_row.assign(w.rows(), 0);
  return w;
}

Property checkpoints_off_is_part_1(const Spec& spec, const ValueModel& values) {
  return builders::agrees_with_relation(
      spec, "GivesMambasChunksWithoutCheckpoints",
      "gives Mamba's chunk metadata (and no checkpoint chunk) when every offset is 0",
      "with every offset 0 the chunks differ from Mamba's for the same batch",
      gen::map(values.valid, without_checkpoints), values.classes,
      [](const Workload& w, const Outcome&) -> std::optional<builders::Prediction> {
        if (std::any_of(w.second_per_row.begin(), w.second_per_row.end(), [](std::int64_t o) { return o != 0; }))
          return std::nullopt;
        Workload mamba = w;
        mamba.second_per_row.clear();
        Outcome theirs = harness::mamba_spec().reference(mamba);
        if (!theirs.ok()) return std::nullopt;
        Arrays predicted = theirs.value();
        predicted.emplace_back(w.rows(), -1);
        return builders::Prediction{Outcome(std::move(predicted)),
                                    {"the same batch as Mamba's (its reference)", mamba, std::move(theirs), &harness::mamba_spec()}};
      });
}

Property chunks_as_two_rows(const Spec& spec, const ValueModel& values) {
  return builders::agrees_with_relation(
      spec, "ChunksARowWithACheckpointAsMambasTwoRows",
      "chunks a row with a checkpoint as Mamba's two rows (c, o) and (c + o, n - o), the checkpoint chunk the first's last",
      "the chunks differ from Mamba's for the batch with each checkpointed row split in two at its checkpoint",
      values.valid, values.classes,
      [](const Workload& w, const Outcome&) -> std::optional<builders::Prediction> {
        if (w.second_per_row.size() != w.rows()) return std::nullopt;
        const harness::SplitRows split = harness::split_at_checkpoints(w);
        Outcome theirs = harness::mamba_spec().reference(split.mamba);
        if (!theirs.ok()) return std::nullopt;
        Outcome predicted(harness::merged_outputs(w, split, theirs.value()));
        return builders::Prediction{std::move(predicted),
                                    {"each checkpointed row split in two (Mamba's reference)", split.mamba,
                                     std::move(theirs), &harness::mamba_spec()}};
      });
}

}  // namespace

std::vector<Suite> suites_of_mamba_checkpointed_chunks() {
  const ValueModel values{checkpointed_valid_workloads(),   checkpointed_edge_classes,        all_checkpointed_edge_classes(),
                          checkpointed_huge_batches(),      huge_batch_classes,               all_huge_batch_classes(),
                          checkpointed_invalid_workloads(), all_checkpointed_invalid_rules()};
  const Spec& spec = harness::checkpointed_chunks_spec();
  TablePlan plan;
  plan.huge_sentence = "matches the reference on batches of 2^15 to 140,000 rows, a checkpoint in about one row in four";
  plan.invariants_sentence = "satisfies the contract's invariants 1-3 (Part 1's with the checkpoint as one more "
                             "boundary, the checkpoint chunk ending at it, one chunk more off the grid and none on it)";
  plan.relations = {checkpoints_off_is_part_1(spec, values), chunks_as_two_rows(spec, values),
                    builders::split_and_join(spec, values.valid, values.classes, join_halves),
                    builders::shift_invariance(spec, "IgnoresAShiftOfQueryStartLoc",
                                               "gives the same result when every query_start_loc entry is shifted",
                                               values.valid, values.classes)};
  plan.invalid_first = true;  // its validation slip (o = n accepted) is met after 10,200 valid cases, not 40,200
  std::vector<Suite> suites;
  suites.push_back({house_table(spec, values, checkpointed_invalid_cases(), checkpointed_invalid_of, std::move(plan)), values});
  return suites;
}

}  // namespace chunkmeta::properties
