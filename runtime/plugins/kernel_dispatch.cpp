// The dispatch table: device management forwarded to the primary,
// operations routed per op by supports() (see the header for the rules).
#include <string>
#include <type_traits>
#include <vector>

#include "dispatch_context.hpp"
#include "seatrt/cpp/op_registry.hpp"
#include "seatrt/host/plugin_registry.hpp"
#include "seatrt/host/status.hpp"

namespace seatrt::host {

namespace dispatch {

Route route(const Context& d, const seatrt_op* op) {
  const KernelDispatch::Impl& i = *d.impl;
  if (i.primary.supports && i.primary.run && i.primary.supports(d.primary, op)) return Route::primary;
  if (i.fallback_usable && d.fallback && i.fallback.supports(d.fallback, op)) return Route::fallback;
  return Route::none;
}

const std::string& route_name(const Context& d, Route r) {
  static const std::string none;
  return r == Route::primary ? d.impl->primary_name : r == Route::fallback ? d.impl->fallback_name : none;
}

seatrt_status* run_routed(const Context& d, Route r, seatrt_stream stream, const seatrt_op* op) {
  if (r == Route::primary) return d.impl->primary.run(d.primary, stream, op);
  if (r == Route::fallback) return d.impl->fallback.run(d.fallback, nullptr, op);
  return refuse(d, op, "run");
}

seatrt_status* refuse(const Context& d, const seatrt_op* op, const std::string& where) {
  const int32_t kind = op ? op->kind : SEATRT_OP_INVALID;
  const sdk::OpInfo* info = sdk::op_info(kind);
  std::string why;
  if (info) {
    std::vector<unsigned char> args(info->args_size);
    if (!sdk::read_args_raw(op, kind, args.data(), args.size(), &why))
      return host_api()->status_create(SEATRT_ERR_INVALID_ARG, (where + ": " + why).c_str());
  }
  std::string asked = "'" + d.impl->primary_name + "'";
  if (d.impl->fallback_usable) asked += " nor its fallback '" + d.impl->fallback_name + "'";
  const std::string msg = where + ": kernel provider " + asked + " supports the operation '" + sdk::op_name(kind) +
                          "' with these parameters";
  return host_api()->status_create(SEATRT_ERR_UNSUPPORTED, (msg).c_str());
}

}  // namespace dispatch

namespace {

using dispatch::Context;
using dispatch::as_context;

// Forwarders to the primary, generated per slot from the slot's signature.
template <typename Fn>
struct Slot;
template <typename R, typename... A>
struct Slot<R (*)(seatrt_kernel_context*, A...)> {
  template <auto Member>
  static R primary(seatrt_kernel_context* ctx, A... args) {
    Context* d = as_context(ctx);
    return (d->impl->primary.*Member)(d->primary, args...);
  }
};
template <auto Member>
using SlotOf = Slot<std::remove_cvref_t<decltype(std::declval<seatrt_kernel_api>().*Member)>>;

int32_t supports(seatrt_kernel_context* ctx, const seatrt_op* op) {
  return dispatch::route(*as_context(ctx), op) != dispatch::Route::none ? 1 : 0;
}

seatrt_status* run(seatrt_kernel_context* ctx, seatrt_stream stream, const seatrt_op* op) {
  const Context& d = *as_context(ctx);
  return dispatch::run_routed(d, dispatch::route(d, op), stream, op);
}

void destroy_dispatch_context(seatrt_kernel_context* ctx) {
  if (ctx == nullptr) return;
  Context* d = as_context(ctx);
  if (d->fallback && d->impl->fallback.destroy) d->impl->fallback.destroy(d->fallback);
  if (d->primary && d->impl->primary.destroy) d->impl->primary.destroy(d->primary);
  delete d;
}

}  // namespace

KernelDispatch::KernelDispatch(KernelProvider primary, KernelProvider fallback)
    : impl_(std::make_unique<Impl>()) {
  if (primary.api == nullptr)
    throw Error(SEATRT_ERR_INVALID_ARG, "kernel dispatch: no primary provider table");
  Impl& i = *impl_;
  i.primary = read_table(primary.api);
  i.fallback = read_table(fallback.api);
  i.primary_name = primary.name;
  i.fallback_name = fallback.name;
  i.fallback_usable = fallback.api != nullptr && i.fallback.device_kind == i.primary.device_kind &&
                      i.fallback.supports && i.fallback.run && i.fallback.create;
  seatrt_kernel_api& t = i.table;
  t.struct_size = sizeof(seatrt_kernel_api);
  t.device_kind = i.primary.device_kind;
  t.probe = nullptr;   // the host probes providers, not the dispatch
  t.create = nullptr;  // contexts come from create_context()
  t.destroy = destroy_dispatch_context;

  // Device management: primary only.  `required` slots missing from the
  // primary are reported; optional ones may stay NULL.
  auto primary_only = [&](const char* op, bool required, auto member, auto forwarder) {
    if (i.primary.*member) {
      t.*member = forwarder;
      sources_.push_back({op, primary.name});
    } else {
      sources_.push_back({op, required ? "" : "-"});  // "-": optional, absent
    }
  };
#define SEATRT_MANAGE(op, required) \
  primary_only(#op, required, &seatrt_kernel_api::op, &SlotOf<&seatrt_kernel_api::op>::primary<&seatrt_kernel_api::op>)
  SEATRT_MANAGE(alloc, true);
  SEATRT_MANAGE(free_memory, true);
  SEATRT_MANAGE(memory_info, true);
  SEATRT_MANAGE(copy, true);
  SEATRT_MANAGE(memset_zero, true);
  SEATRT_MANAGE(stream_create, true);
  SEATRT_MANAGE(stream_destroy, true);
  SEATRT_MANAGE(stream_sync, true);
  SEATRT_MANAGE(weight_layouts, true);
  SEATRT_MANAGE(prepare_weight, false);
  SEATRT_MANAGE(release_weight, false);
#undef SEATRT_MANAGE

  // Operations: whoever supports each one; the table always has both slots
  // so that an op nobody runs fails with a message instead of a NULL call.
  const bool primary_runs = i.primary.supports && i.primary.run;
  std::string runs = primary_runs ? primary.name : "";
  if (i.fallback_usable) runs += (runs.empty() ? "" : "+") + fallback.name;
  sources_.push_back({"supports", runs});
  sources_.push_back({"run", runs});
  t.supports = supports;
  t.run = run;

  // Graphs: always planned (the host runs the nodes when the primary has no
  // planner); the primary's planner is used when it has one.
  const bool primary_plans = i.primary.plan && i.primary.plan_launch && i.primary.plan_destroy;
  sources_.push_back({"plan", primary_plans ? primary.name : "host"});
  t.plan = dispatch::plan;
  t.plan_launch = dispatch::plan_launch;
  t.plan_destroy = dispatch::plan_destroy;
  t.plan_describe = dispatch::plan_describe;
}

KernelDispatch::~KernelDispatch() = default;

const seatrt_kernel_api* KernelDispatch::table() const { return &impl_->table; }

std::vector<std::string> KernelDispatch::missing_ops() const {
  std::vector<std::string> missing;
  for (const auto& s : sources_)
    if (s.provider.empty()) missing.push_back(s.op);
  return missing;
}

void KernelDispatch::require(const std::vector<std::string>& required) const {
  std::string list;
  for (const auto& op : missing_ops()) {
    bool wanted = required.empty();
    for (const auto& r : required) wanted = wanted || r == op;
    if (wanted) list += (list.empty() ? "" : ", ") + op;
  }
  if (list.empty()) return;
  const bool other_device = !impl_->fallback_name.empty() && !impl_->fallback_usable &&
                            impl_->fallback.device_kind != impl_->primary.device_kind;
  const std::string why = other_device ? " (the fallback runs on another device; seatrt does not stage tensors "
                                         "between devices)"
                                       : "";
  throw Error(SEATRT_ERR_UNSUPPORTED, "kernel slots missing from the provider and its fallback: " + list + why);
}

std::string KernelDispatch::provider_for(seatrt_kernel_context* ctx, const seatrt_op& op) const {
  const Context& d = *as_context(ctx);
  return dispatch::route_name(d, dispatch::route(d, &op));
}

seatrt_kernel_context* KernelDispatch::create_context(const std::string& options_toml, int device_index) const {
  auto* d = new Context{impl_.get(), nullptr, nullptr};
  try {
    if (impl_->primary.create == nullptr) throw Error(SEATRT_ERR_INVALID_ARG, "kernel provider has no create()");
    throw_if_error(impl_->primary.create(options_toml.c_str(), device_index, &d->primary), "kernel provider create()");
    if (impl_->fallback_usable)
      throw_if_error(impl_->fallback.create("", 0, &d->fallback), "fallback kernel provider create()");
  } catch (...) {
    destroy_dispatch_context(reinterpret_cast<seatrt_kernel_context*>(d));
    throw;
  }
  return reinterpret_cast<seatrt_kernel_context*>(d);
}

void KernelDispatch::destroy_context(seatrt_kernel_context* ctx) const { destroy_dispatch_context(ctx); }

seatrt_kernel_context* KernelDispatch::primary_context(seatrt_kernel_context* ctx) {
  return ctx ? as_context(ctx)->primary : nullptr;
}

}  // namespace seatrt::host
