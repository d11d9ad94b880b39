// See smoke.hpp.
#include "seatrt/host/smoke.hpp"

#include <cstdio>
#include <map>
#include <vector>

#include "seatrt/cpp/op_registry.hpp"
#include "seatrt/cpp/tensor.hpp"
#include "seatrt/host/plugin_registry.hpp"
#include "seatrt/host/status.hpp"

namespace seatrt::host {

const char* const kParserSmokeText = "Checking.\nCALL get_weather {\"city\": \"Paris\"}\n";

namespace {

seatrt_tensor f32_tensor(void* data, std::initializer_list<int64_t> shape, int32_t device_kind,
                         int device) {
  return sdk::contiguous_tensor(data, SEATRT_DTYPE_F32, shape, device_kind, device_kind == SEATRT_DEVICE_CPU ? 0 : device);
}

// Device buffers made through the dispatch table, freed on scope exit.
class DeviceBuffers {
 public:
  DeviceBuffers(const seatrt_kernel_api& api, seatrt_kernel_context* ctx) : api_(api), ctx_(ctx) {}
  ~DeviceBuffers() {
    for (void* p : owned_) api_.free_memory(ctx_, p);
  }
  void* upload(seatrt_stream stream, const std::vector<float>& host) {
    void* p = nullptr;
    throw_if_error(api_.alloc(ctx_, host.size() * sizeof(float), &p), "kernel smoke: alloc");
    owned_.push_back(p);
    throw_if_error(api_.copy(ctx_, stream, p, api_.device_kind, host.data(), SEATRT_DEVICE_CPU,
                             host.size() * sizeof(float)),
                   "kernel smoke: copy to device");
    return p;
  }

 private:
  const seatrt_kernel_api& api_;
  seatrt_kernel_context* ctx_;
  std::vector<void*> owned_;
};

std::string json_string(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

struct Collected {
  std::string content, reasoning;
  std::map<int32_t, std::pair<std::string, std::string>> calls;  // index -> (name, args)
};

}  // namespace

std::string kernel_smoke(const KernelDispatch& dispatch, const std::string& options_toml,
                         int device) {
  const seatrt_kernel_api& api = *dispatch.table();
  std::vector<float> x = {1, 2, 3, 4, -1, 0.5f, 0, 2};
  std::vector<float> w = {1, 0.5f, 2, 1};
  std::vector<float> y(8, 0.0f);
  seatrt_kernel_context* ctx = dispatch.create_context(options_toml, device);
  struct ContextGuard {
    const KernelDispatch& d;
    seatrt_kernel_context* c;
    ~ContextGuard() { d.destroy_context(c); }
  } guard{dispatch, ctx};

  std::string provider;
  const bool on_host = api.device_kind == SEATRT_DEVICE_CPU;
  seatrt_stream stream = nullptr;
  if (!on_host) throw_if_error(api.stream_create(ctx, &stream), "kernel smoke: stream_create");
  struct StreamGuard {
    const seatrt_kernel_api& a;
    seatrt_kernel_context* c;
    seatrt_stream s;
    ~StreamGuard() {
      if (s) a.stream_destroy(c, s);
    }
  } stream_guard{api, ctx, stream};
  {
    DeviceBuffers buffers(api, ctx);
    void* xd = on_host ? x.data() : buffers.upload(stream, x);
    void* wd = on_host ? w.data() : buffers.upload(stream, w);
    void* yd = on_host ? y.data() : buffers.upload(stream, y);
    seatrt_tensor xt = f32_tensor(xd, {2, 4}, api.device_kind, device);
    seatrt_tensor wt = f32_tensor(wd, {4}, api.device_kind, device);
    seatrt_tensor yt = f32_tensor(yd, {2, 4}, api.device_kind, device);
    seatrt_rms_norm_args args{};
    args.struct_size = sizeof args;
    args.x = &xt;
    args.weight = &wt;
    args.eps = 1e-6f;
    args.out = &yt;
    const seatrt_op op = sdk::make_op<SEATRT_OP_RMS_NORM>(args);
    provider = dispatch.provider_for(ctx, op);
    if (provider.empty()) throw Error(SEATRT_ERR_UNSUPPORTED, "kernel smoke: no provider supports rms_norm");
    throw_if_error(api.run(ctx, stream, &op), "kernel smoke: rms_norm via " + provider);
    if (!on_host) {
      throw_if_error(api.copy(ctx, stream, y.data(), SEATRT_DEVICE_CPU, yd, api.device_kind,
                              y.size() * sizeof(float)),
                     "kernel smoke: copy from device");
      throw_if_error(api.stream_sync(ctx, stream), "kernel smoke: stream_sync");
    }
  }
  std::string out = "rms_norm via " + provider + " -> [";
  for (std::size_t i = 0; i < y.size(); ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.4f", i ? ", " : "", static_cast<double>(y[i]));
    out += buf;
  }
  return out + "]";
}

std::string parser_smoke(const seatrt_parser_api* table, const std::string& options_toml,
                         const nlohmann::json& chat_template_kwargs) {
  const seatrt_parser_api api = read_table(table);
  if (!api.create || !api.feed || !api.finish || !api.destroy)
    throw Error(SEATRT_ERR_INVALID_ARG, "parser table lacks create/feed/finish/destroy");

  // A vocabulary with no tokens: the smoke feeds text only.
  seatrt_vocab vocab{};
  vocab.struct_size = sizeof vocab;
  vocab.size = 0;
  vocab.token_bytes = [](const seatrt_vocab*, int32_t, const char** data, size_t* len) {
    *data = "";
    *len = 0;
  };
  vocab.token_id = [](const seatrt_vocab*, const char*) -> int32_t { return -1; };
  vocab.is_special = [](const seatrt_vocab*, int32_t) -> int32_t { return 0; };

  const std::string tools =
      R"([{"type":"function","function":{"name":"get_weather","description":"Weather in a city",)"
      R"("parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}])";
  const std::string kwargs = chat_template_kwargs.dump();
  seatrt_parser_request request{};
  request.struct_size = sizeof request;
  request.request_id = "seatrt-check";
  request.tools_json = tools.c_str();
  request.tool_choice_json = "\"auto\"";
  request.response_format_json = "";
  request.chat_template_kwargs_json = kwargs.c_str();
  request.prompt_tail = "";
  request.prompt_tail_len = 0;
  request.vocab = &vocab;

  Collected got;
  seatrt_parser_events events{};
  events.struct_size = sizeof events;
  events.user_data = &got;
  events.content = [](void* u, const char* text, size_t len) {
    static_cast<Collected*>(u)->content.append(text, len);
  };
  events.reasoning = [](void* u, const char* text, size_t len) {
    static_cast<Collected*>(u)->reasoning.append(text, len);
  };
  events.tool_call = [](void* u, int32_t index, const char*, const char* name, const char* args,
                        size_t len) {
    auto& call = static_cast<Collected*>(u)->calls[index];
    if (name) call.first = name;
    call.second.append(args ? args : "", args ? len : 0);
  };

  seatrt_parser* parser = nullptr;
  throw_if_error(api.create(options_toml.c_str(), &request, &parser), "parser create()");
  struct ParserGuard {
    const seatrt_parser_api& a;
    seatrt_parser* p;
    ~ParserGuard() { a.destroy(p); }
  } guard{api, parser};
  const std::string text = kParserSmokeText;
  throw_if_error(api.feed(parser, nullptr, 0, text.data(), text.size(), &events), "parser feed()");
  int32_t reason = SEATRT_FINISH_NONE;
  throw_if_error(api.finish(parser, SEATRT_FINISH_STOP, &events, &reason), "parser finish()");

  std::string out = "content=" + json_string(got.content);
  if (!got.reasoning.empty()) out += " reasoning=" + json_string(got.reasoning);
  for (const auto& [index, call] : got.calls)
    out += " tool_call[" + std::to_string(index) + "]=" + call.first + "(" + call.second + ")";
  static const char* const kReasons[] = {"none", "stop", "length", "tool_calls", "error"};
  out += " finish=";
  out += reason >= 0 && reason <= 4 ? kReasons[reason] : std::to_string(reason).c_str();
  return out;
}

}  // namespace seatrt::host
