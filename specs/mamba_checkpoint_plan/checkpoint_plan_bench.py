"""The checkpoint plan (the checkpoint-plan contract's targets: B = 8 / 64 / 256 rows
of 1-8k new tokens, computed tokens on and off block boundaries, C = 256,
M = 1024 and 2048, int32 torch tensors): vLLM's loop in MambaMixer2's
"all" mode ported over CPU tensors (examples/python/vllm_checkpoint_plan.py,
given the step's Mamba metadata, which the engine has already) against
chunkmeta.mamba_checkpoint_plan (which counts the chunks itself), with its
outputs created, and with out= into buffers sized once.

Run by bench/python_bench.py (tools/results.sh python)."""

import random

import torch

import chunkmeta

TITLE = ("Checkpoint plan: vLLM's loop ported over CPU tensors against the drop-in (us per step, C = 256, int32 torch "
         "tensors, rows of 1-8k new tokens)")

CHECKPOINT_BATCHES = [8, 64, 256]
CHECKPOINT_CHUNK = 256


def checkpoint_workload(rows, block_size, seed):
    """Rows of 1-8k new tokens; computed tokens on a block boundary, one either side of one, or anywhere."""
    rng = random.Random(seed)
    computed, starts = [], [0]
    for _ in range(rows):
        boundary = rng.randint(0, 8) * block_size
        computed.append(max(0, rng.choice([boundary, boundary - 1, boundary + 1, rng.randint(0, 16384)])))
        starts.append(starts[-1] + rng.randint(1024, 8192))
    return computed, starts


def table(bench):
    """The table's Markdown lines."""
    vllm = bench.load("vllm_checkpoint_plan")
    lines = ["| rows | M | writes | vLLM's loop | chunkmeta | vs loop | chunkmeta, out= | vs loop |",
             "|---|---|---|---|---|---|---|---|"]
    for block_size in (1024, 2048):
        for rows in CHECKPOINT_BATCHES:
            computed, starts = checkpoint_workload(rows, block_size, seed=rows * block_size)
            c_t = torch.tensor(computed, dtype=torch.int32)
            q_t = torch.tensor(starts, dtype=torch.int32)
            _, _, last = chunkmeta.compute_chunk_metadata(CHECKPOINT_CHUNK, rows, c_t, q_t)
            ours = chunkmeta.mamba_checkpoint_plan(CHECKPOINT_CHUNK, block_size, c_t, q_t)
            theirs = vllm.checkpoint_loop(CHECKPOINT_CHUNK, block_size, c_t, q_t, last)
            assert all(torch.equal(a, b) for a, b in zip(ours, theirs))  # no row without new tokens here
            loop = bench.timed(lambda: vllm.checkpoint_loop(CHECKPOINT_CHUNK, block_size, c_t, q_t, last))
            dropin = bench.timed(lambda: chunkmeta.mamba_checkpoint_plan(CHECKPOINT_CHUNK, block_size, c_t, q_t))
            sizes = chunkmeta.mamba_checkpoint_plan_max_output_sizes(8192 * rows, rows, CHECKPOINT_CHUNK, block_size)
            buffers = tuple(torch.empty(size, dtype=torch.int32) for size in sizes)
            into = bench.timed(lambda: chunkmeta.mamba_checkpoint_plan(CHECKPOINT_CHUNK, block_size, c_t, q_t, out=buffers))
            lines.append(f"| {rows} | {block_size} | {ours[3].numel()} | {loop * 1e6:.1f} | {dropin * 1e6:.2f} | "
                         f"{loop / dropin:.0f}x | {into * 1e6:.2f} | {loop / into:.0f}x |")
    return lines
