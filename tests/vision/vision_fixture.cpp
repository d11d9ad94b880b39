#include "vision_fixture.hpp"

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <cstdlib>
#include <stdexcept>

namespace seatrt::test {

// SEATRT_VISION_FIXTURE_DIR overrides the build's path (a device run, where
// the tree sits elsewhere).
VisionFixture::VisionFixture()
    : dir(std::getenv("SEATRT_VISION_FIXTURE_DIR") ? std::getenv("SEATRT_VISION_FIXTURE_DIR") : SEATRT_VISION_FIXTURE) {
  std::ifstream in(dir / "reference.json");
  const auto j = nlohmann::json::parse(in);
  max_patches = j.at("max_patches").get<int32_t>();
  for (const auto& m : j.at("images")) {
    FixtureImage img;
    img.file = m.at("file").get<std::string>();
    img.width = m.at("width").get<int32_t>();
    img.height = m.at("height").get<int32_t>();
    img.resized_width = m.at("resized_width").get<int32_t>();
    img.resized_height = m.at("resized_height").get<int32_t>();
    img.num_patches = m.at("num_patches").get<int32_t>();
    img.num_soft_tokens = m.at("num_soft_tokens").get<int32_t>();
    images.push_back(img);
  }
  reference_ = std::make_unique<model::SafetensorsFile>(dir / "reference.safetensors");
}

const VisionFixture& VisionFixture::get() {
  static const VisionFixture fixture;
  return fixture;
}

std::vector<uint8_t> VisionFixture::file_bytes(const FixtureImage& image) const {
  std::ifstream in(dir / image.file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const model::TensorEntry& VisionFixture::tensor(std::size_t index, const std::string& what) const {
  const std::string name = "img" + std::to_string(index) + "." + what;
  for (const auto& t : reference_->tensors())
    if (t.name == name) return t;
  throw std::runtime_error("reference tensor missing: " + name);
}

}  // namespace seatrt::test
