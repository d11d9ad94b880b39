/* seatrt plugin ABI: plain tensor descriptors (DLPack-like), shared by the
 * kernel, architecture and quantization tables.  A descriptor never owns the
 * memory it points to; who owns it is stated by the function it is passed
 * to.  See abi.h for the versioning rule. */
#ifndef SEATRT_TENSOR_H
#define SEATRT_TENSOR_H

#include "seatrt/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SEATRT_MAX_DIMS 6

typedef enum seatrt_dtype {
  SEATRT_DTYPE_INVALID = 0,
  SEATRT_DTYPE_F32 = 1,
  SEATRT_DTYPE_F16 = 2,
  SEATRT_DTYPE_BF16 = 3,
  SEATRT_DTYPE_F8_E4M3 = 4,  /* OCP E4M3FN (no infinities, one NaN) */
  SEATRT_DTYPE_F8_E5M2 = 5,
  SEATRT_DTYPE_U8 = 6,
  SEATRT_DTYPE_I8 = 7,
  SEATRT_DTYPE_I32 = 8,
  SEATRT_DTYPE_I64 = 9,
  SEATRT_DTYPE_U32 = 10,
  SEATRT_DTYPE_E2M1X2 = 11,  /* two FP4 E2M1 values per byte, low nibble first */
  SEATRT_DTYPE_F64 = 12,
  SEATRT_DTYPE_BOOL = 13
} seatrt_dtype;

typedef enum seatrt_device_kind {
  SEATRT_DEVICE_CPU = 0,
  SEATRT_DEVICE_CUDA = 1
} seatrt_device_kind;

typedef struct seatrt_device {
  int32_t kind;  /* seatrt_device_kind */
  int32_t index; /* ordinal for CUDA; 0 for the CPU */
} seatrt_device;

/* A strided view.  shape[i] and strides[i] are meaningful for i < ndim;
 * strides are in ELEMENTS (for E2M1X2, in bytes: one element is a byte
 * holding two values, and shape counts bytes along the last axis).  The
 * last axis is contiguous (stride 1) unless an operation says it accepts
 * otherwise.  `data` is on `device`. */
typedef struct seatrt_tensor {
  uint32_t struct_size;
  int32_t dtype; /* seatrt_dtype */
  void* data;
  int32_t ndim;
  int32_t reserved0;
  int64_t shape[SEATRT_MAX_DIMS];
  int64_t strides[SEATRT_MAX_DIMS];
  seatrt_device device;
} seatrt_tensor;

/* A stream / queue of the kernel provider (cudaStream_t for CUDA; for the
 * CPU provider an opaque handle or NULL).  Work submitted to one stream runs
 * in order. */
typedef void* seatrt_stream;

#ifdef __cplusplus
}
#endif

#endif /* SEATRT_TENSOR_H */
