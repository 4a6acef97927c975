"""check()'s example database: the key it gives a function, what a run removes, and what fn may be."""

import array
import asyncio
import functools
import os
import subprocess
import sys
import textwrap
import types
import warnings

import numpy
import pytest
import torch

import chunkmeta
import reference_procedure
from chunkmeta import settings


def _key(fn, spec="mamba"):
    return chunkmeta._Database("examples", spec, fn).folder.name


# The buffers an engine reuses between steps (vLLM's CpuGpuBuffer: a tensor, its numpy view), and Python's own.
BUFFERS = {
    "torch tensor": lambda: torch.zeros(16, dtype=torch.int32),
    "numpy array": lambda: numpy.zeros(16, dtype=numpy.int32),
    "array.array": lambda: array.array("i", [0] * 16),
    "bytearray": lambda: bytearray(16),
    "memoryview": lambda: memoryview(bytearray(16)),
    "buffer holder": lambda: _CpuGpuBuffer(16),
}


class _CpuGpuBuffer:
    """vLLM's pattern: one allocation seen as a tensor and as a numpy array."""

    def __init__(self, size):
        self.cpu = torch.zeros(size, dtype=torch.int32)
        self.np = self.cpu.numpy()
        self.size = size


def _scribble(buffer, value):
    """What a step does to a reused buffer: new contents, same object."""
    target = buffer.cpu if isinstance(buffer, _CpuGpuBuffer) else buffer
    for i in range(len(target)):
        target[i] = (value + i) % 100


def _engine_over(buffer, chunk_size):
    """The engine's function as a closure over its buffer and its chunk size (a factory, as a builder makes it)."""

    def compute(given_chunk_size, num_prefills, computed, starts):
        _scribble(buffer, num_prefills)  # stages this step in the reused buffer
        return reference_procedure.compute_chunk_metadata(chunk_size or given_chunk_size, num_prefills, computed,
                                                          starts)

    return compute


@pytest.mark.parametrize("kind", sorted(BUFFERS))
def test_a_closure_over_a_reused_buffer_keeps_its_key_while_the_buffer_changes(kind):
    buffer = BUFFERS[kind]()
    fn = _engine_over(buffer, 64)
    keys = set()
    for step in range(3):
        keys.add(_key(fn))
        _scribble(buffer, 7 * step + 3)
    assert len(keys) == 1
    assert _key(_engine_over(BUFFERS[kind](), 64)) in keys  # a new buffer of the same kind: the same function


@pytest.mark.parametrize("kind", sorted(BUFFERS))
def test_closures_that_capture_different_chunk_sizes_have_different_keys(kind):
    chunk_sizes = [0, 1, 8, 64, 256, 2**20]
    keys = {_key(_engine_over(BUFFERS[kind](), chunk_size)) for chunk_size in chunk_sizes}
    assert len(keys) == len(chunk_sizes)


def test_a_buffer_of_another_dtype_or_kind_gives_another_key():
    keys = {_key(_engine_over(make(), 64)) for make in BUFFERS.values()}
    keys.add(_key(_engine_over(torch.zeros(16, dtype=torch.int64), 64)))
    assert len(keys) == len(BUFFERS) + 1


def test_lambdas_that_differ_only_in_code_have_different_keys():
    first = lambda *arguments: reference_procedure.compute_chunk_metadata(*arguments)  # noqa: E731
    second = lambda *arguments: chunkmeta.compute_chunk_metadata(*arguments)  # noqa: E731
    assert first.__qualname__ == second.__qualname__
    assert _key(first) != _key(second)
    assert _key(first) == _key(lambda *arguments: reference_procedure.compute_chunk_metadata(*arguments))


class _Builder:
    """A metadata builder whose bound method is checked: its chunk size and its reused buffer."""

    def __init__(self, chunk_size):
        self.chunk_size = chunk_size
        self.staging = torch.zeros(8, dtype=torch.int32)

    def compute(self, chunk_size, num_prefills, computed, starts):
        self.staging[0] = num_prefills
        return reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)


class _CallableBuilder(_Builder):
    def __call__(self, chunk_size, num_prefills, computed, starts):
        return self.compute(chunk_size, num_prefills, computed, starts)


# How a builder's function reaches check(): its bound method, the builder itself, a partial of either.
THROUGH_A_BUILDER = {
    "bound method": lambda builder: builder.compute,
    "callable object": lambda builder: builder,
    "partial of a bound method": lambda builder: functools.partial(builder.compute, 64),
    "partial of a callable object": lambda builder: functools.partial(builder, 64),
}


@pytest.mark.parametrize("way", sorted(THROUGH_A_BUILDER))
def test_a_builders_function_is_keyed_on_its_class_never_on_its_state(way):
    as_fn = THROUGH_A_BUILDER[way]
    builder = _CallableBuilder(64)
    before = _key(as_fn(builder))
    builder.staging.fill_(5)
    builder.compute(64, 1, [0], [0, 5])
    builder.steps = 3  # an attribute it gains as it is used
    # An object's attributes are state (a step count, a cache): the class and its code are what it is.
    assert _key(as_fn(builder)) == before == _key(as_fn(_CallableBuilder(64))) == _key(as_fn(_CallableBuilder(128)))


ENGINE_MODULE = '''
import os
import torch
import reference_procedure

STAGES = {"prefill", "decode", "mixed", "spec-decode"}  # a set of strings: its order changes with the hash seed


def make(chunk_size):
    staging = torch.empty(16, dtype=torch.int32)  # whatever was in memory
    staging[0] = os.getpid()  # certainly differs between processes
    options = {"stages": STAGES, "order": frozenset(STAGES)}

    def compute(given_chunk_size, num_prefills, computed, starts):
        staging[1] = num_prefills
        if options["stages"] and given_chunk_size in {1, 2, 3} and "decode" in {"decode", "prefill", "mixed"}:
            pass
        return reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)

    return compute
'''


def test_a_closure_over_a_torch_empty_buffer_has_the_same_key_in_every_process(tmp_path):
    (tmp_path / "engine_with_buffers.py").write_text(ENGINE_MODULE)
    program = textwrap.dedent("""
        import chunkmeta, engine_with_buffers
        print(chunkmeta._Database("examples", "mamba", engine_with_buffers.make(64)).folder.name)
        print(chunkmeta._Database("examples", "mamba", engine_with_buffers.make(128)).folder.name)
    """)
    paths = [str(tmp_path), os.path.dirname(reference_procedure.__file__),
             os.path.dirname(os.path.dirname(chunkmeta.__file__))]
    keys = []
    for hash_seed in ("1", "2", "3"):
        environment = dict(os.environ, PYTHONPATH=os.pathsep.join(paths), PYTHONHASHSEED=hash_seed)
        ran = subprocess.run([sys.executable, "-c", program], env=environment, capture_output=True, text=True,
                             check=False)
        assert ran.returncode == 0, ran.stderr
        keys.append(tuple(ran.stdout.split()))
    assert len(set(keys)) == 1
    assert len(set(keys[0])) == 2  # chunk sizes 64 and 128: two functions


def _wrong_on_two_rows_over(buffer):
    def compute(chunk_size, num_prefills, computed, starts):
        _scribble(buffer, num_prefills)
        cu, seq, last = reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)
        return ([v + 1 for v in cu] if num_prefills >= 2 else cu), seq, last

    return compute


@pytest.mark.parametrize("kind", ["torch tensor", "numpy array", "buffer holder"])
def test_three_checks_of_a_failing_closure_over_buffers_replay_its_entry_each_time_and_leave_one_folder(kind, tmp_path):
    database = tmp_path / "examples"
    fn = _wrong_on_two_rows_over(BUFFERS[kind]())
    replayed = []
    for seed in (1, 2, 3):
        with pytest.raises(chunkmeta.CheckFailed) as failed:
            chunkmeta.check(fn, database=database, corpus=[], seed=seed, fail_fast=True, report_dir=tmp_path / "reports")
        replayed.append(failed.value.summary.database_entries)
    assert replayed == [0, 1, 1]
    assert len([folder for folder in database.iterdir() if folder.is_dir()]) == 1
    assert len(list(database.glob("*/*.json"))) == 1


def accepts_invalid_input(chunk_size, num_prefills, computed, starts):
    return reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)


def wrong_at_chunk_size_one(chunk_size, num_prefills, computed, starts):
    cu, seq, last = reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)
    return ([v + 1 for v in cu] if chunk_size == 1 and num_prefills >= 1 else cu), seq, last


# Each way a run leaves a saved entry unjudged: the settings that saved it, the run that does not send it.
UNJUDGED = {
    "invalid input, then valid_only": (accepts_invalid_input,
                                       dict(valid_only=False, properties=["RejectsInvalidWorkloadsLikeTheReference"],
                                            arrays="lists"),
                                       dict(valid_only=True, properties=["MatchesReferenceOnEveryValidWorkload"])),
    "then outside the stated domain": (wrong_at_chunk_size_one, dict(),
                                       dict(exclude=["chunk size 1"], properties=["MatchesReferenceOnEveryValidWorkload"])),
}


@pytest.mark.parametrize("case", sorted(UNJUDGED))
def test_a_run_that_does_not_judge_a_saved_entry_keeps_it(case, tmp_path):
    fn, saving, skipping = UNJUDGED[case]
    mine = settings(database=tmp_path / "examples", corpus=[], seed=8, fail_fast=True, cases=30,
                    report_dir=tmp_path / "reports")
    with pytest.raises(chunkmeta.CheckFailed):
        chunkmeta.check(fn, settings=settings(mine, **saving))
    saved = sorted((tmp_path / "examples").glob("*/*.json"))
    assert len(saved) == 1
    summary = chunkmeta.check(fn, settings=settings(mine, **skipping))
    assert summary.passed and summary.database_entries == 1
    assert sorted((tmp_path / "examples").glob("*/*.json")) == saved
    # Judged again as it was saved, it fails again.
    with pytest.raises(chunkmeta.CheckFailed) as again:
        chunkmeta.check(fn, settings=settings(mine, phases=[chunkmeta.Phase.replay], **saving))
    assert again.value.summary.database_entries == 1


def test_an_entry_judged_and_passed_is_removed_with_its_folder(tmp_path):
    mine = settings(database=tmp_path / "examples", corpus=[], seed=8, fail_fast=True, cases=30,
                    report_dir=tmp_path / "reports")
    with pytest.raises(chunkmeta.CheckFailed):
        chunkmeta.check(wrong_at_chunk_size_one, settings=mine)
    assert len(list((tmp_path / "examples").glob("*/*.json"))) == 1
    # Fixed in place (the same module and name, other code): its entry is replayed, passes, and goes.
    fixed = _fixed_in_place(wrong_at_chunk_size_one, accepts_invalid_input)
    summary = chunkmeta.check(fixed, settings=settings(mine, properties=["MatchesReferenceOnEveryValidWorkload"]))
    assert summary.database_entries == 1
    assert not (tmp_path / "examples").exists()


class _AsyncCallable:
    async def __call__(self, chunk_size, num_prefills, computed, starts):
        return reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)


class _AsyncBuilder:
    async def compute(self, chunk_size, num_prefills, computed, starts):
        return reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)


async def compute_async(chunk_size, num_prefills, computed, starts):
    return reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)


async def compute_as_async_generator(chunk_size, num_prefills, computed, starts):
    yield reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)


ASYNCHRONOUS = {
    "async def": compute_async,
    "async generator function": compute_as_async_generator,
    "partial of an async def": functools.partial(compute_async, 64),
    "bound async method": _AsyncBuilder().compute,
    "object with an async __call__": _AsyncCallable(),
}


@pytest.mark.parametrize("door", ["check", "replay"])
@pytest.mark.parametrize("kind", sorted(ASYNCHRONOUS))
def test_an_asynchronous_function_is_a_type_error_before_anything_is_called(kind, door, tmp_path):
    fn = ASYNCHRONOUS[kind]
    calls = []
    original_call = chunkmeta._chunkmeta._check if door == "check" else chunkmeta._chunkmeta._replay
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a coroutine never awaited would warn
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(chunkmeta._chunkmeta, "_" + door, lambda *a, **k: calls.append(a) or original_call(*a, **k))
            with pytest.raises(TypeError) as refused:
                if door == "check":
                    chunkmeta.check(fn, corpus=[], cases=10, database=tmp_path / "examples")
                else:
                    chunkmeta.replay(fn, *chunkmeta.shipped_corpus())
    message = str(refused.value)
    assert f"chunkmeta.{door}()" in message
    assert chunkmeta._describe(fn)[1] in message
    assert "synchronous" in message and "asyncio.run" in message
    assert calls == []
    assert not (tmp_path / "examples").exists()


def test_a_synchronous_wrapper_that_runs_an_async_function_is_checked():
    def runs_it(*arguments):
        return asyncio.run(compute_async(*arguments))

    assert chunkmeta.check(functools.wraps(compute_async)(runs_it), corpus=[], cases=20, seed=1,
                           properties=["MatchesReferenceOnEveryValidWorkload"]).passed


def raises_on_one_row(chunk_size, num_prefills, computed, starts):
    if num_prefills == 1:
        raise RuntimeError("the engine's slip on one row")
    return reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)


def test_entries_after_a_misbehaviour_in_the_replay_are_kept(tmp_path):
    mine = settings(database=tmp_path / "examples", corpus=[], seed=8, fail_fast=True, cases=30,
                    report_dir=tmp_path / "reports", properties=["MatchesReferenceOnEveryValidWorkload"])
    with pytest.raises(chunkmeta.CheckFailed):
        chunkmeta.check(raises_on_one_row, settings=mine)
    [one_row] = (tmp_path / "examples").glob("*/*.json")
    # A larger entry it passes: replayed after the one it raises on, so the harness never sends it.
    two_rows = one_row.with_name("two-rows.json")
    two_rows.write_text('{"format": "chunkmeta-corpus/1", "workload": '
                        '{"chunk_size": 4, "num_computed_tokens": [0, 0], "query_start_loc": [0, 3, 9]}}')
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        chunkmeta.check(raises_on_one_row, settings=mine)
    assert failed.value.summary.database_entries == 2
    assert sorted((tmp_path / "examples").glob("*/*.json")) == sorted([one_row, two_rows])


class _BuilderWithCaches:
    """State an object gains as it is used: a cached property, a path whose hash and text it has cached."""

    def __init__(self, chunk_size):
        self.chunk_size = chunk_size
        self.cache_dir = __import__("pathlib").Path("/tmp/chunkmeta-cache")

    @functools.cached_property
    def warmed_up(self):
        return hash(self.cache_dir), str(self.cache_dir)

    def compute(self, chunk_size, num_prefills, computed, starts):
        assert self.warmed_up
        return reference_procedure.compute_chunk_metadata(self.chunk_size, num_prefills, computed, starts)


def test_a_bound_method_keeps_its_key_when_its_object_caches_state_as_it_is_used():
    builder = _BuilderWithCaches(64)
    before = _key(builder.compute)
    builder.compute(64, 1, [0], [0, 5])
    assert "warmed_up" in vars(builder)
    assert _key(builder.compute) == before


def _fixed_in_place(wrong, right):
    """``right``'s code under ``wrong``'s module and name: the same function, fixed."""
    fixed = types.FunctionType(right.__code__, right.__globals__, wrong.__name__)
    fixed.__qualname__ = wrong.__qualname__
    return fixed


def rejects_invalid_input(chunk_size, num_prefills, computed, starts):
    return chunkmeta.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)


def test_an_invalid_entry_is_judged_whatever_edge_classes_are_excluded(tmp_path):
    mine = settings(database=tmp_path / "examples", corpus=[], seed=8, fail_fast=True, cases=30, valid_only=False,
                    arrays="lists", report_dir=tmp_path / "reports", properties=["RejectsInvalidWorkloadsLikeTheReference"])
    with pytest.raises(chunkmeta.CheckFailed):
        chunkmeta.check(accepts_invalid_input, settings=mine)
    assert len(list((tmp_path / "examples").glob("*/*.json"))) == 1
    # Invalid input has no edge class: excluding every class still sends it, and the fix passes it.
    fixed = _fixed_in_place(accepts_invalid_input, rejects_invalid_input)
    summary = chunkmeta.check(fixed, settings=settings(mine, exclude=list(chunkmeta.edge_classes())))
    assert summary.database_entries == 1
    assert not (tmp_path / "examples").exists()


def _with_memo(chunk_size):
    memo = {}

    def compute(given_chunk_size, num_prefills, computed, starts):
        key = (num_prefills, tuple(int(v) for v in computed), tuple(int(v) for v in starts))
        if key not in memo:
            memo[key] = reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)
        return memo[key]

    return compute


def _with_counter_list(chunk_size):
    calls = [0]

    def compute(given_chunk_size, num_prefills, computed, starts):
        calls[0] += 1
        return reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)

    return compute


def _with_nonlocal_counter(chunk_size):
    calls = 0

    def compute(given_chunk_size, num_prefills, computed, starts):
        nonlocal calls
        calls += 1
        return reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)

    return compute


STATEFUL_CLOSURES = {"memo": _with_memo, "counter list": _with_counter_list, "nonlocal counter": _with_nonlocal_counter}


@pytest.mark.parametrize("kind", sorted(STATEFUL_CLOSURES))
def test_a_closure_that_keeps_state_as_it_is_used_keeps_its_key_and_its_constants_still_count(kind):
    fn = STATEFUL_CLOSURES[kind](64)
    before = _key(fn)
    for rows in range(1, 4):
        fn(64, rows, [0] * rows, list(range(0, 5 * rows + 1, 5)))
    assert _key(fn) == before
    assert _key(STATEFUL_CLOSURES[kind](128)) != before  # the captured chunk size is a constant
