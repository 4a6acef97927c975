"""check() as a guest in the user's test run: it gives back the timer and the
signal handler it found (pytest-timeout's signal method keeps working), and a
user's mistake is an error before anything runs, never a counterexample."""

import functools
import signal
import time

import pytest

import chunkmeta
import reference_procedure


class CallerTimerFired(Exception):
    pass


def _raise_caller_timer(signum, frame):
    raise CallerTimerFired()


def slow(*arguments):
    time.sleep(0.001)
    return reference_procedure.compute_chunk_metadata(*arguments)


@pytest.fixture
def caller_timer():
    previous = signal.signal(signal.SIGALRM, _raise_caller_timer)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def test_a_caller_timer_that_comes_due_during_check_fires_its_own_handler(caller_timer, tmp_path):
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    start = time.monotonic()
    with pytest.raises(CallerTimerFired):
        chunkmeta.check(slow, cases=100000, seed=5, corpus=[], database=None, report_dir=tmp_path)
    assert time.monotonic() - start < 5, "the caller's deadline was kept, give or take one call"


def test_a_caller_timer_still_running_after_check_keeps_its_deadline_and_handler(caller_timer, tmp_path):
    signal.setitimer(signal.ITIMER_REAL, 60)
    start = time.monotonic()
    chunkmeta.check(reference_procedure.compute_chunk_metadata, cases=50, seed=6, corpus=[], database=None,
                    report_dir=tmp_path)
    remaining, _ = signal.getitimer(signal.ITIMER_REAL)
    assert 0 < remaining <= 60 - (time.monotonic() - start) + 0.1
    assert signal.getsignal(signal.SIGALRM) is _raise_caller_timer


def test_no_timer_is_left_armed_when_the_caller_had_none(tmp_path):
    chunkmeta.check(reference_procedure.compute_chunk_metadata, cases=50, seed=7, corpus=[], database=None,
                    report_dir=tmp_path)
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


class Engine:
    def compute(self, chunk_size, num_prefills, num_computed_tokens, query_start_loc):
        return reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, num_computed_tokens,
                                                          query_start_loc)


@pytest.mark.parametrize("not_a_function", [None, 42, "compute_chunk_metadata"])
def test_something_that_is_not_a_function_is_a_type_error(not_a_function):
    with pytest.raises(TypeError, match="needs a function"):
        chunkmeta.check(not_a_function)


def test_an_unbound_method_is_a_type_error_naming_the_signature_wanted():
    with pytest.raises(TypeError, match="an unbound method"):
        chunkmeta.check(Engine.compute)
    assert chunkmeta.check(Engine().compute, cases=20, seed=8, corpus=[], database=None).passed


def test_a_missing_corpus_or_replay_path_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        chunkmeta.check(reference_procedure.compute_chunk_metadata, corpus=[tmp_path / "missing"])
    with pytest.raises(FileNotFoundError):
        chunkmeta.replay(reference_procedure.compute_chunk_metadata, tmp_path / "missing.json")


def test_replaying_nothing_is_not_a_pass(tmp_path):
    with pytest.raises(AssertionError, match="nothing was replayed"):
        chunkmeta.replay(reference_procedure.compute_chunk_metadata, tmp_path)


def wrong_when(threshold, chunk_size, num_prefills, num_computed_tokens, query_start_loc):
    cu, seq, last = reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, num_computed_tokens,
                                                               query_start_loc)
    if num_prefills >= threshold:
        last = [x + 1 for x in last]
    return cu, seq, last


def test_partials_of_one_function_keep_their_own_example_databases(tmp_path):
    failing = functools.partial(wrong_when, 2)
    passing = functools.partial(wrong_when, 10 ** 9)
    database = tmp_path / "examples"
    with pytest.raises(chunkmeta.CheckFailed):
        chunkmeta.check(failing, cases=50, seed=9, corpus=[], database=database, report_dir=tmp_path / "r")
    saved = sorted(database.rglob("*.json"))
    assert saved, "the failure is saved"
    chunkmeta.check(passing, cases=50, seed=9, corpus=[], database=database, report_dir=tmp_path / "r")
    assert sorted(database.rglob("*.json")) == saved, "a passing partial left the failing one's examples alone"


BROKEN = {"now": True}


def engine_being_fixed(chunk_size, num_prefills, num_computed_tokens, query_start_loc):
    return wrong_when(2 if BROKEN["now"] else 10 ** 9, chunk_size, num_prefills, num_computed_tokens, query_start_loc)


def test_once_fixed_its_saved_examples_go_and_no_empty_folder_stays(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default database, .chunkmeta/examples, under the working folder
    monkeypatch.setitem(BROKEN, "now", True)
    default_database = chunkmeta.settings.get_profile("default").database  # .chunkmeta/examples, relative
    with pytest.raises(chunkmeta.CheckFailed):
        chunkmeta.check(engine_being_fixed, cases=50, seed=10, corpus=[], database=default_database,
                        report_dir=tmp_path / "r")
    assert list((tmp_path / ".chunkmeta" / "examples").rglob("*.json")), "the failure is saved"
    monkeypatch.setitem(BROKEN, "now", False)
    chunkmeta.check(engine_being_fixed, cases=20, seed=10, corpus=[], database=default_database,
                    report_dir=tmp_path / "r")
    assert not (tmp_path / ".chunkmeta").exists()


def test_the_shipped_corpus_is_public():
    folders = chunkmeta.shipped_corpus()
    assert folders and all(folder.is_dir() for folder in folders)
    assert chunkmeta.check(reference_procedure.compute_chunk_metadata, cases=20, seed=11, database=None,
                           corpus=chunkmeta.shipped_corpus()).replayed_files > 0
