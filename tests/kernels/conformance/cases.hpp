// Conformance cases: each runs one operation (or one graph) on one provider
// with inputs drawn from the generator it is given (the same seed for
// candidate and reference), and returns what to compare.
#pragma once

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "provider.hpp"
#include "test_support.hpp"

namespace seatrt::conformance {

// Relative error bounds (max |cand - ref| / max |ref|) by output dtype.
inline constexpr double kBoundF32 = 1e-4;
inline constexpr double kBoundBF16 = 2e-2;
inline constexpr double kBoundF8 = 0.13;  // about one E4M3 step near the largest value

struct Outputs {
  Outputs() = default;
  Outputs(std::vector<double> exact_values, std::vector<double> approx_values)
      : exact(std::move(exact_values)), approx(std::move(approx_values)) {}

  std::vector<double> exact;   // must match exactly (ids, tokens, flags)
  std::vector<double> approx;  // compared with the case's bound
  // Where approx holds several outputs (q, k, v; residual and norm), the end
  // of each: the error is then relative per output, so a small output is not
  // judged against a larger neighbour's magnitude.  Empty: one output.
  std::vector<size_t> part_ends;

  // Values read back from an F8 E4M3 cache (the codes decoded, without the
  // scale): each must lie within one E4M3 step (at the larger magnitude) of
  // the reference's, since two providers may round a value near a tie to
  // the two neighbouring codes.  Not part of the relative error.
  std::vector<double> e4m3;

  void add_part(const std::vector<double>& values) {
    approx.insert(approx.end(), values.begin(), values.end());
    part_ends.push_back(approx.size());
  }
};

// The distance between adjacent E4M3 values around magnitude m: 2^(e-3) for
// m in [2^e, 2^(e+1)), e >= -6; 2^-9 (the subnormal spacing) below 2^-6.
double e4m3_step(double m);

// A case of one registry kind (sdk::op_info), or of a whole graph when
// kind is SEATRT_OP_INVALID.  Each provider's run gets a Role: a graph case
// runs the candidate through its planner and the reference node by node.
enum class Role { candidate, reference };

struct Case {
  int32_t kind;
  std::string shape;
  double bound;
  std::function<Outputs(Provider&, std::mt19937&, Role)> run;

  Case(int32_t k, std::string label, double b, std::function<Outputs(Provider&, std::mt19937&)> fn)
      : kind(k), shape(std::move(label)), bound(b),
        run([f = std::move(fn)](Provider& p, std::mt19937& rng, Role) { return f(p, rng); }) {}
  Case(int32_t k, std::string label, double b, std::function<Outputs(Provider&, std::mt19937&, Role)> fn)
      : kind(k), shape(std::move(label)), bound(b), run(std::move(fn)) {}
  // The registry's name of the kind, or "graph".
  std::string op() const { return kind == SEATRT_OP_INVALID ? "graph" : sdk::op_name(kind); }
};

void add_basic_cases(std::vector<Case>& cases);      // elementwise, embedding, gather_rows, rms_norm, glu, rope
void add_matrix_cases(std::vector<Case>& cases);     // linear, router_topk, moe
void add_attention_cases(std::vector<Case>& cases);  // kv_store, attention
void add_sample_cases(std::vector<Case>& cases);     // sample
void add_recurrent_cases(std::vector<Case>& cases);  // conv1d_causal, delta_rule
void add_graph_cases(std::vector<Case>& cases);      // Gemma-4 decoder layers as graphs

// Inputs: uniform in +-range, never exactly zero-filled.
inline test::Tensor random_input(std::mt19937& rng, int32_t dtype, std::vector<int64_t> shape, double range = 1.0) {
  return test::random_tensor(rng, dtype, std::move(shape), -range, range);
}
test::Tensor int_input(int32_t dtype, std::vector<int64_t> shape, const std::vector<int64_t>& values);

// A Linear weight on a provider's device (DENSE_ROW_MAJOR or
// NVFP4_CT_ROW_MAJOR; Skip when the provider does not read the form).
class DeviceWeight {
 public:
  DeviceWeight(Provider& p, const seatrt_linear_weight& host_weight, const test::Tensor& data,
               const test::Tensor* scales);
  ~DeviceWeight();
  DeviceWeight(const DeviceWeight&) = delete;
  DeviceWeight& operator=(const DeviceWeight&) = delete;
  const seatrt_linear_weight& get() const { return weight_; }

 private:
  Provider& provider_;
  DeviceTensor data_;
  DeviceTensor scales_;
  seatrt_linear_weight weight_{};
  bool prepared_ = false;
};

// Random NVFP4 weight of realistic magnitude (|w| up to about 0.1).
test::Nvfp4Weight gemma_nvfp4(std::mt19937& rng, int64_t out, int64_t in);
std::unique_ptr<DeviceWeight> upload(Provider& p, const test::Nvfp4Weight& w);
std::unique_ptr<DeviceWeight> upload(Provider& p, const test::DenseWeight& w);

}  // namespace seatrt::conformance
