#!/usr/bin/env bash
# Writes docs/results.md: every measured figure the docs refer to, from one run
# of the project's scripts on this machine, with the commit, date and machine.
# The reference pages state contracts and targets; figures live here only.
#   tools/results.sh [SECTION...]   sections: library python throughput report matrix default stall fuzz coverage (default: all)
# CHUNKMETA_PRESET picks the build measured (default: "default"; any Release preset, e.g. ci-gcc, measures the same code).
# About 25 minutes on 2 cores (coverage and time-to-report take most). Run it
# on a quiet machine: figures of one run are compared with each other.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
sections=("$@")
out=docs/results.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

torch_python=""
for python in python3 /usr/bin/python3; do
  if "$python" -c "import torch" 2>/dev/null; then torch_python="$python"; break; fi
done

preset="${CHUNKMETA_PRESET:-default}"
build="build/$preset"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" >/dev/null

machine() {
  local cpu
  cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
  echo "$(nproc) CPUs ($cpu), $(free -g | awk '/^Mem:/ {print $2}') GB, $(. /etc/os-release && echo "$PRETTY_NAME"),"\
       "kernel $(uname -r), $(g++ --version | head -1), $(clang++ --version | head -1),"\
       "Python $($torch_python -c 'import sys; print(sys.version.split()[0])')"\
       "with torch $($torch_python -c 'import torch; print(torch.__version__)')"\
       "and numpy $($torch_python -c 'import numpy; print(numpy.__version__)')"
}

section() {
  local name=$1 title=$2 how=$3
  shift 3
  echo "== $name" >&2
  local start=$SECONDS
  {
    echo "## $title"
    echo
    echo "$how"
    echo
    "$@"
    echo
  } > "$work/$name.md"
  echo "   $((SECONDS - start)) s" >&2
}

library() {
  echo '```'
  "$build"/bin/chunkmeta_bench --benchmark_repetitions=3 \
    --benchmark_filter='(prefill_heavy_bs256x|long_prompts_bs64x|chunked_prefill_bs256_|small_batch_bs8x)' \
    2>/dev/null | sed -n '/^write bound built/,$p'
  echo '```'
}

python_figures() { PYTHONPATH="$build"/python "$torch_python" bench/python_bench.py; }

throughput() {
  echo '```'
  tools/check_throughput.sh "$build"
  echo '```'
}

report() { tools/time_to_report.sh "$build" both; }

stall() { PYTHONPATH="$build"/python "$torch_python" bench/stall_tolerance.py --seeds 20; }

# Each fuzz target for 30 s in one process (ASan+UBSan, libFuzzer, the `fuzz`
# preset) from its committed corpus: executions per second and coverage features.
fuzz() {
  cmake --preset fuzz >/dev/null
  local targets=()
  for options in $(fuzz/targets.sh); do targets+=("$(basename "$options" .options)"); done
  cmake --build --preset fuzz --target "${targets[@]/#/fuzz_}" >/dev/null
  echo "| target | exec/s (one process) | executions | coverage features at start -> end | findings |"
  echo "|---|---|---|---|---|"
  for target in "${targets[@]}"; do
    mkdir -p "$work/fuzz-$target"
    local code=0
    build/fuzz/bin/"fuzz_$target" -max_total_time=30 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$work/fuzz-$target/" "$work/fuzz-$target" "corpus/fuzz/$target" > "$work/fuzz-$target.log" 2>&1 ||
      code=$?
    awk -v t="$target" -v code="$code" '
        /stat::average_exec_per_sec/ {rate = $2}
        /stat::number_of_executed_units/ {runs = $2}
        /[[:space:]]INITED / {for (i = 1; i < NF; i++) if ($i == "ft:") start = $(i + 1)}
        /[[:space:]]DONE / {for (i = 1; i < NF; i++) if ($i == "ft:") end = $(i + 1)}
        END {printf "| %s | %d | %d | %d -> %d | %s |\n", t, rate, runs, start, end, code == 0 ? "none" : "see the log"}' \
      "$work/fuzz-$target.log"
  done
  # ClusterFuzzLite's build.sh as OSS-Fuzz runs it (CI leaves this slow test out).
  local start=$SECONDS outcome=passed
  ctest --test-dir build/fuzz -R '^Fuzz\.ClusterFuzzLiteBuildScript' > "$work/clusterfuzzlite.log" 2>&1 || outcome=FAILED
  echo
  echo "ClusterFuzzLite's build script (\`Fuzz.ClusterFuzzLiteBuildScriptProducesTargetsThatRunTheirSeeds\`): $outcome in $((SECONDS - start)) s."
}

# Every cell of the misbehaviour matrix (tests/misbehaving/matrix.py): the time to its first report and to the
# end of the run, and what it was reported as.
matrix() {
  "$torch_python" tests/misbehaving/matrix.py --cells all --jobs 2 --cli "$build"/bin/chunkmeta \
    --python "$torch_python" --pythonpath "$build"/python --plugin "$build"/tests/chunkmeta_matrix_plugin.so \
    --results "$work/matrix.jsonl" > "$work/matrix.log" 2>&1 || true
  "$torch_python" tests/misbehaving/matrix.py --table "$work/matrix.jsonl"
}

# check() with its default settings on vLLM's own function, one process per seed, quiet and loaded.
check_default() { PYTHONPATH="$build"/python "$torch_python" bench/check_default_time.py --seeds 10; }

coverage() {
  tools/coverage.sh > "$work/coverage.log" 2>&1
  echo '```'
  awk '/^=== library coverage/ {print; show = 1; next} show && /^(Filename|---|TOTAL|specs\/|lib\/)/ {print}
       /^lines:|^branches:|profiles skipped/ {print}' "$work/coverage.log"
  echo '```'
}

# Each section: its title, how it was measured, and the function that prints it.
all_sections=(library python throughput report matrix default stall fuzz coverage)
declare -A titles=(
  [library]="Library (C++)" [python]="Python drop-ins" [throughput]="Throughput of check, per door"
  [report]="Time to a report" [matrix]="The misbehaviour matrix" [default]="check() with its defaults on vLLM's function"
  [stall]="A correct function on a stalling machine" [fuzz]="Fuzzing"
  [coverage]="Coverage of the library")
declare -A hows=(
  [library]="\`chunkmeta_bench\` (Google Benchmark, the fastest of 3 repetitions: noise only adds time), the spec's four anchors at C = 64, 256 and 2048: ns per call of \`reference\`, \`fast\`, \`fast_into\` and a write bound that only writes as many int32 entries."
  [python]="\`bench/python_bench.py\` (best of 7 runs)."
  [throughput]="\`tools/check_throughput.sh\`: one run per door, seed 20261202."
  [report]="\`tools/time_to_report.sh\`: every catalogue mutant, and runaway, crashing and hanging implementations, through each door; seconds from the command's start to the first report, to the first minimal report (printed as soon as a property's shrinking ends) and to the exit (seed 20261202; corpus: the project's corpus replayed first, as a user's run; no-corpus: found by the properties alone)."
  [matrix]="\`tests/misbehaving/matrix.py --cells all\`: every cell (behaviour x moment x door), a whole \`check\` each (seed 20261206, \`--fail-fast\`, a 4 s timeout), two at a time: seconds from the start to the first report written and to the end of the run; check() cells whose function swallows the timeout end the process (exit 124) and write none."
  [default]="\`bench/check_default_time.py\`: \`chunkmeta.check(_compute_chunk_metadata)\` with the default settings on vLLM's function as vLLM has it (\`examples/python/vllm_chunk_metadata.py\`), seeds 1-10, one Python process each (import included), on the machine as it is and beside two CPU-bound processes."
  [stall]="\`bench/stall_tolerance.py\`: the spec's procedure in Python with a 3 s stall in 1 of 200 calls (its own seeded stream), \`chunkmeta.check()\` with 300 cases per property for seeds 1-20; every run must be VERIFIED, the stalls that ran past a call's limit listed as slow calls."
  [fuzz]="Each target 30 s in one process under ASan+UBSan (preset \`fuzz\`), from its committed corpus."
  [coverage]="\`tools/coverage.sh\` (clang source-based): every ctest test, then the committed corpus replays alone; the library's totals (lib/ and each spec folder's library part) and each spec's files.")
declare -A printers=([library]=library [python]=python_figures [throughput]=throughput [report]=report [matrix]=matrix
                     [default]=check_default [stall]=stall
                     [fuzz]=fuzz [coverage]=coverage)

[ ${#sections[@]} -eq 0 ] && sections=("${all_sections[@]}")
# What is measured is the tree as it is now: a commit made while the sections run is not it.
measured="Commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!docs/results.md' || echo ' (with local changes)'), $(date -u '+%Y-%m-%d %H:%M UTC')"
for name in "${sections[@]}"; do
  [ -n "${titles[$name]:-}" ] || { echo "unknown section $name" >&2; exit 2; }
  section "$name" "${titles[$name]}" "${hows[$name]}" "${printers[$name]}"
done

{
  echo "# Measured figures"
  echo
  echo "Written by \`tools/results.sh\`; do not edit by hand. $measured."
  echo "Machine: $(machine). Build: preset \`$preset\`."
  echo
  for name in "${all_sections[@]}"; do
    if [ -f "$work/$name.md" ]; then
      cat "$work/$name.md"
    elif [ -f "$out" ]; then  # a section not re-run keeps its last figures, marked as such
      awk -v title="${titles[$name]}" '
        $0 == "## " title {show = 1; print; print ""; print "(From an earlier run: not re-run this time.)"; next}
        show && /^## / {show = 0}
        show && /^\(From an earlier run/ {getline; next}  # the old marker and its blank line: one marker, not one per re-run
        show' "$out"
    fi
  done
} > "$work/results.md"
mv "$work/results.md" "$out"
echo "wrote $out" >&2
