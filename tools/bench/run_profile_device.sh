#!/bin/bash
# Issue 7: where the end-to-end decode step's time goes, on the device machine
# (one H200), from the repository root, with the carry made by
# tools/bench/make_all_carry.sh ($1, default build-e2e/carry; it holds
# bin/seatrt-step-profile, the plugins and devlibs/):
#   1. the full-size synthetic checkpoint (tools/synth/make_synthetic_checkpoint.py)
#      into /dev/shm when it has room, else /tmp; deleted at the end;
#   2. seatrt-step-profile on it through the CUDA provider, fp8 KV: decode
#      step phases (host / forward / sample) for each batch size, eager and
#      graphs, temperature 0.8 and greedy; then a second load with the
#      provider's per-op timer on and the GPU time per op per decode step.
# Bounded: each step under `timeout`, the whole run about TOTAL_LIMIT s.
# Environment: TOTAL_LIMIT (120), GEN_LIMIT (40), BATCHES (1,16,32),
# PROMPT_LEN (64), STEPS (64), WARMUP (4), KV (fp8), PREFILL_PROFILE (0: none; P:
# the per-op table of one P-token prefill), TIMELINE (BATCHES: the batch sizes whose graph
# steps CUPTI traces kernel by kernel; 0: none), KERNEL_OPTIONS (TOML for the provider); MODEL_DIR (an existing
# checkpoint: no generation, nothing deleted) and PROVIDER (a kernel plugin
# library) for a dry run elsewhere, e.g. on the CPU with the tiny fixture.
# Logs and JSON go to $OUT (or /tmp).
set -u
c=${1:-build-e2e/carry}
out=${OUT:-/tmp}
provider=${PROVIDER:-$c/plugins/libseatrt_kernels_cuda.so}
export LD_LIBRARY_PATH=$c/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1
t0=$(date +%s)
total=${TOTAL_LIMIT:-120}
stamp() { echo "== $1 (t=$(( $(date +%s) - t0 )) s)"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
git log -1 --format='commit %H %cd' 2>/dev/null || true
date -u

if [ -n "${MODEL_DIR:-}" ]; then
  dir=$MODEL_DIR
  stamp "1. checkpoint: $dir (given)"
else
  dir=/tmp/synth-profile
  [ "$(df --output=avail -B1G /dev/shm | tail -1)" -ge 20 ] && dir=/dev/shm/synth-profile
  trap 'rm -rf "$dir"' EXIT
  stamp "1. synthetic checkpoint -> $dir"
  timeout "${GEN_LIMIT:-40}" python3 tools/synth/make_synthetic_checkpoint.py --out "$dir" > "$out/profile_synth_gen.log" 2>&1
  rc=$?; tail -2 "$out/profile_synth_gen.log"; echo "generate exit: $rc"
  if [ $rc -ne 0 ]; then exit $rc; fi
fi

left=$(( total - ($(date +%s) - t0) ))
# The tool's own budget leaves ~15 s for its two checkpoint loads' tails
# and teardown; `timeout` is the hard stop.
budget=$(( left - 15 ))
[ $budget -lt 20 ] && budget=20
stamp "2. seatrt-step-profile (--seconds $budget, hard limit $left s)"
timeout "$left" "$c/bin/seatrt-step-profile" "$dir" --provider "$provider" --plugin-dir "$c/plugins" \
  --batches "${BATCHES:-1,16,32}" --prompt-len "${PROMPT_LEN:-64}" --steps "${STEPS:-64}" --warmup "${WARMUP:-4}" \
  --kv "${KV:-fp8}" --prefill-profile "${PREFILL_PROFILE:-0}" --timeline "${TIMELINE:-${BATCHES:-1,16,32}}" --kernel-options "${KERNEL_OPTIONS:-}" --seconds "$budget" --json "$out/step_profile.json" > "$out/step_profile.log" 2> "$out/step_profile.err"
rc=$?
grep -v " info \[" "$out/step_profile.log"
echo "step-profile exit: $rc"
echo "-- provider's full op table (stderr, all rows incl. prefill):"
grep -v " info \[" "$out/step_profile.err" | head -60
stamp "done"
exit $rc
