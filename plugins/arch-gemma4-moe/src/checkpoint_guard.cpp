#include "checkpoint_guard.hpp"

#include <map>
#include <set>

#include "seatrt/cpp/plugin.hpp"

namespace seatrt::gemma4 {

namespace {

using sdk::Error;

std::string layer_prefix(const Config& c, int32_t i) { return c.prefix + "layers." + std::to_string(i) + "."; }

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::string list_some(const std::vector<std::string>& names, std::size_t limit = 5) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < limit; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > limit) out += ", ... (" + std::to_string(names.size()) + " in all)";
  return out;
}

// Non-text tensors a Gemma-4 checkpoint may carry (towers this plugin does
// not run).
bool is_other_tower(const std::string& name) {
  for (const char* p : {"model.vision_tower.", "model.embed_vision.", "model.audio_tower.", "model.embed_audio."})
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

int32_t query_state(const seatrt_model_source* src, const std::string& module) {
  int32_t state = SEATRT_LINEAR_ABSENT;
  sdk::throw_if_error(src->linear_state(src, module.c_str(), &state));
  return state;
}

}  // namespace

std::vector<LinearSpec> expected_linears(const Config& c) {
  std::vector<LinearSpec> out;
  const int64_t h = c.hidden_size;
  for (int32_t i = 0; i < c.num_layers; ++i) {
    const auto& g = c.layers[static_cast<std::size_t>(i)];
    const std::string p = layer_prefix(c, i);
    const int64_t q = static_cast<int64_t>(c.num_heads) * g.head_dim;
    const int64_t kv = static_cast<int64_t>(g.kv_heads) * g.head_dim;
    out.push_back({p + "self_attn.q_proj", q, h});
    out.push_back({p + "self_attn.k_proj", kv, h});
    if (!g.k_eq_v) out.push_back({p + "self_attn.v_proj", kv, h});
    out.push_back({p + "self_attn.o_proj", h, q});
    out.push_back({p + "mlp.gate_proj", c.intermediate_size, h});
    out.push_back({p + "mlp.up_proj", c.intermediate_size, h});
    out.push_back({p + "mlp.down_proj", h, c.intermediate_size});
    if (c.moe) {
      out.push_back({p + "router.proj", c.num_experts, h, true, false});
      for (int32_t e = 0; e < c.num_experts; ++e) {
        const std::string x = p + "experts." + std::to_string(e) + ".";
        out.push_back({x + "gate_proj", c.moe_intermediate_size, h, false, true});
        out.push_back({x + "up_proj", c.moe_intermediate_size, h, false, true});
        out.push_back({x + "down_proj", h, c.moe_intermediate_size, false, true});
      }
    }
  }
  return out;
}

std::vector<TensorSpec> expected_plain_tensors(const Config& c) {
  const int64_t h = c.hidden_size;
  std::vector<TensorSpec> out{{c.prefix + "embed_tokens.weight", {c.vocab_size, h}}, {c.prefix + "norm.weight", {h}}};
  for (int32_t i = 0; i < c.num_layers; ++i) {
    const auto& g = c.layers[static_cast<std::size_t>(i)];
    const std::string p = layer_prefix(c, i);
    for (const char* n : {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                          "post_feedforward_layernorm"})
      out.push_back({p + n + ".weight", {h}});
    out.push_back({p + "self_attn.q_norm.weight", {g.head_dim}});
    out.push_back({p + "self_attn.k_norm.weight", {g.head_dim}});
    out.push_back({p + "layer_scalar", {1}});
    if (c.moe) {
      for (const char* n : {"post_feedforward_layernorm_1", "pre_feedforward_layernorm_2", "post_feedforward_layernorm_2"})
        out.push_back({p + n + ".weight", {h}});
      out.push_back({p + "router.scale", {h}});
      out.push_back({p + "router.per_expert_scale", {c.num_experts}});
    }
  }
  return out;
}

void inspect_checkpoint(const Config& c, const seatrt_model_source* src,
                        const std::function<void(const std::string&)>& report) {
  const auto say = [&](const std::string& line) {
    if (report) report(line);
  };
  const auto linears = expected_linears(c);
  int32_t full = 0;
  for (const auto& g : c.layers) full += g.full ? 1 : 0;
  say("architecture: gemma4 text decoder (" + std::string(c.moe ? "MoE" : "dense") + ")");
  say("class: " + std::string(c.moe ? "moe" : "dense"));
  say("layers: " + std::to_string(c.num_layers) + " (" + std::to_string(c.num_layers - full) + " sliding, window " +
      std::to_string(c.layers.empty() ? 0 : c.layers.front().window) + "; " + std::to_string(full) + " full)");
  if (c.moe)
    say("experts: " + std::to_string(c.num_experts) + " per layer, top-" + std::to_string(c.top_k));

  // Unquantized releases store the experts fused in 3-D tensors; this
  // plugin reads the per-expert Linears llm-compressor writes.
  if (c.moe) {
    const std::string fused = c.prefix + "layers.0.experts.gate_up_proj";
    seatrt_checkpoint_tensor t{};
    t.struct_size = sizeof(t);
    seatrt_status* st = src->find_tensor(src, fused.c_str(), &t);
    if (!st)
      throw Error(SEATRT_ERR_UNSUPPORTED, "tensor '" + fused + "': fused 3-D expert tensors are not supported; use a "
                                          "checkpoint with per-expert Linears (experts.<e>.gate_proj/up_proj/down_proj, "
                                          "as llm-compressor writes them)");
    sdk::host()->status_free(st);
  }

  // 1. The architecture-class guard: the router must stay dense.
  std::vector<std::string> quantized_routers;
  int64_t expert_linears = 0, quantized = 0, dense = 0;
  std::map<std::string, int32_t> states;
  for (const auto& l : linears) {
    const int32_t s = query_state(src, l.module);
    states[l.module] = s;
    if (l.expert) ++expert_linears;
    if (s == SEATRT_LINEAR_QUANTIZED) ++quantized;
    if (s == SEATRT_LINEAR_DENSE) ++dense;
    if (l.router && s == SEATRT_LINEAR_QUANTIZED) quantized_routers.push_back(l.module);
  }
  say("linears: " + std::to_string(linears.size()) + " expected (" + std::to_string(quantized) + " quantized, " +
      std::to_string(dense) + " dense)");
  if (c.moe)
    say("expert_linears: " + std::to_string(expert_linears) + " (" + std::to_string(c.num_layers) + " layers x " +
        std::to_string(c.num_experts) + " experts x 3)");
  if (!quantized_routers.empty()) {
    const std::string msg = "MoE router quantized: " + list_some(quantized_routers, 3) +
                            " must stay unquantized (a quantized router mis-routes tokens). Fix: put \"re:.*router\" "
                            "in the recipe's ignore list and re-quantize the checkpoint";
    say("guard: REFUSED: " + msg);
    throw Error(SEATRT_ERR_INVALID_ARG, msg);
  }
  say("guard: ok (" + std::string(c.moe ? "routers unquantized" : "dense architecture, no router") + ")");

  // 2. Tensors present with the expected shapes, nothing unexpected.
  std::map<std::string, std::vector<int64_t>> expected;  // name -> shape ({} = any)
  for (const auto& t : expected_plain_tensors(c)) expected[t.name] = t.shape;
  for (const auto& l : linears) {
    const int32_t s = states[l.module];
    if (s == SEATRT_LINEAR_QUANTIZED) {
      expected[l.module + ".weight_packed"] = {l.out_features, l.in_features / 2};
      expected[l.module + ".weight_scale"] = {l.out_features, l.in_features / 16};
      expected[l.module + ".weight_global_scale"] = {1};
    } else {
      expected[l.module + ".weight"] = {l.out_features, l.in_features};
    }
  }
  std::vector<std::string> missing, misshapen, extra;
  std::set<std::string> seen;
  const int64_t count = src->tensor_count(src);
  for (int64_t i = 0; i < count; ++i) {
    seatrt_checkpoint_tensor t{};
    t.struct_size = sizeof(t);
    sdk::throw_if_error(src->tensor_at(src, i, &t));
    const std::string name = t.name;
    const auto it = expected.find(name);
    if (it == expected.end()) {
      if (!is_other_tower(name)) extra.push_back(name);
      continue;
    }
    seen.insert(name);
    std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
    // A one-element tensor may be stored as a scalar.
    const bool scalar_ok = it->second == std::vector<int64_t>{1} && t.ndim == 0;
    if (shape != it->second && !scalar_ok)
      misshapen.push_back(name + " " + shape_text(shape) + " (expected " + shape_text(it->second) + ")");
  }
  for (const auto& [name, shape] : expected)
    if (!seen.count(name)) missing.push_back(name);
  say("tensors: " + std::to_string(expected.size()) + " expected, " + std::to_string(missing.size()) + " missing, " +
      std::to_string(extra.size()) + " unexpected, " + std::to_string(misshapen.size()) + " misshapen");
  std::string problems;
  if (!missing.empty()) problems += "missing tensors: " + list_some(missing, 10) + ". ";
  if (!misshapen.empty()) problems += "misshapen tensors: " + list_some(misshapen, 10) + ". ";
  if (!extra.empty()) problems += "unexpected tensors: " + list_some(extra, 10) + ". ";
  if (!problems.empty()) {
    problems.pop_back();
    say("tensors: REFUSED: " + problems);
    throw Error(SEATRT_ERR_INVALID_ARG, "checkpoint does not match config.json: " + problems);
  }
}

}  // namespace seatrt::gemma4
