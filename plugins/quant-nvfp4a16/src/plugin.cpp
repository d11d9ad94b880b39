// The "nvfp4a16" quantization plugin: the seatrt_quant_api table.
#include <cmath>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nvfp4_config.hpp"
#include "nvfp4_convert.hpp"
#include "seatrt/cpp/dtype.hpp"
#include "seatrt/cpp/plugin.hpp"
#include "seatrt/seatrt.h"

using seatrt::sdk::Error;

struct seatrt_quant_scheme {
  seatrt::nvfp4::SchemeConfig config;
};

namespace {

constexpr const char* kName = "nvfp4a16";

// Host buffers of one converted Linear (the release_host token).
struct HostBuffers {
  std::vector<unsigned char> data;
  std::vector<unsigned char> scales;
};

bool find(const seatrt_model_source* src, const std::string& name, seatrt_checkpoint_tensor* out) {
  out->struct_size = sizeof(seatrt_checkpoint_tensor);
  seatrt_status* st = src->find_tensor(src, name.c_str(), out);
  if (!st) return true;
  const auto* host = seatrt::sdk::host();
  const bool not_found = host->status_code(st) == SEATRT_ERR_NOT_FOUND;
  if (not_found) {
    host->status_free(st);
    return false;
  }
  seatrt::sdk::throw_if_error(st);
  return false;
}

// "BF16 [128, 32]": what a tensor is, for messages about what it should be.
std::string shape_text(const seatrt_checkpoint_tensor& t) {
  const char* dtype = seatrt::sdk::dtype_name(t.dtype);
  std::string s = std::string(dtype ? dtype : "unknown dtype") + " [";
  for (int i = 0; i < t.ndim; ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
  return s + "]";
}

int64_t numel(const seatrt_checkpoint_tensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

[[noreturn]] void bad_tensor(const std::string& name, const std::string& what) {
  throw Error(SEATRT_ERR_INVALID_ARG, "tensor '" + name + "': " + what);
}

// The three tensors of a quantized Linear, validated against each other.
struct QuantizedTensors {
  seatrt_checkpoint_tensor packed{}, scale{}, global{};
  int64_t out_features = 0, in_features = 0;
};

QuantizedTensors read_quantized(const seatrt_model_source* src, const std::string& module) {
  QuantizedTensors q;
  const std::string p = module + ".weight_packed", s = module + ".weight_scale", g = module + ".weight_global_scale";
  if (!find(src, p, &q.packed)) bad_tensor(p, "missing");
  if (!find(src, s, &q.scale)) bad_tensor(s, "missing (every quantized Linear has one)");
  if (!find(src, g, &q.global)) bad_tensor(g, "missing (every quantized Linear has one)");
  if (q.packed.dtype != SEATRT_DTYPE_U8 || q.packed.ndim != 2) bad_tensor(p, "must be U8 [out, in/2], got " + shape_text(q.packed));
  q.out_features = q.packed.shape[0];
  q.in_features = q.packed.shape[1] * 2;
  if (q.in_features % 16 != 0)
    bad_tensor(p, "in_features " + std::to_string(q.in_features) + " is not a multiple of the group size 16");
  if (q.scale.dtype != SEATRT_DTYPE_F8_E4M3 || q.scale.ndim != 2 || q.scale.shape[0] != q.out_features ||
      q.scale.shape[1] != q.in_features / 16)
    bad_tensor(s, "must be F8_E4M3 [" + std::to_string(q.out_features) + ", " + std::to_string(q.in_features / 16) +
                      "], got " + shape_text(q.scale));
  if (q.global.dtype != SEATRT_DTYPE_F32 || numel(q.global) != 1)
    bad_tensor(g, "must be one F32 value, got " + shape_text(q.global));
  float gs;
  std::memcpy(&gs, q.global.data, 4);
  if (!(gs > 0.0f) || !std::isfinite(gs)) bad_tensor(g, "global scale " + std::to_string(gs) + " is not positive and finite");
  return q;
}

seatrt_tensor host_tensor(int32_t dtype, void* data, int64_t rows, int64_t cols) {
  seatrt_tensor t{};
  t.struct_size = sizeof(seatrt_tensor);
  t.dtype = dtype;
  t.data = data;
  t.ndim = 2;
  t.shape[0] = rows;
  t.shape[1] = cols;
  t.strides[0] = cols;
  t.strides[1] = 1;
  t.device = seatrt_device{SEATRT_DEVICE_CPU, 0};
  return t;
}

// --- table slots -------------------------------------------------------------

seatrt_status* probe(const char* json_text, int32_t* score) {
  return seatrt::sdk::guard([&] {
    *score = 0;
    if (!json_text || !*json_text) return;
    const auto q = nlohmann::json::parse(json_text, nullptr, false);
    // Any compressed-tensors config is ours to judge: create() then names
    // an unsupported format instead of "no plugin".
    if (q.is_object() && q.value("quant_method", "") == "compressed-tensors") *score = 100;
  });
}

seatrt_status* create(const char* json_text, const char* /*options*/, seatrt_quant_scheme** out) {
  return seatrt::sdk::guard([&] {
    try {
      auto scheme = std::make_unique<seatrt_quant_scheme>();
      scheme->config = seatrt::nvfp4::SchemeConfig::parse(json_text ? json_text : "");
      *out = scheme.release();
    } catch (const std::invalid_argument& e) {
      throw Error(SEATRT_ERR_UNSUPPORTED, e.what());
    }
  });
}

void destroy(seatrt_quant_scheme* scheme) { delete scheme; }

seatrt_status* linear_state(const seatrt_quant_scheme* scheme, const seatrt_model_source* src, const char* module,
                            int32_t* state) {
  return seatrt::sdk::guard([&] {
    const std::string m = module;
    seatrt_checkpoint_tensor t{};
    const bool packed = find(src, m + ".weight_packed", &t);
    const bool dense = find(src, m + ".weight", &t);
    if (!packed && !dense) {
      *state = SEATRT_LINEAR_ABSENT;
      return;
    }
    if (packed && dense)
      throw Error(SEATRT_ERR_INVALID_ARG, "Linear '" + m + "' is stored both dense (" + m + ".weight) and quantized (" +
                                              m + ".weight_packed)");
    std::string why;
    const bool expected = scheme->config.quantizes(m, &why);
    if (packed && !expected)
      throw Error(SEATRT_ERR_INVALID_ARG, "Linear '" + m + "' is stored quantized (" + m +
                                              ".weight_packed) but quantization_config leaves it dense (" + why + ")");
    if (dense && expected)
      throw Error(SEATRT_ERR_INVALID_ARG, "Linear '" + m + "' is stored dense (" + m +
                                              ".weight) but quantization_config quantizes it (no ignore entry matches)");
    *state = packed ? SEATRT_LINEAR_QUANTIZED : SEATRT_LINEAR_DENSE;
  });
}

seatrt_status* layouts(const seatrt_quant_scheme*, int32_t format, int32_t* out, int32_t capacity, int32_t* count) {
  return seatrt::sdk::guard([&] {
    std::vector<int32_t> mine;
    if (format == SEATRT_WFMT_NVFP4)
      mine = {SEATRT_LAYOUT_NVFP4_CT_ROW_MAJOR, SEATRT_LAYOUT_DENSE_ROW_MAJOR};
    else if (format == SEATRT_WFMT_DENSE)
      mine = {SEATRT_LAYOUT_DENSE_ROW_MAJOR};
    *count = static_cast<int32_t>(mine.size());
    for (int32_t i = 0; i < capacity && i < *count; ++i) out[i] = mine[static_cast<std::size_t>(i)];
  });
}

seatrt_status* convert_linear(const seatrt_quant_scheme* scheme, const seatrt_model_source* src, const char* module,
                              int32_t layout, seatrt_linear_weight* out, void** token) {
  return seatrt::sdk::guard([&] {
    int32_t state = 0;
    seatrt::sdk::throw_if_error(linear_state(scheme, src, module, &state));
    const std::string m = module;
    if (state == SEATRT_LINEAR_ABSENT) throw Error(SEATRT_ERR_NOT_FOUND, "Linear '" + m + "' is not in the checkpoint");
    if (layout == SEATRT_LAYOUT_NVFP4_SM90_TILED)
      // UNSUPPORTED: the Hopper tiled layout is defined by kernels/cuda; this
      // plugin does not write it yet.
      throw Error(SEATRT_ERR_UNSUPPORTED, "Linear '" + m + "': layout NVFP4_SM90_TILED is not implemented by the " +
                                              "nvfp4a16 plugin");
    auto buffers = std::make_unique<HostBuffers>();
    seatrt_linear_weight w{};
    w.struct_size = sizeof(seatrt_linear_weight);
    w.scales.struct_size = sizeof(seatrt_tensor);
    w.global_scale = 1.0f;
    if (state == SEATRT_LINEAR_QUANTIZED) {
      const QuantizedTensors q = read_quantized(src, m);
      w.out_features = q.out_features;
      w.in_features = q.in_features;
      float gs;
      std::memcpy(&gs, q.global.data, 4);
      if (layout == SEATRT_LAYOUT_NVFP4_CT_ROW_MAJOR) {
        w.format = SEATRT_WFMT_NVFP4;
        w.layout = layout;
        w.group_size = 16;
        w.global_scale = gs;
        const auto* pb = static_cast<const unsigned char*>(q.packed.data);
        const auto* sb = static_cast<const unsigned char*>(q.scale.data);
        buffers->data.assign(pb, pb + q.packed.nbytes);
        buffers->scales.assign(sb, sb + q.scale.nbytes);
        w.data = host_tensor(SEATRT_DTYPE_E2M1X2, buffers->data.data(), q.out_features, q.in_features / 2);
        w.scales = host_tensor(SEATRT_DTYPE_F8_E4M3, buffers->scales.data(), q.out_features, q.in_features / 16);
      } else if (layout == SEATRT_LAYOUT_DENSE_ROW_MAJOR) {
        w.format = SEATRT_WFMT_DENSE;
        w.layout = layout;
        buffers->data.resize(static_cast<std::size_t>(q.out_features * q.in_features) * sizeof(float));
        auto* values = reinterpret_cast<float*>(buffers->data.data());
        seatrt::nvfp4::dequantize({static_cast<const uint8_t*>(q.packed.data), static_cast<const uint8_t*>(q.scale.data),
                                   gs, q.out_features, q.in_features},
                                  values);
        w.data = host_tensor(SEATRT_DTYPE_F32, values, q.out_features, q.in_features);
      } else {
        throw Error(SEATRT_ERR_UNSUPPORTED, "Linear '" + m + "': layout " + std::to_string(layout) + " is unknown to nvfp4a16");
      }
    } else {
      if (layout != SEATRT_LAYOUT_DENSE_ROW_MAJOR)
        throw Error(SEATRT_ERR_UNSUPPORTED, "Linear '" + m + "' is dense: only DENSE_ROW_MAJOR can be written");
      seatrt_checkpoint_tensor t{};
      find(src, m + ".weight", &t);
      if (t.ndim != 2) bad_tensor(m + ".weight", "must be 2-D [out, in], got " + shape_text(t));
      w.format = SEATRT_WFMT_DENSE;
      w.layout = layout;
      w.out_features = t.shape[0];
      w.in_features = t.shape[1];
      const auto count = static_cast<std::size_t>(t.shape[0] * t.shape[1]);
      buffers->data.resize(count * sizeof(float));
      auto* values = reinterpret_cast<float*>(buffers->data.data());
      if (!seatrt::nvfp4::dense_to_f32(t.dtype, t.data, count, values))
        bad_tensor(m + ".weight", "dtype must be BF16, F16 or F32");
      w.data = host_tensor(SEATRT_DTYPE_F32, values, t.shape[0], t.shape[1]);
    }
    *out = w;
    *token = buffers.release();
  });
}

void release_host(const seatrt_quant_scheme*, void* token) { delete static_cast<HostBuffers*>(token); }

seatrt_status* initialize(const seatrt_host_api* host) {
  return seatrt::sdk::guard([&] { seatrt::sdk::set_host(host); });
}

constexpr seatrt_quant_api kQuantApi = {
    sizeof(seatrt_quant_api), 0, probe, create, destroy, linear_state, layouts, convert_linear, release_host,
};

const seatrt_plugin kPlugin = [] {
  seatrt_plugin p = seatrt::sdk::describe(SEATRT_KIND_QUANTIZATION, kName, "0.1.0",
                                          "compressed-tensors nvfp4-pack-quantized (NVFP4A16) weights");
  p.initialize = initialize;
  p.quantization = &kQuantApi;
  return p;
}();

}  // namespace

SEATRT_DEFINE_PLUGIN(kPlugin)
