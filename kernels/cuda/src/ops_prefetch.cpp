// prefetch_weights (ABI 1.6): the byte spans of the weights' data and
// scales, asked of L2 by one small kernel (k_prefetch.cu).  A hint: it
// reads and writes nothing the model sees.
#include <string>

#include "context.hpp"
#include "ops.hpp"
#include "prefetch.hpp"
#include "views.hpp"

namespace seatrt::cuda {

namespace {

// The bytes a 2-D tensor's elements occupy, from its first to its last.
void add_span(PrefetchRanges& r, const seatrt_tensor& t) {
  if (!t.data || t.ndim != 2 || t.shape[0] < 1 || t.shape[1] < 1) return;
  const auto esize = static_cast<int64_t>(dtype_bytes(t.dtype));
  if (esize == 0 || r.count >= kPrefetchMaxRanges) return;
  const int64_t last = (t.shape[0] - 1) * t.strides[0] + (t.shape[1] - 1) * t.strides[1];
  const char* begin = static_cast<const char*>(t.data);
  r.begin[r.count] = begin;
  r.end[r.count] = begin + (last + 1) * esize;
  ++r.count;
}

}  // namespace

void prefetch_weights(seatrt_kernel_context*, seatrt_stream s, const seatrt_prefetch_weights_args* args) {
  const std::string op = "prefetch_weights";
  if (!args) invalid(op, "args is NULL");
  if (args->count < 0 || args->count > kPrefetchMaxRanges / 2)
    invalid(op, "count " + std::to_string(args->count) + " is outside 0.." + std::to_string(kPrefetchMaxRanges / 2));
  if (args->count > 0 && !args->weights) invalid(op, "weights is NULL");
  PrefetchRanges r;
  for (int32_t i = 0; i < args->count; ++i) {
    const seatrt_linear_weight* w = args->weights[i];
    if (!w) invalid(op, "weights[" + std::to_string(i) + "] is NULL");
    add_span(r, w->data);
    if (w->format == SEATRT_WFMT_NVFP4) add_span(r, w->scales);
  }
  check(launch_prefetch(s, r), "prefetch_weights launch");
}

}  // namespace seatrt::cuda
