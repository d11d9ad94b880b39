// Image content parts and data: URLs: the fixture images sent as base64
// data URLs come back byte for byte and decode; malformed parts and URLs
// are request errors naming the problem.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "seatrt/image/image_url.hpp"
#include "vision_fixture.hpp"

namespace img = seatrt::image;
using seatrt::test::VisionFixture;

namespace {

// The test's own encoder (RFC 4648 with padding), independent of the decoder.
std::string base64(const std::vector<uint8_t>& bytes) {
  static const char* abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const uint32_t b0 = bytes[i], b1 = i + 1 < bytes.size() ? bytes[i + 1] : 0, b2 = i + 2 < bytes.size() ? bytes[i + 2] : 0;
    const uint32_t v = (b0 << 16) | (b1 << 8) | b2;
    out += abc[(v >> 18) & 63];
    out += abc[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? abc[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? abc[v & 63] : '=';
  }
  return out;
}

img::ImageErrorKind error_of(const std::string& url, std::string* message = nullptr, std::size_t max = 1 << 20) {
  try {
    img::decode_data_url(url, max);
  } catch (const img::ImageError& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  FAIL("accepted: " << url.substr(0, 80));
  return img::ImageErrorKind::kConfig;
}

}  // namespace

TEST_CASE("RFC 4648 test vectors decode", "[url]") {
  const std::pair<const char*, const char*> vectors[] = {
      {"", ""}, {"Zg==", "f"}, {"Zm8=", "fo"}, {"Zm9v", "foo"}, {"Zm9vYg==", "foob"}, {"Zm9vYmE=", "fooba"},
      {"Zm9vYmFy", "foobar"}, {"Zm9vYg", "foob"}};  // the last without padding
  for (const auto& [encoded, plain] : vectors) {
    INFO(encoded);
    const auto bytes = img::decode_data_url(std::string("data:image/png;base64,") + encoded, 100);
    CHECK(std::string(bytes.begin(), bytes.end()) == plain);
  }
}

TEST_CASE("fixture images round-trip through data URLs and decode", "[url]") {
  const auto& fx = VisionFixture::get();
  const char* media[] = {"image/png", "image/png", "image/png", "image/jpeg", "image/jpeg", "image/webp", "image/gif"};
  for (std::size_t i = 0; i < fx.images.size(); ++i) {
    INFO(fx.images[i].file);
    const auto bytes = fx.file_bytes(fx.images[i]);
    const nlohmann::json part = {{"type", "image_url"},
                                 {"image_url", {{"url", std::string("data:") + media[i] + ";base64," + base64(bytes)}}}};
    const auto parsed = img::parse_image_part(part, "messages[0].content[1]");
    CHECK(parsed.kind == img::UrlKind::kData);
    CHECK(parsed.detail == "auto");
    const auto back = img::decode_data_url(parsed.url, 1 << 20);
    CHECK(back == bytes);
    const auto decoded = img::decode_image(back);
    CHECK(decoded.width == fx.images[i].width);
  }
}

TEST_CASE("content parts name what is wrong with them", "[url]") {
  auto refused = [](const nlohmann::json& part, const char* word) {
    INFO(part.dump());
    try {
      img::parse_image_part(part, "messages[0].content[1]");
      FAIL("accepted");
    } catch (const img::ImageError& e) {
      CHECK(e.kind() == img::ImageErrorKind::kRequest);
      CHECK(std::string(e.what()).find(word) != std::string::npos);
      CHECK(std::string(e.what()).find("messages[0].content[1]") != std::string::npos);
    }
  };
  refused(nlohmann::json::array(), "object");
  refused({{"type", "image_url"}}, "image_url is missing");
  refused({{"type", "image_url"}, {"image_url", "data:image/png;base64,AAAA"}}, "object");
  refused({{"type", "image_url"}, {"image_url", {{"url", 5}}}}, "url must be a string");
  refused({{"type", "image_url"}, {"image_url", {{"url", "ftp://x/y.png"}}}}, "data: URL or an http(s) URL");
  refused({{"type", "image_url"}, {"image_url", {{"url", "data:,"}, {"detail", "max"}}}}, "detail");
  const auto remote = img::parse_image_part({{"type", "image_url"}, {"image_url", {{"url", "HTTPS://example.com/a.png"}, {"detail", "low"}}}}, "p");
  CHECK(remote.kind == img::UrlKind::kHttp);
  CHECK(remote.detail == "low");
}

TEST_CASE("malformed, unsupported and oversized data URLs are refused", "[url]") {
  std::string m;
  CHECK(error_of("data:image/png;base64", &m) == img::ImageErrorKind::kRequest);
  CHECK(m.find("','") != std::string::npos);
  CHECK(error_of("data:image/png,rawbytes", &m) == img::ImageErrorKind::kUnsupported);
  CHECK(m.find("base64") != std::string::npos);
  CHECK(error_of("data:text/html;base64,PGgxPg==", &m) == img::ImageErrorKind::kUnsupported);
  CHECK(m.find("text/html") != std::string::npos);
  CHECK(error_of("data:image/png;base64,Zm9v!mFy", &m) == img::ImageErrorKind::kRequest);
  CHECK(m.find("character 4") != std::string::npos);
  CHECK(error_of("data:image/png;base64,Zm9vY", &m) == img::ImageErrorKind::kRequest);  // 5 chars: impossible
  CHECK(error_of("data:image/png;base64,Zm9=") == img::ImageErrorKind::kRequest);      // "Zm9" ends in set bits
  CHECK(error_of("data:image/png;base64,Zg=", &m) == img::ImageErrorKind::kRequest);    // padding short
  CHECK(error_of("data:image/png;base64,Zm9vYmFy", &m, 5) == img::ImageErrorKind::kTooLarge);
  CHECK(m.find("6 bytes") != std::string::npos);
  CHECK(error_of("https://example.com/a.png") == img::ImageErrorKind::kRequest);
}
