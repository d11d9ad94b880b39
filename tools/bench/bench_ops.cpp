// Op-level benchmark of the CUDA provider at the exact Gemma-4 26B-A4B
// NVFP4A16 shapes, through the plugin ABI only.  Measures, in one run:
//  - device-to-device copy bandwidth (bytes read + written / time), the
//    ceiling the byte limits below are computed from;
//  - one decode step's quantized Linears outside the experts (30 layers of
//    q/k/v/o + dense MLP), the MoE of 30 layers (128 experts, top-8, router
//    ids drawn uniformly per token) and the bf16 tied LM head, at batch
//    1/4/8/16/32, eager (run per op) and launched from a plan made for
//    many launches;
//  - paged attention of 30 layers over 1024 cached fp8 tokens per sequence;
// each beside its byte limit (bytes actually read / copy bandwidth).
// Weights are random bytes (scales kept in a sane E4M3 range).  Norms, RoPE,
// router, KV stores and sampling are NOT included: see docs/benchmarks.md.
//
// usage: seatrt-bench-ops <path to libseatrt_kernels_cuda.so> [iterations] [batches, e.g. 1,4,8]
// MoE comparisons in one run (environment):
//   SEATRT_BENCH_MOE_VARIANTS=old,,s2  times the MoE once per listed value of
//     the provider's SEATRT_MOE_DECODE switch ("" = its default), for BF16
//     x and the F32 x the model passes;
//   SEATRT_BENCH_LINEAR_VARIANTS=,raw  times the non-expert Linears once per
//     listed value of the provider's SEATRT_LINEAR_DECODE switch;
//   SEATRT_BENCH_PARTS=moe (or linears, or linears,moe)  times only those.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "seatrt/seatrt.h"

namespace {

using namespace seatrt_bench;

void* g_random = nullptr;  // 64 MiB of random bytes on the device
constexpr size_t kRandomBytes = 64u << 20;


// Fills device memory from the random buffer.
void fill(void* dst, size_t bytes) {
  for (size_t off = 0; off < bytes; off += kRandomBytes)
    ok(K->copy(C, S, static_cast<char*>(dst) + off, SEATRT_DEVICE_CUDA, g_random, SEATRT_DEVICE_CUDA,
               std::min(kRandomBytes, bytes - off)), "fill");
}

// An NVFP4 weight with random codes and E4M3 scales in [0.125, 15].
seatrt_linear_weight nvfp4(int64_t out, int64_t in, size_t& bytes) {
  seatrt_linear_weight w = nvfp4_shape(out, in);
  const size_t db = static_cast<size_t>(out * in / 2), sb = static_cast<size_t>(out * in / 16);
  void* d = dev_alloc(db);
  fill(d, db);
  std::vector<uint8_t> sc(sb);
  static std::mt19937 g(7);
  for (auto& s : sc) s = static_cast<uint8_t>(((4 + g() % 8) << 3) | (g() % 8));
  void* s = dev_alloc(sb);
  ok(K->copy(C, S, s, SEATRT_DEVICE_CUDA, sc.data(), SEATRT_DEVICE_CPU, sb), "copy scales");
  ok(K->stream_sync(C, S), "sync");
  w.data = tensor(d, SEATRT_DTYPE_E2M1X2, out, in / 2);
  w.scales = tensor(s, SEATRT_DTYPE_F8_E4M3, out, in / 16);
  w.global_scale = 1000.0f;
  bytes += db + sb;
  return w;
}


}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <libseatrt_kernels_cuda.so> [iterations]\n", argv[0]);
    return 2;
  }
  const int iters = argc > 2 ? std::atoi(argv[2]) : 20;
  try {
    if (!open_provider(argv[1])) return 77;

    {  // random source
      std::vector<uint8_t> r(kRandomBytes);
      std::mt19937_64 g(std::random_device{}());
      for (size_t i = 0; i < r.size(); i += 8) { const uint64_t v = g(); std::memcpy(&r[i], &v, 8); }
      g_random = dev_alloc(kRandomBytes);
      ok(K->copy(C, S, g_random, SEATRT_DEVICE_CUDA, r.data(), SEATRT_DEVICE_CPU, kRandomBytes), "upload random");
      ok(K->stream_sync(C, S), "sync");
    }

    // 1. Copy bandwidth: 4 GiB device-to-device, bytes read + written.
    const double bw = copy_bandwidth(4ull << 30);

    // 2. Weights of 30 layers.
    const int layers = 30, E = 128, topk = 8;
    const int64_t H = 2816, I = 704, MLP = 2112;
    size_t dense_bytes = 0, expert_bytes = 0;
    std::vector<std::vector<seatrt_linear_weight>> lin(layers);
    std::vector<std::vector<seatrt_linear_weight>> eg(layers), eu(layers), ed(layers);
    for (int l = 0; l < layers; ++l) {
      const bool full = l % 6 == 5;
      if (full) {
        lin[l].push_back(nvfp4(8192, H, dense_bytes));
        lin[l].push_back(nvfp4(1024, H, dense_bytes));
        lin[l].push_back(nvfp4(H, 8192, dense_bytes));
      } else {
        lin[l].push_back(nvfp4(4096, H, dense_bytes));
        lin[l].push_back(nvfp4(2048, H, dense_bytes));
        lin[l].push_back(nvfp4(2048, H, dense_bytes));
        lin[l].push_back(nvfp4(H, 4096, dense_bytes));
      }
      lin[l].push_back(nvfp4(MLP, H, dense_bytes));
      lin[l].push_back(nvfp4(MLP, H, dense_bytes));
      lin[l].push_back(nvfp4(H, MLP, dense_bytes));
      for (int e = 0; e < E; ++e) {
        eg[l].push_back(nvfp4(I, H, expert_bytes));
        eu[l].push_back(nvfp4(I, H, expert_bytes));
        ed[l].push_back(nvfp4(H, I, expert_bytes));
      }
    }
    const double per_expert = static_cast<double>(expert_bytes) / (layers * E);
    // LM head: the tied bf16 embedding [262144, 2816].
    const int64_t V = 262144;
    seatrt_linear_weight head{};
    head.struct_size = sizeof head;
    head.format = SEATRT_WFMT_DENSE;
    head.layout = SEATRT_LAYOUT_DENSE_ROW_MAJOR;
    head.out_features = V;
    head.in_features = H;
    head.global_scale = 1.0f;
    {
      void* d = dev_alloc(static_cast<size_t>(V * H * 2));
      // bf16 random bytes would hold NaNs; zeros cost the same bandwidth.
      ok(K->memset_zero(C, S, d, static_cast<size_t>(V * H * 2)), "memset");
      head.data = tensor(d, SEATRT_DTYPE_BF16, V, H);
    }
    const double head_bytes = static_cast<double>(V * H * 2);
    std::printf("weights: non-expert quantized %.3f GB, experts %.3f GB (%.3f MB per expert per layer), lm head %.3f GB\n",
                static_cast<double>(dense_bytes) / 1e9, static_cast<double>(expert_bytes) / 1e9, per_expert / 1e6,
                head_bytes / 1e9);

    // Attention: fp8 paged KV caches of 30 layers for up to 32 sequences of
    // 1024 cached tokens each (sliding: 8 KV heads x 256, K and V; full: 2 x
    // 512, one tensor), block size 16, each sequence's blocks contiguous.
    const int64_t ctx = 1024, max_seqs = 32, bsz = 16, blocks_per_seq = ctx / bsz;
    struct AttnLayer { seatrt_kv_layer kv; int64_t heads, dim; bool two; };
    std::vector<AttnLayer> attn(layers);
    for (int l = 0; l < layers; ++l) {
      const bool full = l % 6 == 5;
      AttnLayer& L = attn[static_cast<size_t>(l)];
      L.heads = full ? 2 : 8;
      L.dim = full ? 512 : 256;
      L.two = !full;
      L.kv = seatrt_kv_layer{};
      L.kv.struct_size = sizeof(seatrt_kv_layer);
      L.kv.block_size = static_cast<int32_t>(bsz);
      L.kv.k_scale = 1.0f;
      L.kv.v_scale = 1.0f;
      const int64_t nb = max_seqs * blocks_per_seq;
      const size_t bytes = static_cast<size_t>(nb * bsz * L.heads * L.dim);
      auto cache = [&](seatrt_tensor& t) {
        void* d = dev_alloc(bytes);
        ok(K->memset_zero(C, S, d, bytes), "zero cache");
        t = tensor(d, SEATRT_DTYPE_F8_E4M3, {nb, bsz, L.heads, L.dim});
      };
      cache(L.kv.k_cache);
      if (L.two) cache(L.kv.v_cache);
    }
    std::vector<int32_t> tables(static_cast<size_t>(max_seqs * blocks_per_seq));
    for (size_t i = 0; i < tables.size(); ++i) tables[i] = static_cast<int32_t>(i);
    void* tables_d = dev_alloc(tables.size() * 4);
    ok(K->copy(C, S, tables_d, SEATRT_DEVICE_CUDA, tables.data(), SEATRT_DEVICE_CPU, tables.size() * 4), "tables");
    std::vector<int32_t> qstart(max_seqs + 1), lens(max_seqs, static_cast<int32_t>(ctx));
    for (int64_t i = 0; i <= max_seqs; ++i) qstart[static_cast<size_t>(i)] = static_cast<int32_t>(i);
    void* qstart_d = dev_alloc(qstart.size() * 4);
    void* lens_d = dev_alloc(lens.size() * 4);
    ok(K->copy(C, S, qstart_d, SEATRT_DEVICE_CUDA, qstart.data(), SEATRT_DEVICE_CPU, qstart.size() * 4), "qstart");
    ok(K->copy(C, S, lens_d, SEATRT_DEVICE_CUDA, lens.data(), SEATRT_DEVICE_CPU, lens.size() * 4), "lens");
    ok(K->stream_sync(C, S), "sync");

    std::printf("\n| batch | part | eager ms | graph ms | bytes GB | limit ms | graph %% of limit | distinct experts/layer |\n");
    std::printf("|---:|---|---:|---:|---:|---:|---:|---:|\n");
    std::mt19937 g(std::random_device{}());
    std::vector<int64_t> batches = {1, 4, 8, 16, 32, 2048};
    if (argc > 3) {
      batches.clear();
      for (const char* c = argv[3]; *c;) {
        char* end = nullptr;
        batches.push_back(std::strtoll(c, &end, 10));
        c = *end == ',' ? end + 1 : end;
        if (end == c && *c) break;
      }
    }
    for (int64_t B : batches) {
      const bool prefill = B > 32;
      const int n_it = prefill ? 2 : iters;
      if (prefill)
        std::printf("\nprefill-shaped: %lld tokens in one step (limit column = weight bytes only; compute-bound)\n",
                    static_cast<long long>(B));
      // Activations (bf16), outputs (f32, sized for the largest Linear).
      void* x = dev_alloc(static_cast<size_t>(B * 8192 * 2));
      // Prefill: 2048 x 262144 f32 logits would be 2 GiB; the LM head is skipped there.
      fill(x, static_cast<size_t>(B * 8192 * 2));
      ok(K->memset_zero(C, S, x, static_cast<size_t>(B * 8192 * 2)), "zero x");  // finite inputs
      void* y = dev_alloc(static_cast<size_t>(B * (prefill ? 8192 : V) * 4));
      seatrt_tensor xt_h = tensor(x, SEATRT_DTYPE_BF16, B, H);
      // Router ids: top-8 distinct experts per token, uniform.
      std::vector<int32_t> ids(static_cast<size_t>(layers * B * topk));
      std::vector<float> wts(ids.size(), 0.125f);
      double distinct = 0;
      for (int l = 0; l < layers; ++l) {
        std::set<int> used;
        for (int64_t t = 0; t < B; ++t) {
          std::vector<int> perm(E);
          for (int e = 0; e < E; ++e) perm[static_cast<size_t>(e)] = e;
          std::shuffle(perm.begin(), perm.end(), g);
          for (int j = 0; j < topk; ++j) {
            ids[static_cast<size_t>((l * B + t) * topk + j)] = perm[static_cast<size_t>(j)];
            used.insert(perm[static_cast<size_t>(j)]);
          }
        }
        distinct += static_cast<double>(used.size()) / layers;
      }
      void* idd = dev_alloc(ids.size() * 4);
      void* wd = dev_alloc(wts.size() * 4);
      ok(K->copy(C, S, idd, SEATRT_DEVICE_CUDA, ids.data(), SEATRT_DEVICE_CPU, ids.size() * 4), "ids");
      ok(K->copy(C, S, wd, SEATRT_DEVICE_CUDA, wts.data(), SEATRT_DEVICE_CPU, wts.size() * 4), "wts");
      ok(K->stream_sync(C, S), "sync");

      auto dense_step = [&] {
        for (int l = 0; l < layers; ++l)
          for (const auto& w : lin[l]) {
            seatrt_tensor xt = tensor(x, SEATRT_DTYPE_BF16, B, w.in_features);
            seatrt_tensor yt = tensor(y, SEATRT_DTYPE_BF16, B, w.out_features);
            seatrt_linear_args la{sizeof la, &xt, &w, &yt, nullptr};
            run<SEATRT_OP_LINEAR>(la, "linear");
          }
      };
      std::vector<seatrt_tensor> idt(layers), wt(layers);
      for (int l = 0; l < layers; ++l) {
        idt[l] = tensor(static_cast<int32_t*>(idd) + l * B * topk, SEATRT_DTYPE_I32, B, topk);
        wt[l] = tensor(static_cast<float*>(wd) + l * B * topk, SEATRT_DTYPE_F32, B, topk);
      }
      auto moe_step = [&] {
        for (int l = 0; l < layers; ++l) {
          seatrt_tensor yt = tensor(y, SEATRT_DTYPE_BF16, B, H);
          seatrt_moe_args ma{sizeof ma, SEATRT_ACT_GELU_TANH, E, &xt_h, &idt[l], &wt[l], eg[l].data(), eu[l].data(), ed[l].data(), &yt};
          run<SEATRT_OP_MOE>(ma, "moe");
        }
      };
      auto head_step = [&] {
        seatrt_tensor yt = tensor(y, SEATRT_DTYPE_F32, B, V);
        seatrt_linear_args la{sizeof la, &xt_h, &head, &yt, nullptr};
        run<SEATRT_OP_LINEAR>(la, "lm head");
      };
      double kv_bytes = 0;
      for (const AttnLayer& L : attn) kv_bytes += static_cast<double>(B * ctx * L.heads * L.dim * (L.two ? 2 : 1));
      auto attn_step = [&] {
        for (const AttnLayer& L : attn) {
          seatrt_tensor q = tensor(x, SEATRT_DTYPE_BF16, B, 16);
          q.ndim = 3;
          q.shape[2] = L.dim;
          q.strides[2] = 1;
          q.strides[1] = L.dim;
          q.strides[0] = 16 * L.dim;
          seatrt_tensor o = q;
          o.data = y;
          seatrt_tensor qs = tensor(qstart_d, SEATRT_DTYPE_I32, 1, B + 1);
          qs.ndim = 1;
          qs.shape[0] = B + 1;
          qs.strides[0] = 1;
          seatrt_tensor ls = tensor(lens_d, SEATRT_DTYPE_I32, 1, B);
          ls.ndim = 1;
          ls.shape[0] = B;
          ls.strides[0] = 1;
          seatrt_tensor bt = tensor(tables_d, SEATRT_DTYPE_I32, B, blocks_per_seq);
          seatrt_attention_args aa{};
          aa.struct_size = sizeof aa;
          aa.q = &q;
          aa.cache = &L.kv;
          aa.query_start = &qs;
          aa.seq_lens = &ls;
          aa.block_tables = &bt;
          aa.num_seqs = static_cast<int32_t>(B);
          aa.max_query_len = 1;
          aa.max_seq_len = static_cast<int32_t>(ctx);
          aa.window = L.two ? 1024 : 0;
          aa.scale = 1.0f;
          aa.out = &o;
          run<SEATRT_OP_ATTENTION>(aa, "attention");
        }
      };
      struct Part { std::string name; std::function<void()> step; double bytes; };
      const std::string only = std::getenv("SEATRT_BENCH_PARTS") ? std::getenv("SEATRT_BENCH_PARTS") : "";
      const bool want_linears = only.empty() || only.find("linears") != std::string::npos;
      const bool want_moe = only.empty() || only.find("moe") != std::string::npos;
      const bool moe_only = !only.empty();  // LM head and attention only in the full run
      std::vector<Part> parts;
      if (want_linears)
        parts.push_back({"attn+dense MLP linears (30 layers)", [&] { unsetenv("SEATRT_LINEAR_DECODE"); dense_step(); },
                         static_cast<double>(dense_bytes)});
      if (const char* variants = std::getenv("SEATRT_BENCH_LINEAR_VARIANTS"); variants && want_linears) {
        std::string list = variants;
        for (size_t at = 0;;) {
          const size_t comma = list.find(',', at);
          const std::string v = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
          parts.push_back({"linears [" + v + "]", [&, v] { setenv("SEATRT_LINEAR_DECODE", v.c_str(), 1); dense_step(); },
                           static_cast<double>(dense_bytes)});
          if (comma == std::string::npos) break;
          at = comma + 1;
        }
      }
      if (want_moe)
        parts.push_back({"MoE experts (30 layers)", [&] { unsetenv("SEATRT_MOE_DECODE"); moe_step(); },
                         distinct * layers * per_expert});
      if (const char* variants = std::getenv("SEATRT_BENCH_MOE_VARIANTS"); variants && want_moe) {
        // One MoE part per (switch value, x dtype); setenv before each timing.
        std::string list = variants;
        for (size_t at = 0;;) {
          const size_t comma = list.find(',', at);
          const std::string v = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
          for (bool f32 : {false, true}) {
            auto step = [&, v, f32] {
              setenv("SEATRT_MOE_DECODE", v.c_str(), 1);
              if (!f32) return moe_step();
              seatrt_tensor x32 = tensor(x, SEATRT_DTYPE_F32, B, H);
              for (int l = 0; l < layers; ++l) {
                seatrt_tensor yt = tensor(y, SEATRT_DTYPE_F32, B, H);
                seatrt_moe_args ma{sizeof ma, SEATRT_ACT_GELU_TANH, E, &x32, &idt[l], &wt[l], eg[l].data(), eu[l].data(), ed[l].data(), &yt};
                run<SEATRT_OP_MOE>(ma, "moe");
              }
            };
            parts.push_back({"MoE [" + v + "] x " + (f32 ? "f32" : "bf16"), step, distinct * layers * per_expert});
          }
          if (comma == std::string::npos) break;
          at = comma + 1;
        }
      }
      if (!moe_only) {
        parts.push_back({"LM head (bf16)", head_step, head_bytes});
        parts.push_back({"attention, ctx 1024, fp8 KV (30 layers)", attn_step, kv_bytes});
      }
      double sum_graph = 0, sum_limit = 0;
      for (const Part& pt : parts) {
        // Prefill: logits only for the last token; attention not measured at this shape.
        if (prefill && (pt.name.rfind("LM", 0) == 0 || pt.name.rfind("att", 0) == 0)) continue;
        const double te = time_it(pt.step, n_it, prefill ? 2 : 5);
        const double tg = prefill ? te : time_graph(pt.step, n_it);
        const double lim = pt.bytes / bw;
        sum_graph += tg;
        sum_limit += lim;
        std::printf("| %lld | %s | %.3f | %.3f | %.3f | %.3f | %.0f%% | %s |\n", static_cast<long long>(B), pt.name.c_str(), te * 1e3,
                    tg * 1e3, pt.bytes / 1e9, lim * 1e3, 100.0 * lim / tg,
                    pt.name.rfind("MoE", 0) == 0 ? std::to_string(distinct).substr(0, 5).c_str() : "");
        std::fflush(stdout);
      }
      std::printf("| %lld | **sum of the parts above** | | %.3f | | %.3f | %.0f%% | -> %.0f tok/s for these parts (limit %.0f) |\n",
                  static_cast<long long>(B), sum_graph * 1e3, sum_limit * 1e3, 100.0 * sum_limit / sum_graph,
                  static_cast<double>(B) / sum_graph, static_cast<double>(B) / sum_limit);
      K->free_memory(C, x);
      K->free_memory(C, y);
      K->free_memory(C, idd);
      K->free_memory(C, wd);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench failed: %s\n", e.what());
    return 1;
  }
  return 0;
}
