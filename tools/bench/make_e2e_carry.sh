#!/bin/bash
# Collects what tools/bench/run_e2e_device.sh needs into one folder to carry
# to the device machine, stripped (debug info would exceed the device tool's
# 64 MiB): the host binaries, the plugins, and the shared libraries the
# device lacks (Debian 12's spdlog 1.10 and fmt 9; it has other versions).
#   tools/bench/make_e2e_carry.sh [e2e build dir] [cuda build dir] [out dir]
# The e2e build dir has seatrt_cuda_e2e_tests, seatrt-synth-decode,
# seatrt-bench-ops (g++ -std=c++20 -O2 -I sdk/include tools/bench/bench_ops.cpp
# -ldl -static-libstdc++ -static-libgcc: it needs only the SDK headers) and the
# gemma4/nvfp4a16/cpu plugins; the cuda build dir has the CUDA plugin (both
# configured with -DSEATRT_PORTABLE_HOST=ON).
set -eu
e2e=${1:-build-cudae2e}
cuda=${2:-build-cuda}
out=${3:-$e2e/carry}
rm -rf "$out"
mkdir -p "$out/bin" "$out/plugins" "$out/devlibs"
for f in "$e2e/bin/seatrt_cuda_e2e_tests" "$e2e/bin/seatrt-synth-decode" "$e2e/bin/seatrt-bench-ops"; do
  strip -o "$out/bin/$(basename "$f")" "$f"
done
for f in "$e2e/plugins/libseatrt_arch_gemma4.so" "$e2e/plugins/libseatrt_quant_nvfp4a16.so" \
         "$e2e/plugins/libseatrt_kernels_cpu.so"; do
  strip -o "$out/plugins/$(basename "$f")" "$f"
done
cp "$cuda/plugins/libseatrt_kernels_cuda.so" "$out/plugins/"  # as tested on the device before
for lib in libspdlog.so.1.10 libfmt.so.9; do cp -L "/lib/x86_64-linux-gnu/$lib" "$out/devlibs/"; done
du -sh "$out"
