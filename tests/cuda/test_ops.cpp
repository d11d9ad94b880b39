// CUDA vs CPU provider on the element-level ops, fresh random inputs each
// run.  Bounds: F32 outputs 1e-4 relative (max error / max magnitude), BF16
// outputs 1e-2 (one bf16 rounding apart).
#include <catch2/catch.hpp>

#include "harness.hpp"

using namespace seatrt_test;

namespace {

double bound(int32_t dtype) { return dtype == SEATRT_DTYPE_BF16 ? 1e-2 : 1e-4; }

double compare(const Pair& out) { return rel_error(cuda().download_f32(out.cuda), cpu().download_f32(out.cpu)); }

}  // namespace

TEST_CASE("elementwise ops agree") {
  for (int32_t dt : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
    for (int op = SEATRT_EW_ADD; op <= SEATRT_EW_COPY; ++op) {
      Pair a = both_random(dt, {7, 3, 96}), b = both_random(dt, {3, 96}), out = both_empty(dt, {7, 3, 96});
      const float alpha = op == SEATRT_EW_SOFTCAP ? 1.5f : 0.37f;
      auto ec = ew(op, &a.cuda, &b.cuda, alpha, &out.cuda);
      auto ep = ew(op, &a.cpu, &b.cpu, alpha, &out.cpu);
      ok(cuda().run<SEATRT_OP_ELEMENTWISE>(ec), "cuda elementwise");
      ok(cpu().run<SEATRT_OP_ELEMENTWISE>(ep), "cpu elementwise");
      INFO("op " << op << " dtype " << dt);
      CHECK(compare(out) <= bound(dt));
    }
  }
}

TEST_CASE("elementwise refuses mismatched shapes with a status") {
  Pair a = both_random(SEATRT_DTYPE_F32, {4, 8}), b = both_random(SEATRT_DTYPE_F32, {5}), out = both_empty(SEATRT_DTYPE_F32, {4, 8});
  auto ec = ew(SEATRT_EW_ADD, &a.cuda, &b.cuda, 0.0f, &out.cuda);
  CHECK(code_of(cuda().run<SEATRT_OP_ELEMENTWISE>(ec)) == SEATRT_ERR_INVALID_ARG);
}

TEST_CASE("embedding, rms_norm, glu, gather_rows agree") {
  const int32_t dt = SEATRT_DTYPE_BF16;
  std::vector<int32_t> ids = {5, 0, 63, 17, 5};
  Pair id = both(std::vector<uint8_t>(reinterpret_cast<uint8_t*>(ids.data()), reinterpret_cast<uint8_t*>(ids.data() + ids.size())),
                 SEATRT_DTYPE_I32, {5});
  Pair table = both_random(dt, {64, 160}), emb = both_empty(SEATRT_DTYPE_F32, {5, 160});
  seatrt_embedding_args ec{sizeof(seatrt_embedding_args), &id.cuda, &table.cuda, 7.5f, &emb.cuda};
  seatrt_embedding_args ep{sizeof(seatrt_embedding_args), &id.cpu, &table.cpu, 7.5f, &emb.cpu};
  ok(cuda().run<SEATRT_OP_EMBEDDING>(ec), "cuda embedding");
  ok(cpu().run<SEATRT_OP_EMBEDDING>(ep), "cpu embedding");
  CHECK(compare(emb) <= 1e-6);

  // 64, 256 and 512 columns with 4101 rows: head-sized rows of a prompt, one
  // warp per row (a partial last block of 8); with 37 rows, and 160 and 2816
  // columns: rows held in registers; 5000 (> 256 threads x 16): the
  // multi-pass loop kernel.
  // BF16, and F32 with F32 gains (the register kernel's plain-load instance).
  for (int32_t nd : {SEATRT_DTYPE_BF16, SEATRT_DTYPE_F32})
  for (auto [rows, n] : {std::pair<int64_t, int64_t>{4101, 64}, {4101, 256}, {4101, 512}, {37, 256}, {37, 160},
                         {37, 2816}, {37, 5000}, {1, 2816}}) {
    INFO("dtype " << nd << " rows " << rows << " cols " << n);
    Pair x = both_random(nd, {rows, n}, 3.0f), w = both_random(nd, {n}), out = both_empty(nd, {rows, n});
    seatrt_rms_norm_args rc{sizeof(seatrt_rms_norm_args), &x.cuda, &w.cuda, 1e-6f, &out.cuda, 0.0f};
    seatrt_rms_norm_args rp{sizeof(seatrt_rms_norm_args), &x.cpu, &w.cpu, 1e-6f, &out.cpu, 0.0f};
    ok(cuda().run<SEATRT_OP_RMS_NORM>(rc), "cuda rms_norm");
    ok(cpu().run<SEATRT_OP_RMS_NORM>(rp), "cpu rms_norm");
    CHECK(compare(out) <= bound(nd));
    rc.weight = nullptr;
    rp.weight = nullptr;
    ok(cuda().run<SEATRT_OP_RMS_NORM>(rc), "cuda rms_norm (no gain)");
    ok(cpu().run<SEATRT_OP_RMS_NORM>(rp), "cpu rms_norm (no gain)");
    CHECK(compare(out) <= bound(nd));
  }

  for (int act = SEATRT_ACT_GELU_TANH; act <= SEATRT_ACT_GELU_ERF; ++act) {
    // gate and up as strided views of one fused [M, 2I] tensor.
    Pair fused = both_random(SEATRT_DTYPE_F32, {9, 2 * 48}, 2.0f), out = both_empty(SEATRT_DTYPE_F32, {9, 48});
    auto halves = [](seatrt_tensor t, int64_t off) {
      t.shape[1] = 48;
      t.data = static_cast<float*>(t.data) + off;
      return t;
    };
    seatrt_tensor gc = halves(fused.cuda, 0), uc = halves(fused.cuda, 48), gp = halves(fused.cpu, 0), up = halves(fused.cpu, 48);
    seatrt_glu_args ac{sizeof(seatrt_glu_args), act, &gc, &uc, &out.cuda};
    seatrt_glu_args ap{sizeof(seatrt_glu_args), act, &gp, &up, &out.cpu};
    ok(cuda().run<SEATRT_OP_GLU>(ac), "cuda glu");
    ok(cpu().run<SEATRT_OP_GLU>(ap), "cpu glu");
    INFO("activation " << act);
    CHECK(compare(out) <= 1e-4);
  }

  std::vector<int32_t> idx = {3, 3, 0, 7};
  Pair ix = both(std::vector<uint8_t>(reinterpret_cast<uint8_t*>(idx.data()), reinterpret_cast<uint8_t*>(idx.data() + idx.size())),
                 SEATRT_DTYPE_I32, {4});
  Pair src = both_random(dt, {8, 40}), dst = both_empty(dt, {4, 40});
  seatrt_gather_rows_args gc{sizeof(seatrt_gather_rows_args), &src.cuda, &ix.cuda, &dst.cuda};
  seatrt_gather_rows_args gp{sizeof(seatrt_gather_rows_args), &src.cpu, &ix.cpu, &dst.cpu};
  ok(cuda().run<SEATRT_OP_GATHER_ROWS>(gc), "cuda gather_rows");
  ok(cpu().run<SEATRT_OP_GATHER_ROWS>(gp), "cpu gather_rows");
  CHECK(compare(dst) == 0.0);
}

TEST_CASE("rope agrees, including zero frequencies (partial rotary)") {
  for (int64_t d : {256, 512}) {
    const int64_t T = 5, H = 4;
    std::vector<int32_t> pos = {0, 1, 17, 1000, 4095};
    std::vector<float> f(static_cast<size_t>(d / 2));
    for (size_t i = 0; i < f.size(); ++i)
      f[i] = (d == 512 && i >= f.size() / 4) ? 0.0f : std::pow(10000.0f, -2.0f * static_cast<float>(i) / static_cast<float>(d));
    Pair p = both(std::vector<uint8_t>(reinterpret_cast<uint8_t*>(pos.data()), reinterpret_cast<uint8_t*>(pos.data() + T)),
                  SEATRT_DTYPE_I32, {T});
    Pair fr = both(std::vector<uint8_t>(reinterpret_cast<uint8_t*>(f.data()), reinterpret_cast<uint8_t*>(f.data() + f.size())),
                   SEATRT_DTYPE_F32, {d / 2});
    Pair x = both_random(SEATRT_DTYPE_BF16, {T, H, d}), out = both_empty(SEATRT_DTYPE_F32, {T, H, d});
    seatrt_rope_args rc{sizeof(seatrt_rope_args), &x.cuda, &p.cuda, &fr.cuda, &out.cuda, 0, {}};
    seatrt_rope_args rp{sizeof(seatrt_rope_args), &x.cpu, &p.cpu, &fr.cpu, &out.cpu, 0, {}};
    ok(cuda().run<SEATRT_OP_ROPE>(rc), "cuda rope");
    ok(cpu().run<SEATRT_OP_ROPE>(rp), "cpu rope");
    INFO("head dim " << d);
    CHECK(compare(out) <= 1e-4);
  }
}

TEST_CASE("router_topk agrees on ids and weights") {
  const int64_t T = 33, E = 128, k = 8;
  std::vector<float> scale(E);
  for (auto& s : scale) s = 0.5f + std::uniform_real_distribution<float>(0.0f, 1.0f)(rng());
  Pair lg = both_random(SEATRT_DTYPE_F32, {T, E}, 2.0f), ids = both_empty(SEATRT_DTYPE_I32, {T, k}),
       w = both_empty(SEATRT_DTYPE_F32, {T, k});
  Pair pes = both(std::vector<uint8_t>(reinterpret_cast<uint8_t*>(scale.data()), reinterpret_cast<uint8_t*>(scale.data() + E)),
                  SEATRT_DTYPE_F32, {E});
  seatrt_router_topk_args rc{sizeof(seatrt_router_topk_args), &lg.cuda, k, 1, &pes.cuda, &ids.cuda, &w.cuda, 0, 0, 0, 0.0f, nullptr};
  seatrt_router_topk_args rp{sizeof(seatrt_router_topk_args), &lg.cpu, k, 1, &pes.cpu, &ids.cpu, &w.cpu, 0, 0, 0, 0.0f, nullptr};
  ok(cuda().run<SEATRT_OP_ROUTER_TOPK>(rc), "cuda router");
  ok(cpu().run<SEATRT_OP_ROUTER_TOPK>(rp), "cpu router");
  CHECK(cuda().download(ids.cuda) == cpu().download(ids.cpu));
  CHECK(compare(w) <= 1e-5);
}
