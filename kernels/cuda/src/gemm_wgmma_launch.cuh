// The launchers of gemm_wgmma.cuh's and gemm_wgmma_ws.cuh's kernels, and
// which wgmma kernel a plain linear and the grouped MoE's GEMMs take
// (SEATRT_PREFILL_WGMMA; gemm_wgmma_wide.cuh and gemm_bf16w.cuh have their
// own launchers, called from k_gemm_tc.cu and k_moe_grouped.cu).
#pragma once

#include "gemm_wgmma_ws.cuh"

namespace seatrt::cuda {
namespace {

// Which wgmma kernel, from SEATRT_PREFILL_WGMMA (read once): unset, the
// 256 x 128 tiles (the plain linear on gemm_bf16w.cuh, or on
// gemm_wgmma_wide.cuh with SEATRT_PREFILL_LINEAR=decode; the MoE on
// gemm_wgmma_wide.cuh from 64 rows per expert, else on gemm_wgmma_kernel);
// "sync", both on gemm_wgmma_kernel; "ws", both on the warp-specialized
// kernel.
enum class WgmmaVariant { Wide, Sync, Ws };
inline WgmmaVariant wgmma_variant() {
  static const WgmmaVariant v = [] {
    const char* e = std::getenv("SEATRT_PREFILL_WGMMA");
    if (e && std::strcmp(e, "sync") == 0) return WgmmaVariant::Sync;
    if (e && std::strcmp(e, "ws") == 0) return WgmmaVariant::Ws;
    return WgmmaVariant::Wide;
  }();
  return v;
}

// Launches gemm_wgmma_ws_kernel<kMode> (or gemm_wgmma_kernel<kMode>) on
// `grid` with its dynamic shared memory (the opt-in above 48 KiB is set
// once per instantiation and file: internal linkage).
template <int kMode>
int launch_gemm_wgmma_grid(cudaStream_t st, dim3 grid, const TcParams& p) {
  if (wgmma_variant() == WgmmaVariant::Ws) {
    static bool ws_opted_in = false;
    if (!ws_opted_in) {
      if (cudaError_t e = cudaFuncSetAttribute(gemm_wgmma_ws_kernel<kMode>,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize, wg::kWsSmem))
        return static_cast<int>(e);
      ws_opted_in = true;
    }
    gemm_wgmma_ws_kernel<kMode><<<grid, wg::kWsThreads, wg::kWsSmem, st>>>(p);
    return last_error();
  }
  static bool opted_in = false;
  if (!opted_in) {
    if (cudaError_t e =
            cudaFuncSetAttribute(gemm_wgmma_kernel<kMode>, cudaFuncAttributeMaxDynamicSharedMemorySize, wg::kSmem))
      return static_cast<int>(e);
    opted_in = true;
  }
  gemm_wgmma_kernel<kMode><<<grid, wg::kThreads, wg::kSmem, st>>>(p);
  return last_error();
}

// Plain linear: x rows 0..M-1, out rows the same.
inline int launch_gemm_wgmma(cudaStream_t st, const TcParams& p) {
  const dim3 grid(static_cast<unsigned>(ceil_div(p.n, wg::kBN)), static_cast<unsigned>(ceil_div(p.x.rows, wg::kBM)));
  return launch_gemm_wgmma_grid<int(TcMode::Linear)>(st, grid, p);
}

// Grouped MoE gate/up (p.mode MoeGateUp) or down (MoeDown) over up to
// `max_tiles` row tiles of kTcBM rows (blocks past *p.num_tiles return).
inline int launch_gemm_wgmma_moe(cudaStream_t st, const TcParams& p, unsigned max_tiles) {
  if (p.mode == TcMode::MoeGateUp)
    return launch_gemm_wgmma_grid<int(TcMode::MoeGateUp)>(
        st, dim3(static_cast<unsigned>(ceil_div(p.n, wg::kBN / 2)), max_tiles), p);
  return launch_gemm_wgmma_grid<int(TcMode::MoeDown)>(st, dim3(static_cast<unsigned>(ceil_div(p.n, wg::kBN)), max_tiles),
                                                      p);
}

static_assert(wg::kBM == kTcBM, "MoE row tiles are the grouping kernel's 128 rows");

}  // namespace
}  // namespace seatrt::cuda
