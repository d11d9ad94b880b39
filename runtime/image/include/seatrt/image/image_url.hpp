// The image content part of an OpenAI chat message,
//   {"type": "image_url", "image_url": {"url": "...", "detail": "auto"}},
// and the bytes of its data: URL.  Whether a remote (http/https) URL may be
// fetched is the seat's decision; this file only says which kind it is.
// Every problem is an ImageError (kRequest for the request's shape,
// kUnsupported, kTooLarge) naming it, for a 400.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "seatrt/image/image.hpp"

namespace seatrt::image {

enum class UrlKind { kData, kHttp };

struct ImagePart {
  std::string url;
  std::string detail;  // "auto" when absent; "low" / "high" accepted and recorded
  UrlKind kind = UrlKind::kData;
};

// Checks one content part of type "image_url"; `where` names it in errors
// ("messages[1].content[0]").
ImagePart parse_image_part(const nlohmann::json& part, const std::string& where);

// The bytes of a base64 data: URL ("data:image/png;base64,...").  The media
// type, when given, must be image/png, image/jpeg, image/webp or image/gif
// (the bytes' own signature decides the decoder later); the payload is
// strict base64 (padding optional, no other characters); more than
// `max_bytes` decoded bytes is kTooLarge, found before decoding.
std::vector<uint8_t> decode_data_url(std::string_view url, std::size_t max_bytes);

}  // namespace seatrt::image
