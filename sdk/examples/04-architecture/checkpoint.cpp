#include "checkpoint.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "model.hpp"
#include "seatrt/cpp/plugin.hpp"

namespace tinydense {

namespace {

struct Expected {
  std::string name;
  std::vector<int64_t> shape;
};

std::vector<Expected> expected_tensors(const Config& c) {
  const int64_t h = c.hidden_size, q = int64_t{c.num_heads} * c.head_dim, kv = int64_t{c.num_kv_heads} * c.head_dim,
                i = c.intermediate_size;
  std::vector<Expected> out{{std::string(kEmbedding) + ".weight", {c.vocab_size, h}}, {kFinalNorm, {h}}};
  for (int32_t l = 0; l < c.num_layers; ++l) {
    const std::string p = layer_prefix(l);
    for (const Expected& e : std::vector<Expected>{
             {"input_layernorm.weight", {h}},       {"post_attention_layernorm.weight", {h}},
             {"self_attn.q_proj.weight", {q, h}},   {"self_attn.q_proj.bias", {q}},
             {"self_attn.k_proj.weight", {kv, h}},  {"self_attn.k_proj.bias", {kv}},
             {"self_attn.v_proj.weight", {kv, h}},  {"self_attn.v_proj.bias", {kv}},
             {"self_attn.o_proj.weight", {h, q}},   {"mlp.gate_proj.weight", {i, h}},
             {"mlp.up_proj.weight", {i, h}},        {"mlp.down_proj.weight", {h, i}}})
      out.push_back({p + e.name, e.shape});
  }
  return out;
}

std::string shape_text(const int64_t* shape, std::size_t n) {
  std::string s = "[";
  for (std::size_t d = 0; d < n; ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "]";
}

}  // namespace

void inspect_checkpoint(const Config& c, const seatrt_model_source* src,
                        const std::function<void(const std::string&)>& report) {
  using seatrt::sdk::Error;
  const auto expected = expected_tensors(c);
  for (const Expected& e : expected) {
    seatrt_checkpoint_tensor t{};
    t.struct_size = sizeof(t);
    if (seatrt_status* s = src->find_tensor(src, e.name.c_str(), &t)) {
      seatrt::sdk::host()->status_free(s);
      throw Error(SEATRT_ERR_INVALID_ARG, "tensor '" + e.name + "' is missing (tinydense reads dense, unquantized weights)");
    }
    const bool same = t.ndim == static_cast<int32_t>(e.shape.size()) &&
                      std::equal(e.shape.begin(), e.shape.end(), t.shape);
    if (!same)
      throw Error(SEATRT_ERR_INVALID_ARG, "tensor '" + e.name + "' has shape " +
                                              shape_text(t.shape, static_cast<std::size_t>(std::max(t.ndim, 0))) +
                                              ", expected " + shape_text(e.shape.data(), e.shape.size()));
  }
  const int64_t stored = src->tensor_count(src);
  if (stored != static_cast<int64_t>(expected.size()))
    throw Error(SEATRT_ERR_INVALID_ARG, "the checkpoint has " + std::to_string(stored) + " tensors, tinydense expects " +
                                            std::to_string(expected.size()));
  report("architecture: tinydense, " + std::to_string(c.num_layers) + " dense layers, hidden " +
         std::to_string(c.hidden_size) + ", vocab " + std::to_string(c.vocab_size));
  report("tensors: " + std::to_string(stored) + " (all present, shapes as config.json says)");
}

}  // namespace tinydense
