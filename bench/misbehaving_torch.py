#!/usr/bin/env python3
"""Implementations that misbehave the way real ones do, for tools/time_to_report.sh:
correct (the spec's procedure on int32 torch tensors) until a workload of two or
more rows, then

  runaway  a 32-bit round-up that wrapped, now counting to 2^32 in Python;
  crash    in a program, SIGSEGV; as a function (chunkmeta.check), an IndexError;
  hang     waits on a lock that is never released.

As a program it is a plain JSON Lines implementation of `chunkmeta compute`'s
protocol written the way a user would write one (json and torch, no adapter):

    chunkmeta check --valid-only --impl "cmd:python3 bench/misbehaving_torch.py hang"

As a module its functions have the engine's signature, for chunkmeta.check():
runaway, crash, hang.
"""

import json
import os
import signal
import sys
import threading
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "python"))
import reference_procedure  # noqa: E402


def misbehave(mode, rows):
    if rows < 2:
        return
    if mode == "runaway":
        count = 0
        while count < 2**32:
            count += 1
    elif mode == "crash":
        if __name__ == "__main__":
            os.kill(os.getpid(), signal.SIGSEGV)
        raise IndexError("list index out of range")
    elif mode == "hang":
        threading.Event().wait()


def _function(mode):
    def compute(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu):
        misbehave(mode, num_prefills)
        return reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, num_computed_tokens_p_cpu,
                                                          query_start_loc_p_cpu)

    compute.__name__ = compute.__qualname__ = mode
    return compute


runaway, crash, hang = _function("runaway"), _function("crash"), _function("hang")


def main():
    mode = sys.argv[1]
    for line in sys.stdin:
        request = json.loads(line)
        computed = torch.tensor(request["num_computed_tokens"], dtype=torch.int32)
        starts = torch.tensor(request["query_start_loc"], dtype=torch.int32)
        rows = len(request["num_computed_tokens"])
        misbehave(mode, rows)
        cu, seq, last = reference_procedure.compute_chunk_metadata(request["chunk_size"], rows, computed, starts)
        answer = {"id": request["id"], "cu_chunk_seqlen": cu, "seq_idx": seq, "last_chunk_indices": last}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
