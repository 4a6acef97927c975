// The conv1d program map's property suite (specs/conv1d_program_map): the
// shared properties over its generators, its relation to FLA's chunk indices
// at C = block_m, and the library's own (validation, the cap, the engine's
// buffers written and padded with -1).
#include "chunkmeta/properties/table_helpers.hpp"
#include "conv1d_generators.hpp"
#include "conv1d_spec.hpp"
#include "fla/fla_generators.hpp"
#include "fla/fla_spec.hpp"

namespace chunkmeta::properties {
namespace {

using namespace tables;
using harness::Arrays;

enum Output : std::size_t { nums, batch_ptr, token_chunk_offset_ptr };

// The whole batch's map from its halves': nums and the blocks concatenated,
// the right half's rows moved by `left_rows`.
Arrays join_maps(const Arrays& left, const Arrays& right, std::int64_t, std::int64_t left_rows) {
  Arrays joined = left;
  for (const std::size_t a : {std::size_t{nums}, std::size_t{token_chunk_offset_ptr}})
    joined[a].insert(joined[a].end(), right[a].begin(), right[a].end());
  for (const auto row : right[batch_ptr]) joined[batch_ptr].push_back(static_cast<std::int32_t>(row + left_rows));
  return joined;
}

// The map from FLA's outputs for the same cu_seqlens at C = block_m: program p
// is chunk_indices' row p split in two columns, nums the chunk_offsets' steps.
Arrays map_from_fla(const Arrays& indices, const Arrays& offsets) {
  Arrays map(3);
  for (std::size_t k = 0; k + 1 < indices[0].size(); k += 2) {
    map[batch_ptr].push_back(indices[0][k]);
    map[token_chunk_offset_ptr].push_back(indices[0][k + 1]);
  }
  for (std::size_t i = 0; i + 1 < offsets[0].size(); ++i) map[nums].push_back(offsets[0][i + 1] - offsets[0][i]);
  return map;
}

// specs/conv1d_program_map, "Relation to FLA": the implementation's answer
// against FLA's reference chunk indices and offsets, transformed.
Property agrees_with_fla(const Spec& spec) {
  return builders::agrees_with_relation(
      spec, "IsFlasChunkIndicesAtCEqualToBlockMSplitInTwoColumns",
      "gives FLA's chunk indices (split in two columns) and chunk counts for the same cu_seqlens at C = block_m",
      "the map differs from FLA's chunk_indices and chunk_offsets for the same cu_seqlens at C = block_m",
      conv1d_valid_workloads(), conv1d_edge_classes,
      [](const Workload& w, const Outcome&) -> std::optional<builders::Prediction> {
        Outcome indices = harness::fla_chunk_indices_spec().reference(w);
        const Outcome offsets = harness::fla_chunk_offsets_spec().reference(w);
        if (!indices.ok() || !offsets.ok()) return std::nullopt;
        Outcome predicted(map_from_fla(indices.value(), offsets.value()));
        return builders::Prediction{std::move(predicted),
                                    {"the same cu_seqlens and C (FLA's reference chunk_indices)", w, std::move(indices),
                                     &harness::fla_chunk_indices_spec()}};
      });
}

}  // namespace

std::vector<Suite> suites_of_conv1d_program_map() {
  const ValueModel values{conv1d_valid_workloads(),   conv1d_edge_classes,    all_conv1d_edge_classes(),
                          conv1d_huge_batches(),      fla_huge_batch_classes, all_fla_huge_batch_classes(),
                          conv1d_invalid_workloads(), all_conv1d_invalid_rules()};
  const Spec& spec = harness::conv1d_program_map_spec();
  const builders::Classes classes = values.classes;
  TablePlan plan;
  plan.valid_sentence = "matches the reference, element for element, on every valid input";
  plan.huge_sentence = "matches the reference on batches of 2^15 to 140,000 rows, with programs of rows past 2^15 and 2^16";
  plan.invariants_sentence = "satisfies the spec's four invariants (the programs tile every token once, in order)";
  plan.relations = {agrees_with_fla(spec), builders::split_and_join(spec, values.valid, classes, join_maps),
                    builders::shift_invariance(spec, "IgnoresAShiftOfQueryStartLoc",
                                               "gives the same map when every query_start_loc entry is shifted",
                                               values.valid, classes)};
  engine::PropertyTable table = house_table(spec, values, conv1d_invalid_cases(), conv1d_invalid_of, std::move(plan));
  table.properties.back().sentence =
      "writes the engine's buffers of any size at least the map's, the rest of batch_ptr and token_chunk_offset_ptr "
      "padded with -1, or names the short one";
  std::vector<Suite> suites;
  suites.push_back({std::move(table), values});
  return suites;
}

}  // namespace chunkmeta::properties
