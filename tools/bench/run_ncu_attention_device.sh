#!/bin/bash
# Issue 7: hardware counters of the prefill attention kernels (the wgmma
# kernel of kernels/cuda/src/k_attention_prefill_wgmma.cu, or the mma.sync
# one under SEATRT_PREFILL_ATTENTION=mma) at a TOKENS-token prompt, from
# seatrt-bench-prefill's attention-only sizes, under ncu with the clocks left
# alone (METHOD.md): speed of light, warp stall reasons, scheduler issue
# rate, shared-memory traffic, and the source lines with the most stall
# samples.  From the repository root, with the carry of
# tools/bench/make_all_carry.sh ($1, default build-e2e/carry).
# Environment: TOKENS (8192), KERNELS (an ncu regex, default flash_prefill),
# COUNT (kernels profiled, 2: the sliding and the full layer), LIMIT (150 s).
set -u
c=${1:-build-e2e/carry}
out=${OUT:-/tmp}
export LD_LIBRARY_PATH=$c/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
plugin=$c/plugins/libseatrt_kernels_cuda.so
sections=(--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section LaunchStats
          --section MemoryWorkloadAnalysis_Tables --section SourceCounters)
. "$(dirname "$0")/ncu_stall_metrics.sh"  # $stalls
BENCH_BASELINE_ATTENTION=0 timeout "${LIMIT:-150}" ncu --clock-control none "${sections[@]}" --metrics "$stalls" \
  --kernel-name-base demangled -k "regex:${KERNELS:-flash_prefill}" -c "${COUNT:-2}" \
  "$c/bin/seatrt-bench-prefill" "$plugin" "" "${TOKENS:-8192}" > "$out/ncu_attention.txt" 2>&1
echo "exit $?"
grep -E "flash_prefill|Duration|L1/TEX Cache Throughput|Compute \(SM\) Throughput|Registers Per|Issued Ipc|No Eligible|stalled|inst_executed|cycles_active|gmma|Bank" \
  "$out/ncu_attention.txt" | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | head -120
