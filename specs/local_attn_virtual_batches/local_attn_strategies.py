"""Hypothesis strategies for chunked local attention's virtual batches
(specs/local_attn_virtual_batches): valid workloads as
local_attention_virtual_batches' arguments, drawn by the spec's own C++
generators (local_attn_generators.cpp: the value model is stated once). Copied
into the package (chunkmeta/_strategies); chunkmeta.strategies exports them."""

from typing import NamedTuple

from chunkmeta._drawing import drawn_by_chunkmeta

SPECS = ("local_attn.virtual_batches",)
__all__ = ["local_attention_workloads", "LocalAttentionWorkload"]


class LocalAttentionWorkload(NamedTuple):
    """local_attention_virtual_batches' arguments: ``local_attention_virtual_batches(*workload)``."""

    attn_chunk_size: int
    block_size: int
    query_start_loc: object
    seq_lens: object


def local_attention_workloads(arrays="lists", max_rows=64):
    """Valid workloads of chunked local attention (specs/local_attn_virtual_batches)
    as local_attention_virtual_batches' arguments,
    LocalAttentionWorkload(attn_chunk_size, block_size, query_start_loc, seq_lens),
    every edge class of chunkmeta's generators: every row with new tokens,
    query_start_loc and seq_lens int32 tensors or numpy arrays, or lists of ints."""
    return drawn_by_chunkmeta(SPECS[0], arrays, max_rows, LocalAttentionWorkload)


workloads = local_attention_workloads
