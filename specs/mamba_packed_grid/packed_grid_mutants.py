"""The packed grid's slips (packed_grid_mutants.cpp) as functions with the
engines' signatures, fn(cu_seqlens, chunk_size) -> (chunk_indices,
chunk_offsets) and fn(query_start_loc, chunk_size) -> (cu_chunk_seqlens,
last_chunk_indices, seq_idx), giving what the C++ mutant gives on every valid
workload (gathered by mutants/mutants.py for the three-door test)."""

import bisect

from int_arithmetic import ints


def _starts(q, C, cut_at_row_starts=True):
    starts = []
    for a, b in zip(q[:-1], q[1:]):
        if b == a:
            continue
        if a % C == 0 or cut_at_row_starts or not starts:
            starts.append(a)
        starts.extend(range((a // C + 1) * C, b, C))
    return starts


def _as_indices(starts, C):
    return [s // C for s in starts], [s % C for s in starts]


def _as_metadata(starts, q):
    rows = [bisect.bisect_right(q, s) - 1 for s in starts]
    last = [-1] * (len(q) - 1)
    for k, row in enumerate(rows):
        last[row] = k
    return starts + [q[-1]], last, rows


def _engines_torch_loop(q, C):
    """mamba_ssm's loop step by step; the write torch refuses with IndexError (chunk_offsets[N]) is dropped."""
    N = -(-q[-1] // C) + sum(1 for s in q[1:-1] if s % C > 0)
    indices, offsets = list(range(N)), [0] * N
    p = 0
    for s, e in zip(q[1:-1], q[2:]):
        p += s % C > 0
        start, end = s // C + p, e // C + p + (e % C > 0)
        for k in range(start, min(end, N)):
            indices[k] -= p
        if start < N:
            offsets[start] = s % C
    return indices, offsets


def grid_no_cut_at_off_grid_row_start(cu_seqlens, chunk_size):
    return _as_indices(_starts(ints(cu_seqlens), chunk_size, cut_at_row_starts=False), chunk_size)


def grid_offsets_from_row_start(cu_seqlens, chunk_size):
    q = ints(cu_seqlens)
    indices, offsets = [], []
    for a, b in zip(q[:-1], q[1:]):
        at = a
        while at < b:
            indices.append(at // chunk_size)
            offsets.append((at - a) % chunk_size)
            at = (at // chunk_size + 1) * chunk_size
    return indices, offsets


def grid_zero_length_logical_chunk(cu_seqlens, chunk_size):
    return _engines_torch_loop(ints(cu_seqlens), chunk_size)


def grid_no_cut_at_off_grid_row_start_metadata(query_start_loc, chunk_size):
    q = ints(query_start_loc)
    return _as_metadata(_starts(q, chunk_size, cut_at_row_starts=False), q)


def grid_empty_row_last_from_row_before(query_start_loc, chunk_size):
    q = ints(query_start_loc)
    cu, last, seq = _as_metadata(_starts(q, chunk_size), q)
    pieces_so_far = 0
    for i in range(len(last)):
        if q[i + 1] > q[i]:
            pieces_so_far = last[i] + 1
        last[i] = pieces_so_far - 1
    return cu, last, seq


def grid_builder_chunks(query_start_loc, chunk_size):
    """vLLM's builder with no computed tokens: each row's chunks from its own start; an empty row's last is the one
    before's."""
    q = ints(query_start_loc)
    cu, last, seq = [], [], []
    for row, (a, b) in enumerate(zip(q[:-1], q[1:])):
        starts = list(range(a, b, chunk_size))
        cu.extend(starts)
        seq.extend([row] * len(starts))
        last.append(len(cu) - 1)
    return cu + [q[-1]], last, seq


# Each slip and the spec whose function it rewrites.
GRID_SLIPS = {
    "grid_no_cut_at_off_grid_row_start": "mamba_ssm.chunk_indices",
    "grid_offsets_from_row_start": "mamba_ssm.chunk_indices",
    "grid_zero_length_logical_chunk": "mamba_ssm.chunk_indices",
    "grid_no_cut_at_off_grid_row_start_metadata": "mamba.packed_grid",
    "grid_empty_row_last_from_row_before": "mamba.packed_grid",
    "grid_builder_chunks": "mamba.packed_grid",
}
