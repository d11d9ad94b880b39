#!/bin/bash
# Issue 7, decode kernels: check and compare the provider's decode variants
# on the device machine in one call, from the repository root, with the
# carry of tools/bench/make_all_carry.sh plus seatrt-bench-ops ($1, default
# build-e2e/carry):
#   1. the MoE decode variant test REPEAT times (it once failed
#      intermittently), then every GPU op test once;
#   2. seatrt-bench-ops: the MoE of 30 layers for each SEATRT_MOE_DECODE value
#      in MOE_VARIANTS and the Linears for each SEATRT_LINEAR_DECODE value in
#      LINEAR_VARIANTS, at BATCHES;
#   3. seatrt-step-profile (decode phases, no per-op pass) on the full-size
#      synthetic checkpoint once per environment in PROFILE_ENVS
#      (';'-separated, each a list of VAR=value, "default" for none).
# Environment: REPEAT (3), TESTS_LIMIT (90), OPS_LIMIT (90), GEN_LIMIT (40),
# PROFILE_EACH (40 s per environment), BATCHES (1,4,8,16,32).
set -u
c=${1:-build-e2e/carry}
out=${OUT:-/tmp}
export LD_LIBRARY_PATH=$c/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SEATRT_CUDA_PLUGIN=$c/plugins/libseatrt_kernels_cuda.so SEATRT_CPU_PLUGIN=$c/plugins/libseatrt_kernels_cpu.so
t0=$(date +%s)
stamp() { echo "== $1 (t=$(( $(date +%s) - t0 )) s)"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
date -u
batches=${BATCHES:-1,4,8,16,32}

stamp "1. MoE decode variant test x ${REPEAT:-3}, then all GPU op tests"
for i in $(seq "${REPEAT:-3}"); do
  timeout 60 "$c/bin/seatrt_cuda_tests" "moe decode path*" > "$out/moe_variants_$i.log" 2>&1
  echo "variant test run $i: exit $? $(tail -2 "$out/moe_variants_$i.log" | tr '\n' ' ')"
  grep -A8 "FAILED:" "$out/moe_variants_$i.log" | head -30
done
timeout "${TESTS_LIMIT:-90}" "$c/bin/seatrt_cuda_tests" > "$out/cuda_tests.log" 2>&1
echo "all op tests: exit $? $(tail -2 "$out/cuda_tests.log" | tr '\n' ' ')"
grep -B2 -A12 "FAILED:" "$out/cuda_tests.log" | head -40

if [ -x "$c/bin/seatrt-bench-ops" ] && [ "${OPS_LIMIT:-90}" -gt 0 ]; then
  stamp "2. op-level: MoE variants '${MOE_VARIANTS-,a}', Linear variants '${LINEAR_VARIANTS-,raw}'"
  SEATRT_BENCH_PARTS=linears,moe SEATRT_BENCH_MOE_VARIANTS="${MOE_VARIANTS-,a}" \
    SEATRT_BENCH_LINEAR_VARIANTS="${LINEAR_VARIANTS-,raw}" \
    timeout "${OPS_LIMIT:-90}" "$c/bin/seatrt-bench-ops" "$SEATRT_CUDA_PLUGIN" 10 "$batches" > "$out/bench_ops.log" 2>&1
  echo "bench-ops exit: $?"
  grep -v "^ *$" "$out/bench_ops.log" | tail -60
fi

if [ -n "${PROFILE_ENVS:-}" ]; then
  dir=/tmp/synth-variants
  [ "$(df --output=avail -B1G /dev/shm | tail -1)" -ge 20 ] && dir=/dev/shm/synth-variants
  trap 'rm -rf "$dir"' EXIT
  stamp "3. synthetic checkpoint -> $dir"
  timeout "${GEN_LIMIT:-40}" python3 tools/synth/make_synthetic_checkpoint.py --out "$dir" > "$out/synth_gen.log" 2>&1
  echo "generate exit: $?"
  IFS=';' read -ra envs <<< "$PROFILE_ENVS"
  for e in "${envs[@]}"; do
    stamp "step profile, environment: $e"
    vars=(); [ "$e" != default ] && read -ra vars <<< "$e"
    env "${vars[@]}" timeout "${PROFILE_EACH:-40}" "$c/bin/seatrt-step-profile" "$dir" --provider "$SEATRT_CUDA_PLUGIN" \
      --plugin-dir "$c/plugins" --batches "$batches" --prompt-len 64 --steps 32 --warmup 4 --kv fp8 --profile off \
      --seconds $(( ${PROFILE_EACH:-40} - 12 )) > "$out/profile_${e//[^A-Za-z0-9]/_}.log" 2>&1
    echo "exit $?"
    grep -E "graphs +greedy|graphs +t=0.8" "$out/profile_${e//[^A-Za-z0-9]/_}.log"
    grep -iE "error|illegal|non-finite" "$out/profile_${e//[^A-Za-z0-9]/_}.log" | head -5
  done
fi
stamp done
