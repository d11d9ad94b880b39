/* seatrt plugin ABI: versioning, status objects, the host API table and the
 * plugin descriptor.  Plain C; the only thing plugins and host share.
 *
 * THE VERSIONING RULE
 * -------------------
 * - SEATRT_ABI_MAJOR must be equal in host and plugin.  A plugin built
 *   against another major is refused at load, naming both versions.
 * - SEATRT_ABI_MINOR: a plugin built against minor m loads into any host of
 *   the same major whose minor is >= m.  A minor release only ADDS: new
 *   slots at the END of a table, new enum values, new struct fields at the
 *   END of a struct.  Nothing is removed, reordered or re-typed; changing
 *   the meaning of a slot is a major release.
 * - Every struct that crosses the boundary starts with `uint32_t
 *   struct_size`, set by whoever fills the struct to sizeof() as it was
 *   compiled.  A reader never touches a field that lies beyond struct_size:
 *   it treats it as absent (NULL slot / zero).  SEATRT_HAS_FIELD() does the
 *   test.  The layout of every shipped version is pinned by static_asserts
 *   on offsets in sdk/include/seatrt/abi_layout_checks.h, compiled into the
 *   host and into every plugin.
 * - The exported entry point seatrt_plugin_init() and the first four fields
 *   of seatrt_host_api and seatrt_plugin (struct_size, abi_major, abi_minor,
 *   and one more) are frozen for ALL majors, so that a host can always read
 *   which version a plugin was built for and say so.
 *
 * ERRORS
 * ------
 * Every fallible function returns `seatrt_status*`: NULL means success;
 * non-NULL carries a code and a message.  Statuses are created and freed
 * only through the host API table (status_create / status_free), so both
 * sides agree on the allocator.  Whoever receives a non-NULL status owns it
 * and must free it.  No C++ exception, longjmp or abort ever crosses the
 * boundary: every exported function catches everything (the SDK's
 * SEATRT_CATCH_ALL does it).
 *
 * THREADING
 * ---------
 * Each function's comment states its contract.  Unless said otherwise, the
 * host API table may be called from any thread at any time.
 */
#ifndef SEATRT_ABI_H
#define SEATRT_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SEATRT_ABI_MAJOR 2
#define SEATRT_ABI_MINOR 0

/* The one symbol a plugin library exports (see seatrt_plugin_init_fn). */
#define SEATRT_PLUGIN_ENTRY_SYMBOL "seatrt_plugin_init"

#if defined(_WIN32)
#define SEATRT_PLUGIN_EXPORT __declspec(dllexport)
#else
#define SEATRT_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* True when a struct filled by the other side, whose struct_size is
 * `(s)->struct_size`, contains `field` entirely. */
#define SEATRT_HAS_FIELD(s, type, field) \
  ((s) != NULL && (s)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/* ---------------------------------------------------------------- status */

typedef enum seatrt_status_code {
  SEATRT_OK = 0,
  SEATRT_ERR_UNKNOWN = 1,
  SEATRT_ERR_INTERNAL = 2,      /* a bug in whoever reports it */
  SEATRT_ERR_NOT_FOUND = 3,     /* a named thing (tensor, option, op) is absent */
  SEATRT_ERR_INVALID_ARG = 4,   /* the caller's input is wrong; message says which */
  SEATRT_ERR_UNSUPPORTED = 5,   /* never possible here (dtype, op, format) */
  SEATRT_ERR_UNAVAILABLE = 6,   /* not possible now; retrying later may work */
  SEATRT_ERR_OUT_OF_MEMORY = 7,
  SEATRT_ERR_CANCELLED = 8,
  SEATRT_ERR_NON_FINITE = 9     /* a NaN or infinity was produced or detected */
} seatrt_status_code;

/* Opaque; made by the host. */
typedef struct seatrt_status seatrt_status;

/* ---------------------------------------------------------------- logging */

typedef enum seatrt_log_level {
  SEATRT_LOG_DEBUG = 0,
  SEATRT_LOG_INFO = 1,
  SEATRT_LOG_WARN = 2,
  SEATRT_LOG_ERROR = 3
} seatrt_log_level;

/* --------------------------------------------------------------- host API */

/* The functions the host offers to plugins.  Passed to seatrt_plugin_init;
 * owned by the host and valid until the plugin's finalize() has returned.
 * Every slot may be called from any thread. */
typedef struct seatrt_host_api {
  uint32_t struct_size; /* frozen */
  uint32_t abi_major;   /* frozen: the host's SEATRT_ABI_MAJOR */
  uint32_t abi_minor;   /* frozen: the host's SEATRT_ABI_MINOR */
  uint32_t reserved0;   /* frozen; zero */

  /* Creates a status.  `message` is copied (may be NULL).  Returns a status
   * owned by the caller, who passes it on (returning it transfers ownership)
   * or frees it with status_free.  Never returns NULL, even for SEATRT_OK
   * (but functions signal success by returning NULL, not an OK status). */
  seatrt_status* (*status_create)(seatrt_status_code code, const char* message);
  /* Frees a status; NULL is allowed and ignored. */
  void (*status_free)(seatrt_status* status);
  /* Reads a status.  The message is owned by the status and valid until it
   * is freed.  A NULL status reads as SEATRT_OK / "". */
  seatrt_status_code (*status_code)(const seatrt_status* status);
  const char* (*status_message)(const seatrt_status* status);

  /* Writes one log line under the host's logger, tagged with `plugin`.
   * Both strings are read during the call only. */
  void (*log)(seatrt_log_level level, const char* plugin, const char* message);
} seatrt_host_api;

/* ------------------------------------------------------- plugin descriptor */

/* Bit flags for seatrt_plugin.kinds. */
typedef enum seatrt_plugin_kind {
  SEATRT_KIND_ARCHITECTURE = 1u << 0,
  SEATRT_KIND_QUANTIZATION = 1u << 1,
  SEATRT_KIND_KERNELS = 1u << 2,
  SEATRT_KIND_TOOL_PARSER = 1u << 3,
  SEATRT_KIND_REASONING_PARSER = 1u << 4
} seatrt_plugin_kind;

struct seatrt_arch_api;          /* model.h */
struct seatrt_quant_api;         /* model.h */
struct seatrt_kernel_api;        /* kernels.h */
struct seatrt_parser_api;        /* parser.h */

/* What a plugin library is and provides.  Filled by the plugin as static
 * data; owned by the plugin and valid (unchanged) until the library is
 * unloaded, which the host does only after finalize() returned. */
typedef struct seatrt_plugin {
  uint32_t struct_size; /* frozen */
  uint32_t abi_major;   /* frozen: the SEATRT_ABI_MAJOR the plugin was built with */
  uint32_t abi_minor;   /* frozen: the SEATRT_ABI_MINOR the plugin was built with */
  uint32_t kinds;       /* frozen position: OR of seatrt_plugin_kind */

  const char* name;        /* short, unique among plugins of a kind: "gemma4", "cpu" */
  const char* version;     /* the plugin's own version, e.g. "0.1.0" */
  const char* description; /* one line */

  /* Called once by the host after the ABI check succeeded, before any other
   * slot.  Returns NULL on success, or a status (ownership to the host) whose
   * message the host shows the operator; the library is then not used.
   * `host` is valid until finalize() returns.  Never called concurrently. */
  seatrt_status* (*initialize)(const seatrt_host_api* host);

  /* Called once before unload; all objects the plugin made have been
   * destroyed.  Must join any thread the plugin started.  May be NULL. */
  void (*finalize)(void);

  /* One table per kind in `kinds`, NULL for the others.  Each is owned by
   * the plugin and valid until unload. */
  const struct seatrt_arch_api* architecture;
  const struct seatrt_quant_api* quantization;
  const struct seatrt_kernel_api* kernels;
  const struct seatrt_parser_api* tool_parser;
  const struct seatrt_parser_api* reasoning_parser;
} seatrt_plugin;

/* The entry point, exported as SEATRT_PLUGIN_ENTRY_SYMBOL.  Frozen for all
 * majors.  Must do no work beyond returning the plugin's static descriptor:
 * no allocation, no threads, no device calls (the host probes libraries it
 * may never use).  `host` is valid for the call; keep it only after
 * initialize() is called with it.  Returns NULL only if the plugin cannot
 * describe itself at all.  Called from one thread at a time. */
typedef const seatrt_plugin* (*seatrt_plugin_init_fn)(const seatrt_host_api* host);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SEATRT_ABI_H */
