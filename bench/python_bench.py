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

Each spec folder added since compares its drop-in with the engine's function in
its own table (specs/<folder>/*_bench.py, which says what it measures).

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
SPECS = Path(__file__).resolve().parents[1] / "specs"
sys.path.insert(0, str(EXAMPLES))  # the examples import each other (vllm_checkpoint_plan: reference_procedure)

ANCHORS = [  # name, rows, mean new tokens, unaligned computed tokens
    ("prefill-heavy, bs256 x ~1536", 256, 1536, False),
    ("long prompts, bs64 x ~8k", 64, 8192, False),
    ("chunked prefill, bs256, unaligned", 256, 1536, True),
    ("small batch, bs8 x ~2k", 8, 2048, False),
]
FLA_BATCHES = [8, 64, 256]
FLA_CHUNK = 64


def load(name, path=None):
    """The module `name`: an example (examples/python/<name>.py), or the file at `path`."""
    spec = importlib.util.spec_from_file_location(name, path or EXAMPLES / f"{name}.py")
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
    # Each spec folder's own table (specs/<folder>/*_bench.py: its TITLE and table(bench)).
    for path in sorted(SPECS.glob("*/*_bench.py")):
        module = load(path.stem, path)
        print(f"\n{module.TITLE}\n")
        print("\n".join(module.table(sys.modules[__name__])))


if __name__ == "__main__":
    main()
