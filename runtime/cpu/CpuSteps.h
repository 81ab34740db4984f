//===- CpuSteps.h - one prepared CPU call per plan step ---------*- C++ -*-===//
//
// prepareCpuStep() reads a step's kind, op and attributes once and returns
// the call that runs it on the CPU kernels. The step kinds and ops are the
// ones docs/plan-format.md lists.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_CPUSTEPS_H
#define ACCEL_RUNTIME_CPU_CPUSTEPS_H

#include "runtime/cpu/CpuExecutor.h"

namespace accel::rt::engine {

/// The call for `step` on tensor-parallel rank `tpRank`, or why the CPU
/// backend cannot run it (one sentence, without the step's name, which the
/// caller adds).
StatusOr<CpuExecutor::Kernel> prepareCpuStep(const plan::PlanFile &plan,
                                            const accel::plan::Step &step, int tpRank = 0);

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_CPU_CPUSTEPS_H
