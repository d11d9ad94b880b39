#!/bin/bash
# Runs on the device machine from the repository root with a carried folder
# made by tools/bench/make_prefill_carry.sh (bin/, plugins/, devlibs/, and
# optionally plugins-b/ holding a variant of the CUDA plugin): the
# CUDA-vs-CPU op tests, the prefill benchmark, an ncu timing of one linear +
# one MoE layer, then the same tests and benchmark for the variant, and
# last compute-sanitizer memcheck over the prefill tests.  Logs go to $OUT.
#   tools/bench/run_prefill_device.sh [carry dir] [tokens] [attention-only tokens]
# Environment knobs (defaults in brackets):
#   TESTS_FILTER   Catch2 test spec for variant a [all tests]
#   VARIANT_B_ENV  run variant b with the SAME plugin under this environment
#                  assignment (e.g. SEATRT_PREFILL_GEMM=mma: the mma.sync
#                  GEMM core) when there is no plugins-b/ [unset]
#   TESTS_FILTER_B Catch2 test spec for variant b ["[prefill]"]
#   VARIANT_C_ENV  same for a third variant c (same plugin) [unset]
#   SIZES_B        token counts of variant b's (and c's) benchmark [8192]
#   SANITIZE_FILTER  Catch2 test spec for memcheck ["[prefill]"]
#   SANITIZE_ENV   environment assignment for the memcheck run [none]
#   SANITIZE, PROFILE, BASELINE, REFERENCE: 0 skips memcheck, ncu, the
#   attention baseline, the MoE reference [1 each]; NCU_ARGS: see below;
#   BENCH_* pass through.
set -u
dir=${1:-build-pre/carry}
sizes=${2:-2048,8192}
attn=${3-32768}  # an empty third argument: no attention-only sizes
out=${OUT:-/tmp}
export SEATRT_CPU_PLUGIN=$dir/plugins/libseatrt_kernels_cpu.so
export LD_LIBRARY_PATH=$dir/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
git log -1 --format='commit %H %cd' 2>/dev/null || true
date -u

run_variant() {  # name plugin-dir test-filter tokens attention-tokens [env assignment]
  local name=$1 plugin=$2/libseatrt_kernels_cuda.so
  local -a envv=(env)
  [ -n "${6:-}" ] && envv+=("$6")
  export SEATRT_CUDA_PLUGIN=$plugin
  SECONDS=0
  timeout ${TESTS_TIMEOUT:-75} "${envv[@]}" "$dir/bin/seatrt_cuda_tests" $3 2>&1 | tee "$out/tests_$name.log" | tail -25
  local rc=${PIPESTATUS[0]}
  echo "[$name] tests exit: $rc (${SECONDS}s)"
  SECONDS=0
  BENCH_BASELINE_ATTENTION=${BASELINE:-1} BENCH_MOE_REFERENCE=${REFERENCE:-1} timeout ${BENCH_TIMEOUT:-80} \
    "${envv[@]}" "$dir/bin/seatrt-bench-prefill" "$plugin" "$4" "$5" 2>&1 | tee "$out/bench_$name.log"
  echo "[$name] bench exit: ${PIPESTATUS[0]} (${SECONDS}s)"
  ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
  if [ -n "$ncu_bin" ] && [ "${PROFILE:-1}" = 1 ]; then
    SECONDS=0
    # NCU_ARGS replaces the metric selection, e.g. "--section SpeedOfLight
    # --section WarpStateStats --section ComputeWorkloadAnalysis" (slower).
    BENCH_PROFILE_TOKENS=8192 timeout ${NCU_TIMEOUT:-40} "${envv[@]}" "$ncu_bin" --clock-control none \
      ${NCU_ARGS:---metrics gpu__time_duration.sum} --launch-count 12 "$dir/bin/seatrt-bench-prefill" "$plugin" \
      > "$out/ncu_$name.log" 2>&1
    echo "[$name] ncu exit: $? (${SECONDS}s)"
    grep -E "\)x\(|gpu__time_duration" "$out/ncu_$name.log" | sed -E 's/^ +//; s/ +/ /g' | cut -c1-140
  fi
}

run_variant a "$dir/plugins" "${TESTS_FILTER:-}" "$sizes" "$attn"
if [ -d "$dir/plugins-b" ]; then
  BASELINE=0 REFERENCE=0 run_variant b "$dir/plugins-b" "[prefill]" "${SIZES_B:-8192}" ""
elif [ -n "${VARIANT_B_ENV:-}" ]; then
  BASELINE=0 REFERENCE=0 PROFILE=0 run_variant b "$dir/plugins" "${TESTS_FILTER_B:-[prefill]}" "${SIZES_B:-8192}" "" "$VARIANT_B_ENV"
fi
if [ -n "${VARIANT_C_ENV:-}" ]; then  # a third variant: same plugin, another environment
  BASELINE=0 REFERENCE=0 PROFILE=0 run_variant c "$dir/plugins" "${TESTS_FILTER_B:-[prefill]}" "${SIZES_B:-8192}" "" "$VARIANT_C_ENV"
fi

# memcheck last: a slow sanitizer cannot cost the figures above.
san=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
if [ -n "$san" ] && [ "${SANITIZE:-1}" = 1 ]; then
  export SEATRT_CUDA_PLUGIN=$dir/plugins/libseatrt_kernels_cuda.so
  SECONDS=0
  timeout ${SANITIZER_TIMEOUT:-45} env ${SANITIZE_ENV:-} "$san" --tool memcheck --leak-check no "$dir/bin/seatrt_cuda_tests" \
    "${SANITIZE_FILTER:-[prefill]}" > "$out/memcheck_a.log" 2>&1
  echo "[a] memcheck exit: $? (${SECONDS}s)"; tail -4 "$out/memcheck_a.log"
fi
