#include "kernel_run.hpp"

#include "seatrt/cpp/plugin.hpp"

namespace seatrt::gemma4 {

void run_op(const seatrt_kernel_api* k, seatrt_kernel_context* ctx, seatrt_stream stream, const seatrt_op& op,
            const std::string& name) {
  if (!k->run) throw sdk::Error(SEATRT_ERR_UNSUPPORTED, "the kernel provider has no run()");
  seatrt_status* st = k->run(ctx, stream, &op);
  if (!st) return;
  const auto* h = sdk::host();
  sdk::Error e(h->status_code(st), name + " (" + sdk::op_name(op.kind) + "): " + h->status_message(st));
  h->status_free(st);
  throw e;
}

void sync_stream(const seatrt_kernel_api* k, seatrt_kernel_context* ctx, seatrt_stream stream) {
  if (k->stream_sync) sdk::throw_if_error(k->stream_sync(ctx, stream));
}

void run_nodes(const seatrt_kernel_api* k, seatrt_kernel_context* ctx, seatrt_stream stream,
               const sdk::GraphBuilder& nodes, const std::function<void(const sdk::GraphBuilder::Mark&)>& at_mark) {
  const auto& marks = nodes.marks();
  std::size_t next_mark = 0;
  const auto report_marks = [&](std::size_t done) {
    if (!at_mark) return;
    for (bool synced = false; next_mark < marks.size() && marks[next_mark].after_nodes == done; ++next_mark) {
      if (!synced) sync_stream(k, ctx, stream);
      synced = true;
      at_mark(marks[next_mark]);
    }
  };
  report_marks(0);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    run_op(k, ctx, stream, nodes.nodes()[i], nodes.node_name(i));
    report_marks(i + 1);
  }
}

}  // namespace seatrt::gemma4
