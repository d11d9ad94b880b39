#include "cases.hpp"

#include <cmath>

namespace seatrt::conformance {

double e4m3_step(double m) {
  if (!(m >= std::ldexp(1.0, -6))) return std::ldexp(1.0, -9);
  int exponent = 0;
  std::frexp(m, &exponent);  // m = f * 2^exponent, f in [0.5, 1): m in [2^(exponent-1), 2^exponent)
  return std::ldexp(1.0, exponent - 4);
}

test::Tensor int_input(int32_t dtype, std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  return test::int_tensor(dtype, std::move(shape), values);
}

DeviceWeight::DeviceWeight(Provider& p, const seatrt_linear_weight& host_weight, const test::Tensor& data,
                           const test::Tensor* scales)
    : provider_(p) {
  const int32_t layout = host_weight.format == SEATRT_WFMT_NVFP4 ? SEATRT_LAYOUT_NVFP4_CT_ROW_MAJOR
                                                                 : SEATRT_LAYOUT_DENSE_ROW_MAJOR;
  if (!p.reads_layout(host_weight.format, layout)) {
    throw Skip("the provider does not read layout " + std::to_string(layout) +
               " for this format; its quantization plugin must repack (not done by this tool)");
  }
  weight_ = host_weight;
  data_ = DeviceTensor(p, data);
  weight_.data = *data_.get();
  if (scales) {
    scales_ = DeviceTensor(p, *scales);
    weight_.scales = *scales_.get();
  }
  weight_.provider_data = nullptr;
  if (p.api().prepare_weight) {
    p.check(p.api().prepare_weight(p.ctx(), &weight_), "prepare_weight");
    prepared_ = true;
  }
}

DeviceWeight::~DeviceWeight() {
  if (prepared_ && provider_.api().release_weight) provider_.api().release_weight(provider_.ctx(), &weight_);
}

test::Nvfp4Weight gemma_nvfp4(std::mt19937& rng, int64_t out, int64_t in) {
  // Scales 2^-3..2^3 times fp4 up to 6, over a global scale of 448: |w| <= 0.11.
  return test::random_nvfp4(rng, out, in, 448.0f);
}

std::unique_ptr<DeviceWeight> upload(Provider& p, const test::Nvfp4Weight& w) {
  return std::make_unique<DeviceWeight>(p, w.weight, w.packed, &w.scales);
}

std::unique_ptr<DeviceWeight> upload(Provider& p, const test::DenseWeight& w) {
  return std::make_unique<DeviceWeight>(p, w.weight, w.data, nullptr);
}

}  // namespace seatrt::conformance
