// libFuzzer target (clang only; not a test) over what a request's image
// reaches: the content-part parser and data: URL decoder, the four image
// decoders (with small limits, so huge headers are refused early) and the
// preprocessing of whatever decodes.  The first byte picks the path.
// Build in a clang tree with sanitizers and run, e.g.:
//   build-fuzz/bin/fuzz_images -max_total_time=60 tests/fixtures/gemma4-vision-tiny/images
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "seatrt/image/image_url.hpp"
#include "seatrt/image/preprocess.hpp"

namespace img = seatrt::image;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const img::ProcessorConfig config = img::parse_processor_config(R"({"max_soft_tokens": 70})", "fuzz");
  img::DecodeLimits limits;
  limits.max_bytes = 1 << 20;
  limits.max_pixels = 1 << 20;
  try {
    if (size > 0 && data[0] == '{') {
      const auto part = nlohmann::json::parse(data, data + size, nullptr, false);
      if (part.is_discarded()) return 0;
      const auto parsed = img::parse_image_part(part, "fuzz");
      if (parsed.kind == img::UrlKind::kData) img::preprocess(img::decode_image(img::decode_data_url(parsed.url, limits.max_bytes), limits), config);
    } else if (size > 5 && std::string(reinterpret_cast<const char*>(data), 5) == "data:") {
      img::decode_data_url(std::string(reinterpret_cast<const char*>(data), size), limits.max_bytes);
    } else {
      img::preprocess(img::decode_image({data, size}, limits), config);
    }
  } catch (const img::ImageError&) {
  }
  return 0;
}
