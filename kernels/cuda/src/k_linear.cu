// linear and moe on the skinny-M kernel of gemv.cuh.  MoE at decode sizes
// takes k_moe_decode.cu (two launches); otherwise (or with
// SEATRT_MOE_DECODE=old) it runs as: group the (token, slot) assignments by
// expert on the device, then one grid over (row chunk, active expert) for
// gate/up + activation, one for down (scaled by the router weight), then a
// fixed-order sum over each token's k slots.  Blocks of inactive expert
// slots exit at once: no cost per unused expert.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "convert.hpp"
#include "gemv.cuh"
#include "pdl.cuh"

namespace seatrt::cuda {
namespace {

template <int L, int kTile>
__global__ void __launch_bounds__(kGemvWarps * 32) gemv_kernel(GemvArgs a) {
  constexpr int kRowsPerWarp = 32 / L;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, sub = lane % L;
  extern __shared__ __align__(16) unsigned char x_stage[];
  const int64_t my_row = (int64_t(blockIdx.x) * kGemvWarps + warp) * kRowsPerWarp + lane / L;
  // Idle row groups shadow the last row (they must reach the barriers).
  const bool row_ok = my_row < a.n;
  const int64_t row = row_ok ? my_row : a.n - 1;
  // Programmatic dependent launch: this grid may start while the previous
  // kernel on the stream still runs.  A plain linear's weights do not depend
  // on it, so their bytes are pulled into L2 first; everything the previous
  // kernel may write (x, the expert groups, out) is touched only after
  // griddepcontrol.wait, which waits for it to complete and flush.
  if (!a.groups.active) {
    const char* wrow = static_cast<const char*>(a.w.data) + row * a.w.data_row_bytes;
    const int64_t row_bytes = a.w.kind <= int32_t(WeightKind::Fp4Bf16Scales) ? a.k / 2 : a.w.data_row_bytes;
    for (int64_t off = int64_t(sub) * 128; off < row_bytes; off += int64_t(L) * 128)
      asm volatile("prefetch.global.L2 [%0];" ::"l"(wrow + off));
    if (a.glu) {
      const char* urow = static_cast<const char*>(a.w_up.data) + row * a.w_up.data_row_bytes;
      for (int64_t off = int64_t(sub) * 128; off < row_bytes; off += int64_t(L) * 128)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(urow + off));
    }
  }
  asm volatile("griddepcontrol.launch_dependents;");
  asm volatile("griddepcontrol.wait;" ::: "memory");

  int64_t count = a.groups.rows;
  const int32_t* list = nullptr;
  WeightRef w = a.w, wu = a.w_up;
  if (a.groups.active) {
    if (int(blockIdx.y) >= *a.groups.num_active) return;
    const int e = a.groups.active[blockIdx.y];
    const int64_t first = a.groups.offsets[e];
    count = a.groups.offsets[e + 1] - first;
    list = a.groups.sorted + first;
    w = a.table[e];
    if (a.glu) wu = a.table_up[e];
  }
  for (int64_t t0 = 0; t0 < count; t0 += kTile) {
    const int valid = static_cast<int>(count - t0 < kTile ? count - t0 : kTile);
    int32_t asg[kTile], xrow[kTile];
#pragma unroll
    for (int m = 0; m < kTile; ++m) {
      asg[m] = m < valid ? (list ? list[t0 + m] : static_cast<int32_t>(t0 + m)) : 0;
      xrow[m] = asg[m] / a.x_div;
    }
    // Stage the tile's activation rows in shared memory: the inner loop then
    // reads them at shared-memory latency instead of one L2 round trip per
    // 8 weights (which serialised the loop).
    Mat x = a.x;
    if (a.stage) {
      const int64_t per_row = a.k * (a.x.dtype == SEATRT_DTYPE_F32 ? 4 : 2) / 16;  // 16-byte vectors
      const int64_t stride_vecs = a.x.row_stride * (a.x.dtype == SEATRT_DTYPE_F32 ? 4 : 2) / 16;
      __syncthreads();  // the previous tile's readers are done
      for (int64_t i = threadIdx.x; i < valid * per_row; i += blockDim.x) {
        const int64_t m = i / per_row, v = i % per_row;
        const int64_t src = (list ? list[t0 + m] : t0 + m) / a.x_div;
        reinterpret_cast<uint4*>(x_stage)[i] = reinterpret_cast<const uint4*>(a.x.data)[src * stride_vecs + v];
      }
      __syncthreads();
      x = Mat{x_stage, a.x.dtype, valid, a.k, a.k};
#pragma unroll
      for (int m = 0; m < kTile; ++m) xrow[m] = m;
    }
    float acc[kTile] = {}, acc_up[kTile] = {};
    dot_tile<L, kTile>(w, row, a.k, x, xrow, valid, a.vec, sub, acc);
    if (a.glu) dot_tile<L, kTile>(wu, row, a.k, x, xrow, valid, a.vec, sub, acc_up);
#pragma unroll
    for (int m = 0; m < kTile; ++m) {
      if (m >= valid) break;
      float v = group_sum<L>(acc[m]) / w.global_divisor;
      if (a.glu) v = activation(a.act, v) * (group_sum<L>(acc_up[m]) / wu.global_divisor);
      if (a.row_weight) v *= a.row_weight[asg[m]];
      if (sub == 0 && row_ok) mat_store(a.out, asg[m], row, v);
    }
  }
}

// Lanes per row: 32 when each lane still gets about two 16-byte chunks of
// FP4 weights, else 8 (the experts' down projection has K = 704).
// Launched with the programmatic-stream-serialisation attribute (pdl.cuh;
// see the kernel's griddepcontrol comment).
template <int kTile>
int launch_tile(cudaStream_t st, const GemvArgs& a, unsigned slots, size_t smem) {
  const int L = a.k / 32 >= 64 ? 32 : 8;
  const dim3 grid(static_cast<unsigned>(ceil_div(a.n, int64_t(kGemvWarps) * (32 / L))), slots);
  const dim3 block(kGemvWarps * 32);
  return static_cast<int>(L == 32 ? launch_pdl(gemv_kernel<32, kTile>, grid, block, smem, st, a)
                                  : launch_pdl(gemv_kernel<8, kTile>, grid, block, smem, st, a));
}

// Above this many rows (BF16 activations) linear uses the tensor cores; below
// it the GEMV re-reads weights from L2 per tile, which is cheaper than the
// simple tensor-core kernel's serial K loop on few blocks.
constexpr int64_t kTensorCoreRows = 64;

// Staged activations must fit the default dynamic shared memory (48 KiB).
constexpr int64_t kStageBytes = 48 * 1024;

// `max_rows`: the most activation rows one weight can see.  The tile is the
// smallest of 1, 4, 8 that holds them (decode keeps registers low), reduced
// while its staged activations would not fit in shared memory.
int launch_gemv(cudaStream_t st, GemvArgs a, unsigned slots, int64_t max_rows) {
  int tile = max_rows <= 1 ? 1 : max_rows <= 4 ? 4 : kMaxTile;
  const int64_t elem = a.x.dtype == SEATRT_DTYPE_F32 ? 4 : 2;
  while (tile > 1 && tile * a.k * elem > kStageBytes) tile = tile == kMaxTile ? 4 : 1;
  const int64_t bytes = tile * a.k * elem;
  a.stage = a.vec && bytes <= kStageBytes && (a.k * elem) % 16 == 0;
  const size_t smem = a.stage ? static_cast<size_t>(bytes) : 0;
  if (tile == 1) return launch_tile<1>(st, a, slots, smem);
  if (tile == 4) return launch_tile<4>(st, a, slots, smem);
  return launch_tile<kMaxTile>(st, a, slots, smem);
}

// Groups the assignments (t, j) -> expert ids[t*k+j].  One block.
__global__ void moe_group_kernel(const int32_t* ids, int64_t assignments, int num_experts,
                                 int32_t* offsets, int32_t* active, int32_t* num_active,
                                 int32_t* sorted) {
  extern __shared__ int32_t sm[];
  int32_t* count = sm;
  int32_t* cursor = sm + num_experts;
  for (int e = threadIdx.x; e < num_experts; e += blockDim.x) { count[e] = 0; cursor[e] = 0; }
  __syncthreads();
  for (int64_t i = threadIdx.x; i < assignments; i += blockDim.x) {
    const int e = ids[i];
    if (e >= 0 && e < num_experts) atomicAdd(&count[e], 1);
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    // Warp 0 scans: lane l owns experts [l*per, (l+1)*per) (a serial loop
    // over 128 experts in one thread cost ~2.5 us per layer).
    const int lane = threadIdx.x, per = (num_experts + 31) / 32;
    const int e0 = lane * per, e1 = e0 + per < num_experts ? e0 + per : num_experts;
    int32_t rows = 0, used = 0;
    for (int e = e0; e < e1; ++e) {
      rows += count[e];
      used += count[e] > 0;
    }
    int32_t rows_before = rows, used_before = used;  // inclusive scans, then made exclusive
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const int32_t r = __shfl_up_sync(0xffffffffu, rows_before, o);
      const int32_t u = __shfl_up_sync(0xffffffffu, used_before, o);
      if (lane >= o) {
        rows_before += r;
        used_before += u;
      }
    }
    rows_before -= rows;
    used_before -= used;
    for (int e = e0; e < e1; ++e) {
      offsets[e] = rows_before;
      cursor[e] = rows_before;
      if (count[e] > 0) active[used_before++] = e;
      rows_before += count[e];
    }
    if (lane == 31) {
      offsets[num_experts] = rows_before;
      *num_active = used_before;
    }
  }
  __syncthreads();
  for (int64_t i = threadIdx.x; i < assignments; i += blockDim.x) {
    const int e = ids[i];
    if (e >= 0 && e < num_experts) sorted[atomicAdd(&cursor[e], 1)] = static_cast<int32_t>(i);
  }
}

// out[t] = sum over j of y[t*k + j] (valid ids only), in slot order.
__global__ void moe_sum_kernel(const float* y, const int32_t* ids, int top_k, int num_experts,
                               int64_t tokens, int64_t hidden, Mat out) {
  const int64_t n = tokens * hidden;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = i / hidden, c = i % hidden;
    float s = 0.0f;
    for (int j = 0; j < top_k; ++j) {
      const int e = ids[t * top_k + j];
      if (e >= 0 && e < num_experts) s += y[(t * top_k + j) * hidden + c];
    }
    mat_store(out, t, c, s);
  }
}

struct MoeWorkspace {
  int32_t* offsets;
  int32_t* active;
  int32_t* num_active;
  int32_t* sorted;
  float* h;
  float* y;
};

size_t align256(size_t b) { return (b + 255) / 256 * 256; }

MoeWorkspace carve(const MoeProblem& p, void* base) {
  char* c = static_cast<char*>(base);
  const size_t A = static_cast<size_t>(p.tokens) * static_cast<size_t>(p.top_k);
  MoeWorkspace w{};
  w.offsets = reinterpret_cast<int32_t*>(c); c += align256(sizeof(int32_t) * (size_t(p.num_experts) + 1));
  w.active = reinterpret_cast<int32_t*>(c); c += align256(sizeof(int32_t) * size_t(p.num_experts));
  w.num_active = reinterpret_cast<int32_t*>(c); c += 256;
  w.sorted = reinterpret_cast<int32_t*>(c); c += align256(sizeof(int32_t) * A);
  w.h = reinterpret_cast<float*>(c); c += align256(sizeof(float) * A * size_t(p.intermediate));
  w.y = reinterpret_cast<float*>(c);
  return w;
}

// SEATRT_MOE_DECODE, read at each call (a switch for benchmarks and tests:
// see MoeDecodeChoice).
MoeDecodeChoice moe_decode_choice() {
  MoeDecodeChoice c;
  const char* v = std::getenv("SEATRT_MOE_DECODE");
  for (const char* p = v; p && *p;) {
    const char* end = std::strpbrk(p, ",+");
    const size_t n = end ? static_cast<size_t>(end - p) : std::strlen(p);
    if (n == 3 && std::strncmp(p, "old", 3) == 0) c.old = true;
    if (n == 2 && p[0] == 's' && p[1] >= '1' && p[1] <= '8') c.split = p[1] - '0';
    if (n == 2 && p[0] == 'd' && p[1] >= '1' && p[1] <= '8') c.down_warps = p[1] - '0';
    if (n == 2 && p[0] == 'p' && (p[1] == '2' || p[1] == '3')) c.f32_planes = p[1] - '0';
    if (n == 2 && p[0] == 't' && p[1] >= '1' && p[1] <= '8') c.max_tile = p[1] - '0';
    // Load modes: a (cp.async stages, the default), r (register ring,
    // byte-wise scales: version 4), w (register ring, one scale load per row).
    if (n == 1 && p[0] == 'a') c.async_loads = true;
    if (n == 1 && p[0] == 'e') c.down_early = true;
    if (n == 1 && p[0] == 'l') c.l2_down = true;
    if (n == 1 && (p[0] == 'r' || p[0] == 'w')) {
      c.async_loads = false;
      c.wide_scales = p[0] == 'w';
    }
    p = end ? end + 1 : nullptr;
  }
  return c;
}

bool vec_ok(const Mat& x) {
  if (x.dtype != SEATRT_DTYPE_F32 && x.dtype != SEATRT_DTYPE_BF16) return false;
  const int64_t elem = x.dtype == SEATRT_DTYPE_F32 ? 4 : 2;
  return (reinterpret_cast<uintptr_t>(x.data) % 16) == 0 && (x.row_stride * elem) % 16 == 0;
}
bool vec_ok(const WeightRef& w) {
  return (reinterpret_cast<uintptr_t>(w.data) % 16) == 0 && w.data_row_bytes % 16 == 0;
}

}  // namespace

namespace {

// SEATRT_LINEAR_DECODE (read at each call, a benchmarking and test switch;
// comma-separated): "plain" takes the byte-wise scale loads, "nostage" the
// per-step x loads, "nosplit" the per-step F32 split, "p3" three planes,
// "nt1"/"nt2" fewer n-tiles per pass, "gemv1" the CUDA-core GEMV for the
// dense LM head at one row.
struct DecodeOpts {
  bool raw = true, stage = true, split = true, gemv1 = false;
  int planes = 2, max_ntiles = 4;
};
DecodeOpts decode_opts() {
  const char* v = std::getenv("SEATRT_LINEAR_DECODE");
  const std::string opts = v ? std::string(",") + v + "," : std::string();
  auto has = [&](const char* o) { return opts.find(std::string(",") + o + ",") != std::string::npos; };
  DecodeOpts d;
  d.raw = !has("plain");
  d.stage = !has("nostage");
  d.split = !has("nosplit");
  d.gemv1 = has("gemv1");
  d.planes = has("p3") ? 3 : 2;
  d.max_ntiles = has("nt1") ? 1 : has("nt2") ? 2 : 4;
  return d;
}

GemvArgs plain_args(const WeightRef& w, const GemvProblem& p) {
  GemvArgs a;
  a.w = w;
  a.n = p.n;
  a.k = p.k;
  a.x = p.x;
  a.out = p.out;
  a.groups.rows = p.x.rows;
  a.vec = vec_ok(w) && vec_ok(p.x);
  return a;
}

// Group scales loaded raw and converted when consumed, F32 x staged once per
// block (gemv.cuh): the defaults for the tensor-core decode kernel.
void apply(const DecodeOpts& o, GemvArgs& a) {
  a.raw_scales = o.raw;
  a.stage_x = o.stage;
  a.f32_planes = o.planes;
  a.max_ntiles = o.max_ntiles;
}

// F32 x the kernel does not stage itself (more rows than fit shared memory,
// or dense weights) is split once into BF16 planes (two, or three with "p3";
// one small launch), so no warp splits it again at every step.
int split_once(Stream s, const DecodeOpts& o, const GemvProblem& p, GemvArgs& a) {
  if (!o.split || !p.x_planes || p.x.dtype != SEATRT_DTYPE_F32 || gemv_mma_stages_x(a, p.x.rows)) return 0;
  if (int e = launch_to_planes(s, p.x, p.x_planes, a.f32_planes)) return e;
  a.x = Mat{p.x_planes, SEATRT_DTYPE_BF16, p.x.rows, p.x.cols, p.x.cols};
  a.x_lo_offset = p.x.rows * p.x.cols;
  a.x_planes = a.f32_planes;
  const bool w_ok = vec_ok(a.w) && (!a.glu || vec_ok(a.w_up));
  bool multi_ok = true;
  for (int i = 0; i < a.multi.count; ++i) multi_ok = multi_ok && vec_ok(a.multi.w[i]);
  a.vec = w_ok && multi_ok && vec_ok(a.x);
  return gemv_mma_fits(a) ? 0 : static_cast<int>(cudaErrorInvalidValue);
}

bool is_fp4(const WeightRef& w) { return w.kind <= int32_t(WeightKind::Fp4Bf16Scales); }

// The fused launches cover decode shapes on the tensor-core decode kernel:
// NVFP4 weights, at most kTensorCoreRows rows.
bool fused_shape_ok(const GemvProblem& p) {
  return p.x.rows >= 1 && p.x.rows <= kTensorCoreRows && p.k % 32 == 0 &&
         (p.x.dtype == SEATRT_DTYPE_F32 || p.x.dtype == SEATRT_DTYPE_BF16);
}

}  // namespace

// [kernels.options] lm_head_gemm (opt-in, not yet measured): a dense BF16
// weight (the LM head) at decode rows of F32 x on the prefill GEMM core
// (gemm_bf16w.cuh, one 64-row tile): x's BF16 planes stacked as rows, F32
// partials, then their sum.  Why: the decode kernel re-reads x from L2 for
// every 16 weight rows (~1-1.5 ms at 16-32 rows, README); here the weight
// streams once and x is read from shared memory per 128 weight rows.
static int launch_linear_planes_gemm(Stream s, const WeightRef& w, const GemvProblem& p) {
  const int planes = decode_opts().planes;
  if (int e = launch_to_planes(s, p.x, p.x_planes, planes)) return e;
  GemvProblem q = p;
  q.x = Mat{p.x_planes, SEATRT_DTYPE_BF16, planes * p.x.rows, p.k, p.k};
  q.out = Mat{p.plane_out, SEATRT_DTYPE_F32, planes * p.x.rows, p.n, p.n};
  q.x_planes = q.plane_out = q.w_bf16 = nullptr;
  if (int e = launch_linear_tc(s, w, q, true)) return e;
  return launch_sum_planes(s, static_cast<const float*>(p.plane_out), planes, p.out);
}

int launch_linear(Stream s, const WeightRef& w, const GemvProblem& p) {
  if (p.x.rows == 0 || p.n == 0) return 0;
  if (p.plane_out && p.x_planes && w.kind == int32_t(WeightKind::DenseBf16) && p.x.dtype == SEATRT_DTYPE_F32 &&
      p.x.rows <= kTensorCoreRows && p.k % 64 == 0)
    return launch_linear_planes_gemm(s, w, p);
  GemvArgs a = plain_args(w, p);
  // Many rows of BF16 activations: tensor cores (bit-exact weight decode, no
  // input rounding).  F32 activations stay on the fp32 path.
  if (p.x.rows > kTensorCoreRows && p.x.dtype == SEATRT_DTYPE_BF16)
    return launch_linear_tc(s, w, p, a.vec && (reinterpret_cast<uintptr_t>(p.x.data) % 16) == 0);
  // NVFP4 weights: the tensor-core decode kernel; dense BF16 weights (the LM
  // head) too, see below.
  if (dense_small_n_fits(w, p)) return launch_dense_small_n(s, w, p);
  const DecodeOpts o = decode_opts();
  const bool fp4 = is_fp4(w);
  // Dense BF16 weights (the LM head) on the tensor-core kernel from 2 rows,
  // and at 1 row when F32 x is split once into BF16 planes (the CUDA-core
  // GEMV reached ~2.5 TB/s there; "gemv1" keeps it).
  const bool dense = w.kind == int32_t(WeightKind::DenseBf16);
  const bool bf16 = dense && (p.x.rows >= 2 || (o.split && p.x_planes && p.x.dtype == SEATRT_DTYPE_F32 && !o.gemv1));
  if (fp4 || bf16) apply(o, a);
  if ((fp4 || bf16) && gemv_mma_fits(a)) {
    if (int e = split_once(s, o, p, a)) return e;
    return launch_gemv_mma(cudaStream_t(s), a, 1, p.x.rows);
  }
  return launch_gemv(cudaStream_t(s), a, 1, p.x.rows);
}

int launch_linear_multi(Stream s, int count, const WeightRef* w, const Mat* outs, const GemvProblem& p) {
  if (count < 1 || count > kMultiMax || !fused_shape_ok(p)) return kNotFused;
  GemvArgs a = plain_args(w[0], p);
  a.multi.count = count;
  int32_t tiles = 0;
  for (int i = 0; i < count; ++i) {
    if (!is_fp4(w[i]) || !vec_ok(w[i]) || outs[i].rows != p.x.rows) return kNotFused;
    a.multi.first_tile[i] = tiles;
    a.multi.w[i] = w[i];
    a.multi.out[i] = outs[i];
    a.multi.n[i] = outs[i].cols;
    tiles += static_cast<int32_t>(ceil_div(outs[i].cols, int64_t{16}));
  }
  a.multi.first_tile[count] = tiles;
  a.n = a.multi.n[0];
  a.out = outs[0];
  const DecodeOpts o = decode_opts();
  apply(o, a);
  if (!gemv_mma_fits(a)) return kNotFused;
  // Kernels exist for the defaults only (raw scales; x staged, split once or
  // BF16): the benchmark switches that leave them run the single Linears.
  const bool splits = o.split && p.x_planes && p.x.dtype == SEATRT_DTYPE_F32;
  if (!o.raw || !(splits || gemv_mma_multi_fits(a, p.x.rows))) return kNotFused;
  if (int e = split_once(s, o, p, a)) return e;
  return launch_gemv_mma(cudaStream_t(s), a, 1, p.x.rows);
}

int launch_linear_glu(Stream s, const WeightRef& gate, const WeightRef& up, int activation, const GemvProblem& p) {
  if (!fused_shape_ok(p) || !is_fp4(gate) || !is_fp4(up) || !vec_ok(up)) return kNotFused;
  GemvArgs a = plain_args(gate, p);
  a.w_up = up;
  a.glu = true;
  a.act = activation;
  const DecodeOpts o = decode_opts();
  apply(o, a);
  if (!gemv_mma_fits(a)) return kNotFused;
  // The staged and split-plane GLU kernels read raw scales; "plain" takes
  // the per-step F32 split (per Linear).
  if (a.raw_scales)
    if (int e = split_once(s, o, p, a)) return e;
  return launch_gemv_mma(cudaStream_t(s), a, 1, p.x.rows);
}

size_t moe_workspace_bytes(const MoeProblem& p) {
  const size_t A = static_cast<size_t>(p.tokens) * static_cast<size_t>(p.top_k);
  const size_t decode = moe_decode_workspace_bytes(p);
  return std::max(decode, align256(sizeof(int32_t) * (size_t(p.num_experts) + 1)) +
         align256(sizeof(int32_t) * size_t(p.num_experts)) + 256 + align256(sizeof(int32_t) * A) +
         align256(sizeof(float) * A * size_t(p.intermediate)) + align256(sizeof(float) * A * size_t(p.hidden)));
}

// `vec` for the expert tables is decided by the caller through MoeProblem's
// weights: see ops_moe.cpp (all experts are checked there).
int launch_moe(Stream s, const MoeProblem& p, void* workspace) {
  if (p.tokens == 0) return 0;
  cudaStream_t st = cudaStream_t(s);
  const MoeDecodeChoice choice = moe_decode_choice();
  // The two-launch path takes every batch it fits (<= 512 assignments).
  // (Until the shared-mask race in k_moe_decode.cu was found it was kept to
  // <= 4 tokens: at 16+ tokens it failed intermittently.)
  if (!choice.old && moe_decode_fits(p)) return launch_moe_decode(st, p, workspace, choice);
  const MoeWorkspace ws = carve(p, workspace);
  const int64_t A = p.tokens * p.top_k;
  moe_group_kernel<<<1, 1024, sizeof(int32_t) * 2 * size_t(p.num_experts), st>>>(
      p.ids, A, p.num_experts, ws.offsets, ws.active, ws.num_active, ws.sorted);
  if (int e = last_error()) return e;
  const unsigned slots = static_cast<unsigned>(A < p.num_experts ? A : p.num_experts);

  GemvArgs g;
  g.table = p.gate;
  g.table_up = p.up;
  g.glu = true;
  g.act = p.activation;
  g.n = p.intermediate;
  g.k = p.hidden;
  g.x = p.x;
  g.x_div = p.top_k;
  g.out = Mat{ws.h, SEATRT_DTYPE_F32, A, p.intermediate, p.intermediate};
  g.groups = GemvGroups{ws.active, ws.num_active, ws.offsets, ws.sorted, 0};
  g.vec = p.vec && vec_ok(p.x);
  // NVFP4 experts take the tensor-core kernel (it handles other expert
  // formats with a slow in-kernel loop); the CUDA-core GEMV stays for
  // unaligned or odd-K cases.
  // An expert sees few of the tokens (uniform routing at batch 32: ~2.3
  // each), so its blocks take one n-tile (8 tokens, fewest registers) and loop
  // over further tiles (re-reading the expert's weights from L2).
  const bool mma = gemv_mma_fits(g) && p.intermediate % 32 == 0;
  const int64_t mma_rows = p.tokens < 8 ? p.tokens : 8;
  if (mma) {
    // h goes to down as two BF16 planes (hi, lo) in the same bytes as F32.
    g.out = Mat{ws.h, SEATRT_DTYPE_BF16, A, p.intermediate, p.intermediate};
    g.out_lo_offset = A * p.intermediate;
  }
  if (int e = mma ? launch_gemv_mma(st, g, slots, mma_rows) : launch_gemv(st, g, slots, p.tokens)) return e;

  GemvArgs d;
  d.table = p.down;
  d.n = p.hidden;
  d.k = p.intermediate;
  d.x = mma ? Mat{ws.h, SEATRT_DTYPE_BF16, A, p.intermediate, p.intermediate}
            : Mat{ws.h, SEATRT_DTYPE_F32, A, p.intermediate, p.intermediate};
  d.x_lo_offset = mma ? A * p.intermediate : 0;
  d.x_div = 1;
  d.out = Mat{ws.y, SEATRT_DTYPE_F32, A, p.hidden, p.hidden};
  d.row_weight = p.weights;
  d.groups = g.groups;
  d.vec = p.vec && vec_ok(d.x);
  if (int e = mma ? launch_gemv_mma(st, d, slots, mma_rows) : launch_gemv(st, d, slots, p.tokens)) return e;

  int64_t blocks = ceil_div(p.tokens * p.hidden, 256);
  if (blocks > 1 << 20) blocks = 1 << 20;
  moe_sum_kernel<<<static_cast<unsigned>(blocks), 256, 0, st>>>(ws.y, p.ids, p.top_k, p.num_experts,
                                                                 p.tokens, p.hidden, p.out);
  return last_error();
}

}  // namespace seatrt::cuda
