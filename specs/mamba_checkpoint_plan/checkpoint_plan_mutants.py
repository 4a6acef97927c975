"""The checkpoint plan's slips (checkpoint_plan_mutants.cpp) as functions with
the drop-in's signature, fn(chunk_size, block_size, num_computed_tokens_p,
query_start_loc_p) -> the six arrays, giving what the C++ mutant gives on every
valid workload (gathered by mutants/mutants.py for the three-door test)."""

from int_arithmetic import int32, ints


def _plan(slip, C, M, computed, starts):
    c_all, q = ints(computed), ints(starts)
    rows = len(c_all)
    total = 0
    for i in range(rows):
        c, n = c_all[i], q[i + 1] - q[i]
        head = 1 if c % C else 0
        aligned = -(-c // C) * C
        total += head + (n - (min(aligned - c, n) if head else 0) + C - 1) // C
    out = [[] for _ in range(6)]
    before, last_chunk = 0, -1
    for i in range(rows):
        c, n = c_all[i], q[i + 1] - q[i]
        s = c + n
        head = 1 if c % C else 0
        aligned = -(-c // C) * C
        chunks = head + (n - (min(aligned - c, n) if head else 0) + C - 1) // C
        if slip == "int32_first_block":
            wrapped = int32(c + M)
            first_block = int(wrapped / M) - 1  # C++ division truncates toward zero
        else:
            first_block = c // M
        last_block = s // M if slip == "last_block_floor" else (0 if s == 0 else (s - 1) // M)
        out[0].append(0 if c == 0 else (c - 1) // M)
        out[1].append(first_block)
        out[2].append(last_block)
        first_chunk = 0 if slip == "states_on_the_row_grid" else before
        if slip == "first_chunk_from_own_last":
            first_chunk = before + chunks - 1
        if chunks > 0:
            last_chunk = before + chunks - 1
        if n > 0:
            counted = 0 if slip == "unaligned_shift_dropped" else head
            for b in range(first_block, last_block):
                out[3].append(i)
                out[4].append(b)
                out[5].append(first_chunk + counted + ((b + 1) * M - aligned) // C - 1)
            out[3].append(i)
            out[4].append(last_block)
            out[5].append(chunks - 1 if slip == "states_on_the_row_grid" else before + chunks - 1)
        elif slip == "final_write_for_rows_without_tokens":
            out[3].append(i)
            out[4].append(last_block)
            out[5].append(last_chunk if last_chunk >= 0 else total - 1)
        before += chunks
    return tuple(out)


def _mutant(slip):
    def plan(chunk_size, block_size, num_computed_tokens_p, query_start_loc_p):
        return _plan(slip, chunk_size, block_size, num_computed_tokens_p, query_start_loc_p)

    plan.__name__ = plan.__qualname__ = slip
    return plan


# The engine functions take valid workloads only: block_size_multiple_not_checked
# is a validation slip, caught through the doors that send invalid input.
CHECKPOINT_PLAN_SLIPS = [
    "block_size_multiple_not_checked",
    "states_on_the_row_grid",
    "unaligned_shift_dropped",
    "first_chunk_from_own_last",
    "final_write_for_rows_without_tokens",
    "int32_first_block",
    "last_block_floor",
]
globals().update({slip: _mutant(slip) for slip in CHECKPOINT_PLAN_SLIPS})
