"""Mamba-2's chunk metadata as the rest of the field cuts it, each written as a
function of the builder's four arguments returning its three arrays, so that
chunkmeta.check(fn, spec="kernel.mamba2_chunks") judges it by what the kernel
computes from it (the kernels' view), with no reference to equal:

- `megatron_chunks`: Megatron-style per-sequence chunks, from each sequence's
  own start (no realignment for computed tokens): max(1, ceil(n / C)) chunks a
  row, a row without tokens one empty chunk. Kernel-adequate; not
  cache-adequate once a row resumes off the grid.
- `packed_grid_chunks`: vLLM's compute_varlen_chunk_metadata (its kernel tests'
  helper, SPEC Part 7), which reads no computed tokens: the packed batch's grid,
  cut at every row start. Kernel-adequate; not cache-adequate for a row that
  starts off the grid.
- `sglang_chunks`: SGLang's and TensorRT-LLM's cu_seqlens_to_chunk_indices_offsets
  read through the chunk-indices form (piece k starts at chunk_indices[k] C +
  chunk_offsets[k]). The same pieces as the packed grid where every row has
  tokens; on a row without tokens the torch function raises IndexError or emits a
  zero-length piece, which chunkmeta reports.

vLLM's own builder (chunkmeta.compute_chunk_metadata is its drop-in) is both.
docs/field.md lists which formulation is adequate for what.
"""

import bisect

import torch

from packed_grid_engines import compute_varlen_chunk_metadata, cu_seqlens_to_chunk_indices_offsets


def _int32(values):
    return torch.tensor(values, dtype=torch.int32)


def megatron_chunks(chunk_size, num_prefills, num_computed_tokens, query_start_loc):
    starts = [int(v) for v in query_start_loc[: num_prefills + 1]]
    base = starts[0]
    cu_chunk_seqlen, seq_idx, last_chunk_indices = [], [], []
    for row in range(num_prefills):
        begin, end = starts[row] - base, starts[row + 1] - base
        chunks = max(1, -(-(end - begin) // chunk_size))
        for j in range(chunks):
            cu_chunk_seqlen.append(begin + j * chunk_size)
            seq_idx.append(row)
        last_chunk_indices.append(len(seq_idx) - 1)
    cu_chunk_seqlen.append(starts[-1] - base)
    return _int32(cu_chunk_seqlen), _int32(seq_idx), _int32(last_chunk_indices)


def packed_grid_chunks(chunk_size, num_prefills, num_computed_tokens, query_start_loc):
    starts = torch.as_tensor(query_start_loc[: num_prefills + 1]).to(torch.int64)
    cu_chunk_seqlens, last_chunk_indices, seq_idx = compute_varlen_chunk_metadata(starts - starts[0], chunk_size)
    return cu_chunk_seqlens, seq_idx, last_chunk_indices


def sglang_chunks(chunk_size, num_prefills, num_computed_tokens, query_start_loc):
    starts = torch.as_tensor(query_start_loc[: num_prefills + 1]).to(torch.int64)
    starts = starts - starts[0]
    chunk_indices, chunk_offsets = cu_seqlens_to_chunk_indices_offsets(starts, chunk_size)
    piece_starts = (chunk_indices.to(torch.int64) * chunk_size + chunk_offsets).tolist()
    bounds = starts.tolist()
    # Each piece runs as the row its start lies in (the kernel's seq_idx), up to the next piece's start.
    seq_idx = [min(bisect.bisect_right(bounds, start), num_prefills) - 1 for start in piece_starts]
    last_chunk_indices = [-1] * num_prefills
    for k, row in enumerate(seq_idx):
        last_chunk_indices[row] = k
    return _int32(piece_starts + [bounds[-1]]), _int32(seq_idx), _int32(last_chunk_indices)
