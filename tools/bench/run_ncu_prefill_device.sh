#!/bin/bash
# Issue 7: hardware counters of the prefill GEMM kernels (the wgmma core of
# kernels/cuda/src/gemm_wgmma.cuh: plain linear, MoE gate/up and down) at a
# prompt of TOKENS tokens, from seatrt-bench-prefill (attention left out),
# under ncu with the clocks left alone (METHOD.md): speed of light,
# occupancy, warp stall reasons, scheduler issue rate, memory workload.
# From the repository root, with the carry of tools/bench/make_all_carry.sh
# ($1, default build-e2e/carry).  Environment: TOKENS (8192), KERNELS (an ncu
# regex, default gemm_wgmma), COUNT (kernels profiled, 6), LIMIT (150 s).
set -u
c=${1:-build-e2e/carry}
out=${OUT:-/tmp}
export LD_LIBRARY_PATH=$c/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
plugin=$c/plugins/libseatrt_kernels_cuda.so
sections=(--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats
          --section LaunchStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis)
. "$(dirname "$0")/ncu_stall_metrics.sh"  # $stalls
BENCH_SKIP_ATTENTION=1 timeout "${LIMIT:-150}" ncu --clock-control none "${sections[@]}" --metrics "$stalls" \
  --kernel-name-base demangled -k "regex:${KERNELS:-gemm_wgmma}" -c "${COUNT:-6}" \
  "$c/bin/seatrt-bench-prefill" "$plugin" "${TOKENS:-8192}" > "$out/ncu_prefill.txt" 2>&1
echo "exit $?"
grep -E "gemm_wgmma|Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per|Issued Ipc|No Eligible|Grid Size|stalled|inst_executed|cycles_active|hmma|Shared Memory" \
  "$out/ncu_prefill.txt" | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | head -150
