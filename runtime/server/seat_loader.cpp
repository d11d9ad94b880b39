#include "seat_loader.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <boost/asio/ip/address.hpp>

#include "engine/abi_model_runner.hpp"
#include "engine/memory_plan.hpp"
#include "engine/workspace_reserve.hpp"
#include "seat_kv.hpp"
#include "seatrt/host/logging.hpp"
#include "seatrt/host/seat_plugins.hpp"
#include "seatrt/host/status.hpp"
#include "seatrt/model/model_loader.hpp"
#include "seatrt/model/model_session.hpp"
#include "seatrt/text/chat_messages.hpp"
#include "seatrt/text/chat_template.hpp"
#include "seatrt/text/hf_tokenizer.hpp"

namespace seatrt::server {

namespace fs = std::filesystem;
using nlohmann::json;

struct LoadedSeat::Parts {
  host::SeatPlugins plugins;
  seatrt_kernel_context* context = nullptr;
  std::unique_ptr<model::ModelLoader> loader;
  std::unique_ptr<model::LoadedModel> model;
  std::shared_ptr<text::ChatTemplate> chat_template;
  ~Parts() {
    model.reset();
    if (context) plugins.dispatch->destroy_context(context);
  }
};

LoadedSeat::LoadedSeat() : parts_(std::make_unique<Parts>()) {}

LoadedSeat::~LoadedSeat() {
  runtime_.engine.reset();  // the engine thread stops before the model goes
  parts_.reset();
}

namespace {

std::vector<int32_t> generation_eos_ids(const std::string& generation_config_json) {
  std::vector<int32_t> ids;
  if (generation_config_json.empty()) return ids;
  const json g = json::parse(generation_config_json, nullptr, false);
  if (!g.is_object() || !g.contains("eos_token_id")) return ids;
  const auto& e = g["eos_token_id"];
  if (e.is_number_integer()) ids.push_back(e.get<int32_t>());
  if (e.is_array())
    for (const auto& v : e)
      if (v.is_number_integer()) ids.push_back(v.get<int32_t>());
  return ids;
}

json plugin_json(const char* role, const std::shared_ptr<host::LoadedPlugin>& p) {
  return {{"role", role}, {"name", p->name()}, {"version", p->version()}, {"abi", p->abi_version()},
          {"path", p->path().string()}};
}

}  // namespace

SeatTextFiles seat_text_files(const host::SeatConfig& seat) {
  SeatTextFiles f;
  f.tokenizer = seat.model.tokenizer ? *seat.model.tokenizer : seat.model.path / "tokenizer.json";
  const fs::path config = f.tokenizer.parent_path() / "tokenizer_config.json";
  if (fs::exists(config)) f.tokenizer_config = config.string();
  f.chat_template = seat.model.chat_template ? *seat.model.chat_template : seat.model.path / "chat_template.jinja";
  // A template the seat file names must be there; only the default one,
  // beside the model, may be absent (the seat then serves completions).
  if (seat.model.chat_template && !fs::is_regular_file(f.chat_template))
    throw host::Error(SEATRT_ERR_NOT_FOUND, "model.chat_template '" + f.chat_template.string() +
                                                (fs::exists(f.chat_template) ? "' is not a file" : "' does not exist"));
  return f;
}

void check_seat_text(const host::SeatConfig& seat, std::ostream& out) {
  const SeatTextFiles files = seat_text_files(seat);
  const auto tokenizer = text::load_hf_tokenizer(files.tokenizer.string(), files.tokenizer_config);
  out << "tokenizer: " << files.tokenizer.string() << " (" << tokenizer->vocab_size() << " tokens)\n";
  if (!fs::exists(files.chat_template)) {
    out << "chat template: none at " << files.chat_template.string() << " (/v1/chat/completions unavailable)\n";
    return;
  }
  (void)text::ChatTemplate::from_files(files.chat_template.string(), files.tokenizer_config);
  out << "chat template: " << files.chat_template.string() << "\n";
}

std::optional<std::string> check_seat_server(const host::SeatConfig& seat) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(seat.server.host, ec);
  if (ec)
    throw std::runtime_error(seat.file.string() + ": [server] host '" + seat.server.host +
                             "' is not an IP address (e.g. 127.0.0.1, 0.0.0.0 or ::1)");
  if (!seat.server.api_key_env) return std::nullopt;
  const char* key = std::getenv(seat.server.api_key_env->c_str());
  if (!key || !*key)
    throw std::runtime_error(seat.file.string() + ": [server] api_key_env names $" + *seat.server.api_key_env +
                             ", which is not set (or empty) in the environment");
  return std::string(key);
}

std::unique_ptr<LoadedSeat> LoadedSeat::load(const host::SeatConfig& seat) {
  auto log = host::logger();
  std::unique_ptr<LoadedSeat> out(new LoadedSeat());
  Parts& parts = *out->parts_;
  SeatRuntime& rt = out->runtime_;

  // Plugins and the model.
  parts.plugins = host::load_seat_plugins(seat);
  parts.context = parts.plugins.dispatch->create_context(seat.kernels.options_toml, seat.kernels.device);
  parts.loader = std::make_unique<model::ModelLoader>(host::host_api(), model::model_plugin_candidates(seat, parts.plugins));
  const int64_t max_batch = seat.scheduler.max_num_batched_tokens;
  parts.model = parts.loader->load(parts.loader->prepare(seat.model.path), parts.plugins.dispatch->table(),
                                   parts.context, max_batch, seat.model.options_toml);
  const model::LoadedModel& m = *parts.model;
  const seatrt_model_info& info = m.info();
  const int64_t max_model_len = seat_max_model_len(seat, info.max_position);

  // KV pool, planned in bytes from the architecture's per-layer specs.
  const seatrt_kernel_api* kernels = parts.plugins.dispatch->table();
  std::vector<engine::KvLayerSpec> kv_layers;
  for (int32_t l = 0; l < info.num_layers; ++l) {
    const auto& s = info.kv_layers[l];
    kv_layers.push_back({s.kv_heads, s.head_dim, s.window, s.single_tensor != 0});
  }
  const engine::KvPlanInput kv_in = seat_kv_input(seat, kv_layers, max_model_len, kernels->device_kind);
  const engine::KvPlan plan = plan_seat_kv(seat, kv_in);
  log->info("{}", engine::describe(plan));

  // Memory plan against the device.
  engine::MemoryPlan mem;
  mem.weight_bytes = info.weight_bytes;
  mem.workspace_bytes = info.workspace_bytes;
  mem.kv_bytes = plan.pool_bytes;
  const auto S = static_cast<uint64_t>(seat.scheduler.max_num_seqs);
  const auto max_blocks = static_cast<uint64_t>(max_model_len / seat.cache.block_size + 2);
  mem.staging_bytes = static_cast<uint64_t>(max_batch) * 24 + S * (max_blocks * 8 + 16) +
                      S * static_cast<uint64_t>(info.vocab_size) * 4;
  const auto device_free = [&] {
    size_t free_bytes = 0, total_bytes = 0;
    host::throw_if_error(kernels->memory_info(parts.context, &free_bytes, &total_bytes), "kernel provider memory_info");
    return static_cast<uint64_t>(free_bytes);
  };
  mem.free_bytes = device_free();
  log->info("{}", mem.describe());
  engine::check_memory_plan(mem);

  engine::AbiModel abi;
  abi.host = host::host_api();
  abi.arch = &m.arch();
  abi.model = m.model();
  abi.kernels = kernels;
  abi.context = parts.context;
  abi.vocab_size = info.vocab_size;
  abi.layers = kv_in.layers;
  auto runner = std::make_unique<engine::AbiModelRunner>(abi, plan, max_batch, seat.scheduler.max_num_seqs, max_model_len,
                                                         seat.kernels.graphs);
  const bool provider_samples = runner->provider_samples();

  // The provider's working memory, allocated and measured before the seat
  // is ready (engine/workspace_reserve.hpp).
  const bool reserve = seat.kernels.reserve_workspace.value_or(kernels->device_kind != SEATRT_DEVICE_CPU);
  json reservation = nullptr;
  if (reserve) {
    engine::WorkspaceReserveLimits limits;
    limits.max_num_batched_tokens = max_batch;
    limits.max_num_seqs = seat.scheduler.max_num_seqs;
    limits.max_model_len = max_model_len;
    limits.table_width = runner->max_blocks();
    limits.vocab_size = info.vocab_size;
    const engine::WorkspaceReservation r = engine::reserve_workspace(*runner, plan, limits, device_free);
    mem.provider_workspace_bytes = r.bytes;
    mem.free_after_reserve_bytes = r.free_after;
    const std::string summary = engine::describe(r);
    log->info("{}", summary);
    log->info("{}", mem.describe());
    reservation = {{"bytes", r.bytes}, {"prefill_tokens", r.prefill_tokens}, {"decode_seqs", r.decode_seqs},
                   {"table_width", r.table_width}, {"sampled_on_device", r.sampled}, {"ms", r.ms},
                   {"summary", summary}};
  }
  engine::EngineConfig ec;
  ec.scheduler.max_num_seqs = seat.scheduler.max_num_seqs;
  ec.scheduler.max_num_batched_tokens = max_batch;
  ec.scheduler.max_waiting = seat.server.max_queue;
  ec.max_model_len = max_model_len;
  ec.prefix_caching = seat.cache.prefix_caching;
  rt.engine = std::make_shared<engine::Engine>(ec, plan, std::move(runner));
  rt.kernel_provider = parts.plugins.kernels->name();

  // Text boundary.
  const SeatTextFiles files = seat_text_files(seat);
  const std::string& config_path = files.tokenizer_config;
  const fs::path& template_path = files.chat_template;
  rt.tokenizer = text::load_hf_tokenizer(files.tokenizer.string(), config_path);
  for (int32_t id = 0; id < rt.tokenizer->vocab_size(); ++id)
    rt.max_token_bytes = std::max<int64_t>(rt.max_token_bytes, static_cast<int64_t>(rt.tokenizer->token_bytes(id).size()));
  if (fs::exists(template_path)) {
    parts.chat_template = std::make_shared<text::ChatTemplate>(text::ChatTemplate::from_files(template_path.string(), config_path));
    auto tmpl = parts.chat_template;
    rt.render_chat = [tmpl](const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                            const nlohmann::ordered_json& kwargs, bool add_generation_prompt) {
      text::ChatTemplateInputs in;
      in.messages = messages;
      text::prepare_chat_messages(in.messages);  // as vLLM does before rendering
      in.tools = tools;
      in.kwargs = kwargs;
      in.add_generation_prompt = add_generation_prompt;
      return tmpl->render(in);
    };
  } else {
    log->warn("no chat template at {}: /v1/chat/completions is unavailable", template_path.string());
  }
  rt.end_token_ids = generation_eos_ids(m.prepared().config().generation_config_json);
  if (rt.tokenizer->eos_id() >= 0) rt.end_token_ids.push_back(rt.tokenizer->eos_id());

  // Seat facts.
  rt.seat_name = seat.seat.name;
  rt.served_names = seat.seat.served_model_names;
  rt.max_model_len = max_model_len;
  rt.default_chat_template_kwargs = seat.parsers.chat_template_kwargs;
  rt.exclude_tools_when_tool_choice_none = seat.parsers.exclude_tools_when_tool_choice_none;
  // The checked copies (seat_plugins.hpp), which live as long as the seat;
  // one table serving both kinds stays one (ParserChain then makes one
  // instance per request).
  const auto& pl = parts.plugins;
  const bool one_table = pl.tool_parser && pl.reasoning_parser &&
                         pl.tool_parser->descriptor().tool_parser == pl.reasoning_parser->descriptor().reasoning_parser;
  if (pl.reasoning_parser)
    rt.reasoning_parser = {&pl.reasoning_parser_table, seat.parsers.reasoning_options_toml, pl.reasoning_parser->name()};
  if (pl.tool_parser)
    rt.tool_parser = {one_table ? &pl.reasoning_parser_table : &pl.tool_parser_table, seat.parsers.tool_options_toml,
                      pl.tool_parser->name()};
  if (auto key = check_seat_server(seat)) rt.api_key = *key;
  rt.host = seat.server.host;
  rt.port = seat.server.port;
  rt.drain_timeout_s = seat.server.drain_timeout_s;
  rt.max_queue = seat.server.max_queue;
  rt.max_connections = seat.server.max_connections;
  rt.idle_timeout_s = seat.server.idle_timeout_s;
  rt.request_timeout_s = seat.server.request_timeout_s;

  json plugins = json::array();
  plugins.push_back(plugin_json("kernels", parts.plugins.kernels));
  if (parts.plugins.fallback) plugins.push_back(plugin_json("kernels_fallback", parts.plugins.fallback));
  if (parts.plugins.tool_parser) plugins.push_back(plugin_json("tool_parser", parts.plugins.tool_parser));
  if (parts.plugins.reasoning_parser) plugins.push_back(plugin_json("reasoning_parser", parts.plugins.reasoning_parser));
  json kv_groups = json::array();
  for (const auto* g : {&plan.full, &plan.windowed})
    if (*g)
      kv_groups.push_back({{"window", (*g)->window}, {"layers", (*g)->layers.size()},
                           {"bytes_per_token", (*g)->bytes_per_token}, {"blocks", (*g)->num_blocks}});
  rt.seat_info = {
      {"seat", seat.seat.name},
      {"config", host::seat_to_toml(seat)},
      {"plugins", plugins},
      {"model", {{"path", seat.model.path.string()}, {"architecture", m.prepared().arch_name()},
                 {"quantization", m.prepared().quant_name()}, {"weight_bytes", info.weight_bytes},
                 {"workspace_bytes", info.workspace_bytes}}},
      // Where tokens are chosen: the provider's sample op over the logits on
      // its device, or the engine's host sampler for providers without one.
      {"sampling", provider_samples ? "kernel provider" : "host"},
      // Whether requests may carry logit_bias (the host sampler honours it;
      // a provider's sample op when it supports rows that carry one).
      {"logit_bias", rt.engine ? rt.engine->supports_logit_bias() : false},
      {"kv_pool", {{"dtype", engine::kv_dtype_name(plan.dtype)}, {"groups", kv_groups},
                   {"summary", engine::describe(plan)}}},
      {"memory_plan", {{"weights", mem.weight_bytes}, {"kv_pool", mem.kv_bytes},
                       {"workspace", mem.workspace_bytes + mem.staging_bytes},
                       {"provider_workspace", mem.provider_workspace_bytes}, {"free_at_start", mem.free_bytes},
                       {"free_after_reserve", mem.free_after_reserve_bytes},
                       {"provider_workspace_reserved", reservation}, {"summary", mem.describe()}}},
  };
  return out;
}

}  // namespace seatrt::server
