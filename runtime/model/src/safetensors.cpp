#include "seatrt/model/safetensors.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "seatrt/model/dtype.hpp"
#include "seatrt/tensor.h"

namespace seatrt::model {

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw CheckpointError(path.string() + ": " + what);
}

uint64_t read_u64_le(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

uint64_t json_u64(const std::filesystem::path& path, const std::string& tensor, const json& v,
                  const char* what) {
  if (!v.is_number_integer() || (v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() < 0))
    fail(path, "tensor '" + tensor + "': " + what + " must be a non-negative integer, got " + v.dump());
  return v.get<uint64_t>();
}

TensorEntry parse_entry(const std::filesystem::path& path, const std::string& name, const json& spec,
                        uint64_t data_size) {
  if (!spec.is_object()) fail(path, "tensor '" + name + "': header entry is not an object");
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!spec.contains(key)) fail(path, "tensor '" + name + "': header entry has no '" + key + "'");
  TensorEntry t;
  t.name = name;
  if (!spec["dtype"].is_string()) fail(path, "tensor '" + name + "': dtype is not a string");
  t.dtype_name = spec["dtype"].get<std::string>();
  const auto type = safetensors_dtype(t.dtype_name);
  if (!type) fail(path, "tensor '" + name + "': unknown dtype '" + t.dtype_name + "'");
  t.dtype = type->dtype;

  const json& shape = spec["shape"];
  if (!shape.is_array()) fail(path, "tensor '" + name + "': shape is not an array");
  if (shape.size() > SEATRT_MAX_DIMS)
    fail(path, "tensor '" + name + "': " + std::to_string(shape.size()) + " dimensions (at most " +
                   std::to_string(SEATRT_MAX_DIMS) + ")");
  uint64_t elements = 1;
  for (const auto& d : shape) {
    const uint64_t dim = json_u64(path, name, d, "every shape entry");
    if (dim > (uint64_t{1} << 48)) fail(path, "tensor '" + name + "': dimension " + std::to_string(dim) + " is absurd");
    if (dim != 0 && elements > std::numeric_limits<uint64_t>::max() / dim)
      fail(path, "tensor '" + name + "': shape overflows");
    elements *= dim;
    t.shape.push_back(static_cast<int64_t>(dim));
  }

  const json& offsets = spec["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2)
    fail(path, "tensor '" + name + "': data_offsets must be [begin, end]");
  const uint64_t begin = json_u64(path, name, offsets[0], "data_offsets[0]");
  const uint64_t end = json_u64(path, name, offsets[1], "data_offsets[1]");
  if (end < begin)
    fail(path, "tensor '" + name + "': data_offsets end " + std::to_string(end) + " is before begin " +
                   std::to_string(begin));
  if (end > data_size)
    fail(path, "tensor '" + name + "': data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                   "] run past the end of the data (" + std::to_string(data_size) +
                   " bytes; file truncated or header corrupt)");
  t.nbytes = end - begin;
  if (elements > std::numeric_limits<uint64_t>::max() / type->bytes || elements * type->bytes != t.nbytes)
    fail(path, "tensor '" + name + "': dtype " + t.dtype_name + " x shape " + shape.dump() + " needs " +
                   std::to_string(elements) + " x " + std::to_string(type->bytes) + " bytes but data_offsets hold " +
                   std::to_string(t.nbytes));
  t.data = reinterpret_cast<const unsigned char*>(begin);  // rebased by the caller
  return t;
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
  std::size_t i = 0;
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  while (i < s.size()) {
    const unsigned char c = byte(i);
    std::size_t len;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1Fu;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0Fu;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07u;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k) {
      if ((byte(i + k) & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (byte(i + k) & 0x3Fu);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += len;
  }
  return true;
}

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path)
    : map_(std::make_shared<MappedFile>(path)) {
  const std::size_t size = map_->size();
  if (size < 8)
    fail(path, "truncated: " + std::to_string(size) + " bytes, but a safetensors file starts with an 8-byte header length");
  const uint64_t header_len = read_u64_le(map_->data());
  if (header_len > kMaxHeaderBytes)
    fail(path, "header length " + std::to_string(header_len) + " is absurd (limit " + std::to_string(kMaxHeaderBytes) +
                   " bytes): not a safetensors file or corrupt");
  if (header_len > size - 8)
    fail(path, "truncated: header length " + std::to_string(header_len) + " but only " + std::to_string(size - 8) +
                   " bytes follow");
  const std::string_view header(reinterpret_cast<const char*>(map_->data() + 8), header_len);
  if (!is_valid_utf8(header)) fail(path, "header is not valid UTF-8");
  const json doc = json::parse(header, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) fail(path, "header is not valid JSON");
  if (!doc.is_object()) fail(path, "header is not a JSON object");

  const uint64_t data_size = size - 8 - header_len;
  const unsigned char* data_start = map_->data() + 8 + header_len;
  for (const auto& [name, spec] : doc.items()) {
    if (name == "__metadata__") continue;
    tensors_.push_back(parse_entry(path, name, spec, data_size));
  }
  const auto offset = [](const TensorEntry& t) { return reinterpret_cast<uintptr_t>(t.data); };
  std::stable_sort(tensors_.begin(), tensors_.end(),
                   [&](const TensorEntry& a, const TensorEntry& b) {
                     return offset(a) != offset(b) ? offset(a) < offset(b) : a.nbytes < b.nbytes;
                   });
  // The data area must be covered exactly: no overlaps, no gaps, no tail.
  uint64_t cursor = 0;
  const TensorEntry* previous = nullptr;
  for (auto& t : tensors_) {
    const uint64_t begin = offset(t);
    if (begin < cursor)
      fail(path, "tensors '" + previous->name + "' and '" + t.name + "' overlap (data_offsets " +
                     std::to_string(begin) + " < " + std::to_string(cursor) + ")");
    if (begin > cursor)
      fail(path, "data_offsets leave bytes [" + std::to_string(cursor) + ", " + std::to_string(begin) +
                     ") before tensor '" + t.name + "' unused: header does not cover the data");
    cursor = begin + t.nbytes;
    previous = &t;
    t.data = data_start + begin;
  }
  if (cursor != data_size)
    fail(path, "the data area has " + std::to_string(data_size) + " bytes but the header covers " +
                   std::to_string(cursor) + ": header does not cover the data");
}

}  // namespace seatrt::model
