// The vision tower of plugins/arch-gemma4-moe (its sources compiled in) on
// the CPU kernel provider, loaded through the host's plugin loader, with
// the fixture's BF16 weights read through the host's model source: for each
// fixture image, HF's pixel values in, soft tokens out, against HF's fp32
// soft tokens within 1e-4 relative (max |diff| / max |HF|).
#include <catch2/catch.hpp>
#include <cmath>
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
    seat.plugins.search_paths = {SEATRT_TEST_PLUGIN_DIR};
    seat.kernels.provider = "cpu";
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
      // HF's pixel values (exactly level x float32(1/255)) and an output
      // buffer; the CPU provider's memory is host memory.
      std::vector<float> pixels(levels.nbytes);
      for (std::size_t k = 0; k < pixels.size(); ++k)
        pixels[k] = static_cast<float>(levels.data[k]) * static_cast<float>(1.0 / 255.0);
      std::vector<float> out(static_cast<std::size_t>(meta.num_soft_tokens) * config.text_hidden_size, NAN);
      const auto pv = seatrt::sdk::contiguous_tensor(pixels.data(), SEATRT_DTYPE_F32,
                                                     {meta.num_patches, config.patch_values()}, SEATRT_DEVICE_CPU);
      auto ot = seatrt::sdk::contiguous_tensor(out.data(), SEATRT_DTYPE_F32,
                                               {meta.num_soft_tokens, config.text_hidden_size}, SEATRT_DEVICE_CPU);
      tower.encode(nullptr, pv, meta.resized_width / 16, meta.resized_height / 16, ot);
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
