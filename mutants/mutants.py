"""The mutant catalogue as engine-style Python functions, for the three-door
test: each slip must be caught through the Python adapter with the same
minimal counterexample as built in. Test-only code. Each spec folder's
<folder>_mutants.py holds its slips with its engine's signature; this module
gathers them (`mutants.gap_off_by_one`), named as attributes of this module.

Each function is the reference procedure rewritten wrong in exactly one way,
with C++'s int32 conversions and truncating division reproduced
(int_arithmetic.py), so that its answers equal the C++ mutant's on every
valid workload.
"""

import importlib.util
import pathlib
import sys

_HERE = pathlib.Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))  # int_arithmetic, for the spec folders' modules

import int_arithmetic  # noqa: E402

_SHARED = set(dir(int_arithmetic))
for _path in sorted((_HERE.parent / "specs").glob("*/*_mutants.py")):
    _spec = importlib.util.spec_from_file_location(_path.stem, _path)
    _module = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)
    for _name, _value in vars(_module).items():
        if _name.startswith("_") or _name in _SHARED or isinstance(_value, type(sys)):
            continue
        if callable(_value) and getattr(_value, "__module__", None) == _path.stem:
            _value.__module__ = __name__  # reports and rerun commands name it mutants.<slip>
        globals()[_name] = _value  # the slips, and tables of them (FLA_SLIPS)
