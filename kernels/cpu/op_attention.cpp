// attention over the paged cache.  Sequence s owns query rows
// [query_start[s], query_start[s+1]) at positions seq_lens[s] - n_s ..
// seq_lens[s] - 1; position p sees cached positions j with j <= p and, when
// window > 0, j > p - window.  scores = scale * q.k (softcap if > 0), softmax
// in fp32, GQA: query head h reads kv head h / (q_heads / kv_heads).
#include <algorithm>
#include <cmath>
#include <vector>

#include "kv_cache.hpp"
#include "ops.hpp"
#include "parallel.hpp"
#include "tensor_view.hpp"
#include "weight.hpp"

namespace seatrt::cpu {
namespace {

constexpr const char* kOp = "attention";

struct SeqPlan {
  std::vector<int64_t> query_start;  // [S + 1]
  std::vector<int64_t> seq_lens;     // [S]
  std::vector<int64_t> blocks;       // [S, max_blocks]
  int64_t max_blocks = 0;
};

SeqPlan check_plan(const seatrt_attention_args& args, const CheckedCache& cache, int64_t tokens) {
  const int64_t s_count = args.num_seqs;
  if (s_count < 0) invalid(kOp, "num_seqs " + std::to_string(s_count) + " is negative");
  const seatrt_tensor& qs = need_tensor(args.query_start, kOp, "query_start");
  const seatrt_tensor& sl = need_tensor(args.seq_lens, kOp, "seq_lens");
  const seatrt_tensor& bt = need_tensor(args.block_tables, kOp, "block_tables");
  need_dtype(qs, kOp, "query_start", {SEATRT_DTYPE_I32});
  need_dtype(sl, kOp, "seq_lens", {SEATRT_DTYPE_I32});
  need_dtype(bt, kOp, "block_tables", {SEATRT_DTYPE_I32});
  need_ndim(qs, kOp, "query_start", 1);
  need_ndim(sl, kOp, "seq_lens", 1);
  need_ndim(bt, kOp, "block_tables", 2);
  if (qs.shape[0] < s_count + 1) invalid(kOp, "query_start has " + std::to_string(qs.shape[0]) + " entries, needs num_seqs + 1");
  if (sl.shape[0] < s_count) invalid(kOp, "seq_lens has " + std::to_string(sl.shape[0]) + " entries, needs num_seqs");
  if (bt.shape[0] < s_count) invalid(kOp, "block_tables has " + std::to_string(bt.shape[0]) + " rows, needs num_seqs");
  SeqPlan plan;
  plan.query_start = read_indices(qs, kOp, "query_start");
  plan.seq_lens = read_indices(sl, kOp, "seq_lens");
  plan.blocks = read_indices(bt, kOp, "block_tables");
  plan.max_blocks = bt.shape[1];
  if (s_count > 0 && plan.query_start[0] < 0) invalid(kOp, "query_start[0] is negative");
  for (int64_t s = 0; s < s_count; ++s) {
    const std::string at = "sequence " + std::to_string(s);
    const int64_t n = plan.query_start[static_cast<size_t>(s + 1)] - plan.query_start[static_cast<size_t>(s)];
    const int64_t len = plan.seq_lens[static_cast<size_t>(s)];
    if (n < 0) invalid(kOp, at + ": query_start is decreasing");
    if (plan.query_start[static_cast<size_t>(s + 1)] > tokens) {
      invalid(kOp, at + ": query rows end at " + std::to_string(plan.query_start[static_cast<size_t>(s + 1)]) +
                       " but q has " + std::to_string(tokens) + " rows");
    }
    if (len < n) invalid(kOp, at + ": seq_len " + std::to_string(len) + " is smaller than its " + std::to_string(n) + " query rows");
    const int64_t needed = (len + cache.block_size - 1) / cache.block_size;
    if (needed > plan.max_blocks) {
      invalid(kOp, at + ": seq_len " + std::to_string(len) + " needs " + std::to_string(needed) +
                       " blocks, block_tables has " + std::to_string(plan.max_blocks) + " per sequence");
    }
    for (int64_t b = 0; b < needed; ++b) {
      const int64_t id = plan.blocks[static_cast<size_t>(s * plan.max_blocks + b)];
      if (id < 0 || id >= cache.k.num_blocks()) {
        invalid(kOp, at + ": block_tables entry " + std::to_string(b) + " = " + std::to_string(id) +
                         " is outside the cache's " + std::to_string(cache.k.num_blocks()) + " blocks");
      }
    }
  }
  return plan;
}

}  // namespace

void attention(Context& ctx, const seatrt_attention_args& args) {
  const CheckedCache cache = check_kv_layer(args.cache, kOp);
  const seatrt_tensor& q = need_tensor(args.q, kOp, "q");
  const seatrt_tensor& out = need_tensor(args.out, kOp, "out");
  need_ndim(q, kOp, "q", 3);
  need_dtype(q, kOp, "q", kActivationDtypes);
  need_dtype(out, kOp, "out", kActivationDtypes);
  need_same_shape(q, "q", out, "out", kOp);
  need_dim(q, kOp, "q", 2, cache.head_dim);
  const int64_t q_heads = q.shape[1];
  if (cache.kv_heads <= 0 || q_heads % cache.kv_heads != 0) {
    invalid(kOp, "q_heads " + std::to_string(q_heads) + " is not a multiple of kv_heads " +
                     std::to_string(cache.kv_heads));
  }
  if (args.window < 0) invalid(kOp, "window " + std::to_string(args.window) + " is negative");
  if (!std::isfinite(args.scale)) invalid(kOp, "scale is not finite");
  if (!(std::isfinite(args.softcap) && args.softcap >= 0.0f)) invalid(kOp, "softcap must be finite and >= 0");
  const SeqPlan plan = check_plan(args, cache, q.shape[0]);

  // Work items: one (query row, head) each, for rows that belong to a sequence.
  std::vector<int64_t> row_seq;  // row index -> sequence, for covered rows
  std::vector<int64_t> rows;
  for (int64_t s = 0; s < args.num_seqs; ++s) {
    for (int64_t t = plan.query_start[static_cast<size_t>(s)]; t < plan.query_start[static_cast<size_t>(s + 1)]; ++t) {
      rows.push_back(t);
      row_seq.push_back(s);
    }
  }
  const Rows q_rows(q);  // rows = (token, head)
  const Rows out_rows(out);
  const int64_t dim = cache.head_dim;
  const int64_t group = q_heads / cache.kv_heads;
  const int64_t block_size = cache.block_size;
  const int64_t window = args.window;
  const float scale = args.scale;
  const float softcap = args.softcap;
  parallel_chunks(ctx.pool, static_cast<int64_t>(rows.size()) * q_heads, [&](int64_t begin, int64_t end) {
    std::vector<float> qv(static_cast<size_t>(dim)), kv(static_cast<size_t>(dim)), acc(static_cast<size_t>(dim));
    std::vector<float> scores;
    for (int64_t item = begin; item < end; ++item) {
      const size_t ri = static_cast<size_t>(item / q_heads);
      const int64_t head = item % q_heads;
      const int64_t t = rows[ri];
      const int64_t s = row_seq[ri];
      const int64_t n = plan.query_start[static_cast<size_t>(s + 1)] - plan.query_start[static_cast<size_t>(s)];
      const int64_t pos = plan.seq_lens[static_cast<size_t>(s)] - n + (t - plan.query_start[static_cast<size_t>(s)]);
      const int64_t first = window > 0 ? std::max<int64_t>(0, pos - window + 1) : 0;
      const int64_t kv_head = head / group;
      const int64_t* table = plan.blocks.data() + s * plan.max_blocks;
      q_rows.load(t * q_heads + head, qv.data());
      scores.assign(static_cast<size_t>(pos - first + 1), 0.0f);
      float max_score = -INFINITY;
      for (int64_t j = first; j <= pos; ++j) {
        cache.k.load(table[j / block_size], j % block_size, kv_head, kv.data());
        float sc = scale * dot(qv.data(), kv.data(), dim);
        if (softcap > 0.0f) sc = softcap * std::tanh(sc / softcap);
        scores[static_cast<size_t>(j - first)] = sc;
        max_score = std::max(max_score, sc);
      }
      std::fill(acc.begin(), acc.end(), 0.0f);
      double denom = 0.0;
      for (int64_t j = first; j <= pos; ++j) {
        const float p = std::exp(scores[static_cast<size_t>(j - first)] - max_score);
        denom += p;
        cache.v.load(table[j / block_size], j % block_size, kv_head, kv.data());
        for (int64_t i = 0; i < dim; ++i) acc[static_cast<size_t>(i)] += p * kv[static_cast<size_t>(i)];
      }
      const float inv = static_cast<float>(1.0 / denom);
      for (float& v : acc) v *= inv;
      out_rows.store(t * q_heads + head, acc.data());
    }
  });
}

}  // namespace seatrt::cpu
