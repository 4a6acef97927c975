"""FLA's chunk index helpers as engines carry them, written out in torch
(specs/fla), for chunkmeta's tests and benchmarks:

* prepare_chunk_indices / prepare_chunk_offsets: the current formulation,
  chunk counts as (len + C - 1) // C in cu_seqlens' own dtype (wraps for int32
  lengths near 2^31), sequence ids by repeating each sequence's index;
* prepare_chunk_indices_older: the older formulation, whose sequence id is the
  number of chunks so far that start a sequence, minus one: every chunk after
  an empty sequence gets an earlier sequence's id.
* prepare_chunk_indices_vllm: vLLM's copy of the older one, which also raises
  on an empty batch (a batch vLLM never sends: exclude=["empty batch"]).

the FLA contract's procedure in plain Python is fla_reference_procedure.py.

    chunkmeta.check(fla_index.prepare_chunk_indices_older, spec="fla.chunk_indices")   # fails: empty sequences
"""

import torch
import torch.nn.functional as F


def _chunk_counts(cu_seqlens, chunk_size):
    # (len + C - 1) // C in cu_seqlens' own dtype, as the engines compute it.
    return (torch.diff(cu_seqlens) + (chunk_size - 1)).div(chunk_size, rounding_mode="floor")


def prepare_chunk_indices(cu_seqlens, chunk_size):
    counts = _chunk_counts(cu_seqlens, chunk_size)
    # A segmented arange: each chunk's sequence, and its index from that sequence's first chunk.
    sequence = torch.repeat_interleave(torch.arange(counts.numel(), dtype=counts.dtype), counts)
    first_chunk = F.pad(counts.cumsum(0), (1, 0))[:-1]
    # first_chunk[sequence], written as index_select: torch 1.13 indexes with int64 only.
    within = torch.arange(sequence.shape[0], dtype=counts.dtype) - first_chunk.index_select(0, sequence)
    return torch.stack([sequence, within], 1).to(cu_seqlens)


def prepare_chunk_offsets(cu_seqlens, chunk_size):
    return F.pad(_chunk_counts(cu_seqlens, chunk_size), (1, 0), value=0).cumsum(-1)


def prepare_chunk_indices_older(cu_seqlens, chunk_size):
    within = torch.cat([torch.arange(n) for n in _chunk_counts(cu_seqlens, chunk_size).tolist()] or
                       [torch.zeros(0, dtype=torch.int64)])
    return torch.stack([within.eq(0).cumsum(0) - 1, within], 1).to(cu_seqlens)


def prepare_chunk_indices_vllm(cu_seqlens, chunk_size):
    # vLLM's copy (vllm/model_executor/layers/fla/ops/index.py): the older
    # formulation, without a guard for an empty batch (torch.cat of no tensors
    # raises), which vLLM never sends.
    within = torch.cat([torch.arange(n) for n in _chunk_counts(cu_seqlens, chunk_size).tolist()])
    return torch.stack([within.eq(0).cumsum(0) - 1, within], 1).to(cu_seqlens)
