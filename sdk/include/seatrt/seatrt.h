/* seatrt plugin SDK: the whole C ABI.  Include this from a plugin. */
#ifndef SEATRT_SEATRT_H
#define SEATRT_SEATRT_H
#include "seatrt/abi.h"
#include "seatrt/tensor.h"
#include "seatrt/kernels.h"
#include "seatrt/model.h"
#include "seatrt/parser.h"
#include "seatrt/abi_layout_checks.h"
#endif
