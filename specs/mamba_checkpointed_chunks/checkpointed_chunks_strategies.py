"""Hypothesis strategies for the checkpointed chunks
(specs/mamba_checkpointed_chunks): Mamba's workloads, each row given a
checkpoint offset drawn against its own grid as the spec's generators draw it,
as vLLM #57329's _compute_chunk_metadata takes them (the offsets a list of
ints). Copied into the package (chunkmeta/_strategies); chunkmeta.strategies
exports them."""

from typing import NamedTuple

from hypothesis import strategies as st

from chunkmeta._drawing import array, draw_rows, hypothesis_pick, weighted
from chunkmeta._strategies.mamba_strategies import mamba_batch, mamba_chunk_size

SPECS = ("mamba.checkpointed_chunks",)
__all__ = ["checkpointed_chunks_workloads", "CheckpointedChunksWorkload"]


class CheckpointedChunksWorkload(NamedTuple):
    """_compute_chunk_metadata's arguments with checkpoints: ``compute_chunk_metadata(*workload)``."""

    chunk_size: int
    num_prefills: int
    num_computed_tokens_p_cpu: object
    query_start_loc_p_cpu: object
    checkpoint_offsets_p: list


# none, first token, last token, on the grid, one before it, one past it, anywhere (checkpointed_chunks_generators.cpp)
_OFFSET_WEIGHTS = (30, 8, 10, 20, 8, 8, 16)


def _offset(kind, amount, c, n, C):
    if n < 2:
        return 0
    first = C - c % C
    grid = first + amount % 4 * C
    grid = grid if grid < n else (first if first < n else 0)
    if kind == 0:
        return 0
    if kind == 1:
        return 1
    if kind == 2:
        return n - 1
    if kind == 3:
        return grid
    if kind == 4:
        return grid - 1 if grid > 1 else 1
    if kind == 5:
        return grid + 1 if 0 < grid and grid + 1 < n else n - 1
    return 1 + amount % (n - 1)


def checkpoint_offsets(draw, pick, C, computed, starts):
    """One offset per row (a list of ints), 0 for no checkpoint."""
    draws = draw_rows(draw, len(computed), lambda pick_row: (weighted(pick_row, _OFFSET_WEIGHTS), pick_row(0, 2**31 - 2)))
    everywhere = weighted(pick, (80, 10, 10))  # as drawn, none, every row that can have one
    offsets = []
    for i, (kind, amount) in enumerate(draws):
        if everywhere == 1:
            kind = 0
        if everywhere == 2 and kind == 0:
            kind = 6
        offsets.append(_offset(kind, amount, computed[i], starts[i + 1] - starts[i], C))
    return offsets


def checkpointed_chunks_workloads(arrays="lists", max_rows=64):
    """Valid workloads of the checkpointed chunks, CheckpointedChunksWorkload(chunk_size,
    num_prefills, num_computed_tokens, query_start_loc, checkpoint_offsets): Mamba's, with
    checkpoints on and off each row's grid, at its first and last allowed token, and none;
    the arrays int32 tensors or numpy arrays, or lists of ints, the offsets a list."""

    @st.composite
    def draw_workload(draw):
        pick = hypothesis_pick(draw)
        C = mamba_chunk_size(pick)
        computed, starts = mamba_batch(draw, pick, C, max_rows)
        offsets = checkpoint_offsets(draw, pick, C, computed, starts)
        return CheckpointedChunksWorkload(C, len(computed), array(computed, arrays, "int32"),
                                          array(starts, arrays, "int32"), offsets)

    return draw_workload()


workloads = checkpointed_chunks_workloads
