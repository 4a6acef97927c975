"""Hypothesis strategies for chunk-metadata workloads, for engine teams'
own properties over code that consumes chunk metadata::

    from hypothesis import given
    from chunkmeta import strategies

    @given(strategies.mamba_workloads(arrays="torch"))
    def test_my_kernel_wrapper(workload):
        cu, seq, last = chunkmeta.compute_chunk_metadata(*workload)
        ...

They draw the same edge classes as chunkmeta's own generators (specs/mamba
and 2): chunk sizes of every kind (1, powers of two, model and cache-block
sizes, odd ones, up to 2^31-1), empty batches and rows, computed tokens
aligned, unaligned and near 2^31-1, new tokens below, at and past the
realigning gap, rows that end on a chunk boundary and one either side,
offsets into the packed axis; for FLA, empty sequences first, in the middle,
last and throughout, lengths at multiples of C and one either side, lengths
near 2^31 with a large C, int32 and int64 cu_seqlens; for the conv1d program
map, the same around block_m = 8. Every workload drawn is
valid. Batches of up to 32 rows are drawn row by row (each row shrinks on its
own); larger ones, up to ``max_rows``, are laid out from a drawn seed with the
same distributions (they shrink by seed and size), as Hypothesis keeps each
example's data small. Hypothesis is imported with this module, never by
``import chunkmeta``.
"""

import random
from typing import NamedTuple

from hypothesis import strategies as st

__all__ = ["chunk_sizes", "fla_chunk_sizes", "mamba_workloads", "fla_workloads", "conv1d_workloads", "workloads",
           "MambaWorkload", "FlaWorkload", "Conv1dWorkload"]

MAX_VALUE = 2**31 - 1
# Batches above this many rows are laid out from a seed.
_DRAWN_ROW_BY_ROW = 32


class MambaWorkload(NamedTuple):
    """compute_chunk_metadata's arguments: ``compute_chunk_metadata(*workload)``."""

    chunk_size: int
    num_prefills: int
    num_computed_tokens_p_cpu: object
    query_start_loc_p_cpu: object


class FlaWorkload(NamedTuple):
    """prepare_chunk_indices' and prepare_chunk_offsets' arguments: ``prepare_chunk_indices(*workload)``."""

    cu_seqlens: object
    chunk_size: int


class Conv1dWorkload(NamedTuple):
    """causal_conv1d_program_map's arguments: ``causal_conv1d_program_map(*workload)``."""

    query_start_loc: object
    block_m: int


# Each distribution below is written once over `pick(lo, hi)` (an int in
# [lo, hi]), driven by Hypothesis's draws or by a seeded random.Random.

def _weighted(pick, weights):
    """The index of a branch, with the weights given (Hypothesis shrinks toward the first)."""
    ticket = pick(0, sum(weights) - 1)
    for branch, weight in enumerate(weights):
        if ticket < weight:
            return branch
        ticket -= weight
    return len(weights) - 1


def _range(pick, lo, hi):
    return pick(lo, hi) if hi > lo else lo


def _mamba_chunk_size(pick):
    branch = _weighted(pick, (40, 15, 10, 20, 10, 5))
    if branch == 0:
        return 1 << pick(0, 12)
    if branch == 1:
        return (64, 128, 256, 2048)[pick(0, 3)]
    if branch == 2:
        return (528, 784, 1056, 1568, 1024)[pick(0, 4)]
    if branch == 3:
        return pick(1, 5000)
    if branch == 4:
        return pick(1 << 20, MAX_VALUE)
    return MAX_VALUE


def _fla_chunk_size(pick):
    branch = _weighted(pick, (45, 10, 15, 15, 10, 5))
    if branch == 0:
        return (16, 32, 64, 128)[pick(0, 3)]
    if branch == 1:
        return 1
    if branch == 2:
        return 1 << pick(0, 12)
    if branch == 3:
        return 2 * pick(0, 2500) + 1
    if branch == 4:
        return pick(1 << 20, MAX_VALUE)
    return MAX_VALUE


def _batch_size(pick, most):
    branch = _weighted(pick, (5, 15, 25, 35, 15, 5))
    rows = (0, 1, None, None, None, None)[branch]
    if rows is None:
        rows = pick(*((2, 4), (5, 32), (33, 256), (257, 1024))[branch - 2])
    return min(rows, most)


def _computed_tokens(pick, chunk):
    branch = _weighted(pick, (25, 15, 35, 10, 7, 8))
    if branch == 0:
        return 0
    if branch == 1:
        return _range(pick, 1, max(1, min(1000, MAX_VALUE // chunk))) * chunk
    if branch == 2:
        if chunk == 1:
            return 0
        return _range(pick, 0, min(1000, (MAX_VALUE - (chunk - 1)) // chunk)) * chunk + pick(1, chunk - 1)
    if branch == 3:
        return _range(pick, 1, min(3 * chunk, MAX_VALUE))
    if branch == 4:
        return MAX_VALUE - pick(0, 65536)
    return pick(0, MAX_VALUE)


def _new_tokens(pick, chunk, computed):
    most = MAX_VALUE - computed
    gap = (chunk - computed % chunk) % chunk
    many = min(most, gap + 64 * chunk)
    branch = _weighted(pick, (12, 8, 10, 10, 10, 10, 20, 8, 5))
    if branch == 0:
        n = 0
    elif branch == 1:
        n = 1
    elif branch == 2:
        n = _range(pick, 1, gap - 1)
    elif branch == 3:
        n = gap
    elif branch == 4:
        n = gap + pick(1, 8) * chunk
    elif branch == 5:
        n = gap + pick(0, 8) * chunk + (-1, 1)[pick(0, 1)]
    elif branch == 6:
        n = pick(0, 16384)
    elif branch == 7:
        n = _range(pick, 0, many)
    else:
        n = many - pick(0, chunk)
    return min(max(n, 0), most)


def _offset(pick, total):
    free = MAX_VALUE - total
    branch = _weighted(pick, (80, 12, 8))
    if branch == 0:
        return 0
    if branch == 1:
        return _range(pick, 0, free)
    return max(0, free - pick(0, 16))


def _fla_length(pick, chunk):
    branch = _weighted(pick, (22, 8, 22, 20, 8, 5, 3))
    if branch == 0:
        return 0
    if branch == 1:
        return 1
    if branch == 2:
        return pick(1, 8) * chunk + pick(-1, 1)
    if branch == 3:
        return pick(1, 16384)
    if branch == 4:
        return _range(pick, 0, 64 * chunk)
    if branch == 5:
        return _range(pick, 0, min(MAX_VALUE, 1024 * chunk))
    # Near the int32 limit with a large C (the outputs stay small), where len + C - 1 wraps in 32 bits.
    return MAX_VALUE - pick(0, chunk) if chunk >= 1 << 16 else _range(pick, 0, 64 * chunk)


def _rows(draw, count, row):
    """`count` rows of `row(pick)`: drawn one by one, or laid out from a drawn seed for a large batch."""
    if count <= _DRAWN_ROW_BY_ROW:
        pick = _hypothesis_pick(draw)
        return [row(pick) for _ in range(count)]
    rng = random.Random(draw(st.integers(0, 2**64 - 1)))
    return [row(rng.randint) for _ in range(count)]


def _hypothesis_pick(draw):
    return lambda lo, hi: draw(st.integers(lo, hi))


def _array(values, arrays, dtype):
    if arrays == "lists":
        return list(values)
    if arrays == "numpy":
        import numpy
        return numpy.array(values, dtype=dtype)
    if arrays == "torch":
        import torch
        return torch.tensor(values, dtype=getattr(torch, dtype))
    raise ValueError(f"arrays must be 'lists', 'numpy' or 'torch', not {arrays!r}")


def chunk_sizes():
    """Mamba's chunk sizes: powers of two up to 4096, the engines' sizes,
    cache-block multiples (528, 1056, ...), anything up to 5000, and large ones
    up to 2^31-1."""
    return st.composite(lambda draw: _mamba_chunk_size(_hypothesis_pick(draw)))()


def fla_chunk_sizes():
    """FLA's chunk sizes: the kernels' 16, 32, 64 and 128, 1, powers of two,
    odd sizes, and large ones up to 2^31-1."""
    return st.composite(lambda draw: _fla_chunk_size(_hypothesis_pick(draw)))()


def mamba_workloads(arrays="lists", max_rows=64):
    """Valid Mamba workloads (specs/mamba) as compute_chunk_metadata's
    arguments, MambaWorkload(chunk_size, num_prefills, num_computed_tokens,
    query_start_loc): int32 tensors or numpy arrays, or lists of ints."""

    @st.composite
    def draw_workload(draw):
        pick = _hypothesis_pick(draw)
        chunk = _mamba_chunk_size(pick)
        count = _batch_size(pick, max_rows)

        def row(pick_row):
            computed = _computed_tokens(pick_row, chunk)
            return computed, _new_tokens(pick_row, chunk, computed)

        rows = _rows(draw, count, row)
        starts = [0]
        for _, tokens in rows:
            starts.append(starts[-1] + min(tokens, MAX_VALUE - starts[-1]))
        offset = _offset(pick, starts[-1])
        return MambaWorkload(chunk, len(rows), _array([c for c, _ in rows], arrays, "int32"),
                             _array([q + offset for q in starts], arrays, "int32"))

    return draw_workload()


def _cu_seqlens(draw, pick, chunk, max_sequences):
    """FLA's cu_seqlens around chunk size ``chunk``, as a list of ints."""
    count = _batch_size(pick, max_sequences)
    lengths = _rows(draw, count, lambda pick_row: _fla_length(pick_row, chunk))
    empties = _weighted(pick, (60, 8, 12, 12, 8))  # as drawn, all, first, last, both ends
    if lengths:
        if empties == 1:
            lengths = [0] * len(lengths)
        if empties in (2, 4):
            lengths[0] = 0
        if empties in (3, 4):
            lengths[-1] = 0
    cu = [0]
    for length in lengths:
        cu.append(cu[-1] + min(max(length, 0), MAX_VALUE - cu[-1]))
    branch = _weighted(pick, (80, 15, 5))
    offset = min((0, pick(1, MAX_VALUE) if branch == 1 else 0, MAX_VALUE)[branch], MAX_VALUE - cu[-1])
    return [q + offset for q in cu]


def fla_workloads(arrays="lists", dtype=None, max_sequences=64):
    """Valid FLA workloads (specs/fla) as prepare_chunk_indices' and
    prepare_chunk_offsets' arguments, FlaWorkload(cu_seqlens, chunk_size):
    cu_seqlens an int32 or int64 tensor or numpy array (``dtype``: "int32",
    "int64", or None for either), or a list of ints."""

    @st.composite
    def draw_workload(draw):
        pick = _hypothesis_pick(draw)
        chunk = _fla_chunk_size(pick)
        cu = _cu_seqlens(draw, pick, chunk, max_sequences)
        chosen = dtype or ("int32", "int64")[_weighted(pick, (65, 35))]
        return FlaWorkload(_array(cu, arrays, chosen), chunk)

    return draw_workload()


def conv1d_workloads(arrays="lists", max_rows=64):
    """Valid workloads of the causal conv1d program map (specs/conv1d_program_map)
    as causal_conv1d_program_map's arguments, Conv1dWorkload(query_start_loc,
    block_m): FLA's cu_seqlens drawn around block_m, which is vLLM's 8 most of
    the time and any of FLA's chunk sizes otherwise; query_start_loc an int32
    tensor or numpy array, or a list of ints."""

    @st.composite
    def draw_workload(draw):
        pick = _hypothesis_pick(draw)
        block_m = 8 if _weighted(pick, (60, 40)) == 0 else _fla_chunk_size(pick)
        return Conv1dWorkload(_array(_cu_seqlens(draw, pick, block_m, max_rows), arrays, "int32"), block_m)

    return draw_workload()


def workloads(spec="mamba", arrays="lists", **limits):
    """The workloads of ``spec`` ("mamba", "fla.chunk_indices", "fla.chunk_offsets" or "conv1d.program_map")."""
    if spec == "mamba":
        return mamba_workloads(arrays, **limits)
    if spec in ("fla.chunk_indices", "fla.chunk_offsets"):
        return fla_workloads(arrays, **limits)
    if spec == "conv1d.program_map":
        return conv1d_workloads(arrays, **limits)
    raise ValueError(f"unknown spec {spec!r}")
