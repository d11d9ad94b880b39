#include "seatrt/model/model_session.hpp"

#include "seatrt/host/status.hpp"

namespace seatrt::model {

std::vector<PluginHandle> model_plugin_candidates(const host::SeatConfig& seat, const host::SeatPlugins& plugins) {
  std::vector<PluginHandle> out;
  const auto add = [&](const std::shared_ptr<host::LoadedPlugin>& p) {
    out.push_back(PluginHandle{p->name(), &p->descriptor(), p});
  };
  if (plugins.architecture) add(plugins.architecture);
  if (plugins.quantization) add(plugins.quantization);
  const bool scan_arch = !plugins.architecture;
  const bool scan_quant = !plugins.quantization && seat.model.quantization != "none";
  if (!scan_arch && !scan_quant) return out;
  host::PluginRegistry registry(plugins.search_paths);
  for (const auto& candidate : registry.scan()) {
    if (!candidate.error.empty()) continue;
    const bool wanted = (scan_arch && (candidate.kinds & SEATRT_KIND_ARCHITECTURE)) ||
                        (scan_quant && (candidate.kinds & SEATRT_KIND_QUANTIZATION));
    if (!wanted) continue;
    try {
      add(registry.load_file(candidate.path));
    } catch (const host::Error&) {
      // A library that cannot load is reported by `seatrt plugins`; it is
      // simply not a candidate here.
    }
  }
  return out;
}

ModelSession::ModelSession(std::vector<std::filesystem::path> search_paths, const std::string& provider) {
  seat_.plugins.search_paths = std::move(search_paths);
  seat_.kernels.provider = provider;
  plugins_ = host::load_seat_plugins(seat_);
  context_ = plugins_.dispatch->create_context("", 0);
  loader_ = std::make_unique<ModelLoader>(host::host_api(), model_plugin_candidates(seat_, plugins_));
}

ModelSession::~ModelSession() {
  model_.reset();
  if (context_) plugins_.dispatch->destroy_context(context_);
}

std::unique_ptr<PreparedModel> ModelSession::prepare(const std::filesystem::path& model_dir) const {
  return loader_->prepare(model_dir);
}

const LoadedModel& ModelSession::load(const std::filesystem::path& model_dir, int64_t max_batch_tokens) {
  model_.reset();
  model_ = loader_->load(loader_->prepare(model_dir), plugins_.dispatch->table(), context_, max_batch_tokens);
  return *model_;
}

}  // namespace seatrt::model
