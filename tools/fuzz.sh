#!/usr/bin/env bash
# Continuous fuzzing on this machine: builds the `fuzz` preset (clang,
# libFuzzer, ASan+UBSan), fuzzes each target for SECONDS on all cores, merges
# new coverage into corpus/fuzz/<target>/, turns every finding into a shrunk
# report, and prints the final statistics.
#   tools/fuzz.sh [SECONDS] [TARGET...]     (default: 60 seconds, every target)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=($(fuzz/targets.sh | xargs -n1 basename | sed 's/\.options$//'))
jobs="$(nproc)"
work="build/fuzz/work"
reports="${CHUNKMETA_REPORT_DIR:-build/fuzz/reports}"

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target chunkmeta_cli "${targets[@]/#/fuzz_}"
cli=build/fuzz/bin/chunkmeta

findings=0
for target in "${targets[@]}"; do
  fuzzer="build/fuzz/bin/fuzz_$target"
  corpus="corpus/fuzz/$target"
  new="$work/$target/new"
  artifacts="$work/$target/artifacts/"
  rm -rf "$work/$target" && mkdir -p "$new" "$artifacts" "$work/$target/regressions"
  # Every counterexample ever kept becomes a seed (json_line takes the JSON itself, request_line a request line).
  "$cli" fuzz-encode --target "$target" "$work/$target/regressions" corpus/regressions >/dev/null 2>&1 || true

  echo "=== fuzzing $target for ${seconds}s on $jobs jobs ==="
  set +e
  "$fuzzer" -max_total_time="$seconds" -jobs="$jobs" -workers="$jobs" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$artifacts" "$new" "$corpus" "$work/$target/regressions" \
    > "$work/$target/fuzz.log" 2>&1
  set -e
  # libFuzzer's parent already copies each job's fuzz-N.log into its own
  # output when the job exits; appending them again counted every job twice.
  rm -f fuzz-*.log
  # Per process (the figure that matters under ASan) and summed; coverage
  # features at start (INITED) and end (DONE), as new features per minute.
  awk -v t="$target" -v s="$seconds" '
      /stat::number_of_executed_units/ {runs += $2}
      /stat::average_exec_per_sec/ {rate += $2; procs++}
      /[[:space:]]INITED / {for (i = 1; i < NF; i++) if ($i == "ft:") {start += $(i + 1); inits++}}
      /[[:space:]]DONE / {for (i = 1; i < NF; i++) if ($i == "ft:") {end += $(i + 1); dones++}}
      END {
        printf "%s: %d executions, %d exec/s per process (%d summed over %d jobs)\n", t, runs,
               procs ? rate / procs : 0, rate, procs
        if (inits && dones) printf "%s: coverage features %d -> %d per process, %.1f new per minute\n", t,
               start / inits, end / dones, (end / dones - start / inits) * 60 / s
      }' "$work/$target/fuzz.log"

  # Keep only inputs that add coverage.
  "$fuzzer" -merge=1 "$corpus" "$new" > "$work/$target/merge.log" 2>&1
  grep -h "MERGE-OUTER: .* new files" "$work/$target/merge.log" || true
  echo "$target corpus: $(ls "$corpus" | wc -l) files"

  for crash in "$artifacts"*; do
    [ -e "$crash" ] || continue
    findings=$((findings + 1))
    echo "FINDING $crash"
    case "$target" in
      differential | fla_differential | robustness) CHUNKMETA_REPORT_DIR="$reports" "$cli" fuzz-shrink --target "$target" "$crash" || true ;;
      *) "$fuzzer" "$crash" 2>&1 | tail -8 || true ;;
    esac
  done
done
echo "Fuzzing done: $findings findings (reports in $reports)"
[ "$findings" -eq 0 ]
