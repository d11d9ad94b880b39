// Prefill attention on the tensor cores (batches with a query run of >= 64
// rows): CUDA vs CPU provider, through kv_store + attention.  Head dims 256
// and 512 run the wgmma kernel (512 with two caches in 32-key steps), 128
// the mma.sync one.  Prompts of
// 65/300/2048 rows, prompts continuing after cached tokens, a decode row in
// the same batch, blocks scattered through the pool, fp8 and bf16 caches,
// sliding window, softcap, GQA, one-tensor layers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "fixtures_gpu.hpp"
#include "harness.hpp"

using namespace seatrt_test;

namespace {

struct Seq {
  int32_t len;   // cached tokens after this step
  int32_t rows;  // query rows this step (the last `rows` positions)
};

struct Case {
  int32_t cache_dtype;
  int64_t dim, q_heads, kv_heads;
  bool one_tensor;
  int32_t window;
  float softcap;
  std::vector<Seq> seqs;
  float q_sd = 1.0f;  // q's spread; the attention scale is divided by it, so the scores keep theirs
};

template <typename T>
std::vector<uint8_t> raw(const std::vector<T>& v) {
  return std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), reinterpret_cast<const uint8_t*>(v.data() + v.size()));
}

double run(const Case& c) {
  const int32_t bs = 16;
  const int32_t S = static_cast<int32_t>(c.seqs.size());
  int32_t max_blocks = 0, max_len = 0, max_rows = 0;
  for (const Seq& s : c.seqs) {
    max_blocks = std::max(max_blocks, (s.len + bs - 1) / bs);
    max_len = std::max(max_len, s.len);
    max_rows = std::max(max_rows, s.rows);
  }
  const int32_t num_blocks = S * max_blocks + 3;
  std::vector<int32_t> pool(static_cast<size_t>(num_blocks));
  std::iota(pool.begin(), pool.end(), 0);
  std::shuffle(pool.begin(), pool.end(), rng());
  std::vector<int32_t> tables(pool.begin(), pool.begin() + S * max_blocks);
  std::vector<int64_t> slots;
  std::vector<int32_t> query_start = {0}, lens;
  for (int32_t s = 0; s < S; ++s) {
    const Seq& q = c.seqs[static_cast<size_t>(s)];
    for (int32_t j = 0; j < q.len; ++j)
      slots.push_back(int64_t(tables[static_cast<size_t>(s * max_blocks + j / bs)]) * bs + j % bs);
    query_start.push_back(query_start.back() + q.rows);
    lens.push_back(q.len);
  }
  const int64_t T = query_start.back();

  PagedKv kv = store_random_kv(c.cache_dtype, num_blocks, bs, c.kv_heads, c.dim, c.one_tensor, slots);
  seatrt_kv_layer lc = kv.cuda, lp = kv.cpu;

  Pair q = both_random(SEATRT_DTYPE_BF16, {T, c.q_heads, c.dim}, c.q_sd), out = both_empty(SEATRT_DTYPE_F32, {T, c.q_heads, c.dim});
  Pair qs = both(raw(query_start), SEATRT_DTYPE_I32, {S + 1}), ls = both(raw(lens), SEATRT_DTYPE_I32, {S});
  Pair bt = both(raw(tables), SEATRT_DTYPE_I32, {S, max_blocks});
  auto args = [&](bool gpu, const seatrt_kv_layer* l) {
    seatrt_attention_args x{};
    x.struct_size = sizeof x;
    x.q = gpu ? &q.cuda : &q.cpu;
    x.cache = l;
    x.query_start = gpu ? &qs.cuda : &qs.cpu;
    x.seq_lens = gpu ? &ls.cuda : &ls.cpu;
    x.block_tables = gpu ? &bt.cuda : &bt.cpu;
    x.num_seqs = S;
    x.max_query_len = max_rows;
    x.max_seq_len = max_len;
    x.window = c.window;
    x.scale = 1.0f / 16.0f / c.q_sd;
    x.softcap = c.softcap;
    x.out = gpu ? &out.cuda : &out.cpu;
    return x;
  };
  seatrt_attention_args ac = args(true, &lc), ap = args(false, &lp);
  ok(cuda().run<SEATRT_OP_ATTENTION>(ac), "cuda attention");
  ok(cpu().run<SEATRT_OP_ATTENTION>(ap), "cpu attention");
  return rel_error(cuda().download_f32(out.cuda), cpu().download_f32(out.cpu));
}

}  // namespace

// BF16 P in the second MMA (as flash attention does): bound 1e-2.
TEST_CASE("prefill attention: sliding window 1024, fp8 K and V, head 256, 2048-row prompt", "[prefill]") {
  CHECK(run({SEATRT_DTYPE_F8_E4M3, 256, 4, 2, false, 1024, 0.0f, {{2048, 2048}}}) <= 1e-2);
}
TEST_CASE("prefill attention: full, fp8 one tensor, head 512, GQA 4/1, continued prompt + decode row + 65-row prompt", "[prefill]") {
  CHECK(run({SEATRT_DTYPE_F8_E4M3, 512, 4, 1, true, 0, 0.0f, {{400, 300}, {250, 1}, {65, 65}}}) <= 1e-2);
}
TEST_CASE("prefill attention: bf16 cache, head 256, window 100, softcap, two prompts", "[prefill]") {
  CHECK(run({SEATRT_DTYPE_BF16, 256, 4, 4, false, 100, 5.0f, {{65, 65}, {700, 300}}}) <= 1e-2);
}
TEST_CASE("prefill attention: head 128, bf16, GQA 8/2, 130-row prompt after 70 cached", "[prefill]") {
  CHECK(run({SEATRT_DTYPE_BF16, 128, 8, 2, false, 0, 0.0f, {{200, 130}}}) <= 1e-2);
}
TEST_CASE("prefill attention: head 256, fp8 one tensor, GQA 8/1, window 300, prompts after cached tokens", "[prefill]") {
  CHECK(run({SEATRT_DTYPE_F8_E4M3, 256, 8, 1, true, 300, 0.0f, {{900, 200}, {130, 130}, {77, 1}}}) <= 1e-2);
}
TEST_CASE("prefill attention: head 512, bf16 one tensor, GQA 8/2, 1000-row prompt after 500 cached", "[prefill]") {
  CHECK(run({SEATRT_DTYPE_BF16, 512, 8, 2, true, 0, 0.0f, {{1500, 1000}}}) <= 1e-2);
}
TEST_CASE("prefill attention: head 512, fp8, two tensors (32-key steps), window 200", "[prefill]") {
  CHECK(run({SEATRT_DTYPE_F8_E4M3, 512, 4, 2, false, 200, 0.0f, {{600, 333}}}) <= 1e-2);
}
// q far outside FP16's range (|q| ~ 1e5, scale 1/16e5): the FP16 path over
// an F8 cache must scale the q tile, and put the factor back in the scores.
TEST_CASE("prefill attention: fp8, head 256, q beyond the FP16 range", "[prefill]") {
  CHECK(run({SEATRT_DTYPE_F8_E4M3, 256, 4, 2, false, 0, 0.0f, {{300, 200}}, 1e5f}) <= 1e-2);
}
TEST_CASE("prefill attention: fp8 one tensor, head 512, q beyond the FP16 range", "[prefill]") {
  CHECK(run({SEATRT_DTYPE_F8_E4M3, 512, 4, 1, true, 0, 0.0f, {{128, 128}}, 1e5f}) <= 1e-2);
}
TEST_CASE("prefill attention: head 512, bf16, two tensors, GQA 8/2, 700-row prompt after 90 cached", "[prefill]") {
  CHECK(run({SEATRT_DTYPE_BF16, 512, 8, 2, false, 0, 0.0f, {{790, 700}, {40, 1}}}) <= 1e-2);
}
