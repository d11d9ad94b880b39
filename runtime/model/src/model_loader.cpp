#include "seatrt/model/model_loader.hpp"

#include "seatrt/model/finite_check.hpp"

#include <cstring>

#include "seatrt/model/status.hpp"

namespace seatrt::model {

namespace {

template <typename T>
T read_table(const T* table) {
  T copy{};
  if (!table) return copy;
  std::memcpy(&copy, table, std::min<std::size_t>(table->struct_size, sizeof(T)));
  return copy;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "none" : out;
}

}  // namespace

PreparedModel::~PreparedModel() {
  source_.reset();
  if (scheme_ && quant_api_.destroy) quant_api_.destroy(scheme_);
}

void PreparedModel::inspect(const std::function<void(const std::string&)>& report) const {
  if (!arch_api_.inspect) return;
  struct Sink {
    const std::function<void(const std::string&)>* fn;
  } sink{&report};
  const seatrt_report_fn callback = [](void* user, const char* line) {
    auto* s = static_cast<Sink*>(user);
    if (*s->fn && line) (*s->fn)(line);
  };
  check_status(host_, arch_api_.inspect(source_->inspect_view(), callback, &sink),
               "architecture plugin '" + arch_.name + "' refuses " + checkpoint_->dir().string());
}

std::optional<PreparedModel::Shape> PreparedModel::describe() const {
  if (!arch_api_.describe) return std::nullopt;
  Shape s;
  s.layers.resize(4096);  // far past any model's layer count (the call says if not)
  s.info.struct_size = sizeof(s.info);
  check_status(host_,
               arch_api_.describe(source_->inspect_view(), &s.info, s.layers.data(),
                                  static_cast<int32_t>(s.layers.size())),
               "architecture plugin '" + arch_.name + "' describe");
  if (s.info.num_layers < 0 || s.info.num_layers > static_cast<int32_t>(s.layers.size()))
    throw StatusError(SEATRT_ERR_INTERNAL, "architecture plugin '" + arch_.name + "' describe: " +
                                               std::to_string(s.info.num_layers) + " layers");
  s.layers.resize(static_cast<size_t>(s.info.num_layers));
  s.info.kv_layers = nullptr;  // (a copy of the Shape would leave it dangling)
  return s;
}

LoadedModel::~LoadedModel() {
  if (model_ && prepared_->arch_api_.destroy) prepared_->arch_api_.destroy(model_);
}

ModelLoader::ModelLoader(const seatrt_host_api* host, std::vector<PluginHandle> plugins)
    : host_(host), plugins_(std::move(plugins)) {}

std::unique_ptr<PreparedModel> ModelLoader::prepare(const std::filesystem::path& model_dir,
                                                    const std::string& quant_options_toml) const {
  std::unique_ptr<PreparedModel> p(new PreparedModel());
  p->host_ = host_;
  try {
    p->config_ = ModelConfig::read(model_dir);
    p->checkpoint_ = std::make_shared<Checkpoint>(model_dir);
  } catch (const CheckpointError& e) {
    throw StatusError(SEATRT_ERR_INVALID_ARG, e.what());
  }

  // Quantization plugin.
  if (!p->config_.quantization_config_json.empty()) {
    int32_t best = 0;
    std::vector<std::string> tried;
    for (const auto& plugin : plugins_) {
      if (!plugin.descriptor || !(plugin.descriptor->kinds & SEATRT_KIND_QUANTIZATION)) continue;
      const auto api = read_table(plugin.descriptor->quantization);
      if (!api.probe) continue;
      int32_t score = 0;
      check_status(host_, api.probe(p->config_.quantization_config_json.c_str(), &score),
                   "quantization plugin '" + plugin.name + "' probe");
      tried.push_back(plugin.name);
      if (score > best) {
        best = score;
        p->quant_ = plugin;
        p->quant_api_ = api;
      }
    }
    if (!best)
      throw StatusError(SEATRT_ERR_UNSUPPORTED,
                        (model_dir / "config.json").string() + ": no quantization plugin reads quantization_config "
                        "(quant_method '" + p->config_.quant_method + "', format '" + p->config_.quant_format +
                        "'); plugins tried: " + join(tried));
    check_status(host_, p->quant_api_.create(p->config_.quantization_config_json.c_str(), quant_options_toml.c_str(),
                                             &p->scheme_),
                 (model_dir / "config.json").string() + ": quantization_config");
  }

  // Architecture plugin.
  int32_t best = 0;
  std::vector<std::string> tried;
  for (const auto& plugin : plugins_) {
    if (!plugin.descriptor || !(plugin.descriptor->kinds & SEATRT_KIND_ARCHITECTURE)) continue;
    const auto api = read_table(plugin.descriptor->architecture);
    if (!api.probe) continue;
    int32_t score = 0;
    check_status(host_, api.probe(p->config_.config_json.c_str(), &score),
                 "architecture plugin '" + plugin.name + "' probe");
    tried.push_back(plugin.name);
    if (score > best) {
      best = score;
      p->arch_ = plugin;
      p->arch_api_ = api;
    }
  }
  if (!best)
    throw StatusError(SEATRT_ERR_UNSUPPORTED,
                      (model_dir / "config.json").string() + ": no architecture plugin accepts model_type '" +
                          p->config_.model_type + "' (architectures: " + join(p->config_.architectures) +
                          "); plugins tried: " + join(tried));

  p->source_ = std::make_unique<HostModelSource>(
      host_, p->checkpoint_, p->config_,
      QuantBinding{p->scheme_ ? &p->quant_api_ : nullptr, p->scheme_, p->quant_.name});
  return p;
}

std::unique_ptr<LoadedModel> ModelLoader::load(std::unique_ptr<PreparedModel> prepared,
                                               const seatrt_kernel_api* kernels, seatrt_kernel_context* context,
                                               int64_t max_batch_tokens,
                                               const std::string& model_options_toml) const {
  prepared->inspect({});
  check_finite(prepared->checkpoint());
  prepared->source_->attach_kernels(kernels, context, max_batch_tokens);
  std::unique_ptr<LoadedModel> loaded(new LoadedModel());
  loaded->kernels_ = kernels;
  loaded->context_ = context;
  PreparedModel& p = *prepared;
  loaded->prepared_ = std::move(prepared);
  check_status(host_, p.arch_api_.create(p.source_->create_view(), model_options_toml.c_str(), &loaded->model_),
               "architecture plugin '" + p.arch_.name + "' create");
  loaded->info_.struct_size = sizeof(seatrt_model_info);
  check_status(host_, p.arch_api_.info(loaded->model_, &loaded->info_), "model info");
  return loaded;
}

}  // namespace seatrt::model
