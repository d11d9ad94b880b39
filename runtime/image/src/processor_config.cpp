// The image processor's settings from a checkpoint folder, in Hugging
// Face's order of precedence: processor_config.json's "image_processor"
// section, else preprocessor_config.json.
#include <nlohmann/json.hpp>

#include "seatrt/host/regular_file.hpp"
#include "seatrt/image/preprocess.hpp"

namespace seatrt::image {

namespace {

[[noreturn]] void config_error(const std::string& where, const std::string& what) {
  throw ImageError(ImageErrorKind::kConfig, where + ": " + what);
}

template <typename T>
T read_key(const nlohmann::json& j, const char* key, T fallback, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    config_error(where, std::string("\"") + key + "\" has the wrong type");
  }
}

ProcessorConfig from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) config_error(where, "the image processor settings are not a JSON object");
  ProcessorConfig c;
  c.source = where;
  c.patch_size = read_key<int32_t>(j, "patch_size", c.patch_size, where);
  c.max_soft_tokens = read_key<int32_t>(j, "max_soft_tokens", c.max_soft_tokens, where);
  c.pooling_kernel_size = read_key<int32_t>(j, "pooling_kernel_size", c.pooling_kernel_size, where);
  c.do_rescale = read_key<bool>(j, "do_rescale", c.do_rescale, where);
  c.rescale_factor = read_key<double>(j, "rescale_factor", c.rescale_factor, where);
  // Gemma4ImageProcessor's own checks, then what seatrt does not reproduce.
  switch (c.max_soft_tokens) {
    case 70: case 140: case 280: case 560: case 1120: break;
    default: config_error(where, "max_soft_tokens must be one of 70, 140, 280, 560, 1120, got " +
                                     std::to_string(c.max_soft_tokens));
  }
  if (c.patch_size <= 0 || c.patch_size > 64) config_error(where, "patch_size must be in 1..64");
  if (c.pooling_kernel_size <= 0 || c.pooling_kernel_size > 8) config_error(where, "pooling_kernel_size must be in 1..8");
  if (!read_key<bool>(j, "do_resize", true, where)) config_error(where, "do_resize false is not supported");
  if (read_key<bool>(j, "do_normalize", false, where))
    config_error(where, "do_normalize true is not supported (Gemma-4 normalises inside the model)");
  if (read_key<int>(j, "resample", 3, where) != 3) config_error(where, "only resample 3 (bicubic) is supported");
  if (!read_key<bool>(j, "do_convert_rgb", true, where)) config_error(where, "do_convert_rgb false is not supported");
  return c;
}

nlohmann::json parse_file(const std::filesystem::path& path) {
  std::string text;
  if (const std::string why = host::read_regular_file(path, text); !why.empty())
    config_error(path.string(), why);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    config_error(path.string(), std::string("not valid JSON: ") + e.what());
  }
}

}  // namespace

ProcessorConfig parse_processor_config(const std::string& json_text, const std::string& where) {
  try {
    return from_json(nlohmann::json::parse(json_text), where);
  } catch (const nlohmann::json::exception& e) {
    config_error(where, std::string("not valid JSON: ") + e.what());
  }
}

ProcessorConfig load_processor_config(const std::filesystem::path& dir) {
  const auto processor = dir / "processor_config.json";
  if (std::filesystem::exists(processor)) {
    const nlohmann::json j = parse_file(processor);
    if (j.is_object() && j.contains("image_processor"))
      return from_json(j["image_processor"], processor.string() + " [image_processor]");
  }
  const auto preprocessor = dir / "preprocessor_config.json";
  if (std::filesystem::exists(preprocessor)) return from_json(parse_file(preprocessor), preprocessor.string());
  config_error(dir.string(), "no image processor settings (neither processor_config.json with an "
                             "\"image_processor\" section nor preprocessor_config.json)");
}

}  // namespace seatrt::image
