#include "fixture_support.hpp"

#include <atomic>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

#include "seatrt/model/safetensors.hpp"

namespace seatrt::test {

std::filesystem::path fixture(const std::string& name) {
  return std::filesystem::path(SEATRT_TEST_FIXTURES_DIR) / name;
}

std::filesystem::path plugin_dir() { return std::filesystem::path(SEATRT_TEST_PLUGIN_DIR); }

std::unique_ptr<model::ModelSession> cpu_session() {
  return std::make_unique<model::ModelSession>(std::vector<std::filesystem::path>{plugin_dir()}, "cpu");
}

RefTensor read_reference(const std::filesystem::path& fixture_dir, const std::string& key) {
  const model::SafetensorsFile file(fixture_dir / "reference.safetensors");
  for (const auto& t : file.tensors()) {
    if (t.name != key) continue;
    RefTensor r;
    r.shape = t.shape;
    if (t.dtype == SEATRT_DTYPE_F32) {
      r.f32.resize(t.nbytes / 4);
      std::memcpy(r.f32.data(), t.data, t.nbytes);
    } else if (t.dtype == SEATRT_DTYPE_I32) {
      r.i32.resize(t.nbytes / 4);
      std::memcpy(r.i32.data(), t.data, t.nbytes);
    } else {
      throw std::runtime_error("reference " + key + ": unexpected dtype " + t.dtype_name);
    }
    return r;
  }
  throw std::runtime_error("reference.safetensors has no " + key);
}

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return nlohmann::json::parse(in);
}

void write_json(const std::filesystem::path& path, const nlohmann::json& j) {
  std::ofstream out(path, std::ios::trunc);
  out << j.dump(2);
}

FixtureCopy::FixtureCopy(const std::string& fixture_name) {
  static std::atomic<int> counter{0};
  dir_ = std::filesystem::temp_directory_path() /
         ("seatrt-model-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(dir_);
  std::filesystem::copy(fixture(fixture_name), dir_, std::filesystem::copy_options::recursive);
  for (const auto& e : std::filesystem::directory_iterator(dir_))
    std::filesystem::permissions(e.path(), std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                                 std::filesystem::perm_options::add);
}

FixtureCopy::~FixtureCopy() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

RawSafetensors read_raw(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  RawSafetensors raw;
  raw.header = nlohmann::json::parse(bytes.substr(8, n));
  raw.data = bytes.substr(8 + n);
  return raw;
}

void write_header_bytes(const std::filesystem::path& file, const std::string& header, const std::string& data) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xFF));
  out << header << data;
}

void write_raw(const std::filesystem::path& file, const RawSafetensors& raw) {
  write_header_bytes(file, raw.header.dump(), raw.data);
}

std::filesystem::path shard_of(const std::filesystem::path& dir, const std::string& name) {
  const auto index = read_json(dir / "model.safetensors.index.json");
  return dir / index["weight_map"][name].get<std::string>();
}

}  // namespace seatrt::test
