"""Hypothesis strategies for the causal conv1d program map
(specs/conv1d_program_map): valid workloads as causal_conv1d_program_map's
arguments. Copied into the package (chunkmeta/_strategies); chunkmeta.strategies
exports them."""

from typing import NamedTuple

from hypothesis import strategies as st

from chunkmeta._drawing import array, hypothesis_pick, weighted
from chunkmeta._strategies.fla_strategies import cu_seqlens, fla_chunk_size

SPECS = ("conv1d.program_map",)
__all__ = ["conv1d_workloads", "Conv1dWorkload"]


class Conv1dWorkload(NamedTuple):
    """causal_conv1d_program_map's arguments: ``causal_conv1d_program_map(*workload)``."""

    query_start_loc: object
    block_m: int


def conv1d_workloads(arrays="lists", max_rows=64):
    """Valid workloads of the causal conv1d program map (specs/conv1d_program_map)
    as causal_conv1d_program_map's arguments, Conv1dWorkload(query_start_loc,
    block_m): FLA's cu_seqlens drawn around block_m, which is vLLM's 8 most of
    the time and any of FLA's chunk sizes otherwise; query_start_loc an int32
    tensor or numpy array, or a list of ints."""

    @st.composite
    def draw_workload(draw):
        pick = hypothesis_pick(draw)
        block_m = 8 if weighted(pick, (60, 40)) == 0 else fla_chunk_size(pick)
        return Conv1dWorkload(array(cu_seqlens(draw, pick, block_m, max_rows), arrays, "int32"), block_m)

    return draw_workload()


workloads = conv1d_workloads
