"""Hypothesis strategies for the packed grid (specs/mamba_packed_grid): its
chunk sizes, and valid workloads as compute_varlen_chunk_metadata's and
cu_seqlens_to_chunk_indices_offsets' arguments, drawn by the spec's own C++
generators (packed_grid_generators.cpp: the value model is stated once).
Copied into the package (chunkmeta/_strategies); chunkmeta.strategies exports
them."""

from typing import NamedTuple

from chunkmeta._drawing import drawn_by_chunkmeta, scalar_drawn_by_chunkmeta

SPECS = ("mamba.packed_grid", "mamba_ssm.chunk_indices")
__all__ = ["packed_grid_chunk_sizes", "packed_grid_workloads", "PackedGridWorkload"]


class PackedGridWorkload(NamedTuple):
    """Both forms' arguments: ``compute_varlen_chunk_metadata(*workload)``,
    ``cu_seqlens_to_chunk_indices_offsets(*workload)``."""

    query_start_loc: object
    chunk_size: int


def packed_grid_chunk_sizes():
    """The engines' 64, 128 and 256, the contract's 4, 1, powers of two, odd sizes and large ones up to 2^31-1."""
    return scalar_drawn_by_chunkmeta(SPECS[0], "chunk_size")


def packed_grid_workloads(arrays="lists", max_rows=64):
    """Valid workloads of the packed grid (specs/mamba_packed_grid), both
    forms' arguments, PackedGridWorkload(query_start_loc, chunk_size), every
    edge class of chunkmeta's generators: rows starting on and off the grid,
    inside the room left in their physical chunk, across cuts, and without
    tokens anywhere; query_start_loc an int32 tensor or numpy array, or a list
    of ints."""
    return drawn_by_chunkmeta(SPECS[0], arrays, max_rows, PackedGridWorkload)


workloads = packed_grid_workloads
