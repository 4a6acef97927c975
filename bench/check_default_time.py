#!/usr/bin/env python3
"""Seconds to a verdict of `chunkmeta.check(fn)` with the default settings on
vLLM's `_compute_chunk_metadata` as vLLM has it (examples/python/), one
process per seed as a pytest run would pay it (import included), on a quiet
machine and beside two CPU-bound processes. Prints a Markdown table.

    PYTHONPATH=build/default/python python3 bench/check_default_time.py [--seeds 10]
"""

import argparse
import multiprocessing
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples", "python")
RUN = ("import sys, chunkmeta; sys.path.insert(0, sys.argv[2]); import vllm_chunk_metadata as v; "
       "s = chunkmeta.check(v._compute_chunk_metadata, seed=int(sys.argv[1]), database=None, report_dir=sys.argv[3]); "
       "print('VERIFIED' if s.passed else 'NOT VERIFIED')")


def burn(stop):
    while not stop.is_set():
        sum(range(10000))


def seconds(seed, scratch):
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", RUN, str(seed), EXAMPLES, scratch], capture_output=True, text=True)
    took = time.perf_counter() - start
    verdict = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else f"exit {done.returncode}"
    return took, verdict


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    scratch = os.environ.get("TMPDIR", "/tmp")
    print("| machine | seeds | verdicts | seconds (min / median / max) | within 10 s |")
    print("|---|---|---|---|---|")
    for loaded in (False, True):
        stop = multiprocessing.Event()
        burners = [multiprocessing.Process(target=burn, args=(stop,)) for _ in range(2 if loaded else 0)]
        for b in burners:
            b.start()
        runs = [seconds(seed, scratch) for seed in range(1, args.seeds + 1)]
        stop.set()
        for b in burners:
            b.join()
        times = [t for t, _ in runs]
        verdicts = sorted({v for _, v in runs})
        print(f"| {'beside two CPU-bound processes' if loaded else 'quiet'} | 1-{args.seeds} | {', '.join(verdicts)} | "
              f"{min(times):.1f} / {statistics.median(times):.1f} / {max(times):.1f} | "
              f"{sum(t <= 10 for t in times)} of {len(times)} |")


if __name__ == "__main__":
    main()
