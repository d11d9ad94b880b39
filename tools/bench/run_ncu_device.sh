#!/bin/bash
# Issue 7: hardware counters of the decode kernels on the device machine (ncu,
# clocks left alone as METHOD.md asks), from the repository root, with the
# carry of tools/bench/make_all_carry.sh plus seatrt-bench-ops ($1):
#   1. the MoE decode kernels at MOE_BATCH tokens (F32 x gate/up and down)
#      and the NVFP4 decode Linear at batch 1, from seatrt-bench-ops: speed
#      of light, occupancy, warp stall reasons, scheduler issue rate;
#   2. the duration of every kernel of one decode step (batch STEP_BATCH) of the
#      full-size synthetic checkpoint in isolation (seatrt-step-profile under
#      ncu, one metric), to set beside the step's graph time.
# Environment: MOE_BATCH (16), MOE_PLANES (2: the BF16 planes of F32 x in the
# gate/up kernel's template; 3 with SEATRT_MOE_DECODE=p3), STEP_BATCH (1),
# STEP_KERNELS (2500: loading, the prompt and the first decode steps),
# STEP_LIMIT (150).
set -u
c=${1:-build-e2e/carry}
out=${OUT:-/tmp}
export LD_LIBRARY_PATH=$c/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
plugin=$c/plugins/libseatrt_kernels_cuda.so
t0=$(date +%s)
stamp() { echo "== $1 (t=$(( $(date +%s) - t0 )) s)"; }
sections=(--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats
          --section LaunchStats --section MemoryWorkloadAnalysis)

stalls=smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio,smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,smsp__inst_executed.sum,sm__cycles_active.avg
for which in "gate-up F32 x:.bool.1, .int.${MOE_PLANES:-2}" "down:.bool.0"; do
  stamp "1a. MoE decode kernel ${which%%:*}, ${MOE_BATCH:-16} tokens"
  SEATRT_BENCH_PARTS=moe SEATRT_BENCH_MOE_VARIANTS="s2" timeout 120 ncu --clock-control none "${sections[@]}" \
    --metrics "$stalls" --kernel-name-base demangled -k "regex:moe_decode_kernel<${which#*:}" -c 2 \
    "$c/bin/seatrt-bench-ops" "$plugin" 1 "${MOE_BATCH:-16}" > "$out/ncu_moe_${which%%[ :]*}.txt" 2>&1
  echo "exit $?"; grep -E "moe_decode_kernel|Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Dynamic Shared|Issued Warp|No Eligible|Grid Size|Block Size|stalled|inst_executed|cycles_active" "$out/ncu_moe_${which%%[ :]*}.txt" | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | head -70
done

stamp "1b. NVFP4 decode Linear, batch 1"
SEATRT_BENCH_PARTS=linears timeout 90 ncu --clock-control none "${sections[@]}" \
  --kernel-name-base demangled -k "regex:gemv_mma_kernel" -c 3 \
  "$c/bin/seatrt-bench-ops" "$plugin" 1 1 > "$out/ncu_linear.txt" 2>&1
echo "exit $?"; grep -E "gemv_mma_kernel|Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Issued Ipc|No Eligible|Grid Size|Block Size" "$out/ncu_linear.txt" | head -40

if [ "${STEP_KERNELS:-2500}" -gt 0 ]; then
  dir=/dev/shm/synth-ncu
  trap 'rm -rf "$dir"' EXIT
  stamp "2. synthetic checkpoint"
  timeout 45 python3 tools/synth/make_synthetic_checkpoint.py --out "$dir" > "$out/synth_gen.log" 2>&1
  echo "generate exit $?"
  stamp "2. one batch-${STEP_BATCH:-1} decode step under ncu (gpu__time_duration per kernel)"
  timeout "${STEP_LIMIT:-150}" ncu --clock-control none --metrics gpu__time_duration.sum --csv \
    -c "${STEP_KERNELS:-2500}" \
    "$c/bin/seatrt-step-profile" "$dir" --provider "$plugin" --plugin-dir "$c/plugins" --batches "${STEP_BATCH:-1}" \
    --prompt-len 8 --steps 1 --warmup 0 --kv fp8 --profile off --seconds 100 > "$out/ncu_step.csv" 2> "$out/ncu_step.err"
  echo "exit $?"; wc -l "$out/ncu_step.csv"
fi
stamp done
