#!/bin/bash
# Collects, stripped, what run_prefill_device.sh needs from a build made with
# -DSEATRT_PORTABLE_HOST=ON (the device machine lacks toml++, which the CPU
# provider links: carried in devlibs/).  A second build dir, if given, adds
# its CUDA plugin as the variant (plugins-b/).
#   tools/bench/make_prefill_carry.sh [build dir] [out dir] [variant build dir]
set -eu
b=${1:-build-pre}
out=${2:-$b/carry}
variant=${3:-}
rm -rf "$out"
mkdir -p "$out/bin" "$out/plugins" "$out/devlibs"
for f in seatrt_cuda_tests seatrt-bench-prefill; do strip -o "$out/bin/$f" "$b/bin/$f"; done
for f in libseatrt_kernels_cuda.so libseatrt_kernels_cpu.so; do strip -o "$out/plugins/$f" "$b/plugins/$f"; done
if [ -n "$variant" ]; then
  mkdir -p "$out/plugins-b"
  strip -o "$out/plugins-b/libseatrt_kernels_cuda.so" "$variant/plugins/libseatrt_kernels_cuda.so"
fi
cp -L /lib/x86_64-linux-gnu/libtomlplusplus.so.3 "$out/devlibs/"
du -sh "$out"
