"""The checkpointed chunks' slips (checkpointed_chunks_mutants.cpp) as
functions with vLLM #57329's signature, fn(chunk_size, num_prefills,
num_computed_tokens, query_start_loc, checkpoint_offsets) -> (cu_chunk_seqlen,
seq_idx, last_chunk_indices, checkpoint_chunk_indices), giving what the C++
mutant gives on every valid workload (gathered by mutants/mutants.py for the
three-door test)."""

from int_arithmetic import INT32_MAX, ints


def _mamba_rows(C, rows):
    """Mamba's chunks (Part 1) of rows (computed, new tokens): cu from 0, the chunks' rows, each row's last chunk."""
    cu, seq, last, pos = [], [], [], 0
    for r, (c, n) in enumerate(rows):
        if c % C:  # the realigning chunk, emitted even without tokens
            head = min(C - c % C, n)
            cu.append(pos)
            seq.append(r)
            pos, n = pos + head, n - head
        while n > 0:
            step = min(C, n)
            cu.append(pos)
            seq.append(r)
            pos, n = pos + step, n - step
        last.append(len(cu) - 1)
    return cu + [pos], seq, last


def _split_with(C, computed, starts, offsets, cut, after):
    rows, first = [], []
    for c, n, o in zip(computed, [b - a for a, b in zip(starts, starts[1:])], offsets):
        o = cut(c, o) if o > 0 else 0
        first.append(len(rows))
        rows.extend([(c, o), (after(c, o), n - o)] if 0 < o <= n else [(c, n)])
    cu, seq, last = _mamba_rows(C, rows)
    row_of, lasts, checkpoints = [0] * len(rows), [], []
    for i in range(len(computed)):
        end = first[i + 1] if i + 1 < len(computed) else len(rows)
        for r in range(first[i], end):
            row_of[r] = i
        lasts.append(last[end - 1])
        checkpoints.append(last[first[i]] if end - first[i] == 2 else -1)
    return cu, [row_of[r] for r in seq], lasts, checkpoints


def _exact(c, o):
    return o


def _advanced(c, o):
    return c + o


def _args(num_computed_tokens, query_start_loc, checkpoint_offsets):
    return ints(num_computed_tokens), ints(query_start_loc), [int(o) for o in checkpoint_offsets]


def ckpt_offset_from_sequence_start(chunk_size, num_prefills, num_computed_tokens, query_start_loc, checkpoint_offsets):
    c, q, o = _args(num_computed_tokens, query_start_loc, checkpoint_offsets)
    return _split_with(chunk_size, c, q, o, lambda c, o: o - c, _advanced)


def ckpt_no_realignment_after_checkpoint(chunk_size, num_prefills, num_computed_tokens, query_start_loc,
                                         checkpoint_offsets):
    c, q, o = _args(num_computed_tokens, query_start_loc, checkpoint_offsets)
    return _split_with(chunk_size, c, q, o, _exact, lambda c, o: 0)


def ckpt_int32_round_up_after_checkpoint(chunk_size, num_prefills, num_computed_tokens, query_start_loc,
                                         checkpoint_offsets):
    C = chunk_size
    c, q, o = _args(num_computed_tokens, query_start_loc, checkpoint_offsets)
    return _split_with(C, c, q, o, _exact, lambda c, o: c + o - (c + o) % C if c + o + C - 1 > INT32_MAX else c + o)


def ckpt_index_one_chunk_late(chunk_size, num_prefills, num_computed_tokens, query_start_loc, checkpoint_offsets):
    c, q, o = _args(num_computed_tokens, query_start_loc, checkpoint_offsets)
    cu, seq, last, checkpoints = _split_with(chunk_size, c, q, o, _exact, _advanced)
    return cu, seq, last, [k + 1 if k >= 0 else k for k in checkpoints]


def ckpt_empty_chunk_on_the_grid(chunk_size, num_prefills, num_computed_tokens, query_start_loc, checkpoint_offsets):
    c, q, o = _args(num_computed_tokens, query_start_loc, checkpoint_offsets)
    cu, seq, last, checkpoints = _split_with(chunk_size, c, q, o, _exact, _advanced)
    for i, k in enumerate(checkpoints):
        if k < 0 or (c[i] + o[i]) % chunk_size:
            continue
        cu.insert(k + 1, cu[k + 1])
        seq.insert(k + 1, i)
        for r in range(i, len(last)):
            last[r] += 1
            if r > i and checkpoints[r] >= 0:
                checkpoints[r] += 1
        checkpoints[i] = k + 1
    return cu, seq, last, checkpoints


def ckpt_offset_at_new_tokens_accepted(chunk_size, num_prefills, num_computed_tokens, query_start_loc,
                                       checkpoint_offsets):
    """A validation slip: on valid workloads (all an engine function is sent) it is the contract."""
    c, q, o = _args(num_computed_tokens, query_start_loc, checkpoint_offsets)
    return _split_with(chunk_size, c, q, o, _exact, _advanced)


# The slips the engine-function doors catch (ckpt_offset_at_new_tokens_accepted is caught where invalid input is sent).
CHECKPOINTED_CHUNKS_SLIPS = [
    "ckpt_offset_from_sequence_start",
    "ckpt_no_realignment_after_checkpoint",
    "ckpt_empty_chunk_on_the_grid",
    "ckpt_index_one_chunk_late",
    "ckpt_int32_round_up_after_checkpoint",
]
