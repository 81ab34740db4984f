//===- Residual.h - the residual add ----------------------------*- C++ -*-===//
//
// transformer.residual_add on the CPU.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TRANSFORMER_RESIDUAL_H
#define ACCEL_RUNTIME_CPU_TRANSFORMER_RESIDUAL_H

#include "core/Tensor.h"

namespace accel::rt::cpu::transformer {

/// residual + branch, both 2-D of one shape; computed in f32, returned in
/// residual's dtype. The two may differ in float dtype.
StatusOr<Tensor> residualAdd(const Tensor &residual, const Tensor &branch);

} // namespace accel::rt::cpu::transformer

#endif // ACCEL_RUNTIME_CPU_TRANSFORMER_RESIDUAL_H
