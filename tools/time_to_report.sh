#!/usr/bin/env bash
# What a user waits for: `chunkmeta check` on every catalogue mutant through
# each door, timed from the command's start to the first report (the first
# FAILING or COUNTEREXAMPLE line, written to the report dir at that moment) and
# to the minimal report and exit. Prints one Markdown table row per run:
# rows of the final workload and the calls made to the implementation.
#   tools/time_to_report.sh [BUILD_DIR] [corpus|no-corpus|both]   (default build/default, both)
# "corpus" replays the project's corpus first (as a user's run does);
# "no-corpus" finds every bug from scratch through the properties.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build/default}"
modes="${2:-both}"
[ "$modes" = both ] && modes="corpus no-corpus"
cli="$build/bin/chunkmeta"
plugin="$build/bin/chunkmeta_mutant_plugin.so"
limit=300  # seconds per run
# The Python door runs the adapter with int32 torch tensors: a python3 that imports torch.
torch_python=""
for python in python3 /usr/bin/python3; do
  if "$python" -c "import torch" 2>/dev/null; then torch_python="$python"; break; fi
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mutants=$(grep -o 'make("[a-z0-9-]*"' properties/mutants/mutants.cpp | cut -d'"' -f2)

now() { date +%s%N; }

# measure LABEL MODE ARGS...: runs check, prints a table row.
measure() {
  local label=$1 mode=$2
  shift 2
  local reports="$work/reports-$RANDOM"
  local corpus=()
  [ "$mode" = no-corpus ] && corpus=(--corpus "$work/empty")
  mkdir -p "$work/empty"
  local start first="" status=0
  start=$(now)
  while IFS= read -r line; do
    echo "$line" >> "$work/log"
    if [ -z "$first" ] && [[ "$line" =~ ^(FAILING|COUNTEREXAMPLE) ]]; then first=$(now); fi
  done < <(code=0
           timeout "$limit" "$cli" check --seed 20261202 --report-dir "$reports" "${corpus[@]}" "$@" 2>&1 || code=$?
           echo "exit $code" > "$work/status")
  local end
  end=$(now)
  status=$(sed -n 's/^exit //p' "$work/status")
  local rows calls
  # The final reports' rows: the smallest workload reported.
  rows=$(sed -n 's/^  status: .*(\([0-9]*\) rows\{0,1\})$/\1/p' "$work/log" | sort -n | head -1)
  calls=$(sed -n 's/^Calls: \([0-9]*\) workloads.*/\1/p' "$work/log" | head -1)
  local first_s="-" total_s
  [ -n "$first" ] && first_s=$(awk -v a="$start" -v b="$first" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  total_s=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  [ "$status" = 124 ] && total_s=">$limit"
  echo "| $label | $mode | $first_s | $total_s | ${rows:--} | ${calls:--} | $status |"
  rm -f "$work/log"
}

echo "| mutant / door | corpus | first report (s) | minimal report and exit (s) | rows | calls | exit |"
echo "|---|---|---|---|---|---|---|"
for mode in $modes; do
  for name in $mutants; do
    measure "$name, built in" "$mode" --impl "plugin:$plugin#$name" --in-process
    measure "$name, plugin (isolated)" "$mode" --impl "plugin:$plugin#$name"
    if [ -n "$torch_python" ]; then
      measure "$name, Python (torch)" "$mode" --valid-only \
        --impl "cmd:$torch_python adapters/python/chunkmeta_adapter.py properties/mutants/mutants.py:${name//-/_}"
    fi
  done
done
