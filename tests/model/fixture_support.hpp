// Shared helpers of the model tests: where the fixtures and plugins are, a
// session on the CPU provider, reading the HF reference, and making
// corrupted copies of a fixture in a temporary directory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "seatrt/model/model_session.hpp"

namespace seatrt::test {

std::filesystem::path fixture(const std::string& name);
std::filesystem::path plugin_dir();

// A model session on the "cpu" provider with the build's plugins.
std::unique_ptr<model::ModelSession> cpu_session();

// A float32/int32 tensor from reference.safetensors, flattened.
struct RefTensor {
  std::vector<int64_t> shape;
  std::vector<float> f32;
  std::vector<int32_t> i32;
};
RefTensor read_reference(const std::filesystem::path& fixture_dir, const std::string& key);
nlohmann::json read_json(const std::filesystem::path& path);
void write_json(const std::filesystem::path& path, const nlohmann::json& j);

// A scratch copy of a fixture directory, removed on destruction.
class FixtureCopy {
 public:
  explicit FixtureCopy(const std::string& fixture_name);
  ~FixtureCopy();
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

// Reads / rewrites a safetensors file's header (data bytes kept as they are).
struct RawSafetensors {
  nlohmann::json header;
  std::string data;
};
RawSafetensors read_raw(const std::filesystem::path& file);
void write_raw(const std::filesystem::path& file, const RawSafetensors& raw);
void write_header_bytes(const std::filesystem::path& file, const std::string& header_bytes, const std::string& data);

// The shard holding tensor `name` (from the index).
std::filesystem::path shard_of(const std::filesystem::path& dir, const std::string& name);

}  // namespace seatrt::test
