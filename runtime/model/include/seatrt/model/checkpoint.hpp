// A checkpoint directory: model.safetensors, or shards listed by
// model.safetensors.index.json.  Tensors are listed in shard order (as the
// index names the files, sorted), each shard in data-offset order.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "seatrt/model/safetensors.hpp"

namespace seatrt::model {

class Checkpoint {
 public:
  // Opens and validates every file.  Throws CheckpointError naming the
  // problem: no checkpoint, an unreadable index, a shard the index names
  // that is missing, a tensor the index places in a shard that lacks it,
  // one tensor in two shards.
  explicit Checkpoint(const std::filesystem::path& dir);

  const std::filesystem::path& dir() const { return dir_; }
  const std::vector<const TensorEntry*>& tensors() const { return order_; }
  // nullptr when absent.
  const TensorEntry* find(const std::string& name) const;
  const std::vector<std::filesystem::path>& files() const { return files_; }

 private:
  std::filesystem::path dir_;
  std::vector<std::filesystem::path> files_;
  std::vector<std::unique_ptr<SafetensorsFile>> shards_;
  std::vector<const TensorEntry*> order_;
  std::unordered_map<std::string, const TensorEntry*> by_name_;
};

}  // namespace seatrt::model
