"""The spec's reference procedure in plain Python, with the engine's signature.

An example of what `adapters/python/chunkmeta_adapter.py` checks:

    chunkmeta check --valid-only --impl \
        "cmd:python3 adapters/python/chunkmeta_adapter.py examples/python/reference_procedure.py:compute_chunk_metadata"

It accepts int32 torch tensors or lists, and returns lists.
"""


def _ints(values):
    return values.tolist() if hasattr(values, "tolist") else [int(v) for v in values]


def compute_chunk_metadata(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu):
    computed = _ints(num_computed_tokens_p_cpu)
    starts = _ints(query_start_loc_p_cpu)
    cu_chunk_seqlen, seq_idx, last_chunk_indices = [], [], []
    pos = 0
    for i in range(num_prefills):
        n = starts[i + 1] - starts[i]
        misalignment = computed[i] % chunk_size
        # 1. A chunk up to the next multiple of chunk_size, emitted whatever n is.
        if misalignment != 0:
            cu_chunk_seqlen.append(pos)
            seq_idx.append(i)
            length = min(n, chunk_size - misalignment)
            pos += length
            n -= length
        # 2. ceil(n / chunk_size) further chunks.
        while n > 0:
            cu_chunk_seqlen.append(pos)
            seq_idx.append(i)
            length = min(chunk_size, n)
            pos += length
            n -= length
        # 3. The row's last chunk: the latest entry so far.
        last_chunk_indices.append(len(cu_chunk_seqlen) - 1)
    cu_chunk_seqlen.append(pos)
    return cu_chunk_seqlen, seq_idx, last_chunk_indices
