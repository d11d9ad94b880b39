// The planner's view of a graph's memory: tensor identity for the rewrite
// and the "is this value read later" question, from the byte ranges every
// node reads and writes (sdk::for_each_access); and the steps' names.
#include "plan.hpp"

namespace seatrt::cuda {
namespace {

// `ranges` less the bytes of `w`.
std::vector<sdk::ByteRange> subtract(const std::vector<sdk::ByteRange>& ranges, const sdk::ByteRange& w) {
  std::vector<sdk::ByteRange> out;
  for (const sdk::ByteRange& r : ranges) {
    if (!r.overlaps(w)) {
      out.push_back(r);
      continue;
    }
    if (r.first < w.first) out.push_back({r.first, w.first});
    if (w.last < r.last) out.push_back({w.last, r.last});
  }
  return out;
}

bool any_overlap(const std::vector<sdk::ByteRange>& ranges, const sdk::ByteRange& r) {
  for (const sdk::ByteRange& x : ranges)
    if (x.overlaps(r)) return true;
  return false;
}

}  // namespace

bool dense(const seatrt_tensor& t) {
  int64_t stride = 1;
  for (int32_t d = t.ndim - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != stride) return false;
    stride *= t.shape[d];
  }
  return true;
}

bool same_tensor(const seatrt_tensor* a, const seatrt_tensor* b) {
  if (!a || !b) return false;
  if (a == b) return true;
  if (a->data != b->data || a->dtype != b->dtype || a->ndim != b->ndim || a->device.kind != b->device.kind) return false;
  for (int32_t d = 0; d < a->ndim && d < SEATRT_MAX_DIMS; ++d)
    if (a->shape[d] != b->shape[d] || a->strides[d] != b->strides[d]) return false;
  return true;
}

bool same_memory(const seatrt_tensor* a, const seatrt_tensor* b) {
  if (same_tensor(a, b)) return true;
  if (!a || !b || a->data != b->data || a->dtype != b->dtype || !dense(*a) || !dense(*b)) return false;
  const sdk::ByteRange ra = sdk::byte_range(*a), rb = sdk::byte_range(*b);
  return ra.first == rb.first && ra.last == rb.last;
}

bool overlap(const seatrt_tensor* a, const seatrt_tensor* b) {
  if (!a || !b || !a->data || !b->data) return false;
  return sdk::byte_range(*a).overlaps(sdk::byte_range(*b));
}

std::string step_kernel(const PlanGraph& g, const Step& s) {
  if (s.args.index() == 0) return sdk::op_name(g.nodes[s.nodes[0]].kind);
  return kKernelNames[s.args.index()];
}

bool PlanGraph::unread_after(int32_t last, const seatrt_tensor* t) const {
  if (!t || !t->data) return true;
  // The parts of t still holding the value, shrinking as later nodes
  // overwrite them (layers of different sizes share workspaces).
  std::vector<sdk::ByteRange> live{sdk::byte_range(*t)};
  for (int32_t k = last + 1; k < size() && !live.empty(); ++k) {
    for (const sdk::ByteRange& r : live)
      if (any_overlap(nodes[k].reads, r)) return false;
    for (const sdk::ByteRange& w : nodes[k].kills) live = subtract(live, w);
  }
  return true;
}

int32_t PlanGraph::first_touch(int32_t after, const seatrt_tensor* t) const {
  if (!t || !t->data) return size();
  const sdk::ByteRange r = sdk::byte_range(*t);
  for (int32_t k = after + 1; k < size(); ++k)
    if (any_overlap(nodes[k].reads, r) || any_overlap(nodes[k].writes, r)) return k;
  return size();
}

bool PlanGraph::touched_between(int32_t first, int32_t last, const seatrt_tensor* t, bool writes_only) const {
  if (!t || !t->data) return false;
  const sdk::ByteRange r = sdk::byte_range(*t);
  for (int32_t k = first + 1; k < last && k < size(); ++k) {
    if (any_overlap(nodes[k].writes, r)) return true;
    if (!writes_only && any_overlap(nodes[k].reads, r)) return true;
  }
  return false;
}

}  // namespace seatrt::cuda
