"""chunkmeta.strategies: Hypothesis strategies of valid workloads with the generators' edge classes."""

import subprocess
import sys
from collections import Counter

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given  # noqa: E402
from hypothesis import settings as hsettings  # noqa: E402

import chunkmeta  # noqa: E402
import torch  # noqa: E402
from chunkmeta import _chunkmeta, strategies  # noqa: E402

quiet = hsettings(max_examples=300, database=None, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def test_import_chunkmeta_imports_neither_hypothesis_nor_torch_nor_numpy():
    code = "import sys, chunkmeta; print(sorted(m for m in ('hypothesis', 'torch', 'numpy') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


@quiet
@given(strategies.mamba_workloads(arrays="torch"))
def test_mamba_workloads_are_what_the_engine_passes_and_the_drop_in_computes(workload):
    cu, seq, last = chunkmeta.compute_chunk_metadata(*workload)
    assert workload.num_computed_tokens_p_cpu.dtype == torch.int32
    assert len(last) == workload.num_prefills
    assert int(cu[-1]) == int(workload.query_start_loc_p_cpu[-1] - workload.query_start_loc_p_cpu[0])


@quiet
@given(strategies.fla_workloads(arrays="numpy"))
def test_fla_workloads_are_valid_and_both_outputs_agree(workload):
    indices = chunkmeta.prepare_chunk_indices(*workload)
    offsets = chunkmeta.prepare_chunk_offsets(*workload)
    assert indices.dtype == workload.cu_seqlens.dtype
    assert indices.shape[0] == offsets[-1]


def classes_hit(spec, strategy, draws):
    seen = Counter()

    @hsettings(max_examples=draws, database=None, deadline=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(strategy)
    def record(workload):
        seen.update(_chunkmeta._edge_classes(spec, tuple(workload)))

    record()
    return seen


@pytest.mark.parametrize("spec", strategies.specs())
def test_every_edge_class_of_the_generators_is_drawn(spec):
    strategy = strategies.workloads(spec, arrays="numpy", max_rows=300)
    seen = classes_hit(spec, strategy, 1500)
    missing = [c for c in _chunkmeta._all_edge_classes(spec) if seen[c] == 0]
    assert not missing, f"never drawn in 1500 examples: {missing}"


def test_names_the_specs_it_draws_when_asked_for_another():
    with pytest.raises(ValueError, match="the specs with strategies: "):
        strategies.workloads("no.such_spec")


def test_every_registered_spec_has_a_strategy_of_its_workloads():
    assert sorted(strategies.specs()) == sorted(chunkmeta.SPECS)


def rows_of(spec, workload):
    """A workload's rows, from its spec's arguments: the per-row array's length, else the offsets' less one."""
    inputs = chunkmeta._DESCRIPTIONS[spec]["inputs"]
    by_slot = {argument["slot"]: value for argument, value in zip(inputs, workload)}
    return len(by_slot["per_row"]) if "per_row" in by_slot else len(by_slot["offsets"]) - 1


def minimal(strategy, condition):
    return hypothesis.find(strategy, condition, settings=hsettings(max_examples=2000, database=None, deadline=None))


@pytest.mark.parametrize("spec", strategies.specs())
def test_an_example_that_fails_on_its_batch_size_shrinks_to_that_many_rows(spec):
    assert rows_of(spec, minimal(strategies.workloads(spec), lambda w: rows_of(spec, w) >= 3)) == 3


def test_an_example_that_fails_on_one_long_row_shrinks_to_that_row():
    def has_a_long_row(w):
        q = w.query_start_loc_p_cpu
        return any(q[i + 1] - q[i] >= 1000 for i in range(w.num_prefills))

    assert minimal(strategies.mamba_workloads(), has_a_long_row).num_prefills == 1


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_fla_workloads_are_of_the_dtype_asked_for(dtype):
    @quiet
    @given(strategies.fla_workloads(arrays="numpy", dtype=dtype))
    def drawn(workload):
        assert str(workload.cu_seqlens.dtype) == dtype

    drawn()


def test_a_chunk_size_strategy_draws_what_the_generators_draw_for_valid_workloads():
    @quiet
    @given(strategies.chunk_sizes(), strategies.fla_chunk_sizes(), strategies.packed_grid_chunk_sizes())
    def drawn(mamba, fla, packed):
        assert all(isinstance(size, int) and 1 <= size <= 2**31 - 1 for size in (mamba, fla, packed))

    drawn()
