#!/usr/bin/env python3
"""A busy machine stalls correct code: is the verdict still right?

A correct function (the spec's procedure, examples/python/reference_procedure.py)
that stalls for STALL seconds in one call of 200, at random (its own seeded
stream), is checked by chunkmeta.check() with CASES cases per property (all of
them, whatever the time) for each seed. A stall longer than a call's limit is
cut short; the timeout must not hold when asked again with a longer limit, so
every run must end VERIFIED, with the stalls listed as slow calls. Prints one
Markdown row per seed and a total line.

    PYTHONPATH=build/default/python python3 bench/stall_tolerance.py [--seeds 20] [--stall 3] [--cases 300]
"""

import argparse
import random
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "python"))
import chunkmeta  # noqa: E402
import reference_procedure  # noqa: E402


def stalling(seed, stall_seconds, one_in):
    stream = random.Random(seed)
    stalls = [0]

    def compute(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu):
        if stream.randrange(one_in) == 0:
            stalls[0] += 1
            time.sleep(stall_seconds)
        return reference_procedure.compute_chunk_metadata(chunk_size, num_prefills, num_computed_tokens_p_cpu,
                                                          query_start_loc_p_cpu)

    return compute, stalls


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--stall", type=float, default=3.0)
    parser.add_argument("--one-in", type=int, default=200)
    parser.add_argument("--cases", type=int, default=300)
    args = parser.parse_args()
    print("| seed | verdict | stalls | calls listed slow | seconds |")
    print("|---|---|---|---|---|")
    verified = 0
    with tempfile.TemporaryDirectory() as reports:
        for seed in range(1, args.seeds + 1):
            compute, stalls = stalling(seed, args.stall, args.one_in)
            start = time.monotonic()
            try:
                summary = chunkmeta.check(compute, seed=seed, cases=args.cases, min_cases=0, time_budget=0,
                                          corpus=[], database=None, report_dir=reports)
                verdict, text = "VERIFIED", summary.text
                verified += 1
            except chunkmeta.CheckFailed as failed:
                verdict, text = "NOT VERIFIED: " + str(failed).splitlines()[0], failed.summary.text
            slow = sum(int(count) for count in re.findall(r"\((\d+) calls? slow: timed out, then answered", text))
            print(f"| {seed} | {verdict} | {stalls[0]} | {slow} | {time.monotonic() - start:.1f} |", flush=True)
    print(f"\nJudged correct on {verified} of {args.seeds} seeds ({args.stall} s stall in 1 of {args.one_in} calls, "
          f"{args.cases} cases per property).")
    return 0 if verified == args.seeds else 1


if __name__ == "__main__":
    sys.exit(main())
