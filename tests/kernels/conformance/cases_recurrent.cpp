// The operations of linear-attention layers, whose sequences carry a state
// from one call to the next: the causal short convolution and the gated
// delta rule.  Each case makes two calls on one state: the first resets
// some sequences and continues others from random state rows, the second
// (no reset) continues all of them, so a provider that drops, misplaces or
// fails to write back the state is caught by the second call's outputs and
// by the final state.  One sequence is shorter than the convolution's
// history, so its state keeps part of the old history.
#include <cmath>

#include "cases.hpp"

namespace seatrt::conformance {
namespace {

using test::Tensor;

// Rows per sequence -> query_start [S + 1].
std::vector<int64_t> starts_of(const std::vector<int64_t>& rows) {
  std::vector<int64_t> qs = {0};
  for (const int64_t r : rows) qs.push_back(qs.back() + r);
  return qs;
}

struct ConvShape {
  int64_t channels, width;
  int32_t activation;
  bool bias;
  int32_t dtype;
};

Case conv_case(const ConvShape& c, const std::string& label) {
  return {SEATRT_OP_CONV1D_CAUSAL, label, c.dtype == SEATRT_DTYPE_F32 ? kBoundF32 : kBoundBF16,
          [=](Provider& p, std::mt19937& rng) {
            const std::vector<int64_t> rows1 = {1, 6, 2}, rows2 = {1, 3, 1};
            const std::vector<int64_t> slots = {3, 0, 4};
            const int64_t num_slots = 5, seqs = 3;
            Tensor weight = random_input(rng, c.dtype, {c.channels, c.width}, 0.6);
            Tensor bias = random_input(rng, c.dtype, {c.channels}, 0.3);
            Tensor state = random_input(rng, SEATRT_DTYPE_F32, {num_slots, c.channels, c.width - 1}, 2.0);
            Tensor index = int_input(SEATRT_DTYPE_I32, {seqs}, slots);
            Tensor reset = int_input(SEATRT_DTYPE_I32, {seqs}, {1, 0, 0});
            DeviceTensor dw(p, weight), db(p, bias), dstate(p, state), dindex(p, index), dreset(p, reset);
            Outputs o;
            for (int call = 0; call < 2; ++call) {
              const std::vector<int64_t>& rows = call == 0 ? rows1 : rows2;
              const std::vector<int64_t> qs = starts_of(rows);
              Tensor x = random_input(rng, c.dtype, {qs.back(), c.channels}, 2.0);
              Tensor out(c.dtype, {qs.back(), c.channels});
              Tensor qs_t = int_input(SEATRT_DTYPE_I32, {seqs + 1}, qs);
              DeviceTensor dx(p, x), dout(p, out), dqs(p, qs_t);
              seatrt_conv1d_causal_args args{};
              args.activation = c.activation;
              args.x = dx.get();
              args.weight = dw.get();
              args.bias = c.bias ? db.get() : nullptr;
              args.state = dstate.get();
              args.state_index = dindex.get();
              args.reset = call == 0 ? dreset.get() : nullptr;
              args.query_start = dqs.get();
              args.num_seqs = static_cast<int32_t>(seqs);
              args.out = dout.get();
              run_op<SEATRT_OP_CONV1D_CAUSAL>(p, args);
              dout.download(out);
              o.add_part(out.values());
            }
            dstate.download(state);
            o.add_part(state.values());
            return o;
          }};
}

struct DeltaShape {
  int64_t hk, dk, hv, dv;
  bool l2;
  int32_t dtype;
};

Case delta_case(const DeltaShape& d, const std::string& label) {
  return {SEATRT_OP_DELTA_RULE, label, d.dtype == SEATRT_DTYPE_F32 ? kBoundF32 : kBoundBF16,
          [=](Provider& p, std::mt19937& rng) {
            const std::vector<int64_t> rows1 = {3, 1, 5}, rows2 = {1, 2, 1};
            const std::vector<int64_t> slots = {2, 0, 3};
            const int64_t num_slots = 4, seqs = 3;
            // Without the l2 normalisation the update is stable only for
            // small keys (|k|^2 * beta < 2).
            const double qk_range = d.l2 ? 1.0 : 0.6 / std::sqrt(static_cast<double>(d.dk));
            Tensor state = random_input(rng, SEATRT_DTYPE_F32, {num_slots, d.hv, d.dk, d.dv}, 0.5);
            Tensor index = int_input(SEATRT_DTYPE_I32, {seqs}, slots);
            Tensor reset = int_input(SEATRT_DTYPE_I32, {seqs}, {0, 1, 0});
            DeviceTensor dstate(p, state), dindex(p, index), dreset(p, reset);
            Outputs o;
            for (int call = 0; call < 2; ++call) {
              const std::vector<int64_t>& rows = call == 0 ? rows1 : rows2;
              const std::vector<int64_t> qs = starts_of(rows);
              const int64_t t = qs.back();
              Tensor q = random_input(rng, d.dtype, {t, d.hk, d.dk}, qk_range);
              Tensor k = random_input(rng, d.dtype, {t, d.hk, d.dk}, qk_range);
              Tensor v = random_input(rng, d.dtype, {t, d.hv, d.dv});
              Tensor g = test::random_tensor(rng, SEATRT_DTYPE_F32, {t, d.hv}, -1.0, -0.01);
              Tensor beta = test::random_tensor(rng, SEATRT_DTYPE_F32, {t, d.hv}, 0.05, 0.95);
              Tensor out(d.dtype, {t, d.hv, d.dv});
              Tensor qs_t = int_input(SEATRT_DTYPE_I32, {seqs + 1}, qs);
              DeviceTensor dq(p, q), dk(p, k), dv(p, v), dg(p, g), dbeta(p, beta), dout(p, out), dqs(p, qs_t);
              seatrt_delta_rule_args args{};
              args.l2_normalize = d.l2 ? 1 : 0;
              args.q = dq.get();
              args.k = dk.get();
              args.v = dv.get();
              args.g = dg.get();
              args.beta = dbeta.get();
              args.state = dstate.get();
              args.state_index = dindex.get();
              args.reset = call == 0 ? dreset.get() : nullptr;
              args.query_start = dqs.get();
              args.num_seqs = static_cast<int32_t>(seqs);
              args.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d.dk)));
              args.out = dout.get();
              run_op<SEATRT_OP_DELTA_RULE>(p, args);
              dout.download(out);
              o.add_part(out.values());
            }
            dstate.download(state);
            o.add_part(state.values());
            return o;
          }};
}

}  // namespace

void add_recurrent_cases(std::vector<Case>& cases) {
  cases.push_back(conv_case({96, 4, SEATRT_ACT_SILU, true, SEATRT_DTYPE_F32},
                            "C 96, W 4, silu+bias, F32, 3 seqs (1|6|2, then 1|3|1 rows), 1 reset"));
  cases.push_back(conv_case({64, 4, SEATRT_CONV_ACT_NONE, false, SEATRT_DTYPE_BF16},
                            "C 64, W 4, no activation, no bias, BF16, two calls"));
  cases.push_back(delta_case({2, 32, 4, 16, true, SEATRT_DTYPE_F32},
                             "Hk 2x32, Hv 4x16, l2-norm, F32, 3 seqs (3|1|5, then 1|2|1), 1 reset"));
  cases.push_back(delta_case({2, 16, 2, 16, false, SEATRT_DTYPE_BF16}, "Hk 2 x 16, Hv 2 x 16, raw q/k, BF16, two calls"));
}

}  // namespace seatrt::conformance
