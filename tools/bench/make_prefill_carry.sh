#!/bin/bash
# Collects, stripped, what run_prefill_device.sh needs from a build made with
# -DSEATRT_PORTABLE_HOST=ON (the device machine lacks toml++, which the CPU
# provider links: carried in devlibs/).
#   tools/bench/make_prefill_carry.sh [build dir] [out dir]
set -eu
b=${1:-build-pre}
out=${2:-$b/carry}
rm -rf "$out"
mkdir -p "$out/bin" "$out/plugins" "$out/devlibs"
for f in seatrt_cuda_tests seatrt-bench-prefill; do strip -o "$out/bin/$f" "$b/bin/$f"; done
for f in libseatrt_kernels_cuda.so libseatrt_kernels_cpu.so; do strip -o "$out/plugins/$f" "$b/plugins/$f"; done
cp -L /lib/x86_64-linux-gnu/libtomlplusplus.so.3 "$out/devlibs/"
du -sh "$out"
