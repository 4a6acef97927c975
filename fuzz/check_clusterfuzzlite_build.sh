#!/usr/bin/env bash
# Proves .clusterfuzzlite/build.sh without Docker: runs it with the variables
# OSS-Fuzz sets (libFuzzer, AddressSanitizer), then checks what it left in
# $OUT and runs every target over its seed corpus.
#   check_clusterfuzzlite_build.sh SOURCE_DIR WORK_DIR
set -euo pipefail
source_dir=$1
work=$2
rm -rf "$work"
mkdir -p "$work/src" "$work/out" "$work/work" "$work/seeds"
ln -s "$source_dir" "$work/src/chunkmeta"

export CC=clang CXX=clang++
export CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
export CXXFLAGS="$CFLAGS"
export LIB_FUZZING_ENGINE="-fsanitize=fuzzer"
export SRC="$work/src" OUT="$work/out" WORK="$work/work"
bash "$source_dir/.clusterfuzzlite/build.sh"

targets=($("$source_dir/fuzz/targets.sh" | xargs -n1 basename | sed 's/\.options$//'))
for target in "${targets[@]}"; do
  for file in "$OUT/$target" "$OUT/${target}_seed_corpus.zip" "$OUT/$target.options"; do
    [ -e "$file" ] || { echo "build.sh did not produce $file" >&2; exit 1; }
  done
  mkdir -p "$work/seeds/$target"
  (cd "$work/seeds/$target" && unzip -q "$OUT/${target}_seed_corpus.zip")
  "$OUT/$target" -runs=0 "$work/seeds/$target"
  echo "$target: $(ls "$work/seeds/$target" | wc -l) seeds ran"
done
for dict in $(cd "$source_dir" && sed -n 's/^dict = //p' $(fuzz/targets.sh)); do
  [ -e "$OUT/$dict" ] || { echo "build.sh did not produce $dict" >&2; exit 1; }
done
