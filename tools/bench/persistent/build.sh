#!/bin/sh
# Builds pk_decode (standalone; not part of the CMake build: CI has no GPU).
# Output in tools/bench/persistent/build/ (ignored by git; carry it to the
# device machine).
set -e
cd "$(dirname "$0")"
mkdir -p build
NVCC=${NVCC:-nvcc}
# The provider's device helpers and the SDK headers they use.
INCLUDES="-I../../../kernels/cuda/src -I../../../sdk/include"
FLAGS="$INCLUDES -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -Xcompiler -Wall,-Wextra -Xptxas -v,-warn-spills,-warn-lmem-usage -lineinfo"
nice -n 10 $NVCC $FLAGS -c main.cu -o build/main.o 2> build/ptxas_main.txt || { cat build/ptxas_main.txt; exit 1; }
nice -n 10 $NVCC $FLAGS -c host_check.cu -o build/host_check.o 2> build/ptxas_check.txt || { cat build/ptxas_check.txt; exit 1; }
nice -n 10 $NVCC -std=c++20 -O2 -Xcompiler -Wall,-Wextra -c builder.cpp -o build/builder.o
nice -n 10 $NVCC -gencode=arch=compute_90a,code=sm_90a build/main.o build/host_check.o build/builder.o -o build/pk_decode
grep -A2 "decode_step" build/ptxas_main.txt | grep -E "registers|spill|stack" || true
grep -i "spill\|lmem" build/ptxas_main.txt | grep -v " 0 bytes spill" || true
