"""Internal prefill checkpoints (vLLM #52789/#53614, Mamba-2 in the open #57329)
as a user ports them: the chunk metadata with a checkpoint offset per row, and
the planner of where each prefill exports its checkpoint. Python loops over
the rows, `.item()` on the builder's CPU tensors, as the engine has them.
"""


def cdiv(a, b):
    return -(a // -b)


def _chunks_of_row(chunk_size, computed, new_tokens, row, pos, cu_chunk_seqlen, seq_idx):
    """Mamba's chunks of one row (a realigning chunk when `computed` is off the grid), from packed position `pos`."""
    if computed % chunk_size != 0:
        seq_idx.append(row)
        cu_chunk_seqlen.append(pos)
        chunk_len = min(cdiv(computed, chunk_size) * chunk_size - computed, new_tokens)
        pos += chunk_len
        new_tokens -= chunk_len
    for _ in range(cdiv(new_tokens, chunk_size)):
        seq_idx.append(row)
        cu_chunk_seqlen.append(pos)
        chunk_len = min(chunk_size, new_tokens)
        pos += chunk_len
        new_tokens -= chunk_len
    return pos


def _compute_chunk_metadata(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu,
                            checkpoint_offsets_p=None):
    """vLLM #57329's signature: a row with a checkpoint is chunked in two, its
    first part ending at the checkpoint; returns four lists."""
    cu_chunk_seqlen, seq_idx, last_chunk_indices, checkpoint_chunk_indices = [], [], [], []
    pos = 0
    for req_idx in range(num_prefills):
        computed = int(num_computed_tokens_p_cpu[req_idx])
        new_tokens = int(query_start_loc_p_cpu[req_idx + 1]) - int(query_start_loc_p_cpu[req_idx])
        offset = 0 if checkpoint_offsets_p is None else int(checkpoint_offsets_p[req_idx])
        if offset > 0:
            pos = _chunks_of_row(chunk_size, computed, offset, req_idx, pos, cu_chunk_seqlen, seq_idx)
            checkpoint_chunk_indices.append(len(cu_chunk_seqlen) - 1)
            pos = _chunks_of_row(chunk_size, computed + offset, new_tokens - offset, req_idx, pos, cu_chunk_seqlen,
                                 seq_idx)
        else:
            pos = _chunks_of_row(chunk_size, computed, new_tokens, req_idx, pos, cu_chunk_seqlen, seq_idx)
            checkpoint_chunk_indices.append(-1)
        last_chunk_indices.append(len(cu_chunk_seqlen) - 1)
    cu_chunk_seqlen.append(pos)
    return cu_chunk_seqlen, seq_idx, last_chunk_indices, checkpoint_chunk_indices


def compute_mamba_prefill_checkpoints(seq_lens, query_lens, hash_block_size, mamba_block_size, checkpoint_alignment,
                                      drop_eagle_block):
    """The planner: per row, the offset from the query start of the last
    reusable hash-block boundary the backend can export at, and its block
    column; (0, -1) where there is none."""
    offsets, cols = [], []
    for seq_len, query_len in zip(seq_lens, query_lens):
        seq_len, query_len = int(seq_len), int(query_len)
        start = seq_len - query_len
        position = (seq_len - 1) // hash_block_size * hash_block_size
        if drop_eagle_block:
            position -= hash_block_size
        position = max(position, 0)
        col = cdiv(seq_len, mamba_block_size) - 2
        valid = (checkpoint_alignment is not None and start % hash_block_size == 0
                 and col > (start - 1) // mamba_block_size and start + hash_block_size <= position
                 and start < position < seq_len and (position - start) % checkpoint_alignment == 0)
        offsets.append(position - start if valid else 0)
        cols.append(col if valid else -1)
    return offsets, cols
