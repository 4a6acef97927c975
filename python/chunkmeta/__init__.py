"""chunkmeta: Mamba chunk metadata, exactly right and fast.

Two things for an engine written in Python:

* ``compute_chunk_metadata(chunk_size, num_prefills, num_computed_tokens_p_cpu,
  query_start_loc_p_cpu)``, a drop-in for the engine's function: int32 CPU
  tensors in, ``(cu_chunk_seqlen, seq_idx, last_chunk_indices)`` int32 tensors out,
  computed by the library's fast implementation.
* ``check(fn)``: the property suite of ``chunkmeta check`` run in this process
  against any function with that signature. One line in a pytest file::

      def test_chunk_metadata():
          chunkmeta.check(my_engine._compute_chunk_metadata)

  It returns a summary when every property holds, and raises AssertionError
  whose message is the minimal counterexample report when one does not.
"""

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import _chunkmeta

__all__ = ["compute_chunk_metadata", "max_output_sizes", "check", "replay", "InvalidWorkload", "CheckFailed",
           "CheckSummary", "PROPERTIES", "__version__"]
__version__ = _chunkmeta.__version__


class InvalidWorkload(ValueError):
    """The workload is outside the SPEC's valid domain, or its output is over the size cap.

    Carries the library's error exactly: ``code`` (e.g. ``"query_start_loc_decreasing"``),
    ``field`` (``"chunk_size"``, ``"num_computed_tokens"``, ``"query_start_loc"``, or
    ``"num_prefills"`` when it disagrees with the tensors), ``index`` (``None`` for a
    scalar or a length) and ``kind`` (``"invalid_input"`` or ``"resource_limit"``,
    the latter for ``output_too_large``).
    """

    def __init__(self, message, code, field, index, kind):
        super().__init__(message)
        self.code = code
        self.field = field
        self.index = index
        self.kind = kind


_chunkmeta._set_invalid_workload_type(InvalidWorkload)

compute_chunk_metadata = _chunkmeta.compute_chunk_metadata
max_output_sizes = _chunkmeta.max_output_sizes

#: The properties check() runs, in order.
PROPERTIES = tuple(_chunkmeta._properties())

# The project's corpus (edge cases, invalid inputs, every counterexample kept), shipped in the package.
_CORPUS = Path(__file__).with_name("corpus")


def _default_corpus():
    return [_CORPUS] if _CORPUS.is_dir() else []


def _describe(fn):
    module = getattr(fn, "__module__", None) or "?"
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return module, qualname


def _rerun_command(fn, properties_argument):
    """A shell command that reruns one property on `fn` ({property} is filled in by the suite)."""
    module, qualname = _describe(fn)
    if module in ("?", "__main__") or "<" in qualname:
        return ""
    call = f"import chunkmeta, {module}; chunkmeta.check({module}.{qualname}{properties_argument})"
    return f"{os.path.basename(sys.executable) or 'python3'} -c '{call}'"


@dataclass
class PropertyOutcome:
    name: str
    passed: bool
    skipped: bool
    cases: int
    seconds: float
    calls: int
    counterexample: dict = None


@dataclass
class CheckSummary:
    """What check() ran. ``str(summary)`` is the same text ``chunkmeta check`` prints."""

    passed: bool
    cases: int
    seconds: float
    seed: int
    replayed_files: int
    properties: list = field(default_factory=list)
    text: str = ""

    @property
    def cases_per_second(self):
        return self.cases / self.seconds if self.seconds > 0 else 0.0

    def __str__(self):
        return self.text


class CheckFailed(AssertionError):
    """check() found a failure; the message is the minimal report, ``summary`` what ran."""

    def __init__(self, message, summary):
        super().__init__(message)
        self.summary = summary


def check(fn, *, cases=0, seed=None, valid_only=True, time_budget=0.0, report_dir=None, arrays="torch",
          corpus=None, fail_fast=False, keep_going=False, properties=None, verbose=False):
    """Verify ``fn`` with chunkmeta's property suite, in this process.

    ``fn(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu)``
    must return ``(cu_chunk_seqlen, seq_idx, last_chunk_indices)`` as tensors, arrays
    or sequences of ints. The corpus is replayed first: if it fails, its smallest
    failing workload is shrunk and reported at once and the properties are not run
    (``keep_going=True`` runs them anyway). Then every property runs
    (differential against the reference, the SPEC invariants, split/join, shift and
    chunk-multiple relations, and with ``valid_only=False`` the rejection of invalid
    input, where ``fn`` must raise an exception with ``code``, ``field`` and
    ``index`` like InvalidWorkload). A failing case is shrunk to a minimal one and
    its report written to ``report_dir`` (default ``$CHUNKMETA_REPORT_DIR`` or
    ``./chunkmeta-reports``). An exception raised by ``fn`` is a finding, with its
    traceback.

    cases: per property (default 1000, or as many as ``time_budget`` seconds allow);
    seed: RapidCheck seed (default random, printed); arrays: "torch" (int32 tensors,
    as the engine passes them), "numpy" or "lists"; corpus: files or folders to
    replay first (default the shipped corpus; ``[]`` for none); fail_fast: stop at
    the first failing property; properties: names from PROPERTIES to run.

    Returns a CheckSummary; raises CheckFailed (an AssertionError) with the minimal
    report(s) as its message when anything fails, and KeyboardInterrupt (after printing what was found) on Ctrl-C.
    """
    module, qualname = _describe(fn)
    properties = list(properties or [])
    corpus = _default_corpus() if corpus is None else [Path(p) for p in corpus]
    only = "" if properties else ', properties=["{property}"]'
    result = _chunkmeta._check(
        fn, name=f"python:{module}:{qualname}", cases=int(cases), seed=seed, valid_only=bool(valid_only),
        time_budget=float(time_budget), report_dir=None if report_dir is None else Path(report_dir),
        arrays=arrays, corpus=corpus, fail_fast=bool(fail_fast), keep_going=bool(keep_going), properties=properties,
        rerun_command=_rerun_command(fn, only), verbose=bool(verbose))
    outcomes = [PropertyOutcome(p["name"], p["passed"], p["skipped"], p["cases"], p["seconds"], p["calls"],
                                p["counterexample"]) for p in result["properties"]]
    summary = CheckSummary(result["passed"], result["cases"], result["seconds"], result["seed"],
                           result["replayed_files"], outcomes, result["text"])
    if not summary.passed:
        raise CheckFailed(_failure_message(fn, result), summary)
    return summary


def _failure_message(fn, result):
    module, qualname = _describe(fn)
    parts = [f"chunkmeta.check: {module}.{qualname} is wrong."]

    def add(cx):
        parts.append(cx["report"].rstrip("\n"))
        if cx["report_file"]:
            parts.append(f"Replay from Python: chunkmeta.replay({module}.{qualname}, {cx['report_file']!r})")

    # The corpus failures shrunk (one per kind of finding); the entries themselves are only counted.
    for cx in result["replay_shrunk"]:
        add(cx)
    if result["replay_failures"] and not result["properties"]:
        parts.append("The properties were not run: the corpus replay already fails (keep_going=True runs them).")
    for p in result["properties"]:
        cx = p["counterexample"]
        if p["duplicate_of"]:
            parts.append(f"{p['name']}: the same counterexample as {p['duplicate_of']}")
        elif cx is not None:
            add(cx)
        elif not p["passed"]:
            parts.append(f"{p['name']}: {p['message']}")
    failed = sum(1 for p in result["properties"] if not p["passed"])
    parts.append(f"{failed} of {len(result['properties'])} properties failed, "
                 f"{len(result['replay_failures'])} corpus entries failed; seed {result['seed']}.")
    return "\n".join(parts)


def replay(fn, *paths, arrays="torch", valid_only=True):
    """Replay corpus entries or counterexample reports (files or folders) against ``fn``.

    Raises AssertionError with each failure's report; returns the number of files replayed.
    """
    module, qualname = _describe(fn)
    result = _chunkmeta._replay(fn, name=f"python:{module}:{qualname}", paths=[Path(p) for p in paths],
                                arrays=arrays, valid_only=bool(valid_only))
    if not result["passed"]:
        raise AssertionError(f"chunkmeta.replay: {module}.{qualname} is wrong.\n" + result["text"])
    return result["files"]
