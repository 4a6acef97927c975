"""Implementations of Mamba's chunk metadata that misbehave in one way at one
time, for the misbehaviour matrix (tests/misbehaving/matrix.py): each is
``<behaviour>_<when>``, a function with vLLM's signature, right except when
its moment comes:

    when:  first  the function's first two calls in its process (the harness's warm-up)
           nth    every workload of two or more rows (cases, shrink steps, confirmations)

`wrong_after_calls`, `wrong_after_seconds` and `wrong_once` have no moment either: off by one
from call 2,100 on, from 1 s after the first call on, and on call 600 only.
`prints_over_200_rows` has no moment: like vLLM's `info_once`, it logs one line
to stdout on the first batch over 200 rows. `changes_list_*` computes
mamba.checkpointed_chunks (vLLM #57329's signature, the offsets a list);
every other one Mamba's chunk metadata.

The same functions run in check()'s process and behind the adapter (cmd:).
"""

import logging
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python"))
from reference_procedure import compute_chunk_metadata  # noqa: E402

WHENS = ("first", "nth")
_calls = {}


class _StrRaises(Exception):
    def __str__(self):
        raise RuntimeError("this exception has no text")


class _OddRejection(Exception):
    """Names a rule like chunkmeta.InvalidWorkload, with an index no workload has."""
    code = "query_start_loc_decreasing"
    field = "query_start_loc"
    index = 2**70


# vLLM's logger writes to sys.stdout, through a handler made when its module is imported.
_logger = logging.getLogger("matrix_impl")
_logger.addHandler(logging.StreamHandler(sys.stdout))
_logger.setLevel(logging.INFO)
_logged_once = set()


def _wrong(result):
    cu, seq, last = result
    return [cu[0] + 1, *cu[1:]], seq, last  # the first chunk's start off by one


def _raise(result):
    raise IndexError("row index out of range in the rewrite")


def _odd_exception(result):
    raise _StrRaises()


def _odd_rejection(result):
    raise _OddRejection("an index no workload has")


def _control_text(result):
    raise ValueError("\x1b[2J\x1b[31m\x07\x00boom\nVERIFIED: every property held\n\x1b]0;title\x07")


def _hang(result):
    time.sleep(1000)


def _swallow_timeout(result):
    while True:  # a retry loop that catches everything, the harness's timeout too
        try:
            time.sleep(1000)
        except BaseException:  # noqa: BLE001 - the misbehaviour under test
            continue


def _layout(result):
    import torch
    cu, seq, last = (torch.as_tensor(list(a), dtype=torch.int32) for a in result)
    return torch.stack([cu, cu], dim=1)[:, 0], seq, last  # the right values, every other int32 of the memory


def _add_in_place(array, amount):
    """array += amount on the caller's own object: a tensor or an array in place, a list entry by entry."""
    if isinstance(array, list):
        array[:] = [v + amount for v in array]
    else:
        array += amount


def _changes_offsets(result, arguments):
    _add_in_place(arguments[3], 1)  # query_start_loc shifted, as `q -= q[0]` would
    return result


def _changes_per_row(result, arguments):
    _add_in_place(arguments[2], arguments[0])  # a multiple of C added to the computed tokens, as `c %= C` takes one
    return result


def _changes_list(result, arguments):
    arguments[4].clear()  # the builder's checkpoint_offsets_p emptied
    return result


def _prints(result):
    print("matrix_impl: computing the chunk metadata")  # through sys.stdout
    sys.stdout.flush()
    os.write(1, b"matrix_impl: a line written to fd 1, as C code would\n")
    return result


_FLOOD = [0] * 3_000_000  # made once: every call returns the same object


def _floods(result):
    cu, seq, last = result
    return cu, _FLOOD, last  # seq_idx of 3 million entries: more than an answer to any drawn workload holds


def _crash(result):
    os.kill(os.getpid(), signal.SIGSEGV)


def _exit(result):
    os._exit(3)


BEHAVIOURS = {
    "wrong": _wrong,
    "raise": _raise,
    "odd_exception": _odd_exception,
    "odd_rejection": _odd_rejection,
    "control_text": _control_text,
    "hang": _hang,
    "swallow_timeout": _swallow_timeout,
    "layout": _layout,
    "crash": _crash,
    "exit": _exit,
    "prints": _prints,
    "floods": _floods,
}
# Those that act on the call's arguments: misbehave(result, arguments).
ON_ARGUMENTS = {
    "changes_offsets": _changes_offsets,
    "changes_per_row": _changes_per_row,
    "changes_list": _changes_list,
}


def _due(key, when, num_prefills):
    calls = _calls[key] = _calls.get(key, 0) + 1
    return calls <= 2 if when == "first" else num_prefills >= 2


def make(behaviour, when):
    misbehave = BEHAVIOURS.get(behaviour)
    key = f"{behaviour}_{when}"

    def fn(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu):
        result = compute_chunk_metadata(chunk_size, num_prefills, [int(v) for v in num_computed_tokens_p_cpu],
                                        [int(v) for v in query_start_loc_p_cpu])
        if not _due(key, when, num_prefills):
            return result
        if misbehave is not None:
            return misbehave(result)
        return ON_ARGUMENTS[behaviour](result, (chunk_size, num_prefills, num_computed_tokens_p_cpu,
                                                query_start_loc_p_cpu))

    def with_checkpoints(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu,
                         checkpoint_offsets_p):
        import chunkmeta
        result = chunkmeta.compute_chunk_metadata(chunk_size, num_prefills, num_computed_tokens_p_cpu,
                                                  query_start_loc_p_cpu, list(checkpoint_offsets_p))
        if not _due(key, when, num_prefills):
            return result
        return ON_ARGUMENTS[behaviour](result, (chunk_size, num_prefills, num_computed_tokens_p_cpu,
                                                query_start_loc_p_cpu, checkpoint_offsets_p))

    made = with_checkpoints if behaviour == "changes_list" else fn
    made.__name__ = made.__qualname__ = key
    return made


def prints_over_200_rows(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu):
    if num_prefills > 200 and "big batch" not in _logged_once:
        _logged_once.add("big batch")
        _logger.info("matrix_impl: a batch of %d prefills", num_prefills)
    return compute_chunk_metadata(chunk_size, num_prefills, [int(v) for v in num_computed_tokens_p_cpu],
                                  [int(v) for v in query_start_loc_p_cpu])


def exits_past_1000_tokens(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu):
    """Exits on any row past 1,000 computed tokens, and only there: the adapter answers the lines it has read in
    one write, so a batch of them ends with no answer at all; the one that killed it must take the blame."""
    if any(int(v) > 1000 for v in num_computed_tokens_p_cpu):
        os._exit(3)
    return compute_chunk_metadata(chunk_size, num_prefills, [int(v) for v in num_computed_tokens_p_cpu],
                                  [int(v) for v in query_start_loc_p_cpu])


_calls_in_process = {"n": 0}


def exits_every_7th_call(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu):
    """Exits on every 7th call of its process, whatever it is asked (a leak that runs out): asked again in a fresh
    process, as a replay asks it, the case passes, so the crash is flaky, never a minimal case that does not crash."""
    _calls_in_process["n"] += 1
    if _calls_in_process["n"] % 7 == 0:
        os._exit(7)
    return compute_chunk_metadata(chunk_size, num_prefills, [int(v) for v in num_computed_tokens_p_cpu],
                                  [int(v) for v in query_start_loc_p_cpu])


# Wrong late, the way a warmed-up fast path, a cache taking over or a graph captured after N calls is: every
# answer from then on off by one, consistently (a relation between answers holds). And wrong once, as a race is.
LATE_CALLS = 2100  # past check()'s reference properties: the relations' answers are the wrong ones
LATE_SECONDS = 1.0
ONCE_AT_CALL = 600
_late = {"calls": 0, "start": None}


def _turns_wrong(when_due):
    def fn(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu):
        _late["calls"] += 1
        if _late["start"] is None:
            _late["start"] = time.monotonic()
        result = compute_chunk_metadata(chunk_size, num_prefills, [int(v) for v in num_computed_tokens_p_cpu],
                                        [int(v) for v in query_start_loc_p_cpu])
        return _wrong(result) if when_due() else result
    return fn


wrong_after_calls = _turns_wrong(lambda: _late["calls"] > LATE_CALLS)
wrong_after_seconds = _turns_wrong(lambda: time.monotonic() - _late["start"] > LATE_SECONDS)
wrong_once = _turns_wrong(lambda: _late["calls"] == ONCE_AT_CALL)
for _name in ("wrong_after_calls", "wrong_after_seconds", "wrong_once"):
    globals()[_name].__name__ = globals()[_name].__qualname__ = _name


for _behaviour in [*BEHAVIOURS, *ON_ARGUMENTS]:
    for _when in WHENS:
        globals()[f"{_behaviour}_{_when}"] = make(_behaviour, _when)
