#!/usr/bin/env bash
# Cases per second of `chunkmeta check` through each door, one run, same seed:
# built in, plugin in this process, plugin isolated in a child, `cmd:` against
# `chunkmeta compute`, and `cmd:` against the pure-Python example (lists, and
# int32 torch tensors when a python3 imports torch), and the Python module's
# chunkmeta.check() on the same function in process; then FLA's chunk_indices
# built in, through `chunkmeta compute` and as a pure-Python function through
# the adapter and check(). Prints each run's throughput lines (where the time
# went), for docs/results.md (tools/results.sh).
#   tools/check_throughput.sh [BUILD_DIR]   (default build/default)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="$(cd "${1:-build/default}" && pwd)"
cli="$build/bin/chunkmeta"
plugin="$build/bin/chunkmeta_fast_plugin.so"
adapter="adapters/python/chunkmeta_adapter.py"
example="examples/python/reference_procedure.py:compute_chunk_metadata"
reports="$(mktemp -d)"
trap 'rm -rf "$reports"' EXIT

run() {
  echo "--- $1"
  shift
  "$cli" check --seed 20261202 --corpus "$reports" --report-dir "$reports" "$@" | grep -A1 "^Throughput\|^NOT VERIFIED"
}

run "built in" --impl fast --cases 2000
run "plugin, in process" --impl "plugin:$plugin" --in-process --cases 2000
run "plugin, isolated in a child" --impl "plugin:$plugin" --cases 2000
run "cmd: chunkmeta compute" --impl "cmd:$cli compute" --cases 2000
run "cmd: Python example, lists" --valid-only --impl "cmd:python3 $adapter --lists $example" --cases 500
for python in python3 /usr/bin/python3; do
  if "$python" -c "import torch" 2>/dev/null; then
    run "cmd: Python example, torch tensors ($python)" --valid-only --impl "cmd:$python $adapter --torch $example" --cases 500
    break
  fi
done

# check_in_process LABEL SPEC MODULE:FUNCTION ARRAYS: the Python module's check(), the same
# suite, seed and function as the doors above, in process (no subprocess, no JSON).
check_in_process() {
  echo "--- $1"
  PYTHONPATH="$build/python:examples/python" /usr/bin/python3 - "$2" "$3" "$4" "$reports" <<'PY'
import importlib, sys, chunkmeta
spec, target, arrays, reports = sys.argv[1:]
module, function = target.split(":")
s = chunkmeta.check(getattr(importlib.import_module(module), function), spec=spec, seed=20261202, cases=500,
                    corpus=[], arrays=arrays, report_dir=reports, database=None)
calls = sum(p.calls for p in s.properties)
print(f"Throughput: {s.cases} cases in {s.seconds:.2f} s = {s.cases_per_second:.0f} cases/s; {calls} calls")
PY
}
if [ -d "$build/python/chunkmeta" ]; then
  for arrays in lists torch; do
    check_in_process "chunkmeta.check(), Python example in process, $arrays" mamba \
      reference_procedure:compute_chunk_metadata "$arrays"
  done
fi

# What a pre-push test costs: chunkmeta.check() with the default profile on the
# SPEC's procedure in Python, the whole process (Python's start and imports included).
if [ -d "$build/python/chunkmeta" ]; then
  echo "--- chunkmeta.check(), default profile, Python example, whole process"
  start=$(date +%s%N)
  (cd "$reports" && PYTHONPATH="$build/python:$OLDPWD/examples/python" /usr/bin/python3 -c \
    "import chunkmeta, reference_procedure; chunkmeta.check(reference_procedure.compute_chunk_metadata)")
  echo "Wall time: $(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }') s"
fi

# FLA's chunk_indices (specs/fla) through the same doors.
fla_example="examples/python/fla_reference_procedure.py:reference_chunk_indices"
run "FLA, built in" --spec fla.chunk_indices --impl fast --cases 2000
run "FLA, cmd: chunkmeta compute" --spec fla.chunk_indices --impl "cmd:$cli compute" --cases 2000
run "FLA, cmd: Python example, lists" --spec fla.chunk_indices --valid-only --impl "cmd:python3 $adapter --lists $fla_example" --cases 500
if [ -d "$build/python/chunkmeta" ]; then
  check_in_process "FLA, chunkmeta.check(), Python example in process, lists" fla.chunk_indices \
    fla_reference_procedure:reference_chunk_indices lists
fi
