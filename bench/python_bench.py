#!/usr/bin/env python3
"""chunkmeta.compute_chunk_metadata against the pure-Python procedure and C++ fast_into.

On the SPEC's four anchor workloads (chunk size 256 by default; row lengths uniform
in [mean/2, 3*mean/2] with a fixed seed; computed tokens 0, or uniform in [1, 8191]
and not a multiple of the chunk size in the unaligned one), as the engine calls it:
int32 CPU tensors in, int32 tensors out. Prints, per workload, the time of

  python    examples/python/reference_procedure.py (list conversion, as the PR does),
  chunkmeta chunkmeta.compute_chunk_metadata, including the call and the output tensors,
  fast_into the C++ library on the same inputs into buffers allocated once,

the speed-up over the pure-Python procedure and chunkmeta's overhead over fast_into.

    PYTHONPATH=build/default/python python3 bench/python_bench.py [--chunk-size 256]
"""

import argparse
import importlib.util
import random
import timeit
from pathlib import Path

import torch

import chunkmeta

ANCHORS = [  # name, rows, mean new tokens, unaligned computed tokens
    ("prefill-heavy, bs256 x ~1536", 256, 1536, False),
    ("long prompts, bs64 x ~8k", 64, 8192, False),
    ("chunked prefill, bs256, unaligned", 256, 1536, True),
    ("small batch, bs8 x ~2k", 8, 2048, False),
]


def anchor_workload(rows, mean, unaligned, chunk_size, seed=1234):
    rng = random.Random(seed)
    computed, starts = [], [0]
    for _ in range(rows):
        c = 0
        while unaligned and c % chunk_size == 0:
            c = rng.randint(1, 8191)
        computed.append(c)
        starts.append(starts[-1] + rng.randint(mean // 2, 3 * mean // 2))
    return torch.tensor(computed, dtype=torch.int32), torch.tensor(starts, dtype=torch.int32)


def best_of(statement, number, repeat=7):
    """Seconds per call, the best of `repeat` runs of `number` calls (the least disturbed)."""
    return min(timeit.repeat(statement, number=number, repeat=repeat)) / number


def load_reference_procedure():
    path = Path(__file__).resolve().parents[1] / "examples" / "python" / "reference_procedure.py"
    spec = importlib.util.spec_from_file_location("reference_procedure", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.compute_chunk_metadata


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunk-size", type=int, default=256)
    args = parser.parse_args()
    python_procedure = load_reference_procedure()
    torch.set_num_threads(1)

    print(f"chunk size {args.chunk_size}; best of 7 runs; us per call")
    print(f"| workload | chunks | python | chunkmeta | speed-up | C++ fast_into | overhead |")
    print(f"|---|---|---|---|---|---|---|")
    for name, rows, mean, unaligned in ANCHORS:
        computed, starts = anchor_workload(rows, mean, unaligned, args.chunk_size)
        expected = [torch.tensor(v, dtype=torch.int32) for v in python_procedure(args.chunk_size, rows, computed, starts)]
        got = chunkmeta.compute_chunk_metadata(args.chunk_size, rows, computed, starts)
        assert all(torch.equal(a, b) for a, b in zip(expected, got)), f"{name}: outputs differ"

        python_s = best_of(lambda: python_procedure(args.chunk_size, rows, computed, starts), number=200)
        ours_s = best_of(lambda: chunkmeta.compute_chunk_metadata(args.chunk_size, rows, computed, starts),
                         number=20000)
        fast_into_s = min(chunkmeta._chunkmeta._fast_into_nanoseconds(args.chunk_size, computed, starts, 200000)
                          for _ in range(7)) * 1e-9
        print(f"| {name} | {got[1].numel()} | {python_s * 1e6:.1f} | {ours_s * 1e6:.2f} | "
              f"{python_s / ours_s:.0f}x | {fast_into_s * 1e6:.3f} | {(ours_s - fast_into_s) * 1e6:.2f} |")


if __name__ == "__main__":
    main()
