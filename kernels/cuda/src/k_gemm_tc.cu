// Large-M linear (prefill) on the tensor cores, in plain-linear mode (rows
// 0..M-1 of x in, the same rows of out): where it fits (FP4 or dense BF16
// weights with 16-byte rows, x with 16-byte rows, K % 64 == 0: all of
// Gemma-4's shapes) the decode-free GEMM of gemm_bf16w.cuh on a BF16
// expansion of the weight made per call in the caller's scratch
// (GemvProblem::w_bf16; SEATRT_PREFILL_LINEAR=decode turns it off); else for
// FP4 the wgmma core (gemm_wgmma_wide.cuh's 256 x 128 tile, or gemm_wgmma.cuh's
// under SEATRT_PREFILL_WGMMA; with SEATRT_PREFILL_GEMM=mma*, the
// mma.sync core of gemm_mma.cuh), else the 128x128-tile core of gemm_tc.cuh
// (SEATRT_PREFILL_GEMM=tc: always).  Used for BF16 activations only, so no rounding of the
// inputs happens here; the weight decode to BF16 is exact and the global
// divisor is applied once per output in fp32.  NOTES-prefill.md has the
// design and the measured throughput.
#include "gemm_wgmma_launch.cuh"
#include "gemm_bf16w.cuh"

namespace seatrt::cuda {
namespace {

// SEATRT_PREFILL_LINEAR=decode (read once) keeps the prefill linears on the
// decoding wgmma cores.
bool bf16w_on() {
  static const bool on = [] {
    const char* e = std::getenv("SEATRT_PREFILL_LINEAR");
    return !(e && std::strcmp(e, "decode") == 0);
  }();
  return on && mma_choice() == MmaChoice::Wgmma && wgmma_variant() == WgmmaVariant::Wide;
}

bool rows16(const void* data, int64_t row_bytes) {
  return reinterpret_cast<uintptr_t>(data) % 16 == 0 && row_bytes % 16 == 0;
}

// Whether gemm_bf16w.cuh takes w (x's fit is checked by the caller).
bool bf16w_fits(const WeightRef& w, int64_t k) {
  if (!bf16w_on() || k % bw::kBK != 0 || k <= 0) return false;
  if (w.kind == int32_t(WeightKind::DenseBf16)) return rows16(w.data, w.data_row_bytes);
  // FP4: the expansion reads 8 code bytes and a scale as one load each.
  return w.kind <= int32_t(WeightKind::Fp4Bf16Scales) && rows16(w.data, w.data_row_bytes) && tc_fast(w);
}

}  // namespace

size_t linear_tc_expand_bytes(const WeightRef& w, int64_t n, int64_t k) {
  if (!bf16w_fits(w, k) || w.kind == int32_t(WeightKind::DenseBf16)) return 0;
  return bf16w_bytes(n, k);
}

int launch_linear_glu_tc(Stream s, const WeightRef& gate, const WeightRef& up, int activation, const GemvProblem& p) {
  const size_t one = linear_tc_expand_bytes(gate, p.n, p.k);
  if (!p.w_bf16 || one == 0 || linear_tc_expand_bytes(up, p.n, p.k) == 0 || p.x.dtype != SEATRT_DTYPE_BF16 ||
      !rows16(p.x.data, p.x.row_stride * 2))
    return kNotFused;
  if (p.x.rows == 0 || p.n == 0) return 0;
  TcParams t;
  t.mode = TcMode::Linear;
  t.w = gate;
  t.w_up = up;
  t.n = p.n;
  t.k = p.k;
  t.x = p.x;
  t.out = p.out;
  t.act = activation;
  return launch_gemm_bf16w_glu(cudaStream_t(s), t, p.w_bf16);
}

int launch_linear_tc(Stream s, const WeightRef& w, const GemvProblem& p, bool vec) {
  if (p.x.rows == 0 || p.n == 0) return 0;
  TcParams t;
  t.mode = TcMode::Linear;
  t.w = w;
  t.n = p.n;
  t.k = p.k;
  t.x = p.x;
  t.out = p.out;
  t.x_vec = vec && (reinterpret_cast<uintptr_t>(p.x.data) % 16) == 0 && (p.x.row_stride * 2) % 16 == 0;
  t.w_vec = vec && (reinterpret_cast<uintptr_t>(w.data) % 16) == 0 && w.data_row_bytes % 16 == 0;
  if (rows16(p.x.data, p.x.row_stride * 2) && bf16w_fits(w, p.k) && (w.kind == int32_t(WeightKind::DenseBf16) || p.w_bf16))
    return launch_gemm_bf16w(cudaStream_t(s), t, p.w_bf16);
  if (mma_choice() != MmaChoice::OldCore && mma_fits(tc_fast(w), t.x_vec, t.w_vec, p.k)) {
    const cudaStream_t st = cudaStream_t(s);
    const auto grid_for = [&](int bm, int bn) {
      return dim3(static_cast<unsigned>(ceil_div(p.n, bn)), static_cast<unsigned>(ceil_div(p.x.rows, bm)));
    };
    switch (mma_choice()) {
      case MmaChoice::Wgmma:
        return wgmma_variant() == WgmmaVariant::Wide ? launch_gemm_wgmma_wide(st, t) : launch_gemm_wgmma(st, t);
      case MmaChoice::Linear128:
        return launch_gemm_mma<kMmaMoeWM, kMmaMoeWN, kMmaMoeStages, false>(st, grid_for(64 * kMmaMoeWM, 64 * kMmaMoeWN), t);
      case MmaChoice::Linear256n:
        return launch_gemm_mma<kMmaWideWM, kMmaWideWN, kMmaWideStages, false>(
            st, grid_for(64 * kMmaWideWM, 64 * kMmaWideWN), t);
      default:
        return launch_gemm_mma<kMmaLinWM, kMmaLinWN, kMmaLinStages, false>(st, grid_for(64 * kMmaLinWM, 64 * kMmaLinWN), t);
    }
  }
  const dim3 grid(static_cast<unsigned>(ceil_div(p.n, kTcBN)), static_cast<unsigned>(ceil_div(p.x.rows, kTcBM)));
  if (tc_fast(w) && t.w_vec && t.x_vec && p.k % 32 == 0) return launch_gemm_tc<false, true>(cudaStream_t(s), grid, t);
  return launch_gemm_tc<false, false>(cudaStream_t(s), grid, t);
}

}  // namespace seatrt::cuda
