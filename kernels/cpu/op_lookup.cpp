// Row lookups: embedding (table rows by token id, times a scale) and
// gather_rows (rows of any tensor by index).
#include <cstring>
#include <vector>

#include "dtype.hpp"
#include "ops.hpp"
#include "parallel.hpp"
#include "tensor_view.hpp"

namespace seatrt::cpu {

void embedding(Context& ctx, const seatrt_embedding_args& args) {
  constexpr const char* kOp = "embedding";
  const seatrt_tensor& ids = need_tensor(args.ids, kOp, "ids");
  const seatrt_tensor& table = need_tensor(args.table, kOp, "table");
  const seatrt_tensor& out = need_tensor(args.out, kOp, "out");
  need_ndim(ids, kOp, "ids", 1);
  need_dtype(ids, kOp, "ids", {SEATRT_DTYPE_I32});
  need_ndim(table, kOp, "table", 2);
  need_dtype(table, kOp, "table", kActivationDtypes);
  need_ndim(out, kOp, "out", 2);
  need_dtype(out, kOp, "out", kActivationDtypes);
  need_dim(out, kOp, "out", 0, ids.shape[0]);
  need_dim(out, kOp, "out", 1, table.shape[1]);
  const std::vector<int64_t> id = read_indices(ids, kOp, "ids");
  const int64_t vocab = table.shape[0];
  for (size_t t = 0; t < id.size(); ++t) {
    if (id[t] < 0 || id[t] >= vocab) {
      invalid(kOp, "ids[" + std::to_string(t) + "] = " + std::to_string(id[t]) +
                       " is outside the table's " + std::to_string(vocab) + " rows");
    }
  }
  const Rows table_rows(table);
  const Rows out_rows(out);
  const float scale = args.scale;
  parallel_chunks(ctx.pool, out_rows.rows(), [&](int64_t begin, int64_t end) {
    std::vector<float> row(static_cast<size_t>(out_rows.cols()));
    for (int64_t t = begin; t < end; ++t) {
      table_rows.load(id[static_cast<size_t>(t)], row.data());
      for (float& v : row) v *= scale;
      out_rows.store(t, row.data());
    }
  });
}

void gather_rows(Context& ctx, const seatrt_gather_rows_args& args) {
  constexpr const char* kOp = "gather_rows";
  const seatrt_tensor& x = need_tensor(args.x, kOp, "x");
  const seatrt_tensor& index = need_tensor(args.index, kOp, "index");
  const seatrt_tensor& out = need_tensor(args.out, kOp, "out");
  need_ndim(index, kOp, "index", 1);
  need_dtype(index, kOp, "index", {SEATRT_DTYPE_I32});
  if (x.ndim < 2) invalid(kOp, "x must have at least 2 axes (rows of something), has shape " + shape_string(x));
  if (out.ndim != x.ndim) invalid(kOp, "out has shape " + shape_string(out) + ", x has " + shape_string(x));
  need_dim(out, kOp, "out", 0, index.shape[0]);
  for (int32_t i = 1; i < x.ndim; ++i) need_dim(out, kOp, "out", i, x.shape[i]);
  const bool same_dtype = x.dtype == out.dtype;
  if (!same_dtype) {
    need_dtype(x, kOp, "x", kActivationDtypes);
    need_dtype(out, kOp, "out", kActivationDtypes);
  }
  const std::vector<int64_t> idx = read_indices(index, kOp, "index");
  for (size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] < 0 || idx[i] >= x.shape[0]) {
      invalid(kOp, "index[" + std::to_string(i) + "] = " + std::to_string(idx[i]) +
                       " is outside x's " + std::to_string(x.shape[0]) + " rows");
    }
  }
  // A "row" of x is x[i] (all trailing axes); view both as rows over the
  // last axis and map row r of out to the matching row of x.
  const Rows x_rows(x);
  const Rows out_rows(out);
  const int64_t per_index = x.shape[0] > 0 ? x_rows.rows() / x.shape[0] : 0;
  const size_t row_bytes = static_cast<size_t>(x_rows.cols()) * dtype_size(x.dtype);
  parallel_chunks(ctx.pool, out_rows.rows(), [&](int64_t begin, int64_t end) {
    std::vector<float> row(same_dtype ? 0 : static_cast<size_t>(x_rows.cols()));
    for (int64_t r = begin; r < end; ++r) {
      const int64_t src = idx[static_cast<size_t>(r / per_index)] * per_index + r % per_index;
      if (same_dtype) {
        std::memmove(out_rows.row_ptr(r), x_rows.row_ptr(src), row_bytes);
      } else {
        x_rows.load(src, row.data());
        out_rows.store(r, row.data());
      }
    }
  });
}

}  // namespace seatrt::cpu
