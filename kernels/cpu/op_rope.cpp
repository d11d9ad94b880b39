// rope: NeoX half-split rotation of pairs (i, i + D/2) over the whole head
// dim, angle = position * inv_freq[i] in fp32; a zero frequency leaves its
// pair untouched (partial / proportional RoPE).  Multi-section RoPE gives
// each token one position per section of frequency pairs.
#include <vector>

#include "ops.hpp"
#include "parallel.hpp"
#include "rotary.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {

void rope(Context& ctx, const seatrt_rope_args& args) {
  constexpr const char* kOp = "rope";
  const seatrt_tensor& x = need_tensor(args.x, kOp, "x");
  const seatrt_tensor& positions = need_tensor(args.positions, kOp, "positions");
  const seatrt_tensor& inv_freq = need_tensor(args.inv_freq, kOp, "inv_freq");
  const seatrt_tensor& out = need_tensor(args.out, kOp, "out");
  const RotaryInputs in = check_rotary(kOp, x, positions, inv_freq, out, args.num_sections, args.sections);

  const Rows x_rows(x);  // rows = (token, head)
  const Rows out_rows(out);
  parallel_chunks(ctx.pool, x_rows.rows(), [&](int64_t begin, int64_t end) {
    std::vector<float> v(static_cast<size_t>(in.dim));
    for (int64_t r = begin; r < end; ++r) {
      x_rows.load(r, v.data());
      rotate_row(v, in, r / in.heads);
      out_rows.store(r, v.data());
    }
  });
}

}  // namespace seatrt::cpu
