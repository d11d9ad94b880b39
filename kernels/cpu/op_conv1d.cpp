// conv1d_causal: a depthwise causal convolution over time with a
// per-sequence state of the W-1 inputs before each sequence's first row.
// Channels are independent, so the work is split over channels; each
// channel walks every sequence as history followed by its rows.
#include <vector>

#include "activation.hpp"
#include "ops.hpp"
#include "parallel.hpp"
#include "state_batch.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {
namespace {

constexpr const char* kOp = "conv1d_causal";

// All rows of a tensor as one [rows * cols] float array.
std::vector<float> load_all(const seatrt_tensor& t) {
  const Rows rows(t);
  std::vector<float> v(static_cast<size_t>(rows.rows() * rows.cols()));
  for (int64_t r = 0; r < rows.rows(); ++r) rows.load(r, v.data() + r * rows.cols());
  return v;
}

}  // namespace

void conv1d_causal(Context& ctx, const seatrt_conv1d_causal_args& args) {
  const seatrt_tensor& x = need_tensor(args.x, kOp, "x");
  const seatrt_tensor& weight = need_tensor(args.weight, kOp, "weight");
  const seatrt_tensor& state = need_tensor(args.state, kOp, "state");
  const seatrt_tensor& out = need_tensor(args.out, kOp, "out");
  if (args.activation != SEATRT_CONV_ACT_NONE && args.activation != SEATRT_ACT_SILU) {
    unsupported(kOp, "activation " + std::to_string(args.activation) + " (accepted: none, silu)");
  }
  need_ndim(x, kOp, "x", 2);
  need_dtype(x, kOp, "x", kActivationDtypes);
  need_dtype(out, kOp, "out", kActivationDtypes);
  need_same_shape(x, "x", out, "out", kOp);
  if (x.data && x.data == out.data) invalid(kOp, "out must not alias x");
  const int64_t tokens = x.shape[0];
  const int64_t channels = x.shape[1];
  need_ndim(weight, kOp, "weight", 2);
  need_dtype(weight, kOp, "weight", kActivationDtypes);
  need_dim(weight, kOp, "weight", 0, channels);
  const int64_t width = weight.shape[1];
  if (width < 1) invalid(kOp, "weight has shape " + shape_string(weight) + ": the kernel width must be >= 1");
  const int64_t hist = width - 1;
  need_ndim(state, kOp, "state", 3);
  need_dtype(state, kOp, "state", {SEATRT_DTYPE_F32});
  need_dim(state, kOp, "state", 1, channels);
  need_dim(state, kOp, "state", 2, hist);
  std::vector<float> bias(static_cast<size_t>(channels), 0.0f);
  if (args.bias) {
    const seatrt_tensor& b = need_tensor(args.bias, kOp, "bias");
    need_ndim(b, kOp, "bias", 1);
    need_dtype(b, kOp, "bias", kActivationDtypes);
    need_dim(b, kOp, "bias", 0, channels);
    Rows(b).load(0, bias.data());
  }
  const StateBatch batch = read_state_batch(kOp, args.num_seqs, tokens, state.shape[0], args.query_start,
                                            args.state_index, args.reset);

  const std::vector<float> xs = load_all(x);
  const std::vector<float> w = load_all(weight);
  std::vector<float> ys(static_cast<size_t>(tokens * channels), 0.0f);
  const Rows state_rows(state);  // row (slot, channel): its W-1 inputs, oldest first
  const bool silu_out = args.activation == SEATRT_ACT_SILU;
  parallel_chunks(ctx.pool, channels, [&](int64_t c_begin, int64_t c_end) {
    std::vector<float> in;
    for (int64_t c = c_begin; c < c_end; ++c) {
      const float* wc = w.data() + c * width;
      for (int64_t s = 0; s < batch.seqs(); ++s) {
        const int64_t first = batch.start[static_cast<size_t>(s)];
        const int64_t rows = batch.start[static_cast<size_t>(s) + 1] - first;
        const int64_t state_row = batch.slot[static_cast<size_t>(s)] * channels + c;
        in.assign(static_cast<size_t>(hist + rows), 0.0f);
        if (!batch.reset[static_cast<size_t>(s)] && hist > 0) state_rows.load(state_row, in.data());
        for (int64_t t = 0; t < rows; ++t) in[static_cast<size_t>(hist + t)] = xs[static_cast<size_t>((first + t) * channels + c)];
        for (int64_t t = 0; t < rows; ++t) {
          float acc = bias[static_cast<size_t>(c)];
          for (int64_t j = 0; j < width; ++j) acc += wc[j] * in[static_cast<size_t>(t + j)];
          ys[static_cast<size_t>((first + t) * channels + c)] = silu_out ? silu(acc) : acc;
        }
        if (hist > 0) state_rows.store(state_row, in.data() + rows);
      }
    }
  });
  const Rows out_rows(out);
  for (int64_t t = 0; t < tokens; ++t) out_rows.store(t, ys.data() + t * channels);
}

}  // namespace seatrt::cpu
