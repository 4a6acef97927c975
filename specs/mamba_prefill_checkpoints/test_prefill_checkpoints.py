"""The prefill checkpoint planner's drop-in, compute_mamba_prefill_checkpoints:
the contract's worked examples in every kind of input, out=, the rules named,
and the same answers as the planner ported from vLLM on random plans; then
check(spec="mamba.prefill_checkpoints") on the drop-in, the port, and every
slip of the change, and the strategy drawn by chunkmeta's own generators."""

import random

import numpy as np
import pytest
import torch

import chunkmeta
import mutants
from chunkmeta import strategies
from hypothesis import HealthCheck, given, settings
from vllm_prefill_checkpoints import compute_mamba_prefill_checkpoints as vllm_planner

S, N = [20, 20, 37], [20, 12, 37]


def as_lists(outputs):
    return tuple(v if isinstance(v, list) else v.tolist() for v in outputs)


@pytest.mark.parametrize("alignment, eagle, offsets, cols", [
    (1, False, [16, 8, 36], [1, 1, 3]),
    (3, False, [0, 0, 36], [-1, -1, 3]),
    (1, True, [12, 4, 32], [1, 1, 3]),
    (None, False, [0, 0, 0], [-1, -1, -1]),
])
def test_gives_the_contracts_worked_examples(alignment, eagle, offsets, cols):
    assert as_lists(chunkmeta.compute_mamba_prefill_checkpoints(S, N, 4, 8, alignment, eagle)) == (offsets, cols)


@pytest.mark.parametrize("make, dtypes", [
    (lambda v: torch.tensor(v, dtype=torch.int32), (torch.int32, torch.int64)),
    (lambda v: np.array(v, dtype=np.int64), (np.int32, np.int64)),
])
def test_answers_in_the_inputs_kind_int32_offsets_and_int64_columns(make, dtypes):
    offsets, cols = chunkmeta.compute_mamba_prefill_checkpoints(make(S), make(N), 4, 8, 1, False)
    assert (offsets.dtype, cols.dtype) == dtypes
    assert as_lists((offsets, cols)) == ([16, 8, 36], [1, 1, 3])


def test_writes_into_the_callers_buffers():
    offsets, cols = np.full(4, 99, dtype=np.int32), np.full(4, 99, dtype=np.int64)
    assert chunkmeta.compute_mamba_prefill_checkpoints(S, N, 4, 8, 1, False, out=(offsets, cols)) == 3
    assert offsets.tolist() == [16, 8, 36, 99] and cols.tolist() == [1, 1, 3, 99]
    with pytest.raises(chunkmeta.InvalidWorkload, match="checkpoint_cols") as short:
        chunkmeta.compute_mamba_prefill_checkpoints(S, N, 4, 8, 1, False, out=(offsets, cols[:2]))
    assert short.value.code == "output_buffer_too_small"


@pytest.mark.parametrize("arguments, code, field, index", [
    (([3], [5], 4, 8, 1, False), "below_minimum", "seq_lens", 0),
    (([8], [5], 4, 8, 0, False), "not_positive", "checkpoint_alignment", None),
    (([8], [5], 0, 8, 1, False), "not_positive", "hash_block_size", None),
    (([8, 9], [5], 4, 8, 1, False), "length_mismatch", "query_lens", 1),
    (([-1], [0], 4, 8, 1, False), "negative_value", "seq_lens", 0),
])
def test_names_the_broken_rule(arguments, code, field, index):
    with pytest.raises(chunkmeta.InvalidWorkload) as refused:
        chunkmeta.compute_mamba_prefill_checkpoints(*arguments)
    assert (refused.value.code, refused.value.field, refused.value.index) == (code, field, index)


@pytest.mark.parametrize("not_a_bool", [1, 0, None, "yes", np.bool_(True)])
def test_drop_eagle_block_must_be_a_bool_wherever_the_arguments_are_read(not_a_bool):
    """The drop-in and the harness's reading of fn's arguments refuse the same values, from one helper."""
    with pytest.raises(TypeError, match="drop_eagle_block must be True or False"):
        chunkmeta.compute_mamba_prefill_checkpoints(S, N, 4, 8, 1, not_a_bool)
    with pytest.raises(TypeError, match="drop_eagle_block must be True or False"):
        chunkmeta._chunkmeta._edge_classes("mamba.prefill_checkpoints", [S, N, 4, 8, 1, not_a_bool])


def test_answers_as_the_planner_ported_from_vllm_on_random_plans():
    rng = random.Random(20261206)
    checkpoints = 0
    for _ in range(3000):
        H = 2 ** rng.randrange(0, 9)
        M = max(1, H * 2 ** rng.randrange(0, 4) // 2 ** rng.randrange(0, 4))
        alignment = rng.choice([None, 1, 16, 3, H])
        rows = rng.randrange(0, 9)
        n = [rng.randrange(0, 12 * max(H, M)) if rng.random() > 0.15 else 0 for _ in range(rows)]
        s = [q + (rng.randrange(0, 40) * H if rng.random() > 0.3 else rng.randrange(0, 4 * M)) for q in n]
        eagle = rng.random() < 0.5
        ours = chunkmeta.compute_mamba_prefill_checkpoints(s, n, H, M, alignment, eagle)
        theirs = vllm_planner(s, n, H, M, alignment, eagle)
        assert as_lists(ours) == theirs, (s, n, H, M, alignment, eagle)
        checkpoints += sum(1 for o in theirs[0] if o > 0)
    assert checkpoints > 1000


SPEC = "mamba.prefill_checkpoints"


@pytest.mark.parametrize("fn", [chunkmeta.compute_mamba_prefill_checkpoints, vllm_planner], ids=["drop-in", "vllm-port"])
def test_check_verifies_the_drop_in_and_the_planner_ported_from_vllm(fn):
    summary = chunkmeta.check(fn, spec=SPEC, cases=300, seed=1)
    assert summary.passed


def test_check_calls_fn_with_the_builders_arguments():
    calls = []

    def recording(seq_lens, query_lens, hash_block_size, mamba_block_size, checkpoint_alignment, drop_eagle_block):
        calls.append((type(seq_lens), type(query_lens), type(hash_block_size), type(checkpoint_alignment),
                      type(drop_eagle_block)))
        return vllm_planner(seq_lens, query_lens, hash_block_size, mamba_block_size, checkpoint_alignment,
                            drop_eagle_block)

    chunkmeta.check(recording, spec=SPEC, cases=50, min_cases=50, seed=2)
    kinds = set(calls)
    assert {k[:3] for k in kinds} == {(list, list, int)} and {k[4] for k in kinds} == {bool}
    assert {k[3] for k in kinds} == {int, type(None)}


def test_check_shows_a_planner_that_ignores_the_eagle_block_with_a_minimal_counterexample(tmp_path):
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        chunkmeta.check(mutants.plan_eagle_block_ignored, spec=SPEC, seed=3, corpus=[], fail_fast=True,
                        report_dir=tmp_path)
    message = str(failed.value)
    assert "spec='mamba.prefill_checkpoints'" in message and "minimal (1 row)" in message


@pytest.mark.parametrize("name", mutants.slips_of(SPEC))
def test_every_slip_of_the_planner_is_caught(name, tmp_path):
    with pytest.raises(chunkmeta.CheckFailed):
        chunkmeta.check(getattr(mutants, name), spec=SPEC, seed=6, fail_fast=True, corpus=[], report_dir=tmp_path)


@settings(max_examples=300, database=None, deadline=None, suppress_health_check=[HealthCheck.data_too_large])
@given(strategies.prefill_checkpoints_workloads())
def test_the_strategy_draws_what_the_builder_passes_and_the_drop_in_plans_it_as_the_port(workload):
    assert isinstance(workload.seq_lens, list) and isinstance(workload.drop_eagle_block, bool)
    assert len(workload.seq_lens) == len(workload.query_lens) <= 64
    assert as_lists(chunkmeta.compute_mamba_prefill_checkpoints(*workload)) == vllm_planner(*workload)
