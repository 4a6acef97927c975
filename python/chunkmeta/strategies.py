"""Hypothesis strategies for chunk-metadata workloads, for engine teams'
own properties over code that consumes chunk metadata::

    from hypothesis import given
    from chunkmeta import strategies

    @given(strategies.mamba_workloads(arrays="torch"))
    def test_my_kernel_wrapper(workload):
        cu, seq, last = chunkmeta.compute_chunk_metadata(*workload)
        ...

Each spec folder ships its own (specs/<name>/<name>_strategies.py, copied
into chunkmeta/_strategies): they draw the same edge classes as chunkmeta's
own generators for that spec, and this module exports them all, with
``workloads(spec)`` for any spec by name. Every workload drawn is valid.
Batches of up to 32 rows are drawn row by row (each row shrinks on its own);
larger ones, up to the strategy's limit, are laid out from a drawn seed with
the same distributions (they shrink by seed and size), as Hypothesis keeps
each example's data small. Hypothesis is imported with this module, never by
``import chunkmeta``.
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
