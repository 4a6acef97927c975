// FLA's property suites (specs/fla), one per output: the shared properties
// over its generators, the relation to Mamba's spec (no computed tokens), and
// the library's own properties (validation, the cap, the buffers of the writers).
#include "chunkmeta/properties/table_helpers.hpp"
#include "fla_generators.hpp"
#include "fla_spec.hpp"
#include "mamba/mamba_spec.hpp"

namespace chunkmeta::properties {
namespace {

using namespace tables;
using harness::Arrays;

// The whole batch's outputs from its halves': the right half's sequence ids
// move by `left_rows` (chunk_indices), its offsets by the left's total (chunk_offsets).
Arrays join_indices(const Arrays& left, const Arrays& right, std::int64_t, std::int64_t left_rows) {
  Arrays joined = left;
  for (std::size_t k = 0; k < right[0].size(); ++k)
    joined[0].push_back(static_cast<std::int32_t>(k % 2 == 0 ? right[0][k] + left_rows : right[0][k]));
  return joined;
}

Arrays join_offsets(const Arrays& left, const Arrays& right, std::int64_t, std::int64_t) {
  Arrays joined = left;
  // The left half's total is the right half's first offset.
  const std::int64_t base = left[0].empty() ? 0 : left[0].back();
  for (std::size_t i = 1; i < right[0].size(); ++i) joined[0].push_back(static_cast<std::int32_t>(right[0][i] + base));
  return joined;
}

// FLA's outputs from Mamba's for the same workload without computed tokens:
// chunk k of row i at cu_chunk_seqlen[k] is (i, (cu_chunk_seqlen[k] - start_i) / C),
// and offsets[i + 1] = last_chunk_indices[i] + 1.
Arrays fla_outputs_from_mamba(const harness::Spec& fla_spec, const Workload& w, const Arrays& mamba) {
  const auto& cu = mamba[0];
  const auto& seq = mamba[1];
  const auto& last = mamba[2];
  Arrays out(1);
  if (&fla_spec == &harness::fla_chunk_offsets_spec()) {
    out[0].push_back(0);
    for (auto l : last) out[0].push_back(l + 1);
    return out;
  }
  const auto& q = w.query_start_loc;
  for (std::size_t k = 0; k < seq.size(); ++k) {
    const std::int64_t row = seq[k];
    const std::int64_t start = q[static_cast<std::size_t>(row)] - q[0];
    out[0].push_back(seq[k]);
    out[0].push_back(static_cast<std::int32_t>((cu[k] - start) / w.chunk_size));
  }
  return out;
}


// specs/fla, "Relations the properties check": without computed tokens, Mamba's chunking
// is FLA's. The implementation's answer against Mamba's reference, transformed.
Property agrees_with_mamba(const Spec& spec) {
  return builders::agrees_with_relation(
      spec, "AgreesWithTheMambaSpecWithoutComputedTokens",
      "gives what Mamba's reference gives for the same batch without computed tokens",
      "the output differs from Mamba's chunk metadata for the same batch without computed tokens",
      fla_valid_workloads(), fla_edge_classes,
      [&spec](const Workload& w, const Outcome&) -> std::optional<builders::Prediction> {
        Outcome mamba = harness::mamba_spec().reference(w);
        if (!mamba.ok()) return std::nullopt;
        Outcome predicted(fla_outputs_from_mamba(spec, w, mamba.value()));
        return builders::Prediction{std::move(predicted),
                                    {"the same batch as Mamba's workload (its reference output)", w, std::move(mamba),
                                     &harness::mamba_spec()}};
      });
}

engine::PropertyTable fla_table(const Spec& spec, const ValueModel& values) {
  TablePlan plan;
  plan.valid_sentence = "matches the reference, element for element, on every valid input";
  plan.huge_sentence =
      "matches the reference on batches of 2^15 to 140,000 sequences, with chunks of sequences past 2^15 and 2^16";
  plan.invariants_sentence = "satisfies the spec's five invariants";
  plan.relations = {agrees_with_mamba(spec),
                    builders::split_and_join(spec, values.valid, values.classes,
                                             &spec == &harness::fla_chunk_indices_spec() ? join_indices : join_offsets),
                    builders::shift_invariance(spec, "IgnoresAShiftOfCuSeqlens",
                                               "gives the same result when every cu_seqlens entry is shifted",
                                               values.valid, values.classes)};
  plan.invalid_first = false;
  return house_table(spec, values, fla_invalid_cases(), fla_invalid_of, std::move(plan));
}

}  // namespace

std::vector<Suite> suites_of_fla() {
  // Both outputs read the same values.
  const ValueModel values{fla_valid_workloads(),   fla_edge_classes,        all_fla_edge_classes(),
                          fla_huge_batches(),      fla_huge_batch_classes,  all_fla_huge_batch_classes(),
                          fla_invalid_workloads(), all_fla_invalid_rules()};
  std::vector<Suite> suites;
  suites.push_back({fla_table(harness::fla_chunk_indices_spec(), values), values});
  suites.push_back({fla_table(harness::fla_chunk_offsets_spec(), values), values});
  return suites;
}

}  // namespace chunkmeta::properties
