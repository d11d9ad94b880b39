// See seat_steps.hpp.
#include "seat_steps.hpp"

#include <exception>
#include <memory>
#include <string>

#include "seatrt/host/status.hpp"
#include "seatrt/model/model_session.hpp"

namespace seatrt::server {

namespace {

// Lines starting with "graph" open a graph; the rest belong to the last
// one opened.
struct StepReport {
  std::ostream* out;
  static void line(void* user, const char* text) {
    auto* r = static_cast<StepReport*>(user);
    const std::string s = text ? text : "";
    *r->out << (s.rfind("graph", 0) == 0 ? "  " : "    ") << s << "\n";
  }
};

}  // namespace

void check_seat_steps(const host::SeatConfig& seat, host::SeatPlugins& plugins, std::ostream& out) {
  seatrt_kernel_context* ctx = plugins.dispatch->create_context(seat.kernels.options_toml, seat.kernels.device);
  struct ContextGuard {
    host::KernelDispatch& d;
    seatrt_kernel_context* c;
    ~ContextGuard() { d.destroy_context(c); }
  } guard{*plugins.dispatch, ctx};
  model::ModelLoader loader(host::host_api(), model::model_plugin_candidates(seat, plugins));
  std::unique_ptr<model::LoadedModel> loaded;
  try {
    loaded = loader.load(loader.prepare(seat.model.path), plugins.dispatch->table(), ctx,
                         seat.scheduler.max_num_batched_tokens, seat.model.options_toml);
  } catch (const std::exception& e) {
    out << "model steps: not described (the model does not load on this kernel provider: " << e.what() << ")\n";
    return;
  }
  const seatrt_arch_api& arch = loaded->arch();
  if (!SEATRT_HAS_FIELD(&arch, seatrt_arch_api, describe_steps) || !arch.describe_steps) {
    out << "model steps: not described (the architecture plugin has no describe_steps)\n";
    return;
  }
  out << "model steps (max_seqs " << seat.scheduler.max_num_seqs << "):\n";
  StepReport report{&out};
  host::throw_if_error(arch.describe_steps(loaded->model(), seat.scheduler.max_num_seqs, &StepReport::line, &report),
                       "model describe_steps");
}

}  // namespace seatrt::server
