// The CUDA planner's fused norms against the CPU provider running the same
// primitive nodes one by one: a layer end (rms_norm, add, scale, rms_norm =>
// add_rms_norm), a head's rms_norm + rope, and a MoE layer's end on
// prefill-sized graphs (=> add_rms_norm_pair), fresh random inputs each run,
// at the Gemma-4 shapes: hidden 2816 rows, head dims 256 and 512 with
// proportional (partly zero) frequencies.  Bounds as test_ops.cpp: F32
// outputs 1e-4 relative, BF16 1e-2 (the primitives round the normed branch
// to BF16 before the add, the fused kernels keep it in fp32).
#include <catch2/catch.hpp>

#include <cmath>

#include "fusions.hpp"
#include "harness.hpp"

using namespace seatrt_test;
using Catch::Matchers::Contains;

namespace {

double bound(int32_t dtype) { return dtype == SEATRT_DTYPE_BF16 ? 1e-2 : 1e-4; }

double compare(const Pair& out) { return rel_error(cuda().download_f32(out.cuda), cpu().download_f32(out.cpu)); }

template <typename Bytes>
std::vector<uint8_t> raw_bytes(const std::vector<Bytes>& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(v.data());
  return std::vector<uint8_t>(p, p + v.size() * sizeof(Bytes));
}

// A layer end over one provider's tensors.
fusions::AddRmsNorm layer_end(bool gpu, Pair& branch, const Pair* branch_w, Pair& residual, float scale,
                              const Pair* out_w, Pair* out) {
  auto pick = [gpu](Pair* p) { return p ? (gpu ? &p->cuda : &p->cpu) : nullptr; };
  return fusions::AddRmsNorm{pick(&branch), branch_w ? &branch_w->on(gpu) : nullptr, pick(&residual), 1e-6f, scale,
                             out_w ? &out_w->on(gpu) : nullptr, pick(out)};
}

}  // namespace

TEST_CASE("planned add_rms_norm equals its nodes (residual and the next norm), with and without gains") {
  for (int32_t dt : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
    for (int64_t rows : {1, 7, 64, 300}) {
      for (int variant = 0; variant < 4; ++variant) {
        // 0: both gains + out, scale 0.5; 1: no gains + out, 2: no out (rows
        // in registers, n 2816); 3: both gains + out at n 5000 (> 256
        // threads x 16: the multi-pass loop kernel).
        const int64_t n = variant == 3 ? 5000 : 2816;
        const float scale = variant == 0 || variant == 3 ? 0.5f : 1.0f;
        Pair x = both_random(dt, {rows, n}, 2.0f), residual = both_random(dt, {rows, n}, 8.0f);
        // Gains: one BF16 (the dtype-generic kernel), or all F32 with F32
        // rows except at 7 rows (the plain-load instance).
        const int32_t xw_dtype = dt == SEATRT_DTYPE_F32 && rows != 7 ? SEATRT_DTYPE_F32 : SEATRT_DTYPE_BF16;
        Pair xw = both_random(xw_dtype, {n}), ow = both_random(SEATRT_DTYPE_F32, {n});
        Pair out = both_empty(dt, {rows, n});
        const bool gains = variant == 0 || variant == 3, with_out = variant != 2;
        fusions::GraphBuilder gc, gp;
        for (bool gpu : {true, false})
          fusions::add_rms_norm(gpu ? gc : gp, layer_end(gpu, x, gains ? &xw : nullptr, residual, scale,
                                                         gains ? &ow : nullptr, with_out ? &out : nullptr));
        const std::string plan = plan_vs_eager(gc, gp, "add_rms_norm");
        INFO("dtype " << dt << " rows " << rows << " variant " << variant << "\n" << plan);
        CHECK_THAT(plan, Contains("add_rms_norm"));
        CHECK(compare(residual) <= bound(dt));
        if (with_out) CHECK(compare(out) <= bound(dt));
      }
    }
  }
}

TEST_CASE("planned layer end with the next norm written over the branch equals its nodes (buffer reuse)") {
  const int64_t rows = 3, n = 2816;
  Pair x = both_random(SEATRT_DTYPE_F32, {rows, n}), residual = both_random(SEATRT_DTYPE_F32, {rows, n}, 4.0f);
  Pair w = both_random(SEATRT_DTYPE_F32, {n});
  fusions::GraphBuilder gc, gp;
  for (bool gpu : {true, false}) fusions::add_rms_norm(gpu ? gc : gp, layer_end(gpu, x, &w, residual, 1.0f, &w, &x));
  const std::string plan = plan_vs_eager(gc, gp, "add_rms_norm, out over the branch");
  INFO(plan);
  CHECK(compare(residual) <= 1e-4);
  CHECK(compare(x) <= 1e-4);
}

TEST_CASE("planned rms_norm + rope equals its nodes in place, including zero frequencies (partial rotary)") {
  for (int32_t dt : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
    for (int64_t d : {256, 512}) {
      for (bool weighted : {true, false}) {
        // 5 tokens: a block per row (decode); 4,800 / 4,200 rows: one warp per
        // row (prompts, >= 4096 rows).
        for (int64_t T : {int64_t{5}, d == 512 ? int64_t{2100} : int64_t{300}}) {
          const int64_t H = d == 512 ? 2 : 16;
          std::vector<int32_t> pos = {0, 1, 17, 1000, 131071};
          for (int64_t t = 5; t < T; ++t) pos.push_back(static_cast<int32_t>((t * 7919) % 131072));
          std::vector<float> f(static_cast<size_t>(d / 2));
          for (size_t i = 0; i < f.size(); ++i)
            f[i] = (d == 512 && i >= f.size() / 4)
                       ? 0.0f
                       : std::pow(10000.0f, -2.0f * static_cast<float>(i) / static_cast<float>(d));
          Pair p = both(raw_bytes(pos), SEATRT_DTYPE_I32, {T});
          Pair fr = both(raw_bytes(f), SEATRT_DTYPE_F32, {d / 2});
          Pair x = both_random(dt, {T, H, d}, 3.0f), w = both_random(SEATRT_DTYPE_BF16, {d});
          fusions::GraphBuilder gc, gp;
          for (bool gpu : {true, false})
            fusions::rms_norm_rope(gpu ? gc : gp, gpu ? &x.cuda : &x.cpu, weighted ? &w.on(gpu) : nullptr, 1e-6f,
                                   &p.on(gpu), &fr.on(gpu), "0/attn/q");
          const std::string plan = plan_vs_eager(gc, gp, "rms_norm + rope");
          INFO("dtype " << dt << " head dim " << d << " weighted " << weighted << " tokens " << T << "\n" << plan);
          CHECK(compare(x) <= bound(dt));
        }
      }
    }
  }
}

TEST_CASE("plan refuses a graph whose norm has a bad gain, with a status") {
  Pair x = both_random(SEATRT_DTYPE_F32, {2, 64}), r = both_random(SEATRT_DTYPE_F32, {2, 64});
  Pair short_w = both_random(SEATRT_DTYPE_F32, {63});
  fusions::GraphBuilder g;
  fusions::add_rms_norm(g, fusions::AddRmsNorm{&x.cuda, &short_w.cuda, &r.cuda, 1e-6f, 1.0f, nullptr, nullptr});
  const seatrt_op_graph graph = g.graph("bad gain", 1);
  seatrt_plan* plan = nullptr;
  CHECK(code_of(cuda().api().plan(cuda().ctx(), &graph, &plan)) != SEATRT_OK);
  CHECK(plan == nullptr);
}

TEST_CASE("planned MoE layer end equals its nodes, with and without gains and out (add_rms_norm_pair)") {
  for (int32_t dt : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
    for (int64_t rows : {1, 7, 64, 300}) {
      for (int variant = 0; variant < 5; ++variant) {
        // 0: every gain + out, scale 0.5; 1: no gains + out; 2: no out;
        // 3: n 5000 (the multi-pass kernel); 4: out over the dense branch.
        const int64_t n = variant == 3 ? 5000 : 2816;
        const float scale = variant == 0 || variant == 3 ? 0.5f : 1.0f;
        const bool gains = variant != 1, with_out = variant != 2, alias = variant == 4;
        Pair a = both_random(dt, {rows, n}, 2.0f), b = both_random(dt, {rows, n}, 0.3f);
        Pair residual = both_random(dt, {rows, n}, 8.0f), out = both_empty(dt, {rows, n});
        const int32_t bw_dtype = dt == SEATRT_DTYPE_F32 && rows != 7 ? SEATRT_DTYPE_F32 : SEATRT_DTYPE_BF16;
        Pair aw = both_random(SEATRT_DTYPE_F32, {n}), bw = both_random(bw_dtype, {n});
        Pair sw = both_random(SEATRT_DTYPE_F32, {n}), ow = both_random(SEATRT_DTYPE_F32, {n});
        Pair m1 = both_empty(dt, {rows, n});
        Pair& next = alias ? a : out;
        fusions::GraphBuilder gc, gp;
        for (bool gpu : {true, false}) {
          const fusions::AddRmsNorm end = layer_end(gpu, m1, gains ? &sw : nullptr, residual, scale,
                                                    gains ? &ow : nullptr, with_out ? &next : nullptr);
          fusions::moe_end(gpu ? gc : gp, fusions::MoeEnd{&a.on(gpu), gains ? &aw.on(gpu) : nullptr, end.branch,
                                                          gpu ? &b.cuda : &b.cpu, gains ? &bw.on(gpu) : nullptr, end});
        }
        const std::string plan = plan_vs_eager(gc, gp, "moe end");
        INFO("dtype " << dt << " rows " << rows << " variant " << variant << "\n" << plan);
        // Prefill-sized graphs may take the pair kernel; decode-sized ones
        // take add_rms_norm.
        if (!alias) CHECK_THAT(plan, Contains("add_rms_norm"));
        CHECK(compare(residual) <= bound(dt));
        if (with_out) CHECK(compare(next) <= bound(dt));
      }
    }
  }
}
