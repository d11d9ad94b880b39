// Programmatic dependent launch (PDL) for the provider's small kernels.
//
// Why: a decode step at batch 1 is ~700 kernels, most of them a few
// microseconds long, so the gap between one kernel's end and the next one's
// start is a large share of the step.  A kernel launched with launch_pdl may
// be scheduled while its predecessor still runs; it must call pdl_enter()
// before it touches global memory, which waits until the predecessor has
// completed and its writes are visible (griddepcontrol.wait), then lets its
// own successor launch early (griddepcontrol.launch_dependents).  The
// decode GEMVs (k_gemv_mma.cu) issue their weight loads before waiting, so
// a norm that releases them early hides their DRAM latency behind its own
// work.  Waiting first keeps at most one launched-but-waiting grid behind
// each running one.
#pragma once

#include <cuda_runtime.h>

namespace seatrt::cuda {

__device__ __forceinline__ void pdl_enter() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

// kernel<<<grid, block, smem, stream>>>(args...) with the programmatic
// stream-serialization attribute.  Returns the launch's error code.
template <class... Params, class... Args>
cudaError_t launch_pdl(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                       Args... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...);
}

}  // namespace seatrt::cuda
