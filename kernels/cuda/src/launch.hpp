// The boundary between the host side of the CUDA provider (argument checks,
// compiled by the host compiler with the project's warnings) and the kernels
// (compiled by nvcc).  Only plain structs and launcher declarations: every
// launcher enqueues work on `stream` and returns the launch's cudaError_t
// (as int, so this header needs no CUDA include).
#pragma once

#include <cstddef>
#include <cstdint>

namespace seatrt::cuda {

using Stream = void*;  // cudaStream_t

// A 2-D view: rows x cols elements, the last axis contiguous, rows
// `row_stride` elements apart.  dtype is a seatrt_dtype.
struct Mat {
  void* data = nullptr;
  int32_t dtype = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t row_stride = 0;
};

// An optional per-column gain: data NULL = none.
struct Gain {
  const void* data = nullptr;
  int32_t dtype = 0;
};

// A 3-D view [d0, d1, d2] with the last axis contiguous.
struct View3 {
  void* data = nullptr;
  int32_t dtype = 0;
  int64_t d0 = 0, d1 = 0, d2 = 0;
  int64_t s0 = 0, s1 = 0;  // strides of axes 0 and 1, in elements
};

// How the kernels read one Linear's weight.
enum class WeightKind : int32_t {
  Fp4E4m3Scales = 0,  // E2M1X2 data, E4M3 group scales (CT row-major)
  Fp4Bf16Scales = 1,  // E2M1X2 data, BF16 group scales (SM90_TILED, see README)
  DenseBf16 = 2,
  DenseF16 = 3,
  DenseF32 = 4,
};

struct WeightRef {
  const void* data = nullptr;
  const void* scales = nullptr;
  float global_divisor = 1.0f;  // w = fp4 * scale / global_divisor
  int32_t kind = 0;             // WeightKind
  int64_t data_row_bytes = 0;   // bytes between rows of data
  int64_t scale_row_elems = 0;  // elements between rows of scales
};

// y[out_row(a)] = W x[a / x_div] for the rows of the assignments of a group.
// Plain linear: one group holding rows 0..M-1.
struct GemvProblem {
  int64_t n = 0;  // output features
  int64_t k = 0;  // input features
  Mat x;          // [rows, k]
  Mat out;        // [rows', n]
  // Optional scratch of at least x_planes_bytes(x) bytes: decode-shaped F32
  // x that the kernel does not stage itself is split there once into three
  // exact BF16 planes (k_linear.cu).
  void* x_planes = nullptr;
  // Optional scratch of at least linear_tc_expand_bytes(w, n, k) bytes: the
  // prefill linear expands an NVFP4 weight there once into BF16
  // (gemm_bf16w.cuh); without it the weight is decoded in the GEMM's loop.
  void* w_bf16 = nullptr;
  // Optional scratch of at least plane_out_bytes(x.rows, n) bytes, with
  // x_planes: a dense BF16 weight at decode rows of F32 x runs on the
  // prefill GEMM core over x's planes stacked as rows, into F32 partials
  // summed afterwards ([kernels.options] lm_head_gemm, k_linear.cu).
  void* plane_out = nullptr;
};

// Bytes of the three BF16 planes of an F32 [rows, cols] activation.
size_t x_planes_bytes(const Mat& x);
// Bytes of the F32 partial products of up to three planes of `rows` rows.
size_t plane_out_bytes(int64_t rows, int64_t n);

int launch_linear(Stream s, const WeightRef& w, const GemvProblem& p);
// The fused linears on the decode kernels: several NVFP4 Linears of one x in one
// launch (outs[i]: [rows, out_features_i]; p.n and p.out unused), and a
// gate/up pair with act(gate) * up formed in the kernel's epilogue (p.n =
// out_features of each, p.out the product).  They return kNotFused, having
// enqueued nothing, for shapes or formats they do not cover (more than 64
// rows, dense weights, unaligned data); the caller then runs single ops.
constexpr int kNotFused = -1;
int launch_linear_multi(Stream s, int count, const WeightRef* w, const Mat* outs, const GemvProblem& p);
int launch_linear_glu(Stream s, const WeightRef& gate, const WeightRef& up, int activation, const GemvProblem& p);
// Dense BF16 weights with at most kDenseSmallNMaxFeatures outputs and at most
// kDenseSmallNMaxRows activation rows (the MoE router at decode): one block
// per output feature (k_dense_small_n.cu).  launch_linear picks it when
// dense_small_n_fits says the shapes and alignment allow it.
constexpr int64_t kDenseSmallNMaxFeatures = 1024;
constexpr int64_t kDenseSmallNMaxRows = 64;
bool dense_small_n_fits(const WeightRef& w, const GemvProblem& p);
int launch_dense_small_n(Stream s, const WeightRef& w, const GemvProblem& p);
// The tensor-core path launch_linear takes for BF16 activations with more
// than 64 rows.
int launch_linear_tc(Stream s, const WeightRef& w, const GemvProblem& p, bool vec);
// Scratch bytes launch_linear_tc can use for `w` (n x k) through
// GemvProblem::w_bf16: the size of its BF16 expansion where the decode-free
// GEMM takes the weight, else 0 (SEATRT_PREFILL_LINEAR=decode: always 0).
size_t linear_tc_expand_bytes(const WeightRef& w, int64_t n, int64_t k);
// linear_glu at tensor-core rows (BF16 x) in one GEMM with act(gate) * up in
// its epilogue (gemm_bf16w.cuh), both weights FP4 and expanded into p.w_bf16
// (2 * linear_tc_expand_bytes(gate, p.n, p.k) bytes); kNotFused, having
// enqueued nothing, where it does not fit.
int launch_linear_glu_tc(Stream s, const WeightRef& gate, const WeightRef& up, int activation, const GemvProblem& p);

int launch_elementwise(Stream s, int op, const Mat& a, const Mat& b, float alpha, const Mat& out);
int launch_embedding(Stream s, const int32_t* ids, int64_t count, const Mat& table, float scale,
                     const Mat& out);
int launch_rms_norm(Stream s, const Mat& x, const void* weight, int32_t weight_dtype, float eps,
                    const Mat& out);
int launch_glu(Stream s, int activation, const Mat& gate, const Mat& up, const Mat& out);
int launch_rope(Stream s, const View3& x, const int32_t* positions, const float* inv_freq,
                const View3& out);
int launch_gather_rows(Stream s, const Mat& x, const int32_t* index, const Mat& out);

struct KvStoreProblem {
  View3 k, v;  // v.data null: one tensor
  const int64_t* slots = nullptr;
  void* k_cache = nullptr;
  void* v_cache = nullptr;
  int32_t cache_dtype = 0;
  int64_t num_slots = 0;  // num_blocks * block_size
  float k_scale = 1.0f, v_scale = 1.0f;
};
int launch_kv_store(Stream s, const KvStoreProblem& p);

struct AttentionProblem {
  View3 q;    // [T, q_heads, D]
  View3 out;  // [T, q_heads, D]
  const void* k_cache = nullptr;
  const void* v_cache = nullptr;  // == k_cache for one-tensor layers
  int32_t cache_dtype = 0;
  int32_t block_size = 0;
  int32_t kv_heads = 0;
  int64_t num_blocks = 0;
  float k_scale = 1.0f, v_scale = 1.0f;
  const int32_t* query_start = nullptr;
  const int32_t* seq_lens = nullptr;
  const int32_t* block_tables = nullptr;
  int64_t block_table_stride = 0;
  int64_t max_blocks_per_seq = 0;
  int32_t num_seqs = 0;
  int32_t window = 0;
  float scale = 1.0f;
  float softcap = 0.0f;
};
// Splits of each row's key range (flash-decoding) for these shapes, the
// scratch they need, and the launch (workspace may be null with one split).
int attention_splits(const AttentionProblem& p, int32_t max_seq_len);
size_t attention_workspace_bytes(const AttentionProblem& p, int splits);
int launch_attention(Stream s, const AttentionProblem& p, int splits, float* workspace);

int launch_router_topk(Stream s, const Mat& logits, int32_t top_k, bool renormalize,
                       const void* per_expert_scale, int32_t scale_dtype, int32_t* ids,
                       float* weights);

// Mixture of experts.  The three weight tables live in device memory (one
// WeightRef per expert).  `workspace` must hold moe_workspace_bytes().
struct MoeProblem {
  int32_t activation = 0;
  int32_t num_experts = 0;
  int32_t top_k = 0;
  int64_t tokens = 0;
  int64_t hidden = 0;        // H
  int64_t intermediate = 0;  // I
  Mat x;                     // [T, H]
  const int32_t* ids = nullptr;
  const float* weights = nullptr;
  const WeightRef* gate = nullptr;
  const WeightRef* up = nullptr;
  const WeightRef* down = nullptr;
  bool vec = false;  // every expert weight allows 16-byte loads (checked by the caller)
  Mat out;  // [T, H]
};
size_t moe_workspace_bytes(const MoeProblem& p);
int launch_moe(Stream s, const MoeProblem& p, void* workspace);

// Sampling statistics of one row on the device (greedy fast path).
struct RowStats {
  int32_t argmax;
  int32_t non_finite;
  float max_logit;
  float log_sum_exp;  // log(sum(exp(l - max))) + max
};
int launch_row_stats(Stream s, const float* logits, int64_t rows, int64_t vocab, int64_t row_stride,
                     RowStats* out);

}  // namespace seatrt::cuda
