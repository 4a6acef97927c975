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
    """`right` under `wrong`'s module and name: the function, fixed."""
    def fixed(*args):
        return right(*args)

    fixed.__module__, fixed.__qualname__, fixed.__name__ = wrong.__module__, wrong.__qualname__, wrong.__name__
    return fixed


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
