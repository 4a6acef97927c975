#!/usr/bin/env bash
# Line and branch coverage of lib/ with clang source-based coverage (preset
# `coverage`): once for the whole ctest suite, once for the committed corpus
# alone (corpus/ and corpus/fuzz/ replays, no generated cases). Each ends with
# the missed lines and branch edges by file:line (tools/coverage_summary.py).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=build/coverage
cmake --preset coverage >/dev/null
cmake --build --preset coverage

# llvm-cov takes the first binary as is, the others after -object=.
binaries=()
while IFS= read -r binary; do binaries+=("$binary"); done < <(
  find "$build" -type f -perm -u+x \( -name '*_test' -o -name 'chunkmeta' -o -name 'fuzz_*' \) | sort)
objects=("${binaries[0]}")
for binary in "${binaries[@]:1}"; do objects+=("-object=$binary"); done

report() {
  local name=$1
  shift
  local profiles="$build/profiles-$name"
  rm -rf "$profiles" && mkdir -p "$profiles"
  LLVM_PROFILE_FILE="$PWD/$profiles/%p-%m.profraw" ctest --test-dir "$build" -j "$(nproc)" "$@" >/dev/null
  llvm-profdata merge -sparse "$profiles"/*.profraw -o "$build/$name.profdata"
  echo "=== lib/ coverage: $name ==="
  llvm-cov report "${objects[@]}" -instr-profile="$build/$name.profdata" "$PWD/lib"
  llvm-cov export -format=text "${objects[@]}" -instr-profile="$build/$name.profdata" "$PWD/lib" |
    python3 tools/coverage_summary.py
}

report "every-test"
report "corpus-only" -R '^(Corpus|Fuzz)\.'
echo "Line-by-line: llvm-cov show ${objects[*]} -instr-profile=$build/corpus-only.profdata $PWD/lib"
