"""FLA's drop-ins (prepare_chunk_indices, prepare_chunk_offsets) and check(spec="fla.*")."""

import numpy as np
import pytest
import torch

import chunkmeta
import fla_index
import fla_reference_procedure
import mutants

CU = [0, 0, 5, 5, 9]  # the FLA contract's example, C = 4
INDICES = [[1, 0], [1, 1], [3, 0]]
OFFSETS = [0, 0, 2, 2, 3]


def as_list(value):
    return value if isinstance(value, list) else value.tolist()


@pytest.mark.parametrize("make, kind", [
    (lambda v: torch.tensor(v, dtype=torch.int32), torch.Tensor),
    (lambda v: torch.tensor(v, dtype=torch.int64), torch.Tensor),
    (lambda v: np.array(v, dtype=np.int32), np.ndarray),
    (lambda v: np.array(v, dtype=np.int64), np.ndarray),
    (list, list),
    (tuple, list),
], ids=["torch-int32", "torch-int64", "numpy-int32", "numpy-int64", "list", "tuple"])
def test_gives_the_spec_example_in_the_inputs_kind(make, kind):
    indices = chunkmeta.prepare_chunk_indices(make(CU), 4)
    offsets = chunkmeta.prepare_chunk_offsets(make(CU), 4)
    assert type(indices) is kind and type(offsets) is kind
    assert as_list(indices) == INDICES
    assert as_list(offsets) == OFFSETS


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_indices_take_cu_seqlens_dtype_and_offsets_are_int64_like_flas(dtype):
    cu = torch.tensor(CU, dtype=dtype)
    indices = chunkmeta.prepare_chunk_indices(cu, 4)
    offsets = chunkmeta.prepare_chunk_offsets(cu, 4)
    assert indices.dtype == dtype and indices.shape == (3, 2)
    assert offsets.dtype == torch.int64
    # FLA's own formulation, for the same input, gives the same tensors.
    assert torch.equal(indices, fla_index.prepare_chunk_indices(cu, 4))
    assert torch.equal(offsets, fla_index.prepare_chunk_offsets(cu, 4))


def test_the_older_formulation_gives_the_wrong_sequence_after_an_empty_one():
    older = fla_index.prepare_chunk_indices_older(torch.tensor([0, 0, 5], dtype=torch.int32), 4)
    assert older.tolist() == [[0, 0], [0, 1]]
    assert chunkmeta.prepare_chunk_indices([0, 0, 5], 4) == [[1, 0], [1, 1]]


def test_takes_flas_host_copy_and_answers_on_cu_seqlens_device():
    cu_cpu = torch.tensor(CU, dtype=torch.int32)
    on_device = cu_cpu.to("meta")  # a device tensor without a GPU: its values are not readable
    indices = chunkmeta.prepare_chunk_indices(on_device, 4, cu_cpu)
    assert indices.device.type == "meta" and indices.dtype == torch.int32 and indices.shape == (3, 2)
    assert chunkmeta.prepare_chunk_offsets(on_device, 4, cu_seqlens_cpu=cu_cpu).device.type == "meta"
    with pytest.raises(TypeError, match="cu_seqlens"):
        chunkmeta.prepare_chunk_indices(on_device, 4)


def test_writes_into_the_callers_buffers_and_names_a_short_one():
    cu = np.array(CU, dtype=np.int32)
    rows, entries = chunkmeta.fla_max_output_sizes(9, 4, 4)
    indices = np.full((rows, 2), -1, dtype=np.int32)
    offsets = torch.full((entries,), -1, dtype=torch.int64)
    assert chunkmeta.prepare_chunk_indices(cu, 4, out=indices) == 3
    assert chunkmeta.prepare_chunk_offsets(cu, 4, out=offsets) == 5
    assert indices[:3].tolist() == INDICES and (indices[3:] == -1).all()
    assert offsets[:5].tolist() == OFFSETS and (offsets[5:] == -1).all()
    with pytest.raises(chunkmeta.InvalidWorkload) as short:
        chunkmeta.prepare_chunk_indices(cu, 4, out=np.zeros((2, 2), dtype=np.int32))
    assert (short.value.code, short.value.field) == ("output_buffer_too_small", "chunk_indices")
    with pytest.raises(TypeError, match="int32"):
        chunkmeta.prepare_chunk_indices(cu, 4, out=np.zeros((5, 2), dtype=np.int64))  # not cu_seqlens' dtype


def test_the_maximum_sizes_hold_every_step_within_the_limits():
    rows, entries = chunkmeta.fla_max_output_sizes(8192, 64, 64)
    rng = np.random.default_rng(1)
    for _ in range(200):
        lengths = rng.multinomial(8192, np.ones(64) / 64) * (rng.random(64) < 0.7)
        cu = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
        assert chunkmeta.prepare_chunk_indices(cu, 64).shape[0] <= rows
        assert chunkmeta.prepare_chunk_offsets(cu, 64).shape[0] <= entries


def test_invalid_input_is_named_by_field_index_and_rule():
    cases = [
        ([0, 5, 3], 4, "cu_seqlens_decreasing", "cu_seqlens", 2),
        ([], 4, "length_mismatch", "cu_seqlens", 0),  # the first entry missing, as Mamba names it
        ([0, -1], 4, "negative_value", "cu_seqlens", 1),
        ([0, 5], 0, "chunk_size_not_positive", "chunk_size", None),
        ([0, 2**31], 4, "value_too_large", "cu_seqlens", 1),
    ]
    for cu, chunk, code, field, index in cases:
        with pytest.raises(chunkmeta.InvalidWorkload) as raised:
            chunkmeta.prepare_chunk_indices(cu, chunk)
        assert (raised.value.code, raised.value.field, raised.value.index) == (code, field, index), cu
    with pytest.raises(TypeError, match="cu_seqlens"):
        chunkmeta.prepare_chunk_offsets({0: 1}, 4)
    with pytest.raises(TypeError, match="cu_seqlens"):
        chunkmeta.prepare_chunk_offsets(torch.tensor(CU, dtype=torch.float32), 4)


def test_check_passes_correct_pure_python_functions():
    for spec, fn in [("fla.chunk_indices", fla_reference_procedure.reference_chunk_indices),
                     ("fla.chunk_offsets", fla_reference_procedure.reference_chunk_offsets)]:
        summary = chunkmeta.check(fn, spec=spec, cases=200, seed=1, arrays="lists")
        assert summary.passed and summary.spec == spec
        assert [p.name for p in summary.properties if not p.skipped] == [
            p for p in chunkmeta.properties(spec) if p != "RejectsInvalidWorkloadsLikeTheReference"]


def test_check_passes_the_drop_ins_invalid_input_included():
    for spec, fn in [("fla.chunk_indices", chunkmeta.prepare_chunk_indices),
                     ("fla.chunk_offsets", chunkmeta.prepare_chunk_offsets)]:
        summary = chunkmeta.check(fn, spec=spec, cases=200, seed=2, valid_only=False)
        assert not any(p.skipped for p in summary.properties)


def test_check_catches_the_older_formulation_with_one_empty_sequence_before_a_real_one(tmp_path):
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        chunkmeta.check(fla_index.prepare_chunk_indices_older, spec="fla.chunk_indices", corpus=[], seed=3,
                        fail_fast=True, report_dir=tmp_path)
    cx = next(p.counterexample for p in failed.value.summary.properties if p.counterexample)
    assert '"cu_seqlens":[0,0,1]' in cx["workload"], cx["workload"]
    assert "chunk_indices[0][0]: expected 1, actual 0" in str(failed.value)
    assert "spec='fla.chunk_indices'" in str(failed.value)  # the replay line names the spec


def test_check_catches_the_current_formulations_int32_round_up_near_two_to_the_31():
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        chunkmeta.check(fla_index.prepare_chunk_indices, spec="fla.chunk_indices", corpus=[], seed=4, fail_fast=True)
    cx = next(p.counterexample for p in failed.value.summary.properties if p.counterexample)
    assert '"dtype"' not in cx["workload"]  # int32 cu_seqlens: the int64 ones do not wrap
    assert cx["status"] == "minimal"


def returns_int64_indices_for_int32_input(cu_seqlens, chunk_size):
    return chunkmeta.prepare_chunk_indices(cu_seqlens, chunk_size).to(torch.int64)


def test_a_result_of_another_dtype_than_flas_is_a_finding():
    with pytest.raises(chunkmeta.CheckFailed, match="malformed_output: returned chunk_indices of dtype int64"):
        chunkmeta.check(returns_int64_indices_for_int32_input, spec="fla.chunk_indices", corpus=[], seed=5,
                        fail_fast=True)


@pytest.mark.parametrize("name", mutants.slips_of("fla.chunk_indices", "fla.chunk_offsets"))
def test_every_fla_mutant_is_caught_by_the_shipped_corpus_or_the_properties(name):
    with pytest.raises(chunkmeta.CheckFailed):
        chunkmeta.check(getattr(mutants, name), spec=mutants.spec_of(name), seed=6, arrays="lists", fail_fast=True)


def test_unknown_spec_is_a_value_error():
    with pytest.raises(ValueError, match="fla.chunk_indices"):
        chunkmeta.check(fla_reference_procedure.reference_chunk_indices, spec="fla.indices")


def test_a_stated_domain_leaves_out_the_empty_batch_the_engine_never_sends_and_finds_the_real_bug(tmp_path):
    # vLLM's copy raises on an empty batch (which vLLM never sends): stated, the
    # run tries no empty batch and reports its real bugs (chunk counts wrapping
    # in int32, the sequence ids after an empty sequence).
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        chunkmeta.check(fla_index.prepare_chunk_indices_vllm, spec="fla.chunk_indices", exclude=["empty batch"],
                        corpus=[], seed=7, database=None, report_dir=tmp_path)
    report = str(failed.value)
    assert "expected a non-empty list" not in report and '"cu_seqlens":[0]}' not in report
    assert '"cu_seqlens":[0,0,1]' in report
    assert "Not tried, outside the stated domain" in failed.value.summary.text


def test_no_workload_of_an_excluded_class_reaches_the_function_and_the_summary_counts_them(tmp_path):
    def refuses_empty_batches(cu_seqlens, chunk_size):
        assert cu_seqlens.numel() > 1, "an empty batch was sent"
        return chunkmeta.prepare_chunk_indices(cu_seqlens, chunk_size)

    summary = chunkmeta.check(refuses_empty_batches, spec="fla.chunk_indices", exclude="empty batch", cases=300,
                              seed=8, database=None, report_dir=tmp_path)
    assert summary.passed
    counted = [line for line in summary.text.splitlines() if line.strip().endswith("empty batch")]
    assert counted and int(counted[-1].split()[0]) > 0


def test_keep_going_reports_each_distinct_bug_where_the_first_would_mask_the_rest(tmp_path):
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        chunkmeta.check(fla_index.prepare_chunk_indices_vllm, spec="fla.chunk_indices", keep_going=True,
                        corpus=[], seed=7, database=None, report_dir=tmp_path)
    kinds = {p.counterexample["finding"] for p in failed.value.summary.properties if p.counterexample is not None}
    assert {"raised", "mismatch"} <= kinds, kinds


def test_an_edge_class_the_spec_does_not_have_is_a_value_error_naming_the_classes():
    with pytest.raises(ValueError, match="empty batch"):
        chunkmeta.check(fla_index.prepare_chunk_indices_vllm, spec="fla.chunk_indices", exclude=["empty batches"])
    assert "empty batch" in chunkmeta.edge_classes("fla.chunk_indices")
