// sample (greedy fast path, seeded sampling with every filter, penalties,
// mask, logprobs, non-finite rows) and CUDA-graph capture/replay.
#include <catch2/catch.hpp>

#include <cmath>

#include "harness.hpp"

using namespace seatrt_test;

namespace {

seatrt_sampling_row row() {
  seatrt_sampling_row r{};
  r.struct_size = sizeof r;
  r.top_p = 1.0f;
  r.repetition_penalty = 1.0f;
  return r;
}

}  // namespace

TEST_CASE("sample agrees with the CPU provider") {
  const int64_t V = 262144, B = 6;
  std::vector<uint8_t> raw = random_values(B * V, SEATRT_DTYPE_F32, 3.0f);
  float* f = reinterpret_cast<float*>(raw.data());
  f[5 * V + 77] = NAN;  // row 5 is non-finite
  Pair lg = both(raw, SEATRT_DTYPE_F32, {B, V});
  std::vector<int32_t> prompt = {1, 2, 3, 99}, outputs = {7, 7, 12};
  std::vector<uint32_t> mask(static_cast<size_t>((V + 31) / 32), 0);
  for (int i = 0; i < 5000; ++i) mask[static_cast<size_t>(i)] = 0xA5A5A5A5u;
  std::vector<seatrt_sampling_row> rows(B, row());
  rows[1].temperature = 0.8f; rows[1].top_k = 40; rows[1].seed = 1234; rows[1].step = 3;
  rows[2].temperature = 1.0f; rows[2].top_p = 0.9f; rows[2].min_p = 0.05f; rows[2].seed = 99; rows[2].step = 0;
  rows[3].temperature = 0.0f; rows[3].repetition_penalty = 1.3f; rows[3].presence_penalty = 0.5f; rows[3].frequency_penalty = 0.2f;
  rows[3].prompt_tokens = prompt.data(); rows[3].num_prompt_tokens = 4; rows[3].output_tokens = outputs.data(); rows[3].num_output_tokens = 3;
  rows[4].temperature = 1.5f; rows[4].allowed_mask = mask.data(); rows[4].allowed_mask_words = static_cast<int64_t>(mask.size()); rows[4].seed = 5;
  for (int32_t num_top : {0, 5}) {
    std::vector<int32_t> tc(B), tp(B), nc(B), np(B), ic(B * 5), ip(B * 5);
    std::vector<float> lc(B), lp(B), xc(B * 5), xp(B * 5);
    seatrt_sample_args ac{sizeof(seatrt_sample_args), &lg.cuda, rows.data(), num_top, 0, tc.data(), lc.data(), ic.data(), xc.data(), nc.data()};
    seatrt_sample_args ap{sizeof(seatrt_sample_args), &lg.cpu, rows.data(), num_top, 0, tp.data(), lp.data(), ip.data(), xp.data(), np.data()};
    ok(cuda().api().sample(cuda().ctx(), cuda().stream(), &ac), "cuda sample");
    ok(cpu().api().sample(cpu().ctx(), cpu().stream(), &ap), "cpu sample");
    CHECK(tc == tp);
    CHECK(nc == np);
    CHECK(nc[5] == 1);
    CHECK(tc[5] == -1);
    for (int b = 0; b < 5; ++b) CHECK(std::fabs(lc[static_cast<size_t>(b)] - lp[static_cast<size_t>(b)]) <= 1e-3f);
    if (num_top) {
      for (int i = 0; i < 25; ++i) {
        CHECK(ic[static_cast<size_t>(i)] == ip[static_cast<size_t>(i)]);
        CHECK(std::fabs(xc[static_cast<size_t>(i)] - xp[static_cast<size_t>(i)]) <= 1e-3f);
      }
    }
  }
}

TEST_CASE("a captured graph replays the captured work on new data") {
  const seatrt_kernel_api& a = cuda().api();
  seatrt_tensor x = cuda().upload(random_values(4096, SEATRT_DTYPE_F32).data(), 4096 * 4, SEATRT_DTYPE_F32, {4096});
  seatrt_tensor y = cuda().empty(SEATRT_DTYPE_F32, {4096});
  seatrt_elementwise_args e{};
  e.struct_size = sizeof e;
  e.op = SEATRT_EW_SCALE;
  e.a = &x;
  e.alpha = 3.0f;
  e.out = &y;
  ok(a.graph_begin(cuda().ctx(), cuda().stream()), "graph_begin");
  ok(a.elementwise(cuda().ctx(), cuda().stream(), &e), "captured elementwise");
  seatrt_graph* g = nullptr;
  ok(a.graph_end(cuda().ctx(), cuda().stream(), &g), "graph_end");
  REQUIRE(g != nullptr);
  const std::vector<uint8_t> fresh = random_values(4096, SEATRT_DTYPE_F32);
  ok(a.copy(cuda().ctx(), cuda().stream(), x.data, SEATRT_DEVICE_CUDA, fresh.data(), SEATRT_DEVICE_CPU, fresh.size()), "copy");
  ok(a.graph_launch(cuda().ctx(), cuda().stream(), g), "graph_launch");
  const std::vector<float> out = cuda().download_f32(y), in = decode(fresh, SEATRT_DTYPE_F32);
  std::vector<float> want(in.size());
  for (size_t i = 0; i < in.size(); ++i) want[i] = in[i] * 3.0f;
  CHECK(rel_error(out, want) <= 1e-6);
  a.graph_destroy(cuda().ctx(), g);
}
