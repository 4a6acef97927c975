"""The packed-grid drop-ins, compute_varlen_chunk_metadata and
cu_seqlens_to_chunk_indices_offsets: the contract's worked examples in every
kind of input, out=, the rules named, the findings on rows without tokens, and
the same answers as the engines' functions on the batches they handle; then
check(spec="mamba.packed_grid" / "mamba_ssm.chunk_indices") on the drop-ins,
the engines' functions as they have them, and every slip of the field."""

import random
import time

import numpy as np
import pytest
import torch

import chunkmeta
import mutants
from chunkmeta import strategies
from hypothesis import HealthCheck, given, settings
from packed_grid_engines import compute_varlen_chunk_metadata as vllm_helper
from packed_grid_engines import cu_seqlens_to_chunk_indices_offsets as mamba_ssm_function


def as_lists(outputs):
    return tuple(v if isinstance(v, list) else v.tolist() for v in outputs)


KINDS = [list, lambda v: np.array(v, dtype=np.int32), lambda v: torch.tensor(v, dtype=torch.int32),
         lambda v: torch.tensor(v, dtype=torch.int64)]


@pytest.mark.parametrize("make", KINDS)
def test_gives_the_contracts_worked_examples_in_the_inputs_kind(make):
    assert as_lists(chunkmeta.cu_seqlens_to_chunk_indices_offsets(make([0, 5, 12]), 4)) == ([0, 1, 1, 2], [0, 0, 1, 0])
    assert as_lists(chunkmeta.compute_varlen_chunk_metadata(make([0, 5, 12]), 4)) == ([0, 4, 5, 8, 12], [1, 3],
                                                                                      [0, 0, 1, 1])
    assert as_lists(chunkmeta.cu_seqlens_to_chunk_indices_offsets(make([0, 3, 3, 9, 16]), 4)) == (
        [0, 0, 1, 2, 2, 3], [0, 3, 0, 0, 1, 0])
    outputs = chunkmeta.compute_varlen_chunk_metadata(make([0, 3, 3, 9, 16]), 4)
    assert as_lists(outputs) == ([0, 3, 4, 8, 9, 12, 16], [0, -1, 3, 5], [0, 2, 2, 2, 3, 3])
    assert all(isinstance(v, type(make([0]))) for v in outputs)
    if isinstance(outputs[0], torch.Tensor):
        assert all(v.dtype == torch.int32 for v in outputs)


def test_the_engines_function_fails_on_rows_without_tokens_and_the_drop_in_does_not():
    with pytest.raises(IndexError):
        mamba_ssm_function(torch.tensor([0, 4, 4], dtype=torch.int32), 4)
    theirs = mamba_ssm_function(torch.tensor([0, 3, 3, 9, 16], dtype=torch.int32), 4)
    assert list(zip(*as_lists(theirs))).count((0, 3)) == 2  # a zero-length logical chunk: (0, 3) twice
    assert as_lists(chunkmeta.cu_seqlens_to_chunk_indices_offsets(torch.tensor([0, 4, 4], dtype=torch.int32), 4)) == (
        [0], [0])


def test_vllms_helper_is_not_the_builder_when_a_row_starts_off_the_grid():
    starts = torch.tensor([0, 5, 12], dtype=torch.int32)
    helper = chunkmeta.compute_varlen_chunk_metadata(starts, 4)
    builder = chunkmeta.compute_chunk_metadata(4, 2, torch.zeros(2, dtype=torch.int32), starts)
    assert helper[0].tolist() == [0, 4, 5, 8, 12] and builder[0].tolist() == [0, 4, 5, 9, 12]


def test_writes_into_the_callers_buffers():
    cu, last, seq = (np.full(8, 9, dtype=np.int32) for _ in range(3))
    assert chunkmeta.compute_varlen_chunk_metadata([0, 5, 12], 4, out=(cu, last, seq)) == (5, 2, 4)
    assert cu[:5].tolist() == [0, 4, 5, 8, 12] and last[:2].tolist() == [1, 3] and seq[:4].tolist() == [0, 0, 1, 1]
    indices, offsets = np.zeros(4, dtype=np.int32), np.zeros(3, dtype=np.int32)
    with pytest.raises(chunkmeta.InvalidWorkload, match="chunk_offsets") as short:
        chunkmeta.cu_seqlens_to_chunk_indices_offsets([0, 5, 12], 4, out=(indices, offsets))
    assert short.value.code == "output_buffer_too_small"


@pytest.mark.parametrize("starts, chunk_size, code, index", [
    ([0, 5, 3], 4, "query_start_loc_decreasing", 2),
    ([2, 5], 4, "value_too_large", 0),  # the grid is the packed batch's: it starts at 0
    ([0, 5], 0, "chunk_size_not_positive", None),
    ([], 4, "length_mismatch", 0),
])
def test_names_the_broken_rule(starts, chunk_size, code, index):
    with pytest.raises(chunkmeta.InvalidWorkload) as refused:
        chunkmeta.compute_varlen_chunk_metadata(starts, chunk_size)
    assert (refused.value.code, refused.value.index) == (code, index)


def test_answers_as_the_engines_functions_on_the_batches_they_handle():
    rng = random.Random(20261206)
    for round_ in range(2000):
        C = rng.choice([1, 3, 4, 16, 64, 256])
        rows = rng.randrange(1, 8)
        empty_allowed = round_ % 2 == 0
        starts = [0]
        for _ in range(rows):
            n = rng.choice([0, rng.randrange(1, C + 1), rng.randrange(1, 5 * C + 1)]) if empty_allowed else \
                rng.randrange(1, 5 * C + 1)
            starts.append(starts[-1] + n)
        t = torch.tensor(starts, dtype=torch.int32)
        assert as_lists(chunkmeta.compute_varlen_chunk_metadata(t, C)) == as_lists(vllm_helper(t, C))
        if not empty_allowed:  # the torch function is right where every row has tokens
            assert as_lists(chunkmeta.cu_seqlens_to_chunk_indices_offsets(t, C)) == as_lists(mamba_ssm_function(t, C))


# The classes of rows without tokens (every such row is on the grid or off it), and the batches a float32 division
# miscounts: what the engines' torch function gets wrong, outside the batches those engines build today.
ROWS_WITHOUT_TOKENS = ["row without tokens on the grid", "row without tokens off the grid"]
FLOAT32_BATCHES = ["T above 2^24 (a float32 division loses integers)"]


@pytest.mark.parametrize("fn, spec", [(chunkmeta.compute_varlen_chunk_metadata, "mamba.packed_grid"),
                                      (chunkmeta.cu_seqlens_to_chunk_indices_offsets, "mamba_ssm.chunk_indices"),
                                      (vllm_helper, "mamba.packed_grid")])
def test_the_drop_ins_and_vllms_helper_pass_check(fn, spec):
    summary = chunkmeta.check(fn, spec=spec, cases=200, min_cases=200, seed=13)
    assert summary.passed and summary.cases >= 200


def test_vllms_helper_is_not_the_builder_its_docstring_says_it_mirrors(tmp_path):
    def helper_as_builder(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu):
        cu, last, seq = vllm_helper(query_start_loc_p_cpu - query_start_loc_p_cpu[0], chunk_size)
        return cu, seq, last

    with pytest.raises(chunkmeta.CheckFailed) as failed:
        chunkmeta.check(helper_as_builder, spec="mamba", seed=3, corpus=[], fail_fast=True, report_dir=tmp_path)
    assert "minimal" in str(failed.value)


def test_check_finds_the_engines_torch_function_wrong_on_rows_without_tokens_minimal(tmp_path):
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        chunkmeta.check(mamba_ssm_function, spec="mamba_ssm.chunk_indices", seed=3, corpus=[], fail_fast=True,
                        report_dir=tmp_path, exclude=FLOAT32_BATCHES)
    message = str(failed.value)
    assert "minimal" in message and '"cu_seqlens":[0,' in message


def test_check_finds_the_engines_torch_function_wrong_past_2_24_tokens(tmp_path):
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        chunkmeta.check(mamba_ssm_function, spec="mamba_ssm.chunk_indices", seed=3, corpus=[], fail_fast=True,
                        report_dir=tmp_path, exclude=ROWS_WITHOUT_TOKENS)
    assert "minimal" in str(failed.value)


def test_the_engines_torch_function_passes_check_on_the_batches_its_engines_build():
    summary = chunkmeta.check(mamba_ssm_function, spec="mamba_ssm.chunk_indices", cases=300, min_cases=300, seed=13,
                              exclude=ROWS_WITHOUT_TOKENS + FLOAT32_BATCHES)
    assert summary.passed


def slower_by_its_work(fn, seconds_per_entry):
    """fn, made to take seconds_per_entry for each entry of its input and output (a slower machine's fn)."""
    def slow(query_start_loc, chunk_size):
        outputs = fn(query_start_loc, chunk_size)
        time.sleep(seconds_per_entry * (len(query_start_loc) + sum(len(output) for output in outputs)))
        return outputs
    return slow


def test_a_correct_function_that_takes_longer_than_the_timeout_on_huge_batches_passes_check():
    # About 2-5 s on a huge batch, a few ms on the others: the timeout is not a wall for a call its size
    # predicts to be long (10x the prediction from its own largest answers, up to 10x the timeout).
    slow = slower_by_its_work(chunkmeta.compute_varlen_chunk_metadata, 1e-5)
    summary = chunkmeta.check(slow, spec="mamba.packed_grid", properties=["MatchesReferenceOnHugeBatches"], cases=100,
                              min_cases=100, seed=13, timeout=1, corpus=[], database=None)
    assert summary.passed


def test_a_function_whose_cost_grows_faster_than_its_work_is_reported_as_superlinear_cost(tmp_path):
    def quadratic(query_start_loc, chunk_size):
        outputs = chunkmeta.compute_varlen_chunk_metadata(query_start_loc, chunk_size)
        time.sleep(1e-8 * (len(query_start_loc) + len(outputs[0])) ** 2)
        return outputs

    with pytest.raises(chunkmeta.CheckFailed) as failed:
        chunkmeta.check(quadratic, spec="mamba.packed_grid", seed=13, timeout=0.3, corpus=[], database=None,
                        fail_fast=True, report_dir=tmp_path)
    message = str(failed.value)
    assert "superlinear_cost: gave no answer" in message and "its cost grows faster than its work" in message


@pytest.mark.parametrize("name", mutants.slips_of("mamba.packed_grid", "mamba_ssm.chunk_indices"))
def test_every_slip_of_the_field_is_caught(name, tmp_path):
    with pytest.raises(chunkmeta.CheckFailed):
        chunkmeta.check(getattr(mutants, name), spec=mutants.spec_of(name), seed=6, fail_fast=True, corpus=[],
                        report_dir=tmp_path)


def test_the_ported_torch_loop_is_the_engines_function_wherever_that_answers():
    rng = random.Random(7)
    for _ in range(2000):
        C = rng.choice([1, 2, 3, 4, 8])
        starts = [0]
        for _ in range(rng.randrange(0, 6)):
            starts.append(starts[-1] + rng.choice([0, 0, 1, rng.randrange(1, 3 * C + 2)]))
        t = torch.tensor(starts, dtype=torch.int32)
        try:
            theirs = as_lists(mamba_ssm_function(t, C))
        except IndexError:
            continue
        assert as_lists(mutants.grid_zero_length_logical_chunk(t, C)) == theirs, (starts, C)


@settings(max_examples=300, database=None, deadline=None, suppress_health_check=[HealthCheck.data_too_large])
@given(strategies.packed_grid_workloads(arrays="torch"))
def test_packed_grid_workloads_are_what_the_engines_pass_and_both_forms_agree(workload):
    cu, last, seq = chunkmeta.compute_varlen_chunk_metadata(*workload)
    indices, offsets = chunkmeta.cu_seqlens_to_chunk_indices_offsets(*workload)
    assert workload.query_start_loc.dtype == torch.int32 and int(workload.query_start_loc[0]) == 0
    assert (indices.to(torch.int64) * workload.chunk_size + offsets).tolist() == cu[:-1].tolist()
    assert len(last) == len(workload.query_start_loc) - 1 and len(seq) == len(indices)
