// Large-M linear (prefill) on the tensor cores: the 256x128-tile mma.sync
// core of gemm_mma.cuh where it fits (FP4 weights with 16-byte rows, x with
// 16-byte rows, K % 64 == 0: all of Gemma-4's shapes), else the 128x128-tile
// core of gemm_tc.cuh, in plain-linear mode (rows 0..M-1 of x in, the same
// rows of out).  Used for BF16 activations only, so no rounding of the
// inputs happens here; the weight decode to BF16 is exact and the global
// divisor is applied once per output in fp32.  NOTES-prefill.md has the
// design and the measured throughput.
#include "gemm_mma.cuh"

namespace seatrt::cuda {

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
  if (!mma_disabled() && mma_fits(tc_fast(w), t.x_vec, t.w_vec, p.k)) {
    if (mma_choice() == MmaChoice::Linear128) {
      const dim3 grid(static_cast<unsigned>(ceil_div(p.n, 64 * kMmaMoeWN)),
                      static_cast<unsigned>(ceil_div(p.x.rows, 64 * kMmaMoeWM)));
      return launch_gemm_mma<kMmaMoeWM, kMmaMoeWN, kMmaMoeStages, false>(cudaStream_t(s), grid, t);
    }
    const dim3 grid(static_cast<unsigned>(ceil_div(p.n, 64 * kMmaLinWN)),
                    static_cast<unsigned>(ceil_div(p.x.rows, 64 * kMmaLinWM)));
    return launch_gemm_mma<kMmaLinWM, kMmaLinWN, kMmaLinStages, false>(cudaStream_t(s), grid, t);
  }
  const dim3 grid(static_cast<unsigned>(ceil_div(p.n, kTcBN)), static_cast<unsigned>(ceil_div(p.x.rows, kTcBM)));
  if (tc_fast(w) && t.w_vec && t.x_vec && p.k % 32 == 0) return launch_gemm_tc<false, true>(cudaStream_t(s), grid, t);
  return launch_gemm_tc<false, false>(cudaStream_t(s), grid, t);
}

}  // namespace seatrt::cuda
