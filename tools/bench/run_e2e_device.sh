#!/bin/bash
# Issue 7 end-to-end run on the device machine (one H200), from the
# repository root, with binaries built on the development machine
# (-DSEATRT_PORTABLE_HOST=ON) and carried in one folder ($1, default
# build-cudae2e/carry: bin/ plugins/ devlibs/, made by
# tools/bench/make_e2e_carry.sh).  Steps, each under its own time limit:
#   1. the tiny fixtures through the CUDA provider and the CPU provider
#      (control) against the HF references (seatrt_cuda_e2e_tests);
#   2. the full-size synthetic checkpoint (tools/synth/make_synthetic_checkpoint.py,
#      written to /dev/shm when it has room, else /tmp; never kept), then
#      seatrt-synth-decode on it through the CUDA provider: up to 10,000
#      decode steps or DECODE_SECONDS, non-finite check every step, batch-1
#      tok/s, expert spread;
#   3. the op-level benchmark (seatrt-bench-ops) at batch 1/4/8/16/32 with
#      the copy bandwidth measured in the same run.
# Logs go to $OUT (or /tmp).  Time limits (seconds) can be set from the
# environment: FIXTURE_LIMIT, GEN_LIMIT, DECODE_SECONDS, DECODE_LIMIT, BENCH_LIMIT
# (0 = skip the benchmark).
set -u
c=${1:-build-cudae2e/carry}
out=${OUT:-/tmp}
cuda=$c/plugins/libseatrt_kernels_cuda.so
export SEATRT_CUDA_PLUGIN=$cuda SEATRT_CPU_PLUGIN=$c/plugins/libseatrt_kernels_cpu.so
export SEATRT_TEST_PLUGIN_DIR=$c/plugins SEATRT_TEST_FIXTURES_DIR=$PWD/tests/fixtures
export LD_LIBRARY_PATH=$c/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1
t_start=$(date +%s)
stamp() { echo "== $1 (t=$(( $(date +%s) - t_start )) s)"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv,noheader
git log -1 --format='commit %H %cd' 2>/dev/null || true
date -u
df -h /dev/shm /tmp | tail -2

stamp "1. fixtures through cuda + cpu control"
timeout "${FIXTURE_LIMIT:-90}" "$c/bin/seatrt_cuda_e2e_tests" 2>&1 | grep -v " info \[cpu\]" | tee "$out/e2e_fixtures.log" | tail -25
echo "fixtures exit: ${PIPESTATUS[0]}"

stamp "2a. synthetic checkpoint"
dir=/tmp/synth
[ "$(df --output=avail -B1G /dev/shm | tail -1)" -ge 20 ] && dir=/dev/shm/synth
timeout "${GEN_LIMIT:-150}" python3 tools/synth/make_synthetic_checkpoint.py --out "$dir" 2>&1 | tee "$out/synth_gen.log" | tail -5
echo "generate exit: ${PIPESTATUS[0]}"; du -sh "$dir"

stamp "2b. synthetic decode through cuda"
timeout "${DECODE_LIMIT:-200}" "$c/bin/seatrt-synth-decode" "$dir" --provider "$cuda" --plugin-dir "$c/plugins" \
  --steps 10000 --seconds "${DECODE_SECONDS:-120}" --prompt-len 32 --trace-steps 64 --json "$out/synth_decode.json" \
  2>&1 | grep -v " info \[" | tee "$out/synth_decode.log" | tail -20
echo "decode exit: ${PIPESTATUS[0]}"
rm -rf "$dir"

if [ "${BENCH_LIMIT:-90}" -gt 0 ]; then
  stamp "3. op-level benchmark"
  timeout "${BENCH_LIMIT:-90}" "$c/bin/seatrt-bench-ops" "$cuda" 5 1,4,8,16,32 2>&1 | tee "$out/bench.log" | tail -45
  echo "bench exit: ${PIPESTATUS[0]}"
fi
stamp "done"
