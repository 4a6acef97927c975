#!/usr/bin/env bash
# What a user waits for: every catalogue mutant (every spec's) through each
# door, timed from the command's start to the first report (the first FAILING or
# COUNTEREXAMPLE line, written to the report dir at that moment), to the first
# minimal report (MINIMAL, printed as soon as a property's shrinking ends) and
# to the exit; then implementations that run away, crash and hang,
# through chunkmeta.check() and through a plain JSON Lines program that imports
# torch. Prints one Markdown table row per run: rows (or sequences) of the final
# workload and the calls made to the implementation.
#   tools/time_to_report.sh [BUILD_DIR] [corpus|no-corpus|both]   (default build/default, both)
# "corpus" replays the project's corpus first (as a user's run does);
# "no-corpus" finds every bug from scratch through the properties.
# Doors: built in (the mutant plugin in process), plugin (isolated in a child),
# cmd: (the adapter, int32 torch tensors), check() (chunkmeta.check in process).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build/default}"
modes="${2:-both}"
[ "$modes" = both ] && modes="corpus no-corpus"
build="$(cd "$build" && pwd)"
cli="$build/bin/chunkmeta"
plugin="$build/bin/chunkmeta_mutant_plugin.so"
export CHUNKMETA_MUTANT_PLUGIN="$plugin"  # mutants/mutants.py calls the slips through it
limit=300  # seconds per run
# The Python doors run int32 torch tensors: a python3 that imports torch.
torch_python=""
for python in python3 /usr/bin/python3; do
  if "$python" -c "import torch" 2>/dev/null; then torch_python="$python"; break; fi
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/empty"
# Every catalogue mutant and its spec, from the mutant plugin's own table.
declare -A spec_of_mutant=()
mutants=""
while read -r name spec; do
  spec_of_mutant[$name]=$spec
  mutants+="$name "
done < <("$cli" plugin-table "$plugin" | sed -n 's/.*"name":"[^"]*#\([a-z0-9-]*\)".*"spec":"\([^"]*\)".*/\1 \2/p')

now() { date +%s%N; }

spec_of() { echo "${spec_of_mutant[$1]}"; }

# run_timed LABEL MODE COMMAND...: runs the command, prints a table row.
run_timed() {
  local label=$1 mode=$2
  shift 2
  local start first="" minimal="" status
  start=$(now)
  : > "$work/log"
  while IFS= read -r line; do
    echo "$line" >> "$work/log"
    if [ -z "$first" ] && [[ "$line" =~ ^(FAILING|COUNTEREXAMPLE) ]]; then first=$(now); fi
    if [ -z "$minimal" ] && [[ "$line" =~ ^(MINIMAL|SHRINKING\ STOPPED|COUNTEREXAMPLE) ]]; then minimal=$(now); fi
  done < <(code=0
           timeout "$limit" "$@" 2>&1 || code=$?
           echo "exit $code" > "$work/status")
  local end
  end=$(now)
  status=$(sed -n 's/^exit //p' "$work/status")
  local rows calls
  # The final reports' rows (Mamba) or sequences (FLA): the smallest workload reported.
  rows=$(sed -n 's/^  status: .*(\([0-9]*\) \(row\|sequence\)s\{0,1\})$/\1/p' "$work/log" | sort -n | head -1)
  calls=$(sed -n 's/^Calls: \([0-9]*\) workloads.*/\1/p; s/^PYTHON CALLS \([0-9]*\)$/\1/p' "$work/log" | head -1)
  local first_s="-" minimal_s="-" total_s
  [ -n "$first" ] && first_s=$(awk -v a="$start" -v b="$first" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  [ -n "$minimal" ] && minimal_s=$(awk -v a="$start" -v b="$minimal" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  total_s=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  [ "$status" = 124 ] && total_s=">$limit"
  echo "| $label | $mode | $first_s | $minimal_s | $total_s | ${rows:--} | ${calls:--} | $status |"
}

# check_cli LABEL MODE SPEC ARGS...: `chunkmeta check` through a door.
check_cli() {
  local label=$1 mode=$2 spec=$3
  shift 3
  local corpus=()
  [ "$mode" = no-corpus ] && corpus=(--corpus "$work/empty")
  run_timed "$label" "$mode" "$cli" check --spec "$spec" --seed 20261202 --report-dir "$work/reports-$RANDOM" \
    "${corpus[@]}" "$@"
}

# check_python LABEL MODE SPEC MODULE_DIR MODULE FUNCTION: chunkmeta.check() in process, its defaults
# (the example database off: each run starts afresh), printing stages as they happen.
check_python() {
  local label=$1 mode=$2 spec=$3 dir=$4 module=$5 function=$6
  local corpus="None"
  [ "$mode" = no-corpus ] && corpus="[]"
  run_timed "$label" "$mode" env PYTHONPATH="$build/python:$dir" "$torch_python" -c "
import chunkmeta, $module
try:
    chunkmeta.check($module.$function, spec='$spec', seed=20261202, corpus=$corpus, database=None, verbose=True,
                    report_dir='$work/reports-py')
except chunkmeta.CheckFailed as failed:
    print(failed)
    print('PYTHON CALLS', sum(p.calls for p in failed.summary.properties))
    raise SystemExit(1)
"
}

echo "| mutant / door | corpus | first report (s) | minimal report (s) | exit (s) | rows or sequences | calls | exit |"
echo "|---|---|---|---|---|---|---|---|"
for mode in $modes; do
  for name in $mutants; do
    spec=$(spec_of "$name")
    check_cli "$name, built in" "$mode" "$spec" --impl "plugin:$plugin#$name" --in-process
    check_cli "$name, plugin (isolated)" "$mode" "$spec" --impl "plugin:$plugin#$name"
    if [ -n "$torch_python" ]; then
      check_cli "$name, cmd: (adapter, torch)" "$mode" "$spec" --valid-only \
        --impl "cmd:$torch_python adapters/python/chunkmeta_adapter.py mutants/mutants.py:${name//-/_}"
      check_python "$name, check()" "$mode" "$spec" mutants mutants "${name//-/_}"
    fi
  done
  if [ -n "$torch_python" ]; then
    for misbehaviour in runaway crash hang; do
      check_cli "$misbehaviour, cmd: (plain JSON Lines program, torch)" "$mode" mamba --valid-only \
        --impl "cmd:$torch_python bench/misbehaving_torch.py $misbehaviour"
      check_python "$misbehaviour, check()" "$mode" mamba bench misbehaving_torch "$misbehaviour"
    done
  fi
done
