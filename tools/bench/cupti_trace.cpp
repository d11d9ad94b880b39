#include "cupti_trace.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#if __has_include(<cupti_activity.h>)
#include <cupti_activity.h>
#define SEATRT_HAVE_CUPTI 1
#else
#define SEATRT_HAVE_CUPTI 0
#endif

namespace seatrt::bench {

#if SEATRT_HAVE_CUPTI

namespace {

// What the buffer callbacks (called by CUPTI, from its own thread or inside
// a flush) append to; one trace per process.
struct Collected {
  std::mutex mu;
  std::vector<KernelRecord> records;
  uint64_t dropped = 0;
  std::unordered_map<const char*, std::string> names;  // CUPTI keeps one pointer per kernel
};
Collected g_collected;

using GetNextRecordFn = CUptiResult (*)(uint8_t*, size_t, CUpti_Activity**);
GetNextRecordFn g_next_record = nullptr;

constexpr size_t kBufferBytes = 8u << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  // CUPTI wants 8-byte alignment.
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  if (!buffer) return;
  {
    std::lock_guard<std::mutex> lock(g_collected.mu);
    CUpti_Activity* rec = nullptr;
    while (g_next_record && g_next_record(buffer, valid, &rec) == CUPTI_SUCCESS) {
      if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && rec->kind != CUPTI_ACTIVITY_KIND_KERNEL) continue;
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      auto it = g_collected.names.find(k->name);
      if (it == g_collected.names.end())
        it = g_collected.names.emplace(k->name, short_kernel_name(k->name ? k->name : "?")).first;
      g_collected.records.push_back({it->second, k->streamId, k->start, k->end});
    }
  }
  std::free(buffer);
}

template <typename F>
F symbol(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (!p) throw std::runtime_error(std::string("libcupti has no ") + name);
  return reinterpret_cast<F>(p);
}

}  // namespace

struct CuptiTrace::Api {
  void* lib = nullptr;
  CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*enable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*disable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*flush_all)(uint32_t) = nullptr;
  CUptiResult (*timestamp)(uint64_t*) = nullptr;
  CUptiResult (*result_string)(CUptiResult, const char**) = nullptr;
  CUptiResult (*dropped)(CUcontext, uint32_t, size_t*) = nullptr;

  void check(CUptiResult r, const char* what) const {
    if (r == CUPTI_SUCCESS) return;
    const char* s = nullptr;
    if (result_string) result_string(r, &s);
    throw std::runtime_error(std::string(what) + ": " + (s ? s : "CUPTI error " + std::to_string(r)));
  }
  ~Api() {
    if (lib) dlclose(lib);
  }
};

std::unique_ptr<CuptiTrace> CuptiTrace::open(std::string* why) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("SEATRT_CUPTI_LIB")) candidates.emplace_back(env);
  for (const char* c : {"libcupti.so.13", "libcupti.so", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                        "/usr/local/cuda/lib64/libcupti.so.13", "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13"})
    candidates.emplace_back(c);
  auto api = std::make_unique<Api>();
  std::string tried;
  for (const auto& c : candidates) {
    api->lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (api->lib) break;
    tried += (tried.empty() ? "" : ", ") + c;
  }
  if (!api->lib) {
    *why = "libcupti not found (tried " + tried + "; set SEATRT_CUPTI_LIB)";
    return nullptr;
  }
  try {
    api->register_callbacks = symbol<decltype(api->register_callbacks)>(api->lib, "cuptiActivityRegisterCallbacks");
    api->enable = symbol<decltype(api->enable)>(api->lib, "cuptiActivityEnable");
    api->disable = symbol<decltype(api->disable)>(api->lib, "cuptiActivityDisable");
    api->flush_all = symbol<decltype(api->flush_all)>(api->lib, "cuptiActivityFlushAll");
    api->timestamp = symbol<decltype(api->timestamp)>(api->lib, "cuptiGetTimestamp");
    api->result_string = symbol<decltype(api->result_string)>(api->lib, "cuptiGetResultString");
    api->dropped = symbol<decltype(api->dropped)>(api->lib, "cuptiActivityGetNumDroppedRecords");
    g_next_record = symbol<GetNextRecordFn>(api->lib, "cuptiActivityGetNextRecord");
    api->check(api->register_callbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks");
  } catch (const std::exception& e) {
    *why = e.what();
    g_next_record = nullptr;
    return nullptr;
  }
  return std::unique_ptr<CuptiTrace>(new CuptiTrace(std::move(api)));
}

CuptiTrace::CuptiTrace(std::unique_ptr<Api> api) : api_(std::move(api)) {}

CuptiTrace::~CuptiTrace() {
  if (on_) {
    api_->disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    api_->flush_all(1);
  }
}

void CuptiTrace::start() {
  {
    std::lock_guard<std::mutex> lock(g_collected.mu);
    g_collected.records.clear();
  }
  api_->check(api_->enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable(CONCURRENT_KERNEL)");
  on_ = true;
}

uint64_t CuptiTrace::now() const {
  uint64_t t = 0;
  api_->check(api_->timestamp(&t), "cuptiGetTimestamp");
  return t;
}

std::vector<KernelRecord> CuptiTrace::stop(uint64_t* dropped) {
  // Flush with CUPTI_ACTIVITY_FLAG_FLUSH_FORCED (1): also the buffers still
  // being filled.
  api_->check(api_->flush_all(1), "cuptiActivityFlushAll");
  api_->check(api_->disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityDisable");
  on_ = false;
  size_t lost = 0;
  if (api_->dropped(nullptr, 0, &lost) != CUPTI_SUCCESS) lost = 0;
  std::lock_guard<std::mutex> lock(g_collected.mu);
  *dropped = lost;
  return std::move(g_collected.records);
}

#else  // no CUPTI headers at build time

struct CuptiTrace::Api {};

std::unique_ptr<CuptiTrace> CuptiTrace::open(std::string* why) {
  *why = "built without CUPTI's headers (cupti_activity.h)";
  return nullptr;
}
CuptiTrace::CuptiTrace(std::unique_ptr<Api> api) : api_(std::move(api)) {}
CuptiTrace::~CuptiTrace() = default;
void CuptiTrace::start() {}
uint64_t CuptiTrace::now() const { return 0; }
std::vector<KernelRecord> CuptiTrace::stop(uint64_t* dropped) {
  *dropped = 0;
  return {};
}

#endif

}  // namespace seatrt::bench
