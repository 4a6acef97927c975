"""Chunked local attention (the local-attention contract's targets: B = 8 / 64 /
256 rows of 1-8k new tokens after 0-32k computed ones, A = 8192, P = 16, int32
CPU tensors, the engine's block table of ceil(max s / P) columns): vLLM's
make_local_attention_virtual_batches ported over numpy and CPU tensors
(examples/python/vllm_local_attention.py), the local block table gathered,
against chunkmeta.local_attention_virtual_batches given the block table
(one call: the five arrays and the local table), returning and with out=.

Run by bench/python_bench.py (tools/results.sh python)."""

import random

import torch

import chunkmeta

TITLE = ("Chunked local attention: vLLM's make_local_attention_virtual_batches ported over numpy and CPU tensors "
         "against the drop-ins, the local block table gathered (us per step, A = 8192, P = 16, int32 CPU tensors, "
         "rows of 1-8k new tokens after 0-32k computed)")

LOCAL_ATTN_BATCHES = [8, 64, 256]
LOCAL_ATTN_CHUNK, LOCAL_ATTN_PAGE = 8192, 16


def table(bench):
    """The table's Markdown lines."""
    vllm = bench.load("vllm_local_attention")
    A, P = LOCAL_ATTN_CHUNK, LOCAL_ATTN_PAGE
    lines = ["| rows | virtual batches | vLLM's function | chunkmeta | vs vLLM | chunkmeta, out= | vs vLLM |",
             "|---|---|---|---|---|---|---|"]
    for rows in LOCAL_ATTN_BATCHES:
        rng = random.Random(rows)
        starts, seq_lens = [0], []
        for _ in range(rows):
            n = rng.randint(1024, 8192)
            starts.append(starts[-1] + n)
            seq_lens.append(n + rng.randint(0, 32768))
        q_t = torch.tensor(starts, dtype=torch.int32)
        s_t = torch.tensor(seq_lens, dtype=torch.int32)
        block_table = torch.arange(rows * (max(seq_lens) // P + 1), dtype=torch.int32).view(rows, -1)
        theirs = vllm.make_local_attention_virtual_batches(A, q_t, s_t, block_table, P)
        ours = chunkmeta.local_attention_virtual_batches(A, P, q_t, s_t)
        local = chunkmeta.local_attention_block_table(block_table, ours[3], ours[4], A, P)
        assert torch.equal(ours[0], theirs["query_start_loc_cpu"]) and torch.equal(ours[1], theirs["seq_lens_cpu"])
        assert torch.equal(local, theirs["block_table_tensor"])

        assert torch.equal(chunkmeta.local_attention_virtual_batches(A, P, q_t, s_t, block_table=block_table)[5], local)
        sizes = chunkmeta.local_attention_virtual_batches_max_output_sizes(8192 * rows, rows, A, P)
        buffers = tuple(torch.empty(size, dtype=torch.int32) for size in sizes)
        buffers += (torch.empty((sizes[1], A // P), dtype=torch.int32),)

        port = bench.timed(lambda: vllm.make_local_attention_virtual_batches(A, q_t, s_t, block_table, P))
        returned = bench.timed(lambda: chunkmeta.local_attention_virtual_batches(A, P, q_t, s_t, block_table=block_table))
        written = bench.timed(lambda: chunkmeta.local_attention_virtual_batches(A, P, q_t, s_t, block_table=block_table,
                                                                          out=buffers))
        lines.append(f"| {rows} | {ours[1].numel()} | {port * 1e6:.1f} | {returned * 1e6:.2f} | {port / returned:.0f}x | "
                     f"{written * 1e6:.2f} | {port / written:.0f}x |")
    return lines
