// The CUDA planner's router (router_norm, input_norm, router linear,
// router_topk => route, when the logits and the normed router input are
// read by no later node) against the CPU provider running the same nodes
// one by one, fresh random inputs each run, at the Gemma-4 router shape (H
// 2816, 128 experts, top-8, per-expert scale, renormalised).  1..32 tokens
// take the fused kernel, 33 and 200 the provider's own sequence; BF16
// logits, BF16 gains, logits read by a later node or no experts' input
// norm may take the primitives.  The logits may differ by fp32 rounding
// order (1e-4 relative, the linear bound); the chosen experts must agree
// except where a row's k-th and (k+1)-th probabilities are within that
// rounding (none with these inputs: the check says which row if one is).
// Outputs start as NaN bytes, so an element left unwritten fails.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "fixtures_gpu.hpp"
#include "fusions.hpp"
#include "harness.hpp"
#include "scoped_env.hpp"

using namespace seatrt_test;
using Catch::Matchers::Contains;

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
  int32_t logits_dtype;
  bool logits_read;  // a later node reads the logits (the fusion must keep them)
  int32_t gain_dtype;
  bool expert_in;
};

// The router's nodes over one provider's tensors, and a copy of the logits
// after them when they are read.
struct RouterTensors {
  Pair x, rg, eg, pes, r, ein, lg, lg_copy, ids, wts;
};

void add_router(fusions::GraphBuilder& g, bool gpu, RouterTensors& t, const seatrt_linear_weight* w, int32_t k,
                bool expert_in, bool logits_read) {
  auto pick = [gpu](Pair& p) { return gpu ? &p.cuda : &p.cpu; };
  fusions::route(g, fusions::Route{&t.x.on(gpu), &t.rg.on(gpu), &t.eg.on(gpu), 1e-6f, pick(t.r),
                                   expert_in ? pick(t.ein) : nullptr, w, pick(t.lg), k, &t.pes.on(gpu), pick(t.ids),
                                   pick(t.wts)});
  if (logits_read) g.add<SEATRT_OP_ELEMENTWISE>(ew(SEATRT_EW_COPY, pick(t.lg), nullptr, 0.0f, pick(t.lg_copy)), "head/copy");
}

void run_case(const Case& c) {
  const int64_t H = 2816, E = 128, k = 8, T = c.tokens;
  INFO("tokens " << T << " logits dtype " << c.logits_dtype << " logits read " << c.logits_read << " gain dtype "
                 << c.gain_dtype << " expert_in " << c.expert_in);
  const std::vector<uint8_t> raw = random_values(E * H, SEATRT_DTYPE_BF16, 0.05f);
  const seatrt_linear_weight wc = dense_bf16_weight(cuda(), raw, E, H), wp = dense_bf16_weight(cpu(), raw, E, H);
  RouterTensors t{both_random(SEATRT_DTYPE_F32, {T, H}, 3.0f), gains(H, c.gain_dtype), gains(H, c.gain_dtype),
                  gains(E, SEATRT_DTYPE_F32), poisoned(SEATRT_DTYPE_F32, {T, H}), poisoned(SEATRT_DTYPE_F32, {T, H}),
                  poisoned(c.logits_dtype, {T, E}), poisoned(SEATRT_DTYPE_F32, {T, E}),
                  poisoned(SEATRT_DTYPE_I32, {T, k}), poisoned(SEATRT_DTYPE_F32, {T, k})};
  fusions::GraphBuilder gc, gp;
  add_router(gc, true, t, &wc, static_cast<int32_t>(k), c.expert_in, c.logits_read);
  add_router(gp, false, t, &wp, static_cast<int32_t>(k), c.expert_in, c.logits_read);
  const std::string plan = plan_vs_eager(gc, gp, "router");
  INFO(plan);
  const bool fusable = T <= 32 && c.logits_dtype == SEATRT_DTYPE_F32 && !c.logits_read &&
                       c.gain_dtype == SEATRT_DTYPE_F32 && c.expert_in;
  if (fusable) CHECK_THAT(plan, Contains("route"));

  if (c.logits_read) {
    const double bound = c.logits_dtype == SEATRT_DTYPE_BF16 ? 1e-2 : 1e-4;
    CHECK(rel_error(cuda().download_f32(t.lg_copy.cuda), cpu().download_f32(t.lg_copy.cpu)) <= bound);
  }
  if (c.expert_in) CHECK(rel_error(cuda().download_f32(t.ein.cuda), cpu().download_f32(t.ein.cpu)) <= 1e-5);
  // Ids row by row: a differing row is allowed only where the CPU's k-th and
  // (k+1)-th logits are within the logits' rounding.
  const std::vector<uint8_t> gi = cuda().download(t.ids.cuda), ri = cpu().download(t.ids.cpu);
  const std::vector<float> ref_logits = cpu().download_f32(t.lg.cpu);
  for (int64_t row = 0; row < T; ++row) {
    const bool same = std::equal(gi.begin() + row * k * 4, gi.begin() + (row + 1) * k * 4, ri.begin() + row * k * 4);
    if (same) continue;
    std::vector<float> v(ref_logits.begin() + row * E, ref_logits.begin() + (row + 1) * E);
    std::sort(v.begin(), v.end(), std::greater<float>());
    INFO("row " << row << ": experts differ; CPU logits k-th " << v[k - 1] << ", (k+1)-th " << v[k]);
    CHECK(v[k - 1] - v[k] <= 1e-4f * std::max(1.0f, std::abs(v[k - 1])));
  }
  CHECK(rel_error(cuda().download_f32(t.wts.cuda), cpu().download_f32(t.wts.cpu)) <= 1e-4);
}

// plan() of a graph on the CUDA provider's tensors: its status code.
seatrt_status_code plan_code(fusions::GraphBuilder& g) {
  const seatrt_op_graph graph = g.graph("router", 1);
  seatrt_plan* plan = nullptr;
  const seatrt_status_code code = code_of(cuda().api().plan(cuda().ctx(), &graph, &plan));
  if (plan) cuda().api().plan_destroy(cuda().ctx(), plan);
  return code;
}

}  // namespace

TEST_CASE("planned route equals its nodes: fused decode sizes and the sequence beyond") {
  for (int64_t T : {1, 2, 7, 8, 9, 16, 32, 33, 200}) run_case({T, SEATRT_DTYPE_F32, false, SEATRT_DTYPE_F32, true});
  run_case({5, SEATRT_DTYPE_F32, true, SEATRT_DTYPE_F32, true});    // logits read later: kept
  run_case({5, SEATRT_DTYPE_F32, false, SEATRT_DTYPE_F32, false});  // no experts' input norm
  run_case({5, SEATRT_DTYPE_BF16, true, SEATRT_DTYPE_F32, true});   // BF16 logits
  run_case({5, SEATRT_DTYPE_F32, false, SEATRT_DTYPE_BF16, true});  // BF16 gains
  run_case({40, SEATRT_DTYPE_F32, false, SEATRT_DTYPE_F32, true});  // the sequence, its own logits
}

TEST_CASE("planned route with SEATRT_ROUTE=groups (blocks per 8 tokens) equals its nodes") {
  ScopedEnv env("SEATRT_ROUTE", "groups");
  for (int64_t T : {1, 8, 9, 15, 16, 17, 24, 31, 32}) run_case({T, SEATRT_DTYPE_F32, false, SEATRT_DTYPE_F32, true});
  run_case({20, SEATRT_DTYPE_F32, true, SEATRT_DTYPE_F32, true});    // logits read later
  run_case({20, SEATRT_DTYPE_F32, false, SEATRT_DTYPE_F32, false});  // no experts' input norm
}

TEST_CASE("route launched from a plan again and again routes every row, bit-identical (the counter left zero)") {
  // The fused kernel's last block resets the arrival counter; a stale count
  // would make no block (or the wrong one) route, leaving NaN ids.  The
  // outputs are poisoned before every launch.
  const int64_t H = 2816, E = 128, k = 8, T = 16;
  const std::vector<uint8_t> raw = random_values(E * H, SEATRT_DTYPE_BF16, 0.05f);
  const seatrt_linear_weight wc = dense_bf16_weight(cuda(), raw, E, H);
  RouterTensors t{both_random(SEATRT_DTYPE_F32, {T, H}, 3.0f), gains(H, SEATRT_DTYPE_F32), gains(H, SEATRT_DTYPE_F32),
                  gains(E, SEATRT_DTYPE_F32), poisoned(SEATRT_DTYPE_F32, {T, H}), poisoned(SEATRT_DTYPE_F32, {T, H}),
                  poisoned(SEATRT_DTYPE_F32, {T, E}), poisoned(SEATRT_DTYPE_F32, {T, E}),
                  poisoned(SEATRT_DTYPE_I32, {T, k}), poisoned(SEATRT_DTYPE_F32, {T, k})};
  fusions::GraphBuilder g;
  add_router(g, true, t, &wc, static_cast<int32_t>(k), true, false);
  Plan plan(cuda(), g, "router", 0);
  const auto& a = cuda().api();
  std::vector<uint8_t> first_ids, first_w, first_ein;
  for (int rep = 0; rep < 5; ++rep) {
    INFO("launch " << rep);
    const std::vector<uint8_t> nan_ids(static_cast<size_t>(T * k * 4), 0xFF);
    ok(a.copy(cuda().ctx(), cuda().stream(), t.ids.cuda.data, a.device_kind, nan_ids.data(), SEATRT_DEVICE_CPU,
              nan_ids.size()),
       "poison ids");
    ok(a.copy(cuda().ctx(), cuda().stream(), t.wts.cuda.data, a.device_kind, nan_ids.data(), SEATRT_DEVICE_CPU,
              nan_ids.size()),
       "poison weights");
    plan.launch();
    const auto gi = cuda().download(t.ids.cuda), gw = cuda().download(t.wts.cuda), ge = cuda().download(t.ein.cuda);
    for (size_t i = 0; i < gi.size(); i += 4) {
      int32_t id;
      std::memcpy(&id, gi.data() + i, 4);
      CHECK((id >= 0 && id < E));
    }
    if (rep == 0) {
      first_ids = gi;
      first_w = gw;
      first_ein = ge;
    } else {
      CHECK(gi == first_ids);
      CHECK(gw == first_w);
      CHECK(ge == first_ein);
    }
  }
}

TEST_CASE("plan refuses a router with bad arguments before writing anything") {
  const int64_t H = 64, E = 8, T = 2;
  const std::vector<uint8_t> raw = random_values(E * H, SEATRT_DTYPE_BF16);
  const seatrt_linear_weight wc = dense_bf16_weight(cuda(), raw, E, H);
  Pair x = both_random(SEATRT_DTYPE_F32, {T, H}), r = poisoned(SEATRT_DTYPE_F32, {T, H});
  Pair lg = poisoned(SEATRT_DTYPE_F32, {T, E});
  Pair ids = poisoned(SEATRT_DTYPE_I32, {T, 2}), wts = poisoned(SEATRT_DTYPE_F32, {T, 2});
  Pair bad_ids = poisoned(SEATRT_DTYPE_I32, {T, 3});
  const auto base = [&] {
    return fusions::Route{&x.cuda, nullptr, nullptr, 1e-6f, &r.cuda, nullptr, &wc, &lg.cuda, 2, nullptr, &ids.cuda,
                          &wts.cuda};
  };
  auto refused = [&](const fusions::Route& a, const char* what) {
    INFO(what);
    fusions::GraphBuilder g;
    fusions::route(g, a);
    CHECK(plan_code(g) != SEATRT_OK);
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
  a = base();
  a.router = nullptr;
  refused(a, "no router");
  for (uint8_t b : cuda().download(ids.cuda)) CHECK(b == 0xFF);
  for (uint8_t b : cuda().download(lg.cuda)) CHECK(b == 0xFF);
}
