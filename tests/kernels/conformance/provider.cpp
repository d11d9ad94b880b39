#include "provider.hpp"

#include <dlfcn.h>

#include "dtype.hpp"
#include "fake_host.hpp"

namespace seatrt::conformance {

DeviceTensor::DeviceTensor(Provider& p, const test::Tensor& host) : provider_(&p) {
  desc_ = host.desc();
  bytes_ = static_cast<size_t>(host.numel()) * cpu::dtype_size(host.dtype());
  p.check(p.api().alloc(p.ctx(), bytes_ == 0 ? 1 : bytes_, &ptr_), "alloc");
  p.check(p.api().copy(p.ctx(), p.stream(), ptr_, p.device().kind, host.desc().data, SEATRT_DEVICE_CPU, bytes_),
          "copy to device");
  p.sync();
  desc_.data = ptr_;
  desc_.device = p.device();
}

DeviceTensor::~DeviceTensor() {
  if (provider_ && ptr_) provider_->api().free_memory(provider_->ctx(), ptr_);
}

DeviceTensor::DeviceTensor(DeviceTensor&& other) noexcept { *this = std::move(other); }

DeviceTensor& DeviceTensor::operator=(DeviceTensor&& other) noexcept {
  if (this != &other) {
    if (provider_ && ptr_) provider_->api().free_memory(provider_->ctx(), ptr_);
    provider_ = other.provider_;
    ptr_ = other.ptr_;
    bytes_ = other.bytes_;
    desc_ = other.desc_;
    other.provider_ = nullptr;
    other.ptr_ = nullptr;
  }
  return *this;
}

void DeviceTensor::download(test::Tensor& host) {
  provider_->sync();
  provider_->check(provider_->api().copy(provider_->ctx(), provider_->stream(), host.desc().data, SEATRT_DEVICE_CPU,
                                         ptr_, provider_->device().kind, bytes_),
                   "copy to host");
  provider_->sync();
}

void DeviceTensor::upload(const test::Tensor& host) {
  provider_->check(provider_->api().copy(provider_->ctx(), provider_->stream(), ptr_, provider_->device().kind,
                                         host.desc().data, SEATRT_DEVICE_CPU, bytes_),
                   "copy to device");
  provider_->sync();
}

Provider::Provider(const std::string& path, const std::string& options, int32_t device_index)
    : device_index_(device_index) {
  library_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library_) throw std::runtime_error("cannot load " + path + ": " + dlerror());
  auto init = reinterpret_cast<seatrt_plugin_init_fn>(dlsym(library_, SEATRT_PLUGIN_ENTRY_SYMBOL));
  if (!init) throw std::runtime_error(path + " has no " SEATRT_PLUGIN_ENTRY_SYMBOL);
  const seatrt_plugin* plugin = init(test::fake_host());
  if (!plugin) throw std::runtime_error(path + ": the plugin cannot describe itself");
  if (plugin->abi_major != SEATRT_ABI_MAJOR) {
    throw std::runtime_error(path + " is built for ABI " + std::to_string(plugin->abi_major) + ", this tool for " +
                             std::to_string(SEATRT_ABI_MAJOR));
  }
  if (!(plugin->kinds & SEATRT_KIND_KERNELS) || !plugin->kernels) {
    throw std::runtime_error(path + " is not a kernel provider");
  }
  if (plugin->initialize) check(plugin->initialize(test::fake_host()), "initialize");
  api_ = plugin->kernels;
  if (!SEATRT_HAS_FIELD(api_, seatrt_kernel_api, run) || !api_->supports || !api_->run)
    throw std::runtime_error(path + ": its kernel table has no supports/run slots");
  label_ = std::string(plugin->name) + " (" + path + ")";
  check(api_->create(options.c_str(), device_index, &ctx_), "create");
  if (api_->stream_create) check(api_->stream_create(ctx_, &stream_), "stream_create");
}

Provider::~Provider() {
  if (api_ && ctx_) {
    if (stream_ && api_->stream_destroy) api_->stream_destroy(ctx_, stream_);
    api_->destroy(ctx_);
  }
  // The library stays loaded: the plugin's finalize and static destructors
  // are not the tool's concern and must not race the exit path.
}

void Provider::check(seatrt_status* status, const std::string& what) const {
  std::string message;
  const seatrt_status_code code = test::take_status(status, &message);
  if (code != SEATRT_OK) throw OpError(what + " failed (code " + std::to_string(code) + "): " + message);
}

bool Provider::reads_layout(int32_t format, int32_t layout) const {
  int32_t layouts[16];
  int32_t count = 0;
  if (!api_->weight_layouts) return false;
  check(api_->weight_layouts(ctx_, format, layouts, 16, &count), "weight_layouts");
  for (int32_t i = 0; i < count && i < 16; ++i) {
    if (layouts[i] == layout) return true;
  }
  return false;
}

void run_op(Provider& p, const seatrt_op& op) {
  const std::string name = sdk::op_name(op.kind);
  if (!p.supports(op)) throw Skip("not supported: " + name + " (supports() answered 0)");
  p.check(p.api().run(p.ctx(), p.stream(), &op), name);
  p.sync();
}

}  // namespace seatrt::conformance
