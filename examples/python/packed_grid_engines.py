"""The packed-grid formulation of Mamba-2's chunks as the rest of the field
computes it (SPEC Part 7), written as those engines have it:

- `cu_seqlens_to_chunk_indices_offsets`: mamba_ssm's varlen formulation, in
  SGLang's Mamba2Metadata and TensorRT-LLM (torch, a loop over the rows);
- `compute_varlen_chunk_metadata`: vLLM's helper for its Mamba kernel tests,
  whose docstring says it mirrors the metadata builder (it does not when a
  row starts off the grid).

    chunkmeta.cu_seqlens_to_chunk_indices_offsets and
    chunkmeta.compute_varlen_chunk_metadata are the drop-ins.
"""

import math

import torch


def cu_seqlens_to_chunk_indices_offsets(cu_seqlens, chunk_size):
    """mamba_ssm's: for each logical chunk, its physical chunk and its start's offset in it. On a row without
    tokens it raises IndexError (the row last, starting on the grid) or emits a zero-length logical chunk."""
    total_seqlens = cu_seqlens[-1]
    cu_seqlens = cu_seqlens[1:]  # remove prepended 0
    # outputs will have length expansion of chunks that do not divide chunk_size
    N = math.ceil(total_seqlens / chunk_size) + (cu_seqlens[:-1] % chunk_size > 0).sum()
    chunk_indices = torch.arange(N, dtype=torch.int, device=cu_seqlens.device)
    chunk_offsets = torch.zeros((N,), dtype=torch.int, device=cu_seqlens.device)
    p = 0  # num of insertions
    for s, e in zip(cu_seqlens[:-1], cu_seqlens[1:]):
        # if does not divide chunk_size, then there is one chunk insertion
        p += (s % chunk_size > 0)
        # the + 1 for _e shifts the boundary by one chunk, not needed if chunk_size divides e
        _s, _e = s // chunk_size + p, e // chunk_size + p + (e % chunk_size > 0)
        # adjust indices and offsets
        chunk_indices[_s:_e] -= p
        chunk_offsets[_s] = s % chunk_size
    return chunk_indices, chunk_offsets


def compute_varlen_chunk_metadata(query_start_loc, chunk_size):
    """vLLM's helper: (cu_chunk_seqlens, last_chunk_indices, seq_idx) of the pieces of the packed batch cut at
    every multiple of chunk_size and at every row start; -1 for a row without tokens."""
    starts = query_start_loc.to(torch.int64).tolist()
    cu_chunk_seqlens, last_chunk_indices, seq_idx = [], [], []
    for row, (start, end) in enumerate(zip(starts[:-1], starts[1:])):
        position = start
        while position < end:
            cu_chunk_seqlens.append(position)
            seq_idx.append(row)
            position = min(end, (position // chunk_size + 1) * chunk_size)
        last_chunk_indices.append(len(seq_idx) - 1 if end > start else -1)
    cu_chunk_seqlens.append(starts[-1])
    as_int32 = lambda values: torch.tensor(values, dtype=torch.int32, device=query_start_loc.device)  # noqa: E731
    return as_int32(cu_chunk_seqlens), as_int32(last_chunk_indices), as_int32(seq_idx)
