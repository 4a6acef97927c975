"""Internal prefill checkpoints (the targets of issue 39: B = 8 / 64 / 256 rows
of 1-8k new tokens, C = 256, int32 CPU tensors): the PR's chunk metadata loop
with a checkpoint in half the rows, and the planner's Python loop
(examples/python/vllm_prefill_checkpoints.py, ported as a user writes them),
against compute_chunk_metadata(..., checkpoint_offsets_p=...) and
compute_mamba_prefill_checkpoints, returning their results and with out=.

Run by bench/python_bench.py (tools/results.sh python)."""

import random

import torch

import chunkmeta

TITLE = ("Internal prefill checkpoints: the PR's loops ported against the drop-ins (us per step, C = 256, int32 torch "
         "tensors, rows of 1-8k new tokens, a checkpoint in half the rows; the planner on lists, as the builder has them)")

BATCHES = [8, 64, 256]
CHUNK = 256


def workload(rows, seed):
    rng = random.Random(seed)
    computed, starts, offsets = [], [0], []
    for i in range(rows):
        n = rng.randint(1024, 8192)
        computed.append(rng.choice([0, rng.randint(0, 16384)]))
        starts.append(starts[-1] + n)
        offsets.append(rng.randint(1, n - 1) if i % 2 == 0 else 0)
    return computed, starts, offsets


def table(bench):
    vllm = bench.load("vllm_prefill_checkpoints")
    lines = ["| computation | rows | the loop | chunkmeta | vs loop | chunkmeta, out= | vs loop |",
             "|---|---|---|---|---|---|---|"]
    for rows in BATCHES:
        computed, starts, offsets = workload(rows, seed=rows)
        c_t, q_t = torch.tensor(computed, dtype=torch.int32), torch.tensor(starts, dtype=torch.int32)
        o_t = torch.tensor(offsets, dtype=torch.int32)
        ours = chunkmeta.compute_chunk_metadata(CHUNK, rows, c_t, q_t, o_t)
        theirs = vllm._compute_chunk_metadata(CHUNK, rows, c_t, q_t, o_t)
        assert [t.tolist() for t in ours] == [list(v) for v in theirs]
        loop = bench.timed(lambda: [torch.tensor(v, dtype=torch.int32)
                                    for v in vllm._compute_chunk_metadata(CHUNK, rows, c_t, q_t, o_t)])
        dropin = bench.timed(lambda: chunkmeta.compute_chunk_metadata(CHUNK, rows, c_t, q_t, o_t))
        sizes = chunkmeta.checkpointed_chunks_max_output_sizes(8192 * rows, rows, CHUNK)
        buffers = tuple(torch.empty(size, dtype=torch.int32) for size in sizes)
        into = bench.timed(lambda: chunkmeta.compute_chunk_metadata(CHUNK, rows, c_t, q_t, o_t, out=buffers))
        lines.append(f"| chunks with checkpoints | {rows} | {loop * 1e6:.1f} | {dropin * 1e6:.2f} | {loop / dropin:.0f}x | "
                     f"{into * 1e6:.2f} | {loop / into:.0f}x |")
    for rows in BATCHES:
        computed, starts, _ = workload(rows, seed=rows + 1)
        n = [b - a for a, b in zip(starts, starts[1:])]
        s = [c + q for c, q in zip(computed, n)]
        ours = chunkmeta.compute_mamba_prefill_checkpoints(s, n, 256, 1024, 16, False)
        assert list(ours) == list(vllm.compute_mamba_prefill_checkpoints(s, n, 256, 1024, 16, False))
        loop = bench.timed(lambda: vllm.compute_mamba_prefill_checkpoints(s, n, 256, 1024, 16, False))
        dropin = bench.timed(lambda: chunkmeta.compute_mamba_prefill_checkpoints(s, n, 256, 1024, 16, False))
        offsets, cols = torch.empty(rows, dtype=torch.int32), torch.empty(rows, dtype=torch.int64)
        into = bench.timed(lambda: chunkmeta.compute_mamba_prefill_checkpoints(s, n, 256, 1024, 16, False,
                                                                                out=(offsets, cols)))
        lines.append(f"| planner (H = 256, M = 1024, alignment 16) | {rows} | {loop * 1e6:.1f} | {dropin * 1e6:.2f} | "
                     f"{loop / dropin:.0f}x | {into * 1e6:.2f} | {loop / into:.0f}x |")
    return lines
