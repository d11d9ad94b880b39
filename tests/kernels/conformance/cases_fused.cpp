// The fused operations of ABI 1.1 (add_rms_norm, rms_norm_rope), 1.2
// (linear_multi, linear_glu, rms_norm_multi) and 1.4 (add_rms_norm_pair;
// qkv_norm_rope_store is in cases_qkv.cpp) at the Gemma-4 26B-A4B shapes
// and in the ways the Gemma-4 plugin calls them: hidden 2816, q/k/v of the
// sliding (16/8/8 heads x 256) and full (16/2 heads x 512, no v) layers, the
// dense MLP 2112 wide, decode rows (1, 5, 32) and one prefill size (300).
// They are optional slots: a provider without one (NULL, or a table of an
// older minor) gets SKIP ("not provided") before any input is made.
#include <cmath>
#include <cstdio>

#include "cases.hpp"

namespace seatrt::conformance {
namespace {

using test::Tensor;

constexpr int64_t kHidden = 2816, kInter = 2112;
constexpr float kEps = 1e-6f;

double bound_for(int32_t dtype) { return dtype == SEATRT_DTYPE_F32 ? kBoundF32 : kBoundBF16; }
std::string dt(int32_t dtype) { return dtype == SEATRT_DTYPE_F32 ? "F32" : "BF16"; }
// "[5, 16, 256] BF16"
std::string shape(std::vector<int64_t> dims, int32_t dtype) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "] " + dt(dtype);
}

// NVFP4 (what the seat loads) or a dense BF16 matrix of about the same
// magnitude (|w| <= 0.1), on the provider's device.
std::unique_ptr<DeviceWeight> make_weight(Provider& p, std::mt19937& rng, bool nvfp4, int64_t out, int64_t in) {
  if (nvfp4) return upload(p, gemma_nvfp4(rng, out, in));
  return upload(p, test::random_dense(rng, SEATRT_DTYPE_BF16, out, in, 0.1));
}

// Outputs of one dtype on the device, downloaded as the parts of Outputs.
struct DeviceOuts {
  std::vector<Tensor> host;
  std::vector<DeviceTensor> dev;
  DeviceOuts(Provider& p, int32_t dtype, const std::vector<std::vector<int64_t>>& shapes) {
    host.reserve(shapes.size());
    dev.reserve(shapes.size());
    for (const auto& s : shapes) {
      host.emplace_back(dtype, s);
      dev.emplace_back(p, host.back());
    }
  }
  Outputs download() {
    Outputs o;
    for (size_t i = 0; i < dev.size(); ++i) {
      dev[i].download(host[i]);
      o.add_part(host[i].values());
    }
    return o;
  }
};

// q/k(/v) projections of one x: `widths` are the weights' out_features.
Case linear_multi_case(const char* what, std::vector<int64_t> widths, bool nvfp4, int64_t t, int32_t dtype) {
  std::string label = std::string(what) + (nvfp4 ? " NVFP4 [" : " DENSE BF16 [");
  for (size_t i = 0; i < widths.size(); ++i) label += (i ? "|" : "") + std::to_string(widths[i]);
  label += ", 2816] M=" + std::to_string(t) + " " + dt(dtype);
  return {"linear_multi", label, bound_for(dtype), [=](Provider& p, std::mt19937& rng) {
            need_op(p, &seatrt_kernel_api::linear_multi, "linear_multi");
            std::vector<std::unique_ptr<DeviceWeight>> w;
            std::vector<std::vector<int64_t>> shapes;
            for (const int64_t n : widths) {
              w.push_back(make_weight(p, rng, nvfp4, n, kHidden));
              shapes.push_back({t, n});
            }
            Tensor x = random_input(rng, dtype, {t, kHidden});
            DeviceTensor dx(p, x);
            DeviceOuts outs(p, dtype, shapes);
            seatrt_linear_multi_args args{};
            args.struct_size = sizeof args;
            args.count = static_cast<int32_t>(widths.size());
            args.x = dx.get();
            for (size_t i = 0; i < widths.size(); ++i) {
              args.weights[i] = &w[i]->get();
              args.outs[i] = outs.dev[i].get();
            }
            call_op(p, &seatrt_kernel_api::linear_multi, args, "linear_multi");
            return outs.download();
          }};
}

// The dense MLP's gate/up with GELU-tanh (the Gemma-4 activation).
Case linear_glu_case(bool nvfp4, int64_t t, int32_t dtype) {
  const std::string label = std::string("mlp gate/up ") + (nvfp4 ? "NVFP4" : "DENSE BF16") +
                            " [2112, 2816] gelu_tanh M=" + std::to_string(t) + " " + dt(dtype);
  return {"linear_glu", label, bound_for(dtype), [=](Provider& p, std::mt19937& rng) {
            need_op(p, &seatrt_kernel_api::linear_glu, "linear_glu");
            auto gate = make_weight(p, rng, nvfp4, kInter, kHidden);
            auto up = make_weight(p, rng, nvfp4, kInter, kHidden);
            Tensor x = random_input(rng, dtype, {t, kHidden});
            DeviceTensor dx(p, x);
            DeviceOuts out(p, dtype, {{t, kInter}});
            seatrt_linear_glu_args args{sizeof args, SEATRT_ACT_GELU_TANH, dx.get(), &gate->get(), &up->get(),
                                        out.dev[0].get()};
            call_op(p, &seatrt_kernel_api::linear_glu, args, "linear_glu");
            return out.download();
          }};
}

// One x normed with `count` gains: a small F32 one (the router's folded
// H^-1/2 scale), a BF16 one and NULL (no gain), the first `count` of
// {BF16, NULL} (2) or {F32 small, BF16, NULL} (3).
Case rms_norm_multi_case(int64_t t, int32_t dtype, int32_t count) {
  const std::string label =
      shape({t, kHidden}, dtype) + (count == 2 ? ", gains: BF16, none" : ", gains: F32 small, BF16, none");
  return {"rms_norm_multi", label, bound_for(dtype), [=](Provider& p, std::mt19937& rng) {
            need_op(p, &seatrt_kernel_api::rms_norm_multi, "rms_norm_multi");
            Tensor x = random_input(rng, dtype, {t, kHidden}, 4.0);
            Tensor small = test::random_tensor(rng, SEATRT_DTYPE_F32, {kHidden}, 0.005, 0.05);
            Tensor gain = random_input(rng, SEATRT_DTYPE_BF16, {kHidden}, 2.0);
            DeviceTensor dx(p, x), dsmall(p, small), dgain(p, gain);
            DeviceOuts outs(p, dtype, std::vector<std::vector<int64_t>>(static_cast<size_t>(count), {t, kHidden}));
            const seatrt_tensor* gains2[] = {dgain.get(), nullptr};
            const seatrt_tensor* gains3[] = {dsmall.get(), dgain.get(), nullptr};
            seatrt_rms_norm_multi_args args{};
            args.struct_size = sizeof args;
            args.count = count;
            args.x = dx.get();
            args.eps = kEps;
            for (int32_t i = 0; i < count; ++i) {
              args.weights[i] = count == 2 ? gains2[i] : gains3[i];
              args.outs[i] = outs.dev[static_cast<size_t>(i)].get();
            }
            call_op(p, &seatrt_kernel_api::rms_norm_multi, args, "rms_norm_multi");
            return outs.download();
          }};
}

// residual <- (residual + rmsnorm(x) x_gain) * scale, then optionally out =
// rmsnorm(residual) out_gain; both residual and out are compared.
Case add_rms_norm_case(int64_t t, int32_t dtype, bool gains, bool with_out, float scale) {
  char scale_text[16];
  std::snprintf(scale_text, sizeof scale_text, "%g", static_cast<double>(scale));
  const std::string label = shape({t, kHidden}, dtype) + (gains ? ", gains" : ", no gains") +
                            (with_out ? ", out" : ", no out") + ", scale " + scale_text;
  return {"add_rms_norm", label, bound_for(dtype), [=](Provider& p, std::mt19937& rng) {
            need_op(p, &seatrt_kernel_api::add_rms_norm, "add_rms_norm");
            Tensor x = random_input(rng, dtype, {t, kHidden}, 2.0);
            Tensor residual = random_input(rng, dtype, {t, kHidden}, 8.0);
            Tensor x_gain = random_input(rng, SEATRT_DTYPE_BF16, {kHidden}, 2.0);
            Tensor out_gain = random_input(rng, SEATRT_DTYPE_F32, {kHidden}, 2.0);
            Tensor out(dtype, {t, kHidden});
            DeviceTensor dx(p, x), dres(p, residual), dxg(p, x_gain), dog(p, out_gain), dout(p, out);
            seatrt_add_rms_norm_args args{sizeof args, dx.get(), gains ? dxg.get() : nullptr, dres.get(), kEps, scale,
                                          gains ? dog.get() : nullptr, with_out ? dout.get() : nullptr};
            call_op(p, &seatrt_kernel_api::add_rms_norm, args, "add_rms_norm");
            Outputs o;
            dres.download(residual);
            o.add_part(residual.values());
            if (with_out) {
              dout.download(out);
              o.add_part(out.values());
            }
            return o;
          }};
}

// A MoE layer's feed-forward end: s = norm(a) a_gain + norm(b) b_gain (the
// dense and expert branches), residual <- (residual + norm(s) sum_gain) *
// scale, then optionally out = norm(residual) out_gain (the next layer's
// input norm); residual and out are compared.
Case add_rms_norm_pair_case(int64_t t, int32_t dtype, bool gains, bool with_out, float scale) {
  char scale_text[16];
  std::snprintf(scale_text, sizeof scale_text, "%g", static_cast<double>(scale));
  const std::string label = shape({t, kHidden}, dtype) + (gains ? ", gains" : ", no gains") +
                            (with_out ? ", out" : ", no out") + ", scale " + scale_text;
  return {"add_rms_norm_pair", label, bound_for(dtype), [=](Provider& p, std::mt19937& rng) {
            need_op(p, &seatrt_kernel_api::add_rms_norm_pair, "add_rms_norm_pair");
            Tensor a = random_input(rng, dtype, {t, kHidden}, 2.0);
            Tensor b = random_input(rng, dtype, {t, kHidden}, 0.25);
            Tensor residual = random_input(rng, dtype, {t, kHidden}, 8.0);
            Tensor a_gain = random_input(rng, SEATRT_DTYPE_BF16, {kHidden}, 2.0);
            Tensor b_gain = random_input(rng, SEATRT_DTYPE_BF16, {kHidden}, 2.0);
            Tensor sum_gain = random_input(rng, SEATRT_DTYPE_F32, {kHidden}, 2.0);
            Tensor out_gain = random_input(rng, SEATRT_DTYPE_BF16, {kHidden}, 2.0);
            Tensor out(dtype, {t, kHidden});
            DeviceTensor da(p, a), db(p, b), dres(p, residual), dag(p, a_gain), dbg(p, b_gain), dsg(p, sum_gain),
                dog(p, out_gain), dout(p, out);
            seatrt_add_rms_norm_pair_args args{};
            args.struct_size = sizeof args;
            args.eps = kEps;
            args.a = da.get();
            args.a_weight = gains ? dag.get() : nullptr;
            args.b = db.get();
            args.b_weight = gains ? dbg.get() : nullptr;
            args.sum_weight = gains ? dsg.get() : nullptr;
            args.residual = dres.get();
            args.residual_scale = scale;
            args.out_weight = gains ? dog.get() : nullptr;
            args.out = with_out ? dout.get() : nullptr;
            call_op(p, &seatrt_kernel_api::add_rms_norm_pair, args, "add_rms_norm_pair");
            Outputs o;
            dres.download(residual);
            o.add_part(residual.values());
            if (with_out) {
              dout.download(out);
              o.add_part(out.values());
            }
            return o;
          }};
}

// Per-head q/k norm then RoPE (NeoX halves); the first `rotated` of the D/2
// frequencies are non-zero (rotated < D/2: partial / proportional RoPE).
// In place (out = x) as the plugin calls it, or into a separate out.
Case rms_norm_rope_case(int64_t t, int64_t heads, int64_t d, int64_t rotated, int32_t dtype, bool weighted,
                        bool in_place) {
  const std::string label = shape({t, heads, d}, dtype) + ", " + std::to_string(rotated) + "/" +
                            std::to_string(d / 2) + " pairs rotated" + (weighted ? ", gain" : ", no gain") +
                            (in_place ? ", in place" : "");
  return {"rms_norm_rope", label, bound_for(dtype), [=](Provider& p, std::mt19937& rng) {
            need_op(p, &seatrt_kernel_api::rms_norm_rope, "rms_norm_rope");
            Tensor x = random_input(rng, dtype, {t, heads, d}, 4.0);
            Tensor gain = random_input(rng, SEATRT_DTYPE_BF16, {d}, 2.0);
            std::vector<int64_t> pos;
            for (int64_t i = 0; i < t; ++i) pos.push_back(static_cast<int64_t>(rng() % 30000));
            Tensor positions = int_input(SEATRT_DTYPE_I32, {t}, pos);
            Tensor inv_freq(SEATRT_DTYPE_F32, {d / 2});
            const double base = d == 512 ? 1e6 : 1e4;
            for (int64_t i = 0; i < d / 2; ++i) {
              inv_freq.set(i, i < rotated ? std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d)) : 0.0);
            }
            Tensor out(dtype, {t, heads, d});
            DeviceTensor dx(p, x), dg(p, gain), dp(p, positions), df(p, inv_freq), dout(p, out);
            DeviceTensor& target = in_place ? dx : dout;
            seatrt_rms_norm_rope_args args{sizeof args, dx.get(), weighted ? dg.get() : nullptr, kEps, 0,
                                           dp.get(),    df.get(), target.get()};
            call_op(p, &seatrt_kernel_api::rms_norm_rope, args, "rms_norm_rope");
            target.download(out);
            return Outputs{{}, out.values()};
          }};
}

}  // namespace

void add_fused_cases(std::vector<Case>& cases) {
  constexpr int32_t kF32 = SEATRT_DTYPE_F32, kBF16 = SEATRT_DTYPE_BF16;
  // ABI 1.1.  Scale 0.8125 stands for a layer_scalar: the last add of a
  // layer; gains and no out for the MoE branch sum.
  cases.push_back(add_rms_norm_case(1, kBF16, true, true, 1.0f));
  cases.push_back(add_rms_norm_case(5, kF32, true, false, 1.0f));
  cases.push_back(add_rms_norm_case(5, kBF16, false, true, 0.8125f));
  cases.push_back(add_rms_norm_case(32, kF32, true, true, 0.8125f));
  cases.push_back(add_rms_norm_case(32, kBF16, true, false, 0.8125f));
  cases.push_back(add_rms_norm_case(300, kF32, true, true, 0.8125f));
  // Sliding layers: full rotary at theta 1e4 (and one partial); full layers:
  // proportional RoPE, 64 of 256 pairs at theta 1e6.
  cases.push_back(rms_norm_rope_case(1, 16, 256, 128, kBF16, true, true));
  cases.push_back(rms_norm_rope_case(5, 8, 256, 32, kF32, false, false));
  cases.push_back(rms_norm_rope_case(5, 16, 512, 64, kF32, true, false));
  cases.push_back(rms_norm_rope_case(32, 2, 512, 64, kBF16, true, true));
  cases.push_back(rms_norm_rope_case(32, 16, 256, 128, kF32, true, true));
  cases.push_back(rms_norm_rope_case(300, 8, 256, 128, kBF16, true, false));
  // ABI 1.2.
  cases.push_back(linear_multi_case("q/k/v sliding", {4096, 2048, 2048}, true, 1, kBF16));
  cases.push_back(linear_multi_case("q/k/v sliding", {4096, 2048, 2048}, true, 5, kF32));
  cases.push_back(linear_multi_case("q/k/v sliding", {4096, 2048, 2048}, true, 32, kBF16));
  cases.push_back(linear_multi_case("q/k full", {8192, 1024}, true, 1, kF32));
  cases.push_back(linear_multi_case("q/k full", {8192, 1024}, true, 32, kBF16));
  cases.push_back(linear_multi_case("q/k/v sliding", {4096, 2048, 2048}, false, 5, kF32));
  cases.push_back(linear_glu_case(true, 1, kBF16));
  cases.push_back(linear_glu_case(true, 5, kF32));
  cases.push_back(linear_glu_case(true, 32, kBF16));
  cases.push_back(linear_glu_case(true, 300, kBF16));
  cases.push_back(linear_glu_case(false, 5, kF32));
  cases.push_back(rms_norm_multi_case(1, kBF16, 2));
  cases.push_back(rms_norm_multi_case(5, kF32, 3));
  cases.push_back(rms_norm_multi_case(32, kBF16, 3));
  cases.push_back(rms_norm_multi_case(32, kF32, 2));
  cases.push_back(rms_norm_multi_case(300, kBF16, 3));
  // ABI 1.4.  Scale 0.8125 stands for a layer_scalar; out is the next
  // layer's input norm (absent after the last layer without logits).
  cases.push_back(add_rms_norm_pair_case(1, kBF16, true, true, 0.8125f));
  cases.push_back(add_rms_norm_pair_case(5, kF32, true, true, 1.0f));
  cases.push_back(add_rms_norm_pair_case(5, kBF16, false, false, 0.8125f));
  cases.push_back(add_rms_norm_pair_case(32, kF32, true, false, 0.8125f));
  cases.push_back(add_rms_norm_pair_case(32, kBF16, true, true, 0.8125f));
  cases.push_back(add_rms_norm_pair_case(300, kF32, true, true, 0.8125f));
  cases.push_back(add_rms_norm_pair_case(300, kBF16, true, true, 1.0f));
}

}  // namespace seatrt::conformance
