// The prefill checkpoint planner's slips (specs/mamba_prefill_checkpoints),
// each the contract's rule rewritten wrong one way, for the mutant catalogue:
// the slips a port of vLLM's compute_mamba_prefill_checkpoints invites.
#include "mutants.hpp"
#include "prefill_checkpoints_spec.hpp"

namespace chunkmeta::mutants {
namespace {

using harness::Arrays;
using harness::Workload;

enum class PlanSlip {
  column_one_block_late,      // checkpoint_cols names the block the sequence ends in, not the one before
  eagle_block_ignored,        // drop_eagle_block not read: the checkpoint inside the speculative block
  missing_alignment_as_one,   // checkpoint_alignment None taken as 1: checkpoints the backend cannot export
  initial_block_rule_dropped, // the checkpoint's block may be the one the row's initial state is read from
  int32_block_count,          // ceil(s / M) as (s + M - 1) / M in int32, which wraps within M of 2^31
};

harness::Outcome plan_with(PlanSlip slip, const Workload& w) {
  if (auto error = harness::prefill_checkpoints_spec().validate(w)) return *error;
  const std::int64_t H = w.chunk_size;
  const std::int64_t M = w.block_size;
  const bool eagle = w.flag && slip != PlanSlip::eagle_block_ignored;
  std::optional<std::int64_t> alignment = w.optional_scalar;
  if (!alignment && slip == PlanSlip::missing_alignment_as_one) alignment = 1;
  Arrays out(2);
  for (std::size_t i = 0; i < w.rows(); ++i) {
    const std::int64_t s = w.num_computed_tokens[i];
    const std::int64_t a = s - w.second_per_row[i];
    const std::int64_t p = harness::checkpoint_position(s, H, eagle);
    const std::int64_t blocks = slip == PlanSlip::int32_block_count
                                    ? static_cast<std::int32_t>(s + M - 1) / M  // wraps past 2^31-1
                                    : (s + M - 1) / M;
    const std::int64_t col = blocks - 2;
    const bool past_initial = slip == PlanSlip::initial_block_rule_dropped || col > harness::floor_div(a - 1, M);
    const bool valid = alignment && a % H == 0 && past_initial && a + H <= p && a < p && p < s && (p - a) % *alignment == 0;
    out[0].push_back(static_cast<std::int32_t>(valid ? p - a : 0));
    out[1].push_back(static_cast<std::int32_t>(valid ? col + (slip == PlanSlip::column_one_block_late ? 1 : 0) : -1));
  }
  return out;
}

Mutant make_plan(std::string name, PlanSlip slip, std::string description) {
  return {harness::in_process(std::move(name), description, harness::prefill_checkpoints_spec(),
                              [slip](const Workload& w) { return plan_with(slip, w); }),
          std::move(description), 1, false};
}

}  // namespace

std::vector<Mutant> mutants_of_mamba_prefill_checkpoints() {
  return {
      make_plan("plan-column-one-block-late", PlanSlip::column_one_block_late,
                "checkpoint_cols names the block the sequence ends in (ceil(s / M) - 1), not the one before"),
      make_plan("plan-eagle-block-ignored", PlanSlip::eagle_block_ignored,
                "drop_eagle_block not read: the checkpoint planned inside the speculative (EAGLE) hash block"),
      make_plan("plan-missing-alignment-as-one", PlanSlip::missing_alignment_as_one,
                "checkpoint_alignment None taken as 1: checkpoints planned that the backend cannot export"),
      make_plan("plan-initial-block-rule-dropped", PlanSlip::initial_block_rule_dropped,
                "the rule that the checkpoint's block is never the row's initial state's block dropped"),
      make_plan("plan-int32-block-count", PlanSlip::int32_block_count,
                "ceil(s / M) computed as (s + M - 1) / M in int32, which wraps within M of 2^31: no checkpoint there"),
  };
}

}  // namespace chunkmeta::mutants
