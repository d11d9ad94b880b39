// What the dispatch table's slots share: the providers' normalised tables,
// the per-context state, and routing one operation to a provider.
#pragma once

#include <string>

#include "seatrt/host/kernel_dispatch.hpp"

namespace seatrt::host {

struct KernelDispatch::Impl {
  seatrt_kernel_api primary{};  // normalised copies (absent trailing slots NULL)
  seatrt_kernel_api fallback{};
  std::string primary_name;
  std::string fallback_name;
  // A fallback exists, runs on the primary's device kind and can answer
  // supports() and run(): only then does an operation ever go to it.
  bool fallback_usable = false;
  seatrt_kernel_api table{};
};

namespace dispatch {

struct Context {
  const KernelDispatch::Impl* impl;
  seatrt_kernel_context* primary;
  seatrt_kernel_context* fallback;  // NULL unless impl->fallback_usable
};

inline Context* as_context(seatrt_kernel_context* ctx) { return reinterpret_cast<Context*>(ctx); }

enum class Route { none, primary, fallback };

// Who runs `op`: the primary when it supports it, else the usable fallback.
Route route(const Context& d, const seatrt_op* op);
// The provider's name for a route ("" for none).
const std::string& route_name(const Context& d, Route r);
// Runs `op` through `r` (the fallback synchronously, with no stream).
seatrt_status* run_routed(const Context& d, Route r, seatrt_stream stream, const seatrt_op* op);
// The status for an op no provider takes: INVALID_ARG with the shared
// checker's reason when the args are malformed, else UNSUPPORTED naming the
// op and the providers asked.  `where` prefixes the message ("node 3").
seatrt_status* refuse(const Context& d, const seatrt_op* op, const std::string& where);

// The graph slots of the dispatch table (dispatch_plan.cpp).
seatrt_status* plan(seatrt_kernel_context* ctx, const seatrt_op_graph* graph, seatrt_plan** out);
seatrt_status* plan_launch(seatrt_kernel_context* ctx, seatrt_stream stream, seatrt_plan* plan);
void plan_destroy(seatrt_kernel_context* ctx, seatrt_plan* plan);
seatrt_status* plan_describe(seatrt_kernel_context* ctx, const seatrt_plan* plan, seatrt_line_fn line,
                             void* user_data);

}  // namespace dispatch
}  // namespace seatrt::host
