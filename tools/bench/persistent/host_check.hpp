// Check mode: after one persistent step, every instruction class of the last
// layer (a full-attention layer) is recomputed from the inputs the step left
// in its buffers (reference kernels in ref.cuh; attention and top-k on the
// CPU) and compared as ||out - ref|| / ||ref||; every logit must be finite
// and the greedy argmax must match the reference logits' argmax.
#pragma once
#include <cmath>
#include <cstdio>
#include <vector>

#include "model.hpp"
#include "ref.cuh"

namespace pk {

template <class T>
static std::vector<T> d2h(const T* p, size_t n) {
  std::vector<T> v(n);
  cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
  return v;
}
static float bf(__nv_bfloat16 x) { return __bfloat162float(x); }
static float e4m3_host(uint8_t b) {
  const int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
  const float v = e ? std::ldexp(1.f + m / 8.f, e - 7) : std::ldexp(m / 8.f, -6);
  return s ? -v : v;
}
static float gelu_host(float z) { return 0.5f * z * (1.f + std::tanh(0.7978845608028654f * (z + 0.044715f * z * z * z))); }

struct Rel {
  double num = 0, den = 0;
  long nan = 0;
  void add(double out, double ref) {
    if (!std::isfinite(out)) ++nan;
    num += (out - ref) * (out - ref);
    den += ref * ref;
  }
  double rel() const { return std::sqrt(num / (den > 0 ? den : 1)); }
};
static int report(const char* what, const Rel& r, double tol) {
  const bool ok = r.nan == 0 && r.rel() <= tol;
  std::printf("  check %-28s rel %.3e  nonfinite %ld  %s\n", what, r.rel(), r.nan, ok ? "ok" : "FAIL");
  return ok ? 0 : 1;
}

// ref = x (rows) times W (quantized or bf16), on the device, to the host.
static std::vector<float> ref_lin(const uint8_t* d, const uint8_t* s, const __nv_bfloat16* wb, float gdiv, int N, int K,
                                  const __nv_bfloat16* x, int xstride, const std::vector<int>& rows, int cnt) {
  float* out;
  int* drows = nullptr;
  cudaMalloc(&out, size_t(N) * cnt * 4);
  if (!rows.empty()) {
    cudaMalloc(&drows, rows.size() * 4);
    cudaMemcpy(drows, rows.data(), rows.size() * 4, cudaMemcpyHostToDevice);
  }
  ref_linear<<<dim3((N + 127) / 128, cnt), 128>>>(d, s, wb, gdiv, N, K, x, xstride, drows, cnt, out);
  std::vector<float> v = d2h(out, size_t(N) * cnt);
  cudaFree(out);
  if (drows) cudaFree(drows);
  return v;
}

int host_check(const Params& P, const std::vector<LayerP>& hl, const float* dlogits, int B, bool full_check);

}  // namespace pk
