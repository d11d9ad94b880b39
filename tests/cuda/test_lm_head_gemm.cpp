// The CUDA provider's [kernels.options] lm_head_gemm (on by default since
// 2026-12-05): a dense BF16 weight (the LM head) at decode rows of F32 x runs
// on the prefill GEMM core over x's two BF16 planes stacked as rows, then the
// planes' partial products are summed.  Checked against the CPU provider
// (fp32) and against a context with the option off (the decode kernel, also
// two planes): close to both, and not bit-identical to the decode kernel
// (evidence the other path ran); the default context takes the GEMM path.
// Weights whose K is not a multiple of 64 keep the decode kernel.
#include <catch2/catch.hpp>

#include "fixtures_gpu.hpp"
#include "harness.hpp"

using namespace seatrt_test;

namespace {

// Two BF16 planes carry x within 2^-16; the products accumulate in fp32.
constexpr double kPlanesBound = 1e-4;

// Contexts with the option on and off (fixtures_gpu.hpp).
OptionContext& head() {
  static OptionContext c("lm_head_gemm = true");
  return c;
}
OptionContext& decode_kernel() {
  static OptionContext c("lm_head_gemm = false");
  return c;
}

// out = x W^T for a random dense BF16 W [n, k] and F32 x [rows, k] through
// the option's context, a context with it off, the default context and the
// CPU provider.
void check_dense(int64_t rows, int64_t n, int64_t k, bool expect_gemm) {
  Pair wd = both_random(SEATRT_DTYPE_BF16, {n, k}, 0.05f);
  const std::vector<uint8_t> raw = cuda().download(wd.cuda);
  seatrt_linear_weight wc = dense_bf16_weight(cuda(), raw, n, k), wp = dense_bf16_weight(cpu(), raw, n, k);
  Pair x = both_random(SEATRT_DTYPE_F32, {rows, k}, 2.0f);
  Pair out = both_empty(SEATRT_DTYPE_F32, {rows, n}), base = both_empty(SEATRT_DTYPE_F32, {rows, n}),
       dflt_out = both_empty(SEATRT_DTYPE_F32, {rows, n});
  seatrt_linear_args lc{sizeof(seatrt_linear_args), &x.cuda, &wc, &out.cuda, nullptr};
  head().run<SEATRT_OP_LINEAR>(lc, "cuda linear (lm_head_gemm)");
  seatrt_linear_args lb{sizeof(seatrt_linear_args), &x.cuda, &wc, &base.cuda, nullptr};
  decode_kernel().run<SEATRT_OP_LINEAR>(lb, "cuda linear (lm_head_gemm = false)");
  seatrt_linear_args ld{sizeof(seatrt_linear_args), &x.cuda, &wc, &dflt_out.cuda, nullptr};
  ok(cuda().run<SEATRT_OP_LINEAR>(ld), "cuda linear (default)");
  seatrt_linear_args lp{sizeof(seatrt_linear_args), &x.cpu, &wp, &out.cpu, nullptr};
  ok(cpu().run<SEATRT_OP_LINEAR>(lp), "cpu linear");
  const std::vector<float> got = cuda().download_f32(out.cuda), dflt = cuda().download_f32(base.cuda);
  INFO("rows " << rows << " n " << n << " k " << k);
  CHECK(rel_error(got, cpu().download_f32(out.cpu)) <= kPlanesBound);
  CHECK(rel_error(got, dflt) <= kPlanesBound);
  if (expect_gemm) CHECK(got != dflt);
  else CHECK(got == dflt);
  CHECK(cuda().download_f32(dflt_out.cuda) == got);  // the default is the option on
}

}  // namespace

TEST_CASE("lm_head_gemm: dense BF16 weight at 1, 5 and 32 F32 rows on the GEMM core", "[lm_head_gemm]") {
  for (int64_t rows : {1, 5, 32}) check_dense(rows, 3000, 2816, true);
}

TEST_CASE("lm_head_gemm: K not a multiple of 64 keeps the decode kernel", "[lm_head_gemm]") {
  check_dense(7, 1000, 2848, false);
}
