"""Implementations of Mamba's chunk metadata that misbehave in one way at one
time, for the misbehaviour matrix (tests/misbehaving/matrix.py): each is
``<behaviour>_<when>``, a function with vLLM's signature, right except when
its moment comes:

    when:  first  the function's first two calls in its process (the harness's warm-up)
           nth    every workload of two or more rows (cases, shrink steps, confirmations)

The same functions run in check()'s process and behind the adapter (cmd:).
"""

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
}


def make(behaviour, when):
    misbehave = BEHAVIOURS[behaviour]
    key = f"{behaviour}_{when}"

    def fn(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu):
        calls = _calls[key] = _calls.get(key, 0) + 1
        result = compute_chunk_metadata(chunk_size, num_prefills, [int(v) for v in num_computed_tokens_p_cpu],
                                        [int(v) for v in query_start_loc_p_cpu])
        due = calls <= 2 if when == "first" else num_prefills >= 2
        return misbehave(result) if due else result

    fn.__name__ = fn.__qualname__ = key
    return fn


for _behaviour in BEHAVIOURS:
    for _when in WHENS:
        globals()[f"{_behaviour}_{_when}"] = make(_behaviour, _when)
