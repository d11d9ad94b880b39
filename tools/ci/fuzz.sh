#!/usr/bin/env bash
# Bounded libFuzzer runs of the Gemma-4 parsers (native-syntax parser and
# streaming state machine; constrained-decoding engine) under AddressSanitizer
# and UBSan.  Builds with clang in its own build directory; exits non-zero on
# a crash, hang (timeout), leak or sanitizer report.
#   tools/ci/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_PER_TARGET="${1:-60}"
BUILD="${SEATRT_FUZZ_BUILD:-build-fuzz}"
JOBS="${SEATRT_FUZZ_JOBS:-2}"

CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSEATRT_CUDA=OFF \
  -DSEATRT_SANITIZE=address,undefined -DSEATRT_PARSERS_FUZZ=ON > "$BUILD.cmake.log" 2>&1 \
  || { cat "$BUILD.cmake.log"; exit 1; }
ninja -C "$BUILD" -j"$JOBS" seatrt_fuzz_output_stream seatrt_fuzz_constrained

DICT=tests/parsers/fuzz/gemma4.dict
status=0
for target in fuzz_output_stream fuzz_constrained; do
  corpus="$BUILD/corpus/$target"
  mkdir -p "$corpus"
  echo "== $target: ${SECONDS_PER_TARGET}s"
  if ! UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      "$BUILD/bin/seatrt_$target" "$corpus" -dict="$DICT" -max_total_time="$SECONDS_PER_TARGET" \
      -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
      -artifact_prefix="$BUILD/crash-$target-"; then
    echo "FAILED: $target (artifacts in $BUILD/crash-$target-*)"
    status=1
  fi
done
exit $status
