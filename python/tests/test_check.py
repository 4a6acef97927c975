"""chunkmeta.check(): the property suite, in this process, against a Python function."""

import json
import re
import threading
import time

import pytest
import torch

import chunkmeta
import mutants
import reference_procedure


def test_passes_a_correct_pure_python_function_with_tensor_arguments():
    summary = chunkmeta.check(reference_procedure.compute_chunk_metadata, cases=200, seed=1)
    assert summary.passed
    assert summary.replayed_files > 0
    ran = [p for p in summary.properties if not p.skipped]
    assert [p.name for p in ran] == [p for p in chunkmeta.PROPERTIES if p != "RejectsInvalidWorkloadsLikeTheReference"]
    # Huge batches (32k+ rows) run 2% of the cases: 4 of 200.
    assert all(p.cases == (4 if p.name == "MatchesReferenceOnHugeBatches" else 200) for p in ran)
    assert "VERIFIED" in str(summary)


def test_passes_it_with_list_arguments_too():
    assert chunkmeta.check(reference_procedure.compute_chunk_metadata, arrays="lists", cases=100, seed=2).passed


def test_raises_an_assertion_error_whose_message_is_the_minimal_report(tmp_path):
    with pytest.raises(AssertionError) as raised:
        chunkmeta.check(mutants.head_not_capped, seed=20261202, corpus=[], fail_fast=True, report_dir=tmp_path)
    message = str(raised.value)
    assert "MatchesReferenceOnEveryValidWorkload" in message
    assert "first divergence" in message.lower()
    assert "Replay from Python: chunkmeta.replay(" in message
    reports = list(tmp_path.glob("*.report.json"))
    assert len(reports) == 1
    report = json.loads(reports[0].read_text())
    assert len(report["workload"]["num_computed_tokens"]) <= 2
    # The report replays: through Python, and it still fails.
    with pytest.raises(AssertionError):
        chunkmeta.replay(mutants.head_not_capped, reports[0])
    assert chunkmeta.replay(reference_procedure.compute_chunk_metadata, reports[0]) == 1


def test_replays_the_corpus_first_and_reports_its_failures():
    with pytest.raises(AssertionError) as raised:
        chunkmeta.check(mutants.head_not_capped, cases=1, seed=3, fail_fast=True)
    assert "replay" in str(raised.value)


def raises_on_an_odd_chunk_size(chunk_size, num_prefills, computed, starts):
    if chunk_size % 2 == 1:
        raise ZeroDivisionError("the engine's slip")
    return reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)


def test_an_exception_is_a_finding_with_its_traceback():
    summary = None
    with pytest.raises(AssertionError) as raised:
        summary = chunkmeta.check(raises_on_an_odd_chunk_size, corpus=[], seed=4, fail_fast=True)
    assert summary is None
    message = str(raised.value)
    assert "raised ZeroDivisionError: the engine's slip" in message
    assert "Traceback" in message and "raises_on_an_odd_chunk_size" in message
    assert '"chunk_size":1,' in message.replace(" ", "")  # shrunk to the smallest odd chunk size


def returns_two_lists(chunk_size, num_prefills, computed, starts):
    return [0], []


def test_a_malformed_return_value_is_a_finding():
    with pytest.raises(AssertionError, match="malformed_output"):
        chunkmeta.check(returns_two_lists, corpus=[], seed=5, fail_fast=True)


def returns_an_object_in_seq_idx(chunk_size, num_prefills, computed, starts):
    return [0], [object()], []


def test_a_non_integer_output_entry_is_named_once():
    with pytest.raises(AssertionError) as raised:
        chunkmeta.check(returns_an_object_in_seq_idx, corpus=[], seed=5, fail_fast=True)
    message = str(raised.value)
    assert re.search(r"malformed_output: returned seq_idx\[0\] is <object object at 0x[0-9a-f]+> \(object\), not an integer",
                     message)
    assert "returned returned" not in message


# Far more entries than any answer to a generated workload holds: refused before a single one is read.
_FLOODS = {"tensor": torch.zeros(3_000_000, dtype=torch.int32), "list": [0] * 3_000_000,
           "numpy": __import__("numpy").zeros(3_000_000, dtype="int32")}


@pytest.mark.parametrize("kind", sorted(_FLOODS))
@pytest.mark.parametrize("output", [0, 1, 2])
def test_an_output_flooded_with_millions_of_entries_is_a_malformed_output_refused_unread(kind, output):
    def flooding(chunk_size, num_prefills, computed, starts):
        answer = list(reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts))
        answer[output] = _FLOODS[kind]
        return tuple(answer)

    with pytest.raises(AssertionError) as raised:
        chunkmeta.check(flooding, corpus=[], seed=5, fail_fast=True, database=None)
    message = str(raised.value)
    name = ("cu_chunk_seqlen", "seq_idx", "last_chunk_indices")[output]
    assert re.search(r"malformed_output: returned " + name + r" of 3000000 entries, more than an answer to this "
                     r"workload can hold \(\d+\)", message), message
    assert len(message) < 20_000, "the evidence is the flood's first items, never all of them"


def _raised_in_a_thread(run, wait=120):
    """What run() raised when called off the main thread, where no SIGALRM reaches it."""
    raised = []

    def body():
        try:
            run()
        except BaseException as error:  # noqa: B036 (handed to the test's thread)
            raised.append(error)
    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    thread.join(wait)
    assert not thread.is_alive(), f"still running after {wait} s: its calls were never cut short"
    return raised[0] if raised else None


def spins_on_batches_of_four_rows(chunk_size, num_prefills, computed, starts):
    while num_prefills >= 4:
        pass
    return reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)


def test_a_call_past_its_timeout_is_cut_short_off_the_main_thread_too():
    raised = _raised_in_a_thread(lambda: chunkmeta.check(spins_on_batches_of_four_rows, corpus=[], seed=5,
                                                         fail_fast=True, database=None, timeout=0.5))
    assert isinstance(raised, AssertionError), repr(raised)
    assert "timed_out" in str(raised) and "4 rows" in str(raised), str(raised)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_call_that_returns_as_its_time_runs_out_off_the_main_thread_leaves_no_timeout_in_the_harness(seed):
    """Answers right, a third of them just about at the limit (in a sleep or a spin): check() comes back,
    passed or with a timed_out finding, never hung on its alarm nor with the alarm's exception escaping."""
    import random
    draw = random.Random(seed)

    def near_the_limit(chunk_size, num_prefills, computed, starts):
        answer = chunkmeta.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)
        if draw.random() < 0.3:
            took = 0.03 * draw.uniform(0.9, 1.1)
            if draw.random() < 0.5:
                time.sleep(took)
            else:
                end = time.monotonic() + took
                while time.monotonic() < end:
                    pass
        return answer
    raised = _raised_in_a_thread(lambda: chunkmeta.check(near_the_limit, arrays="lists", corpus=[], seed=5,
                                                         database=None, report_dir=None, cases=100, timeout=0.03,
                                                         properties=["MatchesReferenceOnEveryValidWorkload"]))
    assert raised is None or (isinstance(raised, AssertionError) and "timed_out" in str(raised)), repr(raised)


def test_the_flood_bound_holds_for_an_answers_outputs_together():
    """Each of two outputs within the bound alone, the two past it together (on small workloads)."""
    half = [0] * 5_000

    def two_halves(chunk_size, num_prefills, computed, starts):
        cu, _, _ = reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)
        return cu, half, half

    with pytest.raises(AssertionError) as raised:
        chunkmeta.check(two_halves, corpus=[], seed=5, fail_fast=True, database=None)
    assert re.search(r"malformed_output: returned last_chunk_indices of 5000 entries, more than an answer to this "
                     r"workload can hold \(\d+\), with the \d+ entries of the outputs before it", str(raised.value))


class _ClearsItsList:
    """An item whose repr() empties the list that holds it (code under test runs while evidence is built)."""

    def __init__(self, owner):
        self.owner = owner

    def __repr__(self):
        self.owner.clear()
        return "ClearsItsList()"


class _SurrogateRepr:
    def __repr__(self):
        return "\ud800"  # a lone surrogate: no UTF-8 holds it


def _clearing(*_):
    out = []
    out.extend(_ClearsItsList(out) for _ in range(5))
    return out


_MALFORMED_RESULTS = {
    "a list that its items' repr() empties": (_clearing, "returned 5 values instead of three"),
    "an object whose repr() is a lone surrogate": (lambda *_: _SurrogateRepr(), "\\ud800"),
    "an item whose repr() is a lone surrogate": (lambda *_: ([0, _SurrogateRepr()], [], [0]), "\\ud800"),
    "a dict of 3 million entries": (lambda *_: dict.fromkeys(range(3_000_000), 0), "(3000000 items)"),
    "a string of 3 million characters": (lambda *_: "x" * 3_000_000, "(3000000 characters)"),
}


@pytest.mark.parametrize("result", sorted(_MALFORMED_RESULTS))
def test_a_malformed_result_is_shown_short_whatever_its_repr_does(result):
    returns, shown = _MALFORMED_RESULTS[result]
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        chunkmeta.check(lambda chunk_size, num_prefills, computed, starts: returns(), corpus=[], seed=1,
                        database=None, report_dir=None, cases=5)
    message = str(failed.value)
    assert "malformed_output" in message and shown in message, message
    assert len(message) < 20_000


@pytest.mark.parametrize("timeout", [1e10, float("inf")])
def test_a_timeout_past_any_clock_is_waited_as_no_limit(timeout):
    summary = chunkmeta.check(reference_procedure.compute_chunk_metadata, corpus=[], seed=1, database=None,
                              report_dir=None, cases=20, timeout=timeout if timeout < float("inf") else 1e300)
    assert summary.passed
    raised = _raised_in_a_thread(lambda: chunkmeta.check(reference_procedure.compute_chunk_metadata, corpus=[],
                                                         seed=1, database=None, report_dir=None, cases=20,
                                                         timeout=1e10))
    assert raised is None, repr(raised)
    assert chunkmeta.check_steps(lives=5, seed=1, timeout=timeout).passed


def test_invalid_input_is_checked_when_the_function_raises_like_invalid_workload():
    # compute_chunk_metadata raises InvalidWorkload with the reference's code, field and index.
    summary = chunkmeta.check(chunkmeta.compute_chunk_metadata, valid_only=False, cases=200, seed=6)
    assert not any(p.skipped for p in summary.properties)


def test_a_function_that_accepts_invalid_input_is_caught_when_invalid_input_is_checked():
    with pytest.raises(AssertionError, match="accepted_invalid|wrong_error|raised"):
        chunkmeta.check(reference_procedure.compute_chunk_metadata, valid_only=False, corpus=[], seed=8,
                        arrays="lists", properties=["RejectsInvalidWorkloadsLikeTheReference"])


def test_ctrl_c_ends_the_run_at_once_with_keyboard_interrupt():
    calls = 0

    def interrupted_after_fifty_calls(*args):
        nonlocal calls
        calls += 1
        if calls == 50:
            raise KeyboardInterrupt
        return reference_procedure.compute_chunk_metadata(*args)

    started = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        chunkmeta.check(interrupted_after_fifty_calls, corpus=[], cases=100000, seed=9)
    assert calls == 50
    assert time.perf_counter() - started < 30


def test_unknown_property_and_array_kind_are_value_errors():
    with pytest.raises(ValueError, match="unknown property"):
        chunkmeta.check(reference_procedure.compute_chunk_metadata, properties=["NoSuchProperty"])
    with pytest.raises(ValueError, match="arrays"):
        chunkmeta.check(reference_procedure.compute_chunk_metadata, arrays="tuples")


def slow_reference(*arguments):
    time.sleep(0.002)
    return reference_procedure.compute_chunk_metadata(*arguments)


def test_a_time_budget_that_cuts_properties_short_is_not_a_pass(tmp_path):
    with pytest.raises(chunkmeta.CheckIncomplete) as raised:
        chunkmeta.check(slow_reference, time_budget=1, min_cases=0, seed=3, corpus=[], database=None,
                        report_dir=tmp_path)
    message = str(raised.value)
    assert "VERIFIED: every property held" not in message
    assert "NOT VERIFIED: no failure, but not every property ran its cases" in message
    summary = raised.value.summary
    assert not summary.passed
    short = [p for p in summary.properties if not p.complete]
    assert short, "some property must be listed as cut short or not run"
    assert all(p.not_run or p.cases < p.planned for p in short)
    # Every property is listed, run or not.
    assert [p.name for p in summary.properties] == list(chunkmeta.PROPERTIES)


def int64_outputs(*arguments):
    return tuple(torch.tensor(list(a), dtype=torch.int64)
                 for a in reference_procedure.compute_chunk_metadata(*arguments))


def test_outputs_of_another_dtype_than_int32_are_malformed(tmp_path):
    with pytest.raises(chunkmeta.CheckFailed) as raised:
        chunkmeta.check(int64_outputs, cases=50, seed=4, corpus=[], database=None, report_dir=tmp_path)
    assert "malformed_output" in str(raised.value)
    assert "of dtype int64; the spec gives int32" in str(raised.value)


def _right_then(change, before=False):
    """Mamba's function, right, that changes its arguments in place with `change(C, c, q)` (before computing, as
    an engine rebasing its offsets does, or after)."""
    def fn(chunk_size, num_prefills, computed, starts):
        if before:
            change(chunk_size, computed, starts)
        result = reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, computed, starts)
        if not before:
            change(chunk_size, computed, starts)
        return result
    return fn


def _remainder_in_place(C, c, q):
    c %= C


def _rebase_in_place(C, c, q):
    q -= q[0].item()


def _empties_the_checkpoint_offsets(chunk_size, num_prefills, computed, starts, checkpoint_offsets_p):
    result = chunkmeta.compute_chunk_metadata(chunk_size, num_prefills, computed, starts, list(checkpoint_offsets_p))
    checkpoint_offsets_p.clear()
    return result


# The four: a function that answers right and changes an argument it was given, and the input it changes.
IN_PLACE_CHANGES = {
    "c %= C": ("mamba", _right_then(_remainder_in_place), "num_computed_tokens"),
    "q -= q[0]": ("mamba", _right_then(_rebase_in_place, before=True), "query_start_loc"),
    "c.zero_() after computing": ("mamba", _right_then(lambda C, c, q: c.zero_()), "num_computed_tokens"),
    "checkpoint_offsets_p emptied": ("mamba.checkpointed_chunks", _empties_the_checkpoint_offsets,
                                     "checkpoint_offsets"),
}


@pytest.mark.parametrize("corpus", [None, []], ids=["corpus replayed", "properties only"])
@pytest.mark.parametrize("change", list(IN_PLACE_CHANGES))
def test_a_right_answer_from_a_function_that_changes_its_input_is_a_changed_input_finding_naming_it(change, corpus,
                                                                                                  tmp_path):
    spec, fn, changed = IN_PLACE_CHANGES[change]
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        chunkmeta.check(fn, spec=spec, seed=5, fail_fast=True, valid_only=True, corpus=corpus, report_dir=tmp_path)
    assert "changed_input: changed its input " + changed in str(failed.value)
    reports = [json.loads(path.read_text()) for path in tmp_path.glob("*.report.json")]
    assert reports and all(report["finding"] == "changed_input" for report in reports)
    smallest = min(reports, key=lambda report: report["rows"])
    assert smallest["summary"].startswith(f"changed its input {changed}: ")
    # Minimal: the one row (or, for the offsets alone, none) that the change shows on.
    assert smallest["rows"] <= 1
    # The detail shows what it was sent (the case's own values) and what the call left.
    sent = smallest["workload"][changed]
    assert smallest["detail"].splitlines()[0] == "sent:           [" + ", ".join(map(str, sent)) + "]"
