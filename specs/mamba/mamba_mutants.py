"""Mamba's slips (mamba_mutants.cpp) as functions with the engine's signature,
giving what the C++ mutant gives on every valid workload (gathered by
mutants/mutants.py for the three-door test)."""

import bisect
import math

from int_arithmetic import INT32_MAX, float32, int8, int16, int32, ints, trunc_div

def _rewrite(slip, chunk_size, num_prefills, computed, starts):
    C = chunk_size
    computed = ints(computed)
    q = ints(starts)
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
            nxt = trunc_div(total, C) * C
            gap = nxt - c if nxt - c > 0 else 0
            misalignment = gap
        head = misalignment != 0 and not (slip == "drops_empty_head" and n == 0)
        if head:
            cu.append(int32(pos))
            seq.append(i)
            length = min(n, gap)
            if slip == "gap_off_by_one":
                length = min(n, gap + 1)
            if slip == "head_not_capped":
                length = min(gap, n + C)
            pos += length
            n -= length
        body = trunc_div(n + C - 1, C)
        if slip == "ceil_as_floor_plus_one":
            body = trunc_div(n, C) + 1
        if slip == "float32_ceil":
            body = math.ceil(float32(float32(n) / float32(C)))
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
                starts = [int32(x) for x in starts]
            cu.extend(starts)
            # A wide-row path (more than 32 body chunks) that stores seq_idx in 16 bits.
            wide = slip == "int16_seq_idx_wide_rows" and body > 32
            seq.extend([int16(i) if wide else i] * body)
            advance = min(body * C, tokens)
            pos += advance
            n -= advance
        rowless = len(seq) == chunks_before
        last.append(-1 if slip == "rowless_last_is_minus_one" and rowless else len(cu) - 1)
    cu.append(int32(pos))
    if slip == "int8_seq_idx":
        seq = [int8(row) for row in seq]
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


