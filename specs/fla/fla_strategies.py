"""Hypothesis strategies for FLA's chunk indices and offsets (specs/fla): its
chunk sizes, and valid workloads as prepare_chunk_indices' and
prepare_chunk_offsets' arguments, drawn by the spec's own C++ generators
(fla_generators.cpp: the value model is stated once). Copied into the package
(chunkmeta/_strategies); chunkmeta.strategies exports them."""

from typing import NamedTuple

from chunkmeta._drawing import as_dtype, drawn_by_chunkmeta, scalar_drawn_by_chunkmeta

SPECS = ("fla.chunk_indices", "fla.chunk_offsets")
__all__ = ["fla_chunk_sizes", "fla_workloads", "FlaWorkload"]


class FlaWorkload(NamedTuple):
    """prepare_chunk_indices' and prepare_chunk_offsets' arguments: ``prepare_chunk_indices(*workload)``."""

    cu_seqlens: object
    chunk_size: int


def fla_chunk_sizes():
    """FLA's chunk sizes: the kernels' 16, 32, 64 and 128, 1, powers of two,
    odd sizes, and large ones up to 2^31-1."""
    return scalar_drawn_by_chunkmeta(SPECS[0], "chunk_size")


def fla_workloads(arrays="lists", dtype=None, max_sequences=64):
    """Valid FLA workloads (specs/fla) as prepare_chunk_indices' and
    prepare_chunk_offsets' arguments, FlaWorkload(cu_seqlens, chunk_size),
    every edge class of chunkmeta's generators: cu_seqlens an int32 or int64
    tensor or numpy array (``dtype``: "int32", "int64", or None for either,
    as the generators choose), or a list of ints."""
    if dtype not in (None, "int32", "int64"):
        raise ValueError(f"dtype must be 'int32', 'int64' or None, not {dtype!r}")

    def made(cu_seqlens, chunk_size):
        return FlaWorkload(cu_seqlens if dtype is None else as_dtype(cu_seqlens, dtype), chunk_size)

    return drawn_by_chunkmeta(SPECS[0], arrays, max_sequences, made)


def workloads(arrays="lists", max_rows=64):
    """fla_workloads under the name and limits every spec's strategy takes (a row is a sequence)."""
    return fla_workloads(arrays, max_sequences=max_rows)
