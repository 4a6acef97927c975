"""vLLM's virtual batches of chunked local attention
(make_local_attention_virtual_batches, in vllm/v1/attention/backends/utils.py),
ported over numpy and CPU tensors as vLLM writes it, without its
CommonAttentionMetadata (the arrays it reads are arguments, the ones it builds
are returned), and checked against the contract
(specs/local_attn_virtual_batches):

    import chunkmeta
    from vllm_local_attention import vllm_virtual_batches
    chunkmeta.check(vllm_virtual_batches, spec="local_attn.virtual_batches")

The port's comments are vLLM's, its example included: its
cu_seqlens_q_local is wrong in the comment only (the code computes
[0, 2, 4, 5, 9, 13, 14, 18, 19]; see test_local_attention.py).
"""

import numpy as np
import torch


def cdiv(a, b):
    return -(a // -b)


def make_local_attention_virtual_batches(attn_chunk_size, query_start_loc_cpu, seq_lens_cpu, block_table,
                                         block_size=0):
    query_start_loc_np = query_start_loc_cpu.numpy()
    seq_lens_np = seq_lens_cpu.numpy()

    q_seqlens = query_start_loc_np[1:] - query_start_loc_np[:-1]
    actual_batch_size = seq_lens_np.shape[0]

    # Handle if we are starting in the middle of a local attention block,
    #  we assume q_seqlens > 0 (for all elements), for each batch idx we compute
    #  the number of tokens that are not in the first local attention block and
    #  then we can simply use a cdiv for the rest.
    # For example if we have:
    #   attn_chunk_size = 4
    #   q_seqlens = [4, 10, 5]
    #   k_seqlens = [6, 17, 9]
    # Then we would get:
    #   new_tokens_in_first_block = [2, 1, 4]
    #   local_blocks = [2, 4, 2]
    q_tokens_in_first_block = np.minimum(
        attn_chunk_size - ((seq_lens_np - q_seqlens) % attn_chunk_size), q_seqlens
    ).astype(np.int32)
    tokens_in_last_block = attn_chunk_size + (seq_lens_np % -attn_chunk_size)
    local_blocks = 1 + cdiv(q_seqlens - q_tokens_in_first_block, attn_chunk_size)

    # Once we know the number of local blocks we can compute the request spans
    #  for each batch idx, we can figure out the number of "virtual" requests we
    #  have to make,
    # For the above example we would get:
    #   seqqlens_q_local = [2, 2, 1, 4, 4, 1, 4, 1]
    #
    # First Get batched arange. (E.g., [2, 4, 2] -> [0, 1, 0, 1, 2, 3, 0, 1])
    #   (TODO: max a utility to share this code with _prepare_inputs)
    # arange step 1. [2, 4, 2] -> [2, 6, 8]
    cu_num_blocks = np.cumsum(local_blocks)
    virtual_batches = cu_num_blocks[-1]
    # arange step 2. [2, 6, 8] -> [0, 0, 2, 2, 2, 2, 6, 6]
    block_offsets = np.repeat(cu_num_blocks - local_blocks, local_blocks)
    # arange step 3. [0, 1, 0, 1, 2, 3, 0, 1]
    arange = np.arange(virtual_batches, dtype=np.int32) - block_offsets
    # also compute reverse arange (i.e. [1, 0, 3, 2, 1, 0, 1, 0])
    rarange = np.repeat(local_blocks, local_blocks) - arange - 1
    # Then we can compute the seqlens_q_local, handling the fact that the
    #  first and last blocks could be partial
    seqlens_q_local = np.repeat(q_seqlens - q_tokens_in_first_block, local_blocks)
    # set the first block since this may be a partial block
    seqlens_q_local[arange == 0] = q_tokens_in_first_block
    # set the remaining blocks
    seqlens_q_local[arange > 0] = np.minimum(
        seqlens_q_local - attn_chunk_size * (arange - 1), attn_chunk_size
    )[arange > 0]

    # convert from q_seqlens to cu_seqlens_q
    cu_seqlens_q_local = np.empty(virtual_batches + 1, dtype=np.int32)
    np.cumsum(seqlens_q_local, out=cu_seqlens_q_local[1:])
    cu_seqlens_q_local[0] = 0

    # compute the seqlens_k_local,
    #  basically a full local attention block for all but the last block in each
    #  batch
    # For our example this will be:
    #   seqlens_k_local = [4, 2, 4, 4, 4, 1, 4, 1]
    seqlens_k_local = np.full(cu_num_blocks[-1], attn_chunk_size, dtype=np.int32)
    seqlens_k_local[cu_num_blocks - 1] = tokens_in_last_block
    num_computed_tokens_local = seqlens_k_local - seqlens_q_local

    k_seqstarts_absolute = np.repeat(seq_lens_np, local_blocks) - (
        rarange * attn_chunk_size + np.repeat(tokens_in_last_block, local_blocks)
    )
    # For the example the local attention blocks start at:
    #                           _b0_  _____b1_____  _b2_
    #   k_seqstarts_absolute = [0, 4, 4, 8, 12, 16, 4, 8]
    block_starts = k_seqstarts_absolute // block_size
    assert attn_chunk_size % block_size == 0, (
        f"attn_chunk_size {attn_chunk_size} is not divisible by block_size {block_size}"
    )
    pages_per_local_batch = attn_chunk_size // block_size

    # Create a block_table for the local attention blocks
    # For out example if we have a block-table like (assuming block_size=2):
    #   block_table = [
    #     [ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9],  < batch 0
    #     [10, 11, 12, 13, 14, 15, 16, 17, 18, 19],  < batch 1
    #     [20, 21, 22, 23, 24, 25, 26, 27, 28, 29],  < batch 2
    #   ]
    # Then for the local batches we would want a block-table like
    #   block_table_local = [
    #     [  0,  1 ], < local-batch 0, (batch 0, starting from k[0])
    #     [  2,  3 ], < local-batch 1, (batch 0, starting from k[4])
    #     [ 12, 13 ], < local-batch 2, (batch 1, starting from k[4])
    #     [ 14, 15 ], < local-batch 3, (batch 1, starting from k[8])
    #     [ 16, 17 ], < local-batch 4, (batch 1, starting from k[12])
    #     [ 18, 19 ], < local-batch 5, (batch 1, starting from k[16])
    #     [ 22, 23 ], < local-batch 6, (batch 2, starting from k[4])
    #     [ 24, 25 ], < local-batch 7, (batch 2, starting from k[8])
    #   ]
    block_indices = block_starts[:, None] + np.arange(pages_per_local_batch, dtype=np.int32)
    block_indices = block_indices.reshape(-1).clip(max=block_table.shape[1] - 1)
    batch_indices = np.repeat(
        np.arange(actual_batch_size, dtype=np.int32),
        local_blocks * pages_per_local_batch,
    )

    # .long(): the torch this port runs on refuses int32 index tensors (vLLM's takes them).
    batch_indices_torch = torch.from_numpy(batch_indices).long()
    block_indices_torch = torch.from_numpy(block_indices).long()
    block_table_local = block_table[batch_indices_torch, block_indices_torch].view(virtual_batches, -1)

    query_start_loc_local = torch.from_numpy(cu_seqlens_q_local)
    seq_lens_local = torch.from_numpy(seqlens_k_local)
    return {
        "query_start_loc_cpu": query_start_loc_local,
        "seq_lens_cpu": seq_lens_local,
        "num_computed_tokens_cpu": torch.from_numpy(num_computed_tokens_local),
        "block_table_tensor": block_table_local,
        # What the function builds on the way, for check(): each piece's row and first column.
        "virtual_row": np.repeat(np.arange(actual_batch_size, dtype=np.int32), local_blocks),
        "block_starts": block_starts,
    }


def vllm_virtual_batches(attn_chunk_size, block_size, query_start_loc, seq_lens):
    """check()'s signature for the contract: (cu_seqlens_q_local, seqlens_k_local,
    num_computed_tokens_local, virtual_row, block_start). vLLM builds no local
    metadata for a step without rows (its cu_num_blocks[-1] would raise): the
    empty batch is answered as the contract says."""
    q = torch.as_tensor(query_start_loc, dtype=torch.int32)
    s = torch.as_tensor(seq_lens, dtype=torch.int32)
    if s.numel() == 0:
        empty = np.zeros(0, dtype=np.int32)
        return np.zeros(1, dtype=np.int32), empty, empty, empty, empty
    block_table = torch.zeros((s.numel(), 1), dtype=torch.int32)
    local = make_local_attention_virtual_batches(attn_chunk_size, q, s, block_table, block_size)
    return (local["query_start_loc_cpu"], local["seq_lens_cpu"], local["num_computed_tokens_cpu"],
            local["virtual_row"], local["block_starts"].astype(np.int32))
