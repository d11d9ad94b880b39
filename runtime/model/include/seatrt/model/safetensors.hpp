// One .safetensors file, memory-mapped and validated.
//
// Format: 8-byte little-endian header length N, N bytes of UTF-8 JSON
// {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {..}},
// then the data area; offsets are relative to its start.  Every way the
// header can disagree with the bytes (truncation, absurd length, offsets
// past the end, overlaps, gaps, dtype x shape != byte count, malformed or
// non-UTF-8 JSON) is a CheckpointError naming the file and the tensor.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "seatrt/model/mapped_file.hpp"

namespace seatrt::model {

struct TensorEntry {
  std::string name;
  int32_t dtype = 0;       // seatrt_dtype; SEATRT_DTYPE_INVALID when seatrt has no such type
  std::string dtype_name;  // as the header spells it
  std::vector<int64_t> shape;
  const unsigned char* data = nullptr;  // inside the map
  uint64_t nbytes = 0;
};

class SafetensorsFile {
 public:
  // A header larger than this is refused as corrupt (the reference
  // implementation uses the same 100 MB bound).
  static constexpr uint64_t kMaxHeaderBytes = 100u * 1000u * 1000u;

  explicit SafetensorsFile(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return map_->path(); }
  // In data-offset order.
  const std::vector<TensorEntry>& tensors() const { return tensors_; }

 private:
  std::shared_ptr<MappedFile> map_;
  std::vector<TensorEntry> tensors_;
};

// True when `bytes` is well-formed UTF-8 (no overlongs, no surrogates).
bool is_valid_utf8(std::string_view bytes);

}  // namespace seatrt::model
