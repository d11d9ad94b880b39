// delta_rule: gated delta-rule linear attention with a per-sequence state
// S [Dk, Dv] per value head.  Each (sequence, value head) pair is an
// independent recurrence over the sequence's rows, so the work is split
// over those pairs; fp32 throughout.
#include <cmath>
#include <vector>

#include "ops.hpp"
#include "parallel.hpp"
#include "state_batch.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {
namespace {

constexpr const char* kOp = "delta_rule";

// v <- v / sqrt(|v|^2 + 1e-6).
void l2_normalize(std::vector<float>& v) {
  float sum = 0.0f;
  for (float e : v) sum += e * e;
  const float inv = 1.0f / std::sqrt(sum + 1e-6f);
  for (float& e : v) e *= inv;
}

struct Dims {
  int64_t tokens, hk, dk, hv, dv;
};

Dims check_shapes(const seatrt_delta_rule_args& args) {
  const seatrt_tensor& q = need_tensor(args.q, kOp, "q");
  const seatrt_tensor& k = need_tensor(args.k, kOp, "k");
  const seatrt_tensor& v = need_tensor(args.v, kOp, "v");
  const seatrt_tensor& g = need_tensor(args.g, kOp, "g");
  const seatrt_tensor& beta = need_tensor(args.beta, kOp, "beta");
  const seatrt_tensor& state = need_tensor(args.state, kOp, "state");
  const seatrt_tensor& out = need_tensor(args.out, kOp, "out");
  need_ndim(q, kOp, "q", 3);
  need_dtype(q, kOp, "q", kActivationDtypes);
  need_dtype(k, kOp, "k", kActivationDtypes);
  need_same_shape(q, "q", k, "k", kOp);
  need_ndim(v, kOp, "v", 3);
  need_dtype(v, kOp, "v", kActivationDtypes);
  need_dtype(out, kOp, "out", kActivationDtypes);
  need_same_shape(v, "v", out, "out", kOp);
  const Dims d{q.shape[0], q.shape[1], q.shape[2], v.shape[1], v.shape[2]};
  need_dim(v, kOp, "v", 0, d.tokens);
  if (d.hk < 1 || d.hv % d.hk != 0) {
    invalid(kOp, "v's " + std::to_string(d.hv) + " heads are not a multiple of q's " + std::to_string(d.hk));
  }
  for (const auto& [t, name] : {std::pair{&g, "g"}, std::pair{&beta, "beta"}}) {
    need_ndim(*t, kOp, name, 2);
    need_dtype(*t, kOp, name, {SEATRT_DTYPE_F32});
    need_dim(*t, kOp, name, 0, d.tokens);
    need_dim(*t, kOp, name, 1, d.hv);
  }
  need_ndim(state, kOp, "state", 4);
  need_dtype(state, kOp, "state", {SEATRT_DTYPE_F32});
  need_dim(state, kOp, "state", 1, d.hv);
  need_dim(state, kOp, "state", 2, d.dk);
  need_dim(state, kOp, "state", 3, d.dv);
  if (!std::isfinite(args.scale)) invalid(kOp, "scale is not finite");
  return d;
}

}  // namespace

void delta_rule(Context& ctx, const seatrt_delta_rule_args& args) {
  const Dims d = check_shapes(args);
  const StateBatch batch = read_state_batch(kOp, args.num_seqs, d.tokens, args.state->shape[0], args.query_start,
                                            args.state_index, args.reset);
  // Rows: q/k by (token, key head), v/out by (token, value head), g/beta by
  // token, state by (slot, value head, key dim).
  const Rows q_rows(*args.q), k_rows(*args.k), v_rows(*args.v), out_rows(*args.out);
  const Rows g_rows(*args.g), beta_rows(*args.beta), state_rows(*args.state);
  const int64_t group = d.hv / d.hk;
  const bool normalize = args.l2_normalize != 0;
  const float scale = args.scale;
  parallel_chunks(ctx.pool, batch.seqs() * d.hv, [&](int64_t begin, int64_t end) {
    std::vector<float> s_mat(static_cast<size_t>(d.dk * d.dv));
    std::vector<float> q(static_cast<size_t>(d.dk)), k(static_cast<size_t>(d.dk));
    std::vector<float> v(static_cast<size_t>(d.dv)), u(static_cast<size_t>(d.dv)), o(static_cast<size_t>(d.dv));
    std::vector<float> g(static_cast<size_t>(d.hv)), beta(static_cast<size_t>(d.hv));
    for (int64_t item = begin; item < end; ++item) {
      const auto s = static_cast<size_t>(item / d.hv);
      const int64_t h = item % d.hv;
      const int64_t kh = h / group;
      const int64_t state_base = (batch.slot[s] * d.hv + h) * d.dk;
      if (batch.reset[s]) {
        std::fill(s_mat.begin(), s_mat.end(), 0.0f);
      } else {
        for (int64_t i = 0; i < d.dk; ++i) state_rows.load(state_base + i, s_mat.data() + i * d.dv);
      }
      for (int64_t t = batch.start[s]; t < batch.start[s + 1]; ++t) {
        q_rows.load(t * d.hk + kh, q.data());
        k_rows.load(t * d.hk + kh, k.data());
        v_rows.load(t * d.hv + h, v.data());
        g_rows.load(t, g.data());
        beta_rows.load(t, beta.data());
        if (normalize) {
          l2_normalize(q);
          l2_normalize(k);
        }
        const float decay = std::exp(g[static_cast<size_t>(h)]);
        for (float& e : s_mat) e *= decay;
        // u = beta (v - k^T S)
        for (int64_t j = 0; j < d.dv; ++j) {
          float ks = 0.0f;
          for (int64_t i = 0; i < d.dk; ++i) ks += k[static_cast<size_t>(i)] * s_mat[static_cast<size_t>(i * d.dv + j)];
          u[static_cast<size_t>(j)] = beta[static_cast<size_t>(h)] * (v[static_cast<size_t>(j)] - ks);
        }
        // S += k u^T
        for (int64_t i = 0; i < d.dk; ++i) {
          for (int64_t j = 0; j < d.dv; ++j) {
            s_mat[static_cast<size_t>(i * d.dv + j)] += k[static_cast<size_t>(i)] * u[static_cast<size_t>(j)];
          }
        }
        // out = scale q^T S
        for (int64_t j = 0; j < d.dv; ++j) {
          float acc = 0.0f;
          for (int64_t i = 0; i < d.dk; ++i) acc += q[static_cast<size_t>(i)] * s_mat[static_cast<size_t>(i * d.dv + j)];
          o[static_cast<size_t>(j)] = scale * acc;
        }
        out_rows.store(t * d.hv + h, o.data());
      }
      for (int64_t i = 0; i < d.dk; ++i) state_rows.store(state_base + i, s_mat.data() + i * d.dv);
    }
  });
}

}  // namespace seatrt::cpu
