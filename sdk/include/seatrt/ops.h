/* seatrt plugin ABI: the operations a kernel provider runs, as data.
 *
 * An operation is a seatrt_op: a kind (seatrt_op_kind) and a pointer to the
 * kind's args struct.  Every kind is a PRIMITIVE: fusing several of them is
 * a provider's business (its planner rewrites a graph, kernels.h), never a
 * new kind.  A second model family adds kinds only for math the primitives
 * cannot express.
 *
 * Rules for every args struct:
 * - It starts with struct_size, set by the caller to sizeof() as compiled.
 *   A SHORTER struct (an older caller) reads as if its missing trailing
 *   fields were zero, and zero always means "off" / "absent".  A LONGER
 *   struct (a newer caller) is run only when every byte the provider does
 *   not know is zero; otherwise supports() answers 0 and run() returns
 *   SEATRT_ERR_UNSUPPORTED.  The SDK's registry (seatrt/cpp/op_registry.hpp)
 *   implements this once for every provider.
 * - Tensors and weights are the caller's, read (and outputs written) on the
 *   stream of the call; nothing is kept after the work completes, except by
 *   a plan (kernels.h), which keeps what its graph's nodes point to.
 * - Math in fp32; activations F32 or BF16 unless a kind says otherwise;
 *   outputs may alias inputs only where the kind says so.
 * - Leading axes are rows: a [.., N] tensor is rows x N.
 */
#ifndef SEATRT_OPS_H
#define SEATRT_OPS_H

#include "seatrt/abi.h"
#include "seatrt/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- weights */

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

/* ------------------------------------------------------------- the kinds */

typedef enum seatrt_op_kind {
  SEATRT_OP_INVALID = 0,
  SEATRT_OP_ELEMENTWISE = 1,    /* seatrt_elementwise_args */
  SEATRT_OP_EMBEDDING = 2,      /* seatrt_embedding_args */
  SEATRT_OP_RMS_NORM = 3,       /* seatrt_rms_norm_args */
  SEATRT_OP_LINEAR = 4,         /* seatrt_linear_args */
  SEATRT_OP_GLU = 5,            /* seatrt_glu_args */
  SEATRT_OP_ROPE = 6,           /* seatrt_rope_args */
  SEATRT_OP_KV_STORE = 7,       /* seatrt_kv_store_args */
  SEATRT_OP_ATTENTION = 8,      /* seatrt_attention_args */
  SEATRT_OP_ROUTER_TOPK = 9,    /* seatrt_router_topk_args */
  SEATRT_OP_MOE = 10,           /* seatrt_moe_args */
  SEATRT_OP_GATHER_ROWS = 11,   /* seatrt_gather_rows_args */
  SEATRT_OP_SAMPLE = 12,        /* seatrt_sample_args; synchronous, never in a graph */
  SEATRT_OP_CONV1D_CAUSAL = 13, /* seatrt_conv1d_causal_args */
  SEATRT_OP_DELTA_RULE = 14,    /* seatrt_delta_rule_args */
  SEATRT_OP_KIND_END_2_0 = 15   /* end of ABI 2.0: kinds are < this value */
} seatrt_op_kind;

/* One operation: what to run and its arguments. */
typedef struct seatrt_op {
  uint32_t struct_size;
  int32_t kind;       /* seatrt_op_kind */
  const void* args;   /* the kind's args struct, starting with its struct_size */
} seatrt_op;

/* ------------------------------------------------------------ parameters */

typedef enum seatrt_activation {
  SEATRT_ACT_GELU_TANH = 0, /* 0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))) */
  SEATRT_ACT_SILU = 1,      /* z / (1 + exp(-z)) */
  SEATRT_ACT_GELU_ERF = 2   /* 0.5 z (1 + erf(z / sqrt 2)) */
} seatrt_activation;

typedef enum seatrt_elementwise_op {
  SEATRT_EW_ADD = 0,        /* out = a + b            (b broadcast over leading dims) */
  SEATRT_EW_MUL = 1,        /* out = a * b            (b broadcast over leading dims) */
  SEATRT_EW_SCALE = 2,      /* out = a * alpha        (b unused) */
  SEATRT_EW_SOFTCAP = 3,    /* out = alpha * tanh(a / alpha) */
  SEATRT_EW_COPY = 4,       /* out = a, converting dtype (b unused) */
  SEATRT_EW_SIGMOID = 5,    /* out = 1 / (1 + exp(-a))  (b unused) */
  SEATRT_EW_MUL_ROWS = 6    /* out[r, :] = a[r, :] * b[r]   (b: one value per row of a) */
} seatrt_elementwise_op;

/* SEATRT_OP_ELEMENTWISE.  a, b, out of one row count; out may alias a. */
typedef struct seatrt_elementwise_args {
  uint32_t struct_size;
  int32_t op;               /* seatrt_elementwise_op */
  const seatrt_tensor* a;
  const seatrt_tensor* b;   /* may be NULL where the op says unused */
  float alpha;
  seatrt_tensor* out;       /* may alias a */
} seatrt_elementwise_args;

/* SEATRT_OP_EMBEDDING: out[t] = table[ids[t]] * scale. */
typedef struct seatrt_embedding_args {
  uint32_t struct_size;
  const seatrt_tensor* ids;   /* I32 [T] */
  const seatrt_tensor* table; /* [V, H], BF16/F16/F32 */
  float scale;                /* multiplies every looked-up row */
  seatrt_tensor* out;         /* [T, H] */
} seatrt_embedding_args;

/* SEATRT_OP_RMS_NORM over the last axis:
 *   out = x * (mean(x^2) + eps)^-1/2 * (weight + weight_offset)
 * weight NULL = no gain (then weight_offset is ignored).  weight_offset is
 * 0 for Gemma's plain gains and 1 for "1 + w" (zero-centred) gains. */
typedef struct seatrt_rms_norm_args {
  uint32_t struct_size;
  const seatrt_tensor* x;
  const seatrt_tensor* weight; /* [N] or NULL */
  float eps;
  seatrt_tensor* out;          /* may alias x */
  float weight_offset;
} seatrt_rms_norm_args;

/* SEATRT_OP_LINEAR: out [M, N] = x [M, K] * W^T (+ bias). */
typedef struct seatrt_linear_args {
  uint32_t struct_size;
  const seatrt_tensor* x;
  const seatrt_linear_weight* weight;
  seatrt_tensor* out;               /* must not alias x */
  const seatrt_tensor* bias;        /* [N] or NULL */
} seatrt_linear_args;

/* SEATRT_OP_GLU: out = act(gate) * up, elementwise; gate/up may be strided
 * views of one fused [M, 2I] tensor.  out may alias gate or up. */
typedef struct seatrt_glu_args {
  uint32_t struct_size;
  int32_t activation;  /* seatrt_activation */
  const seatrt_tensor* gate;
  const seatrt_tensor* up;
  seatrt_tensor* out;
} seatrt_glu_args;

#define SEATRT_ROPE_MAX_SECTIONS 4

/* SEATRT_OP_ROPE: rotary embedding, NeoX half-split pairing (i, i + D/2)
 * over the whole head dim D.  inv_freq has D/2 entries; a zero frequency
 * leaves its pair unrotated (partial / proportional RoPE).  x is [T, heads,
 * D]; out may alias x.
 * Positions: num_sections 0 or 1: positions I32 [T], one position per
 * token.  num_sections n in 2..SEATRT_ROPE_MAX_SECTIONS (multi-section
 * RoPE): positions I32 [T, n]; frequency pair i takes its angle from the
 * position of section s where sections[0] + .. + sections[s-1] <= i <
 * sections[0] + .. + sections[s] (the sections' pair counts sum to D/2). */
typedef struct seatrt_rope_args {
  uint32_t struct_size;
  const seatrt_tensor* x;
  const seatrt_tensor* positions;
  const seatrt_tensor* inv_freq; /* F32 [D/2] */
  seatrt_tensor* out;
  int32_t num_sections;
  int32_t sections[SEATRT_ROPE_MAX_SECTIONS];
} seatrt_rope_args;

/* SEATRT_OP_KV_STORE: writes k, v ([T, kv_heads, head_dim]) of T new tokens
 * into the cache at slot_mapping[t] = block * block_size + offset (I64 [T];
 * -1 skips the token). */
typedef struct seatrt_kv_store_args {
  uint32_t struct_size;
  const seatrt_tensor* k;
  const seatrt_tensor* v;        /* NULL when the layer stores one tensor */
  const seatrt_tensor* slot_mapping;
  seatrt_kv_layer* cache;        /* written */
} seatrt_kv_store_args;

/* SEATRT_OP_ATTENTION of a batch of sequences over the paged cache (the new
 * tokens' K/V must already be stored).  Sequence s owns query rows
 * [query_start[s], query_start[s+1]) whose positions are seq_lens[s] - n_s
 * .. seq_lens[s] - 1 (n_s = its row count); it attends to cached positions j
 * <= its own position and, when window > 0, j > position - window.  scores
 * = scale * q.k, soft-capped when softcap > 0.  max_query_len and
 * max_seq_len bound the step (launch shapes); each sequence's length is read
 * from seq_lens. */
typedef struct seatrt_attention_args {
  uint32_t struct_size;
  const seatrt_tensor* q;            /* [T, q_heads, head_dim] */
  const seatrt_kv_layer* cache;
  const seatrt_tensor* query_start;  /* I32 [S + 1] */
  const seatrt_tensor* seq_lens;     /* I32 [S] */
  const seatrt_tensor* block_tables; /* I32 [S, max_blocks_per_seq] */
  int32_t num_seqs;
  int32_t max_query_len;
  int32_t max_seq_len;
  int32_t window;                    /* 0 = full attention */
  float scale;
  float softcap;
  seatrt_tensor* out;                /* [T, q_heads, head_dim] */
} seatrt_attention_args;

typedef enum seatrt_router_scoring {
  SEATRT_ROUTER_SOFTMAX = 0,  /* softmax over all E logits */
  SEATRT_ROUTER_SIGMOID = 1   /* sigmoid of each logit */
} seatrt_router_scoring;

/* SEATRT_OP_ROUTER_TOPK, per row in fp32:
 *   p        = scoring(logits)                      softmax over E, or sigmoid
 *   select   = p + correction_bias                  (correction_bias NULL: p)
 *   groups:    when num_groups > 1, the E experts form num_groups equal
 *              groups; a group's score is the sum of its two largest
 *              `select` values; only the top_groups best groups stay
 *              eligible
 *   ids      = the top_k eligible experts by `select`, descending; ties go
 *              to the lower id
 *   weights  = p[ids] (not the corrected values), renormalised to sum 1 when
 *              renormalize, then times per_expert_scale[id] when given, then
 *              times routed_scale when it is non-zero. */
typedef struct seatrt_router_topk_args {
  uint32_t struct_size;
  const seatrt_tensor* logits;           /* [T, E] */
  int32_t top_k;
  int32_t renormalize;                   /* bool */
  const seatrt_tensor* per_expert_scale; /* [E] or NULL */
  seatrt_tensor* ids;                    /* I32 [T, k] */
  seatrt_tensor* weights;                /* F32 [T, k] */
  int32_t scoring;                       /* seatrt_router_scoring */
  int32_t num_groups;                    /* 0 or 1 = no groups */
  int32_t top_groups;                    /* groups kept when num_groups > 1 */
  float routed_scale;                    /* 0 = 1 */
  const seatrt_tensor* correction_bias;  /* F32 [E] or NULL */
} seatrt_router_topk_args;

/* SEATRT_OP_MOE: out[t] = sum_j weights[t,j] * down_e(act(gate_e(x_t)) *
 * up_e(x_t)) with e = ids[t, j].  Each expert array has num_experts
 * entries. */
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
  seatrt_tensor* out;           /* [T, H], must not alias x */
} seatrt_moe_args;

/* SEATRT_OP_GATHER_ROWS: out[i] = x[index[i]] (index I32 [n]). */
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
  /* Additive logit bias (OpenAI `logit_bias`), before the penalties:
   * z[bias_ids[i]] = raw + bias_values[i] (one IEEE float add), then the
   * penalties on the biased value.  Ids distinct, ascending, inside the
   * vocabulary; values finite.  Logprobs stay those of the RAW logits. */
  const int32_t* bias_ids;
  const float* bias_values;
  int64_t num_bias;
} seatrt_sampling_row;

/* SEATRT_OP_SAMPLE: one token per row of logits [B, V] (F32).  Synchronous:
 * returns when the outputs, HOST memory of the caller, are written:
 * token[B]; logprob[B] = log-softmax of the RAW logits (before penalties,
 * temperature and masks) at the chosen token; top_ids/top_logprobs [B,
 * num_top] likewise, descending; non_finite[B] = 1 if that row's raw logits
 * held a NaN or infinity (the token is then -1 and the row must not be
 * used).  A provider that cannot honour a field of a row (a bias, say)
 * answers 0 from supports() for that op, so the host can refuse the
 * request by name instead of ignoring the field. */
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

/* SEATRT_OP_CONV1D_CAUSAL: a depthwise causal convolution over time with a
 * per-sequence state (the short convolution of linear-attention layers).
 * Channels C, kernel width W.  For sequence s (rows [query_start[s],
 * query_start[s+1]) of x) with state row r = state_index[s]:
 *   history  = reset[s] ? zeros(W-1) : state[r]   (the W-1 inputs before
 *              the first row, oldest first, per channel)
 *   out[t,c] = act(bias[c] + sum_{j<W} weight[c, j] * in[t - (W-1) + j, c])
 *              where in is history followed by x
 *   state[r] <- the last W-1 inputs of that sequence (history included when
 *              the sequence has fewer than W-1 rows)
 * act: SEATRT_CONV_ACT_NONE or SEATRT_ACT_SILU. */
#define SEATRT_CONV_ACT_NONE (-1)
typedef struct seatrt_conv1d_causal_args {
  uint32_t struct_size;
  int32_t activation;                 /* SEATRT_CONV_ACT_NONE or SEATRT_ACT_SILU */
  const seatrt_tensor* x;             /* [T, C] */
  const seatrt_tensor* weight;        /* [C, W] */
  const seatrt_tensor* bias;          /* [C] or NULL */
  seatrt_tensor* state;               /* F32 [num_slots, C, W-1], read and written */
  const seatrt_tensor* state_index;   /* I32 [S] */
  const seatrt_tensor* reset;         /* I32 [S] (1 = start from zeros) or NULL (never) */
  const seatrt_tensor* query_start;   /* I32 [S + 1] */
  int32_t num_seqs;
  int32_t reserved0;
  seatrt_tensor* out;                 /* [T, C], must not alias x */
} seatrt_conv1d_causal_args;

/* SEATRT_OP_DELTA_RULE: gated delta-rule linear attention with a
 * per-sequence state.  Heads: Hk query/key heads of dim Dk, Hv value heads
 * of dim Dv, Hv a multiple of Hk (value head h reads key head h / (Hv/Hk)).
 * For sequence s with state r = state_index[s] (zeros first when reset[s]),
 * for its rows t in order, per value head h, with S = state[r, h] [Dk, Dv]:
 *   q~, k~  = l2_normalize ? q/|q|, k/|k| (eps 1e-6 inside the sqrt) : q, k
 *   S       = S * exp(g[t, h])
 *   u       = beta[t, h] * (v[t, h] - k~^T S)          [Dv]
 *   S       = S + k~ u^T
 *   out[t,h] = scale * q~^T S                           [Dv]
 * and the final S is written back to state[r, h].  fp32 throughout. */
typedef struct seatrt_delta_rule_args {
  uint32_t struct_size;
  int32_t l2_normalize;               /* bool */
  const seatrt_tensor* q;             /* [T, Hk, Dk] */
  const seatrt_tensor* k;             /* [T, Hk, Dk] */
  const seatrt_tensor* v;             /* [T, Hv, Dv] */
  const seatrt_tensor* g;             /* F32 [T, Hv]: log of the decay */
  const seatrt_tensor* beta;          /* F32 [T, Hv] */
  seatrt_tensor* state;               /* F32 [num_slots, Hv, Dk, Dv], read and written */
  const seatrt_tensor* state_index;   /* I32 [S] */
  const seatrt_tensor* reset;         /* I32 [S] or NULL */
  const seatrt_tensor* query_start;   /* I32 [S + 1] */
  int32_t num_seqs;
  float scale;
  seatrt_tensor* out;                 /* [T, Hv, Dv] */
} seatrt_delta_rule_args;

#ifdef __cplusplus
}
#endif

#endif /* SEATRT_OPS_H */
