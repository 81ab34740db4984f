//===- KernelSupport.h - what the transformer kernels share -----*- C++ -*-===//
//
// Internal to runtime/cpu/transformer: status macros, argument checks with
// errors that name the kernel, and the f32 conversions of rows of any float
// dtype (the kernels compute in f32 and return x's dtype).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TRANSFORMER_KERNELSUPPORT_H
#define ACCEL_RUNTIME_CPU_TRANSFORMER_KERNELSUPPORT_H

#include "core/Tensor.h"

#include <string>
#include <vector>

// ACCEL_RT_RETURN_IF_ERROR / ACCEL_RT_ASSIGN_OR_RETURN: core/Status.h.

namespace accel::rt::cpu::transformer::detail {

/// kInvalidArgument "<op>: <msg>".
Status opError(const char *op, const std::string &msg);
/// kUnimplemented "<op>: <msg>".
Status opUnimplemented(const char *op, const std::string &msg);

/// f32, f16 or bf16: the activation and float-weight types.
bool isActivationType(DType t);
/// Fails unless `t` is defined and of an activation type.
Status requireActivation(const char *op, const char *what, const Tensor &t);
/// Fails unless `t` has rank `rank`.
Status requireRank(const char *op, const char *what, const Tensor &t,
                   int64_t rank);

/// `t` as f32: `t` itself when it already is, else a converted copy.
StatusOr<Tensor> asF32(const char *op, const Tensor &t);
/// A new f32 tensor of `shape` (uninitialised).
StatusOr<Tensor> newF32(const char *op, const Shape &shape);
/// `t` (f32) converted to `to`; `t` itself when `to` is f32.
StatusOr<Tensor> fromF32(const char *op, Tensor t, DType to);

/// A rank-1 i32/i64 tensor's values.
StatusOr<std::vector<int64_t>> readIndices(const char *op, const char *what,
                                           const Tensor &t);

/// dst[i] = float(src[i]) * scale for a row of any float dtype (f32, f16,
/// bf16, f8E4M3FN, f8E5M2).
void loadRow(DType dt, const void *src, int64_t n, float *dst,
             float scale = 1.0f);
/// dst[i] = dt(src[i] / scale), rounding to nearest even (f8 saturates).
void storeRow(DType dt, const float *src, int64_t n, void *dst,
              float scale = 1.0f);

} // namespace accel::rt::cpu::transformer::detail

#endif // ACCEL_RUNTIME_CPU_TRANSFORMER_KERNELSUPPORT_H
