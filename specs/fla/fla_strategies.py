"""Hypothesis strategies for FLA's chunk indices and offsets (specs/fla): its
chunk sizes, cu_seqlens of every edge class, and valid workloads as
prepare_chunk_indices' and prepare_chunk_offsets' arguments. Copied into the
package (chunkmeta/_strategies); chunkmeta.strategies exports them."""

from typing import NamedTuple

from hypothesis import strategies as st

from chunkmeta._drawing import MAX_VALUE, array, batch_size, draw_rows, hypothesis_pick, spread, weighted

SPECS = ("fla.chunk_indices", "fla.chunk_offsets")
__all__ = ["fla_chunk_sizes", "fla_workloads", "FlaWorkload"]


class FlaWorkload(NamedTuple):
    """prepare_chunk_indices' and prepare_chunk_offsets' arguments: ``prepare_chunk_indices(*workload)``."""

    cu_seqlens: object
    chunk_size: int


def fla_chunk_size(pick):
    branch = weighted(pick, (45, 10, 15, 15, 10, 5))
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


def _fla_length(pick, chunk):
    branch = weighted(pick, (22, 8, 22, 20, 8, 5, 3))
    if branch == 0:
        return 0
    if branch == 1:
        return 1
    if branch == 2:
        return pick(1, 8) * chunk + pick(-1, 1)
    if branch == 3:
        return pick(1, 16384)
    if branch == 4:
        return spread(pick, 0, 64 * chunk)
    if branch == 5:
        return spread(pick, 0, min(MAX_VALUE, 1024 * chunk))
    # Near the int32 limit with a large C (the outputs stay small), where len + C - 1 wraps in 32 bits.
    return MAX_VALUE - pick(0, chunk) if chunk >= 1 << 16 else spread(pick, 0, 64 * chunk)


def cu_seqlens(draw, pick, chunk, max_sequences):
    """FLA's cu_seqlens around chunk size ``chunk``, as a list of ints."""
    count = batch_size(pick, max_sequences)
    lengths = draw_rows(draw, count, lambda pick_row: _fla_length(pick_row, chunk))
    empties = weighted(pick, (60, 8, 12, 12, 8))  # as drawn, all, first, last, both ends
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
    branch = weighted(pick, (80, 15, 5))
    offset = min((0, pick(1, MAX_VALUE) if branch == 1 else 0, MAX_VALUE)[branch], MAX_VALUE - cu[-1])
    return [q + offset for q in cu]


def fla_chunk_sizes():
    """FLA's chunk sizes: the kernels' 16, 32, 64 and 128, 1, powers of two,
    odd sizes, and large ones up to 2^31-1."""
    return st.composite(lambda draw: fla_chunk_size(hypothesis_pick(draw)))()


def fla_workloads(arrays="lists", dtype=None, max_sequences=64):
    """Valid FLA workloads (specs/fla) as prepare_chunk_indices' and
    prepare_chunk_offsets' arguments, FlaWorkload(cu_seqlens, chunk_size):
    cu_seqlens an int32 or int64 tensor or numpy array (``dtype``: "int32",
    "int64", or None for either), or a list of ints."""

    @st.composite
    def draw_workload(draw):
        pick = hypothesis_pick(draw)
        chunk = fla_chunk_size(pick)
        cu = cu_seqlens(draw, pick, chunk, max_sequences)
        chosen = dtype or ("int32", "int64")[weighted(pick, (65, 35))]
        return FlaWorkload(array(cu, arrays, chosen), chunk)

    return draw_workload()



def workloads(arrays="lists", max_rows=64):
    """fla_workloads under the name and limits every spec's strategy takes (a row is a sequence)."""
    return fla_workloads(arrays, max_sequences=max_rows)
