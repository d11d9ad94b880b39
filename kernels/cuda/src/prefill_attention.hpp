// The wgmma prefill attention (k_attention_prefill_wgmma.cu), called by
// launch_attention_prefill (k_attention_prefill.cu) with the row-tile list
// that file's fa_tiles_kernel makes.  CUDA sources only.
#pragma once

#include <cuda_runtime.h>

#include "launch.hpp"

namespace seatrt::cuda {

// True for head dims 256 and 512 (one or two tensors) over a 16-byte
// aligned F8_E4M3 or BF16 cache, unless SEATRT_PREFILL_ATTENTION=mma.
bool attention_prefill_wgmma_supported(const AttentionProblem& p);
// Launches it over `max_tiles` tile slots (<= 65535; the kernel reads the
// count at num_tiles) on stream st.
int launch_attention_prefill_wgmma(cudaStream_t st, const AttentionProblem& p, const int4* tiles,
                                   const int32_t* num_tiles, unsigned max_tiles);

}  // namespace seatrt::cuda
