// The planner's rewrite: runs of primitive nodes that equal one of this
// provider's fused operations (fused_args.hpp) become that operation.  A
// pattern matches only when its tensors line up exactly (same views, in
// place where the sequence is in place), every value the fused kernel keeps
// in fp32 is F32 in the sequence too (so no rounding step is skipped), and
// every value it never stores is read by no later node.  Anything else runs
// as its primitive.  The sequences are those of the Gemma-4 step graph
// (README.md, "Planner").
#include <algorithm>
#include <cmath>
#include <optional>

#include "plan.hpp"

namespace seatrt::cuda {
namespace {

constexpr int64_t kRopeMaxDim = 8192;  // rms_norm_rope stages a row in shared memory
constexpr int64_t kQkvMaxDim = 2048;   // qkv_norm_rope_store stages five rows

struct Match {
  StepArgs args;
  std::vector<int32_t> nodes;
  int32_t position = 0;
};

bool f32(const seatrt_tensor* t) { return t && t->dtype == SEATRT_DTYPE_F32; }

// What the fused kernels accept (they refuse other values at launch, where
// the primitives would have run).
bool ok_eps(float eps) { return std::isfinite(eps) && eps >= 0.0f; }

int64_t rows_of(const seatrt_tensor* t) {
  int64_t r = 1;
  for (int32_t d = 0; d + 1 < t->ndim; ++d) r *= t->shape[d];
  return r;
}

int64_t last_dim(const seatrt_tensor* t) { return t->ndim > 0 ? t->shape[t->ndim - 1] : 0; }

bool in_place(const seatrt_rms_norm_args* n) { return n && same_tensor(n->x, n->out); }

Match consecutive(StepArgs args, int32_t first, int32_t count) {
  Match m{std::move(args), {}, first};
  for (int32_t i = 0; i < count; ++i) m.nodes.push_back(first + i);
  return m;
}

// rms_norm(B) -> B in place; ADD(R, B) -> R; [SCALE(R) -> R];
// [rms_norm(R) -> X]  =>  add_rms_norm.
std::optional<Match> add_rms_norm(const PlanGraph& g, int32_t i) {
  const auto* norm = g.get<SEATRT_OP_RMS_NORM>(i);
  const auto* add = g.get<SEATRT_OP_ELEMENTWISE>(i + 1);
  if (!in_place(norm) || !ok_eps(norm->eps) || !add || add->op != SEATRT_EW_ADD || !add->b) return std::nullopt;
  if (!same_tensor(add->b, norm->out) || !same_tensor(add->a, add->out)) return std::nullopt;
  if (!f32(norm->x) || !f32(add->out) || overlap(add->out, norm->x)) return std::nullopt;
  AddRmsNormArgs a;
  a.x = norm->x;
  a.x_weight = norm->weight;
  a.residual = add->out;
  a.eps = norm->eps;
  int32_t last = i + 1;
  const auto* scale = g.get<SEATRT_OP_ELEMENTWISE>(last + 1);
  if (scale && scale->op == SEATRT_EW_SCALE && std::isfinite(scale->alpha) && same_tensor(scale->a, a.residual) &&
      same_tensor(scale->out, a.residual)) {
    a.residual_scale = scale->alpha;
    ++last;
  }
  const auto* next = g.get<SEATRT_OP_RMS_NORM>(last + 1);
  if (next && same_tensor(next->x, a.residual) && !overlap(next->out, a.residual) && next->eps == a.eps) {
    a.out_weight = next->weight;
    a.out = next->out;
    ++last;
  }
  // The normed branch is never stored (unless out overwrites it).
  if (!same_memory(a.out, a.x) && !g.unread_after(last, a.x)) return std::nullopt;
  return consecutive(a, i, last - i + 1);
}

// rms_norm(x) -> y; rope(y) -> z  =>  rms_norm_rope (y kept in fp32).
std::optional<Match> rms_norm_rope(const PlanGraph& g, int32_t i) {
  const auto* norm = g.get<SEATRT_OP_RMS_NORM>(i);
  const auto* rope = g.get<SEATRT_OP_ROPE>(i + 1);
  if (!norm || !rope || rope->num_sections > 1 || !ok_eps(norm->eps) || !same_tensor(rope->x, norm->out))
    return std::nullopt;
  if (norm->x->ndim != 3 || !f32(norm->out) || last_dim(norm->x) > kRopeMaxDim) return std::nullopt;
  if (!same_tensor(rope->out, norm->out) && !g.unread_after(i + 1, norm->out)) return std::nullopt;
  RmsNormRopeArgs a;
  a.x = norm->x;
  a.weight = norm->weight;
  a.eps = norm->eps;
  a.positions = rope->positions;
  a.inv_freq = rope->inv_freq;
  a.out = rope->out;
  return consecutive(a, i, 2);
}

// q_norm, q_rope, v_norm, k_norm, k_rope, kv_store  =>  qkv_norm_rope_store.
// v_norm reads the raw k on layers whose V is their K (then v is NULL).
std::optional<Match> qkv_norm_rope_store(const PlanGraph& g, int32_t i) {
  const auto* qn = g.get<SEATRT_OP_RMS_NORM>(i);
  const auto* qr = g.get<SEATRT_OP_ROPE>(i + 1);
  const auto* vn = g.get<SEATRT_OP_RMS_NORM>(i + 2);
  const auto* kn = g.get<SEATRT_OP_RMS_NORM>(i + 3);
  const auto* kr = g.get<SEATRT_OP_ROPE>(i + 4);
  const auto* st = g.get<SEATRT_OP_KV_STORE>(i + 5);
  if (!qn || !qr || !vn || !kn || !kr || !st) return std::nullopt;
  const int32_t last = i + 5;
  if (!in_place(qn) || !same_tensor(qr->x, qn->out) || !same_tensor(qr->out, qn->out)) return std::nullopt;
  if (!in_place(kn) || !same_tensor(kr->x, kn->out) || !same_tensor(kr->out, kn->out)) return std::nullopt;
  if (qr->num_sections > 1 || kr->num_sections > 1) return std::nullopt;
  if (!same_tensor(qr->positions, kr->positions) || !same_tensor(qr->inv_freq, kr->inv_freq)) return std::nullopt;
  if (qn->eps != kn->eps || vn->eps != kn->eps || !ok_eps(kn->eps)) return std::nullopt;
  if (!same_memory(st->k, kn->x) || st->k->ndim != 3 || qn->x->ndim != 3) return std::nullopt;
  const int64_t dim = last_dim(st->k);
  if (dim > kQkvMaxDim || last_dim(qn->x) != dim || last_dim(vn->x) != dim) return std::nullopt;
  if (!f32(qn->x) || !f32(kn->x) || !f32(vn->x) || !f32(vn->out)) return std::nullopt;
  const bool two = st->cache->v_cache.data != nullptr;
  if (two != (st->v != nullptr)) return std::nullopt;
  QkvNormRopeStoreArgs a;
  const bool v_from_k = same_memory(vn->x, kn->x);
  if (v_from_k) {
    if (st->v && !same_memory(st->v, vn->out)) return std::nullopt;
    if (!g.unread_after(last, vn->out)) return std::nullopt;
  } else {
    if (!in_place(vn) || overlap(vn->x, kn->x)) return std::nullopt;
    if (st->v && (!same_memory(st->v, vn->x) || st->v->ndim != 3)) return std::nullopt;
    if (!g.unread_after(last, vn->x)) return std::nullopt;
    a.v = st->v;  // NULL: the cache has no v_cache, so v' is not stored
  }
  if (overlap(qn->out, st->k) || overlap(qn->out, a.v)) return std::nullopt;
  // k is only read by the fused kernel: its normed, rotated value is gone.
  if (!g.unread_after(last, st->k)) return std::nullopt;
  a.eps = kn->eps;
  a.q = qn->out;
  a.k = st->k;
  a.q_weight = qn->weight;
  a.k_weight = kn->weight;
  a.v_weight = vn->weight;
  a.positions = kr->positions;
  a.inv_freq = kr->inv_freq;
  a.slot_mapping = st->slot_mapping;
  a.cache = st->cache;
  return consecutive(a, i, 6);
}

// linear(x, gate) -> G; linear(x, up) -> U; glu(G, U) -> O  =>  linear_glu.
std::optional<Match> linear_glu(const PlanGraph& g, int32_t i) {
  const auto* l0 = g.get<SEATRT_OP_LINEAR>(i);
  const auto* l1 = g.get<SEATRT_OP_LINEAR>(i + 1);
  const auto* glu = g.get<SEATRT_OP_GLU>(i + 2);
  if (!l0 || !l1 || !glu || !same_tensor(l0->x, l1->x)) return std::nullopt;
  const bool straight = same_tensor(glu->gate, l0->out) && same_tensor(glu->up, l1->out);
  const bool swapped = same_tensor(glu->gate, l1->out) && same_tensor(glu->up, l0->out);
  if (!straight && !swapped) return std::nullopt;
  if (!f32(l0->out) || !f32(l1->out) || overlap(l0->out, l1->out) || overlap(glu->out, l0->x)) return std::nullopt;
  for (const seatrt_tensor* t : {l0->out, l1->out})
    if (!same_memory(glu->out, t) && !g.unread_after(i + 2, t)) return std::nullopt;
  LinearGluArgs a;
  a.activation = glu->activation;
  a.x = l0->x;
  a.gate = straight ? l0->weight : l1->weight;
  a.up = straight ? l1->weight : l0->weight;
  a.out = glu->out;
  return consecutive(a, i, 3);
}

// Up to kFusedMax linears of one x  =>  linear_multi.
std::optional<Match> linear_multi(const PlanGraph& g, int32_t i) {
  const auto* first = g.get<SEATRT_OP_LINEAR>(i);
  if (!first) return std::nullopt;
  LinearMultiArgs a;
  a.x = first->x;
  for (int32_t j = i; j < i + kFusedMax; ++j) {
    const auto* l = g.get<SEATRT_OP_LINEAR>(j);
    if (!l || !same_tensor(l->x, a.x) || overlap(l->out, a.x)) break;
    bool apart = true;
    for (int32_t o = 0; o < a.count; ++o) apart = apart && !overlap(l->out, a.outs[o]);
    if (!apart) break;
    a.weights[a.count] = l->weight;
    a.outs[a.count] = l->out;
    ++a.count;
  }
  if (a.count < 2) return std::nullopt;
  return consecutive(a, i, a.count);
}

// Up to kFusedMax rms_norms of one x with one eps  =>  rms_norm_multi.
std::optional<Match> rms_norm_multi(const PlanGraph& g, int32_t i) {
  const auto* first = g.get<SEATRT_OP_RMS_NORM>(i);
  if (!first) return std::nullopt;
  RmsNormMultiArgs a;
  a.x = first->x;
  a.eps = first->eps;
  if (!ok_eps(a.eps)) return std::nullopt;
  for (int32_t j = i; j < i + kFusedMax; ++j) {
    const auto* n = g.get<SEATRT_OP_RMS_NORM>(j);
    if (!n || !same_tensor(n->x, a.x) || n->eps != a.eps || overlap(n->out, a.x)) break;
    bool apart = true;
    for (int32_t o = 0; o < a.count; ++o) apart = apart && !overlap(n->out, a.outs[o]);
    if (!apart) break;
    a.weights[a.count] = n->weight;
    a.outs[a.count] = n->out;
    ++a.count;
  }
  if (a.count < 2) return std::nullopt;
  return consecutive(a, i, a.count);
}

// rms_norm(x) -> r; rms_norm(x) -> ein; linear(r, router) -> logits;
// router_topk(logits)  =>  route (either norm first; r and logits unread
// later).
std::optional<Match> route(const PlanGraph& g, int32_t i) {
  const auto* n0 = g.get<SEATRT_OP_RMS_NORM>(i);
  const auto* n1 = g.get<SEATRT_OP_RMS_NORM>(i + 1);
  const auto* lin = g.get<SEATRT_OP_LINEAR>(i + 2);
  const auto* topk = g.get<SEATRT_OP_ROUTER_TOPK>(i + 3);
  if (!n0 || !n1 || !lin || !topk || !same_tensor(n0->x, n1->x) || n0->eps != n1->eps || !ok_eps(n0->eps))
    return std::nullopt;
  const bool r0 = same_tensor(lin->x, n0->out), r1 = same_tensor(lin->x, n1->out);
  if (r0 == r1 || !same_tensor(topk->logits, lin->out)) return std::nullopt;
  const auto* router_norm = r0 ? n0 : n1;
  const auto* expert_norm = r0 ? n1 : n0;
  const seatrt_tensor* x = n0->x;
  for (const seatrt_tensor* t : {router_norm->out, expert_norm->out, lin->out, topk->ids, topk->weights})
    if (overlap(t, x)) return std::nullopt;
  if (overlap(router_norm->out, expert_norm->out)) return std::nullopt;
  if (!g.unread_after(i + 3, router_norm->out) || !g.unread_after(i + 3, lin->out)) return std::nullopt;
  RouteArgs a;
  a.eps = n0->eps;
  a.x = x;
  a.router_norm_weight = router_norm->weight;
  a.router = lin->weight;
  a.top_k = topk->top_k;
  a.renormalize = topk->renormalize;
  a.per_expert_scale = topk->per_expert_scale;
  a.expert_norm_weight = expert_norm->weight;
  a.expert_in = expert_norm->out;
  a.ids = topk->ids;
  a.weights = topk->weights;
  return consecutive(a, i, 4);
}

// A MoE layer's end at prefill rows: rms_norm(A) -> M (node i), the experts'
// nodes, then rms_norm(B) -> B; ADD(M, B) -> M; rms_norm(M) -> M; ADD(R, M)
// -> R; [SCALE(R)]; [rms_norm(R) -> X]  =>  add_rms_norm_pair, run where
// the second norm was.  M's values are never stored.
std::optional<Match> add_rms_norm_pair(const PlanGraph& g, int32_t i, int64_t min_rows) {
  const auto* first = g.get<SEATRT_OP_RMS_NORM>(i);
  if (!first || in_place(first) || !f32(first->out) || !f32(first->x) || rows_of(first->x) < min_rows)
    return std::nullopt;
  const seatrt_tensor* m = first->out;
  // The sum's add: the first later node touching M.
  const int32_t j = g.first_touch(i, m);
  const auto* bn = g.get<SEATRT_OP_RMS_NORM>(j - 1);
  const auto* sum = g.get<SEATRT_OP_ELEMENTWISE>(j);
  if (!bn || j - 1 <= i || !in_place(bn) || !sum || sum->op != SEATRT_EW_ADD || !sum->b) return std::nullopt;
  if (!same_tensor(sum->a, m) || !same_tensor(sum->out, m) || !same_tensor(sum->b, bn->out)) return std::nullopt;
  if (!f32(bn->x) || bn->eps != first->eps || g.touched_between(i, j - 1, first->x, true)) return std::nullopt;
  if (first->weight && g.touched_between(i, j - 1, first->weight, true)) return std::nullopt;
  const auto tail = add_rms_norm(g, j + 1);
  if (!tail) return std::nullopt;
  const auto& t = std::get<AddRmsNormArgs>(tail->args);
  if (!same_tensor(t.x, m) || t.eps != first->eps) return std::nullopt;
  const int32_t last = tail->nodes.back();
  if (!g.unread_after(last, bn->out) || !g.unread_after(last, m)) return std::nullopt;
  AddRmsNormPairArgs a;
  a.eps = first->eps;
  a.a = first->x;
  a.a_weight = first->weight;
  a.b = bn->x;
  a.b_weight = bn->weight;
  a.sum_weight = t.x_weight;
  a.residual = t.residual;
  a.residual_scale = t.residual_scale;
  a.out_weight = t.out_weight;
  a.out = t.out;
  if (overlap(a.residual, a.a) || overlap(a.residual, a.b) || overlap(a.residual, a.out)) return std::nullopt;
  Match match{a, {i, j - 1, j}, j - 1};
  match.nodes.insert(match.nodes.end(), tail->nodes.begin(), tail->nodes.end());
  return match;
}

std::optional<Match> fused_at(const PlanGraph& g, int32_t i) {
  using Matcher = std::optional<Match> (*)(const PlanGraph&, int32_t);
  // Longest sequences first: a shorter pattern would take their head.
  for (Matcher m : {qkv_norm_rope_store, route, linear_glu, add_rms_norm, rms_norm_rope, linear_multi, rms_norm_multi})
    if (auto r = m(g, i)) return r;
  return std::nullopt;
}

}  // namespace

std::vector<Step> rewrite(const PlanGraph& g, const PlanOptions& options) {
  std::vector<Step> steps;
  std::vector<bool> taken(static_cast<size_t>(g.size()), false);
  const auto emit = [&](Match m) {
    for (int32_t n : m.nodes) taken[n] = true;
    Step s;
    s.args = std::move(m.args);
    s.nodes = std::move(m.nodes);
    s.position = m.position;
    steps.push_back(std::move(s));
  };
  for (int32_t i = 0; i < g.size(); ++i) {
    if (taken[i]) continue;
    if (options.fuse) {
      if (auto pair = add_rms_norm_pair(g, i, options.pair_min_rows)) {
        bool free = true;
        for (int32_t n : pair->nodes) free = free && !taken[n];
        if (free) {
          emit(std::move(*pair));
          continue;
        }
      }
      if (auto m = fused_at(g, i)) {
        bool free = true;
        for (int32_t n : m->nodes) free = free && !taken[n];
        if (free) {
          emit(std::move(*m));
          continue;
        }
      }
    }
    Step s;
    s.nodes = {i};
    s.position = i;
    taken[i] = true;
    steps.push_back(std::move(s));
  }
  std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.position < b.position; });
  return steps;
}

}  // namespace seatrt::cuda
