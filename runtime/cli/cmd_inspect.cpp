// `seatrt inspect MODEL_DIR [--against OTHER_DIR]`: what a checkpoint is
// (architecture and class, quantization scheme, counts, bytes by dtype) and
// the architecture's guard verdict, without loading weights.  --against
// lists the differences between two checkpoints' ignore lists and quant
// configs: comparing with a checkpoint of the same architecture class is
// what exposes a quantized router.  Exit 1 when the guard refuses.
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "command.hpp"
#include "seatrt/host/status.hpp"
#include "seatrt/model/dtype.hpp"
#include "seatrt/model/model_session.hpp"
#include "seatrt/model/status.hpp"

namespace seatrt::cli {
namespace {

using nlohmann::json;

struct Inspection {
  bool refused = false;
  std::string refusal;
  json quant = json::object();  // quantization_config, {} when none
};

// Flattens a JSON value into "a.b.c" -> scalar text (for diffs).
void flatten(const json& v, const std::string& path, std::map<std::string, std::string>& out) {
  if (v.is_object()) {
    for (const auto& [k, x] : v.items()) flatten(x, path.empty() ? k : path + "." + k, out);
  } else {
    out[path] = v.dump();
  }
}

Inspection inspect_one(const model::ModelLoader& loader, const std::filesystem::path& dir, std::ostream& out) {
  Inspection r;
  const auto prepared = loader.prepare(dir);
  const auto& cfg = prepared->config();
  out << "model: " << dir.string() << "\n";
  out << "config: model_type " << (cfg.model_type.empty() ? "?" : cfg.model_type) << ", architectures";
  for (const auto& a : cfg.architectures) out << " " << a;
  out << "\n";
  out << "architecture plugin: " << prepared->arch_name() << "\n";
  if (!cfg.quantization_config_json.empty()) {
    r.quant = json::parse(cfg.quantization_config_json);
    out << "quant scheme: " << cfg.quant_method << " " << cfg.quant_format << " (plugin " << prepared->quant_name()
        << ")\n";
    const json ignore = r.quant.value("ignore", json::array());
    std::size_t regex = 0;
    for (const auto& e : ignore)
      if (e.is_string() && e.get<std::string>().rfind("re:", 0) == 0) ++regex;
    out << "ignored modules: " << ignore.size() << " ignore entries (" << regex << " regex)\n";
  } else {
    out << "quant scheme: none\n";
  }
  std::map<std::string, std::pair<uint64_t, uint64_t>> by_dtype;  // name -> (tensors, bytes)
  uint64_t total = 0;
  for (const auto* t : prepared->checkpoint().tensors()) {
    auto& slot = by_dtype[t->dtype_name];
    ++slot.first;
    slot.second += t->nbytes;
    total += t->nbytes;
  }
  out << "tensors: " << prepared->checkpoint().tensors().size() << " in " << prepared->checkpoint().files().size()
      << " file(s), " << total << " bytes\n";
  for (const auto& [name, v] : by_dtype)
    out << "bytes " << name << ": " << v.second << " (" << v.first << " tensors)\n";
  try {
    prepared->inspect([&](const std::string& line) { out << line << "\n"; });
  } catch (const model::StatusError& e) {
    r.refused = true;
    r.refusal = e.what();
  }
  return r;
}

void diff_against(const Inspection& a, const Inspection& b, const std::string& name_a, const std::string& name_b,
                  std::ostream& out) {
  const auto ignore_set = [](const json& q) {
    std::set<std::string> s;
    for (const auto& e : q.value("ignore", json::array()))
      if (e.is_string()) s.insert(e.get<std::string>());
    return s;
  };
  const auto ia = ignore_set(a.quant), ib = ignore_set(b.quant);
  std::vector<std::string> only_a, only_b;
  for (const auto& e : ia)
    if (!ib.count(e)) only_a.push_back(e);
  for (const auto& e : ib)
    if (!ia.count(e)) only_b.push_back(e);
  out << "diff: ignore entries only in " << name_a << ": " << only_a.size() << "\n";
  for (const auto& e : only_a) out << "  - " << e << "\n";
  out << "diff: ignore entries only in " << name_b << ": " << only_b.size() << "\n";
  for (const auto& e : only_b) out << "  + " << e << "\n";
  std::map<std::string, std::string> fa, fb;
  json qa = a.quant, qb = b.quant;
  qa.erase("ignore");
  qb.erase("ignore");
  flatten(qa, "", fa);
  flatten(qb, "", fb);
  std::size_t n = 0;
  for (const auto& [k, v] : fa) {
    const auto it = fb.find(k);
    if (it == fb.end() || it->second != v) {
      out << "diff: quantization_config." << k << ": " << v << " vs " << (it == fb.end() ? "(absent)" : it->second)
          << "\n";
      ++n;
    }
  }
  for (const auto& [k, v] : fb)
    if (!fa.count(k)) {
      out << "diff: quantization_config." << k << ": (absent) vs " << v << "\n";
      ++n;
    }
  if (n == 0) out << "diff: quantization_config otherwise identical\n";
}

int run_inspect(std::span<const std::string> args) {
  std::filesystem::path dir, against;
  std::vector<std::filesystem::path> plugin_paths;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if ((a == "--against" || a == "--plugin-path") && i + 1 < args.size()) {
      (a == "--against" ? against : plugin_paths.emplace_back()) = args[++i];
    } else if (!a.empty() && a[0] != '-' && dir.empty()) {
      dir = a;
    } else {
      std::fprintf(stderr, "seatrt inspect: unexpected argument '%s'\nusage: seatrt inspect MODEL_DIR "
                           "[--against OTHER_DIR] [--plugin-path DIR]\n", a.c_str());
      return 2;
    }
  }
  if (dir.empty()) {
    std::fprintf(stderr, "seatrt inspect: MODEL_DIR is required\n");
    return 2;
  }
  try {
    host::SeatConfig seat;
    host::SeatPlugins plugins;
    plugins.search_paths = plugin_paths.empty() ? host::default_plugin_search_paths() : plugin_paths;
    model::ModelLoader loader(host::host_api(), model::model_plugin_candidates(seat, plugins));
    const Inspection main = inspect_one(loader, dir, std::cout);
    if (!against.empty()) {
      std::cout << "\n";
      const Inspection other = inspect_one(loader, against, std::cout);
      std::cout << "\n";
      diff_against(main, other, dir.string(), against.string(), std::cout);
    }
    std::cout << std::flush;
    if (main.refused) {
      std::fprintf(stderr, "seatrt inspect: refused: %s\n", main.refusal.c_str());
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cout << std::flush;
    std::fprintf(stderr, "seatrt inspect: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace
}  // namespace seatrt::cli

SEATRT_CLI_COMMAND("inspect", "inspect MODEL_DIR [--against OTHER_DIR] [--plugin-path DIR]",
                   "describe a checkpoint and run the architecture guard (no weights loaded)",
                   seatrt::cli::run_inspect)
