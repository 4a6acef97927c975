"""The conv1d program map's slips (conv1d_mutants.cpp) as functions with the
drop-in's signature, fn(query_start_loc, block_m) -> (nums, batch_ptr,
token_chunk_offset_ptr), giving what the C++ mutant gives on every valid
workload (gathered by mutants/mutants.py for the three-door test)."""

from int_arithmetic import ints


def _map(slip, query_start_loc, block_m):
    q = ints(query_start_loc)
    nums, rows, blocks, starts_seen = [], [], [], 0
    for i in range(len(q) - 1):
        count = -(-(q[i + 1] - q[i]) // block_m)
        nums.append(count)
        for o in range(count):
            if o == 0:
                starts_seen += 1
            rows.append(starts_seen - 1 if slip == "conv1d_older_row_ids" else i)
            blocks.append(o)
    tot = len(rows)
    if slip == "conv1d_padding_not_minus_one":  # a grid over the whole buffer, padded with 0
        size = 2 * max(1024, tot)
        rows, blocks = rows + [0] * (size - tot), blocks + [0] * (size - tot)
    if slip == "conv1d_tot_from_row_count":  # the buffers' first B entries
        size = len(nums)
        rows, blocks = (rows + [-1] * size)[:size], (blocks + [-1] * size)[:size]
    return nums, rows, blocks


def _mutant(slip):
    def program_map(query_start_loc, block_m):
        return _map(slip, query_start_loc, block_m)

    program_map.__name__ = program_map.__qualname__ = slip
    return program_map


CONV1D_SLIPS = ["conv1d_older_row_ids", "conv1d_padding_not_minus_one", "conv1d_tot_from_row_count"]
globals().update({slip: _mutant(slip) for slip in CONV1D_SLIPS})
