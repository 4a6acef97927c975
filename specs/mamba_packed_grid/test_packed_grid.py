"""The packed-grid drop-ins, compute_varlen_chunk_metadata and
cu_seqlens_to_chunk_indices_offsets: the contract's worked examples in every
kind of input, out=, the rules named, the findings on rows without tokens, and
the same answers as the engines' functions on the batches they handle."""

import random

import numpy as np
import pytest
import torch

import chunkmeta
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
