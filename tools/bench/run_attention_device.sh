#!/bin/bash
# Decode attention on the device machine in one call: the attention tests
# (CUDA vs CPU provider), the decode attention benchmark of the plugin under
# test (beside the general kernel and the KV byte limit), the same benchmark
# of tuning variants (other SEATRT_DECODE_* build values), the decode tests
# of the variants, and the decode tests under compute-sanitizer memcheck.
# Every step has its own time limit so a slow one cannot eat the rest.
# The carry folder is built on the development machine (see
# kernels/cuda/NOTES-attention.md): bin/seatrt_cuda_tests,
# bin/seatrt-bench-attention, plugins/libseatrt_kernels_{cuda,cpu}.so and
# plugins/libseatrt_kernels_cuda_<variant>.so.
#   tools/bench/run_attention_device.sh [carry dir] [bench iterations]
set -u
c=${1:-build-attn/carry}
iters=${2:-10}
out=${OUT:-/tmp}
export SEATRT_CPU_PLUGIN=$c/plugins/libseatrt_kernels_cpu.so
main=$c/plugins/libseatrt_kernels_cuda.so
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
git log -1 --format='commit %H %cd' 2>/dev/null || true
date -u
tests='decode:*,sliding layer*,full layer*,bf16 cache*'
SEATRT_CUDA_PLUGIN=$main timeout 35 "$c/bin/seatrt_cuda_tests" "$tests" 2>&1 | tee "$out/tests.log" | tail -25
echo "tests exit: ${PIPESTATUS[0]}"
timeout 25 "$c/bin/seatrt-bench-attention" "$main" "$iters" 1024,8192 1,4,8,16,32 2>&1 | tee "$out/bench.log"
echo "bench exit: ${PIPESTATUS[0]}"
for v in "$c"/plugins/libseatrt_kernels_cuda_*.so; do
  [ -e "$v" ] || continue
  echo "== variant $(basename "$v")"
  timeout 10 "$c/bin/seatrt-bench-attention" "$v" "$iters" 1024,8192 1,4,8,16,32 noref 2>&1 | tee "$out/bench_$(basename "$v" .so).log" | tail -11
  SEATRT_CUDA_PLUGIN=$v timeout 8 "$c/bin/seatrt_cuda_tests" 'decode: mixed*' 2>&1 | tail -3
done
san=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
if [ -n "$san" ]; then
  echo "== memcheck"
  SEATRT_CUDA_PLUGIN=$main timeout 15 "$san" --tool memcheck --error-exitcode 9 \
    "$c/bin/seatrt_cuda_tests" 'decode: mixed*,decode: head 128*' 2>&1 | tail -8
  echo "memcheck exit: ${PIPESTATUS[0]}"
fi
date -u
