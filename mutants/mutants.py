"""The mutant catalogue as engine-style Python functions, for the three-door
test and the Python tests: each slip must be caught through the Python
adapter and chunkmeta.check() with the same minimal counterexample as built
in. Test-only code.

The slips are stated once, in C++ (each spec folder's <folder>_mutants.cpp):
each function here calls its C++ mutant through the test-only mutant plugin
(mutants/mutant_plugin.cpp, the C ABI of <chunkmeta/plugin.h>, version 3),
whose path $CHUNKMETA_MUTANT_PLUGIN gives (ctest sets it). A function takes
its spec's arguments as the engine's function does (tensors, numpy arrays or
lists; None or an int; a bool), in the spec's order, and returns its outputs
as lists (a two-column output as pairs), raising ValueError where the mutant
refuses the workload. Named as the catalogue names it with "_" for "-"
(`mutants.head_not_capped`); `slips_of(spec)` lists a spec's slips that an
engine function's door catches (not those of validation: engines send valid
workloads only).
"""

import ctypes
import inspect
import json
import os

_int64_p = ctypes.POINTER(ctypes.c_int64)
_int32_p = ctypes.POINTER(ctypes.c_int32)


class _Workload(ctypes.Structure):
    _fields_ = [("spec", ctypes.c_char_p), ("scalar_count", ctypes.c_uint32), ("scalars", _int64_p),
                ("array_count", ctypes.c_uint32), ("arrays", ctypes.POINTER(_int64_p)), ("array_lengths", _int64_p),
                ("dtype_bits", ctypes.c_uint32)]


class _Output(ctypes.Structure):
    _fields_ = [("count", ctypes.c_uint32), ("arrays", ctypes.POINTER(_int32_p)), ("capacities", _int64_p),
                ("sizes", _int64_p), ("error_code", ctypes.c_char_p), ("error_field", ctypes.c_char_p),
                ("error_index", ctypes.c_int64)]


_Compute = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_Workload), ctypes.POINTER(_Output))


class _Implementation(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("description", ctypes.c_char_p), ("spec", ctypes.c_char_p),
                ("flags", ctypes.c_uint32), ("compute", _Compute)]


class _Plugin(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_uint32), ("implementation_count", ctypes.c_uint32),
                ("implementations", ctypes.POINTER(_Implementation))]


_REJECTED, _BUFFER_TOO_SMALL = 1, 2  # chunkmeta_status (CHUNKMETA_OK is 0)


def _plugin():
    path = os.environ.get("CHUNKMETA_MUTANT_PLUGIN")
    if not path:
        raise ImportError("mutants: CHUNKMETA_MUTANT_PLUGIN is not set: point it at the mutant plugin the build makes "
                          "(build/<preset>/bin/chunkmeta_mutant_plugin.so); ctest sets it")
    library = ctypes.CDLL(path)
    library.chunkmeta_get_plugin_v3.restype = ctypes.POINTER(_Plugin)
    library.chunkmeta_mutants_json.restype = ctypes.c_char_p
    return library


def _descriptions():
    """Every spec's description by name (`chunkmeta specs --json`): from the environment the harness gives a
    program it runs, else from the chunkmeta package."""
    text = os.environ.get("CHUNKMETA_SPECS")
    if text:
        return json.loads(text)
    import chunkmeta

    return chunkmeta._DESCRIPTIONS


def _ints(values):
    return values.tolist() if hasattr(values, "tolist") else [int(v) for v in values]


def _is_int64(values):
    return "int64" in str(getattr(values, "dtype", ""))


def _call(slip, arguments):
    """The mutant ``slip`` on the arguments of its spec's function: the C ABI's workload from them, its outputs as
    lists."""
    implementation, described = _BY_SLIP[slip]
    inputs, outputs = described["inputs"], described["outputs"]
    if len(arguments) != len(inputs):
        raise TypeError(f"{slip}() takes {len(inputs)} arguments ({len(arguments)} given)")
    scalars, arrays, wide = [], [], False
    for given, value in zip(inputs, arguments):
        kind = given["kind"]
        if kind == "optional":
            scalars += [0, 0] if value is None else [1, int(value)]
        elif kind == "flag":
            scalars.append(1 if value else 0)
        elif kind == "scalar":
            scalars.append(int(value))
        elif kind in ("array", "list"):
            arrays.append(_ints(value))
            wide = wide or ("int64" in given["dtypes"] and _is_int64(value))
    columns = [(ctypes.c_int64 * len(a))(*a) for a in arrays]
    workload = _Workload(implementation.spec, len(scalars), (ctypes.c_int64 * max(1, len(scalars)))(*scalars),
                         len(arrays), (_int64_p * max(1, len(arrays)))(*[ctypes.cast(c, _int64_p) for c in columns]),
                         (ctypes.c_int64 * max(1, len(arrays)))(*[len(a) for a in arrays]), 64 if wide else 32)
    capacities = [64] * len(outputs)
    while True:
        buffers = [(ctypes.c_int32 * c)() for c in capacities]
        sizes = (ctypes.c_int64 * len(outputs))()
        output = _Output(len(outputs), (_int32_p * len(outputs))(*[ctypes.cast(b, _int32_p) for b in buffers]),
                         (ctypes.c_int64 * len(outputs))(*capacities), sizes, None, None, -1)
        status = implementation.compute(ctypes.byref(workload), ctypes.byref(output))
        if status != _BUFFER_TOO_SMALL:
            break
        capacities = [max(c, s) for c, s in zip(capacities, sizes)]
    if status == _REJECTED:
        raise ValueError(f"{output.error_code.decode()}: {output.error_field.decode()}[{output.error_index}]")
    results = []
    for buffer, size, out in zip(buffers, sizes, outputs):
        values = buffer[:size]
        results.append([values[k:k + 2] for k in range(0, size, 2)] if out["columns"] == 2 else values)
    return results[0] if len(results) == 1 else tuple(results)


def _mutant(slip, implementation, described):
    """The slip as a function of its spec's arguments, holding only its name (as a mutant factory's function
    holds its slip: check()'s example database tells functions apart by what they hold)."""

    def compute(*arguments):
        return _call(slip, arguments)

    compute.__name__ = compute.__qualname__ = slip
    compute.__module__ = __name__  # reports and rerun commands name it mutants.<slip>
    compute.__doc__ = implementation.description.decode()
    compute.__signature__ = inspect.Signature(
        [inspect.Parameter(given["name"], inspect.Parameter.POSITIONAL_OR_KEYWORD) for given in described["inputs"]])
    return compute


_LIBRARY = _plugin()
_TABLE = _LIBRARY.chunkmeta_get_plugin_v3().contents
_SPECS = _descriptions()
_VALIDATION = {entry["name"] for entry in json.loads(_LIBRARY.chunkmeta_mutants_json()) if entry["slip_of_validation"]}
_BY_SLIP = {}  # each slip's name -> (its implementation in the plugin's table, its spec's description)
_SPEC_OF = {}  # the slips an engine function's door catches -> their spec
for _i in range(_TABLE.implementation_count):
    _implementation = _TABLE.implementations[_i]
    _slip = _implementation.name.decode().replace("-", "_")
    _BY_SLIP[_slip] = (_implementation, _SPECS[_implementation.spec.decode()])
    globals()[_slip] = _mutant(_slip, *_BY_SLIP[_slip])
    if _implementation.name.decode() not in _VALIDATION:
        _SPEC_OF[_slip] = _implementation.spec.decode()


def slips_of(*specs):
    """The names of the slips of ``specs`` that a door sending valid workloads only catches, in the catalogue's order."""
    return [name for name, spec in _SPEC_OF.items() if spec in specs]


def spec_of(name):
    """The spec whose function the slip ``name`` rewrites."""
    return _SPEC_OF[name]
