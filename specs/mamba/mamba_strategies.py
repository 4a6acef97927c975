"""Hypothesis strategies for Mamba's chunk metadata (specs/mamba): its chunk
sizes, and valid workloads as compute_chunk_metadata's arguments, drawn by the
spec's own C++ generators (mamba_generators.cpp: the value model is stated
once). Copied into the package (chunkmeta/_strategies); chunkmeta.strategies
exports them."""

from typing import NamedTuple

from chunkmeta._drawing import drawn_by_chunkmeta, scalar_drawn_by_chunkmeta

SPECS = ("mamba",)
__all__ = ["chunk_sizes", "mamba_workloads", "MambaWorkload"]


class MambaWorkload(NamedTuple):
    """compute_chunk_metadata's arguments: ``compute_chunk_metadata(*workload)``."""

    chunk_size: int
    num_prefills: int
    num_computed_tokens_p_cpu: object
    query_start_loc_p_cpu: object


def chunk_sizes():
    """Mamba's chunk sizes: powers of two up to 4096, the engines' sizes,
    cache-block multiples (528, 1056, ...), anything up to 5000, and large ones
    up to 2^31-1."""
    return scalar_drawn_by_chunkmeta(SPECS[0], "chunk_size")


def mamba_workloads(arrays="lists", max_rows=64):
    """Valid Mamba workloads (specs/mamba) as compute_chunk_metadata's
    arguments, MambaWorkload(chunk_size, num_prefills, num_computed_tokens,
    query_start_loc), every edge class of chunkmeta's generators: int32 tensors
    or numpy arrays, or lists of ints."""
    return drawn_by_chunkmeta(SPECS[0], arrays, max_rows, MambaWorkload)


workloads = mamba_workloads
