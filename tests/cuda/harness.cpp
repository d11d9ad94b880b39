#include "harness.hpp"

#include <dlfcn.h>

#include <cmath>
#include <stdexcept>

namespace seatrt_test {
namespace {

struct Status {
  seatrt_status_code code;
  std::string message;
};

seatrt_status* status_create(seatrt_status_code code, const char* message) {
  return reinterpret_cast<seatrt_status*>(new Status{code, message ? message : ""});
}
void status_free(seatrt_status* s) { delete reinterpret_cast<Status*>(s); }
seatrt_status_code status_code(const seatrt_status* s) {
  return s ? reinterpret_cast<const Status*>(s)->code : SEATRT_OK;
}
const char* status_message(const seatrt_status* s) {
  return s ? reinterpret_cast<const Status*>(s)->message.c_str() : "";
}
void log(seatrt_log_level, const char*, const char*) {}

}  // namespace

const seatrt_host_api* test_host() {
  static const seatrt_host_api api = [] {
    seatrt_host_api a{};
    a.struct_size = sizeof(seatrt_host_api);
    a.abi_major = SEATRT_ABI_MAJOR;
    a.abi_minor = SEATRT_ABI_MINOR;
    a.status_create = status_create;
    a.status_free = status_free;
    a.status_code = status_code;
    a.status_message = status_message;
    a.log = log;
    return a;
  }();
  return &api;
}

void ok(seatrt_status* s, const std::string& what) {
  if (!s) return;
  const std::string msg = status_message(s);
  status_free(s);
  throw std::runtime_error(what + ": " + msg);
}

seatrt_status_code code_of(seatrt_status* s) {
  const seatrt_status_code c = status_code(s);
  status_free(s);
  return c;
}

Provider::Provider(const std::string& path, const char* what) {
  lib_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib_) throw std::runtime_error(std::string("cannot load the ") + what + " plugin " + path + ": " + dlerror());
  auto init = reinterpret_cast<seatrt_plugin_init_fn>(dlsym(lib_, SEATRT_PLUGIN_ENTRY_SYMBOL));
  if (!init) throw std::runtime_error(path + " exports no " SEATRT_PLUGIN_ENTRY_SYMBOL);
  const seatrt_plugin* p = init(test_host());
  if (!p || p->abi_major != SEATRT_ABI_MAJOR || !p->kernels) throw std::runtime_error(path + " is not a kernel provider");
  if (p->initialize) ok(p->initialize(test_host()), std::string(what) + " initialize");
  api_ = p->kernels;
}

Provider::~Provider() {
  if (ctx_) {
    for (void* a : allocations_) api_->free_memory(ctx_, a);
    if (stream_) api_->stream_destroy(ctx_, stream_);
    api_->destroy(ctx_);
  }
  // The library stays loaded: the process ends right after.
}

seatrt_kernel_probe Provider::probe() const {
  seatrt_kernel_probe p{};
  p.struct_size = sizeof p;
  ok(api_->probe(&p), "probe");
  return p;
}

void Provider::open() {
  ok(api_->create("", 0, &ctx_), "create");
  ok(api_->stream_create(ctx_, &stream_), "stream_create");
}

void Provider::sync() { ok(api_->stream_sync(ctx_, stream_), "stream_sync"); }

seatrt_status* Provider::run(const seatrt_op& op) { return api_->run(ctx_, stream_, &op); }

void Provider::run_nodes(const seatrt::sdk::GraphBuilder& g) {
  for (std::size_t i = 0; i < g.size(); ++i) ok(run(g.nodes()[i]), g.node_name(i));
}

Plan::Plan(Provider& p, seatrt::sdk::GraphBuilder& g, const std::string& name, int32_t launches) : p_(p) {
  if (!p.api().plan) throw std::runtime_error("the provider has no planner");
  const seatrt_op_graph graph = g.graph(name, launches);
  ok(p.api().plan(p.ctx(), &graph, &plan_), "plan " + name);
}

Plan::~Plan() {
  if (plan_) {
    // A destructor must not throw: a failed launch was reported by the test.
    code_of(p_.api().stream_sync(p_.ctx(), p_.stream()));
    p_.api().plan_destroy(p_.ctx(), plan_);
  }
}

void Plan::launch() { ok(p_.api().plan_launch(p_.ctx(), p_.stream(), plan_), "plan_launch"); }

std::string Plan::describe() const {
  std::string text;
  if (!p_.api().plan_describe) return text;
  const seatrt_line_fn add = [](void* user, const char* line) {
    *static_cast<std::string*>(user) += std::string(line) + "\n";
  };
  ok(p_.api().plan_describe(p_.ctx(), plan_, add, &text), "plan_describe");
  return text;
}

seatrt_tensor Provider::empty(int32_t dtype, std::vector<int64_t> shape) {
  seatrt_tensor t{};
  t.struct_size = sizeof t;
  t.dtype = dtype;
  t.ndim = static_cast<int32_t>(shape.size());
  int64_t stride = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    t.shape[i] = shape[static_cast<size_t>(i)];
    t.strides[i] = stride;
    stride *= t.shape[i];
  }
  t.device.kind = kind();
  const size_t bytes = static_cast<size_t>(count(shape)) * elem_bytes(dtype);
  ok(api_->alloc(ctx_, bytes ? bytes : 1, &t.data), "alloc");
  allocations_.push_back(t.data);
  return t;
}

seatrt_tensor Provider::upload(const void* bytes, size_t nbytes, int32_t dtype, std::vector<int64_t> shape) {
  seatrt_tensor t = empty(dtype, std::move(shape));
  if (nbytes) ok(api_->copy(ctx_, stream_, t.data, kind(), bytes, SEATRT_DEVICE_CPU, nbytes), "copy up");
  sync();
  return t;
}

std::vector<uint8_t> Provider::download(const seatrt_tensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
  std::vector<uint8_t> out(static_cast<size_t>(n) * elem_bytes(t.dtype));
  sync();
  if (!out.empty()) ok(api_->copy(ctx_, stream_, out.data(), SEATRT_DEVICE_CPU, t.data, kind(), out.size()), "copy down");
  sync();
  return out;
}

std::vector<float> Provider::download_f32(const seatrt_tensor& t) { return decode(download(t), t.dtype); }

std::mt19937& rng() {
  static std::mt19937 g(std::random_device{}());
  return g;
}

size_t elem_bytes(int32_t dtype) {
  switch (dtype) {
    case SEATRT_DTYPE_F32: case SEATRT_DTYPE_I32: return 4;
    case SEATRT_DTYPE_BF16: case SEATRT_DTYPE_F16: return 2;
    case SEATRT_DTYPE_I64: return 8;
    default: return 1;
  }
}

int64_t count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7FFFu + ((u >> 16) & 1u);  // round to nearest even (inputs are finite)
  return static_cast<uint16_t>(u >> 16);
}

float from_bf16(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::vector<uint8_t> random_values(int64_t n, int32_t dtype, float sd) {
  std::normal_distribution<float> d(0.0f, sd);
  std::vector<uint8_t> out(static_cast<size_t>(n) * elem_bytes(dtype));
  for (int64_t i = 0; i < n; ++i) {
    const float v = d(rng());
    if (dtype == SEATRT_DTYPE_BF16) {
      const uint16_t b = to_bf16(v);
      std::memcpy(out.data() + 2 * i, &b, 2);
    } else {
      std::memcpy(out.data() + 4 * i, &v, 4);
    }
  }
  return out;
}

std::vector<float> decode(const std::vector<uint8_t>& raw, int32_t dtype) {
  std::vector<float> out;
  if (dtype == SEATRT_DTYPE_BF16) {
    out.resize(raw.size() / 2);
    for (size_t i = 0; i < out.size(); ++i) {
      uint16_t b;
      std::memcpy(&b, raw.data() + 2 * i, 2);
      out[i] = from_bf16(b);
    }
  } else {
    out.resize(raw.size() / 4);
    std::memcpy(out.data(), raw.data(), out.size() * 4);
  }
  return out;
}

Pair both(const std::vector<uint8_t>& raw, int32_t dtype, std::vector<int64_t> shape) {
  return Pair{cuda().upload(raw.data(), raw.size(), dtype, shape), cpu().upload(raw.data(), raw.size(), dtype, shape)};
}
Pair both_empty(int32_t dtype, std::vector<int64_t> shape) {
  return Pair{cuda().empty(dtype, shape), cpu().empty(dtype, shape)};
}
seatrt_elementwise_args ew(int op, const seatrt_tensor* a, const seatrt_tensor* b, float alpha, seatrt_tensor* out) {
  seatrt_elementwise_args e{};
  e.struct_size = sizeof e;
  e.op = op;
  e.a = a;
  e.b = b;
  e.alpha = alpha;
  e.out = out;
  return e;
}

Pair both_random(int32_t dtype, std::vector<int64_t> shape, float sd) {
  return both(random_values(count(shape), dtype, sd), dtype, shape);
}

double rel_error(const std::vector<float>& a, const std::vector<float>& b, double floor) {
  if (a.size() != b.size()) return INFINITY;
  double diff = 0.0, scale = floor;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) return INFINITY;
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
  }
  return diff / scale;
}

}  // namespace seatrt_test
