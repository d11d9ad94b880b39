// See host_check.hpp.
#include <algorithm>
#include "host_check.hpp"

namespace pk {

static int check_attention(const Params& P, const LayerP& lp, int l, int B) {
  const int D = layer_d(l), hkv = layer_hkv(l), G = kHq / hkv, nq = layer_nqkv(l);
  const bool full = layer_full(l);
  const size_t kvn = size_t(kMaxB) * P.pages_per_seq * hkv * kPageTok * D;
  std::vector<uint8_t> kc = d2h(lp.kc, kvn), vc = d2h(lp.vc, kvn);
  std::vector<int> bt = d2h(P.block_table, size_t(kMaxB) * P.pages_per_seq);
  std::vector<float> qkv = d2h(P.qkv, size_t(B) * nq);
  std::vector<__nv_bfloat16> at = d2h(P.attn, size_t(B) * kHq * D);
  Rel r;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < kHq; ++h) {
      const int kh = h / G;
      std::vector<float> q(qkv.begin() + size_t(b) * nq + h * D, qkv.begin() + size_t(b) * nq + (h + 1) * D);
      double ss = 0;
      for (float v : q) ss += double(v) * v;
      const float rs = 1.f / std::sqrt(float(ss / D) + 1e-6f);
      for (float& v : q) v *= rs;  // q_norm gain 1
      for (int i = 0; i < D / 2; ++i) {
        const float f = full ? (i < 64 ? std::pow(1.0e6f, -2.f * i / 512.f) : 0.f) : std::pow(1.0e4f, -2.f * i / 256.f);
        const float a = q[i], c = q[i + D / 2], cs = std::cos(P.ctx * f), sn = std::sin(P.ctx * f);
        q[i] = a * cs - c * sn;
        q[i + D / 2] = c * cs + a * sn;
      }
      std::vector<double> sc(P.ctx + 1);
      double mx = -1e30;
      for (int p = 0; p <= P.ctx; ++p) {
        const size_t off = ((size_t(bt[b * P.pages_per_seq + p / kPageTok]) * hkv + kh) * kPageTok + p % kPageTok) * D;
        double s = 0;
        for (int d = 0; d < D; ++d) s += double(q[d]) * e4m3_host(kc[off + d]);
        sc[p] = s;
        mx = std::max(mx, s);
      }
      double den = 0;
      for (double& s : sc) den += (s = std::exp(s - mx));
      for (int d = 0; d < D; ++d) {
        double num = 0;
        for (int p = 0; p <= P.ctx; ++p) {
          const size_t off = ((size_t(bt[b * P.pages_per_seq + p / kPageTok]) * hkv + kh) * kPageTok + p % kPageTok) * D;
          num += sc[p] * e4m3_host(vc[off + d]);
        }
        r.add(bf(at[size_t(b) * kHq * D + h * D + d]), num / den);
      }
    }
  return report("attention (split-K, fp8)", r, 1e-2);
}

int host_check(const Params& P, const std::vector<LayerP>& hl, const float* dlogits, int B, bool full_check) {
  int fail = 0;
  std::vector<float> lg = d2h(dlogits, size_t(B) * kV);
  std::vector<unsigned long long> best = d2h(P.best, B);
  long bad = 0;
  for (float v : lg) bad += !std::isfinite(v);
  int argmax_ok = 0;
  for (int b = 0; b < B; ++b) {
    const int am = int(std::max_element(lg.begin() + size_t(b) * kV, lg.begin() + size_t(b + 1) * kV) - lg.begin() - size_t(b) * kV);
    argmax_ok += am == int(0xFFFFFFFFu - unsigned(best[b] & 0xFFFFFFFFu));
  }
  std::printf("B=%d: logits nonfinite %ld of %zu; in-kernel argmax = argmax of stored logits for %d/%d rows\n", B, bad,
              lg.size(), argmax_ok, B);
  fail += bad != 0 || argmax_ok != B;
  if (!full_check) return fail;
  const int l = kL - 1;
  const LayerP& lp = hl[l];
  const std::vector<int> none;
  // LM head
  {
    std::vector<float> ref = ref_lin(nullptr, nullptr, P.embed, 1.f, kV, kH, P.xa, kH, none, B);
    Rel r;
    for (size_t i = 0; i < ref.size(); ++i) r.add(lg[i], 30.0 * std::tanh(ref[i] / 30.0));
    fail += report("lm head (bf16, softcap)", r, 1e-4);
  }
  fail += check_attention(P, lp, l, B);
  {  // o_proj
    std::vector<float> ref = ref_lin(lp.o.data, lp.o.scl, nullptr, lp.o.gdiv, kH, lp.o.k, P.attn, lp.o.k, none, B);
    std::vector<float> out = d2h(P.o, size_t(B) * kH);
    Rel r;
    for (size_t i = 0; i < ref.size(); ++i) r.add(out[i], ref[i]);
    fail += report("o_proj (nvfp4)", r, 1e-4);
  }
  {  // dense MLP
    std::vector<float> gu = ref_lin(lp.mlp_gu.data, lp.mlp_gu.scl, nullptr, lp.mlp_gu.gdiv, 2 * kIMlp, kH, P.xm, kH, none, B);
    std::vector<__nv_bfloat16> mh = d2h(P.mh, size_t(B) * kIMlp);
    Rel r;
    for (int b = 0; b < B; ++b)
      for (int n = 0; n < kIMlp; ++n)
        r.add(bf(mh[b * kIMlp + n]), gelu_host(gu[size_t(b) * 2 * kIMlp + n]) * gu[size_t(b) * 2 * kIMlp + kIMlp + n]);
    fail += report("dense gate/up + gelu (nvfp4)", r, 1e-2);
    std::vector<float> ref = ref_lin(lp.mlp_down.data, lp.mlp_down.scl, nullptr, lp.mlp_down.gdiv, kH, kIMlp, P.mh, kIMlp, none, B);
    std::vector<float> m = d2h(P.m, size_t(B) * kH);
    Rel r2;
    for (size_t i = 0; i < ref.size(); ++i) r2.add(m[i], ref[i]);
    fail += report("dense down (nvfp4)", r2, 1e-4);
  }
  {  // router logits and top-k
    std::vector<float> ref = ref_lin(nullptr, nullptr, lp.router, 1.f, kE, kH, P.xr, kH, none, B);
    std::vector<float> rl = d2h(P.rlog, size_t(B) * kE);
    Rel r;
    for (size_t i = 0; i < ref.size(); ++i) r.add(rl[i], ref[i]);
    fail += report("router logits (bf16)", r, 1e-4);
    std::vector<int> te = d2h(P.tok_exp + l * kMaxB * kTopK, size_t(B) * kTopK);
    int agree = 0;
    for (int b = 0; b < B; ++b) {
      std::vector<int> idx(kE);
      for (int e = 0; e < kE; ++e) idx[e] = e;
      std::partial_sort(idx.begin(), idx.begin() + kTopK, idx.end(), [&](int a, int c) { return ref[b * kE + a] > ref[b * kE + c]; });
      std::vector<int> mine(te.begin() + b * kTopK, te.begin() + (b + 1) * kTopK);
      std::sort(mine.begin(), mine.end());
      std::sort(idx.begin(), idx.begin() + kTopK);
      agree += std::equal(mine.begin(), mine.end(), idx.begin());
    }
    std::printf("  check router top-8 sets equal to reference  %d/%d rows %s\n", agree, B, agree == B ? "ok" : "FAIL");
    fail += agree != B;
  }
  {  // experts, slot by slot from the queue the router wrote
    std::vector<int> qe = d2h(P.q_expert + l * kE, kE), qc = d2h(P.q_cnt + l * kE, kE);
    std::vector<int> qt = d2h(P.q_tok + l * kE * kMaxB, size_t(kE) * kMaxB);
    std::vector<float> qw = d2h(P.q_w + l * kE * kMaxB, size_t(kE) * kMaxB);
    std::vector<__nv_bfloat16> eh = d2h(P.eh, size_t(kE) * kMaxB * kIExp);
    std::vector<float> eo = d2h(P.eo, size_t(B) * kTopK * kH);
    Rel rg, rd;
    int assignments = 0;
    for (int s = 0; s < std::min(kE, B * kTopK); ++s) {
      const int e = qe[s];
      if (e < 0) continue;
      std::vector<int> rows(qc[s]);
      for (int j = 0; j < qc[s]; ++j) rows[j] = qt[s * kMaxB + j] >> 3;
      assignments += qc[s];
      std::vector<float> gu = ref_lin(lp.egu + size_t(e) * 2 * kIExp * (kH / 2), lp.egu_s + size_t(e) * 2 * kIExp * (kH / 16),
                                      nullptr, lp.egu_gdiv, 2 * kIExp, kH, P.xe, kH, rows, qc[s]);
      for (int j = 0; j < qc[s]; ++j)
        for (int n = 0; n < kIExp; ++n)
          rg.add(bf(eh[(size_t(s) * kMaxB + j) * kIExp + n]), gelu_host(gu[size_t(j) * 2 * kIExp + n]) * gu[size_t(j) * 2 * kIExp + kIExp + n]);
      std::vector<float> dn = ref_lin(lp.ed + size_t(e) * kH * (kIExp / 2), lp.ed_s + size_t(e) * kH * (kIExp / 16), nullptr,
                                      lp.ed_gdiv, kH, kIExp, P.eh + size_t(s) * kMaxB * kIExp, kIExp, none, qc[s]);
      for (int j = 0; j < qc[s]; ++j)
        for (int n = 0; n < kH; ++n) rd.add(eo[size_t(qt[s * kMaxB + j]) * kH + n], dn[size_t(j) * kH + n] * qw[s * kMaxB + j]);
    }
    std::printf("  expert assignments in queue: %d (expect %d)\n", assignments, B * kTopK);
    fail += assignments != B * kTopK;
    fail += report("expert gate/up + gelu (nvfp4)", rg, 1e-2);
    fail += report("expert down * weight (nvfp4)", rd, 1e-4);
  }
  {  // residual stream finite
    std::vector<float> h = d2h(P.h, size_t(B) * kH);
    long nb = 0;
    for (float v : h) nb += !std::isfinite(v);
    std::printf("  residual stream nonfinite: %ld\n", nb);
    fail += nb != 0;
  }
  return fail;
}

}  // namespace pk
