// The CUDA provider's route (ABI 1.5) against the CPU provider running the
// sequence the operation stands for (rms_norm_multi of x with the router's
// and the experts' gains, the router Linear, router_topk), fresh random
// inputs each run, at the Gemma-4 router shape (H 2816, 128 experts, top-8,
// per-expert scale, renormalised).  1..32 tokens take the fused kernel, 33
// and 200 the provider's own sequence; a BF16 logits buffer and BF16 gains
// take the sequence too.  The logits may differ by fp32 rounding order
// (1e-4 relative, the linear bound); the chosen experts must agree except
// where a row's k-th and (k+1)-th probabilities are within that rounding
// (none with these inputs: the check says which row if one is).  Outputs
// start as NaN bytes, so an element left unwritten fails.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "fixtures_gpu.hpp"
#include "harness.hpp"
#include "scoped_env.hpp"

using namespace seatrt_test;

namespace {

Pair poisoned(int32_t dtype, std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return both(std::vector<uint8_t>(static_cast<size_t>(n) * elem_bytes(dtype), 0xFF), dtype, shape);
}

Pair gains(int64_t n, int32_t dtype) {
  // Non-trivial gains: 0.5 .. 1.5, never 1.
  std::vector<float> g(static_cast<size_t>(n));
  for (auto& v : g) v = 0.5f + std::uniform_real_distribution<float>(0.0f, 1.0f)(rng());
  std::vector<uint8_t> raw(reinterpret_cast<uint8_t*>(g.data()), reinterpret_cast<uint8_t*>(g.data() + n));
  if (dtype == SEATRT_DTYPE_BF16) {
    raw.clear();
    for (float v : g) {
      uint32_t b;
      std::memcpy(&b, &v, 4);
      const uint16_t h = static_cast<uint16_t>((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
      raw.push_back(static_cast<uint8_t>(h & 0xFF));
      raw.push_back(static_cast<uint8_t>(h >> 8));
    }
  }
  return both(raw, dtype, {n});
}

struct Case {
  int64_t tokens;
  int32_t logits_dtype;  // 0: no logits buffer given
  int32_t gain_dtype;
  bool expert_in;
};

void run_case(const Case& c) {
  const int64_t H = 2816, E = 128, k = 8, T = c.tokens;
  const float eps = 1e-6f;
  INFO("tokens " << T << " logits dtype " << c.logits_dtype << " gain dtype " << c.gain_dtype << " expert_in "
                 << c.expert_in);
  const std::vector<uint8_t> raw = random_values(E * H, SEATRT_DTYPE_BF16, 0.05f);
  const seatrt_linear_weight wc = dense_bf16_weight(cuda(), raw, E, H), wp = dense_bf16_weight(cpu(), raw, E, H);
  Pair x = both_random(SEATRT_DTYPE_F32, {T, H}, 3.0f);
  Pair rg = gains(H, c.gain_dtype), eg = gains(H, c.gain_dtype), pes = gains(E, SEATRT_DTYPE_F32);
  Pair ids = poisoned(SEATRT_DTYPE_I32, {T, k}), wts = poisoned(SEATRT_DTYPE_F32, {T, k});
  Pair ein = poisoned(SEATRT_DTYPE_F32, {T, H});
  Pair lg = poisoned(c.logits_dtype ? c.logits_dtype : SEATRT_DTYPE_F32, {T, E});

  seatrt_route_args a{};
  a.struct_size = sizeof a;
  a.eps = eps;
  a.x = &x.cuda;
  a.router_norm_weight = &rg.cuda;
  a.router = &wc;
  a.top_k = static_cast<int32_t>(k);
  a.renormalize = 1;
  a.per_expert_scale = &pes.cuda;
  a.expert_norm_weight = &eg.cuda;
  a.expert_in = c.expert_in ? &ein.cuda : nullptr;
  a.logits = c.logits_dtype ? &lg.cuda : nullptr;
  a.ids = &ids.cuda;
  a.weights = &wts.cuda;
  ok(cuda().api().route(cuda().ctx(), cuda().stream(), &a), "cuda route");

  // The CPU provider's sequence.
  Pair r = both_empty(SEATRT_DTYPE_F32, {T, H}), ein_ref = both_empty(SEATRT_DTYPE_F32, {T, H}),
       lg_ref = both_empty(SEATRT_DTYPE_F32, {T, E});
  seatrt_rms_norm_multi_args n{};
  n.struct_size = sizeof n;
  n.count = 2;
  n.x = &x.cpu;
  n.eps = eps;
  n.weights[0] = &rg.cpu;
  n.outs[0] = &r.cpu;
  n.weights[1] = &eg.cpu;
  n.outs[1] = &ein_ref.cpu;
  ok(cpu().api().rms_norm_multi(cpu().ctx(), cpu().stream(), &n), "cpu rms_norm_multi");
  seatrt_linear_args l{sizeof l, &r.cpu, &wp, &lg_ref.cpu};
  ok(cpu().api().linear(cpu().ctx(), cpu().stream(), &l), "cpu linear");
  seatrt_router_topk_args t{sizeof t, &lg_ref.cpu, static_cast<int32_t>(k), 1, &pes.cpu, &ids.cpu, &wts.cpu};
  ok(cpu().api().router_topk(cpu().ctx(), cpu().stream(), &t), "cpu router_topk");

  if (c.logits_dtype) {
    const double bound = c.logits_dtype == SEATRT_DTYPE_BF16 ? 1e-2 : 1e-4;
    CHECK(rel_error(cuda().download_f32(lg.cuda), cpu().download_f32(lg_ref.cpu)) <= bound);
  }
  if (c.expert_in) CHECK(rel_error(cuda().download_f32(ein.cuda), cpu().download_f32(ein_ref.cpu)) <= 1e-5);
  // Ids row by row: a differing row is allowed only where the CPU's k-th and
  // (k+1)-th logits are within the logits' rounding.
  const std::vector<uint8_t> gi = cuda().download(ids.cuda), ri = cpu().download(ids.cpu);
  const std::vector<float> ref_logits = cpu().download_f32(lg_ref.cpu);
  for (int64_t row = 0; row < T; ++row) {
    const bool same = std::equal(gi.begin() + row * k * 4, gi.begin() + (row + 1) * k * 4, ri.begin() + row * k * 4);
    if (same) continue;
    std::vector<float> v(ref_logits.begin() + row * E, ref_logits.begin() + (row + 1) * E);
    std::sort(v.begin(), v.end(), std::greater<float>());
    INFO("row " << row << ": experts differ; CPU logits k-th " << v[k - 1] << ", (k+1)-th " << v[k]);
    CHECK(v[k - 1] - v[k] <= 1e-4f * std::max(1.0f, std::abs(v[k - 1])));
  }
  CHECK(rel_error(cuda().download_f32(wts.cuda), cpu().download_f32(wts.cpu)) <= 1e-4);
}

}  // namespace

TEST_CASE("route agrees with the CPU provider's sequence: fused decode sizes and the sequence beyond") {
  REQUIRE(SEATRT_HAS_FIELD(&cuda().api(), seatrt_kernel_api, route));
  REQUIRE(cuda().api().route != nullptr);
  for (int64_t T : {1, 2, 7, 8, 9, 16, 32, 33, 200}) run_case({T, SEATRT_DTYPE_F32, SEATRT_DTYPE_F32, true});
  run_case({5, 0, SEATRT_DTYPE_F32, true});                   // no logits buffer: the kernel's own
  run_case({5, SEATRT_DTYPE_F32, SEATRT_DTYPE_F32, false});  // no expert_in
  run_case({5, SEATRT_DTYPE_BF16, SEATRT_DTYPE_F32, true});  // BF16 logits: the sequence
  run_case({5, SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16, true});  // BF16 gains: the sequence
  run_case({40, 0, SEATRT_DTYPE_F32, true});                  // the sequence, its own logits
}

TEST_CASE("route with SEATRT_ROUTE=groups (blocks per 8 tokens) agrees with the CPU provider's sequence") {
  ScopedEnv env("SEATRT_ROUTE", "groups");
  for (int64_t T : {1, 8, 9, 15, 16, 17, 24, 31, 32}) run_case({T, SEATRT_DTYPE_F32, SEATRT_DTYPE_F32, true});
  run_case({20, 0, SEATRT_DTYPE_F32, true});                   // no logits buffer: the kernel's own
  run_case({20, SEATRT_DTYPE_F32, SEATRT_DTYPE_F32, false});  // no expert_in
}

TEST_CASE("route: repeated launches on one stream reuse the arrival counter (bit-identical results)") {
  // The fused kernel's last block resets the counter; a stale count would
  // make no block (or the wrong one) route, leaving NaN ids.
  const int64_t H = 2816, E = 128, k = 8, T = 4;
  const std::vector<uint8_t> raw = random_values(E * H, SEATRT_DTYPE_BF16, 0.05f);
  const seatrt_linear_weight wc = dense_bf16_weight(cuda(), raw, E, H);
  Pair x = both_random(SEATRT_DTYPE_F32, {T, H}, 3.0f);
  std::vector<uint8_t> first_ids, first_w;
  for (int rep = 0; rep < 5; ++rep) {
    Pair ids = poisoned(SEATRT_DTYPE_I32, {T, k}), wts = poisoned(SEATRT_DTYPE_F32, {T, k});
    seatrt_route_args a{};
    a.struct_size = sizeof a;
    a.eps = 1e-6f;
    a.x = &x.cuda;
    a.router = &wc;
    a.top_k = static_cast<int32_t>(k);
    a.renormalize = 0;
    a.ids = &ids.cuda;
    a.weights = &wts.cuda;
    ok(cuda().api().route(cuda().ctx(), cuda().stream(), &a), "cuda route");
    const auto gi = cuda().download(ids.cuda), gw = cuda().download(wts.cuda);
    for (size_t i = 0; i < gi.size(); i += 4) {
      int32_t id;
      std::memcpy(&id, gi.data() + i, 4);
      CHECK((id >= 0 && id < E));
    }
    if (rep == 0) {
      first_ids = gi;
      first_w = gw;
    } else {
      CHECK(gi == first_ids);
      CHECK(gw == first_w);
    }
  }
}

TEST_CASE("route replayed from a CUDA graph matches the eager call (the counter left zero by each replay)") {
  // The Gemma-4 decode step is captured once per batch size and replayed;
  // the route buffer (counter and logits) must exist before the capture
  // (the eager call makes it) and every replay must route every row.
  const seatrt_kernel_api& a = cuda().api();
  REQUIRE(a.graph_begin != nullptr);
  const int64_t H = 2816, E = 128, k = 8, T = 16;
  const std::vector<uint8_t> raw = random_values(E * H, SEATRT_DTYPE_BF16, 0.05f);
  const seatrt_linear_weight wc = dense_bf16_weight(cuda(), raw, E, H);
  Pair x = both_random(SEATRT_DTYPE_F32, {T, H}, 3.0f), ein = poisoned(SEATRT_DTYPE_F32, {T, H});
  Pair rg = gains(H, SEATRT_DTYPE_F32), eg = gains(H, SEATRT_DTYPE_F32);
  Pair ids = poisoned(SEATRT_DTYPE_I32, {T, k}), wts = poisoned(SEATRT_DTYPE_F32, {T, k});
  seatrt_route_args r{};
  r.struct_size = sizeof r;
  r.eps = 1e-6f;
  r.x = &x.cuda;
  r.router_norm_weight = &rg.cuda;
  r.router = &wc;
  r.top_k = static_cast<int32_t>(k);
  r.renormalize = 1;
  r.expert_norm_weight = &eg.cuda;
  r.expert_in = &ein.cuda;
  r.ids = &ids.cuda;
  r.weights = &wts.cuda;
  ok(a.route(cuda().ctx(), cuda().stream(), &r), "route (eager)");
  const auto want_ids = cuda().download(ids.cuda), want_w = cuda().download(wts.cuda),
             want_ein = cuda().download(ein.cuda);
  ok(a.graph_begin(cuda().ctx(), cuda().stream()), "graph_begin");
  ok(a.route(cuda().ctx(), cuda().stream(), &r), "route (captured)");
  seatrt_graph* g = nullptr;
  ok(a.graph_end(cuda().ctx(), cuda().stream(), &g), "graph_end");
  for (int rep = 0; rep < 3; ++rep) {
    INFO("replay " << rep);
    // Poison the outputs again so a replay that routes nothing fails.
    const std::vector<uint8_t> nan_ids(want_ids.size(), 0xFF), nan_w(want_w.size(), 0xFF);
    ok(a.copy(cuda().ctx(), cuda().stream(), ids.cuda.data, a.device_kind, nan_ids.data(), SEATRT_DEVICE_CPU,
              nan_ids.size()),
       "poison ids");
    ok(a.copy(cuda().ctx(), cuda().stream(), wts.cuda.data, a.device_kind, nan_w.data(), SEATRT_DEVICE_CPU,
              nan_w.size()),
       "poison weights");
    ok(a.graph_launch(cuda().ctx(), cuda().stream(), g), "graph_launch");
    ok(a.stream_sync(cuda().ctx(), cuda().stream()), "sync");
    CHECK(cuda().download(ids.cuda) == want_ids);
    CHECK(cuda().download(wts.cuda) == want_w);
    CHECK(cuda().download(ein.cuda) == want_ein);
  }
  a.graph_destroy(cuda().ctx(), g);
}

TEST_CASE("route refuses bad arguments before writing anything") {
  const int64_t H = 64, E = 8, T = 2;
  const std::vector<uint8_t> raw = random_values(E * H, SEATRT_DTYPE_BF16);
  const seatrt_linear_weight wc = dense_bf16_weight(cuda(), raw, E, H);
  Pair x = both_random(SEATRT_DTYPE_F32, {T, H});
  Pair ids = poisoned(SEATRT_DTYPE_I32, {T, 2}), wts = poisoned(SEATRT_DTYPE_F32, {T, 2});
  Pair bad_ids = poisoned(SEATRT_DTYPE_I32, {T, 3});
  const auto base = [&] {
    seatrt_route_args a{};
    a.struct_size = sizeof a;
    a.eps = 1e-6f;
    a.x = &x.cuda;
    a.router = &wc;
    a.top_k = 2;
    a.ids = &ids.cuda;
    a.weights = &wts.cuda;
    return a;
  };
  auto refused = [&](seatrt_route_args a, const char* what) {
    INFO(what);
    CHECK(code_of(cuda().api().route(cuda().ctx(), cuda().stream(), &a)) == SEATRT_ERR_INVALID_ARG);
  };
  auto a = base();
  a.top_k = 9;
  refused(a, "top_k > E");
  a = base();
  a.eps = -1.0f;
  refused(a, "negative eps");
  a = base();
  a.ids = &bad_ids.cuda;
  refused(a, "ids of the wrong shape");
  a = base();
  a.weights = &x.cuda;
  refused(a, "weights of x's shape");
  Pair both8 = poisoned(SEATRT_DTYPE_F32, {T, E}), ids8 = poisoned(SEATRT_DTYPE_I32, {T, E});
  a = base();
  a.top_k = static_cast<int32_t>(E);  // weights and logits then have one shape
  a.ids = &ids8.cuda;
  a.weights = &both8.cuda;
  a.logits = &both8.cuda;
  refused(a, "logits aliasing weights");
  for (uint8_t b : cuda().download(both8.cuda)) CHECK(b == 0xFF);
  a = base();
  a.router = nullptr;
  refused(a, "no router");
  for (uint8_t b : cuda().download(ids.cuda)) CHECK(b == 0xFF);
}
