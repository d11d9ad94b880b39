// sample (greedy fast path, seeded sampling with every filter, penalties,
// mask, logprobs, non-finite rows), and a plan made for many launches (a
// repeating decode step) launched on new inputs each time.
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
    ok(cuda().run<SEATRT_OP_SAMPLE>(ac), "cuda sample");
    ok(cpu().run<SEATRT_OP_SAMPLE>(ap), "cpu sample");
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

TEST_CASE("a plan for many launches runs on the inputs as they are at each launch") {
  const int64_t rows = 4, n = 1024;
  Pair x = both_random(SEATRT_DTYPE_F32, {rows, n}), w = both_random(SEATRT_DTYPE_F32, {n});
  Pair y = both_empty(SEATRT_DTYPE_F32, {rows, n}), z = both_empty(SEATRT_DTYPE_F32, {rows, n});
  // y = 3x; z = rmsnorm(y) * w; z = z + x.
  seatrt::sdk::GraphBuilder gc, gp;
  for (bool gpu : {true, false}) {
    seatrt::sdk::GraphBuilder& g = gpu ? gc : gp;
    auto pick = [gpu](Pair& p) { return gpu ? &p.cuda : &p.cpu; };
    g.add<SEATRT_OP_ELEMENTWISE>(ew(SEATRT_EW_SCALE, pick(x), nullptr, 3.0f, pick(y)), "scale");
    g.add<SEATRT_OP_RMS_NORM>(seatrt_rms_norm_args{sizeof(seatrt_rms_norm_args), pick(y), pick(w), 1e-6f, pick(z), 0.0f},
                              "norm");
    g.add<SEATRT_OP_ELEMENTWISE>(ew(SEATRT_EW_ADD, pick(z), pick(x), 0.0f, pick(z)), "residual");
  }
  Plan plan(cuda(), gc, "decode step", 0);
  for (int launch = 0; launch < 4; ++launch) {
    INFO("launch " << launch);
    const std::vector<uint8_t> fresh = random_values(rows * n, SEATRT_DTYPE_F32);
    ok(cuda().api().copy(cuda().ctx(), cuda().stream(), x.cuda.data, SEATRT_DEVICE_CUDA, fresh.data(), SEATRT_DEVICE_CPU,
                         fresh.size()),
       "copy");
    ok(cpu().api().copy(cpu().ctx(), cpu().stream(), x.cpu.data, SEATRT_DEVICE_CPU, fresh.data(), SEATRT_DEVICE_CPU,
                        fresh.size()),
       "copy");
    plan.launch();
    cpu().run_nodes(gp);
    CHECK(rel_error(cuda().download_f32(z.cuda), cpu().download_f32(z.cpu)) <= 1e-4);
  }
}

TEST_CASE("plan refuses a graph holding a sample node (sampling is synchronous)") {
  Pair lg = both_random(SEATRT_DTYPE_F32, {1, 64});
  std::vector<seatrt_sampling_row> rows(1, row());
  int32_t token = 0;
  seatrt::sdk::GraphBuilder g;
  seatrt_sample_args a{};
  a.logits = &lg.cuda;
  a.rows = rows.data();
  a.token = &token;
  g.add<SEATRT_OP_SAMPLE>(a, "sample");
  const seatrt_op_graph graph = g.graph("with sample", 1);
  seatrt_plan* plan = nullptr;
  CHECK(code_of(cuda().api().plan(cuda().ctx(), &graph, &plan)) != SEATRT_OK);
  CHECK(plan == nullptr);
}
