/* seatrt plugin ABI 2.0: the kernel-provider table.
 *
 * A kernel provider runs the numeric operations of a model on one kind of
 * device (kernels/cpu: the portable fp32 reference; kernels/cuda: Hopper).
 * The architecture plugin hands it operations (ops.h) one at a time or, for
 * a whole step, as a graph; it never touches a device API itself, so the
 * same architecture runs on every provider.
 *
 * Operations.  supports() says whether the provider runs an operation with
 * these exact parameters (kind, dtypes, shapes, fields); run() runs it.  The
 * host builds the architecture's table from a primary provider and, for a
 * provider on the CPU, the CPU provider as a per-operation fallback: an
 * operation the primary does not support goes to the fallback.
 *
 * Graphs.  A step (a decode batch bucket, a prefill chunk) is a
 * seatrt_op_graph: its nodes in an order that respects their dependencies.
 * Nodes name their tensors by memory: a node depends on an earlier node
 * whose outputs overlap its inputs (or whose inputs its outputs overwrite).
 * plan() turns a graph into a provider-owned plan: the provider may fuse
 * nodes into one kernel, run independent nodes concurrently, reorder within
 * the dependencies or compile the whole step; the results must equal
 * running the nodes in order through run() (within each operation's stated
 * rounding).  plan_launch() runs the plan with the tensors' contents as
 * they are at launch: the graph's inputs (token ids, positions, block
 * tables, ...) are tensors at fixed addresses the caller rewrites between
 * launches.  A provider without a planner leaves plan NULL; the host then
 * runs the nodes in order, each through the provider that supports it.
 *
 * Rules for every slot:
 * - Asynchronous on devices with streams: a slot returns once the work is
 *   enqueued; argument errors are returned at once, execution errors at the
 *   next stream_sync.  The CPU provider completes work before returning.
 * - Threading: a context may be used from several threads at once as long
 *   as no two threads use the same stream (or the same plan) at a time.
 * - Versions: the table ends with one marker per ABI version; a reader
 *   treats slots beyond the caller's struct_size as NULL (SEATRT_HAS_FIELD).
 *   The history of the 1.x tables is in docs/abi-changelog.md.
 */
#ifndef SEATRT_KERNELS_H
#define SEATRT_KERNELS_H

#include "seatrt/abi.h"
#include "seatrt/ops.h"
#include "seatrt/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct seatrt_kernel_context seatrt_kernel_context; /* opaque, provider-owned */
typedef struct seatrt_plan seatrt_plan;                     /* opaque, provider-owned */

/* A step as data.  Owned by the caller; a plan made from it may keep
 * pointers into it (the nodes, their args, tensors and weights), so the
 * caller keeps all of it alive and unchanged until plan_destroy. */
typedef struct seatrt_op_graph {
  uint32_t struct_size;
  int32_t num_nodes;
  const seatrt_op* nodes;          /* [num_nodes], in dependency order */
  const char* const* node_names;   /* [num_nodes] ("layer 3/attention/q_norm") or NULL */
  const char* name;                /* "decode b=16", "prefill t=512"; may be NULL */
  /* How often the caller expects to launch the plan: 1 = once (a provider
   * should not spend time compiling it), 0 = many times (a decode bucket). */
  int32_t launches;
  int32_t reserved0;
} seatrt_op_graph;

/* Receives plan_describe's report, one line per call (read during it). */
typedef void (*seatrt_line_fn)(void* user_data, const char* line);

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

  /* ---- operations (ops.h) */

  /* 1 when run() takes this operation with these parameters, else 0.
   * Pure and cheap; any thread. */
  int32_t (*supports)(seatrt_kernel_context* ctx, const seatrt_op* op);
  /* Runs one operation on `stream`.  SEATRT_ERR_UNSUPPORTED when supports()
   * would say 0; SEATRT_ERR_INVALID_ARG naming the field for bad args. */
  seatrt_status* (*run)(seatrt_kernel_context* ctx, seatrt_stream stream, const seatrt_op* op);

  /* ---- graphs (may all be NULL: the host runs the nodes in order) */

  /* Plans `graph`.  *out is owned by the caller (plan_destroy).  Fails with
   * SEATRT_ERR_UNSUPPORTED, naming the node, when the provider does not
   * support a node (the host then runs the nodes itself); SAMPLE nodes are
   * never in a graph.  May allocate device memory; not on a hot path. */
  seatrt_status* (*plan)(seatrt_kernel_context* ctx, const seatrt_op_graph* graph, seatrt_plan** out);
  /* Runs the plan once on `stream`, reading its inputs as they are now. */
  seatrt_status* (*plan_launch)(seatrt_kernel_context* ctx, seatrt_stream stream, seatrt_plan* plan);
  /* Frees a plan after its launches completed; NULL is ignored. */
  void (*plan_destroy)(seatrt_kernel_context* ctx, seatrt_plan* plan);
  /* Says what the plan runs, one line per kernel or group it made
   * ("fused rms_norm+add+rms_norm <- nodes 12,13,14: add_rms_norm"), for
   * `seatrt check`.  May be NULL. */
  seatrt_status* (*plan_describe)(seatrt_kernel_context* ctx, const seatrt_plan* plan, seatrt_line_fn line,
                                  void* user_data);

  /* ---- end of ABI 2.0 */
} seatrt_kernel_api;

#ifdef __cplusplus
}
#endif

#endif /* SEATRT_KERNELS_H */
