// Shared by the end-to-end CUDA checks (tests/cuda/test_e2e_fixtures.cpp)
// and the synthetic-checkpoint decode tool (tools/bench/synth_decode.cpp):
// which kernel provider library to run, whether it can run here, and a
// model session over it with the architecture/quantization plugins.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "seatrt/model/model_session.hpp"

namespace seatrt::e2e {

// The provider's probe: score 0 = cannot run on this machine.
struct ProbeResult {
  unsigned score = 0;
  std::string detail;
};
ProbeResult probe_provider(const std::filesystem::path& provider_library);

// A model session whose kernel provider is `provider_library` and whose
// architecture/quantization plugins are found in `plugin_dir`.  The
// provider's directory is added to the search paths (the host loads a
// provider by path only from inside them).
std::unique_ptr<model::ModelSession> open_session(const std::filesystem::path& plugin_dir,
                                                  const std::filesystem::path& provider_library);

// Copies int32 trace tensors named `name` (e.g. "router_ids") to the host,
// one entry per layer, overwritten at every forward.
class TraceIds {
 public:
  TraceIds(const model::LoadedModel& loaded, std::string name);
  ~TraceIds();
  TraceIds(const TraceIds&) = delete;
  TraceIds& operator=(const TraceIds&) = delete;
  // ids[layer] = the layer's last traced tensor, flattened.
  const std::vector<std::vector<int32_t>>& ids() const { return ids_; }

 private:
  static void callback(void* user, int32_t layer, const char* name, const seatrt_tensor* t);
  const model::LoadedModel& loaded_;
  std::string name_;
  std::vector<std::vector<int32_t>> ids_;
};

}  // namespace seatrt::e2e
