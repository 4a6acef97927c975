#!/usr/bin/env python3
"""Turn a Python function with the engine's signature into a `chunkmeta check` implementation.

    chunkmeta check --valid-only --impl "cmd:python3 adapters/python/chunkmeta_adapter.py my_module:my_function"

The function is called as

    function(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu)
        -> (cu_chunk_seqlen, seq_idx, last_chunk_indices)

with int32 torch tensors when torch can be imported (else plain lists; --lists or
--torch choose), and may return tensors, lists or anything with .tolist().

TARGET is module:function (the module is imported with the current directory on
sys.path) or path/to/file.py:function.

This program speaks the JSON Lines protocol of `chunkmeta compute` (docs/cli.md,
"The protocol"): one workload per input line, one answer per line in the same order,
echoing each line's "id"; a result goes as int32 bytes after a header line when the
harness offers that (CHUNKMETA_ANSWER_ENCODING=int32le). An exception, or a return value that is not three integer
sequences, is answered with {"failure": {...}} so the harness reports it as a finding
of that workload (with the traceback) instead of a crash of the whole run.
"""

import argparse
import array
import importlib
import importlib.util
import json
import os
import sys
import traceback

OUTPUTS = ("cu_chunk_seqlen", "seq_idx", "last_chunk_indices")

# The harness offers the binary answer (README, "The protocol"): a header line
# {"id":N,"int32le":[a,b,c]} and the entries as little-endian int32 bytes.
# Writing a tensor's bytes costs ~20 ns per entry; json.dumps ~200.
BINARY_OFFERED = os.environ.get("CHUNKMETA_ANSWER_ENCODING") == "int32le"
LITTLE_ENDIAN = sys.byteorder == "little"


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
    """Returns (description, make) where make(list_of_ints) builds the argument."""
    if mode != "lists":
        try:
            import torch
        except ImportError:
            if mode == "torch":
                sys.exit("chunkmeta_adapter: --torch given, but torch cannot be imported")
        else:
            return "int32 torch tensors", lambda values: torch.tensor(values, dtype=torch.int32)
    return "lists", list


def as_int_list(value, name):
    """The integers of an output, or a sentence saying why it is not one."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    try:
        values = value if type(value) is list else list(value)
    except TypeError:
        return None, f"{name} is {type(value).__name__}, not a sequence"
    # The common answer, all plain ints, is checked in one C-level pass: a
    # Python loop here cost ~1 us per entry, more than most functions under test.
    if set(map(type, values)) <= {int}:
        return values, None
    for index, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, int):
            return None, f"{name}[{index}] is {v!r} ({type(v).__name__}), not an integer"
    return values, None


def int32le_bytes(value):
    """An output's entries as little-endian int32 bytes, or None when it is not
    plainly that (then the JSON path answers, and says what is wrong with it)."""
    if not LITTLE_ENDIAN:
        return None
    dtype = str(getattr(value, "dtype", ""))
    if dtype in ("torch.int32", "int32") and getattr(value, "ndim", 0) == 1:
        if hasattr(value, "device") and value.device.type != "cpu":
            return None
        if hasattr(value, "numpy"):  # a torch tensor
            value = value.contiguous().numpy()
        return value.astype("<i4", copy=False).tobytes()
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


def answer(function, make_array, request):
    """The answer as bytes to write (the binary frame) or a JSON object."""
    computed = request["num_computed_tokens"]
    starts = request["query_start_loc"]
    try:
        result = function(request["chunk_size"], len(computed), make_array(computed), make_array(starts))
    except Exception as error:  # the function's failure is this workload's finding
        return failure("raised", f"raised {type(error).__name__}: {error}", traceback.format_exc())
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        return failure("malformed_output", f"returned {type(result).__name__} instead of three sequences",
                       repr(result)[:400])
    if BINARY_OFFERED:
        frames = [int32le_bytes(value) for value in result]
        if all(frame is not None for frame in frames):
            return binary_answer(request.get("id"), frames)
    out = {}
    for name, value in zip(OUTPUTS, result):
        values, why = as_int_list(value, name)
        if why:
            return failure("malformed_output", "returned " + why, repr(value)[:400])
        out[name] = values
    return out


def serve(function, make_array, stdin_fd, stdout):
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
            reply = answer(function, make_array, request)
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
                       help="pass int32 torch tensors (fail if torch cannot be imported)")
    args = parser.parse_args()
    function = load_function(args.target)
    description, make_array = choose_arrays(args.mode)
    print(f"chunkmeta_adapter: {args.target} receives {description}", file=sys.stderr)
    serve(function, make_array, sys.stdin.fileno(), sys.stdout.buffer)


if __name__ == "__main__":
    main()
