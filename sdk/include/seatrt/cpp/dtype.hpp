// seatrt plugin SDK, C++ side: facts about seatrt_dtype values, shared by
// the host and every plugin (header-only; not part of the ABI).
#ifndef SEATRT_CPP_DTYPE_HPP
#define SEATRT_CPP_DTYPE_HPP

#include <cstddef>
#include <cstdint>

#include "seatrt/tensor.h"

namespace seatrt::sdk {

// The dtype's name as safetensors spells it ("BF16", "F8_E4M3"), or nullptr
// for a value this SDK does not know.
constexpr const char* dtype_name(int32_t dtype) {
  switch (dtype) {
    case SEATRT_DTYPE_F32: return "F32";
    case SEATRT_DTYPE_F16: return "F16";
    case SEATRT_DTYPE_BF16: return "BF16";
    case SEATRT_DTYPE_F8_E4M3: return "F8_E4M3";
    case SEATRT_DTYPE_F8_E5M2: return "F8_E5M2";
    case SEATRT_DTYPE_U8: return "U8";
    case SEATRT_DTYPE_I8: return "I8";
    case SEATRT_DTYPE_I32: return "I32";
    case SEATRT_DTYPE_I64: return "I64";
    case SEATRT_DTYPE_U32: return "U32";
    case SEATRT_DTYPE_E2M1X2: return "E2M1X2";
    case SEATRT_DTYPE_F64: return "F64";
    case SEATRT_DTYPE_BOOL: return "BOOL";
    default: return nullptr;
  }
}

// Bytes of one element (E2M1X2: one byte holding two values), 0 if unknown.
constexpr std::size_t dtype_size(int32_t dtype) {
  switch (dtype) {
    case SEATRT_DTYPE_F64: case SEATRT_DTYPE_I64: return 8;
    case SEATRT_DTYPE_F32: case SEATRT_DTYPE_I32: case SEATRT_DTYPE_U32: return 4;
    case SEATRT_DTYPE_F16: case SEATRT_DTYPE_BF16: return 2;
    case SEATRT_DTYPE_F8_E4M3: case SEATRT_DTYPE_F8_E5M2: case SEATRT_DTYPE_U8: case SEATRT_DTYPE_I8:
    case SEATRT_DTYPE_E2M1X2: case SEATRT_DTYPE_BOOL: return 1;
    default: return 0;
  }
}

}  // namespace seatrt::sdk

#endif  // SEATRT_CPP_DTYPE_HPP
