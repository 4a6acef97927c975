"""vLLM's causal conv1d metadata (compute_causal_conv1d_metadata, in
vllm/v1/attention/backends/utils.py), ported over CPU tensors and numpy as
vLLM writes it, and checked against the conv1d program map contract
(specs/conv1d_program_map):

    import chunkmeta
    from vllm_conv1d_metadata import vllm_program_map
    chunkmeta.check(vllm_program_map, spec="conv1d.program_map")

vLLM fixes BLOCK_M at 8 (`for BLOCK_M in [8]`); the port takes it as an
argument so check() can draw other block lengths. `vllm_program_map` answers
what the kernel reads: every entry of vLLM's padded buffers up to the first
PAD_SLOT_ID, so padding that is not -1 shows as extra programs.
"""

import numpy as np
import torch

PAD_SLOT_ID = -1


def compute_causal_conv1d_metadata(query_start_loc_p: torch.Tensor, block_ms=(8,)):
    # Needed for causal_conv1d
    seqlens = query_start_loc_p.diff().to("cpu")
    nums_dict = {}  # type: ignore
    batch_ptr = None
    token_chunk_offset_ptr = None
    device = query_start_loc_p.device
    for BLOCK_M in block_ms:  # cover all BLOCK_M values
        nums = -(-seqlens // BLOCK_M)
        nums_dict[BLOCK_M] = {}
        nums_dict[BLOCK_M]["nums"] = nums
        nums_dict[BLOCK_M]["tot"] = nums.sum().item()
        mlist = torch.from_numpy(np.repeat(np.arange(len(nums)), nums))
        nums_dict[BLOCK_M]["mlist"] = mlist
        mlist_len = len(nums_dict[BLOCK_M]["mlist"])
        nums_dict[BLOCK_M]["mlist_len"] = mlist_len
        MAX_NUM_PROGRAMS = max(1024, mlist_len) * 2
        offsetlist = []  # type: ignore
        for idx, num in enumerate(nums):
            offsetlist.extend(range(num))
        offsetlist = torch.tensor(offsetlist, dtype=torch.int32)
        nums_dict[BLOCK_M]["offsetlist"] = offsetlist

        if batch_ptr is None:
            # Update default value after class definition
            batch_ptr = torch.full((MAX_NUM_PROGRAMS,), PAD_SLOT_ID, dtype=torch.int32, device=device)
            token_chunk_offset_ptr = torch.full((MAX_NUM_PROGRAMS,), PAD_SLOT_ID, dtype=torch.int32, device=device)
        else:
            if batch_ptr.nelement() < MAX_NUM_PROGRAMS:
                batch_ptr.resize_(MAX_NUM_PROGRAMS).fill_(PAD_SLOT_ID)
                token_chunk_offset_ptr.resize_(MAX_NUM_PROGRAMS).fill_(PAD_SLOT_ID)  # type: ignore

        batch_ptr[0:mlist_len].copy_(mlist)
        token_chunk_offset_ptr[0:mlist_len].copy_(offsetlist)  # type: ignore
        nums_dict[BLOCK_M]["batch_ptr"] = batch_ptr
        nums_dict[BLOCK_M]["token_chunk_offset_ptr"] = token_chunk_offset_ptr  # type: ignore

    return nums_dict, batch_ptr, token_chunk_offset_ptr


def as_the_kernel_reads_it(batch_ptr, token_chunk_offset_ptr):
    """The programs of padded buffers: every entry up to the first PAD_SLOT_ID."""
    padding = (batch_ptr == PAD_SLOT_ID).nonzero()
    tot = int(padding[0]) if len(padding) else batch_ptr.numel()
    return batch_ptr[:tot], token_chunk_offset_ptr[:tot]


def vllm_program_map(query_start_loc, block_m):
    """check()'s signature for the contract: (nums, batch_ptr, token_chunk_offset_ptr)."""
    nums_dict, batch_ptr, token_chunk_offset_ptr = compute_causal_conv1d_metadata(query_start_loc, (block_m,))
    return (nums_dict[block_m]["nums"],) + as_the_kernel_reads_it(batch_ptr, token_chunk_offset_ptr)
