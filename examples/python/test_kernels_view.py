"""The field's other formulations of Mamba-2's and FLA's chunks, judged by what
the kernel computes from them (chunkmeta.check(fn, spec="kernel.*"), no
reference): which are kernel-adequate, and which can also be written into the
prefix cache (cache=True)."""

import json

import pytest
import torch

import chunkmeta
from other_formulations import megatron_chunks, packed_grid_chunks, sglang_chunks
from reference_procedure import compute_chunk_metadata as vllm_builder

QUICK = dict(cases=300, seed=20261207)


@pytest.mark.parametrize("fn", [chunkmeta.compute_chunk_metadata, vllm_builder, megatron_chunks, packed_grid_chunks],
                         ids=["chunkmeta", "vllm-builder", "megatron", "packed-grid"])
def test_every_formulation_of_mamba2_chunks_a_kernel_runs_right_is_kernel_adequate(fn):
    summary = chunkmeta.check(fn, spec="kernel.mamba2_chunks", **QUICK)
    assert summary.passed
    assert "judged by the kernels' view alone, with no reference" in str(summary)


def test_the_builder_is_cache_adequate_too():
    assert chunkmeta.check(vllm_builder, spec="kernel.mamba2_chunks", cache=True, **QUICK).passed


def failure_report(fn, tmp_path, **settings):
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        chunkmeta.check(fn, corpus=[], fail_fast=True, report_dir=tmp_path, **settings)
    reports = sorted(tmp_path.glob("*.report.json"))
    assert reports, str(failed.value)
    return str(failed.value), json.loads(reports[0].read_text())


@pytest.mark.parametrize("fn", [packed_grid_chunks, megatron_chunks], ids=["packed-grid", "megatron"])
def test_a_formulation_that_ignores_computed_tokens_is_not_cache_adequate(fn, tmp_path):
    message, report = failure_report(fn, tmp_path, spec="kernel.mamba2_chunks", cache=True, seed=20261207)
    assert report["finding"] == "wrong_state"
    assert report["status"] == "minimal"
    assert len(report["workload"]["num_computed_tokens"]) <= 2
    assert report["kernels_view"]["rule"] == "cache-adequate"
    assert "no chunk of row" in report["kernels_view"]["detail"]
    assert "kernels' view: cache-adequate: no chunk of row" in message
    assert "expected:" not in message  # no reference: nothing to be equal to


def test_a_chunk_run_as_the_wrong_row_is_reported_with_the_state_it_ran_from(tmp_path):
    def row_ids_counted_from_one(chunk_size, num_prefills, num_computed_tokens, query_start_loc):
        cu, seq_idx, last = vllm_builder(chunk_size, num_prefills, num_computed_tokens, query_start_loc)
        return cu, [max(row - 1, 0) for row in seq_idx], last

    message, report = failure_report(row_ids_counted_from_one, tmp_path, spec="kernel.mamba2_chunks", seed=3)
    assert report["finding"] == "wrong_state"
    assert report["status"] == "minimal"
    assert report["kernels_view"]["rule"] == "kernel-adequate"
    assert report["kernels_view"]["detail"].endswith("its state is BAD")
    assert "kernels' view: kernel-adequate: chunk " in message


def test_sglangs_chunk_indices_raise_on_a_row_without_tokens(tmp_path):
    message, report = failure_report(sglang_chunks, tmp_path, spec="kernel.mamba2_chunks", seed=20261207)
    assert report["finding"] in {"raised", "wrong_state"}
    assert 0 in [b - a for a, b in zip(report["workload"]["query_start_loc"], report["workload"]["query_start_loc"][1:])]


def test_sglangs_chunk_indices_are_kernel_adequate_where_every_row_has_tokens():
    # Every huge batch has rows without tokens: the valid workloads' property alone.
    no_empty_rows = ["zero-token row, aligned (no chunk)", "zero-token row, unaligned (empty chunk)"]
    assert chunkmeta.check(sglang_chunks, spec="kernel.mamba2_chunks", exclude=no_empty_rows,
                           properties=["IsKernelAdequateOnEveryValidWorkload"], **QUICK).passed


def test_flas_pairs_are_judged_by_the_kernels_view(tmp_path):
    assert chunkmeta.check(chunkmeta.prepare_chunk_indices, spec="kernel.fla_chunks", **QUICK).passed

    def older(cu_seqlens, chunk_size):  # the sequence id counted from chunk starts (SPEC Part 2)
        lens = (cu_seqlens[1:] - cu_seqlens[:-1]).tolist()
        indices = [j for n in lens for j in range(-(-n // chunk_size))]
        ids = torch.tensor([j == 0 for j in indices], dtype=torch.int64).cumsum(0) - 1
        return torch.stack([ids, torch.tensor(indices, dtype=torch.int64)], 1).to(cu_seqlens.dtype)

    message, report = failure_report(older, tmp_path, spec="kernel.fla_chunks", seed=5)
    assert report["finding"] == "wrong_state"
    assert "sequence" in report["kernels_view"]["detail"]


def test_cache_is_refused_where_the_formulation_makes_no_cache_claim():
    with pytest.raises(ValueError, match="'kernel.fla_chunks' makes no cache claim"):
        chunkmeta.check(chunkmeta.prepare_chunk_indices, spec="kernel.fla_chunks", cache=True)
    with pytest.raises(ValueError, match="'mamba' is judged by its reference"):
        chunkmeta.check(chunkmeta.compute_chunk_metadata, spec="mamba", cache=True)
    with pytest.raises(TypeError, match="cache must be True or False"):
        chunkmeta.check(chunkmeta.compute_chunk_metadata, spec="kernel.mamba2_chunks", cache="no")
