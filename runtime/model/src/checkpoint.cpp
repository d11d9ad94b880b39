#include "seatrt/model/checkpoint.hpp"

#include "seatrt/host/regular_file.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace seatrt::model {

namespace {

constexpr const char* kIndexName = "model.safetensors.index.json";
constexpr const char* kSingleName = "model.safetensors";

std::string read_text(const std::filesystem::path& path) {
  std::string text;
  const std::string why = host::read_regular_file(path, text);
  if (!why.empty()) throw CheckpointError(path.string() + ": " + why);
  return text;
}

// A shard name must stay inside the checkpoint directory.
bool is_plain_file_name(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos && name != "." && name != "..";
}

}  // namespace

Checkpoint::Checkpoint(const std::filesystem::path& dir) : dir_(dir) {
  if (!std::filesystem::is_directory(dir)) throw CheckpointError(dir.string() + ": not a directory");
  const auto index_path = dir / kIndexName;
  // tensor name -> shard file, from the index (empty for a single file)
  std::map<std::string, std::string> weight_map;
  if (std::filesystem::exists(index_path)) {
    const auto doc = nlohmann::json::parse(read_text(index_path), nullptr, false);
    if (doc.is_discarded() || !doc.is_object())
      throw CheckpointError(index_path.string() + ": not a JSON object");
    if (!doc.contains("weight_map") || !doc["weight_map"].is_object())
      throw CheckpointError(index_path.string() + ": no 'weight_map' object");
    std::set<std::string> shard_names;
    for (const auto& [tensor, file] : doc["weight_map"].items()) {
      if (!file.is_string() || !is_plain_file_name(file.get<std::string>()))
        throw CheckpointError(index_path.string() + ": weight_map entry '" + tensor +
                              "' must name a file in the checkpoint directory");
      weight_map[tensor] = file.get<std::string>();
      shard_names.insert(file.get<std::string>());
    }
    if (shard_names.empty()) throw CheckpointError(index_path.string() + ": weight_map is empty");
    for (const auto& name : shard_names) {
      if (!std::filesystem::exists(dir / name))
        throw CheckpointError(index_path.string() + ": shard '" + name + "' is missing from " + dir.string() +
                              " (the index places " +
                              std::to_string(std::count_if(weight_map.begin(), weight_map.end(),
                                                           [&](const auto& kv) { return kv.second == name; })) +
                              " tensors in it)");
      files_.push_back(dir / name);
    }
  } else if (std::filesystem::exists(dir / kSingleName)) {
    files_.push_back(dir / kSingleName);
  } else {
    throw CheckpointError(dir.string() + ": no " + kSingleName + " and no " + kIndexName);
  }

  for (const auto& file : files_) {
    shards_.push_back(std::make_unique<SafetensorsFile>(file));
    const auto shard_name = file.filename().string();
    for (const auto& t : shards_.back()->tensors()) {
      if (by_name_.count(t.name))
        throw CheckpointError(file.string() + ": tensor '" + t.name + "' is also stored in another shard");
      if (!weight_map.empty()) {
        const auto it = weight_map.find(t.name);
        if (it == weight_map.end())
          throw CheckpointError(file.string() + ": tensor '" + t.name + "' is not listed in " + kIndexName);
        if (it->second != shard_name)
          throw CheckpointError(file.string() + ": tensor '" + t.name + "' is listed in " + kIndexName + " under '" +
                                it->second + "'");
      }
      by_name_[t.name] = &t;
      order_.push_back(&t);
    }
  }
  for (const auto& [tensor, file] : weight_map)
    if (!by_name_.count(tensor))
      throw CheckpointError((dir / file).string() + ": tensor '" + tensor + "' listed in " + kIndexName +
                            " is not in the shard");
}

const TensorEntry* Checkpoint::find(const std::string& name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

}  // namespace seatrt::model
