// Elementwise-like operations at Gemma-4 shapes (hidden 2816, heads 16,
// head_dim 256 / 512, vocab rows of 262144 for the softcap), plus the
// fields other families use: sigmoid and per-row scaling, zero-centred
// norm gains ("1 + w"), multi-section RoPE.
#include <cmath>

#include "cases.hpp"

namespace seatrt::conformance {
namespace {

using test::Tensor;

double bound_for(int32_t dtype) {
  return dtype == SEATRT_DTYPE_F32 ? kBoundF32 : dtype == SEATRT_DTYPE_F8_E4M3 ? kBoundF8 : kBoundBF16;
}

std::string dtype_label(int32_t dtype) {
  return dtype == SEATRT_DTYPE_F32 ? "F32" : dtype == SEATRT_DTYPE_BF16 ? "BF16" : dtype == SEATRT_DTYPE_F16 ? "F16" : "F8";
}

Case elementwise_case(int32_t op, const char* name, std::vector<int64_t> shape, std::vector<int64_t> b_shape,
                      int32_t in_dtype, int32_t out_dtype, float alpha) {
  std::string label = std::string(name) + " " + dtype_label(in_dtype) + "->" + dtype_label(out_dtype) + " [";
  for (size_t i = 0; i < shape.size(); ++i) label += (i ? "," : "") + std::to_string(shape[i]);
  label += "]";
  if (!b_shape.empty()) label += " b[" + std::to_string(b_shape.back()) + "]";
  return {SEATRT_OP_ELEMENTWISE, label, bound_for(out_dtype), [=](Provider& p, std::mt19937& rng) {
            Tensor a = random_input(rng, in_dtype, shape, op == SEATRT_EW_SOFTCAP ? 60.0 : 2.0);
            Tensor b = b_shape.empty() ? Tensor() : random_input(rng, SEATRT_DTYPE_BF16, b_shape);
            Tensor out(out_dtype, shape);
            DeviceTensor da(p, a), dout(p, out);
            DeviceTensor db = b_shape.empty() ? DeviceTensor() : DeviceTensor(p, b);
            seatrt_elementwise_args args{sizeof args, op, da.get(), b_shape.empty() ? nullptr : db.get(), alpha, dout.get()};
            run_op<SEATRT_OP_ELEMENTWISE>(p, args);
            dout.download(out);
            return Outputs{{}, out.values()};
          }};
}

}  // namespace

void add_basic_cases(std::vector<Case>& cases) {
  cases.push_back(elementwise_case(SEATRT_EW_ADD, "add", {7, 2816}, {2816}, SEATRT_DTYPE_BF16, SEATRT_DTYPE_BF16, 0));
  cases.push_back(elementwise_case(SEATRT_EW_ADD, "add", {7, 2816}, {7, 2816}, SEATRT_DTYPE_F32, SEATRT_DTYPE_F32, 0));
  cases.push_back(elementwise_case(SEATRT_EW_MUL, "mul", {5, 16, 256}, {256}, SEATRT_DTYPE_BF16, SEATRT_DTYPE_BF16, 0));
  cases.push_back(elementwise_case(SEATRT_EW_SCALE, "scale", {7, 2816}, {}, SEATRT_DTYPE_BF16, SEATRT_DTYPE_BF16, 0.8125f));
  cases.push_back(elementwise_case(SEATRT_EW_SOFTCAP, "softcap 30", {2, 262144}, {}, SEATRT_DTYPE_F32, SEATRT_DTYPE_F32, 30.0f));
  cases.push_back(elementwise_case(SEATRT_EW_COPY, "copy", {9, 2816}, {}, SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16, 0));
  cases.push_back(elementwise_case(SEATRT_EW_COPY, "copy", {9, 2816}, {}, SEATRT_DTYPE_BF16, SEATRT_DTYPE_F32, 0));
  cases.push_back(elementwise_case(SEATRT_EW_SIGMOID, "sigmoid", {7, 2816}, {}, SEATRT_DTYPE_F32, SEATRT_DTYPE_F32, 0));
  cases.push_back(elementwise_case(SEATRT_EW_SIGMOID, "sigmoid", {5, 16, 256}, {}, SEATRT_DTYPE_BF16, SEATRT_DTYPE_BF16, 0));
  cases.push_back(elementwise_case(SEATRT_EW_MUL_ROWS, "mul_rows", {7, 2816}, {7}, SEATRT_DTYPE_F32, SEATRT_DTYPE_F32, 0));
  cases.push_back(elementwise_case(SEATRT_EW_MUL_ROWS, "mul_rows", {9, 2048}, {9}, SEATRT_DTYPE_BF16, SEATRT_DTYPE_BF16, 0));

  cases.push_back({SEATRT_OP_EMBEDDING, "table BF16 [4096, 2816], 9 ids, scale 53", kBoundBF16, [](Provider& p, std::mt19937& rng) {
                     Tensor table = random_input(rng, SEATRT_DTYPE_BF16, {4096, 2816});
                     std::vector<int64_t> ids;
                     for (int i = 0; i < 9; ++i) ids.push_back(static_cast<int64_t>(rng() % 4096));
                     Tensor id_t = int_input(SEATRT_DTYPE_I32, {9}, ids);
                     Tensor out(SEATRT_DTYPE_BF16, {9, 2816});
                     DeviceTensor dt(p, table), di(p, id_t), dout(p, out);
                     seatrt_embedding_args args{sizeof args, di.get(), dt.get(), 53.0f, dout.get()};
                     run_op<SEATRT_OP_EMBEDDING>(p, args);
                     dout.download(out);
                     return Outputs{{}, out.values()};
                   }});

  cases.push_back({SEATRT_OP_GATHER_ROWS, "F32 [12, 2816] -> 5 rows", kBoundF32, [](Provider& p, std::mt19937& rng) {
                     Tensor x = random_input(rng, SEATRT_DTYPE_F32, {12, 2816});
                     Tensor index = int_input(SEATRT_DTYPE_I32, {5}, {11, 0, 3, 3, 7});
                     Tensor out(SEATRT_DTYPE_F32, {5, 2816});
                     DeviceTensor dx(p, x), di(p, index), dout(p, out);
                     seatrt_gather_rows_args args{sizeof args, dx.get(), di.get(), dout.get()};
                     run_op<SEATRT_OP_GATHER_ROWS>(p, args);
                     dout.download(out);
                     return Outputs{{}, out.values()};
                   }});

  for (int32_t dtype : {SEATRT_DTYPE_BF16, SEATRT_DTYPE_F32}) {
    for (bool weighted : {true, false}) {
      const std::vector<int64_t> shape = weighted ? std::vector<int64_t>{7, 2816} : std::vector<int64_t>{7, 16, 256};
      cases.push_back({SEATRT_OP_RMS_NORM, std::string(weighted ? "[7, 2816] with weight " : "[7, 16, 256] weightless ") + dtype_label(dtype),
                       bound_for(dtype), [=](Provider& p, std::mt19937& rng) {
                         Tensor x = random_input(rng, dtype, shape, 4.0);
                         Tensor w = random_input(rng, SEATRT_DTYPE_BF16, {shape.back()}, 2.0);
                         Tensor out(dtype, shape);
                         DeviceTensor dx(p, x), dw(p, w), dout(p, out);
                         seatrt_rms_norm_args args{sizeof args, dx.get(), weighted ? dw.get() : nullptr, 1e-6f, dout.get(), 0.0f};
                         run_op<SEATRT_OP_RMS_NORM>(p, args);
                         dout.download(out);
                         return Outputs{{}, out.values()};
                       }});
    }
  }

  for (int32_t dtype : {SEATRT_DTYPE_BF16, SEATRT_DTYPE_F32}) {
    cases.push_back({SEATRT_OP_RMS_NORM, "[6, 2048] zero-centred gain (weight_offset 1) " + dtype_label(dtype), bound_for(dtype),
                     [=](Provider& p, std::mt19937& rng) {
                       Tensor x = random_input(rng, dtype, {6, 2048}, 4.0);
                       Tensor w = random_input(rng, SEATRT_DTYPE_BF16, {2048}, 0.5);
                       Tensor out(dtype, {6, 2048});
                       DeviceTensor dx(p, x), dw(p, w), dout(p, out);
                       seatrt_rms_norm_args args{sizeof args, dx.get(), dw.get(), 1e-6f, dout.get(), 1.0f};
                       run_op<SEATRT_OP_RMS_NORM>(p, args);
                       dout.download(out);
                       return Outputs{{}, out.values()};
                     }});
  }

  for (int32_t act : {SEATRT_ACT_GELU_TANH, SEATRT_ACT_SILU, SEATRT_ACT_GELU_ERF}) {
    const char* names[] = {"gelu_tanh", "silu", "gelu_erf"};
    cases.push_back({SEATRT_OP_GLU, std::string(names[act]) + " fused BF16 [5, 2*2112] views", kBoundBF16, [=](Provider& p, std::mt19937& rng) {
                       Tensor fused = random_input(rng, SEATRT_DTYPE_BF16, {5, 4224}, 4.0);
                       Tensor out(SEATRT_DTYPE_BF16, {5, 2112});
                       DeviceTensor df(p, fused), dout(p, out);
                       seatrt_tensor gate = *df.get(), up = *df.get();
                       gate.shape[1] = up.shape[1] = 2112;
                       up.data = static_cast<char*>(up.data) + 2112 * 2;
                       seatrt_glu_args args{sizeof args, act, &gate, &up, dout.get()};
                       run_op<SEATRT_OP_GLU>(p, args);
                       dout.download(out);
                       return Outputs{{}, out.values()};
                     }});
  }

  for (bool full : {false, true}) {
    const int64_t dim = full ? 512 : 256;
    cases.push_back({SEATRT_OP_ROPE, full ? "[5, 16, 512] proportional (64 of 256 pairs)" : "[5, 16, 256] theta 1e4", kBoundBF16,
                     [=](Provider& p, std::mt19937& rng) {
                       Tensor x = random_input(rng, SEATRT_DTYPE_BF16, {5, 16, dim});
                       std::vector<int64_t> pos;
                       for (int i = 0; i < 5; ++i) pos.push_back(static_cast<int64_t>(rng() % 30000));
                       Tensor positions = int_input(SEATRT_DTYPE_I32, {5}, pos);
                       Tensor inv_freq(SEATRT_DTYPE_F32, {dim / 2});
                       for (int64_t i = 0; i < dim / 2; ++i) {
                         const double base = full ? 1e6 : 1e4;
                         const bool rotated = !full || i < 64;
                         inv_freq.set(i, rotated ? std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(dim)) : 0.0);
                       }
                       Tensor out(SEATRT_DTYPE_BF16, {5, 16, dim});
                       DeviceTensor dx(p, x), dp(p, positions), df(p, inv_freq), dout(p, out);
                       seatrt_rope_args args{sizeof args, dx.get(), dp.get(), df.get(), dout.get(), 0, {}};
                       run_op<SEATRT_OP_ROPE>(p, args);
                       dout.download(out);
                       return Outputs{{}, out.values()};
                     }});
  }

  // Multi-section RoPE: 64 pairs taking their angles from 3 position
  // streams (16 + 24 + 24 pairs), in place, as a vision-language model does.
  cases.push_back({SEATRT_OP_ROPE, "[5, 4, 128] F32 3 sections (16|24|24 pairs), in place", kBoundF32,
                   [](Provider& p, std::mt19937& rng) {
                     const int64_t t = 5, heads = 4, dim = 128;
                     Tensor x = random_input(rng, SEATRT_DTYPE_F32, {t, heads, dim});
                     std::vector<int64_t> pos;
                     for (int64_t i = 0; i < t * 3; ++i) pos.push_back(static_cast<int64_t>(rng() % 4000));
                     Tensor positions = int_input(SEATRT_DTYPE_I32, {t, 3}, pos);
                     Tensor inv_freq(SEATRT_DTYPE_F32, {dim / 2});
                     for (int64_t i = 0; i < dim / 2; ++i)
                       inv_freq.set(i, std::pow(1e6, -2.0 * static_cast<double>(i) / static_cast<double>(dim)));
                     DeviceTensor dx(p, x), dp(p, positions), df(p, inv_freq);
                     seatrt_rope_args args{};
                     args.x = dx.get();
                     args.positions = dp.get();
                     args.inv_freq = df.get();
                     args.out = dx.get();
                     args.num_sections = 3;
                     args.sections[0] = 16;
                     args.sections[1] = 24;
                     args.sections[2] = 24;
                     run_op<SEATRT_OP_ROPE>(p, args);
                     dx.download(x);
                     return Outputs{{}, x.values()};
                   }});
}

}  // namespace seatrt::conformance
