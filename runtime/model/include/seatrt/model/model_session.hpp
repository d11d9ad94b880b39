// Everything needed to run a checkpoint outside a seat (`seatrt eval`,
// `seatrt inspect`, the tests): plugins found in search paths, the kernel
// dispatch and its context, and the model chosen by ModelLoader.  Members
// are torn down in the right order (model, then context, then plugins).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "seatrt/host/seat_config.hpp"
#include "seatrt/host/seat_plugins.hpp"
#include "seatrt/model/model_loader.hpp"

namespace seatrt::model {

// The architecture and quantization plugins the loader may choose from: the
// seat's explicitly named ones, else every such plugin in the search paths.
std::vector<PluginHandle> model_plugin_candidates(const host::SeatConfig& seat, const host::SeatPlugins& plugins);

class ModelSession {
 public:
  // `provider`: "auto", "cpu", "cuda" or a plugin path; `search_paths`
  // empty = the default plugin directories.
  ModelSession(std::vector<std::filesystem::path> search_paths, const std::string& provider);
  ~ModelSession();
  ModelSession(const ModelSession&) = delete;
  ModelSession& operator=(const ModelSession&) = delete;

  // Opens the checkpoint and chooses plugins (no device work).
  std::unique_ptr<PreparedModel> prepare(const std::filesystem::path& model_dir) const;
  // inspect() + create() on this session's provider; the session keeps it.
  const LoadedModel& load(const std::filesystem::path& model_dir, int64_t max_batch_tokens);

  const host::SeatPlugins& plugins() const { return plugins_; }

 private:
  host::SeatConfig seat_;
  host::SeatPlugins plugins_;
  seatrt_kernel_context* context_ = nullptr;
  std::unique_ptr<ModelLoader> loader_;
  std::unique_ptr<LoadedModel> model_;
};

}  // namespace seatrt::model
