"""Hypothesis strategies for the checkpointed chunks
(specs/mamba_checkpointed_chunks), drawn by the spec's own C++ generators
(checkpointed_chunks_generators.cpp: the value model is stated once), as
vLLM #57329's _compute_chunk_metadata takes them (the offsets a list of
ints). Copied into the package (chunkmeta/_strategies); chunkmeta.strategies
exports them."""

from typing import NamedTuple

from chunkmeta._drawing import drawn_by_chunkmeta

SPECS = ("mamba.checkpointed_chunks",)
__all__ = ["checkpointed_chunks_workloads", "CheckpointedChunksWorkload"]


class CheckpointedChunksWorkload(NamedTuple):
    """_compute_chunk_metadata's arguments with checkpoints: ``compute_chunk_metadata(*workload)``."""

    chunk_size: int
    num_prefills: int
    num_computed_tokens_p_cpu: object
    query_start_loc_p_cpu: object
    checkpoint_offsets_p: list


def checkpointed_chunks_workloads(arrays="lists", max_rows=64):
    """Valid workloads of the checkpointed chunks, CheckpointedChunksWorkload(chunk_size,
    num_prefills, num_computed_tokens, query_start_loc, checkpoint_offsets), every edge class of
    chunkmeta's generators: Mamba's, with checkpoints on and off each row's grid, one either side
    of it, at its first and last allowed token, none, and in every row; the arrays int32 tensors
    or numpy arrays, or lists of ints, the offsets a list whatever ``arrays`` is."""
    return drawn_by_chunkmeta(SPECS[0], arrays, max_rows, CheckpointedChunksWorkload)


workloads = checkpointed_chunks_workloads
