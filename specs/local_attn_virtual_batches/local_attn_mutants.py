"""The virtual batches' slips (local_attn_mutants.cpp) as functions with the
drop-in's signature, fn(attn_chunk_size, block_size, query_start_loc,
seq_lens) -> the five arrays, giving what the C++ mutant gives on every valid
workload (gathered by mutants/mutants.py for the three-door test)."""

from int_arithmetic import ints, trunc_div


def _batches(slip, A, P, query_start_loc, seq_lens):
    q, s_all = ints(query_start_loc), ints(seq_lens)
    out = [[0], [], [], [], []]
    for i in range(len(q) - 1):
        n, s = q[i + 1] - q[i], s_all[i]
        c = s if slip == "local_attn_computed_as_seq_len" else s - n
        first = min(A - c % A, n)
        pieces = 1 + ((n - first) // A if slip == "local_attn_floor_piece_count" else -(-(n - first) // A))
        last_keys = s % A if slip == "local_attn_last_keys_mod" else (s - 1) % A + 1
        for j in range(pieces):
            queries = first if j == 0 else min(n - first - A * (j - 1), A)
            keys = last_keys if j + 1 == pieces else A
            key_start = s - ((pieces - 1 - j) * A + last_keys)
            out[0].append(out[0][-1] + (keys if slip == "local_attn_comment_running_sum" else queries))
            out[1].append(keys)
            out[2].append(keys - queries)
            out[3].append(i)
            out[4].append(key_start if slip == "local_attn_block_start_in_tokens" else trunc_div(key_start, P))
    rows = len(q) - 1
    if slip == "local_attn_sized_by_the_batch" and len(out[1]) > rows:
        out = [out[0][:rows + 1]] + [a[:rows] for a in out[1:]]
    return tuple(out)


def _mutant(slip):
    def virtual_batches(attn_chunk_size, block_size, query_start_loc, seq_lens):
        return _batches(slip, attn_chunk_size, block_size, query_start_loc, seq_lens)

    virtual_batches.__name__ = virtual_batches.__qualname__ = slip
    return virtual_batches


LOCAL_ATTN_SLIPS = [
    "local_attn_comment_running_sum",
    "local_attn_block_start_in_tokens",
    "local_attn_computed_as_seq_len",
    "local_attn_last_keys_mod",
    "local_attn_floor_piece_count",
    "local_attn_sized_by_the_batch",
]
globals().update({slip: _mutant(slip) for slip in LOCAL_ATTN_SLIPS})
