"""The prefill checkpoint planner's drop-in, compute_mamba_prefill_checkpoints:
the contract's worked examples in every kind of input, out=, the rules named,
and the same answers as the planner ported from vLLM on random plans."""

import random

import numpy as np
import pytest
import torch

import chunkmeta
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


def test_drop_eagle_block_must_be_a_bool():
    with pytest.raises(TypeError, match="drop_eagle_block"):
        chunkmeta.compute_mamba_prefill_checkpoints(S, N, 4, 8, 1, 1)


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
