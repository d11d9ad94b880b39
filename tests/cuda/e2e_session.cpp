#include "e2e_session.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "seatrt/host/plugin_registry.hpp"
#include "seatrt/host/status.hpp"

namespace seatrt::e2e {

namespace {

std::filesystem::path canonical_dir(const std::filesystem::path& p) {
  return std::filesystem::weakly_canonical(std::filesystem::absolute(p));
}

}  // namespace

ProbeResult probe_provider(const std::filesystem::path& provider_library) {
  const auto lib = canonical_dir(provider_library);
  host::PluginRegistry registry({lib.parent_path()});
  const auto plugin = registry.load(lib.string(), SEATRT_KIND_KERNELS);
  const seatrt_kernel_api* api = plugin->descriptor().kernels;
  if (!api || !api->probe) throw std::runtime_error(lib.string() + ": the kernel table has no probe");
  seatrt_kernel_probe p{};
  p.struct_size = sizeof(p);
  if (seatrt_status* st = api->probe(&p)) {
    // A probe that fails is a provider that cannot run here.
    host::host_api()->status_free(st);
    return {};
  }
  return ProbeResult{p.score, p.detail ? p.detail : ""};
}

std::unique_ptr<model::ModelSession> open_session(const std::filesystem::path& plugin_dir,
                                                  const std::filesystem::path& provider_library) {
  const auto lib = canonical_dir(provider_library);
  std::vector<std::filesystem::path> paths{canonical_dir(plugin_dir)};
  if (std::find(paths.begin(), paths.end(), lib.parent_path()) == paths.end()) paths.push_back(lib.parent_path());
  return std::make_unique<model::ModelSession>(paths, lib.string());
}

TraceIds::TraceIds(const model::LoadedModel& loaded, std::string name) : loaded_(loaded), name_(std::move(name)) {
  if (!loaded.arch().set_trace) throw std::runtime_error("the architecture plugin has no set_trace");
  if (loaded.arch().set_trace(loaded.model(), &TraceIds::callback, this))
    throw std::runtime_error("set_trace refused the callback");
}

TraceIds::~TraceIds() {
  if (seatrt_status* st = loaded_.arch().set_trace(loaded_.model(), nullptr, nullptr)) loaded_.host()->status_free(st);
}

void TraceIds::callback(void* user, int32_t layer, const char* name, const seatrt_tensor* t) {
  auto* self = static_cast<TraceIds*>(user);
  if (layer < 0 || self->name_ != name) return;
  std::size_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= static_cast<std::size_t>(t->shape[i]);
  if (self->ids_.size() <= static_cast<std::size_t>(layer)) self->ids_.resize(static_cast<std::size_t>(layer) + 1);
  auto& out = self->ids_[static_cast<std::size_t>(layer)];
  out.assign(n, -1);
  const seatrt_kernel_api* k = self->loaded_.kernels();
  seatrt_status* st = k->copy(self->loaded_.kernel_context(), nullptr, out.data(), SEATRT_DEVICE_CPU, t->data,
                              k->device_kind, n * sizeof(int32_t));
  if (!st && k->stream_sync) st = k->stream_sync(self->loaded_.kernel_context(), nullptr);
  if (st) {
    // Left as -1: never agrees with a reference id.
    self->loaded_.host()->status_free(st);
    out.assign(n, -1);
  }
}

}  // namespace seatrt::e2e
