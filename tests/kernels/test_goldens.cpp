// The ABI 2.0 primitives' new kinds and fields against golden values from
// an independent torch implementation (tools/fixtures/make_op_goldens.py ->
// tests/fixtures/op-goldens/*.json), run through the provider's C table
// (supports, then run).  Each case names its op, scalar params, inputs and
// expected outputs; a tensor named in both inputs and outputs (a state) is
// read and written.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "fake_host.hpp"
#include "provider_table.hpp"
#include "seatrt/cpp/op_registry.hpp"
#include "test_support.hpp"

using namespace seatrt;
using test::Tensor;
using nlohmann::json;

namespace {

constexpr double kRelTol = 1e-5;

const seatrt_kernel_api& api() {
  static const bool initialised = [] {
    REQUIRE(cpu::plugin_descriptor().initialize(test::fake_host()) == nullptr);
    return true;
  }();
  (void)initialised;
  return cpu::kernel_api();
}

seatrt_kernel_context* context() {
  struct Owned {
    seatrt_kernel_context* ctx = nullptr;
    Owned() { REQUIRE(test::take_status(api().create("threads = 3", 0, &ctx)) == SEATRT_OK); }
    ~Owned() { api().destroy(ctx); }
  };
  static Owned owned;
  return owned.ctx;
}

json load_cases(const std::string& op) {
  const std::string path = std::string(SEATRT_OP_GOLDENS_DIR) + "/" + op + ".json";
  std::ifstream in(path);
  INFO(path);
  REQUIRE(in.good());
  json j = json::parse(in);
  REQUIRE(!j["cases"].empty());
  return j["cases"];
}

Tensor make_tensor(const json& t) {
  const std::vector<int64_t> shape = t["shape"].get<std::vector<int64_t>>();
  if (t["dtype"] == "i32") return test::int_tensor(SEATRT_DTYPE_I32, shape, t["data"].get<std::vector<int64_t>>());
  Tensor out(SEATRT_DTYPE_F32, shape);
  const auto& data = t["data"];
  REQUIRE(static_cast<int64_t>(data.size()) == out.numel());
  for (int64_t i = 0; i < out.numel(); ++i) out.set(i, data[static_cast<size_t>(i)].get<double>());
  return out;
}

// One case's tensors by name: its inputs, then an output of the expected
// shape for every expected tensor that is not also an input.
struct CaseTensors {
  std::map<std::string, Tensor> t;
  seatrt_tensor* get(const std::string& name) {
    auto it = t.find(name);
    return it == t.end() ? nullptr : it->second.get();
  }
};

CaseTensors make_tensors(const json& c) {
  CaseTensors ts;
  for (const auto& [name, t] : c["tensors"].items()) ts.t.emplace(name, make_tensor(t));
  for (const auto& [name, t] : c["expected"].items()) {
    if (ts.t.count(name)) continue;
    const int32_t dtype = t["dtype"] == "i32" ? SEATRT_DTYPE_I32 : SEATRT_DTYPE_F32;
    Tensor out(dtype, t["shape"].get<std::vector<int64_t>>());
    ts.t.emplace(name, std::move(out));
  }
  return ts;
}

void run_op(const seatrt_op& op) {
  CHECK(api().supports(context(), &op) == 1);
  std::string msg;
  const seatrt_status_code code = test::take_status(api().run(context(), nullptr, &op), &msg);
  INFO(msg);
  REQUIRE(code == SEATRT_OK);
}

void check_expected(const json& c, CaseTensors& ts) {
  for (const auto& [name, e] : c["expected"].items()) {
    INFO("output " << name);
    const Tensor& actual = ts.t.at(name);
    if (e["dtype"] == "i32") {
      const auto expected = e["data"].get<std::vector<int64_t>>();
      REQUIRE(static_cast<int64_t>(expected.size()) == actual.numel());
      Tensor copy = actual;
      for (size_t i = 0; i < expected.size(); ++i) CHECK(copy.as<int32_t>()[i] == expected[i]);
    } else {
      const auto expected = e["data"].get<std::vector<double>>();
      CHECK(test::max_rel_err(actual.values(), expected) <= kRelTol);
    }
  }
}

float param_f(const json& c, const char* name) { return c["params"].value(name, 0.0f); }
int32_t param_i(const json& c, const char* name) { return c["params"].value(name, 0); }

}  // namespace

TEST_CASE("golden rms_norm: weight_offset joins the gain") {
  for (const json& c : load_cases("rms_norm")) {
    INFO(c["name"].get<std::string>());
    CaseTensors ts = make_tensors(c);
    seatrt_rms_norm_args a{};
    a.struct_size = sizeof a;
    a.x = ts.get("x");
    a.weight = ts.get("weight");
    a.eps = param_f(c, "eps");
    a.out = ts.get("out");
    a.weight_offset = param_f(c, "weight_offset");
    run_op(sdk::make_op<SEATRT_OP_RMS_NORM>(a));
    check_expected(c, ts);
  }
}

TEST_CASE("golden linear: bias added per output feature") {
  for (const json& c : load_cases("linear")) {
    INFO(c["name"].get<std::string>());
    CaseTensors ts = make_tensors(c);
    const seatrt_tensor& wt = *ts.get("weight");
    seatrt_linear_weight w{};
    w.struct_size = sizeof w;
    w.format = SEATRT_WFMT_DENSE;
    w.layout = SEATRT_LAYOUT_DENSE_ROW_MAJOR;
    w.out_features = wt.shape[0];
    w.in_features = wt.shape[1];
    w.data = wt;
    w.scales.struct_size = sizeof(seatrt_tensor);
    w.global_scale = 1.0f;
    seatrt_linear_args a{};
    a.struct_size = sizeof a;
    a.x = ts.get("x");
    a.weight = &w;
    a.out = ts.get("out");
    a.bias = ts.get("bias");
    run_op(sdk::make_op<SEATRT_OP_LINEAR>(a));
    check_expected(c, ts);
  }
}

TEST_CASE("golden elementwise: sigmoid and mul_rows") {
  for (const json& c : load_cases("elementwise")) {
    INFO(c["name"].get<std::string>());
    CaseTensors ts = make_tensors(c);
    seatrt_elementwise_args a{};
    a.struct_size = sizeof a;
    a.op = param_i(c, "op");
    a.a = ts.get("a");
    a.b = ts.get("b");
    a.out = ts.get("out");
    run_op(sdk::make_op<SEATRT_OP_ELEMENTWISE>(a));
    check_expected(c, ts);
  }
}

TEST_CASE("golden rope: one position per token and multi-section positions") {
  for (const json& c : load_cases("rope")) {
    INFO(c["name"].get<std::string>());
    CaseTensors ts = make_tensors(c);
    seatrt_rope_args a{};
    a.struct_size = sizeof a;
    a.x = ts.get("x");
    a.positions = ts.get("positions");
    a.inv_freq = ts.get("inv_freq");
    a.out = ts.get("out");
    a.num_sections = param_i(c, "num_sections");
    const auto sections = c["params"]["sections"].get<std::vector<int32_t>>();
    for (size_t i = 0; i < sections.size(); ++i) a.sections[i] = sections[i];
    run_op(sdk::make_op<SEATRT_OP_ROPE>(a));
    check_expected(c, ts);
  }
}

TEST_CASE("golden router_topk: sigmoid scoring, correction bias, groups, routed_scale") {
  for (const json& c : load_cases("router_topk")) {
    INFO(c["name"].get<std::string>());
    CaseTensors ts = make_tensors(c);
    seatrt_router_topk_args a{};
    a.struct_size = sizeof a;
    a.logits = ts.get("logits");
    a.top_k = param_i(c, "top_k");
    a.renormalize = param_i(c, "renormalize");
    a.per_expert_scale = ts.get("per_expert_scale");
    a.ids = ts.get("ids");
    a.weights = ts.get("weights");
    a.scoring = param_i(c, "scoring");
    a.num_groups = param_i(c, "num_groups");
    a.top_groups = param_i(c, "top_groups");
    a.routed_scale = param_f(c, "routed_scale");
    a.correction_bias = ts.get("correction_bias");
    run_op(sdk::make_op<SEATRT_OP_ROUTER_TOPK>(a));
    check_expected(c, ts);
  }
}

TEST_CASE("golden conv1d_causal: per-sequence history, reset, state written back") {
  for (const json& c : load_cases("conv1d_causal")) {
    INFO(c["name"].get<std::string>());
    CaseTensors ts = make_tensors(c);
    seatrt_conv1d_causal_args a{};
    a.struct_size = sizeof a;
    a.activation = param_i(c, "activation");
    a.x = ts.get("x");
    a.weight = ts.get("weight");
    a.bias = ts.get("bias");
    a.state = ts.get("state");
    a.state_index = ts.get("state_index");
    a.reset = ts.get("reset");
    a.query_start = ts.get("query_start");
    a.num_seqs = param_i(c, "num_seqs");
    a.out = ts.get("out");
    run_op(sdk::make_op<SEATRT_OP_CONV1D_CAUSAL>(a));
    check_expected(c, ts);
  }
}

TEST_CASE("golden delta_rule: the gated recurrence per value head, state in and out") {
  for (const json& c : load_cases("delta_rule")) {
    INFO(c["name"].get<std::string>());
    CaseTensors ts = make_tensors(c);
    seatrt_delta_rule_args a{};
    a.struct_size = sizeof a;
    a.l2_normalize = param_i(c, "l2_normalize");
    a.q = ts.get("q");
    a.k = ts.get("k");
    a.v = ts.get("v");
    a.g = ts.get("g");
    a.beta = ts.get("beta");
    a.state = ts.get("state");
    a.state_index = ts.get("state_index");
    a.reset = ts.get("reset");
    a.query_start = ts.get("query_start");
    a.num_seqs = param_i(c, "num_seqs");
    a.scale = param_f(c, "scale");
    a.out = ts.get("out");
    run_op(sdk::make_op<SEATRT_OP_DELTA_RULE>(a));
    check_expected(c, ts);
  }
}
