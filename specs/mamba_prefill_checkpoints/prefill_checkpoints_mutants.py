"""The prefill checkpoint planner's slips (prefill_checkpoints_mutants.cpp) as
functions with vLLM's signature, fn(seq_lens, query_lens, hash_block_size,
mamba_block_size, checkpoint_alignment, drop_eagle_block) ->
(checkpoint_offsets, checkpoint_cols), giving what the C++ mutant gives on
every valid workload (gathered by mutants/mutants.py for the three-door test)."""

from int_arithmetic import int32, trunc_div


def _plan(seq_lens, query_lens, H, M, alignment, eagle, *, col_late=False, initial_rule=True, int32_blocks=False):
    offsets, cols = [], []
    for s, n in zip(seq_lens, query_lens):
        a = s - n
        p = max((s - 1) // H * H - (H if eagle else 0), 0)
        blocks = trunc_div(int32(s + M - 1), M) if int32_blocks else (s + M - 1) // M
        col = blocks - 2
        valid = (alignment is not None and a % H == 0 and (not initial_rule or col > (a - 1) // M)
                 and a + H <= p and a < p < s and (p - a) % alignment == 0)
        offsets.append(p - a if valid else 0)
        cols.append(col + (1 if col_late else 0) if valid else -1)
    return offsets, cols


def plan_column_one_block_late(seq_lens, query_lens, hash_block_size, mamba_block_size, checkpoint_alignment,
                               drop_eagle_block):
    return _plan(seq_lens, query_lens, hash_block_size, mamba_block_size, checkpoint_alignment, drop_eagle_block,
                 col_late=True)


def plan_eagle_block_ignored(seq_lens, query_lens, hash_block_size, mamba_block_size, checkpoint_alignment,
                             drop_eagle_block):
    return _plan(seq_lens, query_lens, hash_block_size, mamba_block_size, checkpoint_alignment, False)


def plan_missing_alignment_as_one(seq_lens, query_lens, hash_block_size, mamba_block_size, checkpoint_alignment,
                                  drop_eagle_block):
    alignment = 1 if checkpoint_alignment is None else checkpoint_alignment
    return _plan(seq_lens, query_lens, hash_block_size, mamba_block_size, alignment, drop_eagle_block)


def plan_initial_block_rule_dropped(seq_lens, query_lens, hash_block_size, mamba_block_size, checkpoint_alignment,
                                    drop_eagle_block):
    return _plan(seq_lens, query_lens, hash_block_size, mamba_block_size, checkpoint_alignment, drop_eagle_block,
                 initial_rule=False)


def plan_int32_block_count(seq_lens, query_lens, hash_block_size, mamba_block_size, checkpoint_alignment,
                           drop_eagle_block):
    return _plan(seq_lens, query_lens, hash_block_size, mamba_block_size, checkpoint_alignment, drop_eagle_block,
                 int32_blocks=True)


# Every slip is caught by the engine function's door (valid workloads).
PREFILL_CHECKPOINTS_SLIPS = [
    "plan_column_one_block_late",
    "plan_eagle_block_ignored",
    "plan_missing_alignment_as_one",
    "plan_initial_block_rule_dropped",
    "plan_int32_block_count",
]
