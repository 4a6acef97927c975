"""An engine-style function that raises on workloads of two or more rows, to
prove the adapter turns an exception into a finding with its traceback."""

import sys
import os

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python"))
from reference_procedure import compute_chunk_metadata  # noqa: E402


def raises_on_two_rows(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu):
    if num_prefills >= 2:
        raise IndexError("row index out of range in the rewrite")
    return compute_chunk_metadata(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu)
