"""vLLM's `_compute_chunk_metadata` (vllm/v1/attention/backends/mamba_attn.py,
before internal prefill checkpoints) as vLLM has it: a loop over the prefill
rows that reads each row's values with `.item()` and goes round once per chunk.
What `chunkmeta.check()` verifies in an engine's own test suite:

    chunkmeta.check(_compute_chunk_metadata)
"""


def cdiv(a, b):
    return -(a // -b)


def _compute_chunk_metadata(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu):
    cu_chunk_seqlen = []
    seq_idx = []
    last_chunk_indices = []
    seqlen_pos = 0
    for req_idx in range(num_prefills):
        this_num_computed = num_computed_tokens_p_cpu[req_idx].item()
        this_new_tokens = query_start_loc_p_cpu[req_idx + 1].item() - query_start_loc_p_cpu[req_idx].item()
        # if computed tokens are not chunk-aligned, use the first chunk to finish it off
        if this_num_computed % chunk_size != 0:
            seq_idx.append(req_idx)
            cu_chunk_seqlen.append(seqlen_pos)
            # how many tokens to finish the chunk?
            chunk_len = cdiv(this_num_computed, chunk_size) * chunk_size - this_num_computed
            # we can only use at most this_new_tokens
            chunk_len = min(chunk_len, this_new_tokens)
            seqlen_pos += chunk_len
            this_new_tokens -= chunk_len
        n_chunks = cdiv(this_new_tokens, chunk_size)
        for _ in range(n_chunks):
            seq_idx.append(req_idx)
            cu_chunk_seqlen.append(seqlen_pos)
            chunk_len = min(chunk_size, this_new_tokens)
            seqlen_pos += chunk_len
            this_new_tokens -= chunk_len
        assert this_new_tokens == 0
        last_chunk_indices.append(len(cu_chunk_seqlen) - 1)
    cu_chunk_seqlen.append(seqlen_pos)
    return cu_chunk_seqlen, seq_idx, last_chunk_indices
