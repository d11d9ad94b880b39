#!/bin/bash
# Runs on the device machine, from the repository root, with the build
# folder carried from the development machine (built there with
# -DSEATRT_PORTABLE_HOST=ON): GPU tests of the CUDA provider against the CPU
# provider, the conformance tool (CUDA candidate vs CPU reference) when it
# was built (ninja seatrt-conformance), then the op-level benchmark.  Logs go to $OUT when it is set.
#   tools/bench/run_device.sh [build dir] [bench iterations]
set -u
build=${1:-build-cuda}
iters=${2:-20}
out=${OUT:-/tmp}
export SEATRT_CUDA_PLUGIN=$build/plugins/libseatrt_kernels_cuda.so
export SEATRT_CPU_PLUGIN=$build/plugins/libseatrt_kernels_cpu.so
# The CPU provider links toml++, which the device machine lacks: carried here.
export LD_LIBRARY_PATH=$build/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
git log -1 --format='commit %H %cd' 2>/dev/null || true
date -u
"$build/bin/seatrt_cuda_probe_test" 2>&1 | tail -3
"$build/bin/seatrt_cuda_tests" 2>&1 | tee "$out/tests.log" | tail -60
echo "tests exit: ${PIPESTATUS[0]}"
if [ -x "$build/bin/seatrt-conformance" ]; then
  "$build/bin/seatrt-conformance" --candidate "$SEATRT_CUDA_PLUGIN" --reference "$SEATRT_CPU_PLUGIN" 2>&1 \
    | tee "$out/conformance.log" | tail -40
  echo "conformance exit: ${PIPESTATUS[0]}"
fi
"$build/bin/seatrt-bench-ops" "$SEATRT_CUDA_PLUGIN" "$iters" 2>&1 | tee "$out/bench.log"
echo "bench exit: ${PIPESTATUS[0]}"
