// The Gemma-4 vision tower and embed_vision projection, computed through
// the kernel table in fp32 (weights as stored, BF16 or F32; never fp16,
// whose range the tower's activations exceed).  One image at a time: its
// valid patches in, its soft tokens (the language model's embeddings for
// the image placeholders) out.
#pragma once

#include <cstdint>
#include <vector>

#include "seatrt/seatrt.h"
#include "vision_config.hpp"

namespace seatrt::gemma4 {

class VisionTower {
 public:
  // Loads every tower weight through `src` (src->kernels must be set) and
  // allocates workspaces for images of up to `max_patches` patches.
  VisionTower(const seatrt_model_source* src, VisionConfig config, int32_t max_patches);
  ~VisionTower();
  VisionTower(const VisionTower&) = delete;
  VisionTower& operator=(const VisionTower&) = delete;

  const VisionConfig& config() const { return c_; }

  // The device memory the tower allocates beyond the checkpoint's weights
  // (workspaces, index arrays, constants) for images of up to
  // `max_patches` patches, from the shapes alone: what a memory plan
  // reserves before any image arrives.  workspace_bytes() is what this
  // instance allocated; the two agree (tests/vision checks it).
  static uint64_t planned_workspace_bytes(const VisionConfig& config, int32_t max_patches);
  uint64_t workspace_bytes() const { return workspace_bytes_; }

  // pixel_values: F32 [grid_width * grid_height, patch_values] on the
  // provider's device, the valid patches in row-major grid order (as the
  // processor lays them out, padding left off).  out: F32 [soft tokens,
  // text hidden] on the device, soft tokens = patches / pooling^2 in
  // row-major order over the pooled grid.  Returns after the stream has
  // finished (the index arrays it uploads live on the host until then).
  void encode(seatrt_stream stream, const seatrt_tensor& pixel_values, int32_t grid_width, int32_t grid_height,
              seatrt_tensor& out);

 private:
  struct Layer {
    const seatrt_linear_weight *q, *k, *v, *o, *gate, *up, *down;
    seatrt_tensor input_norm, post_attention_norm, pre_ff_norm, post_ff_norm, q_norm, k_norm;
  };
  void* allocate(std::size_t bytes);
  void* upload(const void* host, std::size_t bytes, seatrt_stream stream);
  seatrt_tensor load_f32(const std::string& name);
  const seatrt_linear_weight* load_linear(const std::string& name, int64_t out_features, int64_t in_features);

  const seatrt_model_source* src_;
  const seatrt_kernel_api* k_;
  seatrt_kernel_context* ctx_;
  VisionConfig c_;
  int32_t max_patches_;
  const seatrt_linear_weight* input_proj_ = nullptr;
  const seatrt_linear_weight* projection_ = nullptr;
  seatrt_tensor position_table_{};          // F32 [2, P, H]
  seatrt_tensor minus_one_{};               // F32 [patch_values] of -1
  seatrt_tensor minus_std_bias_{}, std_scale_{};  // F32 [H]
  seatrt_tensor inv_freq_{};                // F32 [head_dim / 4]
  std::vector<Layer> layers_;
  std::vector<seatrt_linear_weight> dense_;  // owned copies, stable (reserved)
  std::vector<bool> prepared_;
  std::vector<void*> allocations_;
  void* zeros_ = nullptr;  // F32 [max_patches, H]: keys and queries of the pooler
  struct Workspace {
    void *h, *x, *q, *k, *v, *attn, *gate, *up, *act, *emb, *px;
    void *index;  // every I32/I64 index array of one encode, uploaded at once
  } ws_{};
  std::size_t index_bytes_ = 0;
  uint64_t workspace_bytes_ = 0;
};

}  // namespace seatrt::gemma4
