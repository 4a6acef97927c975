"""Hypothesis strategies for the prefill checkpoint planner
(specs/mamba_prefill_checkpoints), drawn by the spec's own C++ generators
(prefill_checkpoints_generators.cpp: the value model is stated once), as
vLLM's builder passes the planner its arguments: lists of ints, the
alignment None or an int, the flag a bool. Copied into the package
(chunkmeta/_strategies); chunkmeta.strategies exports them."""

from typing import NamedTuple, Optional

from chunkmeta._drawing import drawn_by_chunkmeta

SPECS = ("mamba.prefill_checkpoints",)
__all__ = ["prefill_checkpoints_workloads", "PrefillCheckpointsWorkload"]


class PrefillCheckpointsWorkload(NamedTuple):
    """compute_mamba_prefill_checkpoints' arguments: ``compute_mamba_prefill_checkpoints(*workload)``."""

    seq_lens: list
    query_lens: list
    hash_block_size: int
    mamba_block_size: int
    checkpoint_alignment: Optional[int]
    drop_eagle_block: bool


def prefill_checkpoints_workloads(arrays="lists", max_rows=64):
    """Valid planner workloads, PrefillCheckpointsWorkload(seq_lens, query_lens, hash_block_size,
    mamba_block_size, checkpoint_alignment, drop_eagle_block), every edge class of chunkmeta's
    generators: H < M, = M, > M; no alignment, 1, 16, one that rejects; the EAGLE block on and off;
    queries on and off the hash grid; checkpoints at the first and last allowed token; the initial
    state's block at its edge; values near 2^31. The lengths are lists whatever ``arrays`` is."""
    return drawn_by_chunkmeta(SPECS[0], arrays, max_rows, PrefillCheckpointsWorkload)


workloads = prefill_checkpoints_workloads
