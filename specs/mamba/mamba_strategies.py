"""Hypothesis strategies for Mamba's chunk metadata (specs/mamba): its chunk
sizes, and valid workloads as compute_chunk_metadata's arguments. Copied into
the package (chunkmeta/_strategies); chunkmeta.strategies exports them."""

from typing import NamedTuple

from hypothesis import strategies as st

from chunkmeta._drawing import MAX_VALUE, array, batch_size, draw_rows, hypothesis_pick, packed_offset, spread, weighted

SPECS = ("mamba",)
__all__ = ["chunk_sizes", "mamba_workloads", "MambaWorkload"]


class MambaWorkload(NamedTuple):
    """compute_chunk_metadata's arguments: ``compute_chunk_metadata(*workload)``."""

    chunk_size: int
    num_prefills: int
    num_computed_tokens_p_cpu: object
    query_start_loc_p_cpu: object


def mamba_chunk_size(pick):
    branch = weighted(pick, (40, 15, 10, 20, 10, 5))
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


def _computed_tokens(pick, chunk):
    branch = weighted(pick, (25, 15, 35, 10, 7, 8))
    if branch == 0:
        return 0
    if branch == 1:
        return spread(pick, 1, max(1, min(1000, MAX_VALUE // chunk))) * chunk
    if branch == 2:
        if chunk == 1:
            return 0
        return spread(pick, 0, min(1000, (MAX_VALUE - (chunk - 1)) // chunk)) * chunk + pick(1, chunk - 1)
    if branch == 3:
        return spread(pick, 1, min(3 * chunk, MAX_VALUE))
    if branch == 4:
        return MAX_VALUE - pick(0, 65536)
    return pick(0, MAX_VALUE)


def _new_tokens(pick, chunk, computed):
    most = MAX_VALUE - computed
    gap = (chunk - computed % chunk) % chunk
    many = min(most, gap + 64 * chunk)
    branch = weighted(pick, (12, 8, 10, 10, 10, 10, 20, 8, 5))
    if branch == 0:
        n = 0
    elif branch == 1:
        n = 1
    elif branch == 2:
        n = spread(pick, 1, gap - 1)
    elif branch == 3:
        n = gap
    elif branch == 4:
        n = gap + pick(1, 8) * chunk
    elif branch == 5:
        n = gap + pick(0, 8) * chunk + (-1, 1)[pick(0, 1)]
    elif branch == 6:
        n = pick(0, 16384)
    elif branch == 7:
        n = spread(pick, 0, many)
    else:
        n = many - pick(0, chunk)
    return min(max(n, 0), most)


def chunk_sizes():
    """Mamba's chunk sizes: powers of two up to 4096, the engines' sizes,
    cache-block multiples (528, 1056, ...), anything up to 5000, and large ones
    up to 2^31-1."""
    return st.composite(lambda draw: mamba_chunk_size(hypothesis_pick(draw)))()


def mamba_batch(draw, pick, chunk, max_rows):
    """A valid batch at chunk size ``chunk``: (computed tokens, query_start_loc), lists of ints."""
    def row(pick_row):
        computed = _computed_tokens(pick_row, chunk)
        return computed, _new_tokens(pick_row, chunk, computed)

    rows = draw_rows(draw, batch_size(pick, max_rows), row)
    starts = [0]
    for _, tokens in rows:
        starts.append(starts[-1] + min(tokens, MAX_VALUE - starts[-1]))
    offset = packed_offset(pick, starts[-1])
    return [c for c, _ in rows], [q + offset for q in starts]


def mamba_workloads(arrays="lists", max_rows=64):
    """Valid Mamba workloads (specs/mamba) as compute_chunk_metadata's
    arguments, MambaWorkload(chunk_size, num_prefills, num_computed_tokens,
    query_start_loc): int32 tensors or numpy arrays, or lists of ints."""

    @st.composite
    def draw_workload(draw):
        pick = hypothesis_pick(draw)
        chunk = mamba_chunk_size(pick)
        computed, starts = mamba_batch(draw, pick, chunk, max_rows)
        return MambaWorkload(chunk, len(computed), array(computed, arrays, "int32"), array(starts, arrays, "int32"))

    return draw_workload()


workloads = mamba_workloads
