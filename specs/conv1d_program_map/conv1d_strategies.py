"""Hypothesis strategies for the causal conv1d program map
(specs/conv1d_program_map): valid workloads as causal_conv1d_program_map's
arguments, drawn by the spec's own C++ generators (conv1d_generators.cpp: the
value model is stated once). Copied into the package (chunkmeta/_strategies);
chunkmeta.strategies exports them."""

from typing import NamedTuple

from chunkmeta._drawing import drawn_by_chunkmeta

SPECS = ("conv1d.program_map",)
__all__ = ["conv1d_workloads", "Conv1dWorkload"]


class Conv1dWorkload(NamedTuple):
    """causal_conv1d_program_map's arguments: ``causal_conv1d_program_map(*workload)``."""

    query_start_loc: object
    block_m: int


def conv1d_workloads(arrays="lists", max_rows=64):
    """Valid workloads of the causal conv1d program map (specs/conv1d_program_map)
    as causal_conv1d_program_map's arguments, Conv1dWorkload(query_start_loc,
    block_m), every edge class of chunkmeta's generators: FLA's cu_seqlens
    drawn around block_m, which is vLLM's 8 most of the time and any of FLA's
    chunk sizes otherwise; query_start_loc an int32 tensor or numpy array, or a
    list of ints."""
    return drawn_by_chunkmeta(SPECS[0], arrays, max_rows, Conv1dWorkload)


workloads = conv1d_workloads
