"""compute_chunk_metadata with checkpoint_offsets_p (vLLM #57329's signature):
the fourth array whenever the keyword is given, the contract's worked examples
in every kind of input, out=, the rules named, and the same answers as the
PR's loop ported, on random batches, whichever planner's offsets it is given;
then check(spec="mamba.checkpointed_chunks") on the drop-in, the PR's function
and every slip of the change."""

import random

import numpy as np
import pytest
import torch

import chunkmeta
import mutants
from chunkmeta import strategies
from hypothesis import HealthCheck, given, settings
from vllm_prefill_checkpoints import _compute_chunk_metadata as vllm_chunker
from vllm_prefill_checkpoints import compute_mamba_prefill_checkpoints as vllm_planner

C, COMPUTED, STARTS, OFFSETS = 4, [0, 6, 16], [0, 20, 33, 36], [10, 5, 0]
EXPECTED = ([0, 4, 8, 10, 12, 16, 20, 22, 25, 26, 30, 33, 36], [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2], [5, 10, 11],
            [2, 7, -1])


def as_lists(outputs):
    return tuple(v if isinstance(v, list) else v.tolist() for v in outputs)


@pytest.mark.parametrize("make", [list, lambda v: np.array(v, dtype=np.int32), lambda v: torch.tensor(v, dtype=torch.int32)])
def test_gives_the_contracts_worked_example_in_the_inputs_kind(make):
    outputs = chunkmeta.compute_chunk_metadata(C, 3, make(COMPUTED), make(STARTS), make(OFFSETS))
    assert as_lists(outputs) == EXPECTED
    assert all(isinstance(v, type(make(STARTS))) for v in outputs)


def test_returns_four_arrays_whenever_the_keyword_is_given_and_three_without_it():
    computed, starts = torch.tensor([0, 0], dtype=torch.int32), torch.tensor([0, 700, 1400], dtype=torch.int32)
    assert len(chunkmeta.compute_chunk_metadata(256, 2, computed, starts)) == 3
    none = chunkmeta.compute_chunk_metadata(256, 2, computed, starts, checkpoint_offsets_p=None)
    assert as_lists(none)[3] == [-1, -1] and as_lists(none)[:3] == as_lists(
        chunkmeta.compute_chunk_metadata(256, 2, computed, starts))
    given = chunkmeta.compute_chunk_metadata(256, 2, computed, starts, checkpoint_offsets_p=[0, 100])
    assert as_lists(given) == ([0, 256, 512, 700, 800, 956, 1212, 1400], [0, 0, 0, 1, 1, 1, 1], [2, 6], [-1, 3])


def test_writes_four_buffers_sized_once():
    sizes = chunkmeta.checkpointed_chunks_max_output_sizes(36, 3, C)
    out = tuple(np.full(n, 99, dtype=np.int32) for n in sizes)
    assert chunkmeta.compute_chunk_metadata(C, 3, COMPUTED, STARTS, OFFSETS, out=out) == (13, 12, 3, 3)
    assert tuple(o.tolist()[:n] for o, n in zip(out, (13, 12, 3, 3))) == EXPECTED
    with pytest.raises(TypeError, match="four int32 buffers"):
        chunkmeta.compute_chunk_metadata(C, 3, COMPUTED, STARTS, OFFSETS, out=out[:3])


@pytest.mark.parametrize("offsets, code, index", [
    ([0, 13, 0], "value_too_large", 1),  # an offset equal to the row's new tokens: vLLM's loop emits an empty chunk
    ([-1, 0, 0], "negative_value", 0),
    ([0, 0], "length_mismatch", 2),
    ([0, 0, 3], "value_too_large", 2),  # the last row has 3 new tokens
])
def test_names_the_broken_rule(offsets, code, index):
    with pytest.raises(chunkmeta.InvalidWorkload) as refused:
        chunkmeta.compute_chunk_metadata(C, 3, COMPUTED, STARTS, offsets)
    assert (refused.value.code, refused.value.field, refused.value.index) == (code, "checkpoint_offsets", index)


def test_answers_as_the_prs_loop_with_the_planners_offsets_and_with_any_offsets():
    rng = random.Random(20261206)
    planned = 0
    for round_ in range(3000):
        C = rng.choice([1, 3, 4, 8, 64, 256])
        rows = rng.randrange(0, 7)
        n = [rng.randrange(0, 6 * C + 5) if rng.random() > 0.15 else 0 for _ in range(rows)]
        computed = [rng.randrange(0, 5) * C if rng.random() < 0.4 else rng.randrange(0, 9 * C) for _ in range(rows)]
        if round_ % 2:
            offsets = [rng.randrange(1, q) if q > 1 and rng.random() < 0.6 else 0 for q in n]
        else:
            s = [c + q for c, q in zip(computed, n)]
            offsets = vllm_planner(s, n, C * rng.choice([1, 2]), C * rng.choice([1, 4]), rng.choice([None, 1, 16]),
                                   rng.random() < 0.5)[0]
            planned += sum(1 for o in offsets if o > 0)
        starts = [0]
        for q in n:
            starts.append(starts[-1] + q)
        t = lambda v: torch.tensor(v, dtype=torch.int32)  # noqa: E731
        ours = chunkmeta.compute_chunk_metadata(C, rows, t(computed), t(starts), offsets)
        theirs = vllm_chunker(C, rows, t(computed), t(starts), offsets)
        assert as_lists(ours) == theirs, (C, computed, starts, offsets)
    assert planned > 200


SPEC = "mamba.checkpointed_chunks"


@pytest.mark.parametrize("fn", [chunkmeta.compute_chunk_metadata, vllm_chunker])
def test_the_drop_in_and_the_prs_function_pass_check(fn):
    summary = chunkmeta.check(fn, spec=SPEC, cases=200, min_cases=200, seed=13)
    assert summary.passed and summary.cases >= 200


def test_check_calls_fn_with_the_prs_signature_and_the_offsets_as_a_list():
    calls = []

    def recording(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu, checkpoint_offsets_p=None):
        calls.append((type(num_computed_tokens_p_cpu), type(checkpoint_offsets_p)))
        return chunkmeta.compute_chunk_metadata(chunk_size, num_prefills, num_computed_tokens_p_cpu,
                                                query_start_loc_p_cpu, checkpoint_offsets_p)

    chunkmeta.check(recording, spec=SPEC, cases=20, min_cases=20, seed=2)
    assert calls and all(kinds == (torch.Tensor, list) for kinds in calls)


def test_check_shows_a_port_that_does_not_realign_after_the_checkpoint_with_a_minimal_counterexample(tmp_path):
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        chunkmeta.check(mutants.ckpt_no_realignment_after_checkpoint, spec=SPEC, seed=3, corpus=[], fail_fast=True,
                        report_dir=tmp_path)
    message = str(failed.value)
    assert "spec='mamba.checkpointed_chunks'" in message and "minimal (1 row)" in message


@pytest.mark.parametrize("name", mutants.slips_of(SPEC))
def test_every_slip_of_the_change_is_caught(name, tmp_path):
    with pytest.raises(chunkmeta.CheckFailed):
        chunkmeta.check(getattr(mutants, name), spec=SPEC, seed=6, fail_fast=True, corpus=[], report_dir=tmp_path)


@settings(max_examples=300, database=None, deadline=None, suppress_health_check=[HealthCheck.data_too_large])
@given(strategies.checkpointed_chunks_workloads(arrays="torch"))
def test_checkpointed_chunks_workloads_are_what_the_builder_passes_and_the_drop_in_computes(workload):
    cu, seq, last, checkpoint = chunkmeta.compute_chunk_metadata(*workload)
    assert isinstance(workload.checkpoint_offsets_p, list) and len(workload.checkpoint_offsets_p) == workload.num_prefills
    assert [k >= 0 for k in checkpoint.tolist()] == [o > 0 for o in workload.checkpoint_offsets_p]
    assert len(last) == workload.num_prefills
