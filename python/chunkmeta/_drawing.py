"""Drawing helpers the Hypothesis strategies share (chunkmeta.strategies and
each spec folder's <name>_strategies.py): each distribution is written once
over `pick(lo, hi)` (an int in [lo, hi]), driven by Hypothesis's draws or by a
seeded random.Random."""

import random

from hypothesis import strategies as st

MAX_VALUE = 2**31 - 1
# Batches above this many rows are laid out from a seed.
DRAWN_ROW_BY_ROW = 32


def weighted(pick, weights):
    """The index of a branch, with the weights given (Hypothesis shrinks toward the first)."""
    ticket = pick(0, sum(weights) - 1)
    for branch, weight in enumerate(weights):
        if ticket < weight:
            return branch
        ticket -= weight
    return len(weights) - 1


def spread(pick, lo, hi):
    """An int in [lo, hi], or lo for an empty range."""
    return pick(lo, hi) if hi > lo else lo


def batch_size(pick, most):
    branch = weighted(pick, (5, 15, 25, 35, 15, 5))
    rows = (0, 1, None, None, None, None)[branch]
    if rows is None:
        rows = pick(*((2, 4), (5, 32), (33, 256), (257, 1024))[branch - 2])
    return min(rows, most)


def packed_offset(pick, total):
    """Where a batch of `total` tokens starts on the packed axis: mostly 0, else anywhere it fits, or at the end."""
    free = MAX_VALUE - total
    branch = weighted(pick, (80, 12, 8))
    if branch == 0:
        return 0
    if branch == 1:
        return spread(pick, 0, free)
    return max(0, free - pick(0, 16))


def draw_rows(draw, count, row):
    """`count` rows of `row(pick)`: drawn one by one, or laid out from a drawn seed for a large batch."""
    if count <= DRAWN_ROW_BY_ROW:
        pick = hypothesis_pick(draw)
        return [row(pick) for _ in range(count)]
    rng = random.Random(draw(st.integers(0, 2**64 - 1)))
    return [row(rng.randint) for _ in range(count)]


def hypothesis_pick(draw):
    return lambda lo, hi: draw(st.integers(lo, hi))


def array(values, arrays, dtype):
    if arrays == "lists":
        return list(values)
    if arrays == "numpy":
        import numpy
        return numpy.array(values, dtype=dtype)
    if arrays == "torch":
        import torch
        return torch.tensor(values, dtype=getattr(torch, dtype))
    raise ValueError(f"arrays must be 'lists', 'numpy' or 'torch', not {arrays!r}")


def drawn_by_chunkmeta(spec, arrays, max_rows, make):
    """A strategy of ``spec``'s valid workloads drawn by chunkmeta's own C++ generators (the spec
    folder's value model, stated once): a seed and a size give one workload, ``make(*arguments)``
    wraps its arguments. Examples shrink by seed and size, toward the small batches of size 0."""
    from chunkmeta import _chunkmeta  # the extension, imported with the strategy, not with this module

    return st.builds(lambda seed, size: make(*_chunkmeta._drawn_workload(spec, seed, size, arrays, max_rows)),
                     st.integers(0, 2**64 - 1), st.integers(0, 100))
