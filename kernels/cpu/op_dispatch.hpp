// The provider's two operation entries: which operations it runs
// (supports) and running one (run), both driven by the kind.  Every kind's
// args pass the SDK's read_args first (the struct_size rule, required
// fields), then go to the C++ operation of ops.hpp.
#pragma once

#include "ops.hpp"

namespace seatrt::cpu {

// Runs `op`; throws sdk::Error: UNSUPPORTED for a kind, field or value this
// provider does not run, INVALID_ARG (naming the field) for bad args.
void run_op(Context& ctx, const seatrt_op* op);

// True when run_op takes `op`'s kind, enum values, dtypes, devices and
// weight formats.  Never throws; shapes and values are run_op's to check.
bool supports_op(const seatrt_op* op);

}  // namespace seatrt::cpu
