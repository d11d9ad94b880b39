// The kernel table the architecture plugin sees: the selected provider's
// operations, with every operation it leaves NULL taken from a fallback
// provider (normally "cpu").
//
// How it works: the dispatch table's slots are host trampolines; its
// context (made by create_context) holds one context of each provider, and
// each trampoline forwards to the provider chosen for that slot with that
// provider's context.
//
// Rules (write them down because they are easy to get wrong):
// - Device management (alloc, free_memory, memory_info, copy, memset_zero,
//   streams, weight layouts/prepare/release) and graph capture always come
//   from the primary; they are never filled from the fallback (memory of
//   one provider means nothing to another).  A primary lacking one of them
//   has it listed in missing_ops().
// - Operations (elementwise ... sample) are filled from the fallback per
//   slot ONLY when both providers run on the same device kind (today: both
//   CPU).  The fallback then runs with stream NULL: CPU operations complete
//   before returning, so order with the primary's work is kept.
// - A primary on another device (CUDA) with a NULL operation is NOT staged
//   through host memory: that operation is listed in missing_ops() and the
//   seat refuses to load, naming them (staging silently would hide a
//   100x slowdown).
// - probe and create are NULL in the dispatch table: the host makes the
//   context with create_context().
// - struct_size is respected: a provider compiled with a smaller table has
//   its trailing slots absent.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "seatrt/kernels.h"

namespace seatrt::host {

struct KernelProvider {
  const seatrt_kernel_api* api = nullptr;  // owned by the plugin; outlives the dispatch
  std::string name;                        // for reports: "cuda", "cpu"
};

struct OpSource {
  std::string op;        // "rms_norm"
  std::string provider;  // the provider's name; "" when missing in both; "-" optional, absent
};

class KernelDispatch {
 public:
  // `fallback.api` may be NULL (no fallback).  Both tables must outlive the
  // dispatch and every context it made.
  KernelDispatch(KernelProvider primary, KernelProvider fallback);
  ~KernelDispatch();
  KernelDispatch(const KernelDispatch&) = delete;
  KernelDispatch& operator=(const KernelDispatch&) = delete;

  // The combined table; valid while the dispatch lives.  Use it only with
  // contexts from create_context().
  const seatrt_kernel_api* table() const;

  // Every slot of the table (device management, operations, graph) and the
  // provider it routes to.
  const std::vector<OpSource>& sources() const { return sources_; }
  // Slots neither provider has (or that may not be filled across devices).
  std::vector<std::string> missing_ops() const;
  // Throws Error listing missing ops among `required` (all when empty).
  void require(const std::vector<std::string>& required = {}) const;

  // Makes a context: the primary's with `options_toml` on `device_index`,
  // and, when any slot routes to the fallback, the fallback's ("" options,
  // device 0).  Owned by the caller; free with destroy_context (or the
  // table's destroy slot).  Throws Error with the provider's message.
  seatrt_kernel_context* create_context(const std::string& options_toml, int device_index) const;
  void destroy_context(seatrt_kernel_context* ctx) const;

  // The provider's own context inside a dispatch context (e.g. to call
  // probe-independent provider extras).
  static seatrt_kernel_context* primary_context(seatrt_kernel_context* ctx);

  struct Impl;  // public only so the trampolines can name it

 private:
  std::unique_ptr<Impl> impl_;
  std::vector<OpSource> sources_;
};

}  // namespace seatrt::host
