// Decode attention benchmark of the CUDA provider at the Gemma-4 26B-A4B
// shapes, through the plugin ABI only: 30 layers (25 sliding: 8 KV heads x
// 256, window 1024, K and V; 5 full: 2 KV heads x 512, one tensor), 16 q
// heads, fp8 paged KV cache, one query row per sequence, every sequence at
// the same context.  For each context and batch it launches the 30 layers
// from a plan twice: through the decode kernel (max_query_len 1) and through
// the general kernel (max_query_len 2 routes a decode batch there: the
// kernel before the decode path existed), beside the KV byte limit (K and V
// bytes read once per (sequence, KV head) / measured copy bandwidth).
// Sliding layers hold only each sequence's last `window` positions (table
// entries before them are -1: never read); every layer has its own cache so
// L2 does not carry one layer's keys into the next.
//
// usage: seatrt-bench-attention <libseatrt_kernels_cuda.so> [iterations] [contexts, e.g. 1024,8192] [batches]
//        [noref: skip the general kernel]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "seatrt/seatrt.h"

namespace {

using namespace seatrt_bench;

seatrt_tensor vec_i32(void* d, int64_t n) {
  seatrt_tensor t = tensor(d, SEATRT_DTYPE_I32, 1, n);
  t.ndim = 1;
  t.shape[0] = n;
  t.strides[0] = 1;
  return t;
}

struct Layer {
  seatrt_kv_layer kv{};
  int64_t heads = 0, dim = 0;
  bool sliding = false;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <libseatrt_kernels_cuda.so> [iterations] [contexts] [batches]\n", argv[0]);
    return 2;
  }
  const int iters = argc > 2 ? std::atoi(argv[2]) : 10;
  const std::vector<int64_t> contexts = parse_list(argc > 3 ? argv[3] : "1024,8192");
  const std::vector<int64_t> batches = parse_list(argc > 4 ? argv[4] : "1,4,8,16,32");
  const bool reference = !(argc > 5 && std::string(argv[5]) == "noref");
  try {
    if (!open_provider(argv[1])) return 77;

    const double bw = copy_bandwidth(2ull << 30);  // device to device, read + written

    const int layers = 30;
    const int64_t q_heads = 16, bsz = 16, window = 1024;
    const int64_t max_ctx = *std::max_element(contexts.begin(), contexts.end());
    const int64_t max_seqs = *std::max_element(batches.begin(), batches.end());
    // Blocks per sequence: the window for sliding layers, the context for full ones.
    const int64_t win_blocks = window / bsz, full_blocks = (max_ctx + bsz - 1) / bsz;
    std::vector<Layer> L(layers);
    for (int l = 0; l < layers; ++l) {
      Layer& y = L[static_cast<size_t>(l)];
      y.sliding = l % 6 != 5;
      y.heads = y.sliding ? 8 : 2;
      y.dim = y.sliding ? 256 : 512;
      y.kv.struct_size = sizeof(seatrt_kv_layer);
      y.kv.block_size = static_cast<int32_t>(bsz);
      y.kv.k_scale = 1.0f;
      y.kv.v_scale = 1.0f;
      const int64_t nb = max_seqs * (y.sliding ? win_blocks : full_blocks);
      const size_t bytes = static_cast<size_t>(nb * bsz * y.heads * y.dim);
      auto cache = [&](seatrt_tensor& t) {
        void* d = dev_alloc(bytes);
        ok(K->memset_zero(C, S, d, bytes), "zero cache");  // fp8 zeros: finite, same bytes
        t = tensor(d, SEATRT_DTYPE_F8_E4M3, {nb, bsz, y.heads, y.dim});
      };
      cache(y.kv.k_cache);
      if (y.sliding) cache(y.kv.v_cache);
    }
    void* q = dev_alloc(static_cast<size_t>(max_seqs * q_heads * 512 * 2));
    ok(K->memset_zero(C, S, q, static_cast<size_t>(max_seqs * q_heads * 512 * 2)), "zero q");
    void* o = dev_alloc(static_cast<size_t>(max_seqs * q_heads * 512 * 2));
    std::vector<int32_t> qstart(static_cast<size_t>(max_seqs + 1));
    for (size_t i = 0; i < qstart.size(); ++i) qstart[i] = static_cast<int32_t>(i);
    void* qstart_d = dev_alloc(qstart.size() * 4);
    ok(K->copy(C, S, qstart_d, SEATRT_DEVICE_CUDA, qstart.data(), SEATRT_DEVICE_CPU, qstart.size() * 4), "qstart");
    void* lens_d = dev_alloc(static_cast<size_t>(max_seqs) * 4);
    void* full_d = dev_alloc(static_cast<size_t>(max_seqs * full_blocks) * 4);
    void* slide_d = dev_alloc(static_cast<size_t>(max_seqs * full_blocks) * 4);
    ok(K->stream_sync(C, S), "sync");

    std::printf("\n| context | batch | decode kernel ms | general kernel ms | KV bytes GB | limit ms | decode %% of limit |\n");
    std::printf("|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int64_t ctx : contexts) {
      const int64_t blocks = (ctx + bsz - 1) / bsz;
      // Tables: full layers map every block; sliding layers only the window's.
      std::vector<int32_t> full(static_cast<size_t>(max_seqs * blocks)), slide(full.size(), -1);
      const int64_t first_win_block = std::max<int64_t>(0, ctx - window) / bsz;
      for (int64_t s = 0; s < max_seqs; ++s)
        for (int64_t i = 0; i < blocks; ++i) {
          full[static_cast<size_t>(s * blocks + i)] = static_cast<int32_t>(s * full_blocks + i);
          if (i >= first_win_block && i - first_win_block < win_blocks)
            slide[static_cast<size_t>(s * blocks + i)] = static_cast<int32_t>(s * win_blocks + i - first_win_block);
        }
      std::vector<int32_t> lens(static_cast<size_t>(max_seqs), static_cast<int32_t>(ctx));
      ok(K->copy(C, S, full_d, SEATRT_DEVICE_CUDA, full.data(), SEATRT_DEVICE_CPU, full.size() * 4), "tables");
      ok(K->copy(C, S, slide_d, SEATRT_DEVICE_CUDA, slide.data(), SEATRT_DEVICE_CPU, slide.size() * 4), "tables");
      ok(K->copy(C, S, lens_d, SEATRT_DEVICE_CUDA, lens.data(), SEATRT_DEVICE_CPU, lens.size() * 4), "lens");
      ok(K->stream_sync(C, S), "sync");
      for (int64_t B : batches) {
        double kv_bytes = 0;
        for (const Layer& y : L)
          kv_bytes += static_cast<double>(B * std::min(ctx, y.sliding ? window : ctx) * y.heads * y.dim * (y.sliding ? 2 : 1));
        auto step = [&](int32_t max_query_len) {
          for (Layer& y : L) {
            seatrt_tensor qt = tensor(q, SEATRT_DTYPE_BF16, B, q_heads);
            qt.ndim = 3;
            qt.shape[2] = y.dim;
            qt.strides[2] = 1;
            qt.strides[1] = y.dim;
            qt.strides[0] = q_heads * y.dim;
            seatrt_tensor ot = qt;
            ot.data = o;
            seatrt_tensor qs = vec_i32(qstart_d, B + 1), ls = vec_i32(lens_d, B);
            seatrt_tensor bt = tensor(y.sliding ? slide_d : full_d, SEATRT_DTYPE_I32, B, blocks);
            seatrt_attention_args aa{};
            aa.struct_size = sizeof aa;
            aa.q = &qt;
            aa.cache = &y.kv;
            aa.query_start = &qs;
            aa.seq_lens = &ls;
            aa.block_tables = &bt;
            aa.num_seqs = static_cast<int32_t>(B);
            aa.max_query_len = max_query_len;
            aa.max_seq_len = static_cast<int32_t>(ctx);
            aa.window = y.sliding ? static_cast<int32_t>(window) : 0;
            aa.scale = 1.0f;
            aa.out = &ot;
            run<SEATRT_OP_ATTENTION>(aa, "attention");
          }
        };
        const double t_new = time_graph([&] { step(1); }, iters);
        const double t_old = reference ? time_graph([&] { step(2); }, std::max(1, iters / 4)) : 0.0;
        const double lim = kv_bytes / bw;
        std::printf("| %lld | %lld | %.3f | %.3f | %.3f | %.3f | %.0f%% |\n", static_cast<long long>(ctx),
                    static_cast<long long>(B), t_new * 1e3, t_old * 1e3, kv_bytes / 1e9, lim * 1e3, 100.0 * lim / t_new);
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench failed: %s\n", e.what());
    return 1;
  }
  return 0;
}
