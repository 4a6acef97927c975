"""check()'s settings, in Hypothesis's manner: a settings object, named
profiles (``settings.register_profile`` / ``settings.load_profile``, or the
``CHUNKMETA_PROFILE`` environment variable), and phases."""

import enum
import math
import numbers
import os
from pathlib import Path


class Phase(enum.Enum):
    """The stages of a check() run; ``settings(phases=...)`` picks which run.

    replay: the example database (this function's earlier failures), then the
    corpus; generate: every property on fresh cases; shrink: a failure is
    shrunk to a minimal case (without it, reported as found).
    """

    replay = "replay"
    generate = "generate"
    shrink = "shrink"


_DEFAULTS = {
    # The most cases per property (times its share); 0: 1000.
    "cases": 0,
    # The least: what each property must run to count as run. Between the two,
    # time_budget decides (a slow fn runs its floor, a fast one every case);
    # 0: cases, all of them, whatever the time.
    "min_cases": 200,
    # The run's seed; None: a random one, printed with every report.
    "seed": None,
    # True: fn is an engine function, sent valid workloads only; False: it must
    # also reject invalid ones like the library (raise with code, field, index).
    "valid_only": True,
    # Seconds the properties share (the generate phase), above their floors;
    # without a floor (min_cases=0) a budget that cuts a property short is not
    # a pass. 0: none.
    "time_budget": 6.0,
    # Where reports go; None: $CHUNKMETA_REPORT_DIR or ./chunkmeta-reports.
    "report_dir": None,
    # What fn is given: "torch" (CPU tensors, as the engine passes them),
    # "numpy" or "lists"; None: torch when it is installed, else numpy.
    "arrays": None,
    # Files or folders replayed before the properties; None: the corpus
    # shipped in the package; []: none.
    "corpus": None,
    # Stop at the first failing property.
    "fail_fast": False,
    # Run the properties even when the replay already fails.
    "keep_going": False,
    # Names from properties(spec) to run; None: all.
    "properties": None,
    # The engine's domain, stated: edge classes (edge_classes(spec)) it never
    # sends, e.g. ("empty batch",). No case, shrink candidate or corpus entry
    # in one is tried; the summary counts what was left out.
    "exclude": (),
    # Seconds one call may take before it is cut short and reported as timed_out
    # (while shrinking, at most 10x the slowest answer so far; up to 10x the
    # timeout for a call its size predicts to be long); 0 or None: no limit.
    "timeout": 10.0,
    # Print each stage and each failure as it happens.
    "verbose": False,
    "phases": tuple(Phase),
    # The example database: a folder where failures are saved and replayed
    # first next time, one subfolder per (spec, function); None: none.
    "database": Path(".chunkmeta") / "examples",
}


_LARGEST_COUNT = 2**31 - 1  # a case count the C++ run loop holds (int)
_LARGEST_SEED = 2**64 - 1


def _whole(values, name, lowest, highest, none_allowed=False):
    value = values[name]
    if value is None and none_allowed:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"settings: {name} must be a whole number{' or None' if none_allowed else ''}, "
                        f"not {type(value).__name__} {value!r}")
    if not lowest <= value <= highest:
        raise ValueError(f"settings: {name} must be between {lowest} and {highest}, not {value}")


def _seconds(values, name, zero_means):
    value = values[name]
    if value is None and zero_means:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"settings: {name} must be a number of seconds, not {type(value).__name__} {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"settings: {name} must be a finite number of seconds, at least 0 ({zero_means}), "
                         f"not {value!r}")


def _names(values, name, none_allowed):
    value = values[name]
    if (value is None and none_allowed) or isinstance(value, str):  # one name alone is a name, not its characters
        return
    if isinstance(value, (str, bytes)) or not all(isinstance(item, str) for item in _iterable(value, name)):
        raise TypeError(f"settings: {name} must be a list of names (strings), not {value!r}")


def _iterable(value, name):
    try:
        return list(value)
    except TypeError:
        raise TypeError(f"settings: {name} must be a list, not {type(value).__name__} {value!r}") from None


def _validate(values):
    """Every setting checked when the settings are made, with the setting's name in the error:
    a wrong one never reaches the run (nor becomes a C++ cast's error, or a default)."""
    _whole(values, "cases", 0, _LARGEST_COUNT)
    _whole(values, "min_cases", 0, _LARGEST_COUNT, none_allowed=True)
    _whole(values, "seed", 0, _LARGEST_SEED, none_allowed=True)
    _seconds(values, "time_budget", "0: no budget")
    _seconds(values, "timeout", "0 or None: no limit")
    _names(values, "properties", none_allowed=True)
    _names(values, "exclude", none_allowed=False)
    if values["arrays"] not in (None, "torch", "numpy", "lists"):
        raise ValueError(f"settings: arrays must be 'torch', 'numpy', 'lists' or None, not {values['arrays']!r}")
    if Phase.replay not in values["phases"] and Phase.generate not in values["phases"]:
        raise ValueError(f"settings: phases {[p.value for p in values['phases']]} run nothing: they need "
                         "Phase.replay, Phase.generate or both")
    for name in ("report_dir", "database"):
        if values[name] is not None and not isinstance(values[name], (str, os.PathLike)):
            raise TypeError(f"settings: {name} must be a path or None, not {type(values[name]).__name__} "
                            f"{values[name]!r}")
    if values["corpus"] is not None:
        for place in _iterable(values["corpus"], "corpus"):
            if not isinstance(place, (str, os.PathLike)):
                raise TypeError(f"settings: corpus must be a list of paths, not one holding {place!r}")


class settings:
    """What check() does: ``settings(parent=None, **changes)``.

    Unset fields come from ``parent``, else from the default profile. Fields:
    """

    __doc__ += "\n".join(f"    {name} = {value!r}" for name, value in _DEFAULTS.items())

    _profiles = {}
    _loaded = "default"

    def __init__(self, parent=None, **changes):
        unknown = sorted(set(changes) - set(_DEFAULTS))
        if unknown:
            raise TypeError(f"unknown setting(s) {', '.join(unknown)}; the settings are {', '.join(_DEFAULTS)}")
        values = dict((parent if parent is not None else settings._profiles["default"])._values)
        values.update(changes)
        values["phases"] = tuple(Phase(p) for p in values["phases"])
        _validate(values)
        self._values = values

    def __getattr__(self, name):
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        if name != "_values":
            raise AttributeError("settings are immutable: make new ones with settings(parent, **changes)")
        super().__setattr__(name, value)

    def __eq__(self, other):
        return isinstance(other, settings) and self._values == other._values

    def __repr__(self):
        changed = {k: v for k, v in self._values.items() if v != _DEFAULTS[k]}
        return "settings(" + ", ".join(f"{k}={v!r}" for k, v in changed.items()) + ")"

    @staticmethod
    def register_profile(name, parent=None, **changes):
        """Registers (or replaces) a named profile."""
        settings._profiles[name] = settings(parent, **changes)

    @staticmethod
    def get_profile(name):
        try:
            return settings._profiles[name]
        except KeyError:
            raise ValueError(f"no settings profile {name!r}; registered: {', '.join(sorted(settings._profiles))}") \
                from None

    @staticmethod
    def load_profile(name):
        """Makes the named profile the default of every check() without explicit settings."""
        settings.get_profile(name)
        settings._loaded = name

    @staticmethod
    def current():
        """The settings check() uses by default: the profile named by the
        CHUNKMETA_PROFILE environment variable when it is set (read at each
        call, so profiles registered in a conftest.py are found), else the
        loaded one."""
        return settings.get_profile(os.environ.get("CHUNKMETA_PROFILE") or settings._loaded)


def _default_settings():
    plain = object.__new__(settings)
    object.__setattr__(plain, "_values", dict(_DEFAULTS))
    return plain


settings._profiles["default"] = _default_settings()
# For a CI job: 5,000 cases per property whatever the time, every property
# even after a replay failure or a first bug (each distinct bug reported), and
# each stage printed as it runs.
settings.register_profile("ci", cases=5000, min_cases=0, time_budget=0.0, keep_going=True, verbose=True)
# While finding a bug: each stage and failure printed, stop at the first failing property.
settings.register_profile("debug", verbose=True, fail_fast=True)
