"""Hypothesis strategies for chunked local attention's virtual batches
(specs/local_attn_virtual_batches): valid workloads as
local_attention_virtual_batches' arguments, drawn as the spec's generators
draw them. Copied into the package (chunkmeta/_strategies);
chunkmeta.strategies exports them."""

from typing import NamedTuple

from hypothesis import strategies as st

from chunkmeta._drawing import MAX_VALUE, array, batch_size, draw_rows, hypothesis_pick, packed_offset, spread, weighted

SPECS = ("local_attn.virtual_batches",)
__all__ = ["local_attention_workloads", "LocalAttentionWorkload"]


class LocalAttentionWorkload(NamedTuple):
    """local_attention_virtual_batches' arguments: ``local_attention_virtual_batches(*workload)``."""

    attn_chunk_size: int
    block_size: int
    query_start_loc: object
    seq_lens: object


def _sizes(pick):
    """(A, P), A a multiple of P: Llama 4's 8192 with pages of 16, A = P, kernel
    page sizes with A a few to 512 pages, P = 1, small odd pairs, large A."""
    def times(pages, page):
        return min(pages, MAX_VALUE // page) * page, page

    branch = weighted(pick, (20, 15, 25, 15, 15, 10))
    if branch == 0:
        return 8192, 16
    if branch == 1:
        page = (1, 2, 3, 16, 64, 128, 1024)[pick(0, 6)]
        return page, page
    if branch == 2:
        return times((2, 4, 8, 64, 512)[pick(0, 4)], (16, 32, 64, 128)[pick(0, 3)])
    if branch == 3:
        return times(pick(1, 64), 1)
    if branch == 4:
        return times(pick(1, 32), pick(1, 8))
    return times(pick(1, 64), 1 << pick(10, 25))


def _row(pick, A):
    """(new tokens, computed tokens, whether the row's last token ends a chunk):
    new tokens of one, a few, around a multiple of A, up to 64 chunks;
    computed tokens on, one short of and one past a chunk boundary, near 2^31-1."""
    many = min(40 * A, 1 << 24)
    most = min(64 * A, 1 << 24)
    branch = weighted(pick, (20, 15, 20, 20, 15, 10))
    if branch == 0:
        n = 1
    elif branch == 1:
        n = pick(2, 16)
    elif branch == 2:
        k = pick(1, 8)
        n = (max(1, k * A - 1), k * A, k * A + 1)[pick(0, 2)]
    elif branch == 3:
        n = pick(1, min(16384, most))
    elif branch == 4:
        n = pick(1, most)
    else:
        n = spread(pick, min(8 * A, many), many)
    branch = weighted(pick, (20, 15, 10, 10, 20, 10, 5))
    if branch == 0:
        c = 0
    elif branch in (1, 2, 3):
        c = pick(1, 64) * A + (0, -1, 1)[branch - 1]
    elif branch == 4:
        c = pick(0, 16384)
    elif branch == 5:
        c = MAX_VALUE - pick(0, A)
    else:
        c = pick(0, MAX_VALUE)
    return n, c, weighted(pick, (85, 15)) == 1


def _laid_out(A, rows, pick):
    """query_start_loc and seq_lens of the rows: every row keeps a new token,
    s = c + n <= 2^31-1 and q[B] <= 2^31-1 (rows without room are dropped)."""
    starts, seq_lens = [0], []
    for drawn_n, drawn_c, ends_a_chunk in rows:
        room = MAX_VALUE - starts[-1]
        if room < 1:
            break
        n = min(max(drawn_n, 1), room)
        c = min(max(drawn_c, 0), MAX_VALUE - n)
        if ends_a_chunk:
            end = (c + n + A - 1) // A * A
            if end <= MAX_VALUE:
                c = end - n
        starts.append(starts[-1] + n)
        seq_lens.append(c + n)
    start = packed_offset(pick, starts[-1])
    return [q + start for q in starts], seq_lens


def local_attention_workloads(arrays="lists", max_rows=64):
    """Valid workloads of chunked local attention (specs/local_attn_virtual_batches)
    as local_attention_virtual_batches' arguments,
    LocalAttentionWorkload(attn_chunk_size, block_size, query_start_loc, seq_lens):
    every row with new tokens, query_start_loc and seq_lens int32 tensors or
    numpy arrays, or lists of ints."""

    @st.composite
    def draw_workload(draw):
        pick = hypothesis_pick(draw)
        A, P = _sizes(pick)
        rows = draw_rows(draw, batch_size(pick, max_rows), lambda pick_row: _row(pick_row, A))
        starts, seq_lens = _laid_out(A, rows, pick)
        return LocalAttentionWorkload(A, P, array(starts, arrays, "int32"), array(seq_lens, arrays, "int32"))

    return draw_workload()


workloads = local_attention_workloads
