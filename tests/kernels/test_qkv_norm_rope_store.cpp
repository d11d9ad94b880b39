// qkv_norm_rope_store (ABI 1.4) on the CPU provider: bit for bit against the
// sequence it stands for (rms_norm_rope(q), rms_norm(v or the raw k),
// rms_norm_rope(k), kv_store, with F32 intermediates) over GQA shapes, F32 /
// BF16 / F8 caches with and without a v_cache (v NULL then), v NULL, NULL gains and a -1
// slot; against a double-precision reference written here from kernels.h's
// formulas; and the argument checks, which must refuse before anything is
// written.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "test_support.hpp"

using namespace seatrt;
using test::Tensor;
using test::bitwise_equal;

namespace {

cpu::Context& ctx() {
  static cpu::Context c(4);
  return c;
}

constexpr float kEps = 1e-6f;
constexpr int64_t kBlock = 4, kBlocks = 4;
constexpr unsigned char kSentinel = 0x3C;  // every cache byte before the call

size_t esize(int32_t dtype) { return dtype == SEATRT_DTYPE_F32 ? 4 : dtype == SEATRT_DTYPE_BF16 ? 2 : 1; }

// One layer's paged cache filled with the sentinel; `layer` points at it.
struct Cache {
  Tensor k, v;
  seatrt_kv_layer layer{};
  Cache(int32_t dtype, int64_t kv_heads, int64_t dim, bool single, float k_scale, float v_scale)
      : k(dtype, {kBlocks, kBlock, kv_heads, dim}), v(dtype, {kBlocks, kBlock, kv_heads, dim}) {
    std::fill_n(k.bytes(), k.numel() * static_cast<int64_t>(esize(dtype)), kSentinel);
    std::fill_n(v.bytes(), v.numel() * static_cast<int64_t>(esize(dtype)), kSentinel);
    layer.struct_size = sizeof layer;
    layer.block_size = static_cast<int32_t>(kBlock);
    layer.k_cache = k.desc();
    layer.v_cache = v.desc();
    if (single) layer.v_cache.data = nullptr;
    layer.k_scale = k_scale;
    layer.v_scale = v_scale;
  }
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;
  size_t bytes() const { return static_cast<size_t>(k.numel()) * esize(k.dtype()); }
  bool same_bytes(const Cache& o) const {
    return std::memcmp(k.desc().data, o.k.desc().data, bytes()) == 0 &&
           std::memcmp(v.desc().data, o.v.desc().data, bytes()) == 0;
  }
  // Whether every byte of slot `s` (both tensors) still holds the sentinel.
  bool untouched(int64_t s) const {
    const size_t n = bytes() / static_cast<size_t>(kBlocks * kBlock), at = static_cast<size_t>(s) * n;
    const auto* kb = static_cast<const unsigned char*>(k.desc().data) + at;
    const auto* vb = static_cast<const unsigned char*>(v.desc().data) + at;
    return std::all_of(kb, kb + n, [](unsigned char b) { return b == kSentinel; }) &&
           std::all_of(vb, vb + n, [](unsigned char b) { return b == kSentinel; });
  }
};

struct Inputs {
  int64_t tokens = 5, q_heads = 4, kv_heads = 2, dim = 8;
  Tensor q, k, v, q_w, k_w, v_w, positions, inv_freq, slots;
  std::vector<int64_t> slot_values;
};

// Random activations in `dtype`, gains away from 1, positions > 0, the
// frequencies of the upper quarter of the pairs zero (partial RoPE), and
// shuffled slots with token 2 a padding token (-1).
Inputs make_inputs(std::mt19937& rng, int32_t dtype, int64_t dim) {
  Inputs in;
  in.dim = dim;
  in.q = test::random_tensor(rng, dtype, {in.tokens, in.q_heads, dim}, -3, 3);
  in.k = test::random_tensor(rng, dtype, {in.tokens, in.kv_heads, dim}, -3, 3);
  in.v = test::random_tensor(rng, dtype, {in.tokens, in.kv_heads, dim}, -3, 3);
  in.q_w = test::random_tensor(rng, SEATRT_DTYPE_F32, {dim}, 0.3, 1.7);
  in.k_w = test::random_tensor(rng, SEATRT_DTYPE_BF16, {dim}, 0.3, 1.7);
  in.v_w = test::random_tensor(rng, SEATRT_DTYPE_F32, {dim}, 0.3, 1.7);
  in.positions = test::int_tensor(SEATRT_DTYPE_I32, {in.tokens}, {3, 17, 100, 1000, 4097});
  in.inv_freq = Tensor(SEATRT_DTYPE_F32, {dim / 2});
  for (int64_t i = 0; i < dim / 2; ++i)
    in.inv_freq.set(i, i < dim * 3 / 8 ? std::pow(1e4, -2.0 * static_cast<double>(i) / static_cast<double>(dim)) : 0.0);
  std::vector<int64_t> pool(kBlocks * kBlock);
  std::iota(pool.begin(), pool.end(), 0);
  std::shuffle(pool.begin(), pool.end(), rng);
  in.slot_values.assign(pool.begin(), pool.begin() + in.tokens);
  in.slot_values[2] = -1;
  in.slots = test::int_tensor(SEATRT_DTYPE_I64, {in.tokens}, in.slot_values);
  return in;
}

struct Options {
  bool with_v = true, gains = true;
};

seatrt_qkv_norm_rope_store_args fused_args(Inputs& in, Tensor& q, Cache& cache, Options o) {
  seatrt_qkv_norm_rope_store_args a{};
  a.struct_size = sizeof a;
  a.eps = kEps;
  a.q = q.get();
  a.k = in.k.get();
  a.v = o.with_v ? in.v.get() : nullptr;
  a.q_weight = o.gains ? in.q_w.get() : nullptr;
  a.k_weight = o.gains ? in.k_w.get() : nullptr;
  a.v_weight = o.gains ? in.v_w.get() : nullptr;
  a.positions = in.positions.get();
  a.inv_freq = in.inv_freq.get();
  a.slot_mapping = in.slots.get();
  a.cache = &cache.layer;
  return a;
}

// The sequence kernels.h spells out, with F32 intermediates for k' and v'.
void unfused(Inputs& in, Tensor& q, Cache& cache, Options o) {
  const seatrt_tensor* qw = o.gains ? in.q_w.get() : nullptr;
  const seatrt_tensor* kw = o.gains ? in.k_w.get() : nullptr;
  const seatrt_tensor* vw = o.gains ? in.v_w.get() : nullptr;
  seatrt_rms_norm_rope_args qa{sizeof qa, q.get(), qw, kEps, 0, in.positions.get(), in.inv_freq.get(), q.get()};
  cpu::rms_norm_rope(ctx(), &qa);
  Tensor kn(SEATRT_DTYPE_F32, {in.tokens, in.kv_heads, in.dim}), vn(SEATRT_DTYPE_F32, {in.tokens, in.kv_heads, in.dim});
  seatrt_rms_norm_args va{sizeof va, o.with_v ? in.v.get() : in.k.get(), vw, kEps, vn.get()};
  cpu::rms_norm(ctx(), &va);
  seatrt_rms_norm_rope_args ka{sizeof ka, in.k.get(), kw, kEps, 0, in.positions.get(), in.inv_freq.get(), kn.get()};
  cpu::rms_norm_rope(ctx(), &ka);
  const bool single = cache.layer.v_cache.data == nullptr;
  seatrt_kv_store_args sa{sizeof sa, kn.get(), single ? nullptr : vn.get(), in.slots.get(), &cache.layer};
  cpu::kv_store(ctx(), &sa);
}

// rmsnorm(x) * w then (if freq) the NeoX rotation, in double from the
// formulas; the angle is position * inv_freq in fp32, as kernels.h defines it.
std::vector<double> reference_row(const Tensor& x, int64_t row, int64_t dim, const Tensor* w, const Tensor* freq,
                                  int64_t position) {
  std::vector<double> v(static_cast<size_t>(dim));
  double sum = 0.0;
  for (int64_t i = 0; i < dim; ++i) sum += x.at(row * dim + i) * x.at(row * dim + i);
  const double inv = 1.0 / std::sqrt(sum / static_cast<double>(dim) + kEps);
  for (int64_t i = 0; i < dim; ++i) v[static_cast<size_t>(i)] = x.at(row * dim + i) * inv * (w ? w->at(i) : 1.0);
  if (!freq) return v;
  const int64_t half = dim / 2;
  for (int64_t i = 0; i < half; ++i) {
    const float angle = static_cast<float>(position) * static_cast<float>(freq->at(i));
    const double c = std::cos(static_cast<double>(angle)), s = std::sin(static_cast<double>(angle));
    const double a = v[static_cast<size_t>(i)], b = v[static_cast<size_t>(i + half)];
    v[static_cast<size_t>(i)] = a * c - b * s;
    v[static_cast<size_t>(i + half)] = b * c + a * s;
  }
  return v;
}

// Element i of a cache tensor decoded by the test's own codecs (F8 without
// its scale).
double cache_at(const Tensor& t, int64_t i) {
  const auto* bytes = static_cast<const unsigned char*>(t.desc().data);
  if (t.dtype() == SEATRT_DTYPE_F8_E4M3) return test::e4m3_value(bytes[i]);
  if (t.dtype() == SEATRT_DTYPE_BF16) {
    uint16_t bits;
    std::memcpy(&bits, bytes + 2 * i, 2);
    return test::bf16_value(bits);
  }
  float f;
  std::memcpy(&f, bytes + 4 * i, 4);
  return f;
}

// |stored - want| within the rounding of the cache dtype (F8: half an E4M3
// step, |want|/16 in the normal range, 2^-10 below it, times the scale).
bool cache_value_ok(int32_t dtype, double stored, double want, float scale) {
  if (dtype == SEATRT_DTYPE_F32) return std::fabs(stored - want) <= 2e-6 * std::max(1.0, std::fabs(want));
  if (dtype == SEATRT_DTYPE_BF16) return std::fabs(stored - want) <= std::fabs(want) / 256 + 1e-6;
  const double w = want / scale;
  return std::fabs(stored - w) <= std::fabs(w) / 16 * (1 + 1e-4) + std::ldexp(1.0, -10);
}

// Checks q and the cache written by the fused call against reference_row.
void check_against_double(Inputs& in, const Tensor& q_in, const Tensor& q_out, const Cache& cache, Options o) {
  const int32_t dt = cache.k.dtype();
  const bool single = cache.layer.v_cache.data == nullptr;
  const double q_tol = q_out.dtype() == SEATRT_DTYPE_F32 ? 2e-6 : 1.0 / 256;
  for (int64_t t = 0; t < in.tokens; ++t) {
    const int64_t pos = in.positions.as<int32_t>()[t];
    for (int64_t h = 0; h < in.q_heads; ++h) {
      const int64_t row = t * in.q_heads + h;
      const auto want = reference_row(q_in, row, in.dim, o.gains ? &in.q_w : nullptr, &in.inv_freq, pos);
      for (int64_t i = 0; i < in.dim; ++i)
        REQUIRE(std::fabs(q_out.at(row * in.dim + i) - want[static_cast<size_t>(i)]) <=
                q_tol * std::max(1.0, std::fabs(want[static_cast<size_t>(i)])));
    }
    const int64_t slot = in.slot_values[static_cast<size_t>(t)];
    if (slot < 0) continue;
    for (int64_t h = 0; h < in.kv_heads; ++h) {
      const int64_t row = t * in.kv_heads + h, at = (slot * in.kv_heads + h) * in.dim;
      const auto kw = reference_row(in.k, row, in.dim, o.gains ? &in.k_w : nullptr, &in.inv_freq, pos);
      const auto vw = reference_row(o.with_v ? in.v : in.k, row, in.dim, o.gains ? &in.v_w : nullptr, nullptr, pos);
      for (int64_t i = 0; i < in.dim; ++i) {
        CAPTURE(t, h, i);
        REQUIRE(cache_value_ok(dt, cache_at(cache.k, at + i), kw[static_cast<size_t>(i)], cache.layer.k_scale));
        if (!single) REQUIRE(cache_value_ok(dt, cache_at(cache.v, at + i), vw[static_cast<size_t>(i)], cache.layer.v_scale));
      }
    }
  }
}

}  // namespace

TEST_CASE("qkv_norm_rope_store equals rms_norm_rope, rms_norm, rms_norm_rope, kv_store and the formulas") {
  std::mt19937 rng(81);
  for (const int64_t dim : {8, 16}) {
    for (const int32_t dtype : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16}) {
      for (const int32_t cache_dtype : {SEATRT_DTYPE_F32, SEATRT_DTYPE_BF16, SEATRT_DTYPE_F8_E4M3}) {
        for (const bool single : {false, true}) {
          for (const bool with_v : {true, false}) {
            for (const bool gains : {true, false}) {
              if (single && with_v) continue;  // refused, as kv_store (below)
              CAPTURE(dim, dtype, cache_dtype, single, with_v, gains);
              Inputs in = make_inputs(rng, dtype, dim);
              const Options o{with_v, gains};
              const bool f8 = cache_dtype == SEATRT_DTYPE_F8_E4M3;
              const float k_scale = f8 ? 0.05f : 1.0f, v_scale = f8 ? 0.0375f : 1.0f;
              Cache fused_cache(cache_dtype, in.kv_heads, dim, single, k_scale, v_scale);
              Cache ref_cache(cache_dtype, in.kv_heads, dim, single, k_scale, v_scale);
              Tensor q = in.q, q_ref = in.q;
              const Tensor k_before = in.k, v_before = in.v;
              const auto args = fused_args(in, q, fused_cache, o);
              cpu::qkv_norm_rope_store(ctx(), &args);
              unfused(in, q_ref, ref_cache, o);
              CHECK(bitwise_equal(q, q_ref));
              CHECK(fused_cache.same_bytes(ref_cache));
              CHECK(bitwise_equal(in.k, k_before));  // only read
              CHECK(bitwise_equal(in.v, v_before));
              // The padding token's slot is not written; the others are.
              for (int64_t s = 0; s < kBlocks * kBlock; ++s) {
                const bool used = std::find(in.slot_values.begin(), in.slot_values.end(), s) != in.slot_values.end();
                CHECK(fused_cache.untouched(s) == !used);
              }
              check_against_double(in, in.q, q, fused_cache, o);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("qkv_norm_rope_store gives the same bytes with 1 and 5 threads") {
  std::mt19937 rng(82);
  Inputs in = make_inputs(rng, SEATRT_DTYPE_F32, 16);
  std::vector<std::vector<unsigned char>> results;
  for (const int32_t threads : {1, 5}) {
    cpu::Context c(threads);
    Cache cache(SEATRT_DTYPE_F8_E4M3, in.kv_heads, in.dim, false, 0.05f, 0.05f);
    Tensor q = in.q;
    const auto args = fused_args(in, q, cache, {});
    cpu::qkv_norm_rope_store(c, &args);
    std::vector<unsigned char> bytes(q.bytes(), q.bytes() + q.numel() * 4);
    bytes.insert(bytes.end(), cache.k.bytes(), cache.k.bytes() + cache.bytes());
    bytes.insert(bytes.end(), cache.v.bytes(), cache.v.bytes() + cache.bytes());
    results.push_back(bytes);
  }
  CHECK(results[0] == results[1]);
}

TEST_CASE("qkv_norm_rope_store refuses bad arguments by name and writes nothing") {
  std::mt19937 rng(83);
  Inputs in = make_inputs(rng, SEATRT_DTYPE_F32, 8);
  Cache cache(SEATRT_DTYPE_BF16, in.kv_heads, in.dim, false, 1.0f, 1.0f);
  Tensor q = in.q;
  const Tensor q_before = q;
  const auto good = fused_args(in, q, cache, {});
  // Each case breaks one thing; the call must fail with `code` naming `what`
  // and leave q and the cache as they were.
  const auto refuses = [&](const seatrt_qkv_norm_rope_store_args& a, seatrt_status_code code, const std::string& what) {
    CAPTURE(what);
    std::string msg;
    CHECK(test::error_of([&] { cpu::qkv_norm_rope_store(ctx(), &a); }, &msg) == code);
    CHECK_THAT(msg, Catch::Contains("qkv_norm_rope_store: ") && Catch::Contains(what));
    CHECK(std::memcmp(q.bytes(), q_before.desc().data, static_cast<size_t>(q.numel()) * 4) == 0);
    for (int64_t s = 0; s < kBlocks * kBlock; ++s) REQUIRE(cache.untouched(s));
  };
  auto a = good;
  const auto with = [&](auto change) {
    a = good;
    change(a);
    return a;
  };
  using Args = seatrt_qkv_norm_rope_store_args;
  constexpr auto kInvalid = SEATRT_ERR_INVALID_ARG;
  constexpr auto kUnsupported = SEATRT_ERR_UNSUPPORTED;
  CHECK(test::error_of([&] { cpu::qkv_norm_rope_store(ctx(), nullptr); }) == kInvalid);
  refuses(with([](Args& x) { x.struct_size = 8; }), kInvalid, "struct_size");
  refuses(with([](Args& x) { x.q = nullptr; }), kInvalid, "q is NULL");
  refuses(with([](Args& x) { x.k = nullptr; }), kInvalid, "k is NULL");
  refuses(with([](Args& x) { x.positions = nullptr; }), kInvalid, "positions is NULL");
  refuses(with([](Args& x) { x.inv_freq = nullptr; }), kInvalid, "inv_freq is NULL");
  refuses(with([](Args& x) { x.slot_mapping = nullptr; }), kInvalid, "slot_mapping is NULL");
  refuses(with([](Args& x) { x.cache = nullptr; }), kInvalid, "cache is NULL");
  // Shapes and dtypes of q, k, v.
  seatrt_tensor q2 = test::view(q, {in.tokens, in.q_heads * in.dim}, {in.q_heads * in.dim, 1}, 0);
  refuses(with([&](Args& x) { x.q = &q2; }), kInvalid, "q must have 3 axes");
  Tensor k_bf16 = test::random_tensor(rng, SEATRT_DTYPE_BF16, {in.tokens, in.kv_heads, in.dim});
  refuses(with([&](Args& x) { x.k = k_bf16.get(); }), kInvalid, "k has dtype BF16 but q has F32");
  Tensor k_short = test::random_tensor(rng, SEATRT_DTYPE_F32, {in.tokens - 1, in.kv_heads, in.dim});
  refuses(with([&](Args& x) { x.k = k_short.get(); }), kInvalid, "k has shape [4, 2, 8]");
  Tensor v_wide = test::random_tensor(rng, SEATRT_DTYPE_F32, {in.tokens, in.kv_heads + 1, in.dim});
  refuses(with([&](Args& x) { x.v = v_wide.get(); }), kInvalid, "v has shape [5, 3, 8]");
  Tensor q_i32(SEATRT_DTYPE_I32, {in.tokens, in.q_heads, in.dim});
  refuses(with([&](Args& x) { x.q = q_i32.get(); }), kUnsupported, "q has dtype I32");
  // k (and v) must match the cache's heads and head dim.
  Tensor k_3heads = test::random_tensor(rng, SEATRT_DTYPE_F32, {in.tokens, 3, in.dim});
  refuses(with([&](Args& x) {
            x.k = k_3heads.get();
            x.v = nullptr;
          }),
          kInvalid, "but the cache holds 2 heads of 8");
  // A layer that stores one tensor takes no v (as kv_store).
  Cache k_only(SEATRT_DTYPE_BF16, in.kv_heads, in.dim, true, 1.0f, 1.0f);
  refuses(with([&](Args& x) { x.cache = &k_only.layer; }), kInvalid, "v given for a layer that stores one tensor");
  for (int64_t s = 0; s < kBlocks * kBlock; ++s) REQUIRE(k_only.untouched(s));
  // An odd head dim, everything else consistent with it.
  Tensor q7 = test::random_tensor(rng, SEATRT_DTYPE_F32, {in.tokens, in.q_heads, 7});
  Tensor k7 = test::random_tensor(rng, SEATRT_DTYPE_F32, {in.tokens, in.kv_heads, 7});
  Tensor f3(SEATRT_DTYPE_F32, {3});
  Cache cache7(SEATRT_DTYPE_F32, in.kv_heads, 7, true, 1.0f, 1.0f);
  refuses(with([&](Args& x) {
            x.q = q7.get();
            x.k = k7.get();
            x.v = nullptr;
            x.q_weight = x.k_weight = x.v_weight = nullptr;
            x.inv_freq = f3.get();
            x.cache = &cache7.layer;
          }),
          kInvalid, "head dim 7 is odd");
  // positions, inv_freq, slot_mapping.
  Tensor pos_i64 = test::int_tensor(SEATRT_DTYPE_I64, {in.tokens}, {1, 2, 3, 4, 5});
  refuses(with([&](Args& x) { x.positions = pos_i64.get(); }), kUnsupported, "positions has dtype I64");
  Tensor pos_short = test::int_tensor(SEATRT_DTYPE_I32, {in.tokens - 1}, {1, 2, 3, 4});
  refuses(with([&](Args& x) { x.positions = pos_short.get(); }), kInvalid, "positions has shape [4]");
  Tensor freq_long(SEATRT_DTYPE_F32, {in.dim});
  refuses(with([&](Args& x) { x.inv_freq = freq_long.get(); }), kInvalid, "inv_freq has shape [8]");
  Tensor freq_bf16(SEATRT_DTYPE_BF16, {in.dim / 2});
  refuses(with([&](Args& x) { x.inv_freq = freq_bf16.get(); }), kUnsupported, "inv_freq has dtype BF16");
  Tensor slots_i32 = test::int_tensor(SEATRT_DTYPE_I32, {in.tokens}, in.slot_values);
  refuses(with([&](Args& x) { x.slot_mapping = slots_i32.get(); }), kUnsupported, "slot_mapping has dtype I32");
  Tensor slots_short = test::int_tensor(SEATRT_DTYPE_I64, {in.tokens - 1}, {0, 1, 2, 3});
  refuses(with([&](Args& x) { x.slot_mapping = slots_short.get(); }), kInvalid, "slot_mapping has shape [4]");
  Tensor slots_out = test::int_tensor(SEATRT_DTYPE_I64, {in.tokens}, {0, 1, -1, 16, 2});
  refuses(with([&](Args& x) { x.slot_mapping = slots_out.get(); }), kInvalid, "slot_mapping[3] = 16 is outside");
  Tensor slots_twice = test::int_tensor(SEATRT_DTYPE_I64, {in.tokens}, {0, 5, -1, 5, 2});
  refuses(with([&](Args& x) { x.slot_mapping = slots_twice.get(); }), kInvalid, "slot 5 appears twice");
  Tensor slots_neg = test::int_tensor(SEATRT_DTYPE_I64, {in.tokens}, {0, 1, -2, 3, 4});
  refuses(with([&](Args& x) { x.slot_mapping = slots_neg.get(); }), kInvalid, "slot_mapping[2] = -2");
  // eps.
  refuses(with([](Args& x) { x.eps = -1e-6f; }), kInvalid, "eps must be finite and >= 0");
  refuses(with([](Args& x) { x.eps = NAN; }), kInvalid, "eps");
  refuses(with([](Args& x) { x.eps = INFINITY; }), kInvalid, "eps");
  // Gains.
  Tensor w7 = test::random_tensor(rng, SEATRT_DTYPE_F32, {7});
  Tensor w_i32(SEATRT_DTYPE_I32, {in.dim});
  refuses(with([&](Args& x) { x.q_weight = w7.get(); }), kInvalid, "q_weight has shape [7]");
  refuses(with([&](Args& x) { x.k_weight = w7.get(); }), kInvalid, "k_weight has shape [7]");
  refuses(with([&](Args& x) { x.v_weight = w_i32.get(); }), kUnsupported, "v_weight has dtype I32");
  // Aliasing: q written while k, v and the cache are in use.
  Tensor shared = test::random_tensor(rng, SEATRT_DTYPE_F32, {in.tokens, in.kv_heads, in.dim});
  refuses(with([&](Args& x) {
            x.q = shared.get();
            x.k = shared.get();
          }),
          kInvalid, "q must not alias k");
  refuses(with([&](Args& x) {
            x.q = shared.get();
            x.v = shared.get();
          }),
          kInvalid, "q must not alias v");
  Cache f32_cache(SEATRT_DTYPE_F32, in.kv_heads, in.dim, false, 1.0f, 1.0f);
  seatrt_tensor q_in_k_cache = test::view(f32_cache.k, {in.tokens, in.kv_heads, in.dim}, {in.kv_heads * in.dim, in.dim, 1}, 0);
  seatrt_tensor q_in_v_cache = test::view(f32_cache.v, {in.tokens, in.kv_heads, in.dim}, {in.kv_heads * in.dim, in.dim, 1}, 0);
  refuses(with([&](Args& x) {
            x.q = &q_in_k_cache;
            x.cache = &f32_cache.layer;
          }),
          kInvalid, "q must not alias cache.k_cache");
  refuses(with([&](Args& x) {
            x.q = &q_in_v_cache;
            x.cache = &f32_cache.layer;
          }),
          kInvalid, "q must not alias cache.v_cache");
  for (int64_t s = 0; s < kBlocks * kBlock; ++s) REQUIRE(f32_cache.untouched(s));
  // The cache itself.
  Cache f8(SEATRT_DTYPE_F8_E4M3, in.kv_heads, in.dim, false, 0.0f, 1.0f);
  refuses(with([&](Args& x) { x.cache = &f8.layer; }), kInvalid, "cache.k_scale");
  for (int64_t s = 0; s < kBlocks * kBlock; ++s) REQUIRE(f8.untouched(s));
  // And the unbroken arguments do work (the checks above are not vacuous).
  CHECK(test::error_of([&] { cpu::qkv_norm_rope_store(ctx(), &good); }) == SEATRT_OK);
  CHECK_FALSE(cache.untouched(in.slot_values[0]));
}
