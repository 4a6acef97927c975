"""The conv1d program map's drop-in (causal_conv1d_program_map) and check(spec="conv1d.program_map")."""

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings

import chunkmeta
import mutants
from chunkmeta import strategies
from vllm_conv1d_metadata import compute_causal_conv1d_metadata, vllm_program_map

SPEC = "conv1d.program_map"
# The contract's worked example: block_m = 8.
STARTS = [0, 5, 5, 21, 22]
MAP = ([1, 0, 2, 1], [0, 2, 2, 3], [0, 0, 1, 0])


def as_lists(outputs):
    return tuple(v if isinstance(v, list) else v.tolist() for v in outputs)


@pytest.mark.parametrize("make", [list, lambda v: np.array(v, dtype=np.int32), lambda v: torch.tensor(v, dtype=torch.int32),
                                  lambda v: torch.tensor(v, dtype=torch.int64)])
def test_gives_the_contracts_worked_example_in_the_inputs_kind(make):
    outputs = chunkmeta.causal_conv1d_program_map(make(STARTS))
    assert as_lists(outputs) == MAP
    kind = type(make(STARTS))
    assert all(isinstance(v, kind) for v in outputs)
    if kind is torch.Tensor:
        assert all(v.dtype == torch.int32 for v in outputs)


def test_gives_what_vllms_function_gives_in_its_buffers(int32):
    q = int32([0, 5, 5, 21, 22, 9000])
    nums_dict, batch_ptr, token_chunk_offset_ptr = compute_causal_conv1d_metadata(q)
    nums = torch.empty(5, dtype=torch.int32)
    ours = (nums, torch.empty(batch_ptr.numel(), dtype=torch.int32), torch.empty(batch_ptr.numel(), dtype=torch.int32))
    assert chunkmeta.causal_conv1d_program_map(q, out=ours) == (5, nums_dict[8]["tot"])
    assert torch.equal(ours[0], nums_dict[8]["nums"])
    assert torch.equal(ours[1], batch_ptr)  # the map, then -1 to the buffer's end
    assert torch.equal(ours[2], token_chunk_offset_ptr)


def test_sizes_the_engines_buffers_once():
    sizes = chunkmeta.causal_conv1d_program_map_max_output_sizes(8192, 8)
    assert sizes == (8, 1032, 1032)
    with pytest.raises(chunkmeta.InvalidWorkload) as short:
        chunkmeta.causal_conv1d_program_map([0, 9000], out=tuple(torch.empty(s, dtype=torch.int32) for s in (1, 8, 8)))
    assert (short.value.code, short.value.field) == ("output_buffer_too_small", "batch_ptr")


def test_names_the_broken_rule():
    with pytest.raises(chunkmeta.InvalidWorkload) as decreasing:
        chunkmeta.causal_conv1d_program_map([0, 9, 4])
    assert (decreasing.value.code, decreasing.value.field, decreasing.value.index) == (
        "query_start_loc_decreasing", "query_start_loc", 2)
    with pytest.raises(chunkmeta.InvalidWorkload) as zero:
        chunkmeta.causal_conv1d_program_map([0, 9], block_m=0)
    assert (zero.value.code, zero.value.field) == ("not_positive", "block_m")


def test_the_drop_in_and_vllms_function_pass_check():
    for fn in (chunkmeta.causal_conv1d_program_map, vllm_program_map):
        summary = chunkmeta.check(fn, spec=SPEC, cases=200, min_cases=200, seed=13)
        assert summary.passed and summary.cases >= 200


def test_check_catches_fla_s_older_formulation_with_a_minimal_counterexample(tmp_path):
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        chunkmeta.check(mutants.conv1d_older_row_ids, spec=SPEC, seed=3, corpus=[], fail_fast=True,
                        report_dir=tmp_path)
    message = str(failed.value)
    assert "spec='conv1d.program_map'" in message
    assert '"query_start_loc":[0,0,1]' in message and "minimal" in message


@pytest.mark.parametrize("name", mutants.slips_of(SPEC))
def test_every_slip_of_the_field_is_caught(name, tmp_path):
    with pytest.raises(chunkmeta.CheckFailed):
        chunkmeta.check(getattr(mutants, name), spec=SPEC, seed=6, fail_fast=True, corpus=[], report_dir=tmp_path)


@settings(max_examples=300, database=None, deadline=None, suppress_health_check=[HealthCheck.data_too_large])
@given(strategies.conv1d_workloads(arrays="torch"))
def test_conv1d_workloads_are_what_the_engine_passes_and_the_drop_in_computes(workload):
    nums, batch_ptr, token_chunk_offset_ptr = chunkmeta.causal_conv1d_program_map(*workload)
    assert workload.query_start_loc.dtype == torch.int32
    assert len(nums) == len(workload.query_start_loc) - 1
    assert len(batch_ptr) == len(token_chunk_offset_ptr) == int(nums.sum())
