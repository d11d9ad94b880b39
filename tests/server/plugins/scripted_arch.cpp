// A test architecture plugin ("scripted") for the server tests.  It has no
// weights; config.json's "scripted" object describes it:
//   layers       KV layer specs (kv_heads, head_dim, window, single_tensor)
//   text_ids     ids the free-running output draws from
//   eos_id       the id it ends a script with
//   start_markers id sequences that open the model's turn (the template's
//                generation prompts); the one ending latest in the context wins
//   scripts      [{trigger: [ids], output: [ids], nan_at: k}]: when the context
//                holds `trigger` before the last start marker, the turn replays
//                `output` then eos_id (NaN logits at output index nan_at, if set)
//   nan          true: every logit is NaN (a broken model)
// Every token id is stored in every layer's paged cache, and the logits of a
// row are computed from the whole context read back through the block
// tables (window layers through the window tables, checked against the full
// layers), so a paging mistake changes the output or fails the step.
// Works on host memory only (the CPU kernel provider).
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "seatrt/cpp/plugin.hpp"
#include "seatrt/seatrt.h"

namespace {

using seatrt::sdk::Error;
using nlohmann::json;

struct Script {
  std::vector<int32_t> trigger;
  std::vector<int32_t> output;
  int64_t nan_at = -1;
};

struct ScriptedModel {
  int32_t vocab = 0;
  int64_t max_position = 0;
  std::vector<seatrt_kv_layer_spec> layers;
  std::vector<int32_t> text_ids;
  int32_t eos = 1;
  std::vector<std::vector<int32_t>> start_markers;
  std::vector<Script> scripts;
  bool nan = false;
};

std::vector<int32_t> ids_of(const json& j, const char* key) {
  std::vector<int32_t> out;
  if (j.contains(key)) out = j.at(key).get<std::vector<int32_t>>();
  return out;
}

seatrt_status* probe(const char* config_json, int32_t* score) {
  return seatrt::sdk::guard([&] {
    *score = 0;
    const json cfg = json::parse(config_json, nullptr, false);
    if (cfg.is_object() && cfg.value("model_type", "") == "seatrt-scripted") *score = 100;
  });
}

seatrt_status* inspect(const seatrt_model_source*, seatrt_report_fn report, void* user) {
  return seatrt::sdk::guard([&] {
    if (report) report(user, "architecture: scripted (test plugin, no weights)");
  });
}

seatrt_status* create(const seatrt_model_source* src, const char*, seatrt_model** out) {
  return seatrt::sdk::guard([&] {
    const json cfg = json::parse(src->config_json);
    const json& s = cfg.at("scripted");
    auto m = std::make_unique<ScriptedModel>();
    m->vocab = cfg.at("vocab_size").get<int32_t>();
    m->max_position = cfg.at("max_position_embeddings").get<int64_t>();
    for (const auto& l : s.at("layers")) {
      seatrt_kv_layer_spec spec{};
      spec.struct_size = sizeof spec;
      spec.kv_heads = l.at("kv_heads").get<int32_t>();
      spec.head_dim = l.at("head_dim").get<int32_t>();
      spec.window = l.value("window", 0);
      spec.single_tensor = l.value("single_tensor", false) ? 1 : 0;
      if (spec.kv_heads * spec.head_dim < 4) throw Error(SEATRT_ERR_INVALID_ARG, "scripted layers need kv_heads*head_dim >= 4");
      m->layers.push_back(spec);
    }
    m->text_ids = ids_of(s, "text_ids");
    if (m->text_ids.empty()) throw Error(SEATRT_ERR_INVALID_ARG, "scripted.text_ids is empty");
    m->eos = s.value("eos_id", 1);
    if (s.contains("start_markers"))
      for (const auto& marker : s.at("start_markers")) m->start_markers.push_back(marker.get<std::vector<int32_t>>());
    if (s.contains("scripts"))
      for (const auto& sc : s.at("scripts"))
        m->scripts.push_back({ids_of(sc, "trigger"), ids_of(sc, "output"), sc.value("nan_at", int64_t{-1})});
    m->nan = s.value("nan", false);
    *out = reinterpret_cast<seatrt_model*>(m.release());
  });
}

void destroy(seatrt_model* model) { delete reinterpret_cast<ScriptedModel*>(model); }

seatrt_status* info(const seatrt_model* model, seatrt_model_info* out) {
  return seatrt::sdk::guard([&] {
    const auto* m = reinterpret_cast<const ScriptedModel*>(model);
    out->vocab_size = m->vocab;
    out->hidden_size = 4;
    out->num_layers = static_cast<int32_t>(m->layers.size());
    out->max_position = m->max_position;
    out->is_moe = 0;
    out->kv_layers = m->layers.data();
    out->weight_bytes = 0;
    out->workspace_bytes = 0;
  });
}

// Bytes of one token's slot in a layer's K cache.
size_t slot_bytes(const seatrt_kv_layer& kv) {
  const size_t elem = kv.k_cache.dtype == SEATRT_DTYPE_F8_E4M3 ? 1 : kv.k_cache.dtype == SEATRT_DTYPE_BF16 ? 2 : 4;
  return static_cast<size_t>(kv.k_cache.shape[2] * kv.k_cache.shape[3]) * elem;
}

void store(seatrt_kv_layer& kv, int64_t slot, int32_t token) {
  if (slot < 0) return;
  if (slot >= kv.k_cache.shape[0] * kv.block_size) throw Error(SEATRT_ERR_INVALID_ARG, "slot out of the cache");
  std::memcpy(static_cast<char*>(kv.k_cache.data) + static_cast<size_t>(slot) * slot_bytes(kv), &token, 4);
}

int32_t load(const seatrt_kv_layer& kv, const int32_t* table, int64_t pos) {
  const int32_t block = table[pos / kv.block_size];
  if (block < 0 || block >= kv.k_cache.shape[0])
    throw Error(SEATRT_ERR_INTERNAL, "block table entry " + std::to_string(block) + " for position " +
                                         std::to_string(pos) + " is outside the cache");
  const int64_t slot = int64_t{block} * kv.block_size + pos % kv.block_size;
  int32_t token;
  std::memcpy(&token, static_cast<const char*>(kv.k_cache.data) + static_cast<size_t>(slot) * slot_bytes(kv), 4);
  return token;
}

bool ends_with_at(const std::vector<int32_t>& ctx, size_t end, const std::vector<int32_t>& pat) {
  if (pat.empty() || end < pat.size()) return false;
  for (size_t i = 0; i < pat.size(); ++i)
    if (ctx[end - pat.size() + i] != pat[i]) return false;
  return true;
}

// The next token's logits for a context.
void logits_for(const ScriptedModel& m, const std::vector<int32_t>& ctx, float* row) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (m.nan) {
    for (int32_t v = 0; v < m.vocab; ++v) row[v] = nan;
    return;
  }
  // The last start marker opens the turn; a trigger before it picks a script.
  size_t turn = 0;
  for (size_t end = ctx.size(); end > 0 && turn == 0; --end)
    for (const auto& marker : m.start_markers)
      if (ends_with_at(ctx, end, marker)) turn = end;
  if (turn > 0) {
    for (const auto& sc : m.scripts) {
      bool triggered = false;
      for (size_t end = sc.trigger.size(); end <= turn && !triggered; ++end) triggered = ends_with_at(ctx, end, sc.trigger);
      if (!triggered) continue;
      const size_t k = ctx.size() - turn;
      bool on_script = k <= sc.output.size();
      for (size_t i = 0; i < k && on_script; ++i) on_script = ctx[turn + i] == sc.output[i];
      if (!on_script) break;  // sampled off the script: free-running
      if (static_cast<int64_t>(k) == sc.nan_at) {
        for (int32_t v = 0; v < m.vocab; ++v) row[v] = nan;
        return;
      }
      const int32_t next = k < sc.output.size() ? sc.output[k] : m.eos;
      for (int32_t v = 0; v < m.vocab; ++v) row[v] = -30.0f;
      row[next] = 30.0f;
      return;
    }
  }
  // Free-running: a hash of the whole context spreads logits over text_ids.
  uint64_t h = 1469598103934665603ull;
  for (int32_t t : ctx) h = (h ^ static_cast<uint32_t>(t)) * 1099511628211ull;
  for (int32_t v = 0; v < m.vocab; ++v) row[v] = -20.0f;
  for (size_t i = 0; i < m.text_ids.size(); ++i) {
    uint64_t x = (h ^ (i * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    row[m.text_ids[i]] = static_cast<float>(x % 1000) / 250.0f;
  }
}

seatrt_status* forward(seatrt_model* model, seatrt_stream, const seatrt_forward_batch* b) {
  return seatrt::sdk::guard([&] {
    const auto* m = reinterpret_cast<const ScriptedModel*>(model);
    if (b->token_ids->device.kind != SEATRT_DEVICE_CPU)
      throw Error(SEATRT_ERR_UNSUPPORTED, "the scripted test model runs on the CPU provider only");
    const auto* ids = static_cast<const int32_t*>(b->token_ids->data);
    const bool split = SEATRT_HAS_FIELD(b, seatrt_forward_batch, window_slot_mapping) && b->window_slot_mapping;
    const auto* slots = static_cast<const int64_t*>(b->slot_mapping->data);
    const auto* wslots = split ? static_cast<const int64_t*>(b->window_slot_mapping->data) : slots;
    for (size_t l = 0; l < m->layers.size(); ++l)
      for (int32_t t = 0; t < b->num_tokens; ++t)
        store(b->kv_layers[l], m->layers[l].window > 0 ? wslots[t] : slots[t], ids[t]);

    const auto* rows = static_cast<const int32_t*>(b->logits_index->data);
    const auto* tables = static_cast<const int32_t*>(b->block_tables->data);
    const auto* wtables = split ? static_cast<const int32_t*>(b->window_block_tables->data) : tables;
    const int64_t cols = b->block_tables->shape[1];
    auto* logits = static_cast<float*>(b->logits->data);
    for (int32_t r = 0; r < b->num_logits; ++r) {
      int32_t s = 0;
      while (s + 1 < b->num_seqs && b->host_query_start[s + 1] <= rows[r]) ++s;
      // The row's own position + 1 (a chunk may ask for logits at every
      // position, for prompt logprobs): the sequence's last batch token is
      // at seq_len - 1.
      const int32_t len = b->host_seq_lens[s] - (b->host_query_start[s + 1] - 1 - rows[r]);
      std::vector<int32_t> ctx(static_cast<size_t>(len));
      size_t full_layer = 0, window_layer = 0;
      bool have_full = false, have_window = false;
      for (size_t l = 0; l < m->layers.size(); ++l) {
        if (m->layers[l].window == 0 && !have_full) { full_layer = l; have_full = true; }
        if (m->layers[l].window > 0 && !have_window) { window_layer = l; have_window = true; }
      }
      if (!have_full) throw Error(SEATRT_ERR_INVALID_ARG, "the scripted model needs one full-attention layer");
      for (int32_t p = 0; p < len; ++p) ctx[static_cast<size_t>(p)] = load(b->kv_layers[full_layer], tables + s * cols, p);
      if (have_window) {
        const int32_t w = m->layers[window_layer].window;
        for (int32_t p = std::max(0, len - w); p < len; ++p)
          if (load(b->kv_layers[window_layer], wtables + s * cols, p) != ctx[static_cast<size_t>(p)])
            throw Error(SEATRT_ERR_INTERNAL, "window cache disagrees with the full cache at position " + std::to_string(p));
      }
      logits_for(*m, ctx, logits + static_cast<size_t>(r) * static_cast<size_t>(m->vocab));
    }
  });
}

seatrt_status* initialize(const seatrt_host_api* host) {
  return seatrt::sdk::guard([&] { seatrt::sdk::set_host(host); });
}

const seatrt_arch_api kArch = [] {
  seatrt_arch_api a{};
  a.struct_size = sizeof a;
  a.probe = &probe;
  a.inspect = &inspect;
  a.create = &create;
  a.destroy = &destroy;
  a.info = &info;
  a.forward = &forward;
  return a;
}();

const seatrt_plugin kPlugin = [] {
  seatrt_plugin p = seatrt::sdk::describe(SEATRT_KIND_ARCHITECTURE, "scripted", "0.1.0",
                                          "test architecture replaying scripted token streams");
  p.initialize = &initialize;
  p.architecture = &kArch;
  return p;
}();

}  // namespace

SEATRT_DEFINE_PLUGIN(kPlugin)
