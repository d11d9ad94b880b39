#!/bin/bash
# Collects what tools/bench/run_serve_device.sh needs into one folder to carry
# to the device machine (the device tool carries at most 64 MiB): `seatrt`
# and the plugins, stripped, and the shared libraries they link that the
# device (Ubuntu 24.04) lacks or has in other versions: every library ldd
# resolves outside glibc/libstdc++/libgcc/CUDA, e.g. Debian 12's spdlog 1.10,
# fmt 9, toml++ 3, sentencepiece.
#   tools/bench/make_serve_carry.sh [build dir] [out dir]
# The build dir is configured with -DSEATRT_PORTABLE_HOST=ON and has built
# seatrt and the gemma4 / nvfp4a16 / cpu / cuda plugins.
set -eu
b=${1:-build-e2e}
out=${2:-$b/carry}
rm -rf "$out"
mkdir -p "$out/bin" "$out/plugins" "$out/devlibs"
strip -o "$out/bin/seatrt" "$b/bin/seatrt"
for p in arch_gemma4 quant_nvfp4a16 kernels_cpu kernels_cuda; do
  strip -o "$out/plugins/libseatrt_$p.so" "$b/plugins/libseatrt_$p.so"
done
for f in "$out/bin/seatrt" "$out"/plugins/*.so; do
  ldd "$f" | awk '/=> \//{print $3}'
done | sort -u | grep -v -E '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux[^/]*|libcuda|libcudart)\.so' |
  while read -r lib; do cp -L "$lib" "$out/devlibs/"; done
ls "$out/devlibs"
du -sh "$out"
