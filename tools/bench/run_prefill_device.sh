#!/bin/bash
# Runs on the device machine from the repository root with a carried folder
# made by tools/bench/make_prefill_carry.sh (bin/, plugins/, devlibs/):
# the CUDA-vs-CPU op tests, compute-sanitizer memcheck over the prefill
# tests, then the prefill benchmark.  Logs go to $OUT.
#   tools/bench/run_prefill_device.sh [carry dir] [tokens] [attention-only tokens]
set -u
dir=${1:-build-pre/carry}
sizes=${2:-2048,8192}
attn=${3:-32768}
out=${OUT:-/tmp}
export SEATRT_CUDA_PLUGIN=$dir/plugins/libseatrt_kernels_cuda.so
export SEATRT_CPU_PLUGIN=$dir/plugins/libseatrt_kernels_cpu.so
export LD_LIBRARY_PATH=$dir/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
git log -1 --format='commit %H %cd' 2>/dev/null || true
date -u
SECONDS=0
timeout ${TESTS_TIMEOUT:-75} "$dir/bin/seatrt_cuda_tests" 2>&1 | tee "$out/tests.log" | tail -40
echo "tests exit: ${PIPESTATUS[0]} (${SECONDS}s)"
san=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
if [ -n "$san" ] && [ "${SANITIZE:-1}" = 1 ]; then
  SECONDS=0
  timeout ${SANITIZER_TIMEOUT:-45} "$san" --tool memcheck --leak-check no "$dir/bin/seatrt_cuda_tests" "${SANITIZE_FILTER:-[prefill]}" \
    > "$out/memcheck.log" 2>&1
  echo "memcheck exit: $? (${SECONDS}s)"
  tail -6 "$out/memcheck.log"
fi
SECONDS=0
BENCH_BASELINE_ATTENTION=1 timeout ${BENCH_TIMEOUT:-80} "$dir/bin/seatrt-bench-prefill" "$SEATRT_CUDA_PLUGIN" "$sizes" "$attn" 2>&1 \
  | tee "$out/bench_prefill.log"
echo "bench exit: ${PIPESTATUS[0]} (${SECONDS}s)"
