# Sourced by the run_ncu_*_device.sh scripts: $stalls, the ncu metrics of
# the warp stall reasons (per issued instruction), the instruction count,
# the active cycles and the tensor pipes' utilisation (mma.sync and wgmma).
stalls=$(printf 'smsp__average_warps_issue_stalled_%s_per_issue_active.ratio,' long_scoreboard short_scoreboard \
  barrier wait math_pipe_throttle mio_throttle lg_throttle not_selected selected no_instruction dispatch_stall \
  membar sleeping branch_resolving drain tex_throttle imc_miss)
stalls="${stalls}smsp__inst_executed.sum,sm__cycles_active.avg"
stalls="${stalls},sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
stalls="${stalls},sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active"
