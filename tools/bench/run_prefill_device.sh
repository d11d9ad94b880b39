#!/bin/bash
# Runs on the device machine from the repository root with a carried folder
# made by tools/bench/make_prefill_carry.sh (bin/, plugins/, devlibs/, and
# optionally plugins-b/ holding a variant of the CUDA plugin): the
# CUDA-vs-CPU op tests, compute-sanitizer memcheck over the prefill tests,
# the prefill benchmark, an ncu timing of one linear + one MoE layer, then
# the same tests and benchmark for the variant.  Logs go to $OUT.
#   tools/bench/run_prefill_device.sh [carry dir] [tokens] [attention-only tokens]
set -u
dir=${1:-build-pre/carry}
sizes=${2:-2048,8192}
attn=${3:-32768}
out=${OUT:-/tmp}
export SEATRT_CPU_PLUGIN=$dir/plugins/libseatrt_kernels_cpu.so
export LD_LIBRARY_PATH=$dir/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
git log -1 --format='commit %H %cd' 2>/dev/null || true
date -u

run_variant() {  # name plugin-dir test-filter tokens attention-tokens
  local name=$1 plugin=$2/libseatrt_kernels_cuda.so
  export SEATRT_CUDA_PLUGIN=$plugin
  SECONDS=0
  timeout ${TESTS_TIMEOUT:-75} "$dir/bin/seatrt_cuda_tests" $3 2>&1 | tee "$out/tests_$name.log" | tail -25
  local rc=${PIPESTATUS[0]}
  echo "[$name] tests exit: $rc (${SECONDS}s)"
  san=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
  if [ -n "$san" ] && [ "${SANITIZE:-1}" = 1 ]; then
    SECONDS=0
    timeout ${SANITIZER_TIMEOUT:-45} "$san" --tool memcheck --leak-check no "$dir/bin/seatrt_cuda_tests" "[prefill]" \
      > "$out/memcheck_$name.log" 2>&1
    echo "[$name] memcheck exit: $? (${SECONDS}s)"; tail -4 "$out/memcheck_$name.log"
  fi
  SECONDS=0
  BENCH_BASELINE_ATTENTION=${BASELINE:-1} BENCH_MOE_REFERENCE=${REFERENCE:-1} timeout ${BENCH_TIMEOUT:-80} \
    "$dir/bin/seatrt-bench-prefill" "$plugin" "$4" "$5" 2>&1 | tee "$out/bench_$name.log"
  echo "[$name] bench exit: ${PIPESTATUS[0]} (${SECONDS}s)"
  ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
  if [ -n "$ncu_bin" ] && [ "${PROFILE:-1}" = 1 ]; then
    SECONDS=0
    BENCH_PROFILE_TOKENS=8192 timeout ${NCU_TIMEOUT:-40} "$ncu_bin" --clock-control none --metrics gpu__time_duration.sum \
      --launch-count 12 "$dir/bin/seatrt-bench-prefill" "$plugin" > "$out/ncu_$name.log" 2>&1
    echo "[$name] ncu exit: $? (${SECONDS}s)"
    grep -E "\)x\(|gpu__time_duration" "$out/ncu_$name.log" | sed -E 's/^ +//; s/ +/ /g' | cut -c1-140
  fi
}

run_variant a "$dir/plugins" "" "$sizes" "$attn"
if [ -d "$dir/plugins-b" ]; then
  SANITIZE=0 BASELINE=0 REFERENCE=0 run_variant b "$dir/plugins-b" "[prefill]" "${SIZES_B:-8192}" ""
fi
