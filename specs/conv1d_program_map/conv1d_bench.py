"""The conv1d program map (the conv1d contract's targets: B = 8 / 64 / 256 rows of
1-8k tokens, block_m = 8, int32 torch query_start_loc): vLLM's
compute_causal_conv1d_metadata ported over CPU tensors and numpy
(examples/python/vllm_conv1d_metadata.py, its two buffers allocated and filled
every call as vLLM does) against chunkmeta.causal_conv1d_program_map, with its
outputs created, and with out= into persistent buffers (written and padded
with -1 every call).

Run by bench/python_bench.py (tools/results.sh python)."""

import random

import torch

import chunkmeta

TITLE = ("Conv1d program map: vLLM's compute_causal_conv1d_metadata ported over CPU tensors against the drop-in (us per "
         "step, block_m = 8, int32 torch query_start_loc, rows of 1-8k tokens, vLLM's buffers of 2 max(1024, tot) "
         "entries)")

CONV1D_BATCHES = [8, 64, 256]


def table(bench):
    """The table's Markdown lines."""
    vllm = bench.load("vllm_conv1d_metadata")
    lines = ["| rows | programs | vLLM's function | chunkmeta | vs vLLM | chunkmeta, out= | vs vLLM |",
             "|---|---|---|---|---|---|---|"]
    for rows in CONV1D_BATCHES:
        rng = random.Random(rows)
        starts = [0]
        for _ in range(rows):
            starts.append(starts[-1] + rng.randint(1, 8192))
        q_t = torch.tensor(starts, dtype=torch.int32)
        nums_dict, batch_ptr, offsets = vllm.compute_causal_conv1d_metadata(q_t)
        ours = chunkmeta.causal_conv1d_program_map(q_t)
        tot = nums_dict[8]["tot"]
        assert torch.equal(ours[0], nums_dict[8]["nums"])
        assert torch.equal(ours[1], batch_ptr[:tot]) and torch.equal(ours[2], offsets[:tot])
        theirs = bench.timed(lambda: vllm.compute_causal_conv1d_metadata(q_t))
        dropin = bench.timed(lambda: chunkmeta.causal_conv1d_program_map(q_t))
        buffers = (torch.empty(rows, dtype=torch.int32), torch.empty(batch_ptr.numel(), dtype=torch.int32),
                   torch.empty(batch_ptr.numel(), dtype=torch.int32))
        into = bench.timed(lambda: chunkmeta.causal_conv1d_program_map(q_t, out=buffers))
        assert torch.equal(buffers[1], batch_ptr) and torch.equal(buffers[2], offsets)
        lines.append(f"| {rows} | {tot} | {theirs * 1e6:.1f} | {dropin * 1e6:.2f} | {theirs / dropin:.0f}x | "
                     f"{into * 1e6:.2f} | {theirs / into:.0f}x |")
    return lines
