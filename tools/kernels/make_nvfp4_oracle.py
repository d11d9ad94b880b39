#!/usr/bin/env python3
"""Writes tests/kernels/data/nvfp4_ct_oracle.json: NVFP4 weights decoded by
compressed-tensors' own functions (the independent oracle for the CPU
provider's NVFP4 decoding).

Inputs are random but cover every packed byte value (so every nibble in both
positions) and E4M3 scales from subnormal to 448.  Outputs:
  - weight_f32: unpack_fp4_from_uint8(..., float32) then dequantize(...,
    global_scale, float32): the exact fp32 w = fp4 * (scale / global_scale);
  - weight_bf16_bits: NVFP4PackedCompressor.decompress (what a checkpoint
    loader built on compressed-tensors gets, bf16), as raw bits.

Run (needs `pip install compressed-tensors`, which brings torch):
  python3 tools/kernels/make_nvfp4_oracle.py > tests/kernels/data/nvfp4_ct_oracle.json
"""
import json
import random
import struct

import torch
from compressed_tensors.compressors.nvfp4.base import NVFP4PackedCompressor
from compressed_tensors.compressors.nvfp4.helpers import unpack_fp4_from_uint8
from compressed_tensors.quantization.lifecycle.forward import dequantize
from compressed_tensors.quantization.quant_scheme import preset_name_to_scheme

OUT_FEATURES, IN_FEATURES = 8, 64  # 8 * 32 = 256 packed bytes: every byte value once


def main():
    rng = random.Random(20261130)
    packed_values = list(range(256))
    rng.shuffle(packed_values)
    packed = torch.tensor(packed_values, dtype=torch.uint8).reshape(OUT_FEATURES, IN_FEATURES // 2)
    # E4M3 scale bytes: positive, not NaN (0x7F); include 0x01 (smallest
    # subnormal), 0x08 (smallest normal) and 0x7E (448).
    scale_bytes = [0x01, 0x08, 0x7E, 0x38] + [rng.randrange(1, 0x7F) for _ in range(OUT_FEATURES * IN_FEATURES // 16 - 4)]
    scale = torch.tensor(scale_bytes, dtype=torch.uint8).view(torch.float8_e4m3fn).reshape(OUT_FEATURES, IN_FEATURES // 16)
    global_scale = torch.tensor([1234.5678], dtype=torch.float32)

    scheme = preset_name_to_scheme("NVFP4A16", ["Linear"])
    unpacked = unpack_fp4_from_uint8(packed, OUT_FEATURES, IN_FEATURES, dtype=torch.float32)
    w32 = dequantize(x_q=unpacked, scale=scale.to(torch.float32), args=scheme.weights,
                     global_scale=global_scale, dtype=torch.float32)
    decompressed = NVFP4PackedCompressor.decompress(
        {"weight_packed": packed, "weight_scale": scale, "weight_global_scale": global_scale}, scheme)
    wbf16 = decompressed["weight"]
    assert wbf16.dtype == torch.bfloat16, wbf16.dtype

    json.dump({
        "source": "compressed-tensors " + __import__("compressed_tensors").__version__,
        "out_features": OUT_FEATURES,
        "in_features": IN_FEATURES,
        "global_scale": global_scale.item(),
        "packed": packed.flatten().tolist(),
        "scale_bits": scale_bytes,
        "weight_f32_bits": [struct.unpack("<I", struct.pack("<f", v))[0] for v in w32.flatten().tolist()],
        "weight_bf16_bits": wbf16.flatten().view(torch.int16).to(torch.int32).bitwise_and(0xFFFF).tolist(),
    }, __import__("sys").stdout, indent=None)
    print()


if __name__ == "__main__":
    main()
