"""Hypothesis strategies for chunk-metadata workloads, for engine teams'
own properties over code that consumes chunk metadata::

    from hypothesis import given
    from chunkmeta import strategies

    @given(strategies.mamba_workloads(arrays="torch"))
    def test_my_kernel_wrapper(workload):
        cu, seq, last = chunkmeta.compute_chunk_metadata(*workload)
        ...

Each spec folder ships its own (specs/<name>/<name>_strategies.py, copied
into chunkmeta/_strategies), drawn by chunkmeta's own C++ generators for that
spec: the same value model and edge classes as the property suite, stated
once. This module exports them all, with ``workloads(spec)`` for any spec by
name. Every workload drawn is valid. A failing example shrinks to the fewest
rows of its batch that still fail (a window of rows, where the rows kept
stay valid), then by the seed and the size it was drawn at. Hypothesis is
imported with this module, never by ``import chunkmeta``.
"""

import importlib
import pathlib

from chunkmeta import DEFAULT_SPEC

__all__ = ["workloads", "specs"]

# Each spec's name -> its strategy of valid workloads, as the spec folders declare (SPECS).
_BY_SPEC = {}

for _path in sorted(pathlib.Path(__file__).with_name("_strategies").glob("*_strategies.py")):
    _module = importlib.import_module(f"{__package__}._strategies.{_path.stem}")
    for _name in _module.__all__:
        globals()[_name] = getattr(_module, _name)
        __all__.append(_name)
    for _spec in _module.SPECS:
        _BY_SPEC[_spec] = _module.workloads


def workloads(spec=DEFAULT_SPEC, arrays="lists", max_rows=64):
    """The valid workloads of ``spec`` (any spec with a strategy: see ``specs()``) as its function's arguments,
    with arrays of ``arrays`` ("lists", "numpy" or "torch") and batches of at most ``max_rows`` rows."""
    if spec not in _BY_SPEC:
        raise ValueError(f"unknown spec {spec!r}; the specs with strategies: {', '.join(_BY_SPEC)}")
    return _BY_SPEC[spec](arrays, max_rows=max_rows)


def specs():
    """The names of the specs this module draws workloads of."""
    return list(_BY_SPEC)
