#!/usr/bin/env bash
# Line and branch coverage of the library (lib/ and every spec folder's
# library part, specs/*/library and specs/*/include) with clang source-based coverage (preset
# `coverage`): once for the whole ctest suite, once for the committed corpus
# alone (corpus/ and corpus/fuzz/ replays, no generated cases). Each ends with
# the missed lines and branch edges by file:line (tools/coverage_summary.py).
#   tools/coverage.sh                 both tables (about 6 minutes on 2 cores)
#   tools/coverage.sh --corpus-only   the corpus table alone, building only the
#                                     replaying programs (CI's coverage stage, about a minute)
#   tools/coverage.sh --spec FOLDER REGEX
#                                     one spec folder's library (specs/FOLDER/library and
#                                     include) covered by the tests ctest -R REGEX selects: a
#                                     lower bound of the whole suite's figure, in minutes
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
corpus_only=false
spec_folder=""
case "${1:-}" in
  --corpus-only) corpus_only=true ;;
  --spec)
    [ $# -eq 3 ] || { echo "usage: $0 --spec FOLDER REGEX" >&2; exit 2; }
    spec_folder=$2 tests_regex=$3 ;;
  "") ;;
  *) echo "usage: $0 [--corpus-only | --spec FOLDER REGEX]" >&2; exit 2 ;;
esac
build=build/coverage
cmake --preset coverage >/dev/null
if $corpus_only; then
  targets=(chunkmeta_cli)
  for options in $(fuzz/targets.sh); do targets+=("fuzz_$(basename "$options" .options)"); done
  cmake --build --preset coverage --target "${targets[@]}"
else
  cmake --build --preset coverage
fi

# llvm-cov takes the first binary as is, the others after -object=.
binaries=()
while IFS= read -r binary; do binaries+=("$binary"); done < <(
  if $corpus_only; then  # only what was just built: older test binaries would not match the sources
    find "$build" -type f -perm -u+x \( -name 'chunkmeta' -o -name 'fuzz_*' \)
  else
    find "$build" -type f -perm -u+x \( -name '*_test' -o -name 'chunkmeta' -o -name 'fuzz_*' \)
  fi | sort)
objects=("${binaries[0]}")
sources=("$PWD/lib" "$PWD"/specs/*/library "$PWD"/specs/*/include)
[ -n "$spec_folder" ] && sources=("$PWD/specs/$spec_folder/library" "$PWD/specs/$spec_folder/include")
for binary in "${binaries[@]:1}"; do objects+=("-object=$binary"); done

report() {
  local name=$1
  shift
  local profiles="$build/profiles-$name"
  rm -rf "$profiles" && mkdir -p "$profiles"
  LLVM_PROFILE_FILE="$PWD/$profiles/%p-%m.profraw" ctest --test-dir "$build" -j "$(nproc)" "$@" >/dev/null
  # Processes the harness kills on purpose (hung or flooding implementations
  # under test) can die while writing their profile: those files are skipped,
  # and counted, rather than failing the merge.
  llvm-profdata merge -sparse --failure-mode=all "$profiles"/*.profraw -o "$build/$name.profdata" 2> "$build/$name.merge.log"
  local skipped
  skipped=$(grep -c 'warning: .*profraw' "$build/$name.merge.log" || true)
  echo "($name: $skipped of $(find "$profiles" -name '*.profraw' | wc -l) profiles skipped, cut short by a kill; $build/$name.merge.log)"
  echo "=== library coverage (${sources[*]#"$PWD"/}): $name ==="
  llvm-cov report "${objects[@]}" -instr-profile="$build/$name.profdata" "${sources[@]}"
  llvm-cov export -format=text "${objects[@]}" -instr-profile="$build/$name.profdata" "${sources[@]}" |
    python3 tools/coverage_summary.py
}

if [ -n "$spec_folder" ]; then
  report "spec-$spec_folder" -R "$tests_regex"
  exit 0
fi
$corpus_only || report "every-test"
report "corpus-only" -R '^(Corpus|Fuzz)\.'
echo "Line-by-line: llvm-cov show ${objects[*]} -instr-profile=$build/corpus-only.profdata ${sources[*]}"
