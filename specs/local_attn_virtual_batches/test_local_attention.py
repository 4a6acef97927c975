"""Chunked local attention's drop-ins (local_attention_virtual_batches,
local_attention_block_table) and check(spec="local_attn.virtual_batches")."""

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings

import chunkmeta
import mutants
from chunkmeta import strategies
from vllm_local_attention import make_local_attention_virtual_batches, vllm_virtual_batches

SPEC = "local_attn.virtual_batches"
# The contract's worked example: A = 8, P = 4.
STARTS, SEQ_LENS = [0, 5, 17, 18], [5, 15, 17]
BATCHES = ([0, 5, 10, 17, 18], [5, 8, 7, 1], [0, 3, 0, 0], [0, 1, 1, 2], [0, 0, 2, 4])
# vLLM's comment's example: A = 4, P = 2, a block table of rows 0-9, 10-19, 20-29.
COMMENT_STARTS, COMMENT_SEQ_LENS = [0, 4, 14, 19], [6, 17, 9]
COMMENT_TABLE = torch.arange(30, dtype=torch.int32).view(3, 10)


def as_lists(outputs):
    return tuple(v if isinstance(v, list) else v.tolist() for v in outputs)


@pytest.mark.parametrize("make", [list, lambda v: np.array(v, dtype=np.int32), lambda v: torch.tensor(v, dtype=torch.int32)])
def test_gives_the_contracts_worked_example_in_the_inputs_kind(make):
    outputs = chunkmeta.local_attention_virtual_batches(8, 4, make(STARTS), make(SEQ_LENS))
    assert as_lists(outputs) == BATCHES
    assert all(isinstance(v, type(make(STARTS))) for v in outputs)


def test_vllms_comment_is_wrong_only_in_the_comment():
    q, s = torch.tensor(COMMENT_STARTS, dtype=torch.int32), torch.tensor(COMMENT_SEQ_LENS, dtype=torch.int32)
    theirs = make_local_attention_virtual_batches(4, q, s, COMMENT_TABLE, 2)
    ours = chunkmeta.local_attention_virtual_batches(4, 2, q, s)
    assert ours[0].tolist() == theirs["query_start_loc_cpu"].tolist() == [0, 2, 4, 5, 9, 13, 14, 18, 19]
    assert ours[0].tolist() != [0, 4, 6, 10, 14, 18, 19, 23, 24]  # the comment's: the running sum of the key lengths
    assert ours[1].tolist() == [4, 2, 4, 4, 4, 1, 4, 1]
    local_table = chunkmeta.local_attention_block_table(COMMENT_TABLE, ours[3], ours[4], 4, 2)
    assert torch.equal(local_table, theirs["block_table_tensor"])
    assert local_table.tolist() == [[0, 1], [2, 3], [12, 13], [14, 15], [16, 17], [18, 19], [22, 23], [24, 25]]


def test_gathers_the_local_block_table_in_the_same_call_when_given_the_engines():
    q, s = torch.tensor(COMMENT_STARTS, dtype=torch.int32), torch.tensor(COMMENT_SEQ_LENS, dtype=torch.int32)
    *batches, local_table = chunkmeta.local_attention_virtual_batches(4, 2, q, s, block_table=COMMENT_TABLE)
    assert as_lists(batches) == as_lists(chunkmeta.local_attention_virtual_batches(4, 2, q, s))
    assert torch.equal(local_table, chunkmeta.local_attention_block_table(COMMENT_TABLE, batches[3], batches[4], 4, 2))
    sizes = chunkmeta.local_attention_virtual_batches_max_output_sizes(19, 3, 4, 2)
    buffers = tuple(torch.empty(size, dtype=torch.int32) for size in sizes) + (torch.empty((sizes[1], 2), dtype=torch.int32),)
    assert chunkmeta.local_attention_virtual_batches(4, 2, q, s, block_table=COMMENT_TABLE, out=buffers) == (9, 8, 8, 8, 8, 8)
    assert torch.equal(buffers[5][:8], local_table)


def test_writes_into_buffers_sized_once():
    sizes = chunkmeta.local_attention_virtual_batches_max_output_sizes(18, 3, 8, 4)
    buffers = tuple(torch.full((size,), -5, dtype=torch.int32) for size in sizes)
    assert chunkmeta.local_attention_virtual_batches(8, 4, STARTS, SEQ_LENS, out=buffers) == (5, 4, 4, 4, 4)
    assert buffers[0][:5].tolist() == BATCHES[0]
    table = torch.empty((4, 2), dtype=torch.int32)
    assert chunkmeta.local_attention_block_table(COMMENT_TABLE, [0, 1, 1, 2], [0, 0, 2, 4], 4, 2, out=table) == 4
    assert table.tolist() == [[0, 1], [10, 11], [12, 13], [24, 25]]


@pytest.mark.parametrize("make", [list, lambda v: np.array(v, dtype=np.int32), lambda v: torch.tensor(v, dtype=torch.int32)])
def test_gives_a_local_table_of_one_column_when_the_chunk_is_one_page(make):
    local = chunkmeta.local_attention_block_table(make([[0, 1, 2], [3, 4, 5]]), [1, 0], [1, 2], 2, 2)
    assert (local if isinstance(local, list) else local.tolist()) == [[4], [2]]
    if make is not list:
        into = make([[-1], [-1]])
        assert chunkmeta.local_attention_block_table(make([[0, 1, 2], [3, 4, 5]]), [1, 0], [1, 2], 2, 2, out=into) == 2
        assert into.tolist() == [[4], [2]]


@pytest.mark.parametrize("table, says", [([1, 2], "its row 0 is int"), ([[1, 2], [3]], r"rows of one length \(2\), not 1"),
                                         (np.zeros(4, dtype=np.int32), "must be a 2-D int32 array"),
                                         (torch.zeros(4, dtype=torch.int32), "must be 2-D")])
def test_refuses_a_block_table_that_is_not_a_table(table, says):
    with pytest.raises(TypeError, match=says):
        chunkmeta.local_attention_block_table(table, [0], [0], 4, 2)


def test_names_the_broken_rule():
    with pytest.raises(chunkmeta.InvalidWorkload) as empty_row:
        chunkmeta.local_attention_virtual_batches(8, 4, [0, 3, 3], [5, 5])
    assert (empty_row.value.code, empty_row.value.field, empty_row.value.index) == ("not_increasing", "query_start_loc", 2)
    with pytest.raises(chunkmeta.InvalidWorkload) as short:
        chunkmeta.local_attention_virtual_batches(8, 4, [0, 3], [2])
    assert (short.value.code, short.value.field, short.value.index) == ("below_minimum", "seq_lens", 0)
    with pytest.raises(chunkmeta.InvalidWorkload) as multiple:
        chunkmeta.local_attention_virtual_batches(8, 3, [0, 3], [5])
    assert (multiple.value.code, multiple.value.field) == ("not_a_multiple", "attn_chunk_size")


def test_the_drop_in_and_vllms_function_pass_check():
    for fn in (chunkmeta.local_attention_virtual_batches, vllm_virtual_batches):
        summary = chunkmeta.check(fn, spec=SPEC, cases=200, min_cases=200, seed=17)
        assert summary.passed and summary.cases >= 200


def test_check_finds_the_comments_running_sum_with_a_one_row_counterexample(tmp_path):
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        chunkmeta.check(mutants.local_attn_comment_running_sum, spec=SPEC, seed=3, corpus=[], fail_fast=True,
                        report_dir=tmp_path)
    report = str(failed.value)
    assert "spec='local_attn.virtual_batches'" in report and "minimal (1 row)" in report


@pytest.mark.parametrize("name", mutants.slips_of(SPEC))
def test_every_slip_of_the_field_is_caught(name, tmp_path):
    with pytest.raises(chunkmeta.CheckFailed):
        chunkmeta.check(getattr(mutants, name), spec=SPEC, seed=6, fail_fast=True, corpus=[], report_dir=tmp_path)


@settings(max_examples=200, database=None, deadline=None, suppress_health_check=[HealthCheck.data_too_large])
@given(strategies.local_attention_workloads(arrays="torch", max_rows=40))
def test_local_attention_workloads_are_what_the_engine_passes_and_vllms_function_agrees(workload):
    ours = chunkmeta.local_attention_virtual_batches(*workload)
    assert workload.query_start_loc.dtype == workload.seq_lens.dtype == torch.int32
    assert len(ours[0]) == len(ours[1]) + 1 >= len(workload.seq_lens) + 1
    theirs = vllm_virtual_batches(*workload)
    assert [o.tolist() for o in ours] == [np.asarray(v).tolist() for v in theirs]
