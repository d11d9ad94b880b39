// The vision tower of plugins/arch-gemma4-moe (its sources compiled in) on
// the CPU kernel provider, loaded through the host's plugin loader, with
// the fixture's BF16 weights read through the host's model source: for each
// fixture image, HF's pixel values in, soft tokens out, against HF's fp32
// soft tokens within 1e-4 relative (max |diff| / max |HF|).
// SEATRT_VISION_PROVIDER (default "cpu") and SEATRT_VISION_PLUGIN_DIR run the
// same test through another provider, e.g. the CUDA one on the device.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <memory>

#include "seatrt/cpp/tensor.hpp"
#include "seatrt/host/status.hpp"
#include "seatrt/model/checkpoint.hpp"
#include "seatrt/model/model_config.hpp"
#include "seatrt/model/model_source.hpp"
#include "seatrt/host/seat_plugins.hpp"
#include "vision_config.hpp"
#include "vision_fixture.hpp"
#include "vision_tower.hpp"

using seatrt::test::VisionFixture;

namespace {

// The CPU provider, a context and a model source over the fixture.
struct TowerRig {
  seatrt::host::SeatPlugins plugins;
  seatrt_kernel_context* ctx = nullptr;
  std::unique_ptr<seatrt::model::HostModelSource> source;
  const seatrt_kernel_api* api = nullptr;

  explicit TowerRig(const std::filesystem::path& dir) {
    seatrt::host::SeatConfig seat;
    const char* dir_env = std::getenv("SEATRT_VISION_PLUGIN_DIR");
    const char* provider_env = std::getenv("SEATRT_VISION_PROVIDER");
    seat.plugins.search_paths = {dir_env ? dir_env : SEATRT_TEST_PLUGIN_DIR};
    seat.kernels.provider = provider_env ? provider_env : "cpu";
    plugins = seatrt::host::load_seat_plugins(seat);
    ctx = plugins.dispatch->create_context("", 0);
    api = plugins.dispatch->table();
    source = std::make_unique<seatrt::model::HostModelSource>(
        seatrt::host::host_api(), std::make_shared<seatrt::model::Checkpoint>(dir),
        seatrt::model::ModelConfig::read(dir), seatrt::model::QuantBinding{});
    source->attach_kernels(api, ctx, 1024);
  }
  ~TowerRig() {
    source.reset();
    if (ctx) plugins.dispatch->destroy_context(ctx);
  }

  // Runs the tower on host buffers, through device copies when the
  // provider's memory is not the host's.
  void encode(seatrt::gemma4::VisionTower& tower, std::vector<float>& pixels, int64_t patches, int32_t grid_w,
              int32_t grid_h, std::vector<float>& out, int64_t soft) const {
    const auto& c = tower.config();
    const int32_t dk = api->device_kind;
    void* dp = pixels.data();
    void* dout = out.data();
    const bool device = dk != SEATRT_DEVICE_CPU;
    if (device) {
      REQUIRE(api->alloc(ctx, pixels.size() * 4, &dp) == nullptr);
      REQUIRE(api->alloc(ctx, out.size() * 4, &dout) == nullptr);
      REQUIRE(api->copy(ctx, nullptr, dp, dk, pixels.data(), SEATRT_DEVICE_CPU, pixels.size() * 4) == nullptr);
    }
    const auto pv = seatrt::sdk::contiguous_tensor(dp, SEATRT_DTYPE_F32, {patches, c.patch_values()}, dk);
    auto ot = seatrt::sdk::contiguous_tensor(dout, SEATRT_DTYPE_F32, {soft, c.text_hidden_size}, dk);
    tower.encode(nullptr, pv, grid_w, grid_h, ot);
    if (device) {
      REQUIRE(api->copy(ctx, nullptr, out.data(), SEATRT_DEVICE_CPU, dout, dk, out.size() * 4) == nullptr);
      REQUIRE(api->stream_sync(ctx, nullptr) == nullptr);
      api->free_memory(ctx, dp);
      api->free_memory(ctx, dout);
    }
  }
};

}  // namespace

TEST_CASE("vision tower soft tokens equal HF's fp32 within 1e-4 relative", "[tower]") {
  const auto& fx = VisionFixture::get();
  TowerRig rig(fx.dir);
  const auto config = seatrt::gemma4::VisionConfig::parse(rig.source->create_view()->config_json);
  REQUIRE(config.num_layers == 2);
  std::vector<double> errors;
  {
    seatrt::gemma4::VisionTower tower(rig.source->create_view(), config, fx.max_patches);
    for (std::size_t i = 0; i < fx.images.size(); ++i) {
      const auto& meta = fx.images[i];
      INFO(meta.file);
      const auto& levels = fx.tensor(i, "levels");
      const auto& ref = fx.tensor(i, "soft_tokens");  // F32 [S, 64]
      REQUIRE(ref.shape == std::vector<int64_t>{meta.num_soft_tokens, config.text_hidden_size});
      // HF's pixel values (exactly level x float32(1/255)).
      std::vector<float> pixels(levels.nbytes);
      for (std::size_t k = 0; k < pixels.size(); ++k)
        pixels[k] = static_cast<float>(levels.data[k]) * static_cast<float>(1.0 / 255.0);
      std::vector<float> out(static_cast<std::size_t>(meta.num_soft_tokens) * config.text_hidden_size, NAN);
      rig.encode(tower, pixels, meta.num_patches, meta.resized_width / 16, meta.resized_height / 16, out,
                 meta.num_soft_tokens);
      const auto* hf = reinterpret_cast<const float*>(ref.data);
      double max_diff = 0.0, max_ref = 0.0;
      for (std::size_t k = 0; k < out.size(); ++k) {
        REQUIRE(std::isfinite(out[k]));
        max_diff = std::max(max_diff, std::abs(double(out[k]) - double(hf[k])));
        max_ref = std::max(max_ref, std::abs(double(hf[k])));
      }
      const double rel = max_diff / max_ref;
      INFO("max |diff| " << max_diff << ", max |HF| " << max_ref << ", relative " << rel);
      CHECK(rel <= 1e-4);
      errors.push_back(rel);
    }
  }
  std::string all;
  for (double e : errors) all += " " + std::to_string(e);
  WARN("relative error per image:" << all);
}

TEST_CASE("the tower allocates what its plan says, from shapes alone", "[tower]") {
  const auto& fx = VisionFixture::get();
  TowerRig rig(fx.dir);
  const auto config = seatrt::gemma4::VisionConfig::parse(rig.source->create_view()->config_json);
  for (int32_t max_patches : {fx.max_patches, 2520, 37}) {
    INFO(max_patches << " patches");
    seatrt::gemma4::VisionTower tower(rig.source->create_view(), config, max_patches);
    CHECK(tower.workspace_bytes() == seatrt::gemma4::VisionTower::planned_workspace_bytes(config, max_patches));
  }
  // The 26B/31B tower (spec 1.4) at the default 280 soft tokens and at 1120.
  seatrt::gemma4::VisionConfig large = config;
  large.hidden_size = 1152;
  large.intermediate_size = 4304;
  large.num_heads = 16;
  large.head_dim = 72;
  const uint64_t at280 = seatrt::gemma4::VisionTower::planned_workspace_bytes(large, 280 * 9);
  const uint64_t at1120 = seatrt::gemma4::VisionTower::planned_workspace_bytes(large, 1120 * 9);
  CHECK(at280 < at1120);
  WARN("large tower working memory: " << at280 / 1000000 << " MB at 280 soft tokens, " << at1120 / 1000000 << " MB at 1120");
}
