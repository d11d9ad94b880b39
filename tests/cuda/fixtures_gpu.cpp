// NVFP4 weight and KV-cache fixtures of the CUDA-vs-CPU tests (see
// fixtures_gpu.hpp).
#include "fixtures_gpu.hpp"

#include <random>
#include <string>

#include "seatrt_cuda/nvfp4_sm90_tiled.hpp"

namespace seatrt_test {

HostNvfp4 random_nvfp4(int64_t out, int64_t in) {
  HostNvfp4 w{out, in, {}, {}, 0.0f};
  std::uniform_int_distribution<int> byte(0, 255), exp(4, 11), man(0, 7);
  w.data.resize(static_cast<size_t>(out * in / 2));
  for (auto& b : w.data) b = static_cast<uint8_t>(byte(rng()));
  w.scales.resize(static_cast<size_t>(out * in / 16));
  for (auto& s : w.scales) s = static_cast<uint8_t>((exp(rng()) << 3) | man(rng()));
  w.global = std::uniform_real_distribution<float>(100.0f, 3000.0f)(rng());
  return w;
}

seatrt_linear_weight nvfp4_weight(Provider& p, const HostNvfp4& h, bool tiled) {
  seatrt_linear_weight w{};
  w.struct_size = sizeof w;
  w.format = SEATRT_WFMT_NVFP4;
  w.group_size = 16;
  w.out_features = h.out;
  w.in_features = h.in;
  w.data = p.upload(h.data.data(), h.data.size(), SEATRT_DTYPE_E2M1X2, {h.out, h.in / 2});
  if (tiled) {
    const auto t = seatrt_cuda::repack_nvfp4_sm90_tiled(h.scales.data(), h.scales.size(), h.global);
    w.layout = SEATRT_LAYOUT_NVFP4_SM90_TILED;
    w.scales = p.upload(t.bf16_scales.data(), t.bf16_scales.size() * 2, SEATRT_DTYPE_BF16, {h.out, h.in / 16});
    w.global_scale = t.global_scale;
  } else {
    w.layout = SEATRT_LAYOUT_NVFP4_CT_ROW_MAJOR;
    w.scales = p.upload(h.scales.data(), h.scales.size(), SEATRT_DTYPE_F8_E4M3, {h.out, h.in / 16});
    w.global_scale = h.global;
  }
  return w;
}

seatrt_linear_weight dense_bf16_weight(Provider& p, const std::vector<uint8_t>& raw, int64_t out, int64_t in) {
  seatrt_linear_weight w{};
  w.struct_size = sizeof w;
  w.format = SEATRT_WFMT_DENSE;
  w.layout = SEATRT_LAYOUT_DENSE_ROW_MAJOR;
  w.out_features = out;
  w.in_features = in;
  w.data = p.upload(raw.data(), raw.size(), SEATRT_DTYPE_BF16, {out, in});
  w.global_scale = 1.0f;
  return w;
}

Nvfp4Experts random_nvfp4_experts(int32_t E, int64_t hidden, int64_t inter) {
  Nvfp4Experts x;
  for (int32_t i = 0; i < E; ++i) {
    const HostNvfp4 g = random_nvfp4(inter, hidden), u = random_nvfp4(inter, hidden), d = random_nvfp4(hidden, inter);
    x.gc.push_back(nvfp4_weight(cuda(), g, false));
    x.uc.push_back(nvfp4_weight(cuda(), u, false));
    x.dc.push_back(nvfp4_weight(cuda(), d, false));
    x.gp.push_back(nvfp4_weight(cpu(), g, false));
    x.up.push_back(nvfp4_weight(cpu(), u, false));
    x.dp.push_back(nvfp4_weight(cpu(), d, false));
  }
  return x;
}

namespace {

seatrt_kv_layer kv_layer(const seatrt_tensor& k, const seatrt_tensor* v, int32_t block_size, float k_scale, float v_scale) {
  seatrt_kv_layer l{};
  l.struct_size = sizeof l;
  l.block_size = block_size;
  l.k_cache = k;
  if (v) l.v_cache = *v;
  l.k_scale = k_scale;
  l.v_scale = v_scale;
  return l;
}

}  // namespace

PagedKv store_random_kv(int32_t cache_dtype, int64_t num_blocks, int32_t block_size, int64_t kv_heads, int64_t dim,
                        bool one_tensor, const std::vector<int64_t>& slots, float k_scale, float v_scale) {
  const int64_t n = static_cast<int64_t>(slots.size());
  PagedKv kv;
  kv.k_cache = both_empty(cache_dtype, {num_blocks, block_size, kv_heads, dim});
  kv.v_cache = both_empty(cache_dtype, {num_blocks, block_size, kv_heads, dim});
  Pair k = both_random(SEATRT_DTYPE_BF16, {n, kv_heads, dim}), v = both_random(SEATRT_DTYPE_BF16, {n, kv_heads, dim});
  const auto* slot_bytes = reinterpret_cast<const uint8_t*>(slots.data());
  Pair sl = both(std::vector<uint8_t>(slot_bytes, slot_bytes + slots.size() * sizeof(int64_t)), SEATRT_DTYPE_I64, {n});
  kv.cuda = kv_layer(kv.k_cache.cuda, one_tensor ? nullptr : &kv.v_cache.cuda, block_size, k_scale, v_scale);
  kv.cpu = kv_layer(kv.k_cache.cpu, one_tensor ? nullptr : &kv.v_cache.cpu, block_size, k_scale, v_scale);
  seatrt_kv_store_args sc{sizeof(seatrt_kv_store_args), &k.cuda, one_tensor ? nullptr : &v.cuda, &sl.cuda, &kv.cuda};
  seatrt_kv_store_args sp{sizeof(seatrt_kv_store_args), &k.cpu, one_tensor ? nullptr : &v.cpu, &sl.cpu, &kv.cpu};
  ok(cuda().run<SEATRT_OP_KV_STORE>(sc), "cuda kv_store");
  ok(cpu().run<SEATRT_OP_KV_STORE>(sp), "cpu kv_store");
  return kv;
}

OptionContext::OptionContext(const char* options) {
  ok(cuda().api().create(options, 0, &ctx_), std::string("create with ") + options);
  ok(cuda().api().stream_create(ctx_, &stream_), "stream_create");
}

OptionContext::~OptionContext() {
  cuda().api().stream_destroy(ctx_, stream_);
  cuda().api().destroy(ctx_);
}

void OptionContext::run_op(const seatrt_op& op, const char* what) {
  cuda().sync();
  ok(cuda().api().run(ctx_, stream_, &op), what);
  ok(cuda().api().stream_sync(ctx_, stream_), what);
}

std::string OptionContext::run_graph(seatrt::sdk::GraphBuilder& g, const char* what) {
  const auto& api = cuda().api();
  const seatrt_op_graph graph = g.graph(what, 1);
  seatrt_plan* plan = nullptr;
  ok(api.plan(ctx_, &graph, &plan), what);
  std::string lines;
  if (api.plan_describe)
    code_of(api.plan_describe(
        ctx_, plan, [](void* user, const char* line) { *static_cast<std::string*>(user) += std::string(line) + "\n"; },
        &lines));
  cuda().sync();
  seatrt_status* launched = api.plan_launch(ctx_, stream_, plan);
  seatrt_status* synced = api.stream_sync(ctx_, stream_);
  api.plan_destroy(ctx_, plan);
  ok(launched, what);
  ok(synced, what);
  return lines;
}

}  // namespace seatrt_test
