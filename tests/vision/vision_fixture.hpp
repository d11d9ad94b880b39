// The HF vision fixture (tests/fixtures/gemma4-vision-tiny): its images,
// their metadata and reference tensors, read once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "seatrt/model/safetensors.hpp"

namespace seatrt::test {

struct FixtureImage {
  std::string file;  // relative to the fixture folder
  int32_t width = 0, height = 0;
  int32_t resized_width = 0, resized_height = 0;
  int32_t num_patches = 0, num_soft_tokens = 0;
};

class VisionFixture {
 public:
  static const VisionFixture& get();

  std::filesystem::path dir;
  int32_t max_patches = 0;
  std::vector<FixtureImage> images;

  std::vector<uint8_t> file_bytes(const FixtureImage& image) const;
  // A reference tensor "img<i>.<what>"; fails the test when absent.
  const model::TensorEntry& tensor(std::size_t index, const std::string& what) const;

 private:
  VisionFixture();
  std::unique_ptr<model::SafetensorsFile> reference_;
};

}  // namespace seatrt::test
