// The CUDA planner's attention input (q_norm, q_rope, v_norm of v or of the
// raw k, k_norm, k_rope, kv_store => qkv_norm_rope_store) against the CPU
// provider running the same nodes one by one, on fresh random inputs, at the
// Gemma-4 shapes: sliding layers (16 q / 8 kv heads x 256, own v) and full
// layers (16 / 2 x 512, v from the raw k), proportional RoPE (upper
// frequencies zero), caches in F32, BF16 and fp8 (scales != 1).  Every cache
// slot is compared, including those the tokens skip (-1) or do not reach.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "fusions.hpp"
#include "harness.hpp"

using namespace seatrt_test;
using Catch::Matchers::Contains;

namespace {

template <typename T>
std::vector<uint8_t> raw_bytes(const std::vector<T>& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(v.data());
  return std::vector<uint8_t>(p, p + v.size() * sizeof(T));
}

// E4M3 (bias 7, no infinities, 0x7f / 0xff NaN) to float.
float from_e4m3(uint8_t b) {
  const float sign = (b & 0x80) ? -1.0f : 1.0f;
  const int e = (b >> 3) & 0xF, m = b & 7;
  if (e == 15 && m == 7) return std::nanf("");
  if (e == 0) return sign * std::ldexp(static_cast<float>(m) / 8.0f, -6);
  return sign * std::ldexp(1.0f + static_cast<float>(m) / 8.0f, e - 7);
}

std::vector<float> cache_values(Provider& p, const seatrt_tensor& t) {
  if (t.dtype != SEATRT_DTYPE_F8_E4M3) return p.download_f32(t);
  const std::vector<uint8_t> raw = p.download(t);
  std::vector<float> out(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) out[i] = from_e4m3(raw[i]);
  return out;
}

// fp8 caches: the two providers may round an fp32 value a last bit apart
// before quantising, which near a rounding tie moves it one E4M3 step (at
// most 1/8 of its magnitude for normal values; 2^-9 among the subnormals,
// below 2^-6, where 1/8 of the magnitude is less than a step).  So: at most
// one step anywhere, and such steps rare.
void check_cache(const std::vector<float>& got, const std::vector<float>& want, int32_t dtype) {
  REQUIRE(got.size() == want.size());
  if (dtype != SEATRT_DTYPE_F8_E4M3) {
    CHECK(rel_error(got, want) <= (dtype == SEATRT_DTYPE_BF16 ? 1e-2 : 1e-4));
    return;
  }
  size_t off_by_step = 0, wrong = 0, first_wrong = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(float)) == 0) continue;
    const float mag = std::max(std::fabs(got[i]), std::fabs(want[i]));
    const float step = std::max(mag * 0.125f, std::ldexp(1.0f, -9));
    if (std::isfinite(got[i]) && std::fabs(got[i] - want[i]) <= step * 1.0001f) {
      ++off_by_step;
    } else if (wrong++ == 0) {
      first_wrong = i;
    }
  }
  INFO("first value off by more than a step: slot element " << first_wrong << ", got " << got[first_wrong]
                                                            << ", want " << want[first_wrong]);
  CHECK(wrong == 0);
  CHECK(off_by_step * 100 <= got.size());
}

struct Shape {
  int64_t q_heads, kv_heads, dim;
  bool own_v;
};

struct Case {
  Shape shape;
  int64_t tokens;
  int32_t act_dtype;
  int32_t cache_dtype;
  bool gains;
};

void run(const Case& c) {
  const int64_t T = c.tokens, hq = c.shape.q_heads, hkv = c.shape.kv_heads, d = c.shape.dim;
  const int64_t block_size = 16, num_blocks = (T + 40) / block_size + 2, slots_total = num_blocks * block_size;
  INFO("T " << T << " heads " << hq << "/" << hkv << " D " << d << " own v " << c.shape.own_v << " act dtype "
            << c.act_dtype << " cache dtype " << c.cache_dtype << " gains " << c.gains);
  // Distinct slots in a shuffled order, one token skipped (-1).
  std::vector<int64_t> slots(static_cast<size_t>(slots_total));
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), rng());
  slots.resize(static_cast<size_t>(T));
  if (T > 2) slots[1] = -1;
  std::vector<int32_t> pos(static_cast<size_t>(T));
  for (auto& p : pos) p = static_cast<int32_t>(rng()() % 131072);
  std::vector<float> f(static_cast<size_t>(d / 2));
  for (size_t i = 0; i < f.size(); ++i)
    f[i] = i >= f.size() / 4 && d == 512 ? 0.0f
                                         : std::pow(10000.0f, -2.0f * static_cast<float>(i) / static_cast<float>(d));

  Pair q = both_random(c.act_dtype, {T, hq, d}, 3.0f), k = both_random(c.act_dtype, {T, hkv, d}, 2.0f);
  Pair v = both_random(c.act_dtype, {T, hkv, d}, 1.5f);
  Pair v_normed = both_empty(c.act_dtype, {T, hkv, d});
  Pair qw = both_random(SEATRT_DTYPE_F32, {d}), kw = both_random(SEATRT_DTYPE_F32, {d});
  Pair p = both(raw_bytes(pos), SEATRT_DTYPE_I32, {T}), fr = both(raw_bytes(f), SEATRT_DTYPE_F32, {d / 2});
  Pair sm = both(raw_bytes(slots), SEATRT_DTYPE_I64, {T});
  const std::vector<int64_t> cshape = {num_blocks, block_size, hkv, d};
  const size_t cache_bytes = static_cast<size_t>(count(cshape)) * elem_bytes(c.cache_dtype);
  // The untouched slots must survive: F32/BF16 caches start as random
  // values, fp8 ones as a pattern of finite codes.
  std::vector<uint8_t> init = c.cache_dtype == SEATRT_DTYPE_F8_E4M3 ? std::vector<uint8_t>(cache_bytes, 0x3a)
                                                                     : random_values(count(cshape), c.cache_dtype);
  Pair kc = both(init, c.cache_dtype, cshape), vc = both(init, c.cache_dtype, cshape);
  const bool f8 = c.cache_dtype == SEATRT_DTYPE_F8_E4M3;
  const auto layer = [&](seatrt_tensor& kt, seatrt_tensor& vt) {
    seatrt_kv_layer l{};
    l.struct_size = sizeof(l);
    l.block_size = static_cast<int32_t>(block_size);
    l.k_cache = kt;
    l.v_cache = vt;
    l.k_scale = f8 ? 0.5f : 1.0f;
    l.v_scale = f8 ? 2.0f : 1.0f;
    return l;
  };
  seatrt_kv_layer lc = layer(kc.cuda, vc.cuda), lp = layer(kc.cpu, vc.cpu);
  const float eps = 1e-6f;

  fusions::GraphBuilder gc, gp;
  for (bool gpu : {true, false}) {
    auto pick = [gpu](Pair& t) { return gpu ? &t.cuda : &t.cpu; };
    fusions::qkv_store(gpu ? gc : gp, fusions::QkvStore{pick(q), pick(k), c.shape.own_v ? pick(v) : nullptr,
                                                        c.shape.own_v ? pick(v) : pick(v_normed),
                                                        c.gains ? &qw.on(gpu) : nullptr, c.gains ? &kw.on(gpu) : nullptr,
                                                        eps, &p.on(gpu), &fr.on(gpu), &sm.on(gpu), gpu ? &lc : &lp});
  }
  const std::string plan = plan_vs_eager(gc, gp, "attention input");
  INFO(plan);
  CHECK_THAT(plan, Contains("qkv_norm_rope_store"));

  CHECK(rel_error(cuda().download_f32(q.cuda), cpu().download_f32(q.cpu)) <=
        (c.act_dtype == SEATRT_DTYPE_BF16 ? 1e-2 : 1e-4));
  check_cache(cache_values(cuda(), kc.cuda), cache_values(cpu(), kc.cpu), c.cache_dtype);
  check_cache(cache_values(cuda(), vc.cuda), cache_values(cpu(), vc.cpu), c.cache_dtype);
}

const Shape kSliding{16, 8, 256, true};
const Shape kFull{16, 2, 512, false};

}  // namespace

TEST_CASE("planned qkv_norm_rope_store equals its nodes: decode rows (a block per row)") {
  for (const Shape& s : {kSliding, kFull})
    for (int32_t cache : {SEATRT_DTYPE_F8_E4M3, SEATRT_DTYPE_BF16, SEATRT_DTYPE_F32})
      for (int64_t T : {1, 5, 32}) run({s, T, SEATRT_DTYPE_F32, cache, true});
  run({kSliding, 5, SEATRT_DTYPE_F32, SEATRT_DTYPE_F8_E4M3, false});
  run({kFull, 3, SEATRT_DTYPE_BF16, SEATRT_DTYPE_BF16, true});
}

TEST_CASE("planned qkv_norm_rope_store equals its nodes: prompt rows (a warp per row)") {
  // 300 x 24 and 300 x 18 rows: past the 4,096 rows where the warp kernel starts.
  for (const Shape& s : {kSliding, kFull}) {
    run({s, 300, SEATRT_DTYPE_F32, SEATRT_DTYPE_F8_E4M3, true});
    run({s, 300, SEATRT_DTYPE_BF16, SEATRT_DTYPE_BF16, true});
  }
  run({kSliding, 300, SEATRT_DTYPE_F32, SEATRT_DTYPE_F32, false});
}

TEST_CASE("plan refuses an attention input with bad arguments and writes nothing") {
  const int64_t T = 2, d = 8;
  Pair q = both_random(SEATRT_DTYPE_F32, {T, 2, d}), k = both_random(SEATRT_DTYPE_F32, {T, 1, d});
  Pair vn = both_empty(SEATRT_DTYPE_F32, {T, 1, d});
  std::vector<int32_t> pos = {3, 4};
  std::vector<int64_t> slots = {0, 1};
  Pair p = both(raw_bytes(pos), SEATRT_DTYPE_I32, {T}), fr = both_random(SEATRT_DTYPE_F32, {d / 2});
  Pair short_fr = both_random(SEATRT_DTYPE_F32, {d / 2 - 1});
  Pair sm = both(raw_bytes(slots), SEATRT_DTYPE_I64, {T});
  Pair kc = both_random(SEATRT_DTYPE_F32, {1, 4, 1, d}), vc = both_random(SEATRT_DTYPE_F32, {1, 4, 1, d});
  seatrt_kv_layer two{sizeof(two), 4, 0, kc.cuda, vc.cuda, 1.0f, 1.0f};
  const std::vector<uint8_t> q_before = cuda().download(q.cuda), k_cache_before = cuda().download(kc.cuda);
  const auto plan_code = [&](const seatrt_tensor* f, float eps) {
    fusions::GraphBuilder g;
    fusions::qkv_store(g, fusions::QkvStore{&q.cuda, &k.cuda, nullptr, &vn.cuda, nullptr, nullptr, eps, &p.cuda, f,
                                            &sm.cuda, &two});
    const seatrt_op_graph graph = g.graph("attention input", 1);
    seatrt_plan* plan = nullptr;
    const seatrt_status_code code = code_of(cuda().api().plan(cuda().ctx(), &graph, &plan));
    if (plan) cuda().api().plan_destroy(cuda().ctx(), plan);
    return code;
  };
  CHECK(plan_code(&short_fr.cuda, 1e-6f) != SEATRT_OK);  // inv_freq D/2 - 1
  CHECK(plan_code(&fr.cuda, -1.0f) != SEATRT_OK);        // eps < 0
  cuda().sync();
  CHECK(cuda().download(q.cuda) == q_before);
  CHECK(cuda().download(kc.cuda) == k_cache_before);
  // The same graph with every fault removed is accepted (the checks above
  // failed for their fault, not for the setup).
  CHECK(plan_code(&fr.cuda, 1e-6f) == SEATRT_OK);
}
