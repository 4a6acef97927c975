#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build: honours $CC $CXX $CFLAGS $CXXFLAGS
# $LIB_FUZZING_ENGINE $OUT $SRC. Builds only the fuzz targets (no tests, tools
# or benchmarks, so RapidCheck, GoogleTest and CLI11 are not needed).
build="${WORK:-/tmp}/chunkmeta-fuzz-build"
cmake -S "$SRC/chunkmeta" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
  -DCHUNKMETA_BUILD_TESTS=OFF -DCHUNKMETA_BUILD_TOOLS=OFF -DCHUNKMETA_BUILD_BENCHMARKS=OFF \
  -DCHUNKMETA_BUILD_FUZZERS=ON -DCHUNKMETA_FUZZING_ENGINE="$LIB_FUZZING_ENGINE"
# Every target has a <target>.options (fuzz/targets.sh lists them: fuzz/ and each spec folder's fuzz/).
options=($("$SRC/chunkmeta/fuzz/targets.sh"))
targets=()
for file in "${options[@]}"; do targets+=("$(basename "$file" .options)"); done
cmake --build "$build" --target "${targets[@]/#/fuzz_}"
for file in "${options[@]}"; do
  target="$(basename "$file" .options)"
  cp "$build/bin/fuzz_$target" "$OUT/$target"
  (cd "$SRC/chunkmeta/corpus/fuzz/$target" && zip -q -r "$OUT/${target}_seed_corpus.zip" .)
  cp "$SRC/chunkmeta/$file" "$OUT/"
  for dict in "$SRC/chunkmeta/$(dirname "$file")"/*.dict; do
    if [ -e "$dict" ]; then cp "$dict" "$OUT/"; fi  # (a folder without dicts leaves the pattern as it is)
  done
done
