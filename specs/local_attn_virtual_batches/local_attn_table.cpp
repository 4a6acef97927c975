// The virtual batches' property suite (specs/local_attn_virtual_batches): the
// shared properties over its generators, its relation to Mamba's chunking
// (with C = A and computed = s - n), and the library's own.
#include "chunkmeta/properties/table_helpers.hpp"
#include "local_attn_generators.hpp"
#include "local_attn_spec.hpp"
#include "mamba/mamba_spec.hpp"

namespace chunkmeta::properties {
namespace {

using namespace tables;
using harness::Arrays;

enum Output : std::size_t { cu_seqlens_q, seqlens_k, computed_local, virtual_row, block_start };

// The whole batch's virtual batches from its halves': the right half's query
// offsets moved by the left half's tokens, its rows by the left half's count.
Arrays join_batches(const Arrays& left, const Arrays& right, std::int64_t, std::int64_t left_rows) {
  Arrays joined = left;
  const std::int64_t tokens = left[cu_seqlens_q].back();
  for (std::size_t v = 1; v < right[cu_seqlens_q].size(); ++v)
    joined[cu_seqlens_q].push_back(static_cast<std::int32_t>(right[cu_seqlens_q][v] + tokens));
  for (const std::size_t a : {std::size_t{seqlens_k}, std::size_t{computed_local}, std::size_t{block_start}})
    joined[a].insert(joined[a].end(), right[a].begin(), right[a].end());
  for (const auto row : right[virtual_row]) joined[virtual_row].push_back(static_cast<std::int32_t>(row + left_rows));
  return joined;
}

// Mamba's workload for the same batch: C = A, computed = s - n.
Workload as_mamba(const Workload& w) {
  Workload mamba{w.chunk_size, {}, w.query_start_loc, harness::Dtype::int32, 0};
  for (std::size_t i = 0; i < w.rows(); ++i)
    mamba.num_computed_tokens.push_back(w.num_computed_tokens[i] - (w.query_start_loc[i + 1] - w.query_start_loc[i]));
  return mamba;
}

// specs/local_attn_virtual_batches, "Relations the properties check":
// cu_seqlens_q_local is Mamba's cu_chunk_seqlen and virtual_row its seq_idx
// (the other outputs as the implementation gave them; all five empty when it refused).
Property agrees_with_mamba(const Spec& spec) {
  return builders::agrees_with_relation(
      spec, "CutsRowsAsMambaDoesWithChunkSizeAAndComputedTokensSMinusN",
      "gives Mamba's cu_chunk_seqlen and seq_idx as cu_seqlens_q_local and virtual_row, with C = A and computed tokens "
      "s - n",
      "cu_seqlens_q_local and virtual_row differ from Mamba's cu_chunk_seqlen and seq_idx for the same batch with "
      "C = A and computed tokens s - n",
      local_attn_valid_workloads(), local_attn_edge_classes,
      [](const Workload& w, const Outcome& actual) -> std::optional<builders::Prediction> {
        const Workload mamba_workload = as_mamba(w);
        Outcome mamba = harness::mamba_spec().reference(mamba_workload);
        if (!mamba.ok()) return std::nullopt;
        Arrays predicted = actual.ok() ? actual.value() : Arrays(5);
        predicted[cu_seqlens_q] = mamba.value()[0];
        predicted[virtual_row] = mamba.value()[1];
        return builders::Prediction{Outcome(std::move(predicted)),
                                    {"Mamba's workload (its reference output)", mamba_workload, std::move(mamba),
                                     &harness::mamba_spec()}};
      });
}

}  // namespace

std::vector<Suite> suites_of_local_attn_virtual_batches() {
  const ValueModel values{local_attn_valid_workloads(),   local_attn_edge_classes,
                          all_local_attn_edge_classes(),  local_attn_huge_batches(),
                          local_attn_huge_batch_classes,  all_local_attn_huge_batch_classes(),
                          local_attn_invalid_workloads(), all_local_attn_invalid_rules()};
  const Spec& spec = harness::local_attn_spec();
  const builders::Classes classes = values.classes;
  TablePlan plan;
  plan.valid_sentence = "matches the reference, element for element, on every valid input";
  plan.huge_sentence = "matches the reference on batches of 2^15 to 140,000 rows, with pieces of rows past 2^15 and 2^16";
  plan.invariants_sentence = "satisfies the contract's invariants 1-4 (tokens, locality, causality, size)";
  plan.relations = {agrees_with_mamba(spec), builders::split_and_join(spec, values.valid, classes, join_batches),
                    builders::shift_invariance(spec, "IgnoresAShiftOfQueryStartLoc",
                                               "gives the same virtual batches when every query_start_loc entry is shifted",
                                               values.valid, classes)};
  std::vector<Suite> suites;
  suites.push_back({house_table(spec, values, local_attn_invalid_cases(), local_attn_invalid_of, std::move(plan)), values});
  return suites;
}

}  // namespace chunkmeta::properties
