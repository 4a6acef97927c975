// chunkmeta's own functions as the steps' defaults: the chunker (Parts 1 and 6),
// the checkpoint plan (Part 3) and the checkpoint planner (Part 6).
#include "chunkmeta/checkpoint_plan.hpp"
#include "chunkmeta/checkpointed_chunks.hpp"
#include "chunkmeta/prefill_checkpoints.hpp"
#include "chunkmeta/steps/steps.hpp"

namespace chunkmeta::steps {
namespace {

template <typename Array>
std::vector<std::int32_t> copied(const Array& array) {
  return std::vector<std::int32_t>(array.begin(), array.end());
}

}  // namespace

Functions own_functions() {
  Functions functions;
  functions.chunks = [](const ChunksInput& in) -> Answer<ChunksOutput> {
    const std::vector<std::int64_t> none(in.num_computed_tokens.size(), 0);
    const auto result = checkpointed_chunks::chunks(checkpointed_chunks::View64{
        in.chunk_size, in.num_computed_tokens, in.query_start_loc,
        in.checkpoint_offsets.empty() ? std::span<const std::int64_t>(none) : in.checkpoint_offsets});
    if (!result) return result.error().message();
    const auto& out = result.value();
    return ChunksOutput{copied(out.cu_chunk_seqlen), copied(out.seq_idx), copied(out.last_chunk_indices),
                        copied(out.checkpoint_chunk_indices)};
  };
  functions.plan = [](const PlanInput& in) -> Answer<PlanOutput> {
    const auto result =
        checkpoint::plan(checkpoint::View64{in.chunk_size, in.block_size, in.num_computed_tokens, in.query_start_loc});
    if (!result) return result.error().message();
    const auto& out = result.value();
    return PlanOutput{copied(out.block_idx_last_computed_token), copied(out.block_idx_first_scheduled_token),
                      copied(out.block_idx_last_scheduled_token), copied(out.write_row), copied(out.write_block),
                      copied(out.write_chunk)};
  };
  functions.checkpoints = [](const CheckpointsInput& in) -> Answer<CheckpointsOutput> {
    const auto result = prefill_checkpoints::checkpoints(prefill_checkpoints::View{
        in.seq_lens, in.query_lens, in.hash_block_size, in.mamba_block_size, in.checkpoint_alignment,
        in.drop_eagle_block});
    if (!result) return result.error().message();
    const auto& out = result.value();
    return CheckpointsOutput{copied(out.checkpoint_offsets), out.checkpoint_cols};
  };
  return functions;
}

}  // namespace chunkmeta::steps
