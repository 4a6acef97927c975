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

engine::PropertyTable conv1d_table(const Spec& spec) {
  using namespace builders;
  const auto valid = conv1d_valid_workloads();
  const Classes classes = [](const Workload& w) { return conv1d_edge_classes(w); };
  engine::PropertyTable table;
  table.spec = &spec;
  table.properties = {
      matches_reference(spec, "MatchesReferenceOnEveryValidWorkload",
                        "matches the reference, element for element, on every valid input", valid, classes),
      matches_reference(spec, "MatchesReferenceOnHugeBatches",
                        "matches the reference on batches of 2^15 to 140,000 rows, with programs of rows past 2^15 "
                        "and 2^16",
                        conv1d_huge_batches(), [](const Workload& w) { return fla_huge_batch_classes(w); }, 0.02),
      satisfies_invariants(spec, valid, classes),
      rejects_invalid(spec, conv1d_invalid_cases(), conv1d_invalid_of),
      agrees_with_fla(spec),
      split_and_join(spec, valid, classes, join_maps),
      shift_invariance(spec, "IgnoresAShiftOfQueryStartLoc",
                       "gives the same map when every query_start_loc entry is shifted", valid, classes),
      validate_names_rule(spec, conv1d_invalid_cases(), conv1d_invalid_of),
      validate_accepts_valid(spec, valid, classes),
      validate_applies_cap(spec, valid, classes),
      writes_into_any_buffer(spec, valid, classes),
  };
  table.properties[2].sentence = "satisfies the spec's four invariants (the programs tile every token once, in order)";
  table.properties[10].sentence =
      "writes the engine's buffers of any size at least the map's, the rest of batch_ptr and token_chunk_offset_ptr "
      "padded with -1, or names the short one";
  table.workload_classes = classes;
  table.classes = {{"", all_conv1d_edge_classes(), true},
                   {"invalid: ", all_conv1d_invalid_rules(), false},
                   {"huge batch: ", all_fla_huge_batch_classes(), false}};
  return table;
}

}  // namespace

std::vector<Suite> suites_of_conv1d_program_map() {
  const ValueModel values{conv1d_valid_workloads(),   conv1d_edge_classes,    all_conv1d_edge_classes(),
                          conv1d_huge_batches(),      fla_huge_batch_classes, all_fla_huge_batch_classes(),
                          conv1d_invalid_workloads(), all_conv1d_invalid_rules()};
  std::vector<Suite> suites;
  suites.push_back({conv1d_table(harness::conv1d_program_map_spec()), values});
  return suites;
}

}  // namespace chunkmeta::properties
