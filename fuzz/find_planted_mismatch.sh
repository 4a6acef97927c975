#!/usr/bin/env bash
# Proves the differential target finds a mismatch and that the finding ends in
# a shrunk JSON report: fuzz a build with a planted wrong implementation from
# an empty corpus until it crashes, then shrink the crash into a report.
#   find_planted_mismatch.sh PLANTED_FUZZER PLANTED_REPORT WORK_DIR
# PLANTED_REPORT "none": only require the fuzzer's own counterexample printout.
set -euo pipefail
fuzzer=$1
reporter=$2
work=$3
rm -rf "$work" && mkdir -p "$work/corpus" "$work/artifacts" "$work/reports"
if "$fuzzer" -max_total_time=120 -artifact_prefix="$work/artifacts/" "$work/corpus" > "$work/fuzz.log" 2>&1; then
  echo "the planted mismatch was not found in 120 s" >&2
  exit 1
fi
crash=$(ls "$work"/artifacts/crash-* | head -1)
grep -E "^#[0-9]+" "$work/fuzz.log" | tail -1
if [ "$reporter" = none ]; then
  grep -A8 "^COUNTEREXAMPLE" "$work/fuzz.log"
  exit 0
fi
"$reporter" "$crash" "$work/reports"
ls "$work"/reports/*.report.json
