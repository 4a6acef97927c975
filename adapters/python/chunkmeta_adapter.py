#!/usr/bin/env python3
"""Turn a Python function with an engine's signature into a `chunkmeta check` implementation.

    chunkmeta check --valid-only --impl "cmd:python3 adapters/python/chunkmeta_adapter.py my_module:my_function"
    chunkmeta check --spec fla.chunk_indices --valid-only --impl "cmd:python3 adapters/python/chunkmeta_adapter.py fla_index.py:prepare_chunk_indices"

The function is called as each request's spec has it: with the spec's inputs in
its order, as `chunkmeta specs --json` describes them (the harness puts that in
CHUNKMETA_SPECS for the programs it starts), e.g.

    mamba (no "spec" in the request):
        function(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu)
            -> (cu_chunk_seqlen, seq_idx, last_chunk_indices)
    fla.chunk_indices:  function(cu_seqlens, chunk_size) -> chunk_indices, an N x 2 array
    fla.chunk_offsets:  function(cu_seqlens, chunk_size) -> chunk_offsets, B + 1 entries

with torch tensors when torch can be imported (else plain lists; --lists or
--torch choose): int32, or of the request's "dtype" for an input that may be
int64, as the engine holds them. It may return tensors, numpy arrays or lists.

TARGET is module:function (the module is imported with the current directory on
sys.path) or path/to/file.py:function.

This program speaks the JSON Lines protocol of `chunkmeta compute` (docs/cli.md,
"The protocol"): one workload per input line, one answer per line in the same order,
echoing each line's "id"; a result goes as int32 bytes after a header line when the
harness offers that (CHUNKMETA_ANSWER_ENCODING=int32le). An exception, or a return value
that is not the spec's outputs, is answered with {"failure": {...}} so the harness reports
it as a finding of that workload (with the traceback) instead of a crash of the whole run.
So is a function that changes an argument in place (the engine's own tensors, which later
readers use): every array and list is compared after the call with what was sent, and a
change is {"failure": {"kind": "changed_input", ...}} naming the input and its first changed entry.

The protocol has a descriptor of its own: the function's stdout (print, a logger on
sys.stdout, a C library writing to fd 1) goes to stderr, never into the answers.
"""

import argparse
import array
import importlib
import importlib.util
import json
import os
import sys
import traceback


# The harness offers the binary answer (README, "The protocol"): a header line
# {"id":N,"int32le":[a,b,c]} and the entries as little-endian int32 bytes.
# Writing a tensor's bytes costs ~20 ns per entry; json.dumps ~200.
BINARY_OFFERED = os.environ.get("CHUNKMETA_ANSWER_ENCODING") == "int32le"
LITTLE_ENDIAN = sys.byteorder == "little"
INT32_MIN, INT32_MAX = -2**31, 2**31 - 1


def load_function(target):
    module_name, sep, function_name = target.rpartition(":")
    if not sep or not module_name or not function_name:
        sys.exit(f"chunkmeta_adapter: TARGET must be module:function or path.py:function, not {target!r}")
    if module_name.endswith(".py") or os.sep in module_name:
        spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(module_name))[0], module_name)
        if spec is None or spec.loader is None:
            sys.exit(f"chunkmeta_adapter: cannot load {module_name}")
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, os.path.dirname(os.path.abspath(module_name)))
        spec.loader.exec_module(module)
    else:
        sys.path.insert(0, os.getcwd())
        module = importlib.import_module(module_name)
    function = getattr(module, function_name, None)
    if not callable(function):
        sys.exit(f"chunkmeta_adapter: {module_name} has no function {function_name}")
    return function


def choose_arrays(mode):
    """Returns (description, make) where make(list_of_ints, dtype_name) builds the argument."""
    if mode != "lists":
        try:
            import torch
        except ImportError:
            if mode == "torch":
                sys.exit("chunkmeta_adapter: --torch given, but torch cannot be imported")
        else:
            dtypes = {"int32": torch.int32, "int64": torch.int64}
            return "torch tensors", lambda values, dtype: torch.tensor(values, dtype=dtypes[dtype])
    return "lists", lambda values, dtype: list(values)


def text_of(value):
    """str(value), whatever it is: an exception whose __str__ raises still has a text."""
    try:
        return str(value)
    except Exception as error:  # noqa: BLE001 - the function's object, not ours
        return f"(str() of it raised {type(error).__name__})"


def repr_of(value):
    try:
        return repr(value)
    except Exception as error:  # noqa: BLE001
        return f"(repr() of it raised {type(error).__name__})"


def layout_problem(value, name):
    """Why an array output is not what the engine's kernels read through its pointer (C-contiguous), or None.
    The harness's own reader (chunkmeta.check) applies the same rule."""
    if hasattr(value, "is_contiguous") and callable(value.is_contiguous):
        if not value.is_contiguous():
            return (f"{name} is a tensor of shape {tuple(value.shape)} that is not contiguous (a strided view): "
                    "a kernel reading it through its pointer sees another layout")
    elif getattr(getattr(value, "flags", None), "c_contiguous", True) is False:
        return (f"{name} is an array that is not C-contiguous (a strided view or Fortran order): a kernel reading it "
                "through its pointer sees another layout")
    return None


def as_int_list(value, name, columns):
    """The integers of an output (rows of pairs flattened), or a sentence saying why it is not one."""
    if (why := layout_problem(value, name)) is not None:
        return None, why
    if hasattr(value, "tolist"):
        value = value.tolist()
    try:
        values = value if type(value) is list else list(value)
    except TypeError:
        return None, f"{name} is {type(value).__name__}, not a sequence"
    if columns == 2:
        flat = []
        for index, row in enumerate(values):
            if not isinstance(row, (list, tuple)) or len(row) != 2:
                return None, f"{name}[{index}] is {row!r}, not a pair"
            flat.extend(row)
        values = flat
    # The common answer, all plain ints, is checked in one C-level pass: a
    # Python loop here cost ~1 us per entry, more than most functions under test.
    if set(map(type, values)) <= {int}:
        return values, None
    for index, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, int):
            return None, f"{name}[{index}] is {v!r} ({type(v).__name__}), not an integer"
    return values, None


def int32le_bytes(value, columns):
    """An output's entries as little-endian int32 bytes, or None when it is not
    plainly that (then the JSON path answers, and says what is wrong with it)."""
    if not LITTLE_ENDIAN:
        return None
    dtype = str(getattr(value, "dtype", ""))
    if dtype.replace("torch.", "") in ("int32", "int64") and getattr(value, "ndim", 0) == columns:
        if hasattr(value, "device") and value.device.type != "cpu":
            return None
        if hasattr(value, "numpy"):  # a torch tensor
            value = value.contiguous().numpy()
        if columns == 2 and value.shape[1] != 2:
            return None
        if value.dtype.itemsize == 8 and value.size and (value.min() < INT32_MIN or value.max() > INT32_MAX):
            return None  # beyond int32: JSON carries the exact value into the report
        return value.astype("<i4", copy=False).tobytes()
    if columns != 1:
        return None
    values = value.tolist() if hasattr(value, "tolist") else value
    if type(values) is not list or not set(map(type, values)) <= {int}:
        return None
    try:
        return array.array("i", values).tobytes() if array.array("i").itemsize == 4 else None
    except OverflowError:  # beyond int32: JSON carries the exact value into the report
        return None


def binary_answer(request_id, frames):
    counts = ",".join(str(len(frame) // 4) for frame in frames)
    echoed = "" if request_id is None else f'"id":{json.dumps(request_id)},'
    return f'{{{echoed}"int32le":[{counts}]}}\n'.encode() + b"".join(frames)


def failure(kind, summary, detail=""):
    return {"failure": {"kind": kind, "summary": summary, "detail": detail}}


def load_specs():
    """Every spec's description by name, and the one a request without "spec" means."""
    text = os.environ.get("CHUNKMETA_SPECS")
    if not text:
        sys.exit("chunkmeta_adapter: CHUNKMETA_SPECS is not set: run it through `chunkmeta check --impl cmd:...` "
                 "(or set it to the output of `chunkmeta specs --json`)")
    specs = json.loads(text)
    default = next((name for name, spec in specs.items() if not spec["named_on_the_wire"]), None)
    return specs, default


def values_now(argument):
    """The integers an array or list argument holds now, or a sentence saying why it holds none."""
    try:
        values = argument.tolist() if hasattr(argument, "tolist") else list(argument)
    except Exception as error:  # noqa: BLE001 - whatever the function left behind
        return None, f"it can no longer be read: {type(error).__name__}: {text_of(error)}"
    if type(values) is not list:
        return None, f"it is now {repr_of(argument)[:200]}"
    return values, None


def listed(values, shown=32):
    """At most `shown` entries, as the harness's reports show a list."""
    more = f", ... ({len(values)} entries)" if len(values) > shown else ""
    return "[" + ", ".join(map(repr_of, values[:shown])) + more + "]"


def input_change(name, sent, argument):
    """The failure of a function that changed the argument `name` it was sent `sent`, or None."""
    now, why = values_now(argument)
    if why is not None:
        return failure("changed_input", f"changed its input {name}: after the call it is no longer the array it "
                                        "was sent", why)
    if now == sent:
        return None
    first = next((i for i, (a, b) in enumerate(zip(sent, now)) if a != b), None)
    what = [] if len(now) == len(sent) else [f"it had {len(sent)} entries, has {len(now)} after the call"]
    if first is not None:
        what.append(f"entry {first} was {sent[first]}, is {now[first]!r} after the call")
    return failure("changed_input", f"changed its input {name}: " + "; ".join(what),
                   f"sent:           {listed(sent)}\nafter the call: {listed(now)}")


def call(function, make_array, spec, request):
    """The function's outputs as a tuple (its arguments are the spec's inputs, in order), and the
    failure of a function that changed one of them (else None)."""
    dtype = request.get("dtype", "int32")
    arguments, sent = [], []  # sent: (name, values, the argument) of each array and list
    for given in spec["inputs"]:
        if given["kind"] == "rows":  # the number of rows: the offsets' length less one
            offsets = next(each["name"] for each in spec["inputs"] if each["slot"] == "offsets")
            arguments.append(len(request[offsets]) - 1)
        elif given["kind"] == "array":
            arguments.append(make_array(request[given["name"]], dtype if dtype in given["dtypes"] else "int32"))
            sent.append((given["name"], request[given["name"]], arguments[-1]))
        elif given["kind"] == "list":  # passed as a list of ints whatever the arrays are, as the engine does
            arguments.append(list(request[given["name"]]))
            sent.append((given["name"], request[given["name"]], arguments[-1]))
        else:  # a scalar, an optional one (None) or a flag (a bool), as JSON gives them
            arguments.append(request[given["name"]])
    result = function(*arguments)
    changed = next(filter(None, (input_change(name, values, argument) for name, values, argument in sent)), None)
    return ((result,) if len(spec["outputs"]) == 1 else result), changed


def answer(function, make_array, specs, request):
    """The answer as bytes to write (the binary frame) or a JSON object."""
    descriptions, default = specs
    name = request.get("spec", default)
    spec = descriptions.get(name)
    if spec is None:
        return failure("malformed_output", f"the adapter does not know spec {name!r}")
    outputs = [(output["name"], output["columns"]) for output in spec["outputs"]]
    try:
        result, changed = call(function, make_array, spec, request)
    except Exception as error:  # the function's failure is this workload's finding
        try:
            trace = traceback.format_exc()
        except Exception:  # noqa: BLE001 - a traceback of an exception whose str() raises
            trace = ""
        return failure("raised", f"raised {type(error).__name__}: {text_of(error)}", trace)
    if changed is not None:
        return changed
    if not isinstance(result, (tuple, list)) or len(result) != len(outputs):
        return failure("malformed_output", f"returned {type(result).__name__} instead of {len(outputs)} sequences",
                       repr_of(result)[:400])
    if BINARY_OFFERED and not any(layout_problem(value, name) for value, (name, _) in zip(result, outputs)):
        frames = [int32le_bytes(value, columns) for value, (_, columns) in zip(result, outputs)]
        if all(frame is not None for frame in frames):
            return binary_answer(request.get("id"), frames)
    out = {}
    for value, (name, columns) in zip(result, outputs):
        values, why = as_int_list(value, name, columns)
        if why:
            return failure("malformed_output", "returned " + why, repr_of(value)[:400])
        out[name] = [values[k:k + 2] for k in range(0, len(values), 2)] if columns == 2 else values
    return out


def serve(function, make_array, specs, stdin_fd, stdout):
    """Answers every complete line read; flushes once per read, so a batch is one write."""
    pending = b""
    while True:
        chunk = os.read(stdin_fd, 1 << 20)
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        replies = []
        for line in lines:
            if not line.strip():
                continue
            try:
                request = json.loads(line)
            except ValueError as error:
                replies.append(failure("malformed_output", f"the adapter could not read its input line: {error}"))
                continue
            reply = answer(function, make_array, specs, request)
            if isinstance(reply, dict) and "id" in request:
                reply = {"id": request["id"], **reply}
            replies.append(reply)
        if replies:
            stdout.write(b"".join(r if isinstance(r, bytes) else json.dumps(r, separators=(",", ":")).encode() + b"\n"
                                  for r in replies))
            stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", help="module:function or path/to/file.py:function")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--lists", dest="mode", action="store_const", const="lists",
                       help="pass plain lists even when torch is importable")
    group.add_argument("--torch", dest="mode", action="store_const", const="torch",
                       help="pass torch tensors (fail if torch cannot be imported)")
    args = parser.parse_args()
    specs = load_specs()
    # The answers go out on a descriptor of their own; from here on fd 1 and sys.stdout are stderr,
    # before the function's module is imported (a logger's handler binds sys.stdout then).
    sys.stdout.flush()
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    function = load_function(args.target)
    description, make_array = choose_arrays(args.mode)
    print(f"chunkmeta_adapter: {args.target} receives {description}", file=sys.stderr)
    serve(function, make_array, specs, sys.stdin.fileno(), protocol)


if __name__ == "__main__":
    main()
