// Linear (NVFP4 group 16 and dense), router top-k and MoE at Gemma-4 26B-A4B
// shapes: hidden 2816, dense MLP 2112, experts 704 wide, 128 router logits.
#include <algorithm>

#include "cases.hpp"

namespace seatrt::conformance {
namespace {

using test::Tensor;

Case nvfp4_linear(int64_t m, int64_t n, int64_t k, int32_t act_dtype, const char* what) {
  const std::string label = std::string(what) + " NVFP4 [" + std::to_string(n) + ", " + std::to_string(k) + "] M=" +
                            std::to_string(m) + (act_dtype == SEATRT_DTYPE_F32 ? " F32" : " BF16");
  return {"linear", label, act_dtype == SEATRT_DTYPE_F32 ? kBoundF32 : kBoundBF16, [=](Provider& p, std::mt19937& rng) {
            const test::Nvfp4Weight w = gemma_nvfp4(rng, n, k);
            Tensor x = random_input(rng, act_dtype, {m, k});
            Tensor out(act_dtype, {m, n});
            auto dw = upload(p, w);
            DeviceTensor dx(p, x), dout(p, out);
            seatrt_linear_args args{sizeof args, dx.get(), &dw->get(), dout.get()};
            call_op(p, &seatrt_kernel_api::linear, args, "linear");
            dout.download(out);
            return Outputs{{}, out.values()};
          }};
}

}  // namespace

void add_matrix_cases(std::vector<Case>& cases) {
  cases.push_back(nvfp4_linear(1, 2112, 2816, SEATRT_DTYPE_BF16, "mlp.gate decode"));
  cases.push_back(nvfp4_linear(5, 4096, 2816, SEATRT_DTYPE_BF16, "q_proj sliding"));
  cases.push_back(nvfp4_linear(3, 2816, 2112, SEATRT_DTYPE_BF16, "mlp.down"));
  cases.push_back(nvfp4_linear(2, 704, 2816, SEATRT_DTYPE_F32, "expert.gate"));
  cases.push_back(nvfp4_linear(33, 1024, 2816, SEATRT_DTYPE_BF16, "k_proj full, prefill"));
  cases.push_back({"linear", "router.proj DENSE BF16 [128, 2816] M=4 F32", kBoundF32, [](Provider& p, std::mt19937& rng) {
                     const test::DenseWeight w = test::random_dense(rng, SEATRT_DTYPE_BF16, 128, 2816, 0.05);
                     Tensor x = random_input(rng, SEATRT_DTYPE_F32, {4, 2816});
                     Tensor out(SEATRT_DTYPE_F32, {4, 128});
                     auto dw = upload(p, w);
                     DeviceTensor dx(p, x), dout(p, out);
                     seatrt_linear_args args{sizeof args, dx.get(), &dw->get(), dout.get()};
                     call_op(p, &seatrt_kernel_api::linear, args, "linear");
                     dout.download(out);
                     return Outputs{{}, out.values()};
                   }});

  cases.push_back({"router_topk", "F32 [9, 128] top-8, renormalise, per-expert scale", kBoundF32, [](Provider& p, std::mt19937& rng) {
                     Tensor logits = random_input(rng, SEATRT_DTYPE_F32, {9, 128}, 4.0);
                     Tensor scale = test::random_tensor(rng, SEATRT_DTYPE_F32, {128}, 0.5, 2.0);
                     Tensor ids(SEATRT_DTYPE_I32, {9, 8});
                     Tensor weights(SEATRT_DTYPE_F32, {9, 8});
                     DeviceTensor dl(p, logits), ds(p, scale), di(p, ids), dw(p, weights);
                     seatrt_router_topk_args args{sizeof args, dl.get(), 8, 1, ds.get(), di.get(), dw.get()};
                     call_op(p, &seatrt_kernel_api::router_topk, args, "router_topk");
                     di.download(ids);
                     dw.download(weights);
                     Outputs o;
                     for (int64_t i = 0; i < ids.numel(); ++i) o.exact.push_back(ids.as<int32_t>()[i]);
                     o.approx = weights.values();
                     return o;
                   }});

  cases.push_back({"moe", "16 NVFP4 experts [704, 2816], top-8, T=3, gelu_tanh BF16", kBoundBF16, [](Provider& p, std::mt19937& rng) {
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
                     call_op(p, &seatrt_kernel_api::moe, args, "moe");
                     dout.download(out);
                     return Outputs{{}, out.values()};
                   }});
}

}  // namespace seatrt::conformance
