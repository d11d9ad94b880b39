// route (ABI 1.5) on the CPU provider, called through its C table: bit for
// bit the sequence kernels.h spells out (the router input's rms_norm, linear,
// router_topk, and the experts' input rms_norm, through the same table) at
// the Gemma-4 router shape and a small odd one, with the logits or expert_in
// left out; the small shape also against a double-precision reference
// written here; BF16 logits; a non-finite logit; and the argument checks,
// which must refuse with a status naming the problem before anything is
// written.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "dtype.hpp"
#include "fake_host.hpp"
#include "provider_table.hpp"
#include "test_support.hpp"

using namespace seatrt;
using test::Tensor;

namespace {

constexpr float kEps = 1e-6f;
constexpr int32_t kF32 = SEATRT_DTYPE_F32, kBF16 = SEATRT_DTYPE_BF16, kI32 = SEATRT_DTYPE_I32;
constexpr int32_t kUnwrittenId = -7;  // what ids hold before a call

const seatrt_kernel_api& api() {
  static const bool initialised = [] {
    REQUIRE(cpu::plugin_descriptor().initialize(test::fake_host()) == nullptr);
    return true;
  }();
  (void)initialised;
  return cpu::kernel_api();
}

// One context of the provider for the whole file, destroyed at exit.
seatrt_kernel_context* context() {
  struct Owned {
    seatrt_kernel_context* ctx = nullptr;
    Owned() { REQUIRE(test::take_status(api().create("threads = 3", 0, &ctx)) == SEATRT_OK); }
    ~Owned() { api().destroy(ctx); }
  };
  static Owned owned;
  return owned.ctx;
}

void require_ok(seatrt_status* status, const char* op) {
  std::string msg;
  const seatrt_status_code code = test::take_status(status, &msg);
  INFO(op << ": " << msg);
  REQUIRE(code == SEATRT_OK);
}

// The inputs of one route call (the tensors are owned by the caller).
struct Inputs {
  Tensor x;                                  // [T, H]
  const seatrt_linear_weight* router = nullptr;
  const Tensor* router_gain = nullptr;       // [H] or NULL
  const Tensor* expert_gain = nullptr;       // [H] or NULL
  const Tensor* scale = nullptr;             // per_expert_scale [E] or NULL
  int32_t top_k = 0;
  bool renormalize = false;
  int64_t tokens() const { return x.desc().shape[0]; }
  int64_t hidden() const { return x.desc().shape[1]; }
  int64_t experts() const { return router->out_features; }
};

const seatrt_tensor* get(const Tensor* t) { return t ? t->get() : nullptr; }

// The four outputs, filled beforehand with values no call writes (NaN;
// kUnwrittenId), so that what a call left alone shows.
struct Routed {
  Tensor ids, weights, expert_in, logits;
  Routed(const Inputs& in, int32_t expert_in_dtype, int32_t logits_dtype)
      : ids(test::int_tensor(kI32, {in.tokens(), in.top_k},
                             std::vector<int64_t>(static_cast<size_t>(in.tokens() * in.top_k), kUnwrittenId))),
        weights(kF32, {in.tokens(), in.top_k}),
        expert_in(expert_in_dtype, {in.tokens(), in.hidden()}),
        logits(logits_dtype, {in.tokens(), in.experts()}) {
    for (Tensor* t : {&weights, &expert_in, &logits})
      for (int64_t i = 0; i < t->numel(); ++i) t->set(i, NAN);
  }
};

seatrt_route_args route_args(const Inputs& in, Routed& out, bool with_logits, bool with_expert_in) {
  seatrt_route_args a{};
  a.struct_size = sizeof a;
  a.eps = kEps;
  a.x = in.x.get();
  a.router_norm_weight = get(in.router_gain);
  a.router = in.router;
  a.top_k = in.top_k;
  a.renormalize = in.renormalize ? 1 : 0;
  a.per_expert_scale = get(in.scale);
  a.expert_norm_weight = get(in.expert_gain);
  a.expert_in = with_expert_in ? out.expert_in.get() : nullptr;
  a.logits = with_logits ? out.logits.get() : nullptr;
  a.ids = out.ids.get();
  a.weights = out.weights.get();
  return a;
}

Routed run_route(const Inputs& in, bool with_logits, bool with_expert_in, int32_t expert_in_dtype = kF32,
                 int32_t logits_dtype = kF32) {
  Routed out(in, expert_in_dtype, logits_dtype);
  const seatrt_route_args a = route_args(in, out, with_logits, with_expert_in);
  require_ok(api().route(context(), nullptr, &a), "route");
  return out;
}

// The sequence kernels.h names, one single operation at a time: the
// router's input normed into F32, the router Linear into F32 logits, top-k,
// and the experts' input normed with its own gain.
Routed run_sequence(const Inputs& in, int32_t expert_in_dtype) {
  Routed out(in, expert_in_dtype, kF32);
  Tensor r(kF32, {in.tokens(), in.hidden()});
  const seatrt_rms_norm_args norm_r{sizeof norm_r, in.x.get(), get(in.router_gain), kEps, r.get()};
  require_ok(api().rms_norm(context(), nullptr, &norm_r), "rms_norm");
  const seatrt_linear_args product{sizeof product, r.get(), in.router, out.logits.get()};
  require_ok(api().linear(context(), nullptr, &product), "linear");
  const seatrt_router_topk_args topk{sizeof topk, out.logits.get(), in.top_k, in.renormalize ? 1 : 0,
                                     get(in.scale), out.ids.get(), out.weights.get()};
  require_ok(api().router_topk(context(), nullptr, &topk), "router_topk");
  const seatrt_rms_norm_args norm_e{sizeof norm_e, in.x.get(), get(in.expert_gain), kEps, out.expert_in.get()};
  require_ok(api().rms_norm(context(), nullptr, &norm_e), "rms_norm");
  return out;
}

// The same dtype, shape and bytes.
bool same_bytes(const Tensor& a, const Tensor& b) {
  const seatrt_tensor da = a.desc(), db = b.desc();
  return da.dtype == db.dtype && a.numel() == b.numel() &&
         std::memcmp(da.data, db.data, static_cast<size_t>(a.numel()) * cpu::dtype_size(da.dtype)) == 0;
}

bool all_nan(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!std::isnan(t.at(i))) return false;
  return true;
}

bool ids_unwritten(Tensor& ids) {
  for (int64_t i = 0; i < ids.numel(); ++i)
    if (ids.as<int32_t>()[i] != kUnwrittenId) return false;
  return true;
}

// Route against the sequence, and route with the logits or expert_in left
// out against route with both.
void check_against_sequence(const Inputs& in, int32_t expert_in_dtype) {
  const Routed want = run_sequence(in, expert_in_dtype);
  const Routed got = run_route(in, true, true, expert_in_dtype);
  CHECK(same_bytes(got.ids, want.ids));
  CHECK(same_bytes(got.weights, want.weights));
  CHECK(same_bytes(got.expert_in, want.expert_in));
  CHECK(same_bytes(got.logits, want.logits));

  // Without logits: the op's own temporary, the same routing; the caller's
  // logits buffer is not touched.
  const Routed no_logits = run_route(in, false, true, expert_in_dtype);
  CHECK(same_bytes(no_logits.ids, want.ids));
  CHECK(same_bytes(no_logits.weights, want.weights));
  CHECK(same_bytes(no_logits.expert_in, want.expert_in));
  CHECK(all_nan(no_logits.logits));

  // Without expert_in (its gain then ignored): the same routing and logits.
  const Routed no_expert_in = run_route(in, true, false, expert_in_dtype);
  CHECK(same_bytes(no_expert_in.ids, want.ids));
  CHECK(same_bytes(no_expert_in.weights, want.weights));
  CHECK(same_bytes(no_expert_in.logits, want.logits));
  CHECK(all_nan(no_expert_in.expert_in));
}

// Guards against comparing two degenerate results: some row routes to
// experts other than 0..k-1, and the weights are not all equal.
void check_not_degenerate(Tensor& ids, const Tensor& weights, int32_t top_k) {
  bool other_ids = false;
  for (int64_t i = 0; i < ids.numel(); ++i) other_ids = other_ids || ids.as<int32_t>()[i] >= top_k;
  CHECK(other_ids);
  const std::vector<double> w = weights.values();
  CHECK(*std::max_element(w.begin(), w.end()) > *std::min_element(w.begin(), w.end()) * 1.01);
}

}  // namespace

TEST_CASE("route equals rms_norm + linear + router_topk + rms_norm bit for bit at the Gemma-4 router shape") {
  std::mt19937 rng(161);
  const int64_t hidden = 2816, experts = 128;
  // As the Gemma-4 plugin calls it: a dense BF16 router, a small F32 router
  // gain (its folded H^-1/2 scale), a BF16 experts' input gain, a
  // per-expert scale, top-8, renormalised.
  const test::DenseWeight router = test::random_dense(rng, kBF16, experts, hidden, 0.5);
  const Tensor router_gain = test::random_tensor(rng, kF32, {hidden}, 0.01, 0.05);
  const Tensor expert_gain = test::random_tensor(rng, kBF16, {hidden}, 0.2, 2.0);
  const Tensor scale = test::random_tensor(rng, kF32, {experts}, 0.5, 2.0);
  for (const int64_t tokens : {1, 5, 32}) {
    for (const int32_t x_dtype : {kF32, kBF16}) {
      CAPTURE(tokens, x_dtype);
      const Inputs in{test::random_tensor(rng, x_dtype, {tokens, hidden}, -4, 4), &router.weight, &router_gain,
                      &expert_gain, &scale, 8, true};
      check_against_sequence(in, x_dtype);
      Routed got = run_route(in, true, true, x_dtype);
      check_not_degenerate(got.ids, got.weights, in.top_k);
    }
  }
}

TEST_CASE("route on a small odd shape (NVFP4 router, no gains, no scale, not renormalised) against double too") {
  std::mt19937 rng(162);
  const int64_t tokens = 7, hidden = 96, experts = 10, k = 3;
  const test::Nvfp4Weight router = test::random_nvfp4(rng, experts, hidden, 448.0f * 6.0f / 2.0f);
  const Inputs in{test::random_tensor(rng, kF32, {tokens, hidden}, -3, 3), &router.weight, nullptr, nullptr,
                  nullptr, static_cast<int32_t>(k), false};
  check_against_sequence(in, kF32);

  // The formulas in double: r = x (mean(x^2) + eps)^-1/2, logits = r W^T,
  // softmax over all experts, the k largest in descending order.
  Routed got = run_route(in, true, true);
  const std::vector<double> x = in.x.values(), w = router.dense();
  std::vector<double> r(x.size());
  for (int64_t t = 0; t < tokens; ++t) {
    const auto first = static_cast<size_t>(t * hidden), last = first + static_cast<size_t>(hidden);
    double sum = 0.0;
    for (size_t i = first; i < last; ++i) sum += x[i] * x[i];
    const double inv = 1.0 / std::sqrt(sum / static_cast<double>(hidden) + kEps);
    for (size_t i = first; i < last; ++i) r[i] = x[i] * inv;
  }
  const std::vector<double> logits = test::matmul_t(r, w, tokens, experts, hidden);
  CHECK(test::max_rel_err(got.expert_in.values(), r) < 1e-6);
  CHECK(test::max_rel_err(got.logits.values(), logits) < 1e-5);
  // Logits within 1e-5 of the largest |logit| of the reference order as it
  // does where its logits are twice that apart (checked, not assumed).
  double largest = 0.0;
  for (double l : logits) largest = std::max(largest, std::fabs(l));
  for (int64_t t = 0; t < tokens; ++t) {
    CAPTURE(t);
    const double* row = logits.data() + t * experts;
    std::vector<int32_t> order(static_cast<size_t>(experts));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return row[a] > row[b]; });
    for (int64_t j = 0; j < k; ++j)
      REQUIRE(row[order[static_cast<size_t>(j)]] - row[order[static_cast<size_t>(j + 1)]] > 2e-5 * largest);
    const double top = row[order[0]];
    double denom = 0.0;
    for (int64_t e = 0; e < experts; ++e) denom += std::exp(row[e] - top);
    for (int64_t j = 0; j < k; ++j) {
      const int32_t id = got.ids.as<int32_t>()[t * k + j];
      CHECK(id == order[static_cast<size_t>(j)]);
      const double p = std::exp(row[order[static_cast<size_t>(j)]] - top) / denom;
      CHECK(std::fabs(got.weights.at(t * k + j) - p) <= 1e-5 * p);
    }
  }
}

TEST_CASE("route with BF16 logits: the same routing from the fp32 logits, the logits stored rounded") {
  std::mt19937 rng(163);
  const int64_t tokens = 6, hidden = 256, experts = 64;
  const test::DenseWeight router = test::random_dense(rng, kBF16, experts, hidden, 0.5);
  const Tensor router_gain = test::random_tensor(rng, kBF16, {hidden}, 0.05, 0.2);
  const Tensor scale = test::random_tensor(rng, kBF16, {experts}, 0.5, 2.0);
  const Inputs in{test::random_tensor(rng, kBF16, {tokens, hidden}, -4, 4), &router.weight, &router_gain, nullptr,
                  &scale, 8, true};
  const Routed f32 = run_route(in, true, true, kBF16, kF32);
  const Routed bf16 = run_route(in, true, true, kBF16, kBF16);
  CHECK(same_bytes(bf16.ids, f32.ids));
  CHECK(same_bytes(bf16.weights, f32.weights));
  CHECK(same_bytes(bf16.expert_in, f32.expert_in));
  for (int64_t i = 0; i < f32.logits.numel(); ++i) {
    CAPTURE(i);
    REQUIRE(bf16.logits.at(i) == test::bf16_value(test::bf16_nearest(static_cast<float>(f32.logits.at(i)))));
  }
}

TEST_CASE("route reports a non-finite logit by name and writes no routing") {
  std::mt19937 rng(164);
  const test::DenseWeight router = test::random_dense(rng, kBF16, 16, 64, 0.5);
  Inputs in{test::random_tensor(rng, kF32, {3, 64}, -2, 2), &router.weight, nullptr, nullptr, nullptr, 4, true};
  in.x.set(1 * 64 + 5, INFINITY);
  Routed out(in, kF32, kF32);
  const seatrt_route_args a = route_args(in, out, true, true);
  std::string msg;
  CHECK(test::take_status(api().route(context(), nullptr, &a), &msg) == SEATRT_ERR_NON_FINITE);
  CHECK_THAT(msg, Catch::Contains("route: ") && Catch::Contains("logits[1, ") && Catch::Contains("not finite"));
  CHECK(ids_unwritten(out.ids));
  CHECK(all_nan(out.weights));
}

TEST_CASE("route refuses bad arguments with a status naming the problem and writes nothing") {
  std::mt19937 rng(165);
  const int64_t tokens = 3, hidden = 32, experts = 80, k = 4;
  const test::DenseWeight router = test::random_dense(rng, kBF16, experts, hidden, 0.5);
  const test::DenseWeight narrow_router = test::random_dense(rng, kBF16, experts, hidden - 16, 0.5);
  const test::DenseWeight few_experts = test::random_dense(rng, kBF16, 10, hidden, 0.5);
  const Tensor gain = test::random_tensor(rng, kF32, {hidden}, 0.5, 1.5);
  const Tensor scale = test::random_tensor(rng, kF32, {experts}, 0.5, 2.0);
  Inputs in{test::random_tensor(rng, kF32, {tokens, hidden}, -2, 2), &router.weight, &gain, &gain, &scale,
            static_cast<int32_t>(k), true};
  const Tensor x_before = in.x;
  Routed out(in, kF32, kF32);
  const Routed before = out;
  const seatrt_route_args good = route_args(in, out, true, true);

  using Args = seatrt_route_args;
  const auto refuses = [&](const std::function<void(Args&)>& change, seatrt_status_code code, const std::string& what) {
    CAPTURE(what);
    Args a = good;
    change(a);
    std::string msg;
    CHECK(test::take_status(api().route(context(), nullptr, &a), &msg) == code);
    CHECK_THAT(msg, Catch::Contains("route: ") && Catch::Contains(what));
    CHECK(same_bytes(out.ids, before.ids));
    CHECK(same_bytes(out.weights, before.weights));
    CHECK(same_bytes(out.expert_in, before.expert_in));
    CHECK(same_bytes(out.logits, before.logits));
    CHECK(same_bytes(in.x, x_before));
  };
  constexpr auto kInvalid = SEATRT_ERR_INVALID_ARG;
  constexpr auto kUnsupported = SEATRT_ERR_UNSUPPORTED;
  std::string msg;
  CHECK(test::take_status(api().route(context(), nullptr, nullptr), &msg) == kInvalid);
  CHECK_THAT(msg, Catch::Contains("route: args is NULL"));
  CHECK(test::take_status(api().route(nullptr, nullptr, &good), &msg) == kInvalid);
  CHECK_THAT(msg, Catch::Contains("context is NULL"));
  refuses([](Args& a) { a.struct_size = 8; }, kInvalid, "struct_size");
  // NULL pointers.
  refuses([](Args& a) { a.x = nullptr; }, kInvalid, "x is NULL");
  refuses([](Args& a) { a.router = nullptr; }, kInvalid, "router is NULL");
  refuses([](Args& a) { a.ids = nullptr; }, kInvalid, "ids is NULL");
  refuses([](Args& a) { a.weights = nullptr; }, kInvalid, "weights is NULL");
  // eps.
  refuses([](Args& a) { a.eps = -1e-6f; }, kInvalid, "eps must be finite and >= 0");
  refuses([](Args& a) { a.eps = NAN; }, kInvalid, "eps must be finite and >= 0");
  refuses([](Args& a) { a.eps = INFINITY; }, kInvalid, "eps must be finite and >= 0");
  // x [T, H] in an activation dtype.
  Tensor x3(kF32, {tokens, 1, hidden});
  refuses([&](Args& a) { a.x = x3.get(); }, kInvalid, "x must have 2 axes");
  Tensor x_ints(kI32, {tokens, hidden});
  refuses([&](Args& a) { a.x = x_ints.get(); }, kUnsupported, "x has dtype I32");
  // The router: a weight the provider reads, in_features H; E from it.
  refuses([&](Args& a) { a.router = &narrow_router.weight; }, kInvalid,
          "router.in_features 16 is not x's hidden size 32");
  seatrt_linear_weight bad_layout = router.weight;
  bad_layout.layout = 99;
  refuses([&](Args& a) { a.router = &bad_layout; }, kUnsupported, "router: DENSE layout 99");
  // top_k in 1..min(64, E).
  refuses([](Args& a) { a.top_k = 0; }, kInvalid, "top_k 0 is outside 1..64");
  refuses([](Args& a) { a.top_k = 65; }, kInvalid, "top_k 65 is outside 1..64");
  refuses([&](Args& a) {
    a.router = &few_experts.weight;
    a.top_k = 11;
  }, kInvalid, "top_k 11 is outside 1..10");
  // Gains [H] and the per-expert scale [E], activation dtypes.
  const Tensor short_gain = test::random_tensor(rng, kF32, {hidden - 1}, 0.5, 1.5);
  const Tensor int_gain(kI32, {hidden});
  refuses([&](Args& a) { a.router_norm_weight = short_gain.get(); }, kInvalid, "router_norm_weight has shape [31]");
  refuses([&](Args& a) { a.router_norm_weight = int_gain.get(); }, kUnsupported, "router_norm_weight has dtype I32");
  refuses([&](Args& a) { a.expert_norm_weight = short_gain.get(); }, kInvalid, "expert_norm_weight has shape [31]");
  const Tensor scale_2d = test::random_tensor(rng, kF32, {1, experts}, 0.5, 1.5);
  refuses([&](Args& a) { a.per_expert_scale = scale_2d.get(); }, kInvalid, "per_expert_scale must have 1 axes");
  refuses([&](Args& a) { a.per_expert_scale = gain.get(); }, kInvalid, "per_expert_scale has shape [32]");
  // ids I32 [T, k]; weights F32 [T, k].
  Tensor ids_f32(kF32, {tokens, k}), ids_long(kI32, {tokens, k + 1});
  refuses([&](Args& a) { a.ids = ids_f32.get(); }, kUnsupported, "ids has dtype F32");
  refuses([&](Args& a) { a.ids = ids_long.get(); }, kInvalid, "ids has shape [3, 5]");
  Tensor weights_bf16(kBF16, {tokens, k}), weights_tall(kF32, {tokens + 1, k});
  refuses([&](Args& a) { a.weights = weights_bf16.get(); }, kUnsupported, "weights has dtype BF16");
  refuses([&](Args& a) { a.weights = weights_tall.get(); }, kInvalid, "weights has shape [4, 4]");
  // expert_in [T, H]; logits [T, E]; activation dtypes.
  Tensor ein_half(kF32, {tokens, hidden / 2}), ein_ints(kI32, {tokens, hidden});
  refuses([&](Args& a) { a.expert_in = ein_half.get(); }, kInvalid, "expert_in has shape [3, 16]");
  refuses([&](Args& a) { a.expert_in = ein_ints.get(); }, kUnsupported, "expert_in has dtype I32");
  Tensor logits_short(kF32, {tokens, experts - 1});
  refuses([&](Args& a) { a.logits = logits_short.get(); }, kInvalid, "logits has shape [3, 79]");
  // No output may alias x or another output (views of the right shape and
  // dtype over the other's memory).
  seatrt_tensor over_x = out.ids.desc();
  over_x.data = in.x.desc().data;
  refuses([&](Args& a) { a.ids = &over_x; }, kInvalid, "ids must not alias x");
  refuses([&](Args& a) { a.expert_in = const_cast<seatrt_tensor*>(in.x.get()); }, kInvalid,
          "expert_in must not alias x");
  seatrt_tensor weights_over_ids = out.weights.desc();
  weights_over_ids.data = out.ids.desc().data;
  refuses([&](Args& a) { a.weights = &weights_over_ids; }, kInvalid, "weights must not alias ids");
  seatrt_tensor logits_over_weights = out.logits.desc();
  logits_over_weights.data = out.weights.desc().data;
  refuses([&](Args& a) { a.logits = &logits_over_weights; }, kInvalid, "logits must not alias weights");
  seatrt_tensor logits_over_ein = out.logits.desc();
  logits_over_ein.data = out.expert_in.desc().data;
  refuses([&](Args& a) { a.logits = &logits_over_ein; }, kInvalid, "logits must not alias expert_in");

  // expert_norm_weight is not read without expert_in; the unbroken
  // arguments work and write every output.
  Args no_expert_in = good;
  no_expert_in.expert_in = nullptr;
  no_expert_in.expert_norm_weight = short_gain.get();
  CHECK(test::take_status(api().route(context(), nullptr, &no_expert_in)) == SEATRT_OK);
  CHECK(all_nan(out.expert_in));
  CHECK_FALSE(ids_unwritten(out.ids));
  CHECK(test::take_status(api().route(context(), nullptr, &good)) == SEATRT_OK);
  CHECK_FALSE(std::isnan(out.expert_in.at(0)));
  CHECK_FALSE(std::isnan(out.logits.at(0)));
}
