"""the FLA contract's procedure in plain Python, with FLA's signature: lists (or
anything with .tolist()) in, lists out. An example of what chunkmeta checks:

    chunkmeta check --spec fla.chunk_indices --valid-only --impl \
        "cmd:python3 adapters/python/chunkmeta_adapter.py examples/python/fla_reference_procedure.py:reference_chunk_indices"
"""


def _ints(values):
    return values.tolist() if hasattr(values, "tolist") else [int(v) for v in values]


def reference_chunk_indices(cu_seqlens, chunk_size):
    cu = _ints(cu_seqlens)
    return [[i, j] for i in range(len(cu) - 1) for j in range(-(-(cu[i + 1] - cu[i]) // chunk_size))]


def reference_chunk_offsets(cu_seqlens, chunk_size):
    cu = _ints(cu_seqlens)
    offsets = [0]
    for i in range(len(cu) - 1):
        offsets.append(offsets[-1] + -(-(cu[i + 1] - cu[i]) // chunk_size))
    return offsets
