"""Hypothesis strategies for the packed grid (specs/mamba_packed_grid): valid
workloads as compute_varlen_chunk_metadata's and
cu_seqlens_to_chunk_indices_offsets' arguments, drawn as the spec's
generators draw them (each row's length against the room left in the
physical chunk it starts in). Copied into the package (chunkmeta/_strategies);
chunkmeta.strategies exports them."""

from typing import NamedTuple

from hypothesis import strategies as st

from chunkmeta._drawing import MAX_VALUE, array, batch_size, draw_rows, hypothesis_pick, weighted

SPECS = ("mamba.packed_grid", "mamba_ssm.chunk_indices")
__all__ = ["packed_grid_chunk_sizes", "packed_grid_workloads", "PackedGridWorkload"]


class PackedGridWorkload(NamedTuple):
    """Both forms' arguments: ``compute_varlen_chunk_metadata(*workload)``,
    ``cu_seqlens_to_chunk_indices_offsets(*workload)``."""

    query_start_loc: object
    chunk_size: int


def packed_grid_chunk_size(pick):
    branch = weighted(pick, (35, 15, 10, 15, 15, 7, 3))
    if branch == 0:
        return (64, 128, 256)[pick(0, 2)]
    if branch == 1:
        return 4
    if branch == 2:
        return 1
    if branch == 3:
        return 1 << pick(1, 12)
    if branch == 4:
        return 2 * pick(1, 2500) + 1
    if branch == 5:
        return pick(1 << 20, MAX_VALUE)
    return MAX_VALUE


# How a row's length is drawn, against the room left in the physical chunk it starts in (packed_grid_generators.cpp).
_LENGTH_WEIGHTS = (14, 16, 8, 8, 14, 14, 14, 8, 4)


def _row(pick):
    return weighted(pick, _LENGTH_WEIGHTS), pick(0, MAX_VALUE)


def _length(kind, amount, at, C):
    room = C - at % C
    if kind == 0:
        return 0
    if kind in (1, 2, 3):
        return room + (0, -1, 1)[kind - 1]
    if kind == 4:
        return 1 + amount % (room - 1) if room > 1 else 0
    if kind == 5:
        return max(0, (1 + amount % 8) * C + amount // 8 % 3 - 1)
    if kind == 6:
        return 1 + amount % min(16384, 512 * C)
    if kind == 7 or C < 1 << 16:
        return amount % (64 * C + 1)
    return MAX_VALUE - at - amount % C


def query_start_loc(draw, pick, C, max_rows):
    """A valid query_start_loc from 0 around chunk size ``C``, as a list of ints."""
    rows = draw_rows(draw, batch_size(pick, max_rows), _row)
    empties = weighted(pick, (64, 6, 10, 12, 8))  # as drawn, all, first, last, both ends
    if rows:
        if empties == 1:
            rows = [(0, 0)] * len(rows)
        if empties in (2, 4):
            rows[0] = (0, 0)
        if empties in (3, 4):
            rows[-1] = (0, 0)
    q = [0]
    for kind, amount in rows:
        at = q[-1]
        q.append(at + min(max(_length(kind, amount, at, C), 0), MAX_VALUE - at))
    return q


def packed_grid_chunk_sizes():
    """The engines' 64, 128 and 256, the contract's 4, 1, powers of two, odd sizes and large ones up to 2^31-1."""
    return st.composite(lambda draw: packed_grid_chunk_size(hypothesis_pick(draw)))()


def packed_grid_workloads(arrays="lists", max_rows=64):
    """Valid workloads of the packed grid (specs/mamba_packed_grid), both
    forms' arguments, PackedGridWorkload(query_start_loc, chunk_size): rows
    starting on and off the grid, inside the room left in their physical
    chunk, across cuts, and without tokens anywhere; query_start_loc an int32
    tensor or numpy array, or a list of ints."""

    @st.composite
    def draw_workload(draw):
        pick = hypothesis_pick(draw)
        C = packed_grid_chunk_size(pick)
        return PackedGridWorkload(array(query_start_loc(draw, pick, C, max_rows), arrays, "int32"), C)

    return draw_workload()


workloads = packed_grid_workloads
