// Running operations through the kernel table's run() one at a time: the
// eager path (trace runs, a table without a planner, the vision tower, the
// load-time folds).  Errors become sdk::Error naming the node.
#pragma once

#include <functional>
#include <string>

#include "seatrt/cpp/graph.hpp"
#include "seatrt/seatrt.h"

namespace seatrt::gemma4 {

// Runs `op` on `stream`; throws naming `name` on a returned status.
void run_op(const seatrt_kernel_api* k, seatrt_kernel_context* ctx, seatrt_stream stream, const seatrt_op& op,
            const std::string& name);

// Waits for `stream` (a no-op on a table without stream_sync).
void sync_stream(const seatrt_kernel_api* k, seatrt_kernel_context* ctx, seatrt_stream stream);

// Runs the builder's nodes in order.  With `at_mark`, the stream is
// synchronised and at_mark called at each of the builder's marks, after
// the nodes before it.
void run_nodes(const seatrt_kernel_api* k, seatrt_kernel_context* ctx, seatrt_stream stream,
               const sdk::GraphBuilder& nodes,
               const std::function<void(const sdk::GraphBuilder::Mark&)>& at_mark = {});

}  // namespace seatrt::gemma4
