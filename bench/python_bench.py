#!/usr/bin/env python3
"""The Python drop-ins against what engines run today, and against the C++ library.

Mamba (the mamba contract's four anchor workloads, chunk size 256 by default; row
lengths uniform in [mean/2, 3*mean/2] with a fixed seed; computed tokens 0, or
uniform in [1, 8191] and not a multiple of the chunk size in the unaligned one):

  overhead   chunkmeta.compute_chunk_metadata over C++ fast_into on the same int32
             inputs (fast_into writes into buffers allocated once), with torch
             tensors, numpy arrays, and out= into numpy and torch buffers
             (outputs created and written included);
  host path  what the engine does per step until int32 CPU tensors are ready to
             upload: the spec's procedure in plain Python (examples/python/
             reference_procedure.py) and a closed-form Python rewrite (the
             proposal's own code is not in this repository: ours computes each
             row in closed form, no loop per chunk), each followed by
             torch.tensor(list, dtype=torch.int32) per array, against
             chunkmeta's drop-in (tensors out) and out= into the engine's
             persistent buffers (numpy views of torch tensors, as vLLM's
             CpuGpuBuffer keeps them; the lengths returned say what to upload).

FLA (the FLA contract's anchors: B = 8 / 64 / 256 sequences of 1-8k tokens, C = 64,
int32 torch cu_seqlens): chunk_indices and chunk_offsets together, FLA's
current and older torch formulations (examples/python/fla_index.py) against
chunkmeta's drop-ins, outputs created included, and with out= into buffers
sized once by fla_max_output_sizes.

The checkpoint plan (the checkpoint-plan contract's targets: B = 8 / 64 / 256 rows
of 1-8k new tokens, computed tokens on and off block boundaries, C = 256,
M = 1024 and 2048, int32 torch tensors): vLLM's loop in MambaMixer2's
"all" mode ported over CPU tensors (examples/python/vllm_checkpoint_plan.py,
given the step's Mamba metadata, which the engine has already) against
chunkmeta.mamba_checkpoint_plan (which counts the chunks itself), with its
outputs created, and with out= into buffers sized once.

The conv1d program map (the conv1d contract's targets: B = 8 / 64 / 256 rows of
1-8k tokens, block_m = 8, int32 torch query_start_loc): vLLM's
compute_causal_conv1d_metadata ported over CPU tensors and numpy
(examples/python/vllm_conv1d_metadata.py, its two buffers allocated and filled
every call as vLLM does) against chunkmeta.causal_conv1d_program_map, with its
outputs created, and with out= into persistent buffers (written and padded
with -1 every call).

Chunked local attention (the local-attention contract's targets: B = 8 / 64 /
256 rows of 1-8k new tokens after 0-32k computed ones, A = 8192, P = 16, int32
CPU tensors, the engine's block table of ceil(max s / P) columns): vLLM's
make_local_attention_virtual_batches ported over numpy and CPU tensors
(examples/python/vllm_local_attention.py), the local block table gathered,
against chunkmeta.local_attention_virtual_batches given the block table
(one call: the five arrays and the local table), returning and with out=.

Best of 7 runs; microseconds per call. Prints Markdown tables.

    PYTHONPATH=build/default/python python3 bench/python_bench.py [--chunk-size 256]
"""

import argparse
import importlib.util
import random
import sys
import timeit
from pathlib import Path

import numpy as np
import torch

import chunkmeta

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "python"
sys.path.insert(0, str(EXAMPLES))  # the examples import each other (vllm_checkpoint_plan: reference_procedure)

ANCHORS = [  # name, rows, mean new tokens, unaligned computed tokens
    ("prefill-heavy, bs256 x ~1536", 256, 1536, False),
    ("long prompts, bs64 x ~8k", 64, 8192, False),
    ("chunked prefill, bs256, unaligned", 256, 1536, True),
    ("small batch, bs8 x ~2k", 8, 2048, False),
]
FLA_BATCHES = [8, 64, 256]
FLA_CHUNK = 64


def load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def best_of(statement, number, repeat=7):
    """Seconds per call, the best of `repeat` runs of `number` calls (the least disturbed)."""
    return min(timeit.repeat(statement, number=number, repeat=repeat)) / number


def calls_for(seconds_each):
    """Enough calls for about 50 ms a run."""
    return max(10, int(0.05 / max(seconds_each, 1e-9)))


def timed(statement):
    return best_of(statement, calls_for(best_of(statement, 3, repeat=2)))


def anchor_workload(rows, mean, unaligned, chunk_size, seed=1234):
    rng = random.Random(seed)
    computed, starts = [], [0]
    for _ in range(rows):
        c = 0
        while unaligned and c % chunk_size == 0:
            c = rng.randint(1, 8191)
        computed.append(c)
        starts.append(starts[-1] + rng.randint(mean // 2, 3 * mean // 2))
    return computed, starts


def closed_form_rewrite(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu):
    """Per row in closed form: the realigning head chunk, then the body chunks' starts as one range."""
    computed = num_computed_tokens_p_cpu.tolist()
    q = query_start_loc_p_cpu.tolist()
    cu, seq, last = [], [], []
    pos = 0
    for i in range(num_prefills):
        n = q[i + 1] - q[i]
        gap = -computed[i] % chunk_size
        head = min(n, gap)
        if gap:
            cu.append(pos)
        body = range(pos + head, pos + n, chunk_size)
        cu.extend(body)
        seq.extend([i] * ((1 if gap else 0) + len(body)))
        last.append(len(seq) - 1)
        pos += n
    cu.append(pos)
    return cu, seq, last


def to_tensors(lists):
    return tuple(torch.tensor(values, dtype=torch.int32) for values in lists)


def mamba_tables(chunk_size):
    original = load("reference_procedure").compute_chunk_metadata
    overhead = ["| workload | chunks | C++ fast_into | torch | numpy | out= numpy | out= torch |", "|---|---|---|---|---|---|---|"]
    host = ["| workload | spec procedure + tensors | rewrite + tensors | chunkmeta, tensors | chunkmeta, out= buffers | "
            "vs rewrite | vs rewrite, out= | vs spec procedure |", "|---|---|---|---|---|---|---|---|"]
    for name, rows, mean, unaligned in ANCHORS:
        computed, starts = anchor_workload(rows, mean, unaligned, chunk_size)
        t_computed, t_starts = (torch.tensor(v, dtype=torch.int32) for v in (computed, starts))
        n_computed, n_starts = (np.array(v, dtype=np.int32) for v in (computed, starts))
        got = chunkmeta.compute_chunk_metadata(chunk_size, rows, t_computed, t_starts)
        for other in (original, closed_form_rewrite):
            assert [a.tolist() for a in got] == list(map(list, other(chunk_size, rows, t_computed, t_starts))), name
        sizes = chunkmeta.max_output_sizes(int(starts[-1]) + 1, rows, chunk_size)
        # Persistent buffers as the engine keeps them: torch tensors with numpy views of the same memory.
        buffers = [torch.zeros(n, dtype=torch.int32) for n in sizes]
        views = tuple(b.numpy() for b in buffers)

        fast_into = min(chunkmeta._chunkmeta._fast_into_nanoseconds(chunk_size, t_computed, t_starts, 200000)
                        for _ in range(7)) * 1e-9
        torch_s = timed(lambda: chunkmeta.compute_chunk_metadata(chunk_size, rows, t_computed, t_starts))
        numpy_s = timed(lambda: chunkmeta.compute_chunk_metadata(chunk_size, rows, n_computed, n_starts))
        out_numpy = timed(lambda: chunkmeta.compute_chunk_metadata(chunk_size, rows, n_computed, n_starts, out=views))
        out_torch = timed(lambda: chunkmeta.compute_chunk_metadata(chunk_size, rows, t_computed, t_starts,
                                                                   out=tuple(buffers)))
        us = lambda s: f"{(s - fast_into) * 1e6:.2f}"  # noqa: E731
        overhead.append(f"| {name} | {got[1].numel()} | {fast_into * 1e6:.3f} | {us(torch_s)} | {us(numpy_s)} | "
                        f"{us(out_numpy)} | {us(out_torch)} |")

        # With out=, the results are in the engine's persistent CPU tensors (through their numpy
        # views), and the lengths returned are what its upload of the first n entries takes.
        original_s = timed(lambda: to_tensors(original(chunk_size, rows, t_computed, t_starts)))
        rewrite_s = timed(lambda: to_tensors(closed_form_rewrite(chunk_size, rows, t_computed, t_starts)))
        engine_out_s = out_numpy
        host.append(f"| {name} | {original_s * 1e6:.1f} | {rewrite_s * 1e6:.1f} | {torch_s * 1e6:.2f} | "
                    f"{engine_out_s * 1e6:.2f} | {rewrite_s / torch_s:.0f}x | {rewrite_s / engine_out_s:.0f}x | "
                    f"{original_s / torch_s:.0f}x |")
    return overhead, host


def fla_table():
    fla = load("fla_index")
    rng = random.Random(4321)
    table = ["| sequences | chunks | torch, current | torch, older | chunkmeta | vs current | vs older | "
             "chunkmeta, out= | vs current | C++ (both) | overhead |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for batch in FLA_BATCHES:
        cu = [0]
        for _ in range(batch):
            cu.append(cu[-1] + rng.randint(1024, 8192))
        cu_t = torch.tensor(cu, dtype=torch.int32)
        indices = chunkmeta.prepare_chunk_indices(cu_t, FLA_CHUNK)
        offsets = chunkmeta.prepare_chunk_offsets(cu_t, FLA_CHUNK)
        assert torch.equal(indices, fla.prepare_chunk_indices(cu_t, FLA_CHUNK))
        assert torch.equal(offsets, fla.prepare_chunk_offsets(cu_t, FLA_CHUNK))
        current = timed(lambda: (fla.prepare_chunk_indices(cu_t, FLA_CHUNK), fla.prepare_chunk_offsets(cu_t, FLA_CHUNK)))
        older = timed(lambda: (fla.prepare_chunk_indices_older(cu_t, FLA_CHUNK),
                               fla.prepare_chunk_offsets(cu_t, FLA_CHUNK)))
        ours = timed(lambda: (chunkmeta.prepare_chunk_indices(cu_t, FLA_CHUNK),
                              chunkmeta.prepare_chunk_offsets(cu_t, FLA_CHUNK)))
        # out=: into buffers sized once from the engine's limits, as engines keep persistent ones.
        rows, entries = chunkmeta.fla_max_output_sizes(8192 * batch, batch, FLA_CHUNK)
        indices_buffer = torch.empty((rows, 2), dtype=torch.int32)
        offsets_buffer = torch.empty(entries, dtype=torch.int64)
        into = timed(lambda: (chunkmeta.prepare_chunk_indices(cu_t, FLA_CHUNK, out=indices_buffer),
                              chunkmeta.prepare_chunk_offsets(cu_t, FLA_CHUNK, out=offsets_buffer)))
        assert torch.equal(indices_buffer[:indices.shape[0]], indices)
        library = min(chunkmeta._chunkmeta._fla_into_nanoseconds(FLA_CHUNK, cu_t, 100000) for _ in range(7)) * 1e-9
        table.append(f"| {batch} | {indices.shape[0]} | {current * 1e6:.1f} | {older * 1e6:.1f} | {ours * 1e6:.2f} | "
                     f"{current / ours:.0f}x | {older / ours:.0f}x | {into * 1e6:.2f} | {current / into:.0f}x | "
                     f"{library * 1e6:.2f} | {(ours - library) * 1e6:.2f} |")
    return table


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


def checkpoint_table():
    vllm = load("vllm_checkpoint_plan")
    table = ["| rows | M | writes | vLLM's loop | chunkmeta | vs loop | chunkmeta, out= | vs loop |",
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
            loop = timed(lambda: vllm.checkpoint_loop(CHECKPOINT_CHUNK, block_size, c_t, q_t, last))
            dropin = timed(lambda: chunkmeta.mamba_checkpoint_plan(CHECKPOINT_CHUNK, block_size, c_t, q_t))
            sizes = chunkmeta.mamba_checkpoint_plan_max_output_sizes(8192 * rows, rows, CHECKPOINT_CHUNK, block_size)
            buffers = tuple(torch.empty(size, dtype=torch.int32) for size in sizes)
            into = timed(lambda: chunkmeta.mamba_checkpoint_plan(CHECKPOINT_CHUNK, block_size, c_t, q_t, out=buffers))
            table.append(f"| {rows} | {block_size} | {ours[3].numel()} | {loop * 1e6:.1f} | {dropin * 1e6:.2f} | "
                         f"{loop / dropin:.0f}x | {into * 1e6:.2f} | {loop / into:.0f}x |")
    return table


CONV1D_BATCHES = [8, 64, 256]


def conv1d_table():
    vllm = load("vllm_conv1d_metadata")
    table = ["| rows | programs | vLLM's function | chunkmeta | vs vLLM | chunkmeta, out= | vs vLLM |",
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
        theirs = timed(lambda: vllm.compute_causal_conv1d_metadata(q_t))
        dropin = timed(lambda: chunkmeta.causal_conv1d_program_map(q_t))
        buffers = (torch.empty(rows, dtype=torch.int32), torch.empty(batch_ptr.numel(), dtype=torch.int32),
                   torch.empty(batch_ptr.numel(), dtype=torch.int32))
        into = timed(lambda: chunkmeta.causal_conv1d_program_map(q_t, out=buffers))
        assert torch.equal(buffers[1], batch_ptr) and torch.equal(buffers[2], offsets)
        table.append(f"| {rows} | {tot} | {theirs * 1e6:.1f} | {dropin * 1e6:.2f} | {theirs / dropin:.0f}x | "
                     f"{into * 1e6:.2f} | {theirs / into:.0f}x |")
    return table


LOCAL_ATTN_BATCHES = [8, 64, 256]
LOCAL_ATTN_CHUNK, LOCAL_ATTN_PAGE = 8192, 16


def local_attention_table():
    vllm = load("vllm_local_attention")
    A, P = LOCAL_ATTN_CHUNK, LOCAL_ATTN_PAGE
    table = ["| rows | virtual batches | vLLM's function | chunkmeta | vs vLLM | chunkmeta, out= | vs vLLM |",
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

        port = timed(lambda: vllm.make_local_attention_virtual_batches(A, q_t, s_t, block_table, P))
        returned = timed(lambda: chunkmeta.local_attention_virtual_batches(A, P, q_t, s_t, block_table=block_table))
        written = timed(lambda: chunkmeta.local_attention_virtual_batches(A, P, q_t, s_t, block_table=block_table,
                                                                          out=buffers))
        table.append(f"| {rows} | {ours[1].numel()} | {port * 1e6:.1f} | {returned * 1e6:.2f} | {port / returned:.0f}x | "
                     f"{written * 1e6:.2f} | {port / written:.0f}x |")
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunk-size", type=int, default=256)
    args = parser.parse_args()
    torch.set_num_threads(1)
    # FLA's first: after the Mamba tables, torch's allocations for FLA's B = 256
    # formulation ran ~14x slower here (1.4 ms instead of 0.1), a state of the
    # process rather than a cost of the formulation.
    fla = fla_table()
    overhead, host = mamba_tables(args.chunk_size)
    print(f"Mamba drop-in: overhead over C++ fast_into (us per call, chunk size {args.chunk_size}; "
          "fast_into's own time in its column)\n")
    print("\n".join(overhead))
    print(f"\nMamba host path: compute, then int32 CPU tensors ready to upload (us per step, chunk size "
          f"{args.chunk_size})\n")
    print("\n".join(host))
    print(f"\nFLA drop-ins: chunk_indices and chunk_offsets together (us per step, C = {FLA_CHUNK}, int32 torch "
          "cu_seqlens, sequences of 1-8k tokens)\n")
    print("\n".join(fla))
    print(f"\nCheckpoint plan: vLLM's loop ported over CPU tensors against the drop-in (us per step, C = "
          f"{CHECKPOINT_CHUNK}, int32 torch tensors, rows of 1-8k new tokens)\n")
    print("\n".join(checkpoint_table()))
    print("\nConv1d program map: vLLM's compute_causal_conv1d_metadata ported over CPU tensors against the drop-in "
          "(us per step, block_m = 8, int32 torch query_start_loc, rows of 1-8k tokens, vLLM's buffers of "
          "2 max(1024, tot) entries)\n")
    print("\n".join(conv1d_table()))
    print(f"\nChunked local attention: vLLM's make_local_attention_virtual_batches ported over numpy and CPU tensors "
          f"against the drop-ins, the local block table gathered (us per step, A = {LOCAL_ATTN_CHUNK}, P = "
          f"{LOCAL_ATTN_PAGE}, int32 CPU tensors, rows of 1-8k new tokens after 0-32k computed)\n")
    print("\n".join(local_attention_table()))


if __name__ == "__main__":
    main()
