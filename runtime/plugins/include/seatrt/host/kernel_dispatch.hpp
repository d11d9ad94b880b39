// The kernel table the architecture plugin sees: the selected provider,
// with a same-device fallback provider (normally "cpu") for the operations
// it does not support.
//
// How it works: the dispatch table's slots are host functions; its context
// (made by create_context) holds one context of each provider, and each
// slot forwards to the provider chosen for it with that provider's context.
//
// Rules (write them down because they are easy to get wrong):
// - Device management (alloc, free_memory, memory_info, copy, memset_zero,
//   streams, weight layouts/prepare/release) always comes from the primary;
//   it is never filled from the fallback (memory of one provider means
//   nothing to another).  A primary lacking a required one has it listed
//   in missing_ops().
// - Operations are routed one at a time by supports(): the primary when it
//   supports the op, else the fallback ONLY when both providers run on the
//   same device kind (today: both CPU).  The fallback then runs with stream
//   NULL: CPU operations complete before returning, so order with the
//   primary's work is kept.  An op neither supports fails UNSUPPORTED,
//   naming the op and the providers asked.
// - A primary on another device (CUDA) is never helped by staging tensors
//   through host memory (staging silently would hide a 100x slowdown).
// - Graphs: plan() hands the whole graph to the primary's planner when it
//   has one and supports every node; otherwise the host makes a plan of its
//   own that routes each node once, at plan time, and runs the nodes in
//   order on launch.  plan_describe says which provider runs each node.
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

// A slot of the table and who serves it.
struct OpSource {
  std::string op;        // "alloc", "run"
  std::string provider;  // "cuda", "cuda+cpu" (run: primary, then fallback); "" missing; "-" optional, absent
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

  // Every slot of the table and the provider(s) serving it.
  const std::vector<OpSource>& sources() const { return sources_; }
  // Required slots neither provider has.
  std::vector<std::string> missing_ops() const;
  // Throws Error listing missing slots among `required` (all when empty).
  void require(const std::vector<std::string>& required = {}) const;

  // The provider that runs `op` with a context of this dispatch ("cpu"),
  // or "" when neither supports it.
  std::string provider_for(seatrt_kernel_context* ctx, const seatrt_op& op) const;

  // Makes a context: the primary's with `options_toml` on `device_index`,
  // and, when a same-device fallback exists, the fallback's ("" options,
  // device 0).  Owned by the caller; free with destroy_context (or the
  // table's destroy slot).  Throws Error with the provider's message.
  seatrt_kernel_context* create_context(const std::string& options_toml, int device_index) const;
  void destroy_context(seatrt_kernel_context* ctx) const;

  // The provider's own context inside a dispatch context (e.g. to call
  // provider extras).
  static seatrt_kernel_context* primary_context(seatrt_kernel_context* ctx);

  struct Impl;  // public only so the slot functions can name it

 private:
  std::unique_ptr<Impl> impl_;
  std::vector<OpSource> sources_;
};

}  // namespace seatrt::host
