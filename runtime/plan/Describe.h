//===- Describe.h - a plan as readable text ---------------------*- C++ -*-===//
//
// `accel-run model.plan --describe`: the header, model config, KV cache,
// sections and the schedule one step per line, so that a plan can be read
// (and FileCheck-ed) like the IR levels before it.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_PLAN_DESCRIBE_H
#define ACCEL_RUNTIME_PLAN_DESCRIBE_H

#include "runtime/plan/PlanFile.h"

#include <string>

namespace accel::rt::plan {

std::string describePlan(const PlanFile &plan);

} // namespace accel::rt::plan

#endif // ACCEL_RUNTIME_PLAN_DESCRIBE_H
