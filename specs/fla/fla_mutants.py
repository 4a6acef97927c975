"""FLA's slips (fla_mutants.cpp), each `fn(cu_seqlens, chunk_size)` like FLA's
own prepare_chunk_indices / prepare_chunk_offsets, giving what the C++ mutant
gives (gathered by mutants/mutants.py for the three-door test)."""

from int_arithmetic import INT32_MAX, ints, trunc_div

def _count(slip, length, C):
    if slip == "floor_chunk_counts":
        return length // C
    if slip == "int32_chunk_counts":
        total = length + C - 1  # int32 arithmetic: wraps past 2^31-1
        if total > INT32_MAX:
            total -= 2**32
        return max(0, trunc_div(total, C))  # a negative count makes no chunk
    return -(-length // C)


def _fla_indices(slip, cu_seqlens, chunk_size):
    cu = ints(cu_seqlens)
    rows, starts_seen = [], 0
    for i in range(len(cu) - 1):
        for j in range(_count(slip, cu[i + 1] - cu[i], chunk_size)):
            if j == 0:
                starts_seen += 1
            rows.append([starts_seen - 1 if slip == "older_sequence_ids" else i, j])
    return rows


def _fla_offsets(slip, cu_seqlens, chunk_size):
    cu = ints(cu_seqlens)
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
