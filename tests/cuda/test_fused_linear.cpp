// The CUDA planner's fused linears and norms (the projections of one input
// => linear_multi; gate, up, glu => linear_glu; norms of one input =>
// rms_norm_multi) against the CPU provider running the same primitive nodes
// one by one, fresh random inputs each run, at the Gemma-4 shapes and
// partial tiles: decode rows take the fused launches (x staged, split into
// planes or BF16), prefill rows and the benchmark switches that leave the
// defaults take the single operations.  Bounds as test_ops.cpp:
// F32 outputs 1e-4 relative, BF16 1e-2.  Outputs start as NaN bytes, so an
// element left unwritten fails.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <vector>

#include "fixtures_gpu.hpp"
#include "fusions.hpp"
#include "harness.hpp"

using namespace seatrt_test;
using Catch::Matchers::Contains;

namespace {

double bound(int32_t dtype) { return dtype == SEATRT_DTYPE_BF16 ? 1e-2 : 1e-4; }

double compare(const Pair& out) { return rel_error(cuda().download_f32(out.cuda), cpu().download_f32(out.cpu)); }

Pair poisoned(int32_t dtype, int64_t rows, int64_t cols) {
  const size_t bytes = static_cast<size_t>(rows * cols) * (dtype == SEATRT_DTYPE_F32 ? 4 : 2);
  return both(std::vector<uint8_t>(bytes, 0xFF), dtype, {rows, cols});
}

bool all_poison(const seatrt_tensor& t) {
  for (uint8_t b : cuda().download(t))
    if (b != 0xFF) return false;
  return true;
}

// plan() of a graph built on the CUDA provider's tensors: its status code.
seatrt_status_code plan_code(fusions::GraphBuilder& g) {
  const seatrt_op_graph graph = g.graph("bad arguments", 1);
  seatrt_plan* plan = nullptr;
  const seatrt_status_code code = code_of(cuda().api().plan(cuda().ctx(), &graph, &plan));
  if (plan) cuda().api().plan_destroy(cuda().ctx(), plan);
  return code;
}

// SEATRT_LINEAR_DECODE settings: the default, then the switches that change
// the fused launch (three planes, no staging) or make it fall back.
const char* const kVariants[] = {"", "p3", "nostage", "nosplit", "plain"};

struct Weights {
  std::vector<seatrt_linear_weight> c, p;
};

Weights random_weights(const std::vector<int64_t>& outs, int64_t k, bool tiled) {
  Weights w;
  for (int64_t n : outs) {
    const HostNvfp4 h = random_nvfp4(n, k);
    w.c.push_back(nvfp4_weight(cuda(), h, tiled));
    w.p.push_back(nvfp4_weight(cpu(), h, false));
  }
  return w;
}

}  // namespace

// q/k/v of a sliding layer (three outputs) and of a full layer (two, no v),
// and a shape with partial 16-row tiles in every weight.
TEST_CASE("planned linear_multi equals its linear nodes: q/k/v shapes, decode and prefill rows, variants") {
  const std::vector<std::pair<std::vector<int64_t>, int64_t>> shapes = {
      {{4096, 2048, 2048}, 2816}, {{8192, 1024}, 2816}, {{264, 40, 136, 24}, 704}};
  for (const char* variant : kVariants) {
    setenv("SEATRT_LINEAR_DECODE", variant, 1);
    for (const auto& [outs, k] : shapes) {
      const bool tiled = outs.size() == 2;  // the SM90 layout once
      const Weights w = random_weights(outs, k, tiled);
      for (int64_t m : {1, 3, 8, 16, 32, 100}) {
        for (int32_t xdt : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
          Pair x = both_random(xdt, {m, k});
          std::vector<Pair> out;
          for (int64_t n : outs) out.push_back(poisoned(SEATRT_DTYPE_F32, m, n));
          fusions::GraphBuilder gc, gp;
          for (bool gpu : {true, false}) {
            std::vector<const seatrt_linear_weight*> ws;
            std::vector<seatrt_tensor*> os;
            for (size_t i = 0; i < outs.size(); ++i) {
              ws.push_back(gpu ? &w.c[i] : &w.p[i]);
              os.push_back(gpu ? &out[i].cuda : &out[i].cpu);
            }
            fusions::linear_multi(gpu ? gc : gp, gpu ? &x.cuda : &x.cpu, ws, os);
          }
          const std::string plan = plan_vs_eager(gc, gp, "linear_multi");
          INFO("variant '" << variant << "' K " << k << " M " << m << " x dtype " << xdt << "\n" << plan);
          CHECK_THAT(plan, Contains("linear_multi"));
          for (size_t i = 0; i < outs.size(); ++i) {
            INFO("out " << i << " N " << outs[i]);
            CHECK(compare(out[i]) <= 1e-4);
          }
        }
      }
    }
  }
  unsetenv("SEATRT_LINEAR_DECODE");
}

// The dense MLP's gate/up (2112 x 2816) and a partial tile at K = 704; F32
// and BF16 outputs (the fused epilogue rounds once, like glu).
TEST_CASE("planned linear_glu equals gate, up and glu: dense MLP shapes, decode and prefill rows, variants") {
  for (const char* variant : kVariants) {
    setenv("SEATRT_LINEAR_DECODE", variant, 1);
    for (auto [inter, k] : {std::pair<int64_t, int64_t>{2112, 2816}, {264, 704}}) {
      const Weights w = random_weights({inter, inter}, k, inter == 264);
      for (int64_t m : {1, 3, 5, 8, 16, 32, 100}) {
        for (int32_t xdt : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
          for (int32_t odt : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
            Pair x = both_random(xdt, {m, k}, 0.5f), out = poisoned(odt, m, inter);
            Pair gate_t = both_empty(SEATRT_DTYPE_F32, {m, inter}), up_t = both_empty(SEATRT_DTYPE_F32, {m, inter});
            fusions::GraphBuilder gc, gp;
            fusions::linear_glu(gc, SEATRT_ACT_GELU_TANH, &x.cuda, &w.c[0], &w.c[1], &gate_t.cuda, &up_t.cuda, &out.cuda);
            fusions::linear_glu(gp, SEATRT_ACT_GELU_TANH, &x.cpu, &w.p[0], &w.p[1], &gate_t.cpu, &up_t.cpu, &out.cpu);
            const std::string plan = plan_vs_eager(gc, gp, "linear_glu");
            INFO("variant '" << variant << "' I " << inter << " K " << k << " M " << m << " x dtype " << xdt
                             << " out dtype " << odt << "\n" << plan);
            CHECK_THAT(plan, Contains("linear_glu"));
            CHECK(compare(out) <= bound(odt));
          }
        }
      }
    }
  }
  unsetenv("SEATRT_LINEAR_DECODE");
}

TEST_CASE("planned rms_norm_multi equals its norms: 1-4 gains (some none), rows in registers and wide") {
  for (int32_t dt : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
    for (int64_t n : {2816, 5000}) {  // 5000 > 256 threads x 16: an rms_norm per output
      for (int64_t rows : {1, 7, 64}) {
        for (int32_t count = 1; count <= 4; ++count) {
          Pair x = both_random(dt, {rows, n}, 3.0f);
          std::vector<Pair> gains, outs;
          for (int32_t i = 0; i < count; ++i) {
            // Mixed gain dtypes, and all F32 with F32 x (the register kernel's
            // plain-load instance) except at 7 rows.
            const bool all_f32 = dt == SEATRT_DTYPE_F32 && rows != 7;
            gains.push_back(both_random(all_f32 || i % 2 ? SEATRT_DTYPE_F32 : SEATRT_DTYPE_BF16, {n}));
            outs.push_back(poisoned(dt, rows, n));
          }
          fusions::GraphBuilder gc, gp;
          for (bool gpu : {true, false}) {
            std::vector<const seatrt_tensor*> ws;
            std::vector<seatrt_tensor*> os;
            for (size_t i = 0; i < gains.size(); ++i) {
              ws.push_back(i == 2 ? nullptr : &gains[i].on(gpu));  // the third output has no gain
              os.push_back(gpu ? &outs[i].cuda : &outs[i].cpu);
            }
            fusions::rms_norm_multi(gpu ? gc : gp, gpu ? &x.cuda : &x.cpu, 1e-6f, ws, os);
          }
          const std::string plan = plan_vs_eager(gc, gp, "rms_norm_multi");
          INFO("dtype " << dt << " N " << n << " rows " << rows << " count " << count << "\n" << plan);
          // Two norms of one input are the MoE router's pattern.
          if (count == 2) CHECK_THAT(plan, Contains("rms_norm_multi"));
          for (int32_t i = 0; i < count; ++i) {
            INFO("out " << i);
            CHECK(compare(outs[i]) <= bound(dt));
          }
        }
      }
    }
  }
}

TEST_CASE("plan refuses graphs whose fusable nodes have bad arguments, before writing anything") {
  const Weights w = random_weights({64, 64, 32}, 256, false);
  Pair x = both_random(SEATRT_DTYPE_F32, {2, 256}), x_short = both_random(SEATRT_DTYPE_F32, {2, 128});
  Pair o0 = poisoned(SEATRT_DTYPE_F32, 2, 64), o1 = poisoned(SEATRT_DTYPE_F32, 2, 64);
  auto multi = [&](const seatrt_tensor* xin) {
    fusions::GraphBuilder g;
    fusions::linear_multi(g, xin, {&w.c[0], &w.c[1]}, {&o0.cuda, &o1.cuda});
    return plan_code(g);
  };
  CHECK(multi(&x_short.cuda) != SEATRT_OK);  // in_features 256, x 128 columns
  CHECK(all_poison(o0.cuda));
  CHECK(all_poison(o1.cuda));

  Pair t0 = poisoned(SEATRT_DTYPE_F32, 2, 64), t1 = poisoned(SEATRT_DTYPE_F32, 2, 32);
  auto glu = [&](const seatrt_linear_weight* up, seatrt_tensor* up_t, int32_t act) {
    fusions::GraphBuilder g;
    fusions::linear_glu(g, act, &x.cuda, &w.c[0], up, &t0.cuda, up_t, &o0.cuda);
    return plan_code(g);
  };
  CHECK(glu(&w.c[2], &t1.cuda, SEATRT_ACT_GELU_TANH) != SEATRT_OK);  // gate 64 vs up 32 outputs
  CHECK(glu(&w.c[1], &o1.cuda, 7) != SEATRT_OK);                      // no activation 7
  CHECK(all_poison(o0.cuda));

  Pair xn = both_random(SEATRT_DTYPE_F32, {2, 64}), short_gain = both_random(SEATRT_DTYPE_F32, {63});
  fusions::GraphBuilder g;
  fusions::rms_norm_multi(g, &xn.cuda, 1e-6f, {nullptr, &short_gain.cuda}, {&o0.cuda, &o1.cuda});
  CHECK(plan_code(g) != SEATRT_OK);
  CHECK(all_poison(o0.cuda));
  CHECK(all_poison(o1.cuda));
}
