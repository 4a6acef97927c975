"""The one way chunkmeta.strategies draws a spec's workloads: through the spec's
own C++ generators (its value model, stated once, in its folder's
<name>_generators.cpp), so every Hypothesis strategy draws the edge classes
the property suite draws, and a spec folder's <name>_strategies.py only names
its arguments."""

from hypothesis import strategies as st

# The seed a workload is drawn from, and its RapidCheck size (0 to 100: the generators' batch sizes and
# value ranges grow with it, so Hypothesis shrinks toward small batches of simple values).
_SEEDS = st.integers(0, 2**64 - 1)
_SIZES = st.integers(0, 100)
# Rows dropped from each end of a drawn batch, max(0, max_rows - k) for a drawn k in [0, _KEEP_ALL * max_rows]:
# generation keeps most batches whole (the generators' distribution: k >= max_rows), and shrinking, which moves
# each k toward 0, drops rows from the front up to the last failing one, then from the back.
_KEEP_ALL = 8


def drawn_by_chunkmeta(spec, arrays, max_rows, make):
    """A strategy of ``spec``'s valid workloads drawn by chunkmeta's own C++ generators, at most
    ``max_rows`` rows, with arrays of ``arrays`` ("lists", "numpy" or "torch"); ``make(*arguments)``
    wraps the function's arguments. Examples shrink to the fewest rows that still fail (rows dropped
    from either end of the batch, where the rows kept stay valid), then by seed and size."""
    from chunkmeta import _chunkmeta  # the extension, imported with the strategy, not with this module

    kept = st.integers(0, _KEEP_ALL * max_rows)

    def drawn(seed, size, front, back):
        drop_front, drop_back = max(0, max_rows - front), max(0, max_rows - back)
        return make(*_chunkmeta._drawn_workload(spec, seed, size, arrays, max_rows, drop_front, drop_back))

    return st.builds(drawn, _SEEDS, _SIZES, kept, kept)


def scalar_drawn_by_chunkmeta(spec, field):
    """A strategy of the values ``spec``'s generators draw for its scalar argument ``field`` (a chunk
    size, say), as they draw it in valid workloads."""
    from chunkmeta import _DESCRIPTIONS

    at = [argument["name"] for argument in _DESCRIPTIONS[spec]["inputs"]].index(field)
    return drawn_by_chunkmeta(spec, "lists", 0, lambda *arguments: arguments[at])


def as_dtype(values, dtype):
    """An array drawn as the generators chose its dtype, as ``dtype`` ("int32" or "int64") instead
    (a list as it is): for strategies of engines whose tensors may be either."""
    if isinstance(values, list):
        return values
    if hasattr(values, "astype"):
        return values.astype(dtype)
    import torch

    return values.to(getattr(torch, dtype))
