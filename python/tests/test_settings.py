"""check()'s settings: profiles, phases, the example database, and time limits."""

import json
import time

import pytest

import chunkmeta
import mutants
import reference_procedure
from chunkmeta import Phase, settings


def test_settings_take_their_parents_values_and_refuse_unknown_names():
    parent = settings(cases=50, seed=7)
    child = settings(parent, fail_fast=True)
    assert (child.cases, child.seed, child.fail_fast) == (50, 7, True)
    assert settings().cases == settings.get_profile("default").cases
    with pytest.raises(TypeError, match="max_examples"):
        settings(max_examples=10)
    with pytest.raises(AttributeError):
        child.cases = 3


def test_profiles_are_registered_loaded_and_chosen_by_the_environment(monkeypatch):
    settings.register_profile("tiny", cases=20, seed=11, database=None)
    assert settings.get_profile("ci").cases > settings.get_profile("default").cases
    monkeypatch.setenv("CHUNKMETA_PROFILE", "tiny")
    summary = chunkmeta.check(reference_procedure.compute_chunk_metadata, corpus=[])
    assert summary.seed == 11
    assert all(p.cases in (20, 1) for p in summary.properties if not p.skipped)  # huge batches: 2%, at least 1
    monkeypatch.setenv("CHUNKMETA_PROFILE", "no-such-profile")
    with pytest.raises(ValueError, match="no settings profile 'no-such-profile'"):
        chunkmeta.check(reference_procedure.compute_chunk_metadata)


def test_without_the_shrink_phase_a_failure_is_reported_as_found(tmp_path):
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        chunkmeta.check(mutants.head_not_capped, corpus=[], seed=20261202, fail_fast=True, report_dir=tmp_path,
                        phases=[Phase.replay, Phase.generate])
    assert "not fully shrunk (the shrink phase is off)" in str(failed.value)


def test_without_the_generate_phase_only_the_replay_runs():
    summary = chunkmeta.check(mutants.head_not_capped, corpus=[], phases=[Phase.replay])
    assert summary.passed and summary.properties == [] and summary.replayed_files == 0


def test_a_failure_is_saved_to_the_database_and_replayed_first_next_time(tmp_path):
    database = tmp_path / "examples"
    mine = settings(database=database, corpus=[], seed=20261202, fail_fast=True, report_dir=tmp_path / "reports")
    with pytest.raises(chunkmeta.CheckFailed):
        chunkmeta.check(mutants.head_not_capped, settings=mine)
    saved = list(database.glob("*/*.json"))
    assert len(saved) == 1
    assert json.loads(saved[0].read_text())["workload"]["chunk_size"] >= 1
    # Next run: the saved workload fails in the replay, before any property (another seed changes nothing).
    started = time.perf_counter()
    with pytest.raises(chunkmeta.CheckFailed) as again:
        chunkmeta.check(mutants.head_not_capped, settings=settings(mine, seed=1))
    assert again.value.summary.database_entries == 1
    assert again.value.summary.properties == []
    assert "the replay already fails" in str(again.value)
    assert time.perf_counter() - started < 10
    # Once the function is right, its saved failures pass and are removed.
    assert chunkmeta.check(mutants.head_not_capped.__wrapped__ if hasattr(mutants.head_not_capped, "__wrapped__")
                           else reference_procedure.compute_chunk_metadata, settings=settings(mine, cases=10)).passed
    assert list(database.glob("*/*.json")) == saved  # another function: its own entries (none)
    fixed = _same_name_as(mutants.head_not_capped, reference_procedure.compute_chunk_metadata)
    assert chunkmeta.check(fixed, settings=settings(mine, cases=10)).passed
    assert list(database.glob("*/*.json")) == []


def _same_name_as(wrong, right):
    """`right` (the reference, called through its module) under `wrong`'s module and name, holding
    what `wrong`'s closure holds (a mutant's slip): the same function, fixed in place."""
    assert right is reference_procedure.compute_chunk_metadata
    slip = wrong.__closure__[0].cell_contents if wrong.__closure__ else None

    def fixed(*args):
        assert slip is slip  # held, as the factory's function holds it
        return reference_procedure.compute_chunk_metadata(*args)

    fixed.__module__, fixed.__qualname__, fixed.__name__ = wrong.__module__, wrong.__qualname__, wrong.__name__
    return fixed


@pytest.mark.parametrize("setting, value, error, words", [
    ("seed", -1, ValueError, "seed must be between 0 and"),
    ("seed", 2**70, ValueError, "seed must be between 0 and"),
    ("seed", 1.5, TypeError, "seed must be a whole number"),
    ("cases", 2**40, ValueError, "cases must be between 0 and 2147483647"),
    ("cases", -5, ValueError, "cases must be between 0"),
    ("cases", True, TypeError, "cases must be a whole number"),
    ("min_cases", -1, ValueError, "min_cases must be between 0"),
    ("timeout", float("nan"), ValueError, "timeout must be a finite number"),
    ("timeout", float("inf"), ValueError, "timeout must be a finite number"),
    ("timeout", -1, ValueError, "timeout must be a finite number"),
    ("time_budget", float("nan"), ValueError, "time_budget must be a finite number"),
    ("time_budget", "6", TypeError, "time_budget must be a number"),
    ("phases", [], ValueError, "run nothing"),
    ("phases", [Phase.shrink], ValueError, "run nothing"),
    ("exclude", [1], TypeError, "exclude must be a list of names"),
    ("properties", 3, TypeError, "properties must be a list"),
    ("arrays", "jax", ValueError, "arrays must be"),
    ("database", 5, TypeError, "database must be a path"),
    ("corpus", [5], TypeError, "corpus must be a list of paths"),
])
def test_a_setting_out_of_its_range_is_refused_when_made_naming_it(setting, value, error, words):
    with pytest.raises(error, match=words):
        settings(**{setting: value})
    with pytest.raises(error, match=words):  # the same through check()'s keywords, before anything runs
        chunkmeta.check(reference_procedure.compute_chunk_metadata, **{setting: value})


def _factory(wrong):
    def fn(chunk_size, num_prefills, computed, starts):
        cu, seq, last = reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)
        return ([v + 1 for v in cu] if wrong and num_prefills >= 2 else cu), seq, last
    return fn


class _Engine:
    def __init__(self, chunk_size):
        self.chunk_size = chunk_size

    def compute(self, chunk_size, num_prefills, computed, starts):
        return reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)


def test_the_example_database_keys_on_what_the_function_is_never_on_where_it_lives(tmp_path):
    import functools
    folder = chunkmeta._Database
    # Two closures of one factory compute differently: two folders, so a passing one keeps the other's failures.
    assert folder(tmp_path, "mamba", _factory(True)).folder != folder(tmp_path, "mamba", _factory(False)).folder
    assert folder(tmp_path, "mamba", _factory(True)).folder == folder(tmp_path, "mamba", _factory(True)).folder
    # A partial over an object, or a bound method: the same key in every run (no memory address in it).
    one = functools.partial(_Engine(64).compute, 64)
    again = functools.partial(_Engine(64).compute, 64)
    assert "0x" not in chunkmeta._identity(one)
    assert folder(tmp_path, "mamba", one).folder == folder(tmp_path, "mamba", again).folder
    assert folder(tmp_path, "mamba", _Engine(64).compute).folder == folder(tmp_path, "mamba", _Engine(64).compute).folder


def test_a_database_folder_that_cannot_be_written_saves_failures_in_the_report_folder(tmp_path):
    blocked = tmp_path / "a-file"  # a file where the folder should be: unwritable, even for root
    blocked.write_text("")
    mine = settings(database=blocked / "examples", corpus=[], seed=20261202, fail_fast=True,
                    report_dir=tmp_path / "reports")
    with pytest.raises(chunkmeta.CheckFailed):
        chunkmeta.check(mutants.head_not_capped, settings=mine)
    assert len(list((tmp_path / "reports" / "examples").glob("*/*.json"))) == 1
    with pytest.raises(chunkmeta.CheckFailed) as again:  # and replayed from there first
        chunkmeta.check(mutants.head_not_capped, settings=settings(mine, seed=1))
    assert again.value.summary.database_entries == 1


def runs_away_on_two_rows(chunk_size, num_prefills, computed, starts):
    if num_prefills >= 2:
        while True:  # a round-up that wrapped, now counting to 2^32
            pass
    return reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)


def test_a_runaway_function_is_cut_short_reported_and_the_run_ends_soon(tmp_path):
    started = time.perf_counter()
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        chunkmeta.check(runs_away_on_two_rows, corpus=[], seed=5, timeout=2, report_dir=tmp_path)
    elapsed = time.perf_counter() - started
    message = str(failed.value)
    assert "timed_out: gave no answer within 2.000 s; cut short" in message
    cx = next(p.counterexample for p in failed.value.summary.properties if p.counterexample)
    assert cx["status"] == "minimal" and json.loads(cx["workload"])["num_computed_tokens"] == [0, 0]
    # Every later property fails on the same bug: each checks the known minimal case, nothing is shrunk twice.
    assert "the same bug as MatchesReferenceOnEveryValidWorkload" in message
    assert elapsed < 30, elapsed


def test_a_timeout_of_zero_sets_no_alarm():
    summary = chunkmeta.check(reference_procedure.compute_chunk_metadata, corpus=[], cases=50, seed=6, timeout=0)
    assert summary.passed
