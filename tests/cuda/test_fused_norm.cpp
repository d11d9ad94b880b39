// CUDA vs CPU provider on the ABI 1.1 fused norms (add_rms_norm,
// rms_norm_rope) and 1.4's add_rms_norm_pair (against the CPU provider's
// unfused sequence), fresh random inputs each run, at the Gemma-4 shapes:
// hidden 2816 rows, head dims 256 and 512 with proportional (partly zero)
// frequencies.  Bounds as test_ops.cpp: F32 outputs 1e-4 relative, BF16 1e-2.
#include <catch2/catch.hpp>

#include <cmath>

#include "harness.hpp"

using namespace seatrt_test;

namespace {

double bound(int32_t dtype) { return dtype == SEATRT_DTYPE_BF16 ? 1e-2 : 1e-4; }

double compare(const Pair& out) { return rel_error(cuda().download_f32(out.cuda), cpu().download_f32(out.cpu)); }

template <typename Bytes>
std::vector<uint8_t> raw_bytes(const std::vector<Bytes>& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(v.data());
  return std::vector<uint8_t>(p, p + v.size() * sizeof(Bytes));
}

void require_fused(const Provider& p) {
  REQUIRE(SEATRT_HAS_FIELD(&p.api(), seatrt_kernel_api, rms_norm_rope));
  REQUIRE(p.api().add_rms_norm != nullptr);
  REQUIRE(p.api().rms_norm_rope != nullptr);
}

}  // namespace

TEST_CASE("add_rms_norm agrees (residual and the second norm), with and without gains") {
  require_fused(cuda());
  require_fused(cpu());
  for (int32_t dt : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
    for (int64_t rows : {1, 7, 64, 300}) {
      for (int variant = 0; variant < 4; ++variant) {
        // 0: both gains + out, 1: no gains + out, 2: no out (rows in
        // registers, n 2816); 3: both gains + out at n 5000 (> 256 threads x
        // 16: the multi-pass loop kernel).
        const int64_t n = variant == 3 ? 5000 : 2816;
        const float scale = variant == 0 || variant == 3 ? 0.5f : 1.0f;
        Pair x = both_random(dt, {rows, n}, 2.0f), residual = both_random(dt, {rows, n}, 8.0f);
        // Gains: one BF16 (the dtype-generic kernel), or all F32 with F32
        // rows except at 7 rows (the plain-load instance).
        const int32_t xw_dtype = dt == SEATRT_DTYPE_F32 && rows != 7 ? SEATRT_DTYPE_F32 : SEATRT_DTYPE_BF16;
        Pair xw = both_random(xw_dtype, {n}), ow = both_random(SEATRT_DTYPE_F32, {n});
        Pair out = both_empty(dt, {rows, n});
        const bool gains = variant == 0 || variant == 3, with_out = variant != 2;
        seatrt_add_rms_norm_args ac{sizeof(ac),  &x.cuda, gains ? &xw.cuda : nullptr, &residual.cuda, 1e-6f, scale,
                                    gains ? &ow.cuda : nullptr, with_out ? &out.cuda : nullptr};
        seatrt_add_rms_norm_args ap{sizeof(ap), &x.cpu, gains ? &xw.cpu : nullptr, &residual.cpu, 1e-6f, scale,
                                    gains ? &ow.cpu : nullptr, with_out ? &out.cpu : nullptr};
        ok(cuda().api().add_rms_norm(cuda().ctx(), cuda().stream(), &ac), "cuda add_rms_norm");
        ok(cpu().api().add_rms_norm(cpu().ctx(), cpu().stream(), &ap), "cpu add_rms_norm");
        INFO("dtype " << dt << " rows " << rows << " variant " << variant);
        CHECK(compare(residual) <= bound(dt));
        if (with_out) CHECK(compare(out) <= bound(dt));
      }
    }
  }
}

TEST_CASE("add_rms_norm with out aliasing x agrees (the plugin reuses buffers)") {
  require_fused(cuda());
  const int64_t rows = 3, n = 2816;
  Pair x = both_random(SEATRT_DTYPE_F32, {rows, n}), residual = both_random(SEATRT_DTYPE_F32, {rows, n}, 4.0f);
  Pair w = both_random(SEATRT_DTYPE_F32, {n});
  seatrt_add_rms_norm_args ac{sizeof(ac), &x.cuda, &w.cuda, &residual.cuda, 1e-6f, 1.0f, &w.cuda, &x.cuda};
  seatrt_add_rms_norm_args ap{sizeof(ap), &x.cpu, &w.cpu, &residual.cpu, 1e-6f, 1.0f, &w.cpu, &x.cpu};
  ok(cuda().api().add_rms_norm(cuda().ctx(), cuda().stream(), &ac), "cuda add_rms_norm in place");
  ok(cpu().api().add_rms_norm(cpu().ctx(), cpu().stream(), &ap), "cpu add_rms_norm in place");
  CHECK(compare(residual) <= 1e-4);
  CHECK(compare(x) <= 1e-4);
}

TEST_CASE("rms_norm_rope agrees in place, including zero frequencies (partial rotary)") {
  require_fused(cuda());
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
          seatrt_rms_norm_rope_args rc{sizeof(rc), &x.cuda, weighted ? &w.cuda : nullptr, 1e-6f, 0, &p.cuda, &fr.cuda,
                                       &x.cuda};
          seatrt_rms_norm_rope_args rp{sizeof(rp), &x.cpu, weighted ? &w.cpu : nullptr, 1e-6f, 0, &p.cpu, &fr.cpu,
                                       &x.cpu};
          ok(cuda().api().rms_norm_rope(cuda().ctx(), cuda().stream(), &rc), "cuda rms_norm_rope");
          ok(cpu().api().rms_norm_rope(cpu().ctx(), cpu().stream(), &rp), "cpu rms_norm_rope");
          INFO("dtype " << dt << " head dim " << d << " weighted " << weighted << " tokens " << T);
          CHECK(compare(x) <= bound(dt));
        }
      }
    }
  }
}

TEST_CASE("the fused norms refuse bad arguments with a status") {
  require_fused(cuda());
  Pair x = both_random(SEATRT_DTYPE_F32, {2, 64}), short_w = both_random(SEATRT_DTYPE_F32, {63});
  seatrt_add_rms_norm_args a{sizeof(a), &x.cuda, &short_w.cuda, &x.cuda, 1e-6f, 1.0f, nullptr, nullptr};
  CHECK(code_of(cuda().api().add_rms_norm(cuda().ctx(), cuda().stream(), &a)) == SEATRT_ERR_INVALID_ARG);
  Pair x3 = both_random(SEATRT_DTYPE_F32, {2, 2, 7});
  std::vector<int32_t> pos = {0, 1};
  Pair p = both(raw_bytes(pos), SEATRT_DTYPE_I32, {2});
  Pair fr = both_random(SEATRT_DTYPE_F32, {3});
  seatrt_rms_norm_rope_args r{sizeof(r), &x3.cuda, nullptr, 1e-6f, 0, &p.cuda, &fr.cuda, &x3.cuda};
  CHECK(code_of(cuda().api().rms_norm_rope(cuda().ctx(), cuda().stream(), &r)) == SEATRT_ERR_INVALID_ARG);
}

TEST_CASE("add_rms_norm_pair equals rms_norm and two add_rms_norm, with and without gains and out") {
  const auto& api = cuda().api();
  REQUIRE(SEATRT_HAS_FIELD(&api, seatrt_kernel_api, add_rms_norm_pair));
  REQUIRE(api.add_rms_norm_pair != nullptr);
  for (int32_t dt : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
    for (int64_t rows : {1, 7, 64, 300}) {
      for (int variant = 0; variant < 5; ++variant) {
        // 0: every gain + out, scale 0.5; 1: no gains + out; 2: no out;
        // 3: n 5000 (the multi-pass kernel); 4: out aliasing a.
        const int64_t n = variant == 3 ? 5000 : 2816;
        const float scale = variant == 0 || variant == 3 ? 0.5f : 1.0f;
        const bool gains = variant != 1, with_out = variant != 2, alias = variant == 4;
        Pair a = both_random(dt, {rows, n}, 2.0f), b = both_random(dt, {rows, n}, 0.3f);
        Pair residual = both_random(dt, {rows, n}, 8.0f), out = both_empty(dt, {rows, n});
        const int32_t bw_dtype = dt == SEATRT_DTYPE_F32 && rows != 7 ? SEATRT_DTYPE_F32 : SEATRT_DTYPE_BF16;
        Pair aw = both_random(SEATRT_DTYPE_F32, {n}), bw = both_random(bw_dtype, {n});
        Pair sw = both_random(SEATRT_DTYPE_F32, {n}), ow = both_random(SEATRT_DTYPE_F32, {n});
        Pair s = both_empty(dt, {rows, n});  // the CPU sequence's sum
        seatrt_tensor* out_c = with_out ? (alias ? &a.cuda : &out.cuda) : nullptr;
        seatrt_add_rms_norm_pair_args ac{sizeof(ac), 1e-6f, &a.cuda, gains ? &aw.cuda : nullptr, &b.cuda,
                                         gains ? &bw.cuda : nullptr, gains ? &sw.cuda : nullptr, &residual.cuda,
                                         scale, 0, gains ? &ow.cuda : nullptr, out_c};
        ok(api.add_rms_norm_pair(cuda().ctx(), cuda().stream(), &ac), "cuda add_rms_norm_pair");
        const auto& cp = cpu().api();
        seatrt_rms_norm_args r1{sizeof(r1), &a.cpu, gains ? &aw.cpu : nullptr, 1e-6f, &s.cpu};
        ok(cp.rms_norm(cpu().ctx(), cpu().stream(), &r1), "cpu s = norm(a)");
        seatrt_add_rms_norm_args r2{sizeof(r2), &b.cpu, gains ? &bw.cpu : nullptr, &s.cpu, 1e-6f, 1.0f, nullptr, nullptr};
        ok(cp.add_rms_norm(cpu().ctx(), cpu().stream(), &r2), "cpu s += norm(b)");
        seatrt_add_rms_norm_args r3{sizeof(r3), &s.cpu, gains ? &sw.cpu : nullptr, &residual.cpu, 1e-6f, scale,
                                    gains ? &ow.cpu : nullptr, with_out ? &out.cpu : nullptr};
        ok(cp.add_rms_norm(cpu().ctx(), cpu().stream(), &r3), "cpu residual");
        INFO("dtype " << dt << " rows " << rows << " variant " << variant);
        // BF16: the CPU sequence rounds s to BF16 before its norm, the fused
        // operation keeps it in fp32.
        CHECK(compare(residual) <= bound(dt));
        if (with_out)
          CHECK(rel_error(cuda().download_f32(alias ? a.cuda : out.cuda), cpu().download_f32(out.cpu)) <= bound(dt));
      }
    }
  }
}

TEST_CASE("add_rms_norm_pair refuses bad arguments and writes nothing") {
  const auto& api = cuda().api();
  Pair a = both_random(SEATRT_DTYPE_F32, {2, 64}), b = both_random(SEATRT_DTYPE_F32, {2, 64});
  Pair r = both_random(SEATRT_DTYPE_F32, {2, 64}), short_w = both_random(SEATRT_DTYPE_F32, {63});
  Pair wide = both_random(SEATRT_DTYPE_F32, {2, 65});
  const std::vector<uint8_t> before = cuda().download(r.cuda);
  const auto call = [&](const seatrt_tensor* at, const seatrt_tensor* bt, const seatrt_tensor* w, seatrt_tensor* res,
                        float eps) {
    seatrt_add_rms_norm_pair_args x{sizeof(x), eps, at, w, bt, nullptr, nullptr, res, 1.0f, 0, nullptr, nullptr};
    return code_of(api.add_rms_norm_pair(cuda().ctx(), cuda().stream(), &x));
  };
  CHECK(call(&a.cuda, &b.cuda, &short_w.cuda, &r.cuda, 1e-6f) == SEATRT_ERR_INVALID_ARG);  // a_weight of 63
  CHECK(call(&a.cuda, &wide.cuda, nullptr, &r.cuda, 1e-6f) == SEATRT_ERR_INVALID_ARG);     // b of another shape
  CHECK(call(&a.cuda, &b.cuda, nullptr, &a.cuda, 1e-6f) == SEATRT_ERR_INVALID_ARG);        // residual aliases a
  CHECK(call(&a.cuda, &b.cuda, nullptr, &r.cuda, NAN) == SEATRT_ERR_INVALID_ARG);          // eps NaN
  CHECK(call(&a.cuda, nullptr, nullptr, &r.cuda, 1e-6f) == SEATRT_ERR_INVALID_ARG);        // b missing
  cuda().sync();
  CHECK(cuda().download(r.cuda) == before);
  CHECK(call(&a.cuda, &b.cuda, nullptr, &r.cuda, 1e-6f) == SEATRT_OK);
}
