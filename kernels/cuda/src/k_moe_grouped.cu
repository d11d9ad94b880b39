// Grouped tensor-core MoE for many tokens (prefill).  Four launches:
//  1. one block groups the T*k (token, slot) assignments by expert: counts,
//     prefix sums, the expert-sorted assignment list, and the list of
//     128- or 256-row tiles (expert, first position, rows) of every used expert;
//  2. ONE grouped GEMM over all tiles for gate and up together (each block
//     reads 64 gate and the same 64 up weight rows), act(gate) * up formed in
//     registers, written as BF16 rows in expert-sorted order (h);
//  3. ONE grouped GEMM over the same tiles for down, times the router weight,
//     written as fp32 rows per assignment (y[t*k + j]);
//  4. out[t] = sum over j of y[t*k + j] in slot order: deterministic, no
//     atomics across experts.
// Unused experts cost nothing: no tile is listed for them.
// The two GEMMs run on a wgmma core where it fits (FP4 weights with 16-byte
// rows, K % 64 == 0: all of Gemma-4's shapes): gemm_wgmma_wide.cuh's on
// 256-row tiles where the experts average enough rows, else gemm_wgmma.cuh's
// on 128-row tiles; else on gemm_tc.cuh; moe_core() below says how SEATRT_PREFILL_GEMM /
// SEATRT_PREFILL_MOE pick another core.  (An expand-every-expert-to-BF16
// variant was measured slower end to end and removed: NOTES-prefill.md.)
#include "gemm_wgmma_launch.cuh"
#include "gemm_wgmma_wide.cuh"
#include "prefill.hpp"

namespace seatrt::cuda {
namespace {

constexpr int kGroupThreads = 1024;

__global__ void __launch_bounds__(kGroupThreads)
    moe_tiles_kernel(const int32_t* ids, int64_t assignments, int num_experts, int tile_rows, int32_t* sorted,
                     TcTile* tiles, int32_t* num_tiles) {
  extern __shared__ int32_t sm[];
  int32_t* count = sm;                  // [E]
  int32_t* cursor = sm + num_experts;   // [E]
  // Each pass reads the ids kIdsInFlight at a time per thread: one load
  // latency per batch, not per id.  At the 8k prefill's 65,536 assignments
  // this took the kernel from 107 to 91 us per layer (ncu, 2026-12-04); the
  // rest is the shared-memory atomics of one SM (NOTES-prefill.md run 7).
  constexpr int kIdsInFlight = 8;
  const int64_t batch = int64_t(kIdsInFlight) * blockDim.x;
  auto load_batch = [&](int64_t base, int* e) {
#pragma unroll
    for (int u = 0; u < kIdsInFlight; ++u) {
      const int64_t i = base + int64_t(u) * blockDim.x;
      e[u] = i < assignments ? ids[i] : -1;
    }
  };
  for (int e = threadIdx.x; e < num_experts; e += blockDim.x) count[e] = 0;
  __syncthreads();
  for (int64_t base = threadIdx.x; base < assignments; base += batch) {
    int e[kIdsInFlight];
    load_batch(base, e);
#pragma unroll
    for (int u = 0; u < kIdsInFlight; ++u)
      if (e[u] >= 0 && e[u] < num_experts) atomicAdd(&count[e[u]], 1);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    int32_t run = 0, n = 0;
    for (int e = 0; e < num_experts; ++e) {
      cursor[e] = run;
      for (int32_t r = 0; r < count[e]; r += tile_rows)
        tiles[n++] = TcTile{e, run + r, count[e] - r < tile_rows ? count[e] - r : tile_rows, 0};
      run += count[e];
    }
    *num_tiles = n;
  }
  __syncthreads();
  // The order within an expert depends on the atomics, but every row is
  // computed on its own and written back by assignment id: the result does not.
  for (int64_t base = threadIdx.x; base < assignments; base += batch) {
    int e[kIdsInFlight];
    load_batch(base, e);
#pragma unroll
    for (int u = 0; u < kIdsInFlight; ++u)
      if (e[u] >= 0 && e[u] < num_experts)
        sorted[atomicAdd(&cursor[e[u]], 1)] = static_cast<int32_t>(base + int64_t(u) * blockDim.x);
  }
}

// out[t, c] = sum_j y[t*k + j, c] over the token's valid slots, 4 columns per thread.
__global__ void moe_sum4_kernel(const float* y, const int32_t* ids, int top_k, int num_experts, int64_t tokens,
                                int64_t hidden, Mat out) {
  const int64_t quads = hidden / 4, n = tokens * quads;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = i / quads, c = (i % quads) * 4;
    float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int j = 0; j < top_k; ++j) {
      const int e = ids[t * top_k + j];
      if (e < 0 || e >= num_experts) continue;
      const float4 v = *reinterpret_cast<const float4*>(y + (t * top_k + j) * hidden + c);
      s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
    }
    mat_store(out, t, c, s.x);
    mat_store(out, t, c + 1, s.y);
    mat_store(out, t, c + 2, s.z);
    mat_store(out, t, c + 3, s.w);
  }
}

// Same for a hidden size that is not a multiple of 4.
__global__ void moe_sum1_kernel(const float* y, const int32_t* ids, int top_k, int num_experts, int64_t tokens,
                                int64_t hidden, Mat out) {
  const int64_t n = tokens * hidden;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = i / hidden, c = i % hidden;
    float s = 0.0f;
    for (int j = 0; j < top_k; ++j) {
      const int e = ids[t * top_k + j];
      if (e >= 0 && e < num_experts) s += y[(t * top_k + j) * hidden + c];
    }
    mat_store(out, t, c, s);
  }
}

struct Workspace {
  int32_t* sorted;
  TcTile* tiles;
  int32_t* num_tiles;
  __nv_bfloat16* h;
  float* y;
};

size_t align256(size_t b) { return (b + 255) / 256 * 256; }

// The most row tiles of `tile_rows` rows the grouping kernel can list (the
// workspace holds the most for kTcBM, the smallest tile).
size_t max_tiles(const MoeProblem& p, int tile_rows = kTcBM) {
  const size_t A = static_cast<size_t>(p.tokens) * static_cast<size_t>(p.top_k);
  return (A + tile_rows - 1) / tile_rows + static_cast<size_t>(p.num_experts);
}

// Whether the GEMMs take gemm_wgmma_wide.cuh's 256-row tiles (else
// gemm_wgmma.cuh's 128): SEATRT_PREFILL_MOE_TILE=128 or 256 forces one; by
// default 256 where the experts average at least kWideMinRows rows.  Measured
// (NOTES-prefill.md run 7): the wide tile is faster from 64 rows per expert
// (1,024 tokens, top-8 of 128: -15%) to 512 (8k: -34%), in spite of the
// part-full last tiles; below 64 it was not measured, so 128 stays there.
constexpr int64_t kWideMinRows = 64;
bool moe_wide_tiles(const MoeProblem& p) {
  static const int forced = [] {
    const char* v = std::getenv("SEATRT_PREFILL_MOE_TILE");
    return v ? std::atoi(v) : 0;
  }();
  if (wgmma_variant() != WgmmaVariant::Wide || forced == 128) return false;
  return forced == 256 || p.tokens * p.top_k >= kWideMinRows * p.num_experts;
}

// Grouped MoE gate/up (p.mode MoeGateUp) or down (MoeDown) on
// gemm_wgmma_wide.cuh's 256-row tiles, over up to `max_tiles` row tiles
// (blocks past *p.num_tiles return).  Here, not in the header: only this
// file instantiates the MoE modes of the wide kernel.
int launch_gemm_wgmma_wide_moe(cudaStream_t st, const TcParams& p, unsigned max_tiles) {
  if (p.mode == TcMode::MoeGateUp)
    return launch_gemm_wgmma_wide_grid<int(TcMode::MoeGateUp)>(
        st, dim3(static_cast<unsigned>(ceil_div(p.n, wgw::kBN / 2)), max_tiles), p);
  return launch_gemm_wgmma_wide_grid<int(TcMode::MoeDown)>(
      st, dim3(static_cast<unsigned>(ceil_div(p.n, wgw::kBN)), max_tiles), p);
}

Workspace carve(const MoeProblem& p, void* base) {
  const size_t A = static_cast<size_t>(p.tokens) * static_cast<size_t>(p.top_k);
  char* c = static_cast<char*>(base);
  Workspace w{};
  w.sorted = reinterpret_cast<int32_t*>(c); c += align256(sizeof(int32_t) * A);
  w.tiles = reinterpret_cast<TcTile*>(c); c += align256(sizeof(TcTile) * max_tiles(p));
  w.num_tiles = reinterpret_cast<int32_t*>(c); c += 256;
  w.h = reinterpret_cast<__nv_bfloat16*>(c); c += align256(2 * A * static_cast<size_t>(p.intermediate));
  w.y = reinterpret_cast<float*>(c);
  return w;
}

// Which core the MoE's GEMMs take: mma_choice() (SEATRT_PREFILL_GEMM: wgmma
// by default, "tc" the old core, "mma*" the mma.sync core), except that
// SEATRT_PREFILL_MOE=tc keeps the MoE alone on gemm_tc.cuh (the linear's
// core unchanged: the state before run 5, for comparisons and as a way back).
MmaChoice moe_core() {
  static const MmaChoice c = [] {
    const char* v = std::getenv("SEATRT_PREFILL_MOE");
    if (v && std::strcmp(v, "tc") == 0) return MmaChoice::OldCore;
    return mma_choice();
  }();
  return c;
}

}  // namespace

bool moe_fast_weights(const WeightRef* host_refs, size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (!tc_fast(host_refs[i])) return false;
  return true;
}

size_t moe_grouped_workspace_bytes(const MoeProblem& p) {
  const size_t A = static_cast<size_t>(p.tokens) * static_cast<size_t>(p.top_k);
  return align256(sizeof(int32_t) * A) + align256(sizeof(TcTile) * max_tiles(p)) + 256 +
         align256(2 * A * static_cast<size_t>(p.intermediate)) + align256(4 * A * static_cast<size_t>(p.hidden));
}

int launch_moe_grouped(Stream s, const MoeProblem& p, void* workspace, bool fast_weights) {
  if (p.tokens == 0) return 0;
  cudaStream_t st = cudaStream_t(s);
  const Workspace ws = carve(p, workspace);
  const int64_t A = p.tokens * p.top_k;
  const bool x_vec = (reinterpret_cast<uintptr_t>(p.x.data) % 16) == 0 && (p.x.row_stride * 2) % 16 == 0;
  const bool down_x_vec = (p.intermediate * 2) % 16 == 0;
  const bool fast = fast_weights && p.vec && x_vec && p.hidden % 32 == 0 && p.intermediate % 32 == 0;
  // Each GEMM decides on its own where the core fits (gate/up's K is H,
  // down's is I).  Device run 3: the mma.sync core was 15% slower here.
  const MmaChoice core = moe_core();
  const bool wg_on = core == MmaChoice::Wgmma;
  const bool mma_on = core != MmaChoice::OldCore && !wg_on;
  const bool fits_gu = mma_fits(fast_weights, x_vec, p.vec, p.hidden);
  const bool fits_d = mma_fits(fast_weights, down_x_vec, p.vec, p.intermediate);
  // 256-row tiles only where both GEMMs take the wide core (the other cores
  // take at most kTcBM rows per tile).
  const bool wide = wg_on && fits_gu && fits_d && moe_wide_tiles(p);
  const int tile_rows = wide ? wgw::kBM : kTcBM;
  moe_tiles_kernel<<<1, kGroupThreads, sizeof(int32_t) * 2 * size_t(p.num_experts), st>>>(
      p.ids, A, p.num_experts, tile_rows, ws.sorted, ws.tiles, ws.num_tiles);
  if (int e = last_error()) return e;
  const unsigned tiles = static_cast<unsigned>(max_tiles(p, tile_rows));

  TcParams g;
  g.mode = TcMode::MoeGateUp;
  g.table = p.gate;
  g.table_up = p.up;
  g.n = p.intermediate;
  g.k = p.hidden;
  g.x = p.x;
  g.out = Mat{ws.h, SEATRT_DTYPE_BF16, A, p.intermediate, p.intermediate};
  g.tiles = ws.tiles;
  g.num_tiles = ws.num_tiles;
  g.sorted = ws.sorted;
  g.x_div = p.top_k;
  g.act = p.activation;
  g.x_vec = x_vec;
  g.w_vec = p.vec;
  const dim3 grid_gu(static_cast<unsigned>(ceil_div(p.intermediate, kTcBN / 2)), tiles);
  if (int e = wide                ? launch_gemm_wgmma_wide_moe(st, g, tiles)
              : wg_on && fits_gu  ? launch_gemm_wgmma_moe(st, g, tiles)
              : mma_on && fits_gu ? launch_gemm_mma<kMmaMoeWM, kMmaMoeWN, kMmaMoeStages, true>(st, grid_gu, g)
              : fast              ? launch_gemm_tc<true, true>(st, grid_gu, g)
                                  : launch_gemm_tc<true, false>(st, grid_gu, g))
    return e;

  TcParams d;
  d.mode = TcMode::MoeDown;
  d.table = p.down;
  d.n = p.hidden;
  d.k = p.intermediate;
  d.x = g.out;
  d.out = Mat{ws.y, SEATRT_DTYPE_F32, A, p.hidden, p.hidden};
  d.tiles = ws.tiles;
  d.num_tiles = ws.num_tiles;
  d.sorted = ws.sorted;
  d.row_weight = p.weights;
  d.x_vec = down_x_vec;
  d.w_vec = p.vec;
  const dim3 grid_d(static_cast<unsigned>(ceil_div(p.hidden, kTcBN)), tiles);
  if (int e = wide               ? launch_gemm_wgmma_wide_moe(st, d, tiles)
              : wg_on && fits_d  ? launch_gemm_wgmma_moe(st, d, tiles)
              : mma_on && fits_d ? launch_gemm_mma<kMmaMoeWM, kMmaMoeWN, kMmaMoeStages, false>(st, grid_d, d)
              : fast             ? launch_gemm_tc<false, true>(st, grid_d, d)
                                 : launch_gemm_tc<false, false>(st, grid_d, d))
    return e;

  const bool quads = p.hidden % 4 == 0;
  int64_t blocks = ceil_div(p.tokens * (quads ? p.hidden / 4 : p.hidden), 256);
  if (blocks > 1 << 20) blocks = 1 << 20;
  if (quads)
    moe_sum4_kernel<<<static_cast<unsigned>(blocks), 256, 0, st>>>(ws.y, p.ids, p.top_k, p.num_experts, p.tokens,
                                                                   p.hidden, p.out);
  else
    moe_sum1_kernel<<<static_cast<unsigned>(blocks), 256, 0, st>>>(ws.y, p.ids, p.top_k, p.num_experts, p.tokens,
                                                                   p.hidden, p.out);
  return last_error();
}

}  // namespace seatrt::cuda
