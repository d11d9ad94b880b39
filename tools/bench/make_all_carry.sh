#!/bin/bash
# One carry for tools/bench/run_all_device.sh: what make_serve_carry.sh
# collects (seatrt, the plugins, the libraries the device lacks) plus the
# GPU test binaries, the conformance tool, the step profiler, the long-run
# decode check and the op benchmark, stripped.
#   tools/bench/make_all_carry.sh [build dir] [out dir]
# The build dir is configured with -DSEATRT_PORTABLE_HOST=ON and has built
# seatrt, the gemma4 / nvfp4a16 / cpu / cuda plugins, seatrt_cuda_tests,
# seatrt_cuda_e2e_tests, seatrt-conformance, seatrt-step-profile,
# seatrt-synth-decode, seatrt-bench-ops and seatrt-bench-prefill (a missing
# one is reported).
set -eu
b=${1:-build-e2e}
out=${2:-$b/carry}
"$(dirname "$0")/make_serve_carry.sh" "$b" "$out"
for t in seatrt_cuda_tests seatrt_cuda_e2e_tests seatrt-conformance seatrt-step-profile seatrt-synth-decode \
         seatrt-bench-ops seatrt-bench-prefill; do
  if [ -x "$b/bin/$t" ]; then strip -o "$out/bin/$t" "$b/bin/$t"; else echo "missing: $b/bin/$t" >&2; fi
done
# CUPTI for seatrt-step-profile --timeline (opened at run time; the
# device's toolkit may keep it off the loader's path): the one this build's
# headers came from.
cupti=$(ls /usr/local/cuda/lib64/libcupti.so.13 /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13 2>/dev/null | head -1)
if [ -n "$cupti" ]; then cp -L "$cupti" "$out/devlibs/"; else echo "libcupti.so.13 not found: --timeline will look on the device" >&2; fi
du -sh "$out"
