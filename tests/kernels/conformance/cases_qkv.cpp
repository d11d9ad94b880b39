// qkv_norm_rope_store (ABI 1.4) at the Gemma-4 26B-A4B shapes and as the
// Gemma-4 plugin calls it: sliding layers (16 query heads over 8 KV heads x
// 256, 64 of 128 pairs rotated at theta 1e4, v from its own projection) and
// full layers (16 over 2 x 512, 64 of 256 pairs at theta 1e6, v NULL: the
// raw k), q/k gains and no v gain, BF16 / F8 / F32 caches in blocks of 16,
// shuffled slots with padding tokens (-1).  Compared: q, and both cache
// tensors read back whole (slots nobody stores keep their random contents):
// F32 / BF16 caches by relative error, F8 caches code by code within one
// E4M3 step.  An optional slot: a provider without it gets SKIP.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "cases.hpp"
#include "dtype.hpp"

namespace seatrt::conformance {
namespace {

using test::Tensor;

constexpr int64_t kBlock = 16, kQHeads = 16;
constexpr float kEps = 1e-6f, kKScale = 0.0625f, kVScale = 0.03125f;

struct Layer {
  const char* name;
  int64_t kv_heads, dim, rotated;  // rotated: non-zero frequencies, of dim/2
  double theta;
  bool own_v;                      // false: v NULL (v from the raw k)
};
constexpr Layer kSliding{"sliding", 8, 256, 64, 1e4, true};
constexpr Layer kFull{"full", 2, 512, 64, 1e6, false};

struct Setup {
  Layer layer;
  int64_t tokens;
  int32_t dtype;        // q, k, v
  int32_t cache_dtype;  // BF16, F32 or F8_E4M3
  bool v_cache = true;  // false: a single-tensor layer (k' only)
  bool v_gain = false;  // the plugin's v norm has none
};

std::string dtype_label(int32_t dtype) {
  return dtype == SEATRT_DTYPE_F32 ? "F32" : dtype == SEATRT_DTYPE_BF16 ? "BF16" : "F8";
}

// A cache tensor of random contents: values in +-1 (F8: codes of +-1 / scale).
Tensor random_cache(std::mt19937& rng, int32_t dtype, std::vector<int64_t> shape, float scale) {
  if (dtype != SEATRT_DTYPE_F8_E4M3) return random_input(rng, dtype, std::move(shape));
  Tensor t(dtype, std::move(shape));
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.as<uint8_t>()[i] = cpu::f32_to_e4m3(value(rng) / scale);
  return t;
}

Case qkv_case(const Setup& s) {
  const Layer& l = s.layer;
  std::string label = std::string(l.name) + " [" + std::to_string(s.tokens) + ", 16|" + std::to_string(l.kv_heads) +
                      ", " + std::to_string(l.dim) + "] " + dtype_label(s.dtype) + ", " +
                      dtype_label(s.cache_dtype) + (s.v_cache ? " cache" : " k-only cache") +
                      (l.own_v ? "" : ", v NULL") + (s.v_gain ? ", v gain" : "");
  const bool strict = s.dtype == SEATRT_DTYPE_F32 && s.cache_dtype != SEATRT_DTYPE_BF16;
  return {"qkv_norm_rope_store", label, strict ? kBoundF32 : kBoundBF16, [=](Provider& p, std::mt19937& rng) {
            need_op(p, &seatrt_kernel_api::qkv_norm_rope_store, "qkv_norm_rope_store");
            const int64_t t = s.tokens, kvh = l.kv_heads, d = l.dim;
            const int64_t blocks = (t + kBlock - 1) / kBlock + 3;
            // Slots: a random subset of the pool; every 7th token (from the
            // second) is padding.
            std::vector<int64_t> slots(static_cast<size_t>(blocks * kBlock));
            std::iota(slots.begin(), slots.end(), 0);
            std::shuffle(slots.begin(), slots.end(), rng);
            slots.resize(static_cast<size_t>(t));
            for (size_t i = 1; i < slots.size(); i += 7) slots[i] = -1;
            std::vector<int64_t> pos;
            for (int64_t i = 0; i < t; ++i) pos.push_back(static_cast<int64_t>(rng() % 30000));
            Tensor q = random_input(rng, s.dtype, {t, kQHeads, d}, 4.0);
            Tensor k = random_input(rng, s.dtype, {t, kvh, d}, 4.0);
            Tensor v = random_input(rng, s.dtype, {t, kvh, d}, 4.0);
            Tensor q_gain = random_input(rng, SEATRT_DTYPE_BF16, {d}, 2.0);
            Tensor k_gain = random_input(rng, SEATRT_DTYPE_BF16, {d}, 2.0);
            Tensor v_gain = random_input(rng, SEATRT_DTYPE_F32, {d}, 2.0);
            Tensor positions = int_input(SEATRT_DTYPE_I32, {t}, pos);
            Tensor slot_t = int_input(SEATRT_DTYPE_I64, {t}, slots);
            Tensor inv_freq(SEATRT_DTYPE_F32, {d / 2});
            for (int64_t i = 0; i < d / 2; ++i) {
              inv_freq.set(i, i < l.rotated ? std::pow(l.theta, -2.0 * static_cast<double>(i) / static_cast<double>(d)) : 0.0);
            }
            Tensor k_cache = random_cache(rng, s.cache_dtype, {blocks, kBlock, kvh, d}, kKScale);
            Tensor v_cache = random_cache(rng, s.cache_dtype, {blocks, kBlock, kvh, d}, kVScale);
            DeviceTensor dq(p, q), dk(p, k), dv(p, v), dqg(p, q_gain), dkg(p, k_gain), dvg(p, v_gain), dpos(p, positions),
                dslots(p, slot_t), dfreq(p, inv_freq), dkc(p, k_cache), dvc(p, v_cache);
            seatrt_kv_layer layer{};
            layer.struct_size = sizeof layer;
            layer.block_size = static_cast<int32_t>(kBlock);
            layer.k_cache = *dkc.get();
            layer.v_cache = *dvc.get();
            if (!s.v_cache) layer.v_cache.data = nullptr;
            const bool f8 = s.cache_dtype == SEATRT_DTYPE_F8_E4M3;
            layer.k_scale = f8 ? kKScale : 1.0f;
            layer.v_scale = f8 ? kVScale : 1.0f;
            seatrt_qkv_norm_rope_store_args args{};
            args.struct_size = sizeof args;
            args.eps = kEps;
            args.q = dq.get();
            args.k = dk.get();
            args.v = l.own_v ? dv.get() : nullptr;
            args.q_weight = dqg.get();
            args.k_weight = dkg.get();
            args.v_weight = s.v_gain ? dvg.get() : nullptr;
            args.positions = dpos.get();
            args.inv_freq = dfreq.get();
            args.slot_mapping = dslots.get();
            args.cache = &layer;
            call_op(p, &seatrt_kernel_api::qkv_norm_rope_store, args, "qkv_norm_rope_store");
            Outputs o;
            dq.download(q);
            o.add_part(q.values());
            dkc.download(k_cache);
            const std::vector<double> kc = k_cache.values();
            std::vector<double> vc;
            if (s.v_cache) {
              dvc.download(v_cache);
              vc = v_cache.values();
            }
            if (f8) {
              o.e4m3 = kc;
              o.e4m3.insert(o.e4m3.end(), vc.begin(), vc.end());
            } else {
              o.add_part(kc);
              if (s.v_cache) o.add_part(vc);
            }
            return o;
          }};
}

}  // namespace

void add_qkv_cases(std::vector<Case>& cases) {
  constexpr int32_t kF32 = SEATRT_DTYPE_F32, kBF16 = SEATRT_DTYPE_BF16, kF8 = SEATRT_DTYPE_F8_E4M3;
  cases.push_back(qkv_case({kSliding, 1, kBF16, kBF16}));
  cases.push_back(qkv_case({kSliding, 5, kF32, kF8}));
  cases.push_back(qkv_case({kSliding, 5, kF32, kF32, true, true}));
  cases.push_back(qkv_case({kSliding, 32, kBF16, kF8}));
  cases.push_back(qkv_case({kSliding, 300, kBF16, kBF16}));
  cases.push_back(qkv_case({kFull, 1, kF32, kBF16}));
  cases.push_back(qkv_case({kFull, 5, kBF16, kF8}));
  cases.push_back(qkv_case({kFull, 32, kF32, kF8}));
  cases.push_back(qkv_case({kFull, 300, kBF16, kF8}));
  cases.push_back(qkv_case({kFull, 5, kBF16, kBF16, false}));
}

}  // namespace seatrt::conformance
