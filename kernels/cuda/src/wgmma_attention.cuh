// The wgmma shapes of the prefill attention (k_attention_prefill_wgmma.cu),
// with FP16 (kF16) or BF16 inputs and fp32 accumulators: S = Q K^T with
// both operands in shared memory (K-major), and O += P V with P in
// registers (the accumulator layout of S, rounded to 16-bit pairs, is the
// A fragment of the next MMA) and V in shared memory read N-major (V's rows
// are keys, so for P V the 16-byte runs lie along N = the head dim).
// Descriptors: gemm_wgmma.cuh's wg::desc for K-major tiles; desc_nmajor here.
#pragma once

#include <cstdint>

#include "wgmma_operands.cuh"

namespace seatrt::cuda {
namespace {
namespace wga {

// Shared-memory descriptor of an N-major 16-bit operand in the 128-byte
// swizzle (PTX ISA, "Canonical Layouts", MN-major 128B:
// ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))): rows of 128 bytes along K, 8-row
// groups `sbo` bytes apart, and the next 64 elements along N `lbo` bytes on.
__device__ __forceinline__ uint64_t desc_nmajor(uint32_t smem_addr, uint32_t lbo, uint32_t sbo) {
  return uint64_t((smem_addr & 0x3FFFFu) >> 4) | (uint64_t((lbo & 0x3FFFFu) >> 4) << 16) |
         (uint64_t((sbo & 0x3FFFFu) >> 4) << 32) | (uint64_t(1) << 62);
}

// d (N/2 fp32 a thread) = (acc ? d : 0) + A (64 x 16, K-major descriptor a)
// * B^T (B: N x 16, K-major descriptor b).  NAMES/OPS: the accumulator list
// (wgmma_operands.cuh); A, B, P: the operand numbers after it.
#define WGA_SS(SHAPE, TYPE, NAMES, OPS, A, B, P)                                                              \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" P ", 0;\n"                                                \
               "wgmma.mma_async.sync.aligned." SHAPE ".f32." TYPE "." TYPE " {" NAMES "}, %" A ", %" B         \
               ", p, 1, 1, 0, 0;\n}\n"                                                                        \
               : OPS                                                                                          \
               : "l"(desc_a), "l"(desc_b), "r"(acc))

template <bool kF16>
__device__ __forceinline__ void wgmma_ss_m64n32k16(float* d, uint64_t desc_a, uint64_t desc_b, int acc) {
  if constexpr (kF16) WGA_SS("m64n32k16", "f16", WGMMA_R16, WGMMA_D16, "16", "17", "18");
  else WGA_SS("m64n32k16", "bf16", WGMMA_R16, WGMMA_D16, "16", "17", "18");
}
template <bool kF16>
__device__ __forceinline__ void wgmma_ss_m64n64k16(float* d, uint64_t desc_a, uint64_t desc_b, int acc) {
  if constexpr (kF16) WGA_SS("m64n64k16", "f16", WGMMA_R32, WGMMA_D32, "32", "33", "34");
  else WGA_SS("m64n64k16", "bf16", WGMMA_R32, WGMMA_D32, "32", "33", "34");
}

// d (N/2 fp32 a thread) += A (64 x 16 in registers: the m64nNk16 A
// fragment) * B (16 x N, N-major descriptor b: imm-trans-b 1).
#define WGA_RS(SHAPE, TYPE, NAMES, OPS, A0, A1, A2, A3, B, P)                                                  \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" P ", 0;\n"                                                \
               "wgmma.mma_async.sync.aligned." SHAPE ".f32." TYPE "." TYPE " {" NAMES "}, {%" A0 ",%" A1       \
               ",%" A2 ",%" A3 "}, %" B ", p, 1, 1, 1;\n}\n"                                                  \
               : OPS                                                                                          \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1))

template <bool kF16>
__device__ __forceinline__ void wgmma_rs_m64n128k16_nmajor(float* d, const uint32_t* a, uint64_t desc_b) {
  if constexpr (kF16) WGA_RS("m64n128k16", "f16", WGMMA_R64, WGMMA_D64, "64", "65", "66", "67", "68", "69");
  else WGA_RS("m64n128k16", "bf16", WGMMA_R64, WGMMA_D64, "64", "65", "66", "67", "68", "69");
}
template <bool kF16>
__device__ __forceinline__ void wgmma_rs_m64n256k16_nmajor(float* d, const uint32_t* a, uint64_t desc_b) {
  if constexpr (kF16) WGA_RS("m64n256k16", "f16", WGMMA_R128, WGMMA_D128, "128", "129", "130", "131", "132", "133");
  else WGA_RS("m64n256k16", "bf16", WGMMA_R128, WGMMA_D128, "128", "129", "130", "131", "132", "133");
}

#undef WGA_SS
#undef WGA_RS

}  // namespace wga
}  // namespace
}  // namespace seatrt::cuda
