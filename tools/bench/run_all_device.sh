#!/bin/bash
# Issue 7 on the device machine (one H200), in one call, from the repository
# root, with the carry made by tools/bench/make_all_carry.sh ($1, default
# build-e2e/carry):
#   1. GPU tests: every CUDA op against the CPU provider (seatrt_cuda_tests);
#   2. the conformance tool, CUDA candidate against the CPU reference;
#   3. end to end on the tiny fixtures against the HF reference, and the
#      server's engine on CUDA (batched greedy, eager and from graphs);
#   4. tools/bench/run_profile_device.sh: where a decode step's time goes
#      (seatrt-step-profile on the synthetic checkpoint), PROFILE_LIMIT s;
#   4b. the issue's long-run check: a fresh full-size synthetic checkpoint,
#      then seatrt-synth-decode, up to 10,000 decode steps with every logit
#      checked for non-finite values, DECODE_LIMIT s;
#   5. tools/bench/run_serve_device.sh: copy bandwidth, the HF floor, the
#      full-size synthetic checkpoint served by `seatrt serve`, decode sweep,
#      prefill lengths, the report with each byte limit; SERVE_LIMIT s.
# Limits (seconds) from the environment: TESTS_LIMIT, CONF_LIMIT, E2E_LIMIT,
# PROFILE_LIMIT, DECODE_LIMIT, SERVE_LIMIT (0 skips a step); the serve step
# also takes the rest of run_serve_device.sh's variables.  PROFILE_B_OPTIONS
# and/or PROFILE_B_ENV (with PROFILE_B_LIMIT) add a second step profile under
# other provider options and/or environment assignments (step 4a), e.g.
# PROFILE_B_OPTIONS='fuse = false' (the planner's fusions off).
set -u
c=${1:-build-e2e/carry}
# Every log goes to $work; at the end they are packed into $OUT/logs.tgz
# beside $OUT/summary.txt, the step profile and the benchmark report (the
# device tool brings back at most 8 files).
final=${OUT:-/tmp}
work=${WORK_DIR:-/tmp/all-device}
rm -rf "$work"; mkdir -p "$work"
out=$work
pack() {
  tar czf "$final/logs.tgz" -C "$work" . 2>/dev/null
  for f in step_profile.log report.md; do [ -f "$work/$f" ] && cp "$work/$f" "$final/"; done
  printf '%s\n' "${summary[@]}" > "$final/summary.txt"
}
export SEATRT_CUDA_PLUGIN=$c/plugins/libseatrt_kernels_cuda.so SEATRT_CPU_PLUGIN=$c/plugins/libseatrt_kernels_cpu.so
export SEATRT_TEST_PLUGIN_DIR=$c/plugins SEATRT_TEST_FIXTURES_DIR=$PWD/tests/fixtures
export LD_LIBRARY_PATH=$c/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
t0=$(date +%s)
stamp() { echo "== $1 (t=$(( $(date +%s) - t0 )) s)"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
date -u
summary=()

stamp "1. GPU op tests (CUDA vs CPU)"
timeout "${TESTS_LIMIT:-150}" "$c/bin/seatrt_cuda_tests" > "$out/cuda_tests.log" 2>&1
rc=$?; tail -4 "$out/cuda_tests.log"; grep -B2 -A12 "FAILED:" "$out/cuda_tests.log" | head -60
summary+=("cuda op tests: exit $rc, $(tail -2 "$out/cuda_tests.log" | tr '\n' ' ')")
pack  # after every step: a run cut short still brings back what it did

if [ -x "$c/bin/seatrt-conformance" ] && [ "${CONF_LIMIT:-40}" -gt 0 ]; then
  stamp "2. conformance: cuda vs cpu"
  timeout "${CONF_LIMIT:-40}" "$c/bin/seatrt-conformance" --candidate "$SEATRT_CUDA_PLUGIN" \
    --reference "$SEATRT_CPU_PLUGIN" > "$out/conformance.log" 2>&1
  rc=$?; tail -6 "$out/conformance.log"
  summary+=("conformance: exit $rc, $(tail -1 "$out/conformance.log")")
  pack
fi

stamp "3. fixtures and engine end to end"
timeout "${E2E_LIMIT:-90}" "$c/bin/seatrt_cuda_e2e_tests" -s > "$out/e2e.log" 2>&1
rc=$?; grep -E "engine on cuda|cuda .*(MoE|dense)|passed|failed|FAILED" "$out/e2e.log" | tail -20
grep -B2 -A14 "FAILED:" "$out/e2e.log" | head -60
summary+=("e2e: exit $rc, $(tail -2 "$out/e2e.log" | tr '\n' ' ')")
pack
# A model that fails its end-to-end checks would make the timings meaningless.
if [ "$rc" -ne 0 ] && [ "${FORCE_BENCH:-0}" != 1 ]; then
  stamp "end-to-end checks failed: no profile or benchmark (FORCE_BENCH=1 runs them anyway)"
  printf '%s\n' "${summary[@]}"
  pack
  exit 1
fi

if [ "${PROFILE_LIMIT:-120}" -gt 0 ]; then
  stamp "4. decode step profile"
  OUT=$work TOTAL_LIMIT=${PROFILE_LIMIT:-120} bash tools/bench/run_profile_device.sh "$c" > "$work/profile.out" 2>&1
  sed -n '/ms\/step\|tok\/s\|eager\|graphs/p' "$work/profile.out" | head -40
  pack
fi
# 4a. The same profile with other provider options (PROFILE_B_OPTIONS, TOML
# lines, e.g. $'prefill_bf16 = true\nlm_head_gemm = true'), to compare an
# opt-in kernel path with the default in one call; PROFILE_B_LIMIT seconds.
if { [ -n "${PROFILE_B_OPTIONS:-}" ] || [ -n "${PROFILE_B_ENV:-}" ]; } && [ "${PROFILE_B_LIMIT:-90}" -gt 0 ]; then
  opts=${PROFILE_B_OPTIONS:-}
  stamp "4a. decode step profile with kernel options '${opts//$'\n'/; }', environment '${PROFILE_B_ENV:-}'"
  mkdir -p "$work/profile_b"
  # PROFILE_B_ENV: space-separated NAME=value words, passed through env(1).
  # shellcheck disable=SC2086
  env ${PROFILE_B_ENV:-} OUT=$work/profile_b KERNEL_OPTIONS="${PROFILE_B_OPTIONS:-${KERNEL_OPTIONS:-}}" PREFILL_PROFILE=0 \
    TOTAL_LIMIT=${PROFILE_B_LIMIT:-90} bash tools/bench/run_profile_device.sh "$c" > "$work/profile_b.out" 2>&1
  sed -n '/ms\/step\|tok\/s\|eager\|graphs/p' "$work/profile_b.out" | head -40
  pack
fi
if [ -x "$c/bin/seatrt-synth-decode" ] && [ "${DECODE_LIMIT:-150}" -gt 0 ]; then
  stamp "4b. 10,000 decode steps on a fresh synthetic checkpoint"
  dir=/tmp/synth-decode
  [ "$(df --output=avail -B1G /dev/shm | tail -1)" -ge 20 ] && dir=/dev/shm/synth-decode
  timeout 60 python3 tools/synth/make_synthetic_checkpoint.py --out "$dir" > "$out/decode_synth_gen.log" 2>&1
  # Leaves ~20 s of the limit for loading and the report.
  timeout "${DECODE_LIMIT:-150}" "$c/bin/seatrt-synth-decode" "$dir" --provider "$SEATRT_CUDA_PLUGIN" \
    --plugin-dir "$c/plugins" --steps 10000 --seconds "$(( ${DECODE_LIMIT:-150} - 20 ))" --prompt-len 32 \
    --trace-steps 64 --json "$out/synth_decode.json" > "$out/synth_decode.log" 2>&1
  rc=$?; rm -rf "$dir"
  grep -E "^decode|finite" "$out/synth_decode.log" | head -4
  summary+=("synthetic decode: exit $rc, $(grep -m1 '^decode:' "$out/synth_decode.log")")
  pack
fi
if [ "${SERVE_LIMIT:-300}" -gt 0 ]; then
  stamp "5. server benchmark"
  OUT=$work WORK=$work/serve TOTAL_LIMIT=${SERVE_LIMIT:-300} bash tools/bench/run_serve_device.sh "$c" > "$work/serve.out" 2>&1
  tail -45 "$work/serve.out"
fi
stamp "done"
pack
printf '%s\n' "${summary[@]}"
