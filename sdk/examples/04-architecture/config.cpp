#include "config.hpp"

#include <cstdlib>
#include <stdexcept>

namespace tinydense {

namespace {

// The text right after `"key":` at the top level of a flat JSON object, or
// npos.  A real architecture would use a JSON library; this example keeps
// to the SDK alone, and its config.json has no nested objects.
std::size_t value_at(const std::string& json, const std::string& key) {
  const std::string quoted = "\"" + key + "\"";
  for (std::size_t at = json.find(quoted); at != std::string::npos; at = json.find(quoted, at + 1)) {
    std::size_t i = at + quoted.size();
    while (i < json.size() && (json[i] == ' ' || json[i] == '\n' || json[i] == '\t' || json[i] == '\r')) ++i;
    if (i < json.size() && json[i] == ':') {
      ++i;
      while (i < json.size() && (json[i] == ' ' || json[i] == '\n' || json[i] == '\t' || json[i] == '\r')) ++i;
      return i;
    }
  }
  return std::string::npos;
}

double number(const std::string& json, const std::string& key) {
  const std::size_t at = value_at(json, key);
  if (at == std::string::npos) throw std::invalid_argument("config.json: key " + key + " is missing");
  const char* begin = json.c_str() + at;
  char* end = nullptr;
  const double v = std::strtod(begin, &end);
  if (end == begin) throw std::invalid_argument("config.json: key " + key + " must be a number");
  return v;
}

int32_t positive(const std::string& json, const std::string& key, double limit = 1 << 24) {
  const double v = number(json, key);
  if (v < 1 || v > limit || v != static_cast<double>(static_cast<int64_t>(v)))
    throw std::invalid_argument("config.json: key " + key + " must be a positive integer up to " +
                                std::to_string(static_cast<int64_t>(limit)));
  return static_cast<int32_t>(v);
}

}  // namespace

int32_t probe_score(const std::string& json) {
  const std::size_t at = value_at(json, "model_type");
  return at != std::string::npos && json.compare(at, 11, "\"tinydense\"") == 0 ? 100 : 0;
}

Config Config::parse(const std::string& json) {
  if (!probe_score(json)) throw std::invalid_argument("config.json: model_type is not \"tinydense\"");
  Config c;
  c.vocab_size = positive(json, "vocab_size");
  c.hidden_size = positive(json, "hidden_size");
  c.intermediate_size = positive(json, "intermediate_size");
  c.num_layers = positive(json, "num_hidden_layers", 1024);
  c.num_heads = positive(json, "num_attention_heads", 1024);
  c.num_kv_heads = positive(json, "num_key_value_heads", 1024);
  c.head_dim = positive(json, "head_dim", 1024);
  c.max_position = positive(json, "max_position_embeddings", 1 << 30);
  c.rms_norm_eps = static_cast<float>(number(json, "rms_norm_eps"));
  c.rope_theta = static_cast<float>(number(json, "rope_theta"));
  if (c.num_heads % c.num_kv_heads != 0)
    throw std::invalid_argument("config.json: num_attention_heads must be a multiple of num_key_value_heads");
  if (c.head_dim % 2 != 0) throw std::invalid_argument("config.json: head_dim must be even (RoPE pairs)");
  if (!(c.rms_norm_eps > 0) || !(c.rope_theta > 1))
    throw std::invalid_argument("config.json: rms_norm_eps must be > 0 and rope_theta > 1");
  return c;
}

}  // namespace tinydense
