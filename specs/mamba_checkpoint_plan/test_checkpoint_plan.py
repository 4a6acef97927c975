"""The checkpoint plan's drop-in (mamba_checkpoint_plan) and check(spec="mamba.checkpoint_plan")."""

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings

import chunkmeta
import mutants
from chunkmeta import strategies
from vllm_checkpoint_plan import vllm_checkpoint_plan

SPEC = "mamba.checkpoint_plan"
# The contract's worked example: C = 4, M = 8.
COMPUTED, STARTS = [0, 6, 16], [0, 20, 33, 36]
PLAN = ([0, 0, 1], [0, 0, 2], [2, 2, 2], [0, 0, 0, 1, 1, 1, 2], [0, 1, 2, 0, 1, 2, 2], [1, 3, 4, 5, 7, 8, 9])


def as_lists(outputs):
    return tuple(v if isinstance(v, list) else v.tolist() for v in outputs)


@pytest.mark.parametrize("make, kind", [
    (lambda v: torch.tensor(v, dtype=torch.int32), torch.Tensor),
    (lambda v: np.array(v, dtype=np.int32), np.ndarray),
    (list, list),
], ids=["torch", "numpy", "list"])
def test_gives_the_contracts_example_as_six_int32_arrays_of_the_inputs_kind(make, kind):
    outputs = chunkmeta.mamba_checkpoint_plan(4, 8, make(COMPUTED), make(STARTS))
    assert len(outputs) == 6 and all(isinstance(v, kind) for v in outputs)
    assert as_lists(outputs) == PLAN
    if kind is torch.Tensor:
        assert all(v.dtype == torch.int32 for v in outputs)


def test_writes_into_buffers_sized_once_and_returns_the_lengths_written():
    sizes = chunkmeta.mamba_checkpoint_plan_max_output_sizes(8192, 8, 4, 8)
    buffers = tuple(torch.full((size,), -1, dtype=torch.int32) for size in sizes)
    lengths = chunkmeta.mamba_checkpoint_plan(4, 8, torch.tensor(COMPUTED, dtype=torch.int32),
                                              torch.tensor(STARTS, dtype=torch.int32), out=buffers)
    assert lengths == (3, 3, 3, 7, 7, 7)
    assert tuple(b[:n].tolist() for b, n in zip(buffers, lengths)) == PLAN


def test_names_a_block_size_that_is_not_a_multiple_of_the_chunk_size():
    with pytest.raises(chunkmeta.InvalidWorkload) as raised:
        chunkmeta.mamba_checkpoint_plan(4, 6, [0], [0, 4])
    assert (raised.value.code, raised.value.field, raised.value.index) == ("not_a_multiple", "block_size", None)


def test_a_row_without_new_tokens_writes_nothing():
    outputs = as_lists(chunkmeta.mamba_checkpoint_plan(4, 8, [8, 0], [0, 0, 3]))
    assert outputs[3:] == ([1], [0], [0])


def test_the_drop_in_is_verified_by_its_own_suite():
    summary = chunkmeta.check(chunkmeta.mamba_checkpoint_plan, spec=SPEC, cases=300, min_cases=300, seed=11)
    assert summary.passed and summary.cases >= 300


def test_check_finds_vllms_final_write_for_a_row_without_new_tokens_with_a_one_row_counterexample(tmp_path):
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        chunkmeta.check(vllm_checkpoint_plan, spec=SPEC, seed=3, corpus=[], fail_fast=True, report_dir=tmp_path)
    report = str(failed.value)
    assert '"num_computed_tokens":[0],"query_start_loc":[0,0]' in report
    assert '"write_row":[0]' in report and "minimal" in report


@pytest.mark.parametrize("name", mutants.slips_of(SPEC))
def test_every_slip_of_the_field_is_caught(name, tmp_path):
    with pytest.raises(chunkmeta.CheckFailed):
        chunkmeta.check(getattr(mutants, name), spec=SPEC, seed=6, arrays="lists", fail_fast=True, corpus=[],
                        report_dir=tmp_path)


@settings(max_examples=200, database=None, deadline=None, suppress_health_check=[HealthCheck.data_too_large])
@given(strategies.checkpoint_plan_workloads(arrays="torch", max_rows=40))
def test_checkpoint_plan_workloads_are_what_the_engine_passes_and_the_drop_in_plans(workload):
    plan = chunkmeta.mamba_checkpoint_plan(*workload)
    rows = len(workload.num_computed_tokens_p)
    assert workload.query_start_loc_p.dtype == torch.int32
    assert [len(p) for p in plan[:3]] == [rows] * 3 and len(plan[3]) == len(plan[4]) == len(plan[5])
    as_lists = chunkmeta.mamba_checkpoint_plan(workload.chunk_size, workload.block_size,
                                               workload.num_computed_tokens_p.tolist(), workload.query_start_loc_p.tolist())
    assert [p.tolist() for p in plan] == list(as_lists)
