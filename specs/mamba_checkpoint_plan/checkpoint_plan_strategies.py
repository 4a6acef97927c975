"""Hypothesis strategies for the prefix-cache checkpoint plan of Mamba models
(specs/mamba_checkpoint_plan): valid workloads as mamba_checkpoint_plan's
arguments, drawn as the spec's generators draw them. Copied into the package
(chunkmeta/_strategies); chunkmeta.strategies exports them."""

from typing import NamedTuple

from hypothesis import strategies as st

from chunkmeta._drawing import MAX_VALUE, array, hypothesis_pick, weighted
from chunkmeta._strategies.mamba_strategies import mamba_batch, mamba_chunk_size

SPECS = ("mamba.checkpoint_plan",)
__all__ = ["checkpoint_plan_workloads", "CheckpointPlanWorkload"]


class CheckpointPlanWorkload(NamedTuple):
    """mamba_checkpoint_plan's arguments: ``mamba_checkpoint_plan(*workload)``."""

    chunk_size: int
    block_size: int
    num_computed_tokens_p: object
    query_start_loc_p: object


def _chunks_per_block(pick):
    """M / C: the engine's M = C, 2C and 8C most often, then any up to 64."""
    branch = weighted(pick, (4, 4, 3, 2, 1))
    return (1, 2, 8, None, None)[branch] or (pick(3, 16) if branch == 3 else pick(17, 64))


def _near_block_boundaries(pick, M, computed, starts):
    """Each row as drawn, or its computed tokens moved onto a block boundary, one
    short of it or one past it, or its new tokens ending on one; c + n and
    q[B] stay within 2^31-1."""
    room = MAX_VALUE - starts[-1]
    moved_computed, lengths = [], []
    for i, c in enumerate(computed):
        n = starts[i + 1] - starts[i]
        choice = pick(0, 5)
        boundary = max(1, (c + M // 2) // M) * M
        if choice <= 2:
            moved = boundary + choice - 1
            if 0 <= moved and moved + n <= MAX_VALUE:
                c = moved
        elif choice == 3 and n > 0:
            end = (c + n + M - 1) // M * M
            if end <= MAX_VALUE and end - c - n <= room:
                room -= end - c - n
                n = end - c
        moved_computed.append(c)
        lengths.append(n)
    laid_out = [starts[0]]
    for n in lengths:
        laid_out.append(laid_out[-1] + n)
    return moved_computed, laid_out


def checkpoint_plan_workloads(arrays="lists", max_rows=64):
    """Valid workloads of the checkpoint plan (specs/mamba_checkpoint_plan) as
    mamba_checkpoint_plan's arguments, CheckpointPlanWorkload(chunk_size,
    block_size, num_computed_tokens_p, query_start_loc_p): Mamba's batches with
    a block size M a multiple of the chunk size, three in four with rows moved
    onto, one short of and one past block boundaries; int32 tensors or numpy
    arrays, or lists of ints."""

    @st.composite
    def draw_workload(draw):
        pick = hypothesis_pick(draw)
        chunk = mamba_chunk_size(pick)
        computed, starts = mamba_batch(draw, pick, chunk, max_rows)
        block = min(_chunks_per_block(pick), MAX_VALUE // chunk) * chunk
        if weighted(pick, (1, 3)) == 1:
            computed, starts = _near_block_boundaries(pick, block, computed, starts)
        return CheckpointPlanWorkload(chunk, block, array(computed, arrays, "int32"), array(starts, arrays, "int32"))

    return draw_workload()


workloads = checkpoint_plan_workloads
