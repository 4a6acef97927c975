"""vLLM's prefix-cache checkpoint plan ("all" mode), ported from MambaMixer2's
forward over CPU tensors (the host part: the index computation; the engine
then runs ssm_state[block_table[row, block]] = varlen_states[chunk] for each
entry), with the drop-in's signature, for chunkmeta's tests and benchmarks.

    chunkmeta.check(vllm_checkpoint_plan, spec="mamba.checkpoint_plan")

finds where it differs from the contract (specs/mamba_checkpoint_plan): it
makes the final write for every row, so a row without new tokens saves
another row's state over a block of its own; and it computes
(c + M) // M - 1 in the engine's int32, which wraps for c near 2^31.
"""

import torch

from reference_procedure import compute_chunk_metadata


def vllm_checkpoint_plan(chunk_size, block_size, num_computed_tokens_p, query_start_loc_p):
    computed = torch.as_tensor(num_computed_tokens_p, dtype=torch.int32)
    starts = torch.as_tensor(query_start_loc_p, dtype=torch.int32)
    _, _, last_chunk_indices = compute_chunk_metadata(chunk_size, computed.numel(), computed, starts)
    return checkpoint_loop(chunk_size, block_size, computed, starts, torch.tensor(last_chunk_indices, dtype=torch.int32))


def checkpoint_loop(chunk_size, block_size, computed, starts, last_chunk_indices):
    """The loop itself, given the step's Mamba metadata (the engine has it for the scan kernel already)."""
    rows = computed.numel()
    new_tokens = starts[1:] - starts[:-1]
    seq_lens = computed + new_tokens
    M = block_size
    # The blocks each row reads and touches, as int32 tensor arithmetic.
    block_idx_last_computed_token = torch.clamp((computed + M - 1) // M - 1, min=0)
    block_idx_first_scheduled_token = (computed + M) // M - 1
    block_idx_last_scheduled_token = torch.clamp((seq_lens + M - 1) // M - 1, min=0)
    chunks_per_block = M // chunk_size
    write_row, write_block, write_chunk = [], [], []
    for i in range(rows):  # one .item() per value, as the loop does
        first_chunk = 0 if i == 0 else last_chunk_indices[i - 1].item() + 1
        c = computed[i].item()
        first = block_idx_first_scheduled_token[i].item()
        last = block_idx_last_scheduled_token[i].item()
        for b in range(first, last):
            write_row.append(i)
            write_block.append(b)
            write_chunk.append(first_chunk + chunks_per_block - 1 - (c % M) // chunk_size
                               + (b - first) * chunks_per_block)
        # The final state, for every row (varlen_states[-1] for a leading row without tokens).
        write_row.append(i)
        write_block.append(last)
        write_chunk.append(last_chunk_indices[i].item())
    as_int32 = lambda values: torch.tensor(values, dtype=torch.int32)
    return (block_idx_last_computed_token, block_idx_first_scheduled_token, block_idx_last_scheduled_token,
            as_int32(write_row), as_int32(write_block), as_int32(write_chunk))
