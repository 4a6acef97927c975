#!/usr/bin/env python3
"""A `cmd:` implementation that answers through `chunkmeta compute` (correctly)
until it meets a workload of two or more rows, then misbehaves in one way:

    misbehave.py MODE CHUNKMETA
    MODE: crash | hang | garbage | skip | exit-early | short-binary | twice | deep | flood | escape
          | wrong | no-flush | control | slow-start-spin
    (escape: starts three sleeping descendants in sessions of their own (setsid) at start, each with the
    extra argument MARKER on its command line, then hangs like hang;
    wrong: cu_chunk_seqlen[0] off by one; no-flush: its answer written but never flushed, then it reads on;
    control: a failure whose summary holds terminal escapes, a bell, a NUL and a forged "VERIFIED" line;
    slow-start-spin: takes 2 s to start, as a program importing torch does, then spins, never idle)

With MISBEHAVE_WHEN=first in its environment it misbehaves on its first two
lines (the harness's warm-up) instead, and is right on every later one.

The harness must turn each into a finding of that workload, shrink it to two
rows (the fewest that trigger it), report it, and never crash or hang itself.
"""

import json
import os
import signal
import subprocess
import sys
import time

mode, chunkmeta = sys.argv[1], sys.argv[2]
if mode == "slow-start-spin":
    time.sleep(2)  # what importing torch costs a program at its start
if mode == "escape":  # descendants in sessions of their own: out of the process group's reach
    for _ in range(3):
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)", sys.argv[3]], start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
# This program reads the relay's answers as JSON lines: the harness's offer of
# binary answers (CHUNKMETA_ANSWER_ENCODING) is not passed on to it.
relay_environment = {k: v for k, v in os.environ.items() if k != "CHUNKMETA_ANSWER_ENCODING"}
relay = subprocess.Popen([chunkmeta, "compute"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         env=relay_environment)


def correct(line):
    relay.stdin.write(line)
    relay.stdin.flush()
    return relay.stdout.readline()


if mode == "no-flush":  # its output buffered as a pipe's is by default, whatever PYTHONUNBUFFERED says
    sys.stdout = open(sys.stdout.fileno(), "w", buffering=1 << 16, closefd=False)
first_only = os.environ.get("MISBEHAVE_WHEN") == "first"
flushing = True  # no-flush: from its first misbehaviour on, it never flushes again (as an adapter that forgot to)
for number, line in enumerate(sys.stdin, start=1):
    request = json.loads(line)
    due = number <= 2 if first_only else len(request.get("num_computed_tokens", [])) >= 2
    if not due:
        sys.stdout.write(correct(line))
        if flushing:
            sys.stdout.flush()
        continue
    print(f"misbehave.py: {mode} on a workload of {len(request.get('num_computed_tokens', []))} rows (line {number})",
          file=sys.stderr, flush=True)
    if mode == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif mode in ("hang", "escape"):
        time.sleep(3600)
    elif mode == "slow-start-spin":  # busy, never idle: only the limit ends it
        while True:
            pass
    elif mode == "twice":  # the right answer, printed twice
        answer = correct(line)
        sys.stdout.write(answer + answer)
        sys.stdout.flush()
    elif mode == "deep":  # a failure object nested far deeper than any answer
        print('{"id":%d,"failure":%s%s}' % (request["id"], "[" * 30000, "]" * 30000), flush=True)
    elif mode == "wrong":
        answer = json.loads(correct(line))
        if "cu_chunk_seqlen" in answer:
            answer["cu_chunk_seqlen"][0] += 1
        print(json.dumps(answer), flush=True)
    elif mode == "no-flush":  # the most common adapter mistake: the answer stays in the buffer
        sys.stdout.write(correct(line))
        flushing = False
    elif mode == "control":
        print(json.dumps({"id": request.get("id"), "failure": {
            "kind": "raised", "summary": "\x1b[2J\x1b[31m\x07\x00boom\nVERIFIED: every property held",
            "detail": "\x1b]0;title\x07\nVERIFIED: every property held"}}), flush=True)
    elif mode == "flood":  # output without end and without a newline
        while True:
            sys.stdout.write("y" * 65536)
    elif mode == "garbage":
        print("Traceback (most recent call last): this is not JSON", flush=True)
    elif mode == "skip":
        pass  # no answer for this line; later lines are answered
    elif mode == "exit-early":
        sys.exit(0)
    elif mode == "short-binary":  # a binary answer's header, then less than it promised, then exit
        sys.stdout.flush()
        sys.stdout.buffer.write(b'{"id":%d,"int32le":[5,0,0]}\n\0\0\0\0' % request["id"])
        sys.stdout.buffer.flush()
        sys.exit(0)
    else:
        sys.exit(f"misbehave.py: unknown mode {mode}")
