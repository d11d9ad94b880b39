// kv_store + paged attention: CUDA vs CPU provider.  Two sequences in one
// batch: one prefilling 20 rows from position 0, one decoding 1 row at
// position 199 (its key range is split across blocks); blocks scattered
// through the pool.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "fixtures_gpu.hpp"
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

  PagedKv kv = store_random_kv(c.cache_dtype, num_blocks, bs, c.kv_heads, c.dim, c.one_tensor, slots);
  seatrt_kv_layer lc = kv.cuda, lp = kv.cpu;
  // The cache contents must match bit for bit (same conversion).
  std::vector<uint8_t> kc_cuda = cuda().download(kv.k_cache.cuda), kc_cpu = cpu().download(kv.k_cache.cpu);
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
  ok(cuda().run<SEATRT_OP_ATTENTION>(ac), "cuda attention");
  ok(cpu().run<SEATRT_OP_ATTENTION>(ap), "cpu attention");
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

// Decode batches (one query row per sequence, max_query_len 1): the grouped
// split-K kernel.  Every sequence's cache is filled through kv_store on both
// providers; blocks are scattered through the pool, table entries past a
// sequence's blocks are -1, and max_seq_len may exceed every length (the
// graph runner pads it to a power-of-two table width).
namespace {

struct DecodeCase {
  int32_t cache_dtype;
  int64_t dim, q_heads, kv_heads;
  bool one_tensor;
  int32_t window;
  float softcap;
  std::vector<int32_t> lens;
  int32_t max_seq_len;
};

void run_decode(const DecodeCase& c) {
  const int32_t bs = 16;
  const auto S = static_cast<int64_t>(c.lens.size());
  const int64_t width = (c.max_seq_len + bs - 1) / bs;
  int64_t used = 0;
  for (int32_t len : c.lens) used += (len + bs - 1) / bs;
  const int64_t num_blocks = used + 8;
  std::vector<int32_t> pool(static_cast<size_t>(num_blocks));
  std::iota(pool.begin(), pool.end(), 0);
  std::shuffle(pool.begin(), pool.end(), rng());
  std::vector<int32_t> tables(static_cast<size_t>(S * width), -1);
  std::vector<int64_t> slots;
  size_t next = 0;
  for (int64_t s = 0; s < S; ++s) {
    const int32_t len = c.lens[static_cast<size_t>(s)];
    for (int32_t b = 0; b < (len + bs - 1) / bs; ++b) tables[static_cast<size_t>(s * width + b)] = pool[next++];
    for (int32_t j = 0; j < len; ++j)
      slots.push_back(int64_t(tables[static_cast<size_t>(s * width + j / bs)]) * bs + j % bs);
  }

  PagedKv kv = store_random_kv(c.cache_dtype, num_blocks, bs, c.kv_heads, c.dim, c.one_tensor, slots);
  seatrt_kv_layer lc = kv.cuda, lp = kv.cpu;

  std::vector<int32_t> query_start(static_cast<size_t>(S + 1));
  std::iota(query_start.begin(), query_start.end(), 0);
  Pair q = both_random(SEATRT_DTYPE_BF16, {S, c.q_heads, c.dim}), out = both_empty(SEATRT_DTYPE_F32, {S, c.q_heads, c.dim});
  Pair qs = both(bytes_of(query_start), SEATRT_DTYPE_I32, {S + 1}), lens = both(bytes_of(c.lens), SEATRT_DTYPE_I32, {S});
  Pair bt = both(bytes_of(tables), SEATRT_DTYPE_I32, {S, width});
  auto args = [&](bool gpu) {
    seatrt_attention_args x{};
    x.struct_size = sizeof x;
    x.q = gpu ? &q.cuda : &q.cpu;
    x.cache = gpu ? &lc : &lp;
    x.query_start = gpu ? &qs.cuda : &qs.cpu;
    x.seq_lens = gpu ? &lens.cuda : &lens.cpu;
    x.block_tables = gpu ? &bt.cuda : &bt.cpu;
    x.num_seqs = static_cast<int32_t>(S);
    x.max_query_len = 1;
    x.max_seq_len = c.max_seq_len;
    x.window = c.window;
    x.scale = 1.0f / 16.0f;
    x.softcap = c.softcap;
    x.out = gpu ? &out.cuda : &out.cpu;
    return x;
  };
  seatrt_attention_args ac = args(true), ap = args(false);
  ok(cuda().run<SEATRT_OP_ATTENTION>(ac), "cuda attention");
  ok(cpu().run<SEATRT_OP_ATTENTION>(ap), "cpu attention");
  const double err = rel_error(cuda().download_f32(out.cuda), cpu().download_f32(out.cpu));
  INFO("relative error " << err);
  CHECK(err <= 1e-4);
}

std::vector<int32_t> random_lens(size_t count, int32_t lo, int32_t hi) {
  std::uniform_int_distribution<int32_t> d(lo, hi);
  std::vector<int32_t> v(count);
  for (int32_t& x : v) x = d(rng());
  return v;
}

const std::vector<int32_t> kMixed = {1, 17, 700, 1500, 3000};

}  // namespace

TEST_CASE("decode: batch 1, fp8 sliding layer (8 kv heads x 256, GQA 2), 1024 keys") {
  run_decode({SEATRT_DTYPE_F8_E4M3, 256, 16, 8, false, 1024, 0.0f, {1024}, 1024});
}
TEST_CASE("decode: batch 1, fp8 full layer (2 kv heads x 512, GQA 8, one tensor), padded max_seq_len") {
  run_decode({SEATRT_DTYPE_F8_E4M3, 512, 16, 2, true, 0, 0.0f, {3000}, 4096});
}
TEST_CASE("decode: batch 3, bf16 sliding layer, window 1024, padded max_seq_len") {
  run_decode({SEATRT_DTYPE_BF16, 256, 16, 8, false, 1024, 0.0f, {1, 17, 1500}, 2048});
}
TEST_CASE("decode: mixed lengths 1/17/700/1500/3000, fp8, windowed, GQA 2") {
  run_decode({SEATRT_DTYPE_F8_E4M3, 256, 16, 8, false, 1024, 0.0f, kMixed, 4096});
}
TEST_CASE("decode: mixed lengths, fp8 full attention, GQA 8, one tensor") {
  run_decode({SEATRT_DTYPE_F8_E4M3, 512, 16, 2, true, 0, 0.0f, kMixed, 4096});
}
TEST_CASE("decode: mixed lengths, bf16 full attention, GQA 8, separate V, softcap") {
  run_decode({SEATRT_DTYPE_BF16, 512, 16, 2, false, 0, 5.0f, kMixed, 3000});
}
TEST_CASE("decode: batch 16, fp8 sliding layer, 1024 keys each") {
  run_decode({SEATRT_DTYPE_F8_E4M3, 256, 16, 8, false, 1024, 0.0f, std::vector<int32_t>(16, 1024), 1024});
}
TEST_CASE("decode: batch 32, fp8 full layer, one tensor, random lengths, padded") {
  run_decode({SEATRT_DTYPE_F8_E4M3, 512, 16, 2, true, 0, 0.0f, random_lens(32, 1, 1200), 2048});
}
TEST_CASE("decode: batch 32, bf16 sliding layer, window 256, random lengths, padded") {
  run_decode({SEATRT_DTYPE_BF16, 256, 16, 8, false, 256, 0.0f, random_lens(32, 1, 900), 1024});
}
TEST_CASE("decode: head 128, fp8 GQA 4 and bf16 GQA 1 (MHA), softcap") {
  run_decode({SEATRT_DTYPE_F8_E4M3, 128, 16, 4, false, 0, 0.0f, random_lens(4, 1, 600), 1024});
  run_decode({SEATRT_DTYPE_BF16, 128, 8, 8, false, 100, 5.0f, random_lens(4, 1, 600), 1024});
}
