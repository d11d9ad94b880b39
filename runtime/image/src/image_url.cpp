// Stages: the content part's shape, the URL's scheme, the data: URL's
// header, then the base64 payload.
#include "seatrt/image/image_url.hpp"

#include <array>
#include <cctype>
#include <nlohmann/json.hpp>

namespace seatrt::image {

namespace {

[[noreturn]] void bad_request(const std::string& what) { throw ImageError(ImageErrorKind::kRequest, what); }

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

// 0..63 for the base64 alphabet, -1 otherwise.
constexpr std::array<int8_t, 256> kBase64 = [] {
  std::array<int8_t, 256> t{};
  t.fill(-1);
  const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(alphabet[i])] = static_cast<int8_t>(i);
  return t;
}();

std::vector<uint8_t> decode_base64(std::string_view text, std::size_t max_bytes) {
  std::size_t end = text.size();
  std::size_t padding = 0;
  while (end > 0 && text[end - 1] == '=' && padding < 2) {
    --end;
    ++padding;
  }
  if (end % 4 == 1) bad_request("image data: URL: base64 payload has an impossible length");
  if (padding && (end + padding) % 4 != 0) bad_request("image data: URL: base64 padding is wrong");
  const std::size_t decoded = end / 4 * 3 + (end % 4 ? end % 4 - 1 : 0);
  if (decoded > max_bytes)
    throw ImageError(ImageErrorKind::kTooLarge, "image of " + std::to_string(decoded) +
                                                    " bytes is over the limit of " + std::to_string(max_bytes) +
                                                    " bytes");
  std::vector<uint8_t> out;
  out.reserve(decoded);
  uint32_t acc = 0;
  int bits = 0;
  for (std::size_t i = 0; i < end; ++i) {
    const int8_t v = kBase64[static_cast<unsigned char>(text[i])];
    if (v < 0) bad_request("image data: URL: character " + std::to_string(i) + " of the payload is not base64");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>(acc >> bits));
      acc &= (1u << bits) - 1;
    }
  }
  // Leftover bits of a short final group must be zero (canonical base64).
  if (acc != 0) bad_request("image data: URL: base64 payload does not end cleanly");
  return out;
}

}  // namespace

ImagePart parse_image_part(const nlohmann::json& part, const std::string& where) {
  if (!part.is_object()) bad_request(where + " must be an object");
  const auto image_url = part.find("image_url");
  if (image_url == part.end()) bad_request(where + ".image_url is missing");
  if (!image_url->is_object()) bad_request(where + ".image_url must be an object with a \"url\"");
  const auto url = image_url->find("url");
  if (url == image_url->end() || !url->is_string()) bad_request(where + ".image_url.url must be a string");
  ImagePart out;
  out.url = url->get<std::string>();
  out.detail = "auto";
  if (const auto detail = image_url->find("detail"); detail != image_url->end() && !detail->is_null()) {
    if (!detail->is_string()) bad_request(where + ".image_url.detail must be a string");
    out.detail = detail->get<std::string>();
    if (out.detail != "auto" && out.detail != "low" && out.detail != "high")
      bad_request(where + ".image_url.detail must be \"auto\", \"low\" or \"high\"");
  }
  if (starts_with_ci(out.url, "data:")) {
    out.kind = UrlKind::kData;
  } else if (starts_with_ci(out.url, "http://") || starts_with_ci(out.url, "https://")) {
    out.kind = UrlKind::kHttp;
  } else {
    bad_request(where + ".image_url.url must be a data: URL or an http(s) URL");
  }
  return out;
}

std::vector<uint8_t> decode_data_url(std::string_view url, std::size_t max_bytes) {
  if (!starts_with_ci(url, "data:")) bad_request("image URL is not a data: URL");
  const std::size_t comma = url.find(',');
  if (comma == std::string_view::npos) bad_request("image data: URL has no ',' before its data");
  const std::string_view header = url.substr(5, comma - 5);  // "<media type>[;params];base64"
  if (!(header.size() >= 7 && starts_with_ci(header.substr(header.size() - 7), ";base64")))
    throw ImageError(ImageErrorKind::kUnsupported, "image data: URL must be base64 (\";base64,\")");
  const std::string_view media = header.substr(0, header.find(';'));
  if (!media.empty() && !starts_with_ci(media, "image/png") && !starts_with_ci(media, "image/jpeg") &&
      !starts_with_ci(media, "image/jpg") && !starts_with_ci(media, "image/webp") && !starts_with_ci(media, "image/gif"))
    throw ImageError(ImageErrorKind::kUnsupported,
                     "image data: URL media type '" + std::string(media.substr(0, 64)) +
                         "' is not supported (image/png, image/jpeg, image/webp, image/gif)");
  return decode_base64(url.substr(comma + 1), max_bytes);
}

}  // namespace seatrt::image
