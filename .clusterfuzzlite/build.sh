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
# Every target has fuzz/<target>.options.
targets=($(cd "$SRC/chunkmeta/fuzz" && ls *.options | sed 's/\.options$//'))
cmake --build "$build" --target "${targets[@]/#/fuzz_}"
for target in "${targets[@]}"; do
  cp "$build/bin/fuzz_$target" "$OUT/$target"
  (cd "$SRC/chunkmeta/corpus/fuzz/$target" && zip -q -r "$OUT/${target}_seed_corpus.zip" .)
  cp "$SRC/chunkmeta/fuzz/$target.options" "$OUT/"
done
cp "$SRC"/chunkmeta/fuzz/*.dict "$OUT/"
