/* seatrt plugin ABI: architecture and quantization-scheme tables, and the
 * host-provided model source they read a checkpoint through.
 *
 * Who does what when a seat loads a model:
 * 1. The host maps the checkpoint (safetensors, sharded or not) and reads
 *    config.json; it picks the quantization plugin whose probe() accepts
 *    config.json's quantization_config, and the architecture plugin that
 *    accepts config.json.
 * 2. The host calls the architecture's inspect() (the checkpoint guard) and
 *    then create(), handing it a seatrt_model_source: the checkpoint's
 *    tensors, the quantization state of every Linear, a loader that puts a
 *    Linear on the device in the layout the kernel provider reads (the
 *    quantization plugin does the conversion), and the kernel table.
 * 3. The engine calls forward() once per scheduler step.
 * See abi.h for versioning, errors and threading conventions. */
#ifndef SEATRT_MODEL_H
#define SEATRT_MODEL_H

#include "seatrt/abi.h"
#include "seatrt/kernels.h"
#include "seatrt/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------ the model source */

/* One checkpoint tensor as stored (host memory, read-only, memory-mapped).
 * name and data are owned by the host and valid while the model source is. */
typedef struct seatrt_checkpoint_tensor {
  uint32_t struct_size;
  int32_t dtype; /* seatrt_dtype; SEATRT_DTYPE_INVALID for a dtype seatrt does not know */
  const char* name;
  const void* data;
  uint64_t nbytes;
  int32_t ndim;
  int32_t reserved0;
  int64_t shape[SEATRT_MAX_DIMS];
} seatrt_checkpoint_tensor;

/* How a Linear module is stored. */
typedef enum seatrt_linear_state {
  SEATRT_LINEAR_ABSENT = 0,    /* no such module in the checkpoint */
  SEATRT_LINEAR_DENSE = 1,     /* `<module>.weight`, not quantized */
  SEATRT_LINEAR_QUANTIZED = 2  /* quantized by the seat's scheme */
} seatrt_linear_state;

typedef struct seatrt_model_source seatrt_model_source;

/* Made by the host, passed to inspect() and create().  Owned by the host;
 * for inspect() valid during the call, for create() valid until the model
 * is destroyed.  Its functions may be called from any thread. */
struct seatrt_model_source {
  uint32_t struct_size;
  uint32_t reserved0;
  const char* model_dir;              /* absolute path */
  const char* config_json;            /* config.json text */
  const char* generation_config_json; /* generation_config.json text, "" when absent */
  const char* quant_scheme;           /* the quantization plugin's name, "" when none */
  void* host_state;                   /* for the host's functions below; do not touch */

  int64_t (*tensor_count)(const seatrt_model_source* src);
  /* Fills *out (caller sets struct_size) for tensor `index` in
   * [0, tensor_count), in the order of the checkpoint's files. */
  seatrt_status* (*tensor_at)(const seatrt_model_source* src, int64_t index,
                              seatrt_checkpoint_tensor* out);
  /* Finds a tensor by exact name; SEATRT_ERR_NOT_FOUND if absent. */
  seatrt_status* (*find_tensor)(const seatrt_model_source* src, const char* name,
                                seatrt_checkpoint_tensor* out);
  /* Reports how Linear `module` (its name without ".weight") is stored,
   * according to the quantization plugin: a module the scheme's config says
   * is quantized but is stored dense, or the reverse, is an error naming
   * both. */
  seatrt_status* (*linear_state)(const seatrt_model_source* src, const char* module,
                                 int32_t* state);

  /* --- create() only; NULL during inspect() --- */
  const seatrt_kernel_api* kernels; /* the dispatch table (fallbacks filled in) */
  seatrt_kernel_context* kernel_context;
  /* Upper bound on tokens in one forward() call (size workspaces with it). */
  int64_t max_batch_tokens;
  /* Loads Linear `module` onto the device in a layout the kernel provider
   * reads.  The weight and its memory are owned by the host until the model
   * is destroyed; *out stays valid that long. */
  seatrt_status* (*load_linear)(const seatrt_model_source* src, const char* module,
                                const seatrt_linear_weight** out);
  /* Loads a plain tensor onto the device converted to `dtype`.  Memory owned
   * by the host until the model is destroyed. */
  seatrt_status* (*load_tensor)(const seatrt_model_source* src, const char* name,
                                int32_t dtype, seatrt_tensor* out);
};

/* ------------------------------------------------------ architecture API */

typedef struct seatrt_model seatrt_model; /* opaque, plugin-owned */

/* What the engine needs to know to cache K/V for one layer. */
typedef struct seatrt_kv_layer_spec {
  uint32_t struct_size;
  int32_t kv_heads;
  int32_t head_dim;
  int32_t window;        /* 0 = full attention; else the cache holds at most `window` tokens */
  int32_t single_tensor; /* 1 = K and V are rebuilt from one cached tensor (store once) */
} seatrt_kv_layer_spec;

typedef struct seatrt_model_info {
  uint32_t struct_size;
  int32_t vocab_size;
  int32_t hidden_size;
  int32_t num_layers;
  int64_t max_position;        /* max_position_embeddings */
  int32_t is_moe;              /* architecture class: 0 dense, 1 mixture of experts */
  int32_t reserved0;
  const seatrt_kv_layer_spec* kv_layers; /* [num_layers], owned by the model */
  uint64_t weight_bytes;       /* device bytes of all loaded weights */
  uint64_t workspace_bytes;    /* device bytes of activation/workspace buffers */
} seatrt_model_info;

/* One scheduler step.  Device tensors are on the kernel provider's device;
 * host_* arrays are host copies of the same data for planning. */
typedef struct seatrt_forward_batch {
  uint32_t struct_size;
  int32_t num_tokens;                 /* T */
  int32_t num_seqs;                   /* S */
  int32_t max_query_len;
  int32_t max_seq_len;
  int32_t num_logits;                 /* rows of T that need logits */
  const seatrt_tensor* token_ids;     /* I32 [T] */
  const seatrt_tensor* positions;     /* I32 [T] */
  const seatrt_tensor* query_start;   /* I32 [S+1] */
  const seatrt_tensor* seq_lens;      /* I32 [S]: cached + new tokens */
  const seatrt_tensor* block_tables;  /* I32 [S, max_blocks] */
  const seatrt_tensor* slot_mapping;  /* I64 [T] */
  const seatrt_tensor* logits_index;  /* I32 [num_logits] */
  seatrt_kv_layer* kv_layers;         /* [num_layers] */
  const int32_t* host_query_start;
  const int32_t* host_seq_lens;
  seatrt_tensor* logits;              /* F32 [num_logits, vocab] */
  /* The host pages sliding-window layers (kv layer spec window > 0) in a
   * pool of their own, recycling blocks as the window slides.  When
   * non-NULL, those layers' kv_layers[l] caches are indexed by
   * window_block_tables (I32 [S, max_blocks]; an entry for a block that slid
   * out of the window holds another valid block of the sequence and must
   * not be read) and their new K/V go to window_slot_mapping (I64 [T]).
   * NULL: every layer uses block_tables / slot_mapping. */
  const seatrt_tensor* window_block_tables;
  const seatrt_tensor* window_slot_mapping;
  /* 1 when this step's shapes (num_tokens, num_seqs, max_query_len,
   * max_seq_len, num_logits, the block tables' width) and every tensor
   * address above repeat in later steps (a decode batch bucket): the model
   * may plan the step's graph once and launch the plan again for each such
   * step.  0: a one-off shape (a prefill chunk). */
  int32_t shape_repeats;
  int32_t reserved0;
} seatrt_forward_batch;

/* Debug/trace callback: called during forward() with intermediate tensors
 * (`name` e.g. "hidden", "router_ids", "router_weights"; layer -1 for the
 * embedding output).  The tensor is valid during the call only and lives on
 * the provider's device; the stream has been synchronised before the call. */
typedef void (*seatrt_trace_fn)(void* user_data, int32_t layer, const char* name,
                                const seatrt_tensor* tensor);

/* Receives the inspect() report, one "key: value" line per call. */
typedef void (*seatrt_report_fn)(void* user_data, const char* line);

typedef struct seatrt_arch_api {
  uint32_t struct_size;
  uint32_t reserved0;

  /* Scores config.json (text): 0 = not this architecture.  Fast, pure. */
  seatrt_status* (*probe)(const char* config_json, int32_t* score);

  /* Validates the checkpoint against the architecture without loading it:
   * counts, missing/extra/misshapen tensors, and the architecture-class
   * guard (a MoE whose router is quantized is refused, naming the module).
   * Writes findings to `report` (may be NULL).  Returns NULL if the model
   * may be loaded, else an INVALID_ARG status naming the problem. */
  seatrt_status* (*inspect)(const seatrt_model_source* src, seatrt_report_fn report,
                            void* report_user_data);

  /* Builds the model: runs inspect()'s checks, loads every weight through
   * src->load_linear / load_tensor, allocates its workspaces with
   * src->kernels.  `options_toml` is the seat file's [model.options] table.
   * *out is owned by the caller (destroy).  Not concurrent with other
   * create/destroy calls of the same plugin. */
  seatrt_status* (*create)(const seatrt_model_source* src, const char* options_toml,
                           seatrt_model** out);
  void (*destroy)(seatrt_model* model);

  /* Fills *out (caller sets struct_size); pointers stay valid for the
   * model's life. */
  seatrt_status* (*info)(const seatrt_model* model, seatrt_model_info* out);

  /* Runs one step on `stream`.  The host never calls forward() on one model
   * from two threads at once. */
  seatrt_status* (*forward)(seatrt_model* model, seatrt_stream stream,
                            const seatrt_forward_batch* batch);

  /* Installs (fn non-NULL) or removes a trace callback.  May be NULL (not
   * provided).  Only between forward() calls. */
  seatrt_status* (*set_trace)(seatrt_model* model, seatrt_trace_fn fn, void* user_data);

  /* May be NULL.  The model's shape from src->config_json alone, reading no
   * tensor: what create()'s info() would report for vocab_size,
   * hidden_size, num_layers, max_position, is_moe and kv_layers, so that
   * the host can plan the KV pool before loading (`seatrt check`).
   * weight_bytes and workspace_bytes are left 0 (known only after create).
   * The caller sets out->struct_size and lends `layers`, room for
   * `capacity` specs: on success out->kv_layers points at `layers` (its
   * first num_layers entries filled, each with struct_size set), owned by
   * the caller; when num_layers exceeds capacity, out->num_layers is set
   * and INVALID_ARG is returned.  Pure: any thread, concurrently. */
  seatrt_status* (*describe)(const seatrt_model_source* src, seatrt_model_info* out,
                             seatrt_kv_layer_spec* layers, int32_t capacity);

  /* May be NULL.  Builds and plans the model's step graphs at
   * representative shapes (a decode step of 1 and of max_seqs sequences, a
   * prefill chunk) with inputs of its own, and reports for each graph its
   * nodes by stage and what the kernel table's plan runs (plan_describe's
   * lines), one line per call to `report` (`seatrt check`).  Between
   * forward() calls only. */
  seatrt_status* (*describe_steps)(seatrt_model* model, int32_t max_seqs, seatrt_report_fn report,
                                   void* report_user_data);

  /* ---- end of ABI 2.0 */
} seatrt_arch_api;

/* ------------------------------------------------------ quantization API */

typedef struct seatrt_quant_scheme seatrt_quant_scheme; /* opaque, plugin-owned */

typedef struct seatrt_quant_api {
  uint32_t struct_size;
  uint32_t reserved0;

  /* Scores a quantization_config (JSON text; "" when config.json has none):
   * 0 = not this scheme.  Fast, pure. */
  seatrt_status* (*probe)(const char* quantization_config_json, int32_t* score);

  /* Parses the config.  Unknown formats, group sizes or scale dtypes are an
   * error naming the value.  *out owned by the caller (destroy). */
  seatrt_status* (*create)(const char* quantization_config_json, const char* options_toml,
                           seatrt_quant_scheme** out);
  void (*destroy)(seatrt_quant_scheme* scheme);

  /* How Linear `module` is stored (seatrt_linear_state), checking the
   * config's targets/ignore against the tensors present.  Thread-safe. */
  seatrt_status* (*linear_state)(const seatrt_quant_scheme* scheme,
                                 const seatrt_model_source* src, const char* module,
                                 int32_t* state);

  /* Writes up to `capacity` layouts this plugin can produce for `format`
   * and their count. */
  seatrt_status* (*layouts)(const seatrt_quant_scheme* scheme, int32_t format,
                            int32_t* layouts, int32_t capacity, int32_t* count);

  /* Converts Linear `module` into `layout` in HOST memory.  *out's tensors
   * point to memory owned by the plugin, released by release_host(*token).
   * Thread-safe. */
  seatrt_status* (*convert_linear)(const seatrt_quant_scheme* scheme,
                                   const seatrt_model_source* src, const char* module,
                                   int32_t layout, seatrt_linear_weight* out, void** token);
  void (*release_host)(const seatrt_quant_scheme* scheme, void* token);
} seatrt_quant_api;

#ifdef __cplusplus
}
#endif

#endif /* SEATRT_MODEL_H */
