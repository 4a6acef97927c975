"""What an engine team drops into its test suite: chunkmeta checks the engine's
own chunk-metadata function, in one line, with pytest.

Replace the import below with the engine's function, e.g.
    from vllm.v1.attention.backends.mamba_attn import _compute_chunk_metadata as engine_function
Here it is the pure-Python procedure beside this file.
"""

import torch

import chunkmeta
from reference_procedure import compute_chunk_metadata as engine_function


def test_engine_chunk_metadata_is_exactly_right():
    chunkmeta.check(engine_function)


def test_chunkmeta_is_a_drop_in_for_the_engine_function():
    computed = torch.tensor([0, 70, 128, 1], dtype=torch.int32)
    starts = torch.tensor([0, 130, 230, 294, 296], dtype=torch.int32)
    ours = chunkmeta.compute_chunk_metadata(64, 4, computed, starts)
    theirs = engine_function(64, 4, computed, starts)
    assert [t.tolist() for t in ours] == [list(v) for v in theirs]
