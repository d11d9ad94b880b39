#!/usr/bin/env bash
# Runs every test, as CI does (.ci/run calls exactly this):
#   1. the normal tree (build/: warnings as errors, the CUDA provider when
#      nvcc is found) and all its tests (GPU tests report SKIPPED without a
#      GPU; skipped is not failed);
#   2. a bounded fuzz step, when tools/ci/fuzz.sh exists;
#   3. a second tree with AddressSanitizer + UndefinedBehaviorSanitizer
#      (build-asan/, CUDA off) and the CPU tests in it.
# Ends with CTest's summary; exits non-zero if any step failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
JOBS="${SEATRT_JOBS:-$(nproc)}"
failed=()
start=$(date +%s)

step() { echo; echo "=== $* ($(( $(date +%s) - start ))s)"; }

step "normal build"
if tools/ci/setup.sh build; then
  step "tests (normal build)"
  ctest --test-dir build --output-on-failure -j "$JOBS" || failed+=("tests in build/")
else
  failed+=("normal build")
fi

if [[ -x tools/ci/fuzz.sh ]]; then
  step "fuzz (bounded)"
  tools/ci/fuzz.sh || failed+=("fuzz")
fi

step "sanitizer build (address,undefined)"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
if tools/ci/setup.sh build-asan -DSEATRT_SANITIZE=address,undefined -DSEATRT_CUDA=OFF; then
  if ((${#failed[@]})); then echo "earlier failures: ${failed[*]}"; fi
  step "tests (sanitizer build; CTest's summary follows)"
  ctest --test-dir build-asan --output-on-failure -j "$JOBS" || failed+=("tests in build-asan/")
else
  failed+=("sanitizer build")
fi

if ((${#failed[@]})); then
  echo "FAILED after $(( $(date +%s) - start ))s: ${failed[*]}" >&2
  exit 1
fi
