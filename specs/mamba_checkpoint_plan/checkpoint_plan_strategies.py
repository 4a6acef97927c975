"""Hypothesis strategies for the prefix-cache checkpoint plan of Mamba models
(specs/mamba_checkpoint_plan): valid workloads as mamba_checkpoint_plan's
arguments, drawn by the spec's own C++ generators
(checkpoint_plan_generators.cpp: the value model is stated once). Copied into
the package (chunkmeta/_strategies); chunkmeta.strategies exports them."""

from typing import NamedTuple

from chunkmeta._drawing import drawn_by_chunkmeta

SPECS = ("mamba.checkpoint_plan",)
__all__ = ["checkpoint_plan_workloads", "CheckpointPlanWorkload"]


class CheckpointPlanWorkload(NamedTuple):
    """mamba_checkpoint_plan's arguments: ``mamba_checkpoint_plan(*workload)``."""

    chunk_size: int
    block_size: int
    num_computed_tokens_p: object
    query_start_loc_p: object


def checkpoint_plan_workloads(arrays="lists", max_rows=64):
    """Valid workloads of the checkpoint plan (specs/mamba_checkpoint_plan) as
    mamba_checkpoint_plan's arguments, CheckpointPlanWorkload(chunk_size,
    block_size, num_computed_tokens_p, query_start_loc_p), every edge class of
    chunkmeta's generators: Mamba's batches with a block size M a multiple of
    the chunk size, most with rows moved onto, one short of and one past block
    boundaries; int32 tensors or numpy arrays, or lists of ints."""
    return drawn_by_chunkmeta(SPECS[0], arrays, max_rows, CheckpointPlanWorkload)


workloads = checkpoint_plan_workloads
