// Prefill benchmark of the CUDA provider at the Gemma-4 26B-A4B NVFP4A16
// shapes, through the plugin ABI only: for a prompt of T tokens (one
// sequence), the time of each part of a 30-layer prefill step and the
// TFLOP/s it reaches:
//  - the quantized Linears outside the experts (25 sliding layers: q 4096,
//    k/v 2048, o; 5 full layers: q 8192, k 1024, o; dense MLP 2112 each);
//  - the MoE (128 experts, top-8, router ids uniform per token);
//  - attention over the prompt (fp8 KV cache already stored): sliding layers
//    head dim 256, 8 KV heads, window 1024; full layers head dim 512, 2 KV
//    heads, K and V caches as the model stores them (V is k_proj's output
//    under v_norm, K under k_norm and RoPE), causal over the whole prompt.
// Norms, RoPE, router, KV stores, embedding and the LM head are not
// included.  Weights are random; since prefill is compute-bound, 6 distinct
// layers of weights (5 sliding + 1 full) are cycled over the 30 layers to
// keep set-up short.  FLOPs count 2 per multiply-add, causal attention only
// its unmasked half.
//
// usage: seatrt-bench-prefill <libseatrt_kernels_cuda.so> [tokens, e.g. 2048,8192] [attention-only tokens, e.g. 32768]
// Environment: BENCH_LINEAR_SHAPES=1 also times each distinct Linear shape
// alone; BENCH_SKIP_ATTENTION=1 leaves attention out (GEMM work).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "seatrt/seatrt.h"

namespace {

using namespace seatrt_bench;

std::mt19937_64 g_rng(12345);

// A switch from the environment: set and not "0" (the device script passes
// BENCH_MOE_REFERENCE=0 to turn the reference off).
bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v && std::strcmp(v, "0") != 0;
}

// An NVFP4 weight: random codes, E4M3 scales in [0.125, 15], global 1000.
// Bytes come from two random pools at random offsets (fast set-up).
seatrt_linear_weight nvfp4(int64_t out, int64_t in) {
  static std::vector<uint8_t> codes, scales;
  if (codes.empty()) {
    codes.resize(16u << 20);
    for (size_t i = 0; i < codes.size(); i += 8) {
      const uint64_t v = g_rng();
      std::memcpy(&codes[i], &v, 8);
    }
    scales.resize(2u << 20);
    for (auto& s : scales) s = static_cast<uint8_t>(((4 + g_rng() % 8) << 3) | (g_rng() % 8));
  }
  seatrt_linear_weight w = nvfp4_shape(out, in);
  const size_t db = static_cast<size_t>(out * in / 2), sb = static_cast<size_t>(out * in / 16);
  const uint8_t* d = codes.data() + g_rng() % (codes.size() - db);
  const uint8_t* sc = scales.data() + g_rng() % (scales.size() - sb);
  void* dd = dev_alloc(db);
  void* sd = dev_alloc(sb);
  upload(dd, d, db);
  upload(sd, sc, sb);
  ok(K->stream_sync(C, S), "sync");
  w.data = tensor(dd, SEATRT_DTYPE_E2M1X2, {out, in / 2});
  w.scales = tensor(sd, SEATRT_DTYPE_F8_E4M3, {out, in / 16});
  w.global_scale = 1000.0f;
  return w;
}

// A device buffer of n bf16 values, normal(0, sd).
void* random_bf16(size_t n, float sd) {
  std::vector<uint16_t> h(n);
  std::normal_distribution<float> nd(0.0f, sd);
  for (auto& v : h) {
    const float f = nd(g_rng);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    v = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
  void* d = dev_alloc(n * 2);
  upload(d, h.data(), n * 2);
  return d;
}


constexpr int kLayers = 30, kE = 128, kTopK = 8, kQHeads = 16;
constexpr int64_t kH = 2816, kI = 704, kMlp = 2112;
bool is_full(int l) { return l % 6 == 5; }

struct Layer {
  std::vector<seatrt_linear_weight> lin;
  std::vector<seatrt_linear_weight> gate, up, down;
};

// One attention layer kind over a T-token prompt: fp8 cache, block size 16.
struct AttnCase {
  int64_t kv_heads, dim;
  bool two;  // separate V cache
  int32_t window;
  seatrt_kv_layer kv{};
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <libseatrt_kernels_cuda.so> [tokens,...] [attention-only tokens,...]\n", argv[0]);
    return 2;
  }
  const std::vector<int64_t> sizes = argc > 2 ? parse_list(argv[2]) : std::vector<int64_t>{2048, 8192};
  const std::vector<int64_t> attn_only = argc > 3 ? parse_list(argv[3]) : std::vector<int64_t>{};
  try {
    if (!open_provider(argv[1])) return 77;

    const double t_setup = now();
    std::vector<Layer> distinct(6);
    for (int l = 0; l < 6; ++l) {
      Layer& L = distinct[static_cast<size_t>(l)];
      if (is_full(l)) {
        L.lin = {nvfp4(8192, kH), nvfp4(1024, kH), nvfp4(kH, 8192)};
      } else {
        L.lin = {nvfp4(4096, kH), nvfp4(2048, kH), nvfp4(2048, kH), nvfp4(kH, 4096)};
      }
      L.lin.push_back(nvfp4(kMlp, kH));
      L.lin.push_back(nvfp4(kMlp, kH));
      L.lin.push_back(nvfp4(kH, kMlp));
      for (int e = 0; e < kE; ++e) {
        L.gate.push_back(nvfp4(kI, kH));
        L.up.push_back(nvfp4(kI, kH));
        L.down.push_back(nvfp4(kH, kI));
      }
    }
    std::printf("set-up (6 distinct layers of weights): %.1f s\n", now() - t_setup);
    auto layer = [&](int l) -> const Layer& { return distinct[static_cast<size_t>(is_full(l) ? 5 : l % 5)]; };

    if (const char* prof = std::getenv("BENCH_PROFILE_TOKENS")) {
      // For a profiler (ncu): one q projection and one MoE layer at this many
      // tokens, each run twice (the first grows scratch memory), then exit.
      const int64_t T = std::atoll(prof);
      void* x = random_bf16(static_cast<size_t>(T * kH), 0.5f);
      void* y = dev_alloc(static_cast<size_t>(T * 8192 * 2));
      std::vector<int32_t> ids(static_cast<size_t>(T * kTopK));
      for (int64_t tk = 0; tk < T; ++tk)
        for (int j = 0; j < kTopK; ++j) ids[static_cast<size_t>(tk * kTopK + j)] = static_cast<int32_t>((tk * 37 + j * 16) % kE);
      std::vector<float> wts(ids.size(), 0.125f);
      void* idd = dev_alloc(ids.size() * 4);
      void* wd = dev_alloc(wts.size() * 4);
      upload(idd, ids.data(), ids.size() * 4);
      upload(wd, wts.data(), wts.size() * 4);
      seatrt_tensor xt = tensor(x, SEATRT_DTYPE_BF16, {T, kH}), yq = tensor(y, SEATRT_DTYPE_BF16, {T, 4096});
      seatrt_tensor yt = tensor(y, SEATRT_DTYPE_BF16, {T, kH});
      seatrt_tensor idt = tensor(idd, SEATRT_DTYPE_I32, {T, kTopK}), wt = tensor(wd, SEATRT_DTYPE_F32, {T, kTopK});
      const Layer& L = distinct[0];
      for (int rep = 0; rep < 2; ++rep) {
        seatrt_linear_args la{sizeof la, &xt, &L.lin[0], &yq, nullptr};
        run<SEATRT_OP_LINEAR>(la, "linear");
        seatrt_moe_args ma{sizeof ma, SEATRT_ACT_GELU_TANH, kE, &xt, &idt, &wt, L.gate.data(), L.up.data(), L.down.data(), &yt};
        run<SEATRT_OP_MOE>(ma, "moe");
        ok(K->stream_sync(C, S), "sync");
      }
      std::printf("profile run done (%lld tokens)\n", static_cast<long long>(T));
      return 0;
    }
    std::vector<int64_t> all = sizes;
    all.insert(all.end(), attn_only.begin(), attn_only.end());
    std::printf("\n| tokens | part | ms | TFLOP | TFLOP/s |\n|---:|---|---:|---:|---:|\n");
    for (size_t si = 0; si < all.size(); ++si) {
      const int64_t T = all[si];
      const bool only_attn = si >= sizes.size();
      // Activations: the widest input (8192) and output (8192) per token.
      void* x = random_bf16(static_cast<size_t>(T * 8192), 0.5f);
      void* y = dev_alloc(static_cast<size_t>(T * 8192 * 2));
      double total_ms = 0;
      auto report = [&](const char* part, double sec, double flop) {
        total_ms += sec * 1e3;
        std::printf("| %lld | %s | %.2f | %.2f | %.1f |\n", static_cast<long long>(T), part, sec * 1e3, flop / 1e12,
                    flop / sec / 1e12);
        std::fflush(stdout);
      };
      if (!only_attn) {
        double flop = 0;
        for (int l = 0; l < kLayers; ++l)
          for (const auto& w : layer(l).lin) flop += 2.0 * double(T) * double(w.out_features) * double(w.in_features);
        const double t = time_it([&] {
          for (int l = 0; l < kLayers; ++l)
            for (const auto& w : layer(l).lin) {
              seatrt_tensor xt = tensor(x, SEATRT_DTYPE_BF16, {T, w.in_features});
              seatrt_tensor yt = tensor(y, SEATRT_DTYPE_BF16, {T, w.out_features});
              seatrt_linear_args la{sizeof la, &xt, &w, &yt, nullptr};
              run<SEATRT_OP_LINEAR>(la, "linear");
            }
        }, 1, 3);
        report("attn+dense MLP linears (30 layers)", t, flop);
        if (env_on("BENCH_LINEAR_SHAPES")) {
          // Each distinct Linear shape alone (N x K at T rows), 10 calls per
          // timing, median of 3: the GEMM core's rate without the mix.
          const std::vector<seatrt_linear_weight>& s5 = distinct[0].lin;
          const std::vector<seatrt_linear_weight>& f5 = distinct[5].lin;
          for (const seatrt_linear_weight* w : {&s5[0], &s5[1], &s5[3], &s5[4], &s5[6], &f5[0], &f5[1], &f5[2]}) {
            seatrt_tensor xt = tensor(x, SEATRT_DTYPE_BF16, {T, w->in_features});
            seatrt_tensor yt = tensor(y, SEATRT_DTYPE_BF16, {T, w->out_features});
            seatrt_linear_args la{sizeof la, &xt, w, &yt, nullptr};
            const double ts = time_it([&] { run<SEATRT_OP_LINEAR>(la, "linear (shape)"); }, 10, 3);
            const double f = 2.0 * double(T) * double(w->out_features) * double(w->in_features);
            std::printf("|   %lld | linear N %lld x K %lld alone | %.3f | %.3f | %.1f |\n", static_cast<long long>(T),
                        static_cast<long long>(w->out_features), static_cast<long long>(w->in_features), ts * 1e3,
                        f / 1e12, f / ts / 1e12);
          }
          std::fflush(stdout);
        }

        // Router ids: top-8 distinct experts per token, uniform; weights 1/8.
        std::vector<int32_t> ids(static_cast<size_t>(T * kTopK));
        std::vector<int> perm(kE);
        for (int64_t tk = 0; tk < T; ++tk) {
          for (int e = 0; e < kE; ++e) perm[static_cast<size_t>(e)] = e;
          for (int j = 0; j < kTopK; ++j) {
            std::swap(perm[static_cast<size_t>(j)], perm[static_cast<size_t>(j + static_cast<int>(g_rng() % (kE - j)))]);
            ids[static_cast<size_t>(tk * kTopK + j)] = perm[static_cast<size_t>(j)];
          }
        }
        std::vector<float> wts(ids.size(), 0.125f);
        void* idd = dev_alloc(ids.size() * 4);
        void* wd = dev_alloc(wts.size() * 4);
        upload(idd, ids.data(), ids.size() * 4);
        upload(wd, wts.data(), wts.size() * 4);
        const double moe_flop = 2.0 * double(T) * kTopK * 3.0 * double(kH) * double(kI) * kLayers;
        seatrt_tensor xt = tensor(x, SEATRT_DTYPE_BF16, {T, kH});
        seatrt_tensor idt = tensor(idd, SEATRT_DTYPE_I32, {T, kTopK}), wt = tensor(wd, SEATRT_DTYPE_F32, {T, kTopK});
        const double tm = time_it([&] {
          for (int l = 0; l < kLayers; ++l) {
            const Layer& L = layer(l);
            seatrt_tensor yt = tensor(y, SEATRT_DTYPE_BF16, {T, kH});
            seatrt_moe_args ma{sizeof ma, SEATRT_ACT_GELU_TANH, kE, &xt, &idt, &wt, L.gate.data(), L.up.data(), L.down.data(), &yt};
            run<SEATRT_OP_MOE>(ma, "moe");
          }
        }, 1, 3);
        report("MoE experts, 128 x top-8 (30 layers)", tm, moe_flop);
        if (env_on("BENCH_MOE_REFERENCE")) {
          // The same GEMM shapes on the plain linear path (contiguous rows, one
          // weight): what the grouped kernels would reach without grouping.
          static const seatrt_linear_weight gu = nvfp4(2 * kI, kH), dn = nvfp4(kH, kI);
          const int64_t A = T * kTopK;
          void* xa = random_bf16(static_cast<size_t>(A * kH), 0.5f);
          void* ya = dev_alloc(static_cast<size_t>(A * kH * 2));
          const double tr = time_it([&] {
            for (int l = 0; l < kLayers; ++l) {
              seatrt_tensor x1 = tensor(xa, SEATRT_DTYPE_BF16, {A, kH}), y1 = tensor(ya, SEATRT_DTYPE_BF16, {A, 2 * kI});
              seatrt_linear_args l1{sizeof l1, &x1, &gu, &y1, nullptr};
              run<SEATRT_OP_LINEAR>(l1, "linear (gate+up reference)");
              seatrt_tensor x2 = tensor(ya, SEATRT_DTYPE_BF16, {A, kI}), y2 = tensor(xa, SEATRT_DTYPE_BF16, {A, kH});
              seatrt_linear_args l2{sizeof l2, &x2, &dn, &y2, nullptr};
              run<SEATRT_OP_LINEAR>(l2, "linear (down reference)");
            }
          }, 1, 3);
          total_ms -= tr * 1e3;  // not part of the step
          report("  reference: the MoE's GEMM shapes as plain linears (30 layers)", tr, moe_flop);
          K->free_memory(C, xa);
          K->free_memory(C, ya);
        }
        K->free_memory(C, idd);
        K->free_memory(C, wd);
      }

      if (!env_on("BENCH_SKIP_ATTENTION")) {  // Attention: one sequence of T tokens, its whole KV in an fp8 cache.
        const int64_t bsz = 16, blocks = (T + bsz - 1) / bsz;
        std::vector<int32_t> table(static_cast<size_t>(blocks));
        for (int64_t i = 0; i < blocks; ++i) table[static_cast<size_t>(i)] = static_cast<int32_t>(i);
        const int32_t qs[2] = {0, static_cast<int32_t>(T)}, len = static_cast<int32_t>(T);
        void* tab_d = dev_alloc(table.size() * 4);
        void* qs_d = dev_alloc(8);
        void* len_d = dev_alloc(4);
        upload(tab_d, table.data(), table.size() * 4);
        upload(qs_d, qs, 8);
        upload(len_d, &len, 4);
        for (int kind = 0; kind < 2; ++kind) {
          AttnCase c = kind == 0 ? AttnCase{8, 256, true, 1024} : AttnCase{2, 512, true, 0};
          const size_t cache_bytes = static_cast<size_t>(blocks * bsz * c.kv_heads * c.dim);
          // Random fp8 values (E4M3 codes with exponent field 1..7: |v| < 2).
          std::vector<uint8_t> hc(cache_bytes);
          for (auto& b : hc) b = static_cast<uint8_t>((g_rng() & 0x80u) | ((1 + g_rng() % 7) << 3) | (g_rng() & 7u));
          void* kc = dev_alloc(cache_bytes);
          upload(kc, hc.data(), cache_bytes);
          void* vc = c.two ? dev_alloc(cache_bytes) : nullptr;
          if (vc) upload(vc, hc.data(), cache_bytes);
          c.kv.struct_size = sizeof(seatrt_kv_layer);
          c.kv.block_size = static_cast<int32_t>(bsz);
          c.kv.k_scale = 1.0f;
          c.kv.v_scale = 1.0f;
          c.kv.k_cache = tensor(kc, SEATRT_DTYPE_F8_E4M3, {blocks, bsz, c.kv_heads, c.dim});
          if (vc) c.kv.v_cache = tensor(vc, SEATRT_DTYPE_F8_E4M3, {blocks, bsz, c.kv_heads, c.dim});
          seatrt_tensor q = tensor(x, SEATRT_DTYPE_BF16, {T, kQHeads, c.dim});
          seatrt_tensor o = tensor(y, SEATRT_DTYPE_BF16, {T, kQHeads, c.dim});
          seatrt_tensor qst = tensor(qs_d, SEATRT_DTYPE_I32, {2}), lst = tensor(len_d, SEATRT_DTYPE_I32, {1});
          seatrt_tensor bt = tensor(tab_d, SEATRT_DTYPE_I32, {1, blocks});
          seatrt_attention_args aa{};
          aa.struct_size = sizeof aa;
          aa.q = &q;
          aa.cache = &c.kv;
          aa.query_start = &qst;
          aa.seq_lens = &lst;
          aa.block_tables = &bt;
          aa.num_seqs = 1;
          aa.max_query_len = len;
          aa.max_seq_len = len;
          aa.window = c.window;
          aa.scale = 1.0f;
          aa.out = &o;
          double keys = 0;  // (query, key) pairs attended
          for (int64_t r = 0; r < T; ++r) keys += double(c.window > 0 ? std::min<int64_t>(r + 1, c.window) : r + 1);
          const int n_layers = kind == 0 ? 25 : 5;
          const double flop = 4.0 * keys * kQHeads * double(c.dim);  // QK^T and PV
          const double t1 = time_it([&] { run<SEATRT_OP_ATTENTION>(aa, "attention"); }, 1, 2);
          const std::string name = kind == 0 ? "attention, sliding 1024, hd 256, fp8 KV (25 layers)"
                                             : "attention, full causal, hd 512, fp8 KV (5 layers)";
          report(name.c_str(), t1 * n_layers, flop * n_layers);
          if (T <= 8192 && env_on("BENCH_BASELINE_ATTENTION")) {
            // The CUDA-core kernel, which the provider keeps for decode-shaped
            // batches (chosen by the max_query_len hint), for comparison.
            seatrt_attention_args base = aa;
            base.max_query_len = 1;
            const double tb = time_it([&] { run<SEATRT_OP_ATTENTION>(base, "attention (baseline)"); }, 1, 1);
            total_ms -= tb * n_layers * 1e3;  // not part of the step
            report(("  baseline CUDA-core kernel: " + name).c_str(), tb * n_layers, flop * n_layers);
          }
          K->free_memory(C, kc);
          if (vc) K->free_memory(C, vc);
        }
        K->free_memory(C, tab_d);
        K->free_memory(C, qs_d);
        K->free_memory(C, len_d);
      }
      if (!only_attn)
        std::printf("| %lld | **sum of the parts** | %.2f | | -> %.0f tokens/s |\n", static_cast<long long>(T), total_ms,
                    double(T) / (total_ms / 1e3));
      K->free_memory(C, x);
      K->free_memory(C, y);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench failed: %s\n", e.what());
    return 1;
  }
  return 0;
}
