#!/bin/sh
# On the device machine (after ./build.sh here, carrying build/): check, then
# time batches 1/4/8/16/32 and print the table.  Never changes GPU settings.
cd "$(dirname "$0")/build" || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
timeout 200 stdbuf -oL ./pk_decode --check --iters "${ITERS:-30}" "$@"
