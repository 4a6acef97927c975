"""Every answer against the truth, every failure kept (chunkmeta.check() and replay()):
a function that turns wrong late (after N calls, after T seconds: a warmed-up fast path,
a cache taking over) is NOT VERIFIED whichever property it turns wrong in, and one wrong
only once (a race) is reported as flaky, never as a minimal case that draws it again."""

import gc
import json
import time
import warnings

import pytest

import chunkmeta
import reference_procedure

SEED = 11


def _off_by_one(answer):
    """vLLM's three lists with the last chunk boundary moved: wrong, and consistently so."""
    cu, seq, last = (list(map(int, a)) for a in answer)
    if cu:
        cu[-1] += 1
    return cu, seq, last


def _counting(wrong_from=None, wrong_on=None, wrong_after_seconds=None):
    calls = {"n": 0, "start": None}

    def fn(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu):
        calls["n"] += 1
        if calls["start"] is None:
            calls["start"] = time.monotonic()
        answer = reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, num_computed_tokens_p_cpu,
                                                            query_start_loc_p_cpu)
        late = wrong_after_seconds is not None and time.monotonic() - calls["start"] > wrong_after_seconds
        if (wrong_from is not None and calls["n"] > wrong_from) or calls["n"] == wrong_on or late:
            return _off_by_one(answer)
        return answer

    return fn, calls


def _run(fn, tmp_path, **changes):
    return chunkmeta.check(fn, seed=SEED, cases=300, corpus=[], database=None, report_dir=tmp_path, **changes)


def test_a_function_that_turns_wrong_during_the_last_relation_property_is_not_verified(tmp_path):
    right, calls = _counting()
    summary = _run(right, tmp_path)
    ran = [p for p in summary.properties if not p.skipped]
    last = ran[-1]
    assert not last.name.startswith(("Matches", "Satisfies", "Rejects")), "the last property is a relation"
    # Right for every call before the last property and half of its own: wrong only where a relation judges.
    wrong_from = calls["n"] - last.calls // 2
    late, _ = _counting(wrong_from=wrong_from)
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        _run(late, tmp_path)
    assert "output differs from the reference" in str(failed.value)


def test_a_function_that_turns_wrong_after_some_seconds_is_not_verified(tmp_path):
    right, calls = _counting()
    start = time.monotonic()
    _run(right, tmp_path)
    late, _ = _counting(wrong_after_seconds=(time.monotonic() - start) * 0.6)
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        _run(late, tmp_path)
    assert "output differs from the reference" in str(failed.value)


def test_a_function_wrong_only_once_is_reported_flaky_and_its_replay_does_not_reproduce(tmp_path):
    once, _ = _counting(wrong_on=600)
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        _run(once, tmp_path)
    message = str(failed.value)
    assert "flaky (it failed once and passed each of the 3 times" in message
    assert "it passed 3 of them" in message
    assert "draws it again" not in message
    reports = list(tmp_path.glob("*.report.json"))
    assert len(reports) == 1
    report = json.loads(reports[0].read_text())
    assert report["status"].startswith("flaky (")
    with pytest.warns(UserWarning, match="does not reproduce"):
        assert chunkmeta.replay(once, reports[0]) == 1


async def _computed_later(*arguments):
    return reference_procedure.compute_chunk_metadata(*arguments)


def _returns_a_coroutine(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu):
    return _computed_later(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu)


def test_a_coroutine_returned_by_a_plain_function_is_named_and_closed_without_a_warning(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a coroutine left unawaited warns when collected
        with pytest.raises(chunkmeta.CheckFailed) as failed:
            _run(_returns_a_coroutine, tmp_path)
        gc.collect()
    assert "malformed_output: returned a coroutine (an awaitable) instead of its answer" in str(failed.value)


def test_edge_classes_of_an_invalid_workload_are_refused_naming_the_rule():
    with pytest.raises(chunkmeta.InvalidWorkload, match="query_start_loc"):
        chunkmeta._chunkmeta._edge_classes("mamba", (8, 0, [], []))
