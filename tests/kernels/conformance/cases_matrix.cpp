// Linear (NVFP4 group 16 and dense, with and without bias), router top-k
// and MoE at Gemma-4 26B-A4B shapes: hidden 2816, dense MLP 2112, experts
// 704 wide, 128 router logits; and the router's other scorings (sigmoid,
// expert groups, correction bias, routed scale) at a DeepSeek-like 64.
#include <algorithm>

#include "cases.hpp"

namespace seatrt::conformance {
namespace {

using test::Tensor;

Case nvfp4_linear(int64_t m, int64_t n, int64_t k, int32_t act_dtype, const char* what) {
  const std::string label = std::string(what) + " NVFP4 [" + std::to_string(n) + ", " + std::to_string(k) + "] M=" +
                            std::to_string(m) + (act_dtype == SEATRT_DTYPE_F32 ? " F32" : " BF16");
  return {SEATRT_OP_LINEAR, label, act_dtype == SEATRT_DTYPE_F32 ? kBoundF32 : kBoundBF16, [=](Provider& p, std::mt19937& rng) {
            const test::Nvfp4Weight w = gemma_nvfp4(rng, n, k);
            Tensor x = random_input(rng, act_dtype, {m, k});
            Tensor out(act_dtype, {m, n});
            auto dw = upload(p, w);
            DeviceTensor dx(p, x), dout(p, out);
            seatrt_linear_args args{sizeof args, dx.get(), &dw->get(), dout.get(), nullptr};
            run_op<SEATRT_OP_LINEAR>(p, args);
            dout.download(out);
            return Outputs{{}, out.values()};
          }};
}

// A linear with a bias [N] of the activation dtype.
Case biased_linear(int64_t m, int64_t n, int64_t k, bool nvfp4, int32_t act_dtype) {
  const std::string label = std::string(nvfp4 ? "NVFP4 [" : "DENSE BF16 [") + std::to_string(n) + ", " + std::to_string(k) +
                            "] + bias M=" + std::to_string(m) + (act_dtype == SEATRT_DTYPE_F32 ? " F32" : " BF16");
  return {SEATRT_OP_LINEAR, label, act_dtype == SEATRT_DTYPE_F32 ? kBoundF32 : kBoundBF16, [=](Provider& p, std::mt19937& rng) {
            std::unique_ptr<DeviceWeight> dw =
                nvfp4 ? upload(p, gemma_nvfp4(rng, n, k)) : upload(p, test::random_dense(rng, SEATRT_DTYPE_BF16, n, k, 0.05));
            Tensor x = random_input(rng, act_dtype, {m, k});
            Tensor bias = random_input(rng, act_dtype, {n}, 0.5);
            Tensor out(act_dtype, {m, n});
            DeviceTensor dx(p, x), db(p, bias), dout(p, out);
            seatrt_linear_args args{sizeof args, dx.get(), &dw->get(), dout.get(), db.get()};
            run_op<SEATRT_OP_LINEAR>(p, args);
            dout.download(out);
            return Outputs{{}, out.values()};
          }};
}

struct Routing {
  const char* what;
  int32_t experts, top_k, renormalize, scoring, groups, top_groups;
  float routed_scale;
  bool correction, per_expert_scale;
};

Case router_case(const Routing& r) {
  return {SEATRT_OP_ROUTER_TOPK, r.what, kBoundF32, [=](Provider& p, std::mt19937& rng) {
            const int64_t t = 7, e = r.experts;
            Tensor logits = random_input(rng, SEATRT_DTYPE_F32, {t, e}, 4.0);
            Tensor scale = test::random_tensor(rng, SEATRT_DTYPE_F32, {e}, 0.5, 2.0);
            Tensor bias = test::random_tensor(rng, SEATRT_DTYPE_F32, {e}, -0.3, 0.3);
            Tensor ids(SEATRT_DTYPE_I32, {t, r.top_k});
            Tensor weights(SEATRT_DTYPE_F32, {t, r.top_k});
            DeviceTensor dl(p, logits), ds(p, scale), db(p, bias), di(p, ids), dw(p, weights);
            seatrt_router_topk_args args{};
            args.logits = dl.get();
            args.top_k = r.top_k;
            args.renormalize = r.renormalize;
            args.per_expert_scale = r.per_expert_scale ? ds.get() : nullptr;
            args.ids = di.get();
            args.weights = dw.get();
            args.scoring = r.scoring;
            args.num_groups = r.groups;
            args.top_groups = r.top_groups;
            args.routed_scale = r.routed_scale;
            args.correction_bias = r.correction ? db.get() : nullptr;
            run_op<SEATRT_OP_ROUTER_TOPK>(p, args);
            di.download(ids);
            dw.download(weights);
            Outputs o;
            for (int64_t i = 0; i < ids.numel(); ++i) o.exact.push_back(ids.as<int32_t>()[i]);
            o.approx = weights.values();
            return o;
          }};
}

}  // namespace

void add_matrix_cases(std::vector<Case>& cases) {
  cases.push_back(nvfp4_linear(1, 2112, 2816, SEATRT_DTYPE_BF16, "mlp.gate decode"));
  cases.push_back(nvfp4_linear(5, 4096, 2816, SEATRT_DTYPE_BF16, "q_proj sliding"));
  cases.push_back(nvfp4_linear(3, 2816, 2112, SEATRT_DTYPE_BF16, "mlp.down"));
  cases.push_back(nvfp4_linear(2, 704, 2816, SEATRT_DTYPE_F32, "expert.gate"));
  cases.push_back(nvfp4_linear(33, 1024, 2816, SEATRT_DTYPE_BF16, "k_proj full, prefill"));
  cases.push_back({SEATRT_OP_LINEAR, "router.proj DENSE BF16 [128, 2816] M=4 F32", kBoundF32, [](Provider& p, std::mt19937& rng) {
                     const test::DenseWeight w = test::random_dense(rng, SEATRT_DTYPE_BF16, 128, 2816, 0.05);
                     Tensor x = random_input(rng, SEATRT_DTYPE_F32, {4, 2816});
                     Tensor out(SEATRT_DTYPE_F32, {4, 128});
                     auto dw = upload(p, w);
                     DeviceTensor dx(p, x), dout(p, out);
                     seatrt_linear_args args{sizeof args, dx.get(), &dw->get(), dout.get(), nullptr};
                     run_op<SEATRT_OP_LINEAR>(p, args);
                     dout.download(out);
                     return Outputs{{}, out.values()};
                   }});

  cases.push_back(biased_linear(3, 96, 256, false, SEATRT_DTYPE_F32));
  cases.push_back(biased_linear(5, 512, 2816, true, SEATRT_DTYPE_BF16));
  cases.push_back(biased_linear(70, 128, 512, false, SEATRT_DTYPE_BF16));

  cases.push_back(router_case({"F32 [7, 64] sigmoid, top-6, renormalise, routed scale 2.5", 64, 6, 1, SEATRT_ROUTER_SIGMOID, 0,
                               0, 2.5f, false, false}));
  cases.push_back(router_case({"F32 [7, 64] sigmoid+bias, 8 groups keep 3, top-8, renorm, scale 2.5", 64,
                               8, 1, SEATRT_ROUTER_SIGMOID, 8, 3, 2.5f, true, false}));
  cases.push_back(router_case({"F32 [7, 64] softmax, 4 groups keep 2, top-4, no renormalise", 64, 4, 0,
                               SEATRT_ROUTER_SOFTMAX, 4, 2, 0.0f, false, false}));
  cases.push_back(router_case({"F32 [7, 32] sigmoid + correction bias, top-2, per-expert scale", 32, 2, 0,
                               SEATRT_ROUTER_SIGMOID, 0, 0, 0.0f, true, true}));
  cases.push_back({SEATRT_OP_ROUTER_TOPK, "F32 [9, 128] top-8, renormalise, per-expert scale", kBoundF32, [](Provider& p, std::mt19937& rng) {
                     Tensor logits = random_input(rng, SEATRT_DTYPE_F32, {9, 128}, 4.0);
                     Tensor scale = test::random_tensor(rng, SEATRT_DTYPE_F32, {128}, 0.5, 2.0);
                     Tensor ids(SEATRT_DTYPE_I32, {9, 8});
                     Tensor weights(SEATRT_DTYPE_F32, {9, 8});
                     DeviceTensor dl(p, logits), ds(p, scale), di(p, ids), dw(p, weights);
                     seatrt_router_topk_args args{sizeof args, dl.get(), 8, 1, ds.get(), di.get(), dw.get(), SEATRT_ROUTER_SOFTMAX, 0, 0, 0.0f, nullptr};
                     run_op<SEATRT_OP_ROUTER_TOPK>(p, args);
                     di.download(ids);
                     dw.download(weights);
                     Outputs o;
                     for (int64_t i = 0; i < ids.numel(); ++i) o.exact.push_back(ids.as<int32_t>()[i]);
                     o.approx = weights.values();
                     return o;
                   }});

  cases.push_back({SEATRT_OP_MOE, "16 NVFP4 experts [704, 2816], top-8, T=3, gelu_tanh BF16", kBoundBF16, [](Provider& p, std::mt19937& rng) {
                     const int64_t experts = 16, hidden = 2816, inter = 704, tokens = 3, k = 8;
                     std::vector<test::Nvfp4Weight> host;
                     for (int64_t e = 0; e < experts; ++e) {
                       host.push_back(gemma_nvfp4(rng, inter, hidden));
                       host.push_back(gemma_nvfp4(rng, inter, hidden));
                       host.push_back(gemma_nvfp4(rng, hidden, inter));
                     }
                     Tensor x = random_input(rng, SEATRT_DTYPE_BF16, {tokens, hidden}, 2.0);
                     std::vector<int64_t> ids;
                     for (int64_t t = 0; t < tokens; ++t) {
                       std::vector<int64_t> all(experts);
                       for (int64_t e = 0; e < experts; ++e) all[static_cast<size_t>(e)] = e;
                       std::shuffle(all.begin(), all.end(), rng);
                       ids.insert(ids.end(), all.begin(), all.begin() + k);
                     }
                     Tensor id_t = int_input(SEATRT_DTYPE_I32, {tokens, k}, ids);
                     Tensor weights = test::random_tensor(rng, SEATRT_DTYPE_F32, {tokens, k}, 0.05, 0.3);
                     Tensor out(SEATRT_DTYPE_BF16, {tokens, hidden});
                     std::vector<std::unique_ptr<DeviceWeight>> dev;
                     for (const auto& w : host) dev.push_back(upload(p, w));
                     std::vector<seatrt_linear_weight> gate, up, down;
                     for (int64_t e = 0; e < experts; ++e) {
                       gate.push_back(dev[static_cast<size_t>(3 * e)]->get());
                       up.push_back(dev[static_cast<size_t>(3 * e + 1)]->get());
                       down.push_back(dev[static_cast<size_t>(3 * e + 2)]->get());
                     }
                     DeviceTensor dx(p, x), di(p, id_t), dwt(p, weights), dout(p, out);
                     seatrt_moe_args args{sizeof args, SEATRT_ACT_GELU_TANH, static_cast<int32_t>(experts), dx.get(), di.get(),
                                          dwt.get(), gate.data(), up.data(), down.data(), dout.get()};
                     run_op<SEATRT_OP_MOE>(p, args);
                     dout.download(out);
                     return Outputs{{}, out.values()};
                   }});
}

}  // namespace seatrt::conformance
