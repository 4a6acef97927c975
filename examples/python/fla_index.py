"""FLA's chunk index helpers as engines carry them, written out in torch
(SPEC Part 2), for chunkmeta's tests and benchmarks:

* prepare_chunk_indices / prepare_chunk_offsets: the current formulation,
  chunk counts as (len + C - 1) // C in cu_seqlens' own dtype (wraps for int32
  lengths near 2^31), sequence ids by repeating each sequence's index;
* prepare_chunk_indices_older: the older formulation, whose sequence id is the
  number of chunks so far that start a sequence, minus one: every chunk after
  an empty sequence gets an earlier sequence's id.

SPEC Part 2's procedure in plain Python is fla_reference_procedure.py.

    chunkmeta.check(fla_index.prepare_chunk_indices_older, spec="fla.chunk_indices")   # fails: empty sequences
"""

import torch


def _chunk_counts(cu_seqlens, chunk_size):
    lengths = cu_seqlens[1:] - cu_seqlens[:-1]
    return (lengths + chunk_size - 1) // chunk_size  # in cu_seqlens' dtype, as the engines do


def prepare_chunk_indices(cu_seqlens, chunk_size):
    counts = _chunk_counts(cu_seqlens, chunk_size)
    sequence = torch.repeat_interleave(torch.arange(counts.numel(), device=cu_seqlens.device), counts)
    first_chunk = torch.cumsum(counts, 0) - counts
    within = torch.arange(sequence.numel(), device=cu_seqlens.device) - torch.repeat_interleave(first_chunk, counts)
    return torch.stack([sequence, within], 1).to(cu_seqlens)


def prepare_chunk_offsets(cu_seqlens, chunk_size):
    counts = _chunk_counts(cu_seqlens, chunk_size)
    return torch.cat([counts.new_zeros(1), counts]).cumsum(-1)


def prepare_chunk_indices_older(cu_seqlens, chunk_size):
    within = torch.cat([torch.arange(n) for n in _chunk_counts(cu_seqlens, chunk_size).tolist()] or
                       [torch.zeros(0, dtype=torch.int64)])
    return torch.stack([within.eq(0).cumsum(0) - 1, within], 1).to(cu_seqlens)
