// Sampling on the device: one cluster of kCluster thread blocks per row
// (Hopper clusters: the blocks share results through distributed shared
// memory and a hardware barrier, so a row is read by 8 SMs at once).
//
// The rule is the CPU provider's (kernels/cpu/op_sample.cpp) and so is every
// floating-point step that decides a token: penalties with IEEE float ops in
// the same order (no contraction), z / temperature, p = exp(double(z) - z_max)
// in double, candidates ordered by (z desc, id asc).  The ordered candidate
// list is never built: each question the CPU answers by walking that list
// ("the k-th candidate", "the first candidate whose cumulative p reaches X")
// is answered by a radix select over the 64-bit key (z descending, then id)
// with histograms of counts or of p.  Only the summation order of p differs
// from the CPU's sequential sums, so a token can differ only when a draw or
// the top-p threshold falls within rounding of a cumulative boundary.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "k_sample.cuh"

namespace cg = cooperative_groups;

namespace seatrt::cuda {
namespace {

constexpr int kCluster = 8;
constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;
constexpr int kDigitBits = 8;
constexpr int kBins = 1 << kDigitBits;
constexpr unsigned kFull = 0xffffffffu;
constexpr int32_t kPromptBit = 1 << 30;  // counts[id]: prompt flag | output count

// Per-block partial results merged across the cluster.
struct Partial {
  double sum;
  unsigned long long kmin;
  float fmax;
  unsigned count;
  unsigned flag;
};

__device__ __forceinline__ Partial identity() {
  Partial p;
  p.sum = 0.0;
  p.kmin = ~0ull;
  p.fmax = -INFINITY;
  p.count = 0;
  p.flag = 0;
  return p;
}

__device__ __forceinline__ Partial combine(Partial a, const Partial& b) {
  a.sum += b.sum;
  a.kmin = b.kmin < a.kmin ? b.kmin : a.kmin;
  a.fmax = fmaxf(a.fmax, b.fmax);
  a.count += b.count;
  a.flag |= b.flag;
  return a;
}

// Butterfly reduction: every lane ends with the bitwise-same value.
__device__ __forceinline__ Partial warp_reduce(Partial p) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    Partial q;
    q.sum = __shfl_xor_sync(kFull, p.sum, o);
    q.kmin = __shfl_xor_sync(kFull, p.kmin, o);
    q.fmax = __shfl_xor_sync(kFull, p.fmax, o);
    q.count = __shfl_xor_sync(kFull, p.count, o);
    q.flag = __shfl_xor_sync(kFull, p.flag, o);
    p = combine(p, q);
  }
  return p;
}

// What one cluster exchange publishes.  Two of them alternate: exchange n's
// buffers are rewritten at exchange n + 2, after every block has passed
// exchange n + 1's barrier and so finished reading them.
struct Exchange {
  unsigned count[kBins];
  double mass[kBins];
  Partial slot;
};

struct Decision {
  int bin;
  int fallback;
  unsigned count;
  double before;
  double mass;
  double target;  // select's target, scaled by the set's total when asked
};

struct Smem {
  Exchange ex[2];
  unsigned comb_count[kBins];
  double comb_mass[kBins];
  Partial warp_parts[kWarps];
  Decision decision;
  unsigned long long top_keys[kSampleMaxTop];
  unsigned num_top_keys;
};

// Descending order of floats as unsigned integers (smaller = larger value);
// -0 and +0 compare equal on the CPU, so they share a key (ties by id).
__device__ __forceinline__ uint32_t desc_bits(float v) {
  const uint32_t f = v == 0.0f ? 0u : __float_as_uint(v);
  return ~((f & 0x80000000u) ? ~f : (f | 0x80000000u));
}

// The state one block keeps while working on its row.
struct Row {
  cg::cluster_group cluster;
  Smem& sm;
  int parity;
  int64_t vocab;
  int id_bits;   // bits of the largest id
  int key_bits;  // 32 + id_bits
  int64_t first, stride, trips;  // this thread's elements: first + t * stride, t < trips
  __device__ unsigned long long key(float v, int64_t i) const {
    return (static_cast<unsigned long long>(desc_bits(v)) << id_bits) | static_cast<unsigned long long>(i);
  }
  __device__ int64_t id_of(unsigned long long k) const { return static_cast<int64_t>(k & ((1ull << id_bits) - 1)); }
};

// Calls f(i, v[i]) for this thread's elements in order, with kBatch loads in
// flight.  The loops' other work (shared atomics through a generic
// reference, stores, exp's branches) keeps the compiler from issuing a load
// before the previous element is done, so without this every pass paid one
// L2 latency per element (64 per thread at the Gemma vocabulary).
constexpr int kBatch = 8;
template <class F>
__device__ __forceinline__ void for_each_value(const Row& r, const float* v, F&& f) {
  for (int64_t t = 0; t < r.trips; t += kBatch) {
    float x[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int64_t i = r.first + (t + u) * r.stride;  // >= vocab once t + u >= trips
      x[u] = i < r.vocab ? v[i] : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int64_t i = r.first + (t + u) * r.stride;
      if (i < r.vocab) f(i, x[u]);
    }
  }
}

// Reduces `p` over the whole cluster; every thread of every block gets the
// same result (the blocks' partials are combined in rank order).
__device__ Partial cluster_reduce(Row& r, Partial p) {
  Exchange& ex = r.sm.ex[r.parity];
  r.parity ^= 1;
  p = warp_reduce(p);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) r.sm.warp_parts[warp] = p;
  __syncthreads();
  if (warp == 0) {
    Partial q = lane < kWarps ? r.sm.warp_parts[lane] : identity();
    q = warp_reduce(q);
    if (lane == 0) ex.slot = q;
  }
  r.cluster.sync();
  Partial all = identity();
  for (unsigned k = 0; k < kCluster; ++k) all = combine(all, *r.cluster.map_shared_rank(&ex.slot, k));
  return all;
}

// Which elements a question is about, and the weight each one carries.
struct Set {
  const float* v = nullptr;           // the row's values (raw logits or z)
  unsigned long long limit = ~0ull;   // keys above it are out
  bool use_min_p = false;
  float min_p = 0.0f;
  double log_min_p = 0.0;
  double vmax = 0.0;  // masses are exp(double(v) - vmax)
  bool by_mass = false;
};

__device__ __forceinline__ bool passes_min_p(const Set& s, float v) {
  if (!s.use_min_p) return true;
  const double t = static_cast<double>(v) - s.vmax;
  // Decided on the exponent unless within far more than exp/log's error of
  // the cut; there the CPU's own test, exp(t) >= min_p.
  if (t > s.log_min_p + 1e-9) return true;
  if (t < s.log_min_p - 1e-9) return false;
  return exp(t) >= static_cast<double>(s.min_p);
}

__device__ __forceinline__ bool in_set(const Set& s, float v, unsigned long long key) {
  return v != -INFINITY && key <= s.limit && passes_min_p(s, v);
}

// Adds (bin, count, mass) of each lane to the block's histogram, one shared
// atomic per distinct bin of the warp (the first digits concentrate in few
// bins, where per-lane atomics would serialise on one address).
__device__ __forceinline__ void hist_add(Exchange& ex, int bin, unsigned count, double mass, bool by_mass) {
  if (!__any_sync(kFull, bin >= 0)) return;
  const unsigned peers = __match_any_sync(kFull, bin);
  const int lane = threadIdx.x & 31;
  unsigned n = 0;
  double sum = 0.0;
  for (int j = 0; j < 32; ++j) {
    const unsigned c = __shfl_sync(kFull, count, j);
    const double m = by_mass ? __shfl_sync(kFull, mass, j) : 0.0;
    if ((peers >> j) & 1u) {
      n += c;
      sum += m;
    }
  }
  if (bin >= 0 && lane == __ffs(peers) - 1) {
    atomicAdd(&ex.count[bin], n);
    if (by_mass) atomicAdd(&ex.mass[bin], sum);
  }
}

// A thread's running histogram of the bins it met most recently, in
// registers: a histogram pass adds each element here and flushes once at the
// end, instead of a warp-wide exchange per element (which cost ~64 shuffles
// per 32 elements on the passes where most elements are in the set).  A bin
// that finds the slots taken goes straight to a shared atomic; by then the
// digit spreads over many bins, so those atomics rarely meet.  The masses'
// summation order changes, as it already did between warps (atomics).
struct BinCache {
  static constexpr int kSlots = 4;
  int bin[kSlots];
  unsigned count[kSlots];
  double mass[kSlots];
  __device__ BinCache() {
#pragma unroll
    for (int k = 0; k < kSlots; ++k) {
      bin[k] = -1;
      count[k] = 0;
      mass[k] = 0.0;
    }
  }
  // Predicated, not early returns: the slots must stay in registers.
  __device__ __forceinline__ void add(Exchange& ex, int b, double m, bool by_mass) {
    bool placed = b < 0;
#pragma unroll
    for (int k = 0; k < kSlots; ++k) {
      // Slots fill in order: the first free one ends the search.
      const bool here = !placed && (bin[k] == b || bin[k] < 0);
      bin[k] = here ? b : bin[k];
      count[k] += here ? 1u : 0u;
      mass[k] += here ? m : 0.0;
      placed = placed || here;
    }
    if (!placed) {
      atomicAdd(&ex.count[b], 1u);
      if (by_mass) atomicAdd(&ex.mass[b], m);
    }
  }
  // Every lane of the warp must call it (warp collectives).
  __device__ __forceinline__ void flush(Exchange& ex, bool by_mass) {
#pragma unroll
    for (int k = 0; k < kSlots; ++k) hist_add(ex, bin[k], count[k], mass[k], by_mass);
  }
};

// The answer to "which element of the set, in key order, is the first whose
// cumulative weight (count or mass) exceeds target (strict) or reaches it?".
// If none does (rounding), the last element of the set.  With of_total
// (masses only), target is a fraction of the set's total mass, taken from the
// first pass's histogram: the set's total costs no pass of its own.
struct Pick {
  unsigned long long key;
  double before;  // weight of the set's elements before it
  double at;      // its own weight
  bool last;      // no element crossed: the last one was taken
};

__device__ Pick select(Row& r, const Set& s, double target, bool strict, bool of_total = false) {
  unsigned long long prefix = 0;
  int decided = 0;
  double before = 0.0;
  bool fallback = false;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (;;) {
    const int bits = min(kDigitBits, r.key_bits - decided);
    const int shift = r.key_bits - decided - bits;
    Exchange& ex = r.sm.ex[r.parity];
    r.parity ^= 1;
    for (int t = threadIdx.x; t < kBins; t += kThreads) {
      ex.count[t] = 0;
      ex.mass[t] = 0.0;
    }
    __syncthreads();
    BinCache cache;
    for_each_value(r, s.v, [&](int64_t i, float v) {
      const unsigned long long k = r.key(v, i);
      const bool match = decided == 0 || (k >> (r.key_bits - decided)) == prefix;
      if (match && in_set(s, v, k)) {
        const int bin = static_cast<int>((k >> shift) & ((1ull << bits) - 1));
        cache.add(ex, bin, s.by_mass ? exp(static_cast<double>(v) - s.vmax) : 0.0, s.by_mass);
      }
    });
    cache.flush(ex, s.by_mass);
    r.cluster.sync();
    for (int t = threadIdx.x; t < kBins; t += kThreads) {
      unsigned c = 0;
      double m = 0.0;
      for (unsigned k = 0; k < kCluster; ++k) {
        const Exchange* other = r.cluster.map_shared_rank(&ex, k);
        c += other->count[t];
        m += other->mass[t];
      }
      r.sm.comb_count[t] = c;
      r.sm.comb_mass[t] = s.by_mass ? m : static_cast<double>(c);
    }
    __syncthreads();
    if (warp == 0) {
      constexpr int kPerLane = kBins / 32;
      double lane_mass = 0.0;
      for (int k = 0; k < kPerLane; ++k) lane_mass += r.sm.comb_mass[lane * kPerLane + k];
      double incl = lane_mass;
      for (int o = 1; o < 32; o <<= 1) {
        const double t = __shfl_up_sync(kFull, incl, o);
        if (lane >= o) incl += t;
      }
      if (of_total && decided == 0) target *= __shfl_sync(kFull, incl, 31);  // the set's total mass
      double run = __shfl_up_sync(kFull, incl, 1);
      run = before + (lane == 0 ? 0.0 : run);
      int found = -1, last = -1;
      double found_before = 0.0;
      for (int k = 0; k < kPerLane; ++k) {
        const int b = lane * kPerLane + k;
        if (r.sm.comb_count[b] == 0) continue;
        last = b;
        if (fallback || found >= 0) continue;
        const double next = run + r.sm.comb_mass[b];
        if (strict ? next > target : next >= target) {
          found = b;
          found_before = run;
        }
        run = next;
      }
      const unsigned crossed = __ballot_sync(kFull, found >= 0);
      Decision d;
      if (crossed) {
        const int src = __ffs(crossed) - 1;
        d.bin = __shfl_sync(kFull, found, src);
        d.before = __shfl_sync(kFull, found_before, src);
        d.fallback = 0;
      } else {
        const unsigned nonempty = __ballot_sync(kFull, last >= 0);
        const int src = nonempty ? 31 - __clz(nonempty) : 0;
        d.bin = __shfl_sync(kFull, last, src);
        d.before = 0.0;
        d.fallback = 1;
      }
      if (lane == 0) {
        d.count = d.bin >= 0 ? r.sm.comb_count[d.bin] : 0;
        d.mass = d.bin >= 0 ? r.sm.comb_mass[d.bin] : 0.0;
        d.target = target;
        r.sm.decision = d;
      }
    }
    __syncthreads();
    const Decision d = r.sm.decision;
    target = d.target;
    if (d.bin < 0) return Pick{0, 0.0, 0.0, true};  // empty set: callers never ask
    fallback = fallback || d.fallback != 0;
    if (!fallback) before = d.before;
    prefix = (prefix << bits) | static_cast<unsigned long long>(d.bin);
    decided += bits;
    if (decided == r.key_bits) return Pick{prefix, before, d.mass, fallback};
    if (d.count == 1) {
      // One element left under the prefix: find its key.
      Partial p = identity();
      for_each_value(r, s.v, [&](int64_t i, float v) {
        const unsigned long long k = r.key(v, i);
        if ((k >> (r.key_bits - decided)) == prefix && in_set(s, v, k)) p.kmin = k;
      });
      p = cluster_reduce(r, p);
      return Pick{p.kmin, before, d.mass, fallback};
    }
  }
}

// Sum of masses (and count) over a set.
__device__ Partial set_total(Row& r, const Set& s) {
  Partial p = identity();
  for_each_value(r, s.v, [&](int64_t i, float v) {
    if (in_set(s, v, r.key(v, i))) {
      p.count += 1;
      if (s.by_mass) p.sum += exp(static_cast<double>(v) - s.vmax);
    }
  });
  return cluster_reduce(r, p);
}

// The processed logit of one id, with the CPU provider's float operations.
__device__ __forceinline__ float processed(float raw, int64_t id, int32_t counted, const SampleRowParams& prm,
                                           const uint32_t* mask) {
  float v = raw;
  const int32_t outputs = counted & (kPromptBit - 1);
  if (prm.repetition != 1.0f && counted != 0) v = v > 0.0f ? __fdiv_rn(v, prm.repetition) : __fmul_rn(v, prm.repetition);
  if ((prm.frequency != 0.0f || prm.presence != 0.0f) && outputs > 0)
    v = __fsub_rn(v, __fadd_rn(__fmul_rn(prm.frequency, __int2float_rn(outputs)), prm.presence));
  if (mask && ((mask[id >> 5] >> (id & 31)) & 1u) == 0) v = -INFINITY;
  if (!prm.greedy) v = __fdiv_rn(v, prm.temperature);
  return v == 0.0f ? 0.0f : v;  // -0 and +0 compare equal on the CPU: one key
}

// The raw logit of `id` plus its bias (the CPU's one float add), if the
// row's ascending bias list names it.
__device__ __forceinline__ float biased(float raw, int32_t id, const int32_t* ids, const float* values, int64_t n) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    if (ids[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && ids[lo] == id ? __fadd_rn(raw, values[lo]) : raw;
}

// Biased and penalised ids (every id of the row's token lists and its bias
// list): counts[id] cleared, then marked (penalties only), then z[id]
// recomputed from the biased raw logit.  Only ids in these lists are ever
// read from counts; an id in several lists gets the same value from every
// thread that writes it.
__device__ void apply_adjustments(Row& r, const SampleProblem& p, const SampleRowParams& prm, const float* raw,
                                  float* z, int32_t* counts, const uint32_t* mask) {
  const int32_t* prompt = p.tokens + prm.prompt_offset;
  const int32_t* output = p.tokens + prm.output_offset;
  const int32_t* bias_ids = p.bias_ids + prm.bias_offset;
  const float* bias_values = p.bias_values + prm.bias_offset;
  const int64_t np = prm.penalize_output && prm.penalize_prompt ? prm.num_prompt : 0;
  const int64_t no = prm.penalize_output ? prm.num_output : 0;
  const int64_t nb = prm.num_bias;
  const int64_t start = r.first, step = r.stride;
  if (prm.penalize_output) {
    for (int64_t j = start; j < np; j += step) counts[prompt[j]] = 0;
    for (int64_t j = start; j < no; j += step) counts[output[j]] = 0;
    for (int64_t j = start; j < nb; j += step) counts[bias_ids[j]] = 0;
    __threadfence();
    r.cluster.sync();
    for (int64_t j = start; j < np; j += step) atomicOr(&counts[prompt[j]], kPromptBit);
    for (int64_t j = start; j < no; j += step) atomicAdd(&counts[output[j]], 1);
    __threadfence();
    r.cluster.sync();
  }
  for (int64_t j = start; j < np + no + nb; j += step) {
    const int32_t id = j < np ? prompt[j] : j < np + no ? output[j - np] : bias_ids[j - np - no];
    const int32_t counted = prm.penalize_output ? counts[id] : 0;
    z[id] = processed(biased(raw[id], id, bias_ids, bias_values, nb), id, counted, prm, mask);
  }
  __threadfence();
  r.cluster.sync();
}

__global__ void __cluster_dims__(kCluster, 1, 1) __launch_bounds__(kThreads)
    sample_kernel(SampleProblem p) {
  __shared__ Smem sm;
  Row r{cg::this_cluster(), sm, 0, p.vocab, 0, 0, 0, 0, 0};
  const int64_t row = blockIdx.x / kCluster;
  const unsigned rank = r.cluster.block_rank();
  while (r.id_bits < 31 && (1ll << r.id_bits) < p.vocab) ++r.id_bits;
  if (r.id_bits == 0) r.id_bits = 1;
  r.key_bits = 32 + r.id_bits;
  r.first = static_cast<int64_t>(rank) * kThreads + threadIdx.x;
  r.stride = static_cast<int64_t>(kCluster) * kThreads;
  r.trips = (p.vocab + r.stride - 1) / r.stride;
  const SampleRowParams& prm = p.params[row];
  const float* raw = p.logits + row * p.row_stride;
  float* z = p.z + row * p.vocab;
  const uint32_t* mask = prm.mask_offset >= 0 ? p.masks + prm.mask_offset : nullptr;
  SampleRowResult* out = p.results + row;
  const bool writer = rank == 0 && threadIdx.x == 0;

  // Raw statistics, and z without penalties.
  Partial a = identity();
  for_each_value(r, raw, [&](int64_t i, float x) {
    if (!isfinite(x)) a.flag = 1;
    else a.fmax = fmaxf(a.fmax, x);
    z[i] = processed(x, i, 0, prm, mask);
  });
  a = cluster_reduce(r, a);
  if (a.flag) {
    if (writer) {
      out->non_finite = 1;
      out->token = -1;
      out->logprob = NAN;
      for (int k = 0; k < p.num_top; ++k) {
        out->top_ids[k] = -1;
        out->top_logprobs[k] = NAN;
      }
    }
    r.cluster.sync();  // no block leaves while another may read its shared memory
    return;
  }
  const float raw_max = a.fmax;
  if (prm.penalize_output || prm.num_bias > 0)
    apply_adjustments(r, p, prm, raw, z, prm.penalize_output ? p.counts + row * p.vocab : nullptr, mask);

  // Greedy key (largest z, lowest id), candidates, log-sum-exp of the raw row.
  Partial b = identity();
  float lse_part = 0.0f;
  double lse_sum = 0.0;
  int n_part = 0;
  for_each_value(r, z, [&](int64_t i, float v) {
    if (v != -INFINITY) {
      const unsigned long long k = r.key(v, i);
      b.kmin = k < b.kmin ? k : b.kmin;
      b.count += 1;
    }
    lse_part += expf(raw[i] - raw_max);
    if (++n_part == 16) {
      lse_sum += lse_part;
      lse_part = 0.0f;
      n_part = 0;
    }
  });
  b.sum = lse_sum + lse_part;
  b = cluster_reduce(r, b);
  const double lse = static_cast<double>(raw_max) + log(b.sum);
  const unsigned valid = b.count;

  if (p.num_top > 0) {
    Set all;
    all.v = raw;
    const Pick t = select(r, all, static_cast<double>(p.num_top - 1), true);
    if (threadIdx.x == 0) sm.num_top_keys = 0;
    __syncthreads();
    for_each_value(r, raw, [&](int64_t i, float v) {
      const unsigned long long k = r.key(v, i);
      if (k <= t.key) {
        const unsigned at = atomicAdd(&sm.num_top_keys, 1u);
        if (at < kSampleMaxTop) sm.top_keys[at] = k;
      }
    });
    r.cluster.sync();
    if (writer) {
      unsigned long long keys[kSampleMaxTop];
      int n = 0;
      for (unsigned k = 0; k < kCluster; ++k) {
        const Smem* other = r.cluster.map_shared_rank(&sm, k);
        const unsigned m = min(other->num_top_keys, static_cast<unsigned>(kSampleMaxTop));
        for (unsigned j = 0; j < m && n < kSampleMaxTop; ++j) {
          // Insertion into ascending key order (= logit desc, id asc).
          const unsigned long long key = other->top_keys[j];
          int at = n++;
          while (at > 0 && keys[at - 1] > key) {
            keys[at] = keys[at - 1];
            --at;
          }
          keys[at] = key;
        }
      }
      for (int k = 0; k < p.num_top; ++k) {
        const int64_t id = k < n ? r.id_of(keys[k]) : -1;
        out->top_ids[k] = static_cast<int32_t>(id);
        out->top_logprobs[k] = id >= 0 ? static_cast<float>(static_cast<double>(raw[id]) - lse) : NAN;
      }
    }
  }

  int64_t token = 0;  // every id masked to -inf: the CPU's max_element gives 0
  if (valid > 0 && prm.greedy) {
    token = r.id_of(b.kmin);
  } else if (valid > 0) {
    Set s;
    s.v = z;
    s.vmax = static_cast<double>(z[r.id_of(b.kmin)]);
    s.by_mass = true;
    s.use_min_p = prm.min_p > 0.0f;
    s.min_p = prm.min_p;
    s.log_min_p = log(static_cast<double>(prm.min_p));
    if (prm.top_k > 0) {
      unsigned kept = valid;
      if (s.use_min_p) kept = set_total(r, Set{z, ~0ull, true, prm.min_p, s.log_min_p, s.vmax, false}).count;
      if (static_cast<unsigned>(prm.top_k) < kept) {
        Set by_count = s;
        by_count.by_mass = false;
        s.limit = select(r, by_count, static_cast<double>(prm.top_k - 1), true).key;
      }
    }
    // Targets as fractions of the set's total: select takes the total from
    // its first histogram.
    Pick d;
    if (prm.top_p < 1.0f) {
      const Pick n = select(r, s, static_cast<double>(prm.top_p), false, true);
      s.limit = n.key;
      // The CPU's total of the nucleus is its cumulative sum at the cut.
      const double total = n.last ? set_total(r, s).sum : n.before + n.at;
      d = select(r, s, prm.u * total, true);
    } else {
      d = select(r, s, prm.u, true, true);
    }
    token = r.id_of(d.key);
  }
  if (writer) {
    out->non_finite = 0;
    out->token = static_cast<int32_t>(token);
    out->logprob = static_cast<float>(static_cast<double>(raw[token]) - lse);
  }
  r.cluster.sync();  // no block leaves while another may read its shared memory
}

}  // namespace

int launch_sample(Stream s, const SampleProblem& p) {
  if (p.rows == 0) return 0;
  sample_kernel<<<static_cast<unsigned>(p.rows * kCluster), kThreads, 0, cudaStream_t(s)>>>(p);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace seatrt::cuda
