"""chunkmeta: the chunk metadata chunked kernels trust, exactly right and fast.

For an engine written in Python:

* Drop-ins computed by the library's fast implementations, with the engines'
  own signatures and dtypes: ``compute_chunk_metadata`` (vLLM's Mamba chunk
  metadata) and ``prepare_chunk_indices`` / ``prepare_chunk_offsets`` (FLA's).
  Tensors in, tensors out; numpy arrays and lists work too; ``out=`` writes into
  the engine's own buffers.
* ``check(fn)``: the property suite, run in this process against any function
  with one of those signatures. One line in a pytest file::

      def test_chunk_metadata():
          chunkmeta.check(my_engine._compute_chunk_metadata)

      def test_chunk_indices():
          chunkmeta.check(my_fla.prepare_chunk_indices, spec="fla.chunk_indices")

  It returns a summary when every property holds, and raises CheckFailed (an
  AssertionError) whose message is the minimal counterexample report when one
  does not. ``settings`` and its profiles say how much it runs.
* ``chunkmeta.strategies``: Hypothesis strategies for the same workloads.
"""

import contextlib
import dis
import enum
import functools
import hashlib
import importlib.util
import inspect
import json
import numbers
import os
import random
import re
import shutil
import signal
import sys
import threading
import time
import types
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from . import _chunkmeta
from ._settings import Phase, settings

_Settings = settings  # check()'s `settings` argument hides the class inside it

# Every spec folder's drop-ins and size helpers: the extension's public functions.
_DROPINS = sorted(name for name in dir(_chunkmeta) if not name.startswith("_"))

__all__ = _DROPINS + ["check", "check_steps", "StepsSummary", "replay", "settings", "Phase", "properties", "SPECS", "KERNEL_FORMULATIONS", "DEFAULT_SPEC",
                      "InvalidWorkload", "CheckFailed", "CheckIncomplete", "CheckSummary", "PROPERTIES",
                      "shipped_corpus", "edge_classes", "__version__"]
__version__ = _chunkmeta.__version__


class InvalidWorkload(ValueError):
    """The workload is outside the spec's valid domain, or its output is over the size cap.

    Carries the library's error exactly: ``code`` (e.g. ``"query_start_loc_decreasing"``),
    ``field`` (``"chunk_size"``, ``"num_computed_tokens"``, ``"query_start_loc"``,
    ``"cu_seqlens"``, ``"num_prefills"`` when it disagrees with the tensors, or the
    output buffer that is too small), ``index`` (``None`` for a scalar or a length)
    and ``kind`` (``"invalid_input"`` or ``"resource_limit"``, the latter for
    ``output_too_large`` and ``output_buffer_too_small``).
    """

    def __init__(self, message, code, field, index, kind):
        super().__init__(message)
        self.code = code
        self.field = field
        self.index = index
        self.kind = kind


class _Timeout(BaseException):
    """Raised into a function under check() that runs past its time: the
    ``timeout`` setting, or while shrinking 10x its slowest answer so far (a
    BaseException, so that the function's own ``except Exception`` does not
    swallow it)."""


_chunkmeta._set_invalid_workload_type(InvalidWorkload)
_chunkmeta._set_timeout_type(_Timeout)

globals().update({name: getattr(_chunkmeta, name) for name in _DROPINS})

#: The specs check() verifies, in the registry's order ("mamba", "fla.chunk_indices", ...).
SPECS = tuple(_chunkmeta._specs())
#: Formulations check() judges by the kernels' view alone, with no reference ("kernel.mamba2_chunks", ...):
#: a registered spec's inputs and outputs, any way of computing them that a kernel runs right passes.
KERNEL_FORMULATIONS = tuple(_chunkmeta._kernel_formulations())
#: The spec check() and replay() verify when none is named (the registry's default).
DEFAULT_SPEC = _chunkmeta._default_spec()
# Each spec's description (`chunkmeta specs --json`): its inputs in the
# engine's order, its outputs; the calling convention check() uses.
_DESCRIPTIONS = json.loads(_chunkmeta._descriptions())


def __getattr__(name):
    # chunkmeta.strategies imports Hypothesis: loaded on first use, never by `import chunkmeta`.
    if name == "strategies":
        import importlib
        return importlib.import_module(".strategies", __name__)
    raise AttributeError(f"module 'chunkmeta' has no attribute {name!r}")


def properties(spec=DEFAULT_SPEC):
    """The properties check() runs for ``spec``, in order."""
    return tuple(_chunkmeta._properties(spec))


def edge_classes(spec=DEFAULT_SPEC):
    """The edge classes of ``spec``'s workloads: what the summary counts, and
    what ``check(fn, exclude=[...])`` can leave out of the domain."""
    return tuple(_chunkmeta._all_edge_classes(spec))


def _names(exclude):
    # One class name alone is a name, not its characters.
    return [exclude] if isinstance(exclude, str) else list(exclude or [])


#: The default spec's properties (``properties(DEFAULT_SPEC)``).
PROPERTIES = properties(DEFAULT_SPEC)

# The project's corpus (edge cases, invalid inputs, every counterexample kept), shipped in the package.
_CORPUS = Path(__file__).with_name("corpus")


def _describe(fn):
    module = getattr(fn, "__module__", None) or "?"
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return module, qualname


def _rerun_command(fn, spec, one_property):
    """A shell command that reruns one property on `fn` with the failing run's
    seed ({property} and {seed} are filled in by the suite)."""
    module, qualname = _describe(fn)
    if module in ("?", "__main__") or "<" in qualname:
        return ""
    arguments = "" if spec == DEFAULT_SPEC else f', spec="{spec}"'
    if one_property:
        arguments += ', properties=["{property}"], seed={seed}'
    call = f"import chunkmeta, {module}; chunkmeta.check({module}.{qualname}{arguments})"
    return f"{os.path.basename(sys.executable) or 'python3'} -c '{call}'"


def _installed(module):
    return module in sys.modules or importlib.util.find_spec(module) is not None


def _arrays(chosen):
    """What fn is given: the setting, else torch, numpy or lists, whichever is installed first."""
    if chosen is None:
        return "torch" if _installed("torch") else "numpy" if _installed("numpy") else "lists"
    if chosen in ("torch", "numpy") and not _installed(chosen):
        raise ModuleNotFoundError(f"chunkmeta.check(arrays={chosen!r}) needs {chosen}, which is not installed "
                                  "(arrays='lists' needs nothing)")
    return chosen


@dataclass
class PropertyOutcome:
    name: str
    passed: bool
    skipped: bool
    cases: int
    seconds: float
    calls: int
    counterexample: dict = None
    #: The cases it had to run to count as run; fewer (a time budget, an
    #: interrupt) or none (``not_run``) leaves the check unverified.
    planned: int = 0
    complete: bool = True
    not_run: bool = False


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
    spec: str = DEFAULT_SPEC
    database_entries: int = 0

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


class CheckIncomplete(CheckFailed):
    """check() found no failure but did not run every property's cases (its
    time budget ran out first): not a pass. The message lists how far each got."""


class _Database:
    """The example database: a folder per (spec, function) of corpus entries,
    each a workload on which that function failed. Replayed first; an entry the
    run sent the function and it passed is removed, a new failure added. Where
    its folder cannot be written (a read-only working directory), failures go
    to ``examples/`` in the report folder, and are replayed from there too."""

    def __init__(self, root, spec, fn, report_dir=None):
        identity = _identity(fn)
        key = hashlib.sha256(f"{spec}:{identity}".encode()).hexdigest()[:16]
        self.root = Path(root)
        self.label = f"{spec} {identity}"
        reports = Path(report_dir or os.environ.get("CHUNKMETA_REPORT_DIR") or "chunkmeta-reports")
        self.folders = [self.root / key, reports / "examples" / key]
        self.folder = self.folders[0]

    def entries(self):
        found = []
        for folder in self.folders:
            if folder.is_dir():
                found += sorted(folder.glob("*.json"))
        return found

    @staticmethod
    def passed(replayed, result, spec, valid_only, exclude):
        """The replayed entries the run sent the function, and it passed. The harness sends an engine
        function (valid_only) no workload the reference refuses, none outside the stated domain, and after a
        misbehaviour in the replay none at all; it does not say which entries it sent, so each entry is asked
        of the harness's own replay with a probe in the function's place. When the replay failed, or sent the
        function nothing (its first calls misbehaved), no entry counts as passed: they are all replayed again."""
        if result["replay_failures"] or result["replayed_files"] == 0:
            return []
        passed = []
        for entry in replayed:
            if _chunkmeta._spec_of_file(entry) is None:
                passed.append(entry)  # unreadable: never to be judged, and it fails every run that replays it
                continue
            valid = _Database._sent(entry, spec, valid_only=True)
            if valid is not None:
                if exclude and set(exclude) & set(_chunkmeta._edge_classes(spec, valid)):
                    continue  # outside the stated domain (invalid input has no edge classes)
            elif valid_only or _Database._sent(entry, spec, valid_only=False) is None:
                continue  # invalid input: an engine function is not sent it
            passed.append(entry)
        return passed

    @staticmethod
    def _sent(entry, spec, valid_only):
        """The arguments the harness's replay of ``entry`` sends a function, as lists; None if it sends none."""
        given = []
        _chunkmeta._replay(lambda *arguments: given.append(arguments), spec=spec, name="python:chunkmeta:probe",
                           paths=[entry], arrays="lists", valid_only=valid_only)
        return given[0] if given else None

    def update(self, passed, new_entries):
        for entry in passed:
            try:
                entry.unlink(missing_ok=True)
            except OSError:
                pass  # a read-only database keeps it: replayed again, it passes again
        if new_entries:
            self._save(new_entries)
        for folder, root in ((self.folders[0], self.root), (self.folders[1], None)):
            if folder.is_dir() and not any(folder.glob("*.json")):
                shutil.rmtree(folder, ignore_errors=True)
                # No empty folders left behind: the database's root, and the default's .chunkmeta, once empty.
                for parent in ((root, root.parent) if root is not None else (folder.parent,)):
                    if parent != root and parent.name not in (".chunkmeta", "examples"):
                        break
                    try:
                        parent.rmdir()
                    except OSError:
                        break

    def _save(self, new_entries):
        errors = []
        for folder in self.folders:
            try:
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "README").write_text(f"chunkmeta example database: failures of {self.label}\n")
                for corpus_file in new_entries:
                    shutil.copyfile(corpus_file, folder / Path(corpus_file).name)
                self.folder = folder
                return
            except OSError as why:
                errors.append(f"{folder}: {why}")
        warnings.warn("chunkmeta.check: the example database could not save this failure (" + "; ".join(errors) +
                      "); its report is written all the same", stacklevel=3)


class _Alarm:
    """check()'s use of SIGALRM, as a guest: it cuts one call short at a time
    (``arm(seconds)``, 0 to disarm) and gives back whatever timer and handler
    it found. A timer the caller had running (pytest-timeout's signal method)
    keeps its deadline: no call is armed past it, between calls it runs as it
    was, and when it comes due the run stops and the caller's handler is
    called from check() as if no check() were there."""

    def __init__(self):
        self.usable = (threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"))
        self.caller_due = False
        self.in_call = False  # only fn is ever interrupted, never the harness's own Python (an import of torch)

    def __enter__(self):
        if not self.usable:
            return self
        self.previous_handler = signal.getsignal(signal.SIGALRM)
        remaining, self.previous_interval = signal.getitimer(signal.ITIMER_REAL)
        self.caller_deadline = time.monotonic() + remaining if remaining > 0 else None
        signal.signal(signal.SIGALRM, self._on_alarm)
        return self

    def _caller_left(self):
        return None if self.caller_deadline is None else self.caller_deadline - time.monotonic()

    def arm(self, seconds):
        """Before a call of fn (seconds > 0) and after it (0)."""
        if self.caller_due:
            raise KeyboardInterrupt  # ends the run like Ctrl-C; check() then calls the caller's handler
        self.in_call = seconds > 0
        left = self._caller_left()
        if left is not None:
            seconds = min(seconds, left) if seconds > 0 else left  # between calls, the caller's timer runs
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-6) if seconds > 0 or left is not None else 0)

    def _on_alarm(self, signum, frame):
        left = self._caller_left()
        if left is not None and left <= 1e-3:
            self.caller_due = True
            if self.in_call:
                raise KeyboardInterrupt
            return  # in the harness's own code: the next arm() stops the run
        if self.in_call:
            raise _Timeout()

    def __exit__(self, *exc):
        if not self.usable:
            return False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self.previous_handler)
        left = self._caller_left()
        if left is not None:
            signal.setitimer(signal.ITIMER_REAL, max(left, 1e-6), self.previous_interval)
        return False

    def hand_over(self):
        """Calls the caller's handler for the timer that came due during the run."""
        handler = self.previous_handler
        signal.setitimer(signal.ITIMER_REAL, 0, self.previous_interval)
        if callable(handler):
            handler(signal.SIGALRM, sys._getframe(1))
        elif handler == signal.SIG_DFL:
            os.kill(os.getpid(), signal.SIGALRM)


@contextlib.contextmanager
def _calls_cut_short():
    """What arms a time limit before each call of fn (0 disarms it after):
    SIGALRM in the main thread (_Alarm), elsewhere a thread of ours
    (_chunkmeta._ThreadAlarm, in C++: no Python of the harness runs as it
    arms, for its exception to land in). A caller's SIGALRM timer that came
    due is handed back to its handler (pytest-timeout then fails the test),
    during the run or after."""
    alarm = _Alarm()
    if not alarm.usable:
        elsewhere = _chunkmeta._ThreadAlarm()
        try:
            yield elsewhere.arm
        finally:
            elsewhere.close()
        return
    try:
        with alarm:
            yield alarm.arm
    except KeyboardInterrupt:
        if alarm.caller_due:
            alarm.hand_over()
        raise
    if alarm.caller_due:
        alarm.hand_over()


def _asynchronous(fn):
    """What calling ``fn`` gives without running it ("a coroutine", "an async generator"), or None.
    Looks through partials, bound methods and a callable object's ``__call__``; never through
    ``__wrapped__``: a synchronous wrapper of an async function (asyncio.run inside) is synchronous."""
    for candidate in (fn, getattr(type(fn), "__call__", None) if not inspect.isroutine(fn) else None):
        if candidate is None or isinstance(fn, type):
            continue
        if inspect.iscoroutinefunction(candidate):
            return "a coroutine"
        if inspect.isasyncgenfunction(candidate):
            return "an async generator"
    return None


def _check_callable(fn, spec, door="check"):
    """A user's mistake is a TypeError before anything runs, never a counterexample of fn."""
    if not callable(fn):
        raise TypeError(f"chunkmeta.{door}() needs a function to {'check' if door == 'check' else 'replay against'}, "
                        f"not {type(fn).__name__} {fn!r}")
    gives = _asynchronous(fn)
    if gives:
        module, qualname = _describe(fn)
        raise TypeError(f"chunkmeta.{door}() calls fn and reads what it returns; {module}.{qualname} is asynchronous: "
                        f"its call returns {gives} without running it. Pass a synchronous function, e.g. "
                        "lambda *args: asyncio.run(fn(*args))")
    inputs = [given["name"] for given in _DESCRIPTIONS[spec]["inputs"]]
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # a builtin without a signature: its first call will tell
    try:
        signature.bind(*range(len(inputs)))
    except TypeError as why:
        expected = f"fn({', '.join(inputs)})"
        raise TypeError(f"chunkmeta.{door}(spec={spec!r}) calls {expected}, which {_describe(fn)[1]}{signature} "
                        f"cannot take: {why} (an unbound method? pass the bound one, or a function)") from None


# What marks an array or a buffer: its contents are state (a reused buffer's values change between steps, a
# torch.empty's are whatever was in memory), so it is keyed by its kind and dtype, never by its values.
_ARRAY_ATTRIBUTES = ("__array__", "__array_interface__", "__cuda_array_interface__", "__dlpack__")


def _array_kind(value):
    """``value``'s kind and dtype when it is an array or a buffer, else None."""
    if isinstance(value, (bytes, str)):
        return None  # immutable: a value
    kind = type(value)
    if not any(hasattr(kind, name) for name in _ARRAY_ATTRIBUTES):
        try:
            memoryview(value).release()
        except TypeError:
            return None
    for name in ("dtype", "typecode", "format"):  # torch and numpy, array.array, memoryview
        dtype = getattr(value, name, None)
        if dtype is not None:
            return f"<array {_type_name(value)} {name}={dtype}>"
    return f"<array {_type_name(value)}>"


def _type_name(value):
    return f"{type(value).__module__}.{type(value).__qualname__}"


class _Keying:
    """One function's key text (see _identity). ``path`` holds what is being keyed (by id, only while this
    key is made, never in its text), so a function that holds itself ends; ``depth`` bounds what a deep
    graph of values could cost."""

    MAX_DEPTH = 8

    def __init__(self):
        self.path = set()

    def value(self, value, depth):
        """``value`` as text that is the same in every run and process and tells constants apart. Only
        immutable values are keyed by what they hold; what can change between two calls is state, keyed by
        its type: an array or buffer, a list, dict or set (a memo, a call counter), an object (its
        attributes: a builder's step count, its caches)."""
        if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
            return repr(value)
        if depth > self.MAX_DEPTH:
            return f"<{_type_name(value)}>"
        if id(value) in self.path:
            return f"<recursive {_type_name(value)}>"
        self.path.add(id(value))
        try:
            return self._unseen(value, depth + 1)
        finally:
            self.path.discard(id(value))

    def _unseen(self, value, depth):
        if isinstance(value, numbers.Number):
            return f"{_type_name(value)}({value})"  # a numpy scalar is a constant, not a buffer
        array = _array_kind(value)
        if array is not None:
            return array
        if isinstance(value, tuple):
            return "(" + ", ".join(self.value(item, depth) for item in value) + ")"
        if isinstance(value, frozenset):  # sorted: a set of strings iterates in a per-process order
            return "frozenset{" + ", ".join(sorted(self.value(item, depth) for item in value)) + "}"
        if isinstance(value, types.ModuleType):
            return f"<module {value.__name__}>"
        if isinstance(value, type):
            return f"<class {value.__module__}.{value.__qualname__}>"
        if isinstance(value, enum.Enum):
            return f"{_type_name(value)}.{value.name}"
        if isinstance(value, types.CodeType):
            return self.code(value, depth)
        if isinstance(value, functools.partial) or inspect.isroutine(value):
            return self.function(value, depth)
        if isinstance(getattr(value, "__dict__", None), dict) or isinstance(value, (list, dict, set)):
            return f"<{_type_name(value)}>"  # state: what it holds changes as the function is used
        # A value type of an extension (torch.dtype, torch.device), or one with slots (a Path): its repr,
        # unless that names a memory address.
        try:
            text = repr(value)
        except Exception:  # noqa: BLE001 - a repr that raises names nothing
            text = ""
        return text if text and not re.search(r"0x[0-9a-fA-F]{4,}", text) else f"<{_type_name(value)}>"

    def code(self, code, depth):
        """What a function computes: its bytecode, names and constants (nested functions' code within), never
        its line numbers or file (a function moved in its file is the same function)."""
        constants = ", ".join(self.value(constant, depth) for constant in code.co_consts)
        text = (f"{code.co_code.hex()}|{code.co_names}|{code.co_varnames}|{code.co_freevars}|{code.co_cellvars}|"
                f"{code.co_argcount},{code.co_posonlyargcount},{code.co_kwonlyargcount},{code.co_flags}|{constants}")
        return f"code {hashlib.sha256(text.encode()).hexdigest()[:16]}"

    @staticmethod
    def _rebound(code):
        """The free variables the function assigns (nonlocal): variables, not constants."""
        return {instruction.argval for instruction in dis.get_instructions(code)
                if instruction.opname in ("STORE_DEREF", "DELETE_DEREF")}

    def function(self, fn, depth):
        if isinstance(fn, functools.partial):
            return (f"partial({self.function(fn.func, depth)}, args={self.value(fn.args, depth)}, "
                    f"keywords={self.value(tuple(sorted(fn.keywords.items())), depth)})")
        if inspect.ismethod(fn):
            return f"{self.function(fn.__func__, depth)} bound to {self.value(fn.__self__, depth)}"
        module, qualname = _describe(fn)
        identity = f"{module}.{qualname}:{getattr(fn, '__name__', '')}"
        code = getattr(fn, "__code__", None)
        if code is not None and not _names_it(module, qualname):
            identity += f" {self.code(code, depth)}"  # lambdas and nested functions: their names are shared
        held = []
        rebound = self._rebound(code) if code is not None else set()
        names = code.co_freevars if code is not None else ()
        for name, cell in zip(names, getattr(fn, "__closure__", None) or ()):
            try:
                contents = cell.cell_contents
            except ValueError:  # an empty cell
                held.append("<empty>")
                continue
            held.append(f"<variable {_type_name(contents)}>" if name in rebound else self.value(contents, depth))
        if held:
            identity += f" closure=({', '.join(held)})"
        for name in ("__defaults__", "__kwdefaults__"):
            given = getattr(fn, name, None)
            if given:
                given = tuple(sorted(given.items())) if isinstance(given, dict) else given
                identity += f" {name.strip('_')}={self.value(given, depth)}"
        if not inspect.isroutine(fn) and not isinstance(fn, type):  # a callable object: its class's __call__
            identity += f" calls {self.function(type(fn).__call__, depth)} of {self.value(fn, depth)}"
        return identity


def _names_it(module, qualname):
    """A module-level function or a method is named by its module and qualified name alone: its key then
    survives a fix of its code, so its failures are replayed against the fix. Lambdas and functions made
    inside functions share their names, so their code keys them too."""
    return module not in ("?", None) and "<" not in qualname


def _identity(fn):
    """What names ``fn`` across calls and processes, for its example database, and tells apart what
    computes differently: its module and qualified name (and its code, where that name is shared: a
    lambda, a nested function); the constants its closure holds and its defaults (two closures of one
    factory over different chunk sizes are two functions); a partial's function, arguments and keywords; a
    bound method's function and its object's class. What changes as the function is used is state, keyed
    by its type only: arrays and buffers (tensors, numpy arrays, array.array, bytearray, memoryview,
    anything with the buffer protocol or DLPack, by kind and dtype), lists, dicts and sets (a memo, a call
    counter), objects (their attributes), and a free variable the function rebinds (nonlocal). Never a
    memory address, an id or a per-process order (hash-randomised sets)."""
    return _Keying().function(fn, 0)


def shipped_corpus():
    """The corpus the package ships (edge cases, invalid inputs, every
    counterexample kept), as a list of folders: ``corpus=chunkmeta.shipped_corpus() + [mine]``."""
    return [_CORPUS] if _CORPUS.is_dir() else []


def _spec_named(spec, cache):
    """The spec check() runs: ``spec``, or with ``cache`` its formulation that also claims the cache's states."""
    known = SPECS + KERNEL_FORMULATIONS
    if spec not in known:
        raise ValueError(f"unknown spec {spec!r}; the specs are {', '.join(SPECS)}; judged by the kernels' view alone: "
                         f"{', '.join(f for f in KERNEL_FORMULATIONS if not f.endswith('+cache'))}")
    if not isinstance(cache, bool):
        raise TypeError(f"cache must be True or False, not {type(cache).__name__} {cache!r}")
    if not cache or spec.endswith("+cache"):
        return spec
    if spec + "+cache" not in KERNEL_FORMULATIONS:
        with_cache = [f[:-len("+cache")] for f in KERNEL_FORMULATIONS if f.endswith("+cache")]
        why = (f"{spec!r} is judged by its reference, and by the cache's states wherever it claims them"
               if spec in SPECS else f"{spec!r} makes no cache claim")
        raise ValueError(f"cache=True asks a formulation judged by the kernels' view alone to be cache-adequate too "
                         f"(those that can: {', '.join(with_cache)}); {why}")
    return spec + "+cache"


def check(fn, *, spec=None, cache=False, settings=None, **changes):
    """Verify ``fn`` with chunkmeta's property suite for ``spec``, in this process.

    ``spec`` (default: DEFAULT_SPEC, "mamba") names what ``fn`` computes;
    ``fn`` takes the spec's inputs in the engine's order and returns its outputs
    (the one array, or a sequence of them in order): for "mamba",
    ``fn(chunk_size, num_prefills, num_computed_tokens_p_cpu,
    query_start_loc_p_cpu)`` returns ``(cu_chunk_seqlen, seq_idx,
    last_chunk_indices)``; for "fla.chunk_indices", ``fn(cu_seqlens,
    chunk_size)`` returns the (N, 2) chunk_indices of cu_seqlens' dtype.
    ``chunkmeta specs --json`` describes every spec. Results may be tensors,
    arrays or sequences of ints.

    What runs is ``settings`` (a chunkmeta.settings; default: the current
    profile, see settings.current()), changed by any keyword given here
    (``check(fn, cases=200)``). In its phases: replay (this function's earlier
    failures from the example database, then the corpus: if that fails, its
    smallest failing workload is shrunk and reported at once and the properties
    are not run unless keep_going), generate (every property: differential
    against the reference, the spec's invariants, the spec's relations, and
    with valid_only=False the rejection of invalid input, where ``fn`` must raise
    an exception with ``code``, ``field`` and ``index`` like InvalidWorkload) and
    shrink (a failing case shrunk to a minimal one). A call that runs past
    ``timeout`` seconds, or while shrinking past 10x ``fn``'s slowest answer so
    far, is cut short and reported. Reports go to
    report_dir; each failure is also saved to the example database. An
    exception raised by ``fn`` is a finding, with its traceback.

    A formulation with no reference (KERNEL_FORMULATIONS: "kernel.mamba2_chunks",
    "kernel.fla_chunks") is judged by the kernels' view alone (SPEC Part 8 in
    the project's words: docs/kernels_view.md): ``fn`` takes the registered
    spec's inputs and returns its outputs, and passes when a kernel running them
    runs every token once, in order, from the state after the tokens before it
    (Megatron's per-sequence chunks pass, and so does the packed grid). With
    ``cache=True`` it must also leave a chunk end at every block boundary the
    prefix cache writes (for every block size that is a multiple of chunk_size):
    the packed grid then fails on a row that starts off the grid.

    Returns a CheckSummary; raises CheckFailed (an AssertionError) with the minimal
    report(s) as its message when anything fails, and KeyboardInterrupt (after
    printing what was found) on Ctrl-C.
    """
    __tracebackhide__ = True  # pytest shows the report, not check()'s own frames
    spec = _spec_named(DEFAULT_SPEC if spec is None else spec, cache)
    _check_callable(fn, spec)
    chosen = _Settings(settings if settings is not None else _Settings.current(), **changes)
    module, qualname = _describe(fn)
    phases = set(chosen.phases)
    corpus = [] if Phase.replay not in phases else (
        shipped_corpus() if chosen.corpus is None else [Path(p) for p in chosen.corpus])
    for place in corpus:
        if not place.exists():
            raise FileNotFoundError(f"chunkmeta.check: no corpus at {place}")
    arrays = _arrays(chosen.arrays)
    database = _Database(chosen.database, spec, fn, chosen.report_dir) if chosen.database is not None else None
    replayed = database.entries() if database is not None and Phase.replay in phases else []
    with _calls_cut_short() as arm:
        run = {"cases": int(chosen.cases), "min_cases": int(chosen.min_cases or 0), "seed": chosen.seed,
               "valid_only": bool(chosen.valid_only), "time_budget": float(chosen.time_budget),
               "report_dir": None if chosen.report_dir is None else Path(chosen.report_dir), "arrays": arrays,
               "corpus": replayed + corpus, "fail_fast": bool(chosen.fail_fast),
               "keep_going": bool(chosen.keep_going), "properties": _names(chosen.properties),
               "exclude": _names(chosen.exclude), "generate": Phase.generate in phases,
               "shrink": Phase.shrink in phases, "timeout": float(chosen.timeout or 0),
               "rerun_command": _rerun_command(fn, spec, not chosen.properties),
               "verbose": bool(chosen.verbose)}
        result = _chunkmeta._check(fn, spec=spec, name=f"python:{module}:{qualname}", settings=run, alarm=arm)
    if database is not None:
        reported = [cx for cx in result["replay_shrunk"]] + [p["counterexample"] for p in result["properties"]
                                                             if p["counterexample"] is not None]
        database.update(database.passed(replayed, result, spec, run["valid_only"], run["exclude"]),
                        [cx["corpus_file"] for cx in reported if cx.get("corpus_file")])
    outcomes = [PropertyOutcome(p["name"], p["passed"], p["skipped"], p["cases"], p["seconds"], p["calls"],
                                p["counterexample"], p["planned"], p["complete"], p["not_run"])
                for p in result["properties"]]
    summary = CheckSummary(result["passed"], result["cases"], result["seconds"], result["seed"],
                           result["replayed_files"], outcomes, result["text"], spec, len(replayed))
    if not summary.passed:
        failed = result["replay_failures"] or any(not p.passed for p in outcomes)
        if not failed:
            module, qualname = _describe(fn)
            raise CheckIncomplete(f"chunkmeta.check: {module}.{qualname} is not verified ({spec}).\n"
                                  + result["text"].rstrip("\n"), summary)
        raise CheckFailed(_failure_message(fn, spec, result), summary)
    return summary


@dataclass
class StepsSummary:
    """What check_steps() ran: its lives and steps, and what their steps did."""

    passed: bool
    lives: int
    steps: int
    resumed_reads: int
    writes: int
    checkpoints: int
    seed: int
    seconds: float
    text: str = ""
    minimal: Optional[dict] = None  # the minimal failing life (JSON), when one failed
    fault: Optional[dict] = None    # its first fault: step, function, rule, what, rows, inputs, text

    def __str__(self):
        return self.text


def check_steps(*, chunks=None, plan=None, checkpoints=None, block_size=None, chunk_size=None, mode="all",
                lives=1000, seed=None, arrays=None, timeout=10.0):
    """Run requests' whole lives through the engine's functions, each step by the kernels' view.

    Each life is a few requests over a few steps: chunked prefill split at
    random, prefix hits resuming at a block boundary, and in ``mode="align"``
    internal checkpoints planned by the planner and cut by the chunker. Every
    step's metadata comes from the functions (chunkmeta's own where one is
    None), and the model runs the step: every resumed row must read the state
    after its computed tokens, and every block written must hold the state it
    claims. The first failing life is shrunk to the fewest steps, requests and
    tokens; ``CheckFailed`` carries it (``failed.summary.minimal``).

    - ``chunks(chunk_size, num_prefills, num_computed_tokens_p_cpu,
      query_start_loc_p_cpu[, checkpoint_offsets_p])`` returns
      ``(cu_chunk_seqlen, seq_idx, last_chunk_indices[, checkpoint_chunk_indices])``
      (vLLM's ``_compute_chunk_metadata``; the offsets only in align mode);
    - ``plan(chunk_size, block_size, num_computed_tokens_p, query_start_loc_p)``
      returns the six arrays of ``chunkmeta.mamba_checkpoint_plan`` (all mode);
    - ``checkpoints(seq_lens, query_lens, hash_block_size, mamba_block_size,
      checkpoint_alignment, drop_eagle_block)`` returns
      ``(checkpoint_offsets, checkpoint_cols)`` (align mode).

    ``chunk_size`` and ``block_size`` fix C and M (else drawn, M a multiple of
    C, and shrunk too). Each function is called as check() calls it, with its
    spec's arguments (``chunkmeta.check(fn, spec=...)`` for "mamba" or
    "mamba.checkpointed_chunks", "mamba.checkpoint_plan",
    "mamba.prefill_checkpoints"): int32 tensors where the engine passes tensors
    (``arrays`` as in check()), lists where it passes lists (the planner's
    ``seq_lens`` and ``query_lens``). What it raises, returns wrongly or changes
    in its inputs is its fault; a call past ``timeout`` seconds (0 or None: no
    limit) is cut short and is its fault too.
    """
    if mode not in ("all", "align"):
        raise ValueError(f"mode must be 'all' (the checkpoint plan) or 'align' (internal checkpoints), not {mode!r}")
    for name, fn in (("chunks", chunks), ("plan", plan), ("checkpoints", checkpoints)):
        if fn is not None and not callable(fn):
            raise TypeError(f"{name} must be a function or None (chunkmeta's own), not {type(fn).__name__}")
    # A function the mode never calls would be named in a VERIFIED it took no part in.
    if mode == "all" and checkpoints is not None:
        raise ValueError("checkpoints= is align mode's planner; mode='all' runs the chunker and the plan")
    if mode == "align" and plan is not None:
        raise ValueError("plan= is all mode's write plan; mode='align' runs the planner and the chunker")
    largest = _chunkmeta._STEPS_LARGEST_SIZE
    for name, value in (("chunk_size", chunk_size), ("block_size", block_size)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= largest):
            raise ValueError(f"{name} must be an int from 1 to {largest} or None (drawn), not {value!r}")
    if not isinstance(lives, int) or isinstance(lives, bool) or lives < 1:
        raise ValueError(f"lives must be a positive int, not {lives!r}")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 1 << 64):
        raise ValueError(f"seed must be an int from 0 to 2**64 - 1 or None (a random one), not {seed!r}")
    if arrays not in (None, "torch", "numpy", "lists"):
        raise ValueError(f"arrays must be 'torch', 'numpy', 'lists' or None (what is installed), not {arrays!r}")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout >= 0):
        raise ValueError(f"timeout must be seconds (0 or None: no limit), not {timeout!r}")
    kind = _arrays(arrays)
    run_seed = random.SystemRandom().randrange(1 << 63) if seed is None else seed
    names = ", ".join(f"{name}={'.'.join(_describe(fn))}" for name, fn in
                      (("chunks", chunks), ("plan", plan), ("checkpoints", checkpoints)) if fn is not None)
    sizes = "".join(f", {name}={value}" for name, value in (("chunk_size", chunk_size), ("block_size", block_size))
                    if value is not None)
    settings = "".join(f", {name}={value!r}" for name, value, default in
                       (("lives", lives, 1000), ("arrays", arrays, None), ("timeout", timeout, 10.0)) if value != default)
    with _calls_cut_short() as arm:
        result = _chunkmeta._check_steps(chunks, plan, checkpoints, mode, lives, run_seed, chunk_size, block_size, kind,
                                         float(timeout or 0), arm, names or "chunkmeta's own functions",
                                         f"chunkmeta.check_steps(..., mode={mode!r}{sizes}{settings}, seed={run_seed})")
    fault = result.get("fault")
    summary = StepsSummary(passed=fault is None, lives=result["lives"], steps=result["steps"],
                           resumed_reads=result["resumed_reads"], writes=result["writes"],
                           checkpoints=result["checkpoints"], seed=run_seed, seconds=result["seconds"],
                           text=result["text"])
    if fault is None:
        return summary
    summary.minimal = json.loads(result["minimal"])
    summary.fault = fault
    raise CheckFailed(summary.text, summary)


def _failure_message(fn, spec, result):
    module, qualname = _describe(fn)
    parts = [f"chunkmeta.check: {module}.{qualname} is wrong ({spec})."]
    spec_argument = "" if spec == DEFAULT_SPEC else f", spec={spec!r}"

    def add(cx):
        parts.append(cx["report"].rstrip("\n"))
        if cx["report_file"]:
            parts.append(f"Replay from Python: chunkmeta.replay({module}.{qualname}, {cx['report_file']!r}"
                         f"{spec_argument})")

    # The corpus failures shrunk (one per kind of finding); the entries themselves are only counted.
    for cx in result["replay_shrunk"]:
        add(cx)
    if result["replay_failures"] and not result["properties"]:
        parts.append("The properties were not run: the replay already fails (keep_going=True runs them).")
    for p in result["properties"]:
        cx = p["counterexample"]
        if p["duplicate_of"]:
            parts.append(f"{p['name']}: the same bug as {p['duplicate_of']} (its minimal counterexample fails here too)")
        elif cx is not None:
            add(cx)
        elif not p["passed"]:
            parts.append(f"{p['name']}: {p['message']}")
    failed = sum(1 for p in result["properties"] if not p["passed"])
    parts.append(f"{failed} of {len(result['properties'])} properties failed, "
                 f"{len(result['replay_failures'])} replayed entries failed; seed {result['seed']}.")
    return "\n".join(parts)


def replay(fn, *paths, spec=None, arrays=None, valid_only=True):
    """Replay corpus entries or counterexample reports (files or folders) against ``fn``.

    ``spec``: the spec ``fn`` computes; None: the spec of the first file.
    Raises AssertionError with each failure's report; returns the number of files replayed.
    """
    __tracebackhide__ = True
    if not callable(fn):  # before the paths: the first mistake named is the function
        _check_callable(fn, DEFAULT_SPEC, "replay")
    module, qualname = _describe(fn)
    paths = [Path(p) for p in paths]
    if not paths:
        raise TypeError("chunkmeta.replay() needs at least one file or folder to replay")
    for path in paths:
        if not path.exists():
            raise FileNotFoundError(f"chunkmeta.replay: no such file or folder: {path}")
    if spec is None:
        files = [f for p in paths for f in ([p] if p.is_file() else sorted(p.rglob("*.json")))]
        found = [s for s in (_chunkmeta._spec_of_file(f) for f in files) if s is not None]
        spec = found[0] if found else DEFAULT_SPEC
    spec = _spec_named(spec, False)
    _check_callable(fn, spec, "replay")
    result = _chunkmeta._replay(fn, spec=spec, name=f"python:{module}:{qualname}", paths=paths,
                                arrays=_arrays(arrays), valid_only=bool(valid_only))
    if result["files"] == 0:
        raise AssertionError(f"chunkmeta.replay: nothing was replayed: no entry under {', '.join(map(str, paths))} "
                             f"is of spec {spec}")
    if not result["passed"]:
        raise AssertionError(f"chunkmeta.replay: {module}.{qualname} is wrong ({spec}).\n" + result["text"])
    for report, status in _reports_among(paths):
        # A report is a failure seen: one that passes now was fixed, or never failed again (flaky).
        warnings.warn(f"chunkmeta.replay: {report} does not reproduce: {module}.{qualname} answers it right now "
                      f"(the report's status: {status})", stacklevel=2)
    return result["files"]


def _reports_among(paths):
    """The counterexample reports (not corpus entries) among the files given, with their status."""
    for path in paths:
        for file in [path] if path.is_file() else sorted(path.rglob("*.report.json")):
            try:
                report = json.loads(file.read_text())
            except (OSError, ValueError):
                continue
            if isinstance(report, dict) and "finding" in report:
                yield file, report.get("status", "?")
