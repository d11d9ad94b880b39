// kv_store + attention over a paged cache against a naive reference: several
// sequences (prefill, decode, chunked prefill), partial blocks, shuffled
// block tables, GQA, sliding windows, softcap, padding slots (-1), F32 /
// BF16 / F8 caches and single-tensor layers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "test_support.hpp"

using namespace seatrt;
using test::Tensor;

namespace {

cpu::Context& ctx() {
  static cpu::Context c(4);
  return c;
}

struct Case {
  int64_t q_heads, kv_heads, dim;
  int32_t window;
  float softcap;
  int32_t cache_dtype;
  bool single;
};

void run_case(const Case& c, uint32_t seed) {
  CAPTURE(c.q_heads, c.kv_heads, c.dim, c.window, c.softcap, c.cache_dtype, c.single);
  std::mt19937 rng(seed);
  const int64_t block = 4, num_blocks = 16, max_blocks = 4;
  const std::vector<int64_t> seq_lens = {7, 10, 5};
  const std::vector<int64_t> new_rows = {7, 1, 2};
  // Block tables: a random permutation of the pool.
  std::vector<int64_t> pool(num_blocks);
  std::iota(pool.begin(), pool.end(), 0);
  std::shuffle(pool.begin(), pool.end(), rng);
  std::vector<int64_t> tables(3 * max_blocks);
  for (size_t i = 0; i < tables.size(); ++i) tables[i] = pool[i];

  // Store every position of every sequence (plus two padding tokens) in one call.
  const int64_t total = 7 + 10 + 5 + 2;
  Tensor k = test::random_tensor(rng, SEATRT_DTYPE_F32, {total, c.kv_heads, c.dim}, -1, 1);
  Tensor v = test::random_tensor(rng, SEATRT_DTYPE_F32, {total, c.kv_heads, c.dim}, -1, 1);
  std::vector<int64_t> slots;
  std::vector<int64_t> token_of;  // (seq, pos) -> row in k/v
  for (size_t s = 0; s < 3; ++s) {
    for (int64_t p = 0; p < seq_lens[s]; ++p) {
      token_of.push_back(static_cast<int64_t>(slots.size()));
      slots.push_back(tables[s * max_blocks + static_cast<size_t>(p / block)] * block + p % block);
    }
    if (s == 0) slots.push_back(-1);
  }
  slots.push_back(-1);
  // token_of was filled in order but the padding shifts later rows: rebuild.
  token_of.clear();
  for (int64_t i = 0; i < total; ++i) {
    if (slots[static_cast<size_t>(i)] >= 0) token_of.push_back(i);
  }
  Tensor slot_mapping = test::int_tensor(SEATRT_DTYPE_I64, {total}, slots);
  Tensor k_cache(c.cache_dtype, {num_blocks, block, c.kv_heads, c.dim});
  Tensor v_cache(c.cache_dtype, {num_blocks, block, c.kv_heads, c.dim});
  std::fill_n(k_cache.bytes(), k_cache.numel() * static_cast<int64_t>(k_cache.dtype() == SEATRT_DTYPE_F32 ? 4 : k_cache.dtype() == SEATRT_DTYPE_BF16 ? 2 : 1), 0x3C);  // sentinel
  seatrt_kv_layer layer{};
  layer.struct_size = sizeof layer;
  layer.block_size = static_cast<int32_t>(block);
  layer.k_cache = k_cache.desc();
  layer.v_cache = v_cache.desc();
  if (c.single) layer.v_cache.data = nullptr;
  layer.k_scale = c.cache_dtype == SEATRT_DTYPE_F8_E4M3 ? 0.01f : 1.0f;
  layer.v_scale = c.cache_dtype == SEATRT_DTYPE_F8_E4M3 ? 0.02f : 1.0f;
  seatrt_kv_store_args store{sizeof store, k.get(), c.single ? nullptr : v.get(), slot_mapping.get(), &layer};
  cpu::kv_store(ctx(), store);

  // Slots nobody wrote keep the sentinel (padding tokens were skipped).
  std::vector<bool> written(static_cast<size_t>(num_blocks * block), false);
  for (int64_t s : slots) if (s >= 0) written[static_cast<size_t>(s)] = true;
  const int64_t slot_elems = c.kv_heads * c.dim;
  const int64_t esize = k_cache.dtype() == SEATRT_DTYPE_F32 ? 4 : k_cache.dtype() == SEATRT_DTYPE_BF16 ? 2 : 1;
  for (int64_t s = 0; s < num_blocks * block; ++s) {
    if (!written[static_cast<size_t>(s)]) REQUIRE(k_cache.bytes()[s * slot_elems * esize] == 0x3C);
  }

  // F8: every stored code decodes (by the E4M3 definition) to value / scale
  // within half a step (1/16 relative, or half the smallest subnormal).
  if (c.cache_dtype == SEATRT_DTYPE_F8_E4M3) {
    for (int64_t i = 0; i < total; ++i) {
      const int64_t s = slots[static_cast<size_t>(i)];
      if (s < 0) continue;
      for (int64_t e = 0; e < slot_elems; ++e) {
        const double want = k.at(i * slot_elems + e) / layer.k_scale;
        const double got = test::e4m3_value(k_cache.bytes()[s * slot_elems + e]);
        REQUIRE(std::fabs(got - want) <= std::fabs(want) / 16 + std::ldexp(1.0, -10));
      }
    }
  }

  // What the cache holds, by the test's own codecs.
  const auto held = [&](const Tensor& src, int64_t row, int64_t h, int64_t d, float scale) {
    const double x = src.at((row * c.kv_heads + h) * c.dim + d);
    if (c.cache_dtype == SEATRT_DTYPE_BF16) return test::bf16_value(test::bf16_nearest(static_cast<float>(x)));
    (void)scale;
    return x;  // F32 exact; F8 compared loosely against the unquantized value
  };

  const int64_t tokens = 7 + 1 + 2 + 1;  // one trailing row outside every sequence
  Tensor q = test::random_tensor(rng, SEATRT_DTYPE_BF16, {tokens, c.q_heads, c.dim}, -1, 1);
  Tensor out(SEATRT_DTYPE_F32, {tokens, c.q_heads, c.dim});
  for (int64_t i = 0; i < out.numel(); ++i) out.set(i, 123.0);
  Tensor query_start = test::int_tensor(SEATRT_DTYPE_I32, {4}, {0, 7, 8, 10});
  Tensor seq_lens_t = test::int_tensor(SEATRT_DTYPE_I32, {3}, seq_lens);
  Tensor tables_t = test::int_tensor(SEATRT_DTYPE_I32, {3, max_blocks}, tables);
  seatrt_attention_args args{};
  args.struct_size = sizeof args;
  args.q = q.get();
  args.cache = &layer;
  args.query_start = query_start.get();
  args.seq_lens = seq_lens_t.get();
  args.block_tables = tables_t.get();
  args.num_seqs = 3;
  args.max_query_len = 7;
  args.max_seq_len = 10;
  args.window = c.window;
  args.scale = 0.7f;
  args.softcap = c.softcap;
  args.out = out.get();
  cpu::attention(ctx(), args);

  std::vector<double> expected(static_cast<size_t>(out.numel()), 123.0);
  int64_t seq_row_base = 0;
  const int64_t group = c.q_heads / c.kv_heads;
  for (size_t s = 0; s < 3; ++s) {
    const int64_t first_row = std::vector<int64_t>{0, 7, 8}[s];
    for (int64_t r = 0; r < new_rows[s]; ++r) {
      const int64_t t = first_row + r;
      const int64_t pos = seq_lens[s] - new_rows[s] + r;
      for (int64_t h = 0; h < c.q_heads; ++h) {
        const int64_t kvh = h / group;
        std::vector<double> scores;
        std::vector<int64_t> keys;
        for (int64_t j = 0; j <= pos; ++j) {
          if (c.window > 0 && j <= pos - c.window) continue;
          const int64_t row = token_of[static_cast<size_t>(seq_row_base + j)];
          double dotp = 0;
          for (int64_t d = 0; d < c.dim; ++d) dotp += q.at((t * c.q_heads + h) * c.dim + d) * held(k, row, kvh, d, layer.k_scale);
          double sc = 0.7 * dotp;
          if (c.softcap > 0) sc = c.softcap * std::tanh(sc / c.softcap);
          scores.push_back(sc);
          keys.push_back(row);
        }
        const double mx = *std::max_element(scores.begin(), scores.end());
        double den = 0;
        for (double& sc : scores) den += (sc = std::exp(sc - mx));
        for (int64_t d = 0; d < c.dim; ++d) {
          double acc = 0;
          for (size_t i = 0; i < keys.size(); ++i) {
            acc += scores[i] * (c.single ? held(k, keys[i], kvh, d, layer.k_scale) : held(v, keys[i], kvh, d, layer.v_scale));
          }
          expected[static_cast<size_t>((t * c.q_heads + h) * c.dim + d)] = acc / den;
        }
      }
    }
    seq_row_base += seq_lens[s];
  }
  const double bound = c.cache_dtype == SEATRT_DTYPE_F8_E4M3 ? 0.08 : 2e-6;
  CHECK(test::max_rel_err(out.values(), expected) < bound);
  // The row outside every sequence is untouched.
  for (int64_t i = 10 * c.q_heads * c.dim; i < out.numel(); ++i) REQUIRE(out.at(i) == 123.0);
}

}  // namespace

TEST_CASE("attention: full causal, GQA 2, F32 cache") { run_case({4, 2, 16, 0, 0.0f, SEATRT_DTYPE_F32, false}, 41); }
TEST_CASE("attention: sliding window 3, GQA 8, BF16 cache") { run_case({8, 1, 32, 3, 0.0f, SEATRT_DTYPE_BF16, false}, 42); }
TEST_CASE("attention: window 4 with softcap, no GQA") { run_case({4, 4, 16, 4, 5.0f, SEATRT_DTYPE_F32, false}, 43); }
TEST_CASE("attention: window 1 sees only itself") { run_case({2, 2, 8, 1, 0.0f, SEATRT_DTYPE_F32, false}, 44); }
TEST_CASE("attention: F8 E4M3 cache with scales") { run_case({4, 2, 16, 0, 0.0f, SEATRT_DTYPE_F8_E4M3, false}, 45); }
TEST_CASE("attention: single-tensor layer reads V from the K cache") { run_case({4, 2, 16, 0, 0.0f, SEATRT_DTYPE_BF16, true}, 46); }

TEST_CASE("the window boundary is exact: p - window < j <= p") {
  // One sequence of 6 tokens, 1 head, dim 2; V of position j is (j, 0) and
  // all keys equal, so the output is the mean of the visible positions.
  const int64_t len = 6;
  Tensor k(SEATRT_DTYPE_F32, {len, 1, 2});
  Tensor v(SEATRT_DTYPE_F32, {len, 1, 2});
  for (int64_t j = 0; j < len; ++j) {
    k.set(j * 2, 1.0);
    v.set(j * 2, static_cast<double>(j));
  }
  Tensor slots = test::int_tensor(SEATRT_DTYPE_I64, {len}, {0, 1, 2, 3, 4, 5});
  Tensor k_cache(SEATRT_DTYPE_F32, {2, 4, 1, 2}), v_cache(SEATRT_DTYPE_F32, {2, 4, 1, 2});
  seatrt_kv_layer layer{sizeof(seatrt_kv_layer), 4, 0, k_cache.desc(), v_cache.desc(), 1.0f, 1.0f};
  seatrt_kv_store_args store{sizeof store, k.get(), v.get(), slots.get(), &layer};
  cpu::kv_store(ctx(), store);
  Tensor q(SEATRT_DTYPE_F32, {len, 1, 2});
  Tensor out(SEATRT_DTYPE_F32, {len, 1, 2});
  Tensor qs = test::int_tensor(SEATRT_DTYPE_I32, {2}, {0, len});
  Tensor sl = test::int_tensor(SEATRT_DTYPE_I32, {1}, {len});
  Tensor bt = test::int_tensor(SEATRT_DTYPE_I32, {1, 2}, {0, 1});
  seatrt_attention_args args{};
  args.struct_size = sizeof args;
  args.q = q.get();
  args.cache = &layer;
  args.query_start = qs.get();
  args.seq_lens = sl.get();
  args.block_tables = bt.get();
  args.num_seqs = 1;
  args.window = 3;
  args.scale = 1.0f;
  args.out = out.get();
  cpu::attention(ctx(), args);
  // p=0: {0} -> 0; p=1: {0,1} -> .5; p=2: {0,1,2} -> 1; p=5: {3,4,5} -> 4.
  const double expected[len] = {0.0, 0.5, 1.0, 2.0, 3.0, 4.0};
  for (int64_t p = 0; p < len; ++p) CHECK(out.at(p * 2) == Approx(expected[p]).epsilon(1e-6));
}

TEST_CASE("attention and kv_store refuse inconsistent plans") {
  Tensor k_cache(SEATRT_DTYPE_BF16, {2, 4, 1, 8}), v_cache(SEATRT_DTYPE_BF16, {2, 4, 1, 8});
  seatrt_kv_layer layer{sizeof(seatrt_kv_layer), 4, 0, k_cache.desc(), v_cache.desc(), 1.0f, 1.0f};
  std::mt19937 rng(47);
  Tensor k = test::random_tensor(rng, SEATRT_DTYPE_F32, {2, 1, 8});
  Tensor slots = test::int_tensor(SEATRT_DTYPE_I64, {2}, {3, 8});
  seatrt_kv_store_args store{sizeof store, k.get(), k.get(), slots.get(), &layer};
  std::string msg;
  CHECK(test::error_of([&] { cpu::kv_store(ctx(), store); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("slot_mapping[1] = 8"));
  slots.as<int64_t>()[1] = 3;
  CHECK(test::error_of([&] { cpu::kv_store(ctx(), store); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("appears twice"));
  store.v = nullptr;
  slots.as<int64_t>()[1] = 4;
  CHECK(test::error_of([&] { cpu::kv_store(ctx(), store); }, &msg) == SEATRT_ERR_INVALID_ARG);

  Tensor q = test::random_tensor(rng, SEATRT_DTYPE_F32, {3, 2, 8});
  Tensor out(SEATRT_DTYPE_F32, {3, 2, 8});
  Tensor qs = test::int_tensor(SEATRT_DTYPE_I32, {2}, {0, 3});
  Tensor sl = test::int_tensor(SEATRT_DTYPE_I32, {1}, {9});  // needs 3 blocks, table has 2
  Tensor bt = test::int_tensor(SEATRT_DTYPE_I32, {1, 2}, {0, 1});
  seatrt_attention_args args{};
  args.struct_size = sizeof args;
  args.q = q.get();
  args.cache = &layer;
  args.query_start = qs.get();
  args.seq_lens = sl.get();
  args.block_tables = bt.get();
  args.num_seqs = 1;
  args.scale = 1.0f;
  args.out = out.get();
  CHECK(test::error_of([&] { cpu::attention(ctx(), args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("needs 3 blocks"));
  sl.as<int32_t>()[0] = 2;  // fewer cached positions than query rows
  CHECK(test::error_of([&] { cpu::attention(ctx(), args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  sl.as<int32_t>()[0] = 8;
  bt.as<int32_t>()[1] = 5;  // block outside the pool
  CHECK(test::error_of([&] { cpu::attention(ctx(), args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("outside the cache's 2 blocks"));
  bt.as<int32_t>()[1] = 1;
  Tensor q3 = test::random_tensor(rng, SEATRT_DTYPE_F32, {3, 3, 8});  // 3 q heads over... 1 kv head is fine
  Tensor k_cache2(SEATRT_DTYPE_BF16, {2, 4, 2, 8});
  layer.k_cache = k_cache2.desc();
  layer.v_cache = k_cache2.desc();
  Tensor out3(SEATRT_DTYPE_F32, {3, 3, 8});
  args.q = q3.get();
  args.out = out3.get();
  CHECK(test::error_of([&] { cpu::attention(ctx(), args); }, &msg) == SEATRT_ERR_INVALID_ARG);
  CHECK_THAT(msg, Catch::Contains("not a multiple of kv_heads"));
  layer.k_cache.dtype = SEATRT_DTYPE_F8_E4M3;
  layer.k_scale = 0.0f;
  CHECK(test::error_of([&] { cpu::attention(ctx(), args); }) != SEATRT_OK);
}
