// kv_store + paged attention: CUDA vs CPU provider.  Two sequences in one
// batch: one prefilling 20 rows from position 0, one decoding 1 row at
// position 199 (its key range is split across blocks); blocks scattered
// through the pool.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "harness.hpp"

using namespace seatrt_test;

namespace {

struct Config {
  int32_t cache_dtype;
  int64_t dim, q_heads, kv_heads;
  bool one_tensor;
  int32_t window;
  float softcap;
};

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  return std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), reinterpret_cast<const uint8_t*>(v.data() + v.size()));
}

seatrt_kv_layer layer(const seatrt_tensor& k, const seatrt_tensor* v, int32_t bs) {
  seatrt_kv_layer l{};
  l.struct_size = sizeof l;
  l.block_size = bs;
  l.k_cache = k;
  if (v) l.v_cache = *v;
  l.k_scale = 0.5f;
  l.v_scale = 0.25f;
  return l;
}

void run(const Config& c) {
  const int32_t bs = 16, num_blocks = 64, max_blocks = 16;
  const std::vector<int32_t> seq_lens = {20, 200};
  const std::vector<int32_t> query_start = {0, 20, 21};
  // Random distinct blocks for the two sequences.
  std::vector<int32_t> pool(num_blocks);
  std::iota(pool.begin(), pool.end(), 0);
  std::shuffle(pool.begin(), pool.end(), rng());
  std::vector<int32_t> tables(pool.begin(), pool.begin() + 2 * max_blocks);
  // Every cached token of both sequences gets a slot.
  std::vector<int64_t> slots;
  for (int s = 0; s < 2; ++s)
    for (int32_t j = 0; j < seq_lens[static_cast<size_t>(s)]; ++j)
      slots.push_back(int64_t(tables[static_cast<size_t>(s * max_blocks + j / bs)]) * bs + j % bs);
  const int64_t n = static_cast<int64_t>(slots.size());

  Pair kc = both_empty(c.cache_dtype, {num_blocks, bs, c.kv_heads, c.dim});
  Pair vc = both_empty(c.cache_dtype, {num_blocks, bs, c.kv_heads, c.dim});
  Pair k = both_random(SEATRT_DTYPE_BF16, {n, c.kv_heads, c.dim}), v = both_random(SEATRT_DTYPE_BF16, {n, c.kv_heads, c.dim});
  Pair sl = both(bytes_of(slots), SEATRT_DTYPE_I64, {n});
  seatrt_kv_layer lc = layer(kc.cuda, c.one_tensor ? nullptr : &vc.cuda, bs);
  seatrt_kv_layer lp = layer(kc.cpu, c.one_tensor ? nullptr : &vc.cpu, bs);
  seatrt_kv_store_args sc{sizeof(seatrt_kv_store_args), &k.cuda, c.one_tensor ? nullptr : &v.cuda, &sl.cuda, &lc};
  seatrt_kv_store_args sp{sizeof(seatrt_kv_store_args), &k.cpu, c.one_tensor ? nullptr : &v.cpu, &sl.cpu, &lp};
  ok(cuda().api().kv_store(cuda().ctx(), cuda().stream(), &sc), "cuda kv_store");
  ok(cpu().api().kv_store(cpu().ctx(), cpu().stream(), &sp), "cpu kv_store");
  // The cache contents must match bit for bit (same conversion).
  std::vector<uint8_t> kc_cuda = cuda().download(kc.cuda), kc_cpu = cpu().download(kc.cpu);
  size_t differ = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t e = 0; e < c.kv_heads * c.dim; ++e) {
      const size_t at = static_cast<size_t>((slots[static_cast<size_t>(i)] * c.kv_heads * c.dim + e) * int64_t(elem_bytes(c.cache_dtype)));
      for (size_t b = 0; b < elem_bytes(c.cache_dtype); ++b) differ += kc_cuda[at + b] != kc_cpu[at + b];
    }
  CHECK(differ == 0);

  const int64_t T = 21;
  Pair q = both_random(SEATRT_DTYPE_BF16, {T, c.q_heads, c.dim}), out = both_empty(SEATRT_DTYPE_F32, {T, c.q_heads, c.dim});
  Pair qs = both(bytes_of(query_start), SEATRT_DTYPE_I32, {3}), lens = both(bytes_of(seq_lens), SEATRT_DTYPE_I32, {2});
  Pair bt = both(bytes_of(tables), SEATRT_DTYPE_I32, {2, max_blocks});
  auto args = [&](const seatrt_tensor* qq, const seatrt_kv_layer* l, const Pair& a, const Pair& b, const Pair& d, seatrt_tensor* o, bool gpu) {
    seatrt_attention_args x{};
    x.struct_size = sizeof x;
    x.q = qq;
    x.cache = l;
    x.query_start = gpu ? &a.cuda : &a.cpu;
    x.seq_lens = gpu ? &b.cuda : &b.cpu;
    x.block_tables = gpu ? &d.cuda : &d.cpu;
    x.num_seqs = 2;
    x.max_query_len = 20;
    x.max_seq_len = 200;
    x.window = c.window;
    x.scale = 1.0f / 16.0f;
    x.softcap = c.softcap;
    x.out = o;
    return x;
  };
  seatrt_attention_args ac = args(&q.cuda, &lc, qs, lens, bt, &out.cuda, true);
  seatrt_attention_args ap = args(&q.cpu, &lp, qs, lens, bt, &out.cpu, false);
  ok(cuda().api().attention(cuda().ctx(), cuda().stream(), &ac), "cuda attention");
  ok(cpu().api().attention(cpu().ctx(), cpu().stream(), &ap), "cpu attention");
  CHECK(rel_error(cuda().download_f32(out.cuda), cpu().download_f32(out.cpu)) <= 1e-4);
}

}  // namespace

TEST_CASE("sliding layer: bf16 cache, head 256, GQA 16/8, window 24") {
  run({SEATRT_DTYPE_BF16, 256, 16, 8, false, 24, 0.0f});
}
TEST_CASE("full layer: fp8 cache, head 512, GQA 16/2, one tensor for K and V") {
  run({SEATRT_DTYPE_F8_E4M3, 512, 16, 2, true, 0, 0.0f});
}
TEST_CASE("bf16 cache, head 256, full attention, softcap") {
  run({SEATRT_DTYPE_BF16, 256, 8, 8, false, 0, 5.0f});
}
