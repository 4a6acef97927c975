"""The packed-grid formulation (issue 40's targets: B = 8 / 64 / 256 rows of
1-8k tokens, C = 256, int32 CPU tensors): SGLang's and TensorRT-LLM's torch
function and vLLM's helper (examples/python/packed_grid_engines.py, as the
engines have them) against the drop-ins, returning their results and with out=.

Run by bench/python_bench.py (tools/results.sh python)."""

import random

import torch

import chunkmeta

TITLE = ("Packed grid: the engines' functions against the drop-ins (us per step, C = 256, int32 torch tensors, "
         "rows of 1-8k tokens)")

BATCHES = [8, 64, 256]
CHUNK = 256


def table(bench):
    engines = bench.load("packed_grid_engines")
    lines = ["| function | rows | the engine's | chunkmeta | vs engine | chunkmeta, out= | vs engine |",
             "|---|---|---|---|---|---|---|"]
    for name, theirs_of, ours_of in (
            ("cu_seqlens_to_chunk_indices_offsets (SGLang, TensorRT-LLM)", engines.cu_seqlens_to_chunk_indices_offsets,
             chunkmeta.cu_seqlens_to_chunk_indices_offsets),
            ("compute_varlen_chunk_metadata (vLLM's kernel tests)", engines.compute_varlen_chunk_metadata,
             chunkmeta.compute_varlen_chunk_metadata)):
        for rows in BATCHES:
            rng = random.Random(rows)
            starts = [0]
            for _ in range(rows):
                starts.append(starts[-1] + rng.randint(1024, 8192))
            q = torch.tensor(starts, dtype=torch.int32)
            ours = ours_of(q, CHUNK)
            assert [t.tolist() for t in ours] == [t.tolist() for t in theirs_of(q, CHUNK)]
            engine = bench.timed(lambda: theirs_of(q, CHUNK))
            dropin = bench.timed(lambda: ours_of(q, CHUNK))
            buffers = tuple(torch.empty(t.numel() + 8, dtype=torch.int32) for t in ours)
            into = bench.timed(lambda: ours_of(q, CHUNK, out=buffers))
            lines.append(f"| {name} | {rows} | {engine * 1e6:.1f} | {dropin * 1e6:.2f} | {engine / dropin:.0f}x | "
                         f"{into * 1e6:.2f} | {engine / into:.0f}x |")
    return lines
