// kv_store and paged attention at Gemma-4 shapes: sliding layers (16 query
// heads over 8 KV heads, head_dim 256, window 1024) and full layers (16 over
// 2, head_dim 512), block size 16, BF16 and F8 E4M3 caches, a batch mixing
// decode rows, a chunked prefill that crosses the window, and a fresh prefill.
#include <algorithm>
#include <numeric>

#include "cases.hpp"
#include "dtype.hpp"

namespace seatrt::conformance {
namespace {

using test::Tensor;

constexpr int64_t kBlock = 16;

struct Layer {
  int64_t q_heads, kv_heads, dim;
  int32_t window;
  int32_t cache_dtype;
  std::vector<int64_t> seq_lens, new_rows;
};

// Random cache contents: BF16 values in +-1, or F8 codes for values in +-1 / scale.
Tensor random_cache(std::mt19937& rng, int32_t dtype, std::vector<int64_t> shape, float scale) {
  if (dtype != SEATRT_DTYPE_F8_E4M3) return random_input(rng, dtype, std::move(shape));
  Tensor t(dtype, std::move(shape));
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.as<uint8_t>()[i] = cpu::f32_to_e4m3(value(rng) / scale);
  return t;
}

Case attention_case(const Layer& l, const std::string& label) {
  return {SEATRT_OP_ATTENTION, label, kBoundBF16, [=](Provider& p, std::mt19937& rng) {
            const int64_t seqs = static_cast<int64_t>(l.seq_lens.size());
            int64_t max_blocks = 0, used_blocks = 0, tokens = 0;
            for (int64_t s = 0; s < seqs; ++s) {
              const int64_t b = (l.seq_lens[static_cast<size_t>(s)] + kBlock - 1) / kBlock;
              max_blocks = std::max(max_blocks, b);
              used_blocks += b;
              tokens += l.new_rows[static_cast<size_t>(s)];
            }
            const int64_t num_blocks = used_blocks + 7;
            std::vector<int64_t> pool(static_cast<size_t>(num_blocks));
            std::iota(pool.begin(), pool.end(), 0);
            std::shuffle(pool.begin(), pool.end(), rng);
            std::vector<int64_t> tables(static_cast<size_t>(seqs * max_blocks), 0);
            size_t next = 0;
            for (int64_t s = 0; s < seqs; ++s) {
              const int64_t b = (l.seq_lens[static_cast<size_t>(s)] + kBlock - 1) / kBlock;
              for (int64_t i = 0; i < b; ++i) tables[static_cast<size_t>(s * max_blocks + i)] = pool[next++];
            }
            std::vector<int64_t> qs = {0}, lens;
            for (int64_t s = 0; s < seqs; ++s) {
              qs.push_back(qs.back() + l.new_rows[static_cast<size_t>(s)]);
              lens.push_back(l.seq_lens[static_cast<size_t>(s)]);
            }
            const float k_scale = 0.0625f, v_scale = 0.03125f;
            Tensor k_cache = random_cache(rng, l.cache_dtype, {num_blocks, kBlock, l.kv_heads, l.dim}, k_scale);
            Tensor v_cache = random_cache(rng, l.cache_dtype, {num_blocks, kBlock, l.kv_heads, l.dim}, v_scale);
            Tensor q = random_input(rng, SEATRT_DTYPE_BF16, {tokens, l.q_heads, l.dim}, 0.25);
            Tensor out(SEATRT_DTYPE_BF16, {tokens, l.q_heads, l.dim});
            Tensor qs_t = int_input(SEATRT_DTYPE_I32, {seqs + 1}, qs);
            Tensor lens_t = int_input(SEATRT_DTYPE_I32, {seqs}, lens);
            Tensor tables_t = int_input(SEATRT_DTYPE_I32, {seqs, max_blocks}, tables);
            DeviceTensor dk(p, k_cache), dv(p, v_cache), dq(p, q), dout(p, out), dqs(p, qs_t), dlens(p, lens_t),
                dtables(p, tables_t);
            seatrt_kv_layer layer{};
            layer.struct_size = sizeof layer;
            layer.block_size = static_cast<int32_t>(kBlock);
            layer.k_cache = *dk.get();
            layer.v_cache = *dv.get();
            const bool f8 = l.cache_dtype == SEATRT_DTYPE_F8_E4M3;
            layer.k_scale = f8 ? k_scale : 1.0f;
            layer.v_scale = f8 ? v_scale : 1.0f;
            seatrt_attention_args args{};
            args.struct_size = sizeof args;
            args.q = dq.get();
            args.cache = &layer;
            args.query_start = dqs.get();
            args.seq_lens = dlens.get();
            args.block_tables = dtables.get();
            args.num_seqs = static_cast<int32_t>(seqs);
            args.max_query_len = static_cast<int32_t>(*std::max_element(l.new_rows.begin(), l.new_rows.end()));
            args.max_seq_len = static_cast<int32_t>(*std::max_element(l.seq_lens.begin(), l.seq_lens.end()));
            args.window = l.window;
            args.scale = 1.0f;
            args.softcap = 0.0f;
            args.out = dout.get();
            run_op<SEATRT_OP_ATTENTION>(p, args);
            dout.download(out);
            return Outputs{{}, out.values()};
          }};
}

Case kv_store_case(int64_t kv_heads, int64_t dim, int32_t cache_dtype, bool single, const std::string& label) {
  return {SEATRT_OP_KV_STORE, label, cache_dtype == SEATRT_DTYPE_F8_E4M3 ? kBoundF8 : kBoundBF16, [=](Provider& p, std::mt19937& rng) {
            const int64_t tokens = 24, num_blocks = 8;
            std::vector<int64_t> slots(static_cast<size_t>(num_blocks * kBlock));
            std::iota(slots.begin(), slots.end(), 0);
            std::shuffle(slots.begin(), slots.end(), rng);
            slots.resize(static_cast<size_t>(tokens));
            slots[3] = slots[17] = -1;  // padding tokens
            Tensor k = random_input(rng, SEATRT_DTYPE_BF16, {tokens, kv_heads, dim});
            Tensor v = random_input(rng, SEATRT_DTYPE_BF16, {tokens, kv_heads, dim});
            Tensor slot_t = int_input(SEATRT_DTYPE_I64, {tokens}, slots);
            Tensor k_cache(cache_dtype, {num_blocks, kBlock, kv_heads, dim});
            Tensor v_cache(cache_dtype, {num_blocks, kBlock, kv_heads, dim});
            DeviceTensor dk(p, k), dv(p, v), dslots(p, slot_t), dkc(p, k_cache), dvc(p, v_cache);
            seatrt_kv_layer layer{};
            layer.struct_size = sizeof layer;
            layer.block_size = static_cast<int32_t>(kBlock);
            layer.k_cache = *dkc.get();
            layer.v_cache = *dvc.get();
            if (single) layer.v_cache.data = nullptr;
            const bool f8 = cache_dtype == SEATRT_DTYPE_F8_E4M3;
            layer.k_scale = f8 ? 0.0625f : 1.0f;
            layer.v_scale = f8 ? 0.03125f : 1.0f;
            seatrt_kv_store_args args{sizeof args, dk.get(), single ? nullptr : dv.get(), dslots.get(), &layer};
            run_op<SEATRT_OP_KV_STORE>(p, args);
            dkc.download(k_cache);
            Outputs o{{}, k_cache.values()};
            if (!single) {
              dvc.download(v_cache);
              const std::vector<double> vv = v_cache.values();
              o.approx.insert(o.approx.end(), vv.begin(), vv.end());
            }
            return o;
          }};
}

}  // namespace

void add_attention_cases(std::vector<Case>& cases) {
  cases.push_back(kv_store_case(8, 256, SEATRT_DTYPE_BF16, false, "sliding BF16 cache [8 blocks x 16, 8, 256], 2 pad slots"));
  cases.push_back(kv_store_case(8, 256, SEATRT_DTYPE_F8_E4M3, false, "sliding F8 cache, k_scale 1/16, v_scale 1/32"));
  cases.push_back(kv_store_case(2, 512, SEATRT_DTYPE_BF16, true, "full single-tensor BF16 cache [.., 2, 512]"));
  const std::vector<int64_t> sliding_lens = {1100, 300, 1040, 20}, sliding_rows = {1, 1, 16, 20};
  cases.push_back(attention_case({16, 8, 256, 1024, SEATRT_DTYPE_BF16, sliding_lens, sliding_rows},
                                 "sliding GQA 2, D 256, window 1024, BF16 cache, decode+prefill"));
  cases.push_back(attention_case({16, 8, 256, 1024, SEATRT_DTYPE_F8_E4M3, sliding_lens, sliding_rows},
                                 "sliding GQA 2, D 256, window 1024, F8 cache"));
  cases.push_back(attention_case({16, 2, 512, 0, SEATRT_DTYPE_BF16, {600, 300, 520, 20}, {1, 1, 16, 20}},
                                 "full GQA 8, D 512, causal, BF16 cache"));
  cases.push_back(attention_case({16, 2, 512, 0, SEATRT_DTYPE_F8_E4M3, {600, 37}, {1, 5}},
                                 "full GQA 8, D 512, causal, F8 cache"));
}

}  // namespace seatrt::conformance
