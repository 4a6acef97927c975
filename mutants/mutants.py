"""The mutant catalogue (mutants.cpp) as engine-style Python functions, for the
three-door test: each slip must be caught through the Python adapter with the
same minimal counterexample as built in. Test-only code. Mamba's mutants have
the engine's signature; FLA's have FLA's (cu_seqlens, chunk_size).

Each function is the reference procedure rewritten wrong in exactly one way,
with C++'s int32 conversions and truncating division reproduced, so that its
answers equal the C++ mutant's on every valid workload.
"""

import bisect
import math
import struct

INT32_MAX = 2**31 - 1


def _ints(values):
    return values.tolist() if hasattr(values, "tolist") else [int(v) for v in values]


def _int32(x):  # static_cast<std::int32_t>: modular since C++20
    return (x + 2**31) % 2**32 - 2**31


def _int8(x):
    return (x + 128) % 256 - 128


def _int16(x):
    return (x + 2**15) % 2**16 - 2**15


def _trunc_div(a, b):  # C++ integer division rounds toward zero
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _float32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def _rewrite(slip, chunk_size, num_prefills, computed, starts):
    C = chunk_size
    computed = _ints(computed)
    q = _ints(starts)
    cu, seq, last = [], [], []
    pos = q[0] if slip == "absolute_positions" else 0
    for i in range(num_prefills):
        c = computed[i]
        n = q[i + 1] - q[i]
        chunks_before = len(seq)
        misalignment = (c & (C - 1)) if slip == "power_of_two_modulo" else c % C
        gap = 0 if misalignment == 0 else C - misalignment
        if slip == "int32_round_up_overflow":
            total = c + C - 1  # int32 arithmetic: wraps past 2^31-1
            if total > INT32_MAX:
                total -= 2**32
            nxt = _trunc_div(total, C) * C
            gap = nxt - c if nxt - c > 0 else 0
            misalignment = gap
        head = misalignment != 0 and not (slip == "drops_empty_head" and n == 0)
        if head:
            cu.append(_int32(pos))
            seq.append(i)
            length = min(n, gap)
            if slip == "gap_off_by_one":
                length = min(n, gap + 1)
            if slip == "head_not_capped":
                length = min(gap, n + C)
            pos += length
            n -= length
        body = _trunc_div(n + C - 1, C)
        if slip == "ceil_as_floor_plus_one":
            body = _trunc_div(n, C) + 1
        if slip == "float32_ceil":
            body = math.ceil(_float32(_float32(n) / _float32(C)))
        if body > 0:
            # The loop `start = pos; pos += max(0, min(n, C)); n -= that`, body
            # times, in closed form: chunk k starts at pos + min(k*C, max(n, 0)).
            tokens = max(n, 0)
            full = min(body, tokens // C)
            starts = list(range(pos, pos + full * C, C))
            if full < body:
                starts.append(pos + full * C)
                starts.extend([pos + tokens] * (body - full - 1))
            if starts[-1] > INT32_MAX:
                starts = [_int32(x) for x in starts]
            cu.extend(starts)
            # A wide-row path (more than 32 body chunks) that stores seq_idx in 16 bits.
            wide = slip == "int16_seq_idx_wide_rows" and body > 32
            seq.extend([_int16(i) if wide else i] * body)
            advance = min(body * C, tokens)
            pos += advance
            n -= advance
        rowless = len(seq) == chunks_before
        last.append(-1 if slip == "rowless_last_is_minus_one" and rowless else len(cu) - 1)
    cu.append(_int32(pos))
    if slip == "int8_seq_idx":
        seq = [_int8(row) for row in seq]
    if slip == "seq_idx_by_searchsorted":
        row_starts = [q[i] - q[0] for i in range(num_prefills)]
        seq = [bisect.bisect_right(row_starts, start) - 1 for start in cu[:-1]]
    return cu, seq, last


def _mutant(slip):
    def compute(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu):
        return _rewrite(slip, chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu)

    compute.__name__ = compute.__qualname__ = slip  # named as the module attribute it is
    return compute


SLIPS = [
    "gap_off_by_one",
    "head_not_capped",
    "drops_empty_head",
    "rowless_last_is_minus_one",
    "int32_round_up_overflow",
    "seq_idx_by_searchsorted",
    "ceil_as_floor_plus_one",
    "power_of_two_modulo",
    "absolute_positions",
    "float32_ceil",
    "int8_seq_idx",
    "int16_seq_idx_wide_rows",
]
globals().update({slip: _mutant(slip) for slip in SLIPS})


# FLA's slips (specs/fla), each `fn(cu_seqlens, chunk_size)` like FLA's own
# prepare_chunk_indices / prepare_chunk_offsets, giving what the C++ mutant gives.

def _count(slip, length, C):
    if slip == "floor_chunk_counts":
        return length // C
    if slip == "int32_chunk_counts":
        total = length + C - 1  # int32 arithmetic: wraps past 2^31-1
        if total > INT32_MAX:
            total -= 2**32
        return max(0, _trunc_div(total, C))  # a negative count makes no chunk
    return -(-length // C)


def _fla_indices(slip, cu_seqlens, chunk_size):
    cu = _ints(cu_seqlens)
    rows, starts_seen = [], 0
    for i in range(len(cu) - 1):
        for j in range(_count(slip, cu[i + 1] - cu[i], chunk_size)):
            if j == 0:
                starts_seen += 1
            rows.append([starts_seen - 1 if slip == "older_sequence_ids" else i, j])
    return rows


def _fla_offsets(slip, cu_seqlens, chunk_size):
    cu = _ints(cu_seqlens)
    offsets = [0]
    for i in range(len(cu) - 1):
        offsets.append(offsets[-1] + _count(slip, cu[i + 1] - cu[i], chunk_size))
    return offsets[:-1] if slip == "offsets_one_short" else offsets


def _fla_mutant(name, slip, make):
    def compute(cu_seqlens, chunk_size):
        return make(slip, cu_seqlens, chunk_size)

    compute.__name__ = compute.__qualname__ = name
    return compute


FLA_SLIPS = {
    "older_sequence_ids": _fla_mutant("older_sequence_ids", "older_sequence_ids", _fla_indices),
    "int32_chunk_counts_indices": _fla_mutant("int32_chunk_counts_indices", "int32_chunk_counts", _fla_indices),
    "floor_chunk_counts_indices": _fla_mutant("floor_chunk_counts_indices", "floor_chunk_counts", _fla_indices),
    "int32_chunk_counts_offsets": _fla_mutant("int32_chunk_counts_offsets", "int32_chunk_counts", _fla_offsets),
    "floor_chunk_counts_offsets": _fla_mutant("floor_chunk_counts_offsets", "floor_chunk_counts", _fla_offsets),
    "offsets_one_short": _fla_mutant("offsets_one_short", "offsets_one_short", _fla_offsets),
}
globals().update(FLA_SLIPS)
