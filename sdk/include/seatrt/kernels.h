/* seatrt plugin ABI: the kernel-provider table.
 *
 * A kernel provider runs the numeric operations of a model on one kind of
 * device (kernels/cpu: portable fp32 reference; kernels/cuda: Hopper).  The
 * architecture plugin calls these operations; it never touches a device API
 * itself, so the same architecture runs on every provider.
 *
 * Rules for every operation slot:
 * - A NULL slot means "not provided".  The host may then route that one
 *   operation to a fallback provider (the CPU provider) and stage the
 *   tensors between devices; the architecture plugin sees a table with the
 *   slot filled (the host's dispatch table).
 * - Arguments come in an args struct that starts with struct_size, so an
 *   operation can gain parameters in a minor release.  Tensors and args are
 *   read during the call only; tensor memory is owned by the caller and must
 *   stay valid until the work enqueued on `stream` has completed.
 * - Operations are asynchronous on devices with streams: a slot returns once
 *   the work is enqueued; argument errors are returned at once, execution
 *   errors at the next stream_sync.  On the CPU provider they complete
 *   before returning.
 * - Threading: a context may be used from several threads at once as long
 *   as no two threads use the same stream at the same time.
 * - Unless an operation says otherwise: dtypes F32 and BF16 are accepted for
 *   activations, math is done in fp32, outputs may alias inputs only where
 *   stated.
 */
#ifndef SEATRT_KERNELS_H
#define SEATRT_KERNELS_H

#include "seatrt/abi.h"
#include "seatrt/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct seatrt_kernel_context seatrt_kernel_context; /* opaque, provider-owned */
typedef struct seatrt_graph seatrt_graph;                   /* opaque, provider-owned */

/* --------------------------------------------------------------- weights */

/* Weight formats a Linear can have (what the checkpoint holds). */
typedef enum seatrt_weight_format {
  SEATRT_WFMT_DENSE = 0, /* a plain [out, in] matrix (BF16, F16 or F32) */
  SEATRT_WFMT_NVFP4 = 1  /* E2M1 values, one E4M3 scale per group of 16 along `in`,
                            one F32 global scale: w = fp4 * scale / global_scale */
} seatrt_weight_format;

/* Memory layouts of a format.  The provider says which it reads
 * (weight_layouts); the quantization plugin writes one of them.  Ids below
 * 0x10000 are defined here; a provider may define private ids above it,
 * with a quantization plugin that knows them. */
typedef enum seatrt_weight_layout {
  /* DENSE: row-major [out, in] in data. */
  SEATRT_LAYOUT_DENSE_ROW_MAJOR = 1,
  /* NVFP4 as compressed-tensors stores it: data E2M1X2 [out, in/2] (low
   * nibble = even column), scales F8_E4M3 [out, in/16], global_scale F32. */
  SEATRT_LAYOUT_NVFP4_CT_ROW_MAJOR = 2,
  /* NVFP4 for the Hopper provider: see kernels/cuda/README.md.  data and
   * scales are tile-interleaved; global scale folded into the scales as
   * `scale_f32 = e4m3 * (1/global)` stored as BF16 per group. */
  SEATRT_LAYOUT_NVFP4_SM90_TILED = 3
} seatrt_weight_layout;

/* A Linear's weight (y = x * W^T) on the provider's device. */
typedef struct seatrt_linear_weight {
  uint32_t struct_size;
  int32_t format;        /* seatrt_weight_format */
  int32_t layout;        /* seatrt_weight_layout or a provider-private id */
  int32_t group_size;    /* NVFP4: 16; DENSE: 0 */
  int64_t out_features;
  int64_t in_features;
  seatrt_tensor data;    /* values, in `layout` */
  seatrt_tensor scales;  /* NVFP4: group scales in `layout`; DENSE: unused (data NULL) */
  float global_scale;    /* NVFP4: the divisor; 1.0 when folded into scales */
  float reserved0;
  /* Set by prepare_weight (NULL before); owned by the provider, released by
   * release_weight. */
  void* provider_data;
} seatrt_linear_weight;

/* ------------------------------------------------------------ op arguments */

typedef enum seatrt_activation {
  SEATRT_ACT_GELU_TANH = 0, /* 0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))) */
  SEATRT_ACT_SILU = 1,
  SEATRT_ACT_GELU_ERF = 2
} seatrt_activation;

typedef enum seatrt_elementwise_op {
  SEATRT_EW_ADD = 0,        /* out = a + b            (b broadcast over leading dims) */
  SEATRT_EW_MUL = 1,        /* out = a * b            (b broadcast over leading dims) */
  SEATRT_EW_SCALE = 2,      /* out = a * alpha        (b unused) */
  SEATRT_EW_SOFTCAP = 3,    /* out = alpha * tanh(a / alpha) */
  SEATRT_EW_COPY = 4        /* out = a, converting dtype (b unused) */
} seatrt_elementwise_op;

typedef struct seatrt_elementwise_args {
  uint32_t struct_size;
  int32_t op;               /* seatrt_elementwise_op */
  const seatrt_tensor* a;
  const seatrt_tensor* b;   /* may be NULL where the op says unused */
  float alpha;
  seatrt_tensor* out;       /* may alias a */
} seatrt_elementwise_args;

typedef struct seatrt_embedding_args {
  uint32_t struct_size;
  const seatrt_tensor* ids;   /* I32 [T] */
  const seatrt_tensor* table; /* [V, H], BF16/F16/F32 */
  float scale;                /* multiplies every looked-up row */
  seatrt_tensor* out;         /* [T, H] */
} seatrt_embedding_args;

/* RMSNorm over the last axis: out = x * (mean(x^2) + eps)^-1/2 * weight.
 * weight NULL = no gain (weightless norm).  Leading axes are rows. */
typedef struct seatrt_rms_norm_args {
  uint32_t struct_size;
  const seatrt_tensor* x;
  const seatrt_tensor* weight; /* [N] or NULL */
  float eps;
  seatrt_tensor* out;          /* may alias x */
} seatrt_rms_norm_args;

/* out [M, N] = x [M, K] * W^T. */
typedef struct seatrt_linear_args {
  uint32_t struct_size;
  const seatrt_tensor* x;
  const seatrt_linear_weight* weight;
  seatrt_tensor* out;
} seatrt_linear_args;

/* out = act(gate) * up, elementwise; gate/up may be strided views of one
 * fused [M, 2I] tensor. */
typedef struct seatrt_glu_args {
  uint32_t struct_size;
  int32_t activation;  /* seatrt_activation */
  const seatrt_tensor* gate;
  const seatrt_tensor* up;
  seatrt_tensor* out;
} seatrt_glu_args;

/* Rotary embedding, NeoX half-split pairing (i, i + D/2) over the whole head
 * dim D.  inv_freq has D/2 entries; a zero frequency leaves its pair
 * unrotated (this is how partial/proportional RoPE is expressed).  x is
 * [T, heads, D]; positions I32 [T].  out may alias x. */
typedef struct seatrt_rope_args {
  uint32_t struct_size;
  const seatrt_tensor* x;
  const seatrt_tensor* positions;
  const seatrt_tensor* inv_freq; /* F32 [D/2] */
  seatrt_tensor* out;
} seatrt_rope_args;

/* The paged KV cache of ONE layer.  Blocks of `block_size` tokens; the host
 * allocates them from one pool and hands out block tables.  k_cache and
 * v_cache are [num_blocks, block_size, kv_heads, head_dim] in the cache dtype
 * (BF16, F32 or F8_E4M3).  v_cache.data NULL means the layer stores one
 * tensor for both (the architecture declared K and V rebuildable from it). */
typedef struct seatrt_kv_layer {
  uint32_t struct_size;
  int32_t block_size;
  int32_t reserved0;
  seatrt_tensor k_cache;
  seatrt_tensor v_cache;
  float k_scale;  /* F8 caches: stored = value / scale; 1.0 otherwise */
  float v_scale;
} seatrt_kv_layer;

/* Writes k, v ([T, kv_heads, head_dim]) of T new tokens into the cache at
 * slot_mapping[t] = block * block_size + offset (I64 [T]; -1 skips). */
typedef struct seatrt_kv_store_args {
  uint32_t struct_size;
  const seatrt_tensor* k;
  const seatrt_tensor* v;        /* NULL when the layer stores one tensor */
  const seatrt_tensor* slot_mapping;
  seatrt_kv_layer* cache;
} seatrt_kv_store_args;

/* Attention of a batch of sequences over the paged cache (the new tokens'
 * K/V must already be stored).  Sequence s owns query rows
 * [query_start[s], query_start[s+1]) whose positions are
 * seq_lens[s] - n_s .. seq_lens[s] - 1 (n_s = its row count); it attends to
 * cached positions j <= its own position and, when window > 0, j > position
 * - window.  scores = scale * q.k (no softcap unless softcap > 0). */
typedef struct seatrt_attention_args {
  uint32_t struct_size;
  const seatrt_tensor* q;            /* [T, q_heads, head_dim] */
  const seatrt_kv_layer* cache;
  const seatrt_tensor* query_start;  /* I32 [S + 1], on the provider's device */
  const seatrt_tensor* seq_lens;     /* I32 [S] */
  const seatrt_tensor* block_tables; /* I32 [S, max_blocks_per_seq] */
  int32_t num_seqs;
  int32_t max_query_len;             /* hints for launch shapes */
  int32_t max_seq_len;
  int32_t window;                    /* 0 = full attention */
  float scale;
  float softcap;
  seatrt_tensor* out;                /* [T, q_heads, head_dim] */
} seatrt_attention_args;

/* Router: softmax (fp32) over all E logits per row, top-k, optional
 * renormalisation of the k weights to sum 1, then optional multiplication by
 * per_expert_scale[id].  Ties go to the lower expert id. */
typedef struct seatrt_router_topk_args {
  uint32_t struct_size;
  const seatrt_tensor* logits;           /* [T, E] */
  int32_t top_k;
  int32_t renormalize;                   /* bool */
  const seatrt_tensor* per_expert_scale; /* [E] or NULL */
  seatrt_tensor* ids;                    /* I32 [T, k], in descending weight order */
  seatrt_tensor* weights;                /* F32 [T, k] */
} seatrt_router_topk_args;

/* Mixture of experts: out[t] = sum_j weights[t,j] * down_e(act(gate_e(x_t)) *
 * up_e(x_t)) with e = ids[t, j].  Each expert array has num_experts entries. */
typedef struct seatrt_moe_args {
  uint32_t struct_size;
  int32_t activation; /* seatrt_activation */
  int32_t num_experts;
  const seatrt_tensor* x;       /* [T, H] */
  const seatrt_tensor* ids;     /* I32 [T, k] */
  const seatrt_tensor* weights; /* F32 [T, k] */
  const seatrt_linear_weight* gate; /* [I, H] each */
  const seatrt_linear_weight* up;   /* [I, H] each */
  const seatrt_linear_weight* down; /* [H, I] each */
  seatrt_tensor* out;           /* [T, H] */
} seatrt_moe_args;

/* Copies rows: out[i] = x[index[i]] (index I32 [n]). */
typedef struct seatrt_gather_rows_args {
  uint32_t struct_size;
  const seatrt_tensor* x;
  const seatrt_tensor* index;
  seatrt_tensor* out;
} seatrt_gather_rows_args;

/* Per-row sampling parameters.  Pointers are host memory, read during the
 * call.  Penalties follow the OpenAI / vLLM definitions: presence and
 * frequency over output tokens, repetition over prompt and output tokens. */
typedef struct seatrt_sampling_row {
  uint32_t struct_size;
  float temperature;          /* 0 = greedy (argmax, lowest id on ties) */
  float top_p;                /* 1 = off */
  int32_t top_k;              /* 0 = off */
  float min_p;                /* 0 = off */
  float presence_penalty;
  float frequency_penalty;
  float repetition_penalty;   /* 1 = off */
  uint64_t seed;              /* with `step`, fully determines the draw */
  uint64_t step;
  const int32_t* prompt_tokens;
  int64_t num_prompt_tokens;
  const int32_t* output_tokens;
  int64_t num_output_tokens;
  /* Allowed-token bitmask from a constraining parser (bit i of word i/32),
   * or NULL for no constraint. */
  const uint32_t* allowed_mask;
  int64_t allowed_mask_words;
  /* ---- ABI 1.7: additive logit bias (OpenAI `logit_bias`).  Before the
   * penalties: z[bias_ids[i]] = raw + bias_values[i] (one IEEE float add),
   * then repetition/frequency/presence as above on the biased value.  The
   * ids are distinct, ascending and inside the vocabulary; the values are
   * finite.  Logprobs stay those of the RAW logits.  A row filled by a 1.6
   * caller ends before these fields (struct_size): no bias.  The host fills
   * them only for a provider whose table sets SEATRT_SAMPLE_LOGIT_BIAS in
   * sample_features; host memory, read during the call only. */
  const int32_t* bias_ids;
  const float* bias_values;
  int64_t num_bias;
} seatrt_sampling_row;

/* seatrt_kernel_api.sample_features bits (ABI 1.7). */
#define SEATRT_SAMPLE_LOGIT_BIAS 0x1ull

/* Samples one token per row of logits [B, V] (F32).  Outputs are HOST
 * memory of the caller: token[B]; logprob[B] = log-softmax of the RAW logits
 * (before penalties, temperature and masks) at the chosen token;
 * top_ids/top_logprobs [B, num_top] likewise from the raw logits, descending;
 * non_finite[B] = 1 if that row's raw logits held a NaN or infinity (the
 * token is then -1 and the row must not be used). */
typedef struct seatrt_sample_args {
  uint32_t struct_size;
  const seatrt_tensor* logits;
  const seatrt_sampling_row* rows; /* [B] */
  int32_t num_top;                 /* 0..20 */
  int32_t reserved0;
  int32_t* token;
  float* logprob;
  int32_t* top_ids;
  float* top_logprobs;
  int32_t* non_finite;
} seatrt_sample_args;

/* Weights to bring closer to the compute units ahead of their use (ABI 1.6
 * prefetch_weights): `count` entries of `weights`, prepared by this
 * provider. */
typedef struct seatrt_prefetch_weights_args {
  uint32_t struct_size;
  int32_t count;
  const seatrt_linear_weight* const* weights; /* [count] */
} seatrt_prefetch_weights_args;

/* ---------------------------------------------- fused norms (ABI 1.1) */

/* Residual update with a normed branch, then optionally the norm of the
 * updated residual (the norm/add/scale chains between a transformer's
 * sublayers in one operation).  Per row, with rmsnorm(v) = v * (mean(v^2) +
 * eps)^-1/2 exactly as rms_norm computes it (plain weight, no "1 + w"):
 *   residual <- (residual + rmsnorm(x) * x_weight) * residual_scale
 *   out      <- rmsnorm(residual) * out_weight        (only if out != NULL)
 * in fp32, in this order (the same arithmetic as rms_norm, elementwise ADD,
 * elementwise SCALE, rms_norm in sequence; residual_scale == 1 is an exact
 * no-op).  The second norm reads the residual as stored (rounded to its
 * dtype).  A NULL weight = no gain.  x, residual and out have one shape
 * ([rows, N], leading axes are rows); weights are [N].  Dtypes: those of
 * rms_norm (the activation dtypes).
 * Aliasing: out may alias x (x is read completely before out is written);
 * residual must not alias x or out; weights must not alias anything written.
 * Tensors are read/written during the call (on `stream`); nothing is kept. */
typedef struct seatrt_add_rms_norm_args {
  uint32_t struct_size;
  const seatrt_tensor* x;          /* the branch: [rows, N] */
  const seatrt_tensor* x_weight;   /* [N] or NULL */
  seatrt_tensor* residual;         /* [rows, N], read and written in place */
  float eps;                       /* both norms, finite and >= 0 */
  float residual_scale;            /* multiplies the updated residual; 1 = none */
  const seatrt_tensor* out_weight; /* [N] or NULL; ignored when out is NULL */
  seatrt_tensor* out;              /* [rows, N] or NULL (skip the second norm) */
} seatrt_add_rms_norm_args;

/* RMSNorm of each head row, then rotary embedding: per (token, head),
 *   out <- rope(rmsnorm(x) * weight, positions[token], inv_freq)
 * with rmsnorm exactly as rms_norm (over the head dim D, plain weight [D] or
 * NULL) and rope exactly as the rope op (NeoX half-split pairs (i, i + D/2),
 * angle = position * inv_freq[i] in fp32, a zero frequency leaves its pair
 * unrotated).  The normed value is kept in fp32 between the two steps (no
 * rounding to out's dtype in between; for F32 out this equals rms_norm then
 * rope).  x, out [T, heads, D] (D even); positions I32 [T]; inv_freq F32
 * [D/2].  Dtypes: those of rms_norm.  out may alias x; nothing else may
 * alias. */
typedef struct seatrt_rms_norm_rope_args {
  uint32_t struct_size;
  const seatrt_tensor* x;
  const seatrt_tensor* weight;    /* [D] or NULL */
  float eps;
  int32_t reserved0;
  const seatrt_tensor* positions;
  const seatrt_tensor* inv_freq;  /* F32 [D/2] */
  seatrt_tensor* out;
} seatrt_rms_norm_rope_args;

/* ------------------------------------- fused linears and norms (ABI 1.2) */

#define SEATRT_FUSED_MAX 4 /* most weights / gains one fused call takes */

/* Several Linears of one input: out_i = x * W_i^T for i < count, exactly as
 * `count` linear calls in order would compute them.  A provider may read or
 * convert x once and launch once (the q/k/v projections; gate and up).
 * x [M, K]; weights[i] with in_features K; outs[i] [M, out_features_i].
 * Aliasing: no out may alias x or another out.  Entries past count are
 * ignored.  Tensors are read/written during the call (on `stream`). */
typedef struct seatrt_linear_multi_args {
  uint32_t struct_size;
  int32_t count; /* 1..SEATRT_FUSED_MAX */
  const seatrt_tensor* x;
  const seatrt_linear_weight* weights[SEATRT_FUSED_MAX];
  seatrt_tensor* outs[SEATRT_FUSED_MAX];
} seatrt_linear_multi_args;

/* A gated MLP's first half in one operation:
 *   out = act(x * gate^T) * (x * up^T)
 * with both products kept in fp32 and the activation and product exactly as
 * glu computes them (for an F32 out this equals linear, linear, glu).
 * x [M, K]; gate and up with in_features K and the same out_features I; out
 * [M, I], which must not alias x. */
typedef struct seatrt_linear_glu_args {
  uint32_t struct_size;
  int32_t activation; /* seatrt_activation */
  const seatrt_tensor* x;
  const seatrt_linear_weight* gate;
  const seatrt_linear_weight* up;
  seatrt_tensor* out;
} seatrt_linear_glu_args;

/* RMSNorms of one input with several gains: per row,
 *   outs[i] = rmsnorm(x) * weights[i]     (i < count)
 * with rmsnorm exactly as rms_norm computes it (one mean of squares per row
 * shared by every output).  x and every out have one shape (leading axes
 * are rows), weights are [N] or NULL (no gain).  Aliasing: no out may alias
 * x or another out. */
typedef struct seatrt_rms_norm_multi_args {
  uint32_t struct_size;
  int32_t count; /* 1..SEATRT_FUSED_MAX */
  const seatrt_tensor* x;
  float eps;
  int32_t reserved0;
  const seatrt_tensor* weights[SEATRT_FUSED_MAX];
  seatrt_tensor* outs[SEATRT_FUSED_MAX];
} seatrt_rms_norm_multi_args;

/* ------------------------------- fused attention input and MoE end (ABI 1.4) */

/* The per-head work between a layer's q/k/v projections and its attention,
 * in one operation.  Per token t (positions[t]) and head:
 *   q[t, h]  <- rope(rmsnorm(q[t, h]) * q_weight)          (h < q_heads, in place)
 *   k'[t, h]  = rope(rmsnorm(k[t, h]) * k_weight)          (h < kv_heads)
 *   v'[t, h]  = rmsnorm(vs[t, h]) * v_weight               vs = v, or the raw k
 *                                                          (before its norm) when v is NULL
 *   cache at slot_mapping[t] <- k', v'                     (v' only when the cache
 *                                                          has a v_cache)
 * with rmsnorm and rope exactly as rms_norm_rope computes them (over the
 * head dim D; k' and v' kept in fp32, then stored exactly as kv_store
 * stores F32 values: for F32 q, k and v this equals rms_norm_rope(q),
 * rms_norm(v or k), rms_norm_rope(k), kv_store in sequence).  q [T, q_heads,
 * D]; k, v [T, kv_heads, D] (D even), one dtype (an activation dtype); k and
 * v are only read.  positions I32 [T]; inv_freq F32 [D/2]; slot_mapping I64
 * [T] as kv_store (-1 skips the token's store, q is still written).  A
 * cache without a v_cache (one tensor) takes v NULL, as kv_store.
 * Aliasing: q must not alias k, v or the cache.  Tensors are read/written
 * during the call (on `stream`); nothing is kept. */
typedef struct seatrt_qkv_norm_rope_store_args {
  uint32_t struct_size;
  float eps;                         /* all three norms, finite and >= 0 */
  seatrt_tensor* q;                  /* [T, q_heads, D], read and written */
  const seatrt_tensor* k;            /* [T, kv_heads, D] */
  const seatrt_tensor* v;            /* [T, kv_heads, D] or NULL (v from the raw k) */
  const seatrt_tensor* q_weight;     /* [D] or NULL (no gain) */
  const seatrt_tensor* k_weight;     /* [D] or NULL */
  const seatrt_tensor* v_weight;     /* [D] or NULL */
  const seatrt_tensor* positions;    /* I32 [T] */
  const seatrt_tensor* inv_freq;     /* F32 [D/2] */
  const seatrt_tensor* slot_mapping; /* I64 [T] */
  seatrt_kv_layer* cache;
} seatrt_qkv_norm_rope_store_args;

/* add_rms_norm whose branch is the sum of two normed branches (a MoE
 * layer's dense MLP and experts).  Per row, in fp32:
 *   s         = rmsnorm(a) * a_weight + rmsnorm(b) * b_weight
 *   residual <- (residual + rmsnorm(s) * sum_weight) * residual_scale
 *   out      <- rmsnorm(residual) * out_weight          (only if out != NULL)
 * with rmsnorm exactly as rms_norm computes it; s is never stored (for F32
 * tensors this equals rms_norm(a) into s, add_rms_norm(b, b_weight, s,
 * scale 1, no out), add_rms_norm(s, sum_weight, residual, residual_scale,
 * out_weight, out) in sequence).  The last norm reads the residual as
 * stored (rounded to its dtype).  a, b, residual and out have one shape
 * ([rows, N], leading axes are rows) and one dtype; weights are [N] or NULL
 * (no gain).  Aliasing: out may alias a or b (both are read completely
 * before out is written); residual must not alias a, b or out.  Tensors are
 * read/written during the call (on `stream`); nothing is kept. */
typedef struct seatrt_add_rms_norm_pair_args {
  uint32_t struct_size;
  float eps;                         /* every norm, finite and >= 0 */
  const seatrt_tensor* a;            /* [rows, N] */
  const seatrt_tensor* a_weight;     /* [N] or NULL */
  const seatrt_tensor* b;            /* [rows, N] */
  const seatrt_tensor* b_weight;     /* [N] or NULL */
  const seatrt_tensor* sum_weight;   /* [N] or NULL: the gain of rmsnorm(s) */
  seatrt_tensor* residual;           /* [rows, N], read and written in place */
  float residual_scale;              /* multiplies the updated residual; 1 = none */
  int32_t reserved0;
  const seatrt_tensor* out_weight;   /* [N] or NULL; ignored when out is NULL */
  seatrt_tensor* out;                /* [rows, N] or NULL (skip the last norm) */
} seatrt_add_rms_norm_pair_args;

/* ------------------------------------------- a MoE layer's router (ABI 1.5) */

/* A MoE layer's router and its experts' input from one read of the
 * residual, in one operation.  Per row t of x, in fp32:
 *   logits[t]          = (rmsnorm(x[t]) * router_norm_weight) * router^T
 *   ids[t], weights[t] = router_topk(logits[t], top_k, renormalize,
 *                                    per_expert_scale)
 *   expert_in[t]       = rmsnorm(x[t]) * expert_norm_weight
 *                                            (only when expert_in != NULL)
 * with rmsnorm, linear and router_topk as those operations compute them
 * (the sequence: rms_norm_multi of x with the two gains, linear,
 * router_topk), except for the order of fp32 rounding in the logits: a
 * provider may multiply the product by the norm's 1/rms instead of the
 * input, so a logit may differ from the sequence's by a few ulps, and where
 * two logits are that close so may the choice between them.  Top-k reads
 * the fp32 logits whatever the dtype of `logits`, so ids and weights do not
 * depend on whether or how the logits are asked for.  The logits are
 * written only when `logits` is non-NULL (the operation needs no logits
 * buffer of the caller's).  x [T, H] (an activation dtype); the gains [H] or
 * NULL (no gain); router: a linear weight [E, H] in any format the
 * provider's linear takes; top_k 1..min(64, E); ids I32 [T, k] in
 * descending weight order; weights F32 [T, k]; expert_in [T, H]; logits
 * [T, E].  Aliasing: no output may alias x or another output.  Tensors are
 * read/written during the call (on `stream`); nothing is kept. */
typedef struct seatrt_route_args {
  uint32_t struct_size;
  float eps;                                /* finite and >= 0 */
  const seatrt_tensor* x;                   /* [T, H] */
  const seatrt_tensor* router_norm_weight;  /* [H] or NULL */
  const seatrt_linear_weight* router;       /* [E, H] */
  int32_t top_k;
  int32_t renormalize;                      /* bool */
  const seatrt_tensor* per_expert_scale;    /* [E] or NULL */
  const seatrt_tensor* expert_norm_weight;  /* [H] or NULL; ignored when expert_in is NULL */
  seatrt_tensor* expert_in;                 /* [T, H] or NULL */
  seatrt_tensor* logits;                    /* [T, E] or NULL */
  seatrt_tensor* ids;                       /* I32 [T, k] */
  seatrt_tensor* weights;                   /* F32 [T, k] */
} seatrt_route_args;

/* ------------------------------------------------------------ the table */

typedef struct seatrt_kernel_probe {
  uint32_t struct_size;
  /* 0 = cannot run on this machine; higher is preferred.  The CPU provider
   * answers 1; a GPU provider answers >= 100 when its device is present. */
  uint32_t score;
  /* One line describing what was found ("NVIDIA H200, sm_90, 139 GiB" or
   * the reason for 0: "no CUDA driver").  Owned by the provider, valid until
   * unload. */
  const char* detail;
} seatrt_kernel_probe;

typedef struct seatrt_kernel_api {
  uint32_t struct_size;
  int32_t device_kind; /* seatrt_device_kind the provider runs on */

  /* Capability probe.  Cheap, no lasting side effects; may be called before
   * create() and from any thread.  Fills *out (whose struct_size the caller
   * set). */
  seatrt_status* (*probe)(seatrt_kernel_probe* out);

  /* Makes a context on device `device_index` with the provider's options
   * (`options_toml`: the seat file's [kernels.options] table as a TOML
   * document, read during the call only; "" when absent).  *out is owned
   * by the caller and freed with destroy().  Not thread-safe with other
   * create/destroy calls. */
  seatrt_status* (*create)(const char* options_toml, int32_t device_index,
                           seatrt_kernel_context** out);
  /* Frees a context after all its work completed; NULL is ignored. */
  void (*destroy)(seatrt_kernel_context* ctx);

  /* Memory on the context's device.  alloc returns memory owned by the
   * caller (free with free_memory), aligned to 256 bytes, uninitialised. */
  seatrt_status* (*alloc)(seatrt_kernel_context* ctx, size_t bytes, void** out);
  void (*free_memory)(seatrt_kernel_context* ctx, void* ptr);
  /* Bytes free and total on the device, as the driver reports them. */
  seatrt_status* (*memory_info)(seatrt_kernel_context* ctx, size_t* free_bytes,
                                size_t* total_bytes);
  /* Copies `bytes` between host and device memory (direction from the
   * device kinds), ordered on `stream`.  Host memory must stay valid until
   * the stream is synchronised. */
  seatrt_status* (*copy)(seatrt_kernel_context* ctx, seatrt_stream stream, void* dst,
                         int32_t dst_device_kind, const void* src, int32_t src_device_kind,
                         size_t bytes);
  seatrt_status* (*memset_zero)(seatrt_kernel_context* ctx, seatrt_stream stream, void* dst,
                                size_t bytes);

  /* Streams.  stream_create returns a stream owned by the caller. */
  seatrt_status* (*stream_create)(seatrt_kernel_context* ctx, seatrt_stream* out);
  void (*stream_destroy)(seatrt_kernel_context* ctx, seatrt_stream stream);
  /* Waits for all work on the stream; returns the first execution error. */
  seatrt_status* (*stream_sync)(seatrt_kernel_context* ctx, seatrt_stream stream);

  /* Weights.  weight_layouts writes up to `capacity` layout ids the provider
   * reads for `format`, most preferred first, and their count to *count.
   * prepare_weight is called once per weight after its tensors are on the
   * device and before first use (may be NULL); release_weight undoes it. */
  seatrt_status* (*weight_layouts)(seatrt_kernel_context* ctx, int32_t format,
                                   int32_t* layouts, int32_t capacity, int32_t* count);
  seatrt_status* (*prepare_weight)(seatrt_kernel_context* ctx, seatrt_linear_weight* weight);
  void (*release_weight)(seatrt_kernel_context* ctx, seatrt_linear_weight* weight);

  /* Operations (see the args structs). */
  seatrt_status* (*elementwise)(seatrt_kernel_context*, seatrt_stream, const seatrt_elementwise_args*);
  seatrt_status* (*embedding)(seatrt_kernel_context*, seatrt_stream, const seatrt_embedding_args*);
  seatrt_status* (*rms_norm)(seatrt_kernel_context*, seatrt_stream, const seatrt_rms_norm_args*);
  seatrt_status* (*linear)(seatrt_kernel_context*, seatrt_stream, const seatrt_linear_args*);
  seatrt_status* (*glu)(seatrt_kernel_context*, seatrt_stream, const seatrt_glu_args*);
  seatrt_status* (*rope)(seatrt_kernel_context*, seatrt_stream, const seatrt_rope_args*);
  seatrt_status* (*kv_store)(seatrt_kernel_context*, seatrt_stream, const seatrt_kv_store_args*);
  seatrt_status* (*attention)(seatrt_kernel_context*, seatrt_stream, const seatrt_attention_args*);
  seatrt_status* (*router_topk)(seatrt_kernel_context*, seatrt_stream, const seatrt_router_topk_args*);
  seatrt_status* (*moe)(seatrt_kernel_context*, seatrt_stream, const seatrt_moe_args*);
  seatrt_status* (*gather_rows)(seatrt_kernel_context*, seatrt_stream, const seatrt_gather_rows_args*);
  /* Synchronous: returns when outputs (host memory) are written. */
  seatrt_status* (*sample)(seatrt_kernel_context*, seatrt_stream, const seatrt_sample_args*);

  /* CUDA-graph style capture of everything enqueued on `stream` between
   * begin and end; all three may be NULL (not provided).  The graph is owned
   * by the caller (graph_destroy).  Replays use the same memory addresses. */
  seatrt_status* (*graph_begin)(seatrt_kernel_context*, seatrt_stream);
  seatrt_status* (*graph_end)(seatrt_kernel_context*, seatrt_stream, seatrt_graph** out);
  seatrt_status* (*graph_launch)(seatrt_kernel_context*, seatrt_stream, seatrt_graph*);
  void (*graph_destroy)(seatrt_kernel_context*, seatrt_graph*);

  /* ---- ABI 1.1: fused operations.  Absent (SEATRT_HAS_FIELD false) in a
   * 1.0 provider's table, and may be NULL; a caller then runs the unfused
   * sequence (rms_norm, elementwise, rope) the comments above spell out. */
  seatrt_status* (*add_rms_norm)(seatrt_kernel_context*, seatrt_stream, const seatrt_add_rms_norm_args*);
  seatrt_status* (*rms_norm_rope)(seatrt_kernel_context*, seatrt_stream, const seatrt_rms_norm_rope_args*);

  /* ---- ABI 1.2: fused linears and norms.  Absent in a 1.0/1.1 provider's
   * table, and may be NULL; a caller then runs the sequence of single
   * operations the comments above spell out (linear per weight; linear,
   * linear, glu; rms_norm per gain). */
  seatrt_status* (*linear_multi)(seatrt_kernel_context*, seatrt_stream, const seatrt_linear_multi_args*);
  seatrt_status* (*linear_glu)(seatrt_kernel_context*, seatrt_stream, const seatrt_linear_glu_args*);
  seatrt_status* (*rms_norm_multi)(seatrt_kernel_context*, seatrt_stream, const seatrt_rms_norm_multi_args*);

  /* ---- ABI 1.3: ordering between two streams of one context, so that a
   * caller can run independent branches concurrently (a device has idle
   * SMs while one small kernel runs).  Work enqueued on `waiter` after this
   * call starts only once all work enqueued on `signaler` before the call
   * has completed; the host is never blocked.  While either stream is
   * being captured (graph_begin), the ordering is captured as a graph edge
   * and a non-capturing `waiter` joins the capture: everything it is given
   * until it is made to wait back is part of the graph, and it must be
   * joined back into the capturing stream before graph_end.  Threading: the
   * two streams must not be used by another thread during the call.
   * Providers whose operations complete before they return (the CPU
   * provider) implement it as a no-op.  Absent in older tables, and may be
   * NULL: a caller then runs the branches on one stream. */
  seatrt_status* (*stream_wait)(seatrt_kernel_context* ctx, seatrt_stream waiter, seatrt_stream signaler);

  /* ---- ABI 1.4: the attention input (per-head norms, RoPE and the KV
   * store) and a MoE layer's feed-forward end (two normed branches summed,
   * normed, added to the residual, the next norm) in one operation each.
   * Absent in older tables, and may be NULL: a caller then runs the
   * sequences the comments above spell out.  Threading, ownership and
   * lifetime as for every operation. */
  seatrt_status* (*qkv_norm_rope_store)(seatrt_kernel_context*, seatrt_stream, const seatrt_qkv_norm_rope_store_args*);
  seatrt_status* (*add_rms_norm_pair)(seatrt_kernel_context*, seatrt_stream, const seatrt_add_rms_norm_pair_args*);

  /* ---- ABI 1.5: a MoE layer's router (its input norms, the router Linear
   * and top-k) in one operation.  Absent in older tables, and may be NULL:
   * a caller then runs the sequence its args comment spells out.
   * Threading, ownership and lifetime as for every operation. */
  seatrt_status* (*route)(seatrt_kernel_context*, seatrt_stream, const seatrt_route_args*);

  /* ---- ABI 1.6: a hint.  Asks the device to bring `weights` closer (on a
   * GPU: into L2) ahead of the operations that will read them, e.g. the
   * next layer's Linears while this layer's experts run.  Changes no data
   * and no result; ordered on `stream` like any operation (a provider
   * keeps the ordering of the operations around it).  Absent in older
   * tables, and may be NULL: a caller then simply does not ask.  The args
   * and the weight pointers are the caller's, read during the call;
   * threading as for every operation. */
  seatrt_status* (*prefetch_weights)(seatrt_kernel_context*, seatrt_stream, const seatrt_prefetch_weights_args*);

  /* ---- ABI 1.7: what the sample slot honours beyond ABI 1.0, as
   * SEATRT_SAMPLE_* bits (SEATRT_SAMPLE_LOGIT_BIAS: the rows' bias fields).
   * A plain value set when the table is built, never changed; absent in
   * older tables (read as 0: the host then refuses requests that need a
   * bit, naming the provider, rather than let the bias be ignored). */
  uint64_t sample_features;
} seatrt_kernel_api;

#ifdef __cplusplus
}
#endif

#endif /* SEATRT_KERNELS_H */
