// The dispatch table: host trampolines that forward each slot to the
// provider chosen for it, with that provider's context (see the header for
// the rules).
#include <string>

#include "seatrt/host/kernel_dispatch.hpp"
#include "seatrt/host/plugin_registry.hpp"
#include "seatrt/host/status.hpp"

namespace seatrt::host {

namespace {
enum class Route { missing, primary, fallback };
}

struct KernelDispatch::Impl {
  seatrt_kernel_api primary{};   // normalised copies (absent trailing slots NULL)
  seatrt_kernel_api fallback{};
  bool has_fallback = false;
  bool uses_fallback = false;
  seatrt_kernel_api table{};
};

namespace {

struct DispatchContext {
  const KernelDispatch::Impl* impl;
  seatrt_kernel_context* primary;
  seatrt_kernel_context* fallback;
};

DispatchContext* as_dispatch(seatrt_kernel_context* ctx) {
  return reinterpret_cast<DispatchContext*>(ctx);
}

// Forwarders generated per slot type from the slot's own signature.
template <typename Fn>
struct Slot;
template <typename R, typename... A>
struct Slot<R (*)(seatrt_kernel_context*, A...)> {
  template <auto Member>
  static R primary(seatrt_kernel_context* ctx, A... args) {
    DispatchContext* d = as_dispatch(ctx);
    return (d->impl->primary.*Member)(d->primary, args...);
  }
};
template <typename Args>
struct Slot<seatrt_status* (*)(seatrt_kernel_context*, seatrt_stream, Args)> {
  template <auto Member>
  static seatrt_status* primary(seatrt_kernel_context* ctx, seatrt_stream stream, Args args) {
    DispatchContext* d = as_dispatch(ctx);
    return (d->impl->primary.*Member)(d->primary, stream, args);
  }
  // Same-device fallback only (CPU): it runs synchronously, with no stream.
  template <auto Member>
  static seatrt_status* fallback(seatrt_kernel_context* ctx, seatrt_stream, Args args) {
    DispatchContext* d = as_dispatch(ctx);
    return (d->impl->fallback.*Member)(d->fallback, nullptr, args);
  }
};

template <auto Member>
using SlotOf = Slot<std::remove_cvref_t<decltype(std::declval<seatrt_kernel_api>().*Member)>>;

void destroy_dispatch_context(seatrt_kernel_context* ctx) {
  if (ctx == nullptr) return;
  DispatchContext* d = as_dispatch(ctx);
  if (d->fallback && d->impl->fallback.destroy) d->impl->fallback.destroy(d->fallback);
  if (d->primary && d->impl->primary.destroy) d->impl->primary.destroy(d->primary);
  delete d;
}

}  // namespace

KernelDispatch::KernelDispatch(KernelProvider primary, KernelProvider fallback)
    : impl_(std::make_unique<Impl>()) {
  if (primary.api == nullptr)
    throw Error(SEATRT_ERR_INVALID_ARG, "kernel dispatch: no primary provider table");
  impl_->primary = read_table(primary.api);
  impl_->fallback = read_table(fallback.api);
  impl_->has_fallback = fallback.api != nullptr;
  const bool same_device =
      impl_->has_fallback && impl_->fallback.device_kind == impl_->primary.device_kind;
  seatrt_kernel_api& t = impl_->table;
  t.struct_size = sizeof(seatrt_kernel_api);
  t.device_kind = impl_->primary.device_kind;
  t.probe = nullptr;   // the host probes providers, not the dispatch
  t.create = nullptr;  // contexts come from create_context()
  t.destroy = destroy_dispatch_context;

  // Device management and graph capture: primary only.  `required` slots
  // missing from the primary are reported; optional ones may stay NULL.
  auto primary_only = [&](const char* op, bool required, auto member, auto forwarder) {
    if (impl_->primary.*member) {
      t.*member = forwarder;
      sources_.push_back({op, primary.name});
    } else {
      sources_.push_back({op, required ? "" : "-"});  // "-": optional, absent
    }
  };
  // Operations: primary, else the same-device fallback.  Optional ones (the
  // ABI 1.1, 1.2, 1.4 and 1.5 fused ops, which callers replace by the unfused
  // sequence) stay NULL without being reported missing when neither provider
  // has them.
  auto operation = [&](const char* op, bool required, auto member, auto via_primary, auto via_fallback) {
    if (impl_->primary.*member) {
      t.*member = via_primary;
      sources_.push_back({op, primary.name});
    } else if (same_device && impl_->fallback.*member) {
      t.*member = via_fallback;
      impl_->uses_fallback = true;
      sources_.push_back({op, fallback.name});
    } else {
      sources_.push_back({op, required ? "" : "-"});
    }
  };
#define SEATRT_MANAGE(op, required) \
  primary_only(#op, required, &seatrt_kernel_api::op, &SlotOf<&seatrt_kernel_api::op>::primary<&seatrt_kernel_api::op>)
#define SEATRT_OPERATION(op, required)                                       \
  operation(#op, required, &seatrt_kernel_api::op,                           \
            &SlotOf<&seatrt_kernel_api::op>::primary<&seatrt_kernel_api::op>, \
            &SlotOf<&seatrt_kernel_api::op>::fallback<&seatrt_kernel_api::op>)
  SEATRT_MANAGE(alloc, true);
  SEATRT_MANAGE(free_memory, true);
  SEATRT_MANAGE(memory_info, true);
  SEATRT_MANAGE(copy, true);
  SEATRT_MANAGE(memset_zero, true);
  SEATRT_MANAGE(stream_create, true);
  SEATRT_MANAGE(stream_destroy, true);
  SEATRT_MANAGE(stream_sync, true);
  SEATRT_MANAGE(stream_wait, false);  // ABI 1.3
  SEATRT_MANAGE(weight_layouts, true);
  SEATRT_MANAGE(prepare_weight, false);
  SEATRT_MANAGE(release_weight, false);
  SEATRT_OPERATION(elementwise, true);
  SEATRT_OPERATION(embedding, true);
  SEATRT_OPERATION(rms_norm, true);
  SEATRT_OPERATION(linear, true);
  SEATRT_OPERATION(glu, true);
  SEATRT_OPERATION(rope, true);
  SEATRT_OPERATION(kv_store, true);
  SEATRT_OPERATION(attention, true);
  SEATRT_OPERATION(router_topk, true);
  SEATRT_OPERATION(moe, true);
  SEATRT_OPERATION(gather_rows, true);
  SEATRT_OPERATION(sample, true);
  SEATRT_OPERATION(add_rms_norm, false);   // ABI 1.1
  SEATRT_OPERATION(rms_norm_rope, false);  // ABI 1.1
  SEATRT_OPERATION(linear_multi, false);   // ABI 1.2
  SEATRT_OPERATION(linear_glu, false);     // ABI 1.2
  SEATRT_OPERATION(rms_norm_multi, false); // ABI 1.2
  SEATRT_OPERATION(qkv_norm_rope_store, false);  // ABI 1.4
  SEATRT_OPERATION(add_rms_norm_pair, false);    // ABI 1.4
  SEATRT_OPERATION(route, false);                // ABI 1.5
  SEATRT_MANAGE(prefetch_weights, false);        // ABI 1.6: a hint about the primary's weights
  SEATRT_MANAGE(graph_begin, false);
  SEATRT_MANAGE(graph_end, false);
  SEATRT_MANAGE(graph_launch, false);
  SEATRT_MANAGE(graph_destroy, false);
#undef SEATRT_MANAGE
#undef SEATRT_OPERATION
  // ABI 1.7: what sample honours is what the provider serving it honours
  // (0 from a table that predates the field: read_table zeroes it).
  if (impl_->primary.sample) t.sample_features = impl_->primary.sample_features;
  else if (t.sample) t.sample_features = impl_->fallback.sample_features;
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
  std::string why = impl_->has_fallback &&
                            impl_->fallback.device_kind != impl_->primary.device_kind
                        ? " (the fallback runs on another device; seatrt does not stage tensors "
                          "between devices)"
                        : "";
  throw Error(SEATRT_ERR_UNSUPPORTED,
              "kernel operations missing from the provider and its fallback: " + list + why);
}

seatrt_kernel_context* KernelDispatch::create_context(const std::string& options_toml,
                                                      int device_index) const {
  auto* d = new DispatchContext{impl_.get(), nullptr, nullptr};
  try {
    if (impl_->primary.create == nullptr)
      throw Error(SEATRT_ERR_INVALID_ARG, "kernel provider has no create()");
    throw_if_error(impl_->primary.create(options_toml.c_str(), device_index, &d->primary),
                   "kernel provider create()");
    if (impl_->uses_fallback) {
      if (impl_->fallback.create == nullptr)
        throw Error(SEATRT_ERR_INVALID_ARG, "fallback kernel provider has no create()");
      throw_if_error(impl_->fallback.create("", 0, &d->fallback),
                     "fallback kernel provider create()");
    }
  } catch (...) {
    destroy_dispatch_context(reinterpret_cast<seatrt_kernel_context*>(d));
    throw;
  }
  return reinterpret_cast<seatrt_kernel_context*>(d);
}

void KernelDispatch::destroy_context(seatrt_kernel_context* ctx) const {
  destroy_dispatch_context(ctx);
}

seatrt_kernel_context* KernelDispatch::primary_context(seatrt_kernel_context* ctx) {
  return ctx ? as_dispatch(ctx)->primary : nullptr;
}

}  // namespace seatrt::host
