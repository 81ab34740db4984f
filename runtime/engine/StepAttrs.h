//===- StepAttrs.h - reading a plan step's operands and attributes -*- C++ -*-===//
//
// What the CPU and GPU executors share when they prepare a step: the
// attributes by name with typed getters (a missing or mistyped attribute is
// one sentence naming it), the ONNX kernels' attribute map, and operand /
// result count checks. Errors are kDataLoss: a plan that says something
// else than its step table is damaged.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_ENGINE_STEPATTRS_H
#define ACCEL_RUNTIME_ENGINE_STEPATTRS_H

#include "runtime/cpu/onnx/OnnxKernels.h"
#include "runtime/cpu/transformer/KVWrite.h"
#include "runtime/cpu/transformer/Rotary.h"
#include "runtime/plan/PlanFile.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace accel::rt::engine {

class StepAttrs {
public:
  /// `tpRank`: the tensor-parallel rank the step is prepared for (its
  /// per-rank attributes: readKvScales).
  StepAttrs(const plan::PlanFile &plan, const accel::plan::Step &step, int tpRank = 0);
  const accel::plan::Attribute *get(const std::string &name) const;
  StatusOr<int64_t> i(const std::string &name, std::optional<int64_t> dflt = {}) const;
  StatusOr<double> f(const std::string &name, std::optional<double> dflt = {}) const;
  StatusOr<std::string> s(const std::string &name, std::optional<std::string> dflt = {}) const;
  StatusOr<std::vector<int64_t>> ints(const std::string &name) const;
  StatusOr<DType> dtype(const std::string &name) const;
  /// Every attribute in the ONNX kernels' form (the plan's own `accel.*`
  /// bookkeeping left out).
  StatusOr<onnx::AttrMap> onnxAttrs() const;

  int tpRank() const { return tpRank_; }
  /// The plan's tensor-parallel rank count (1 when unpartitioned).
  int64_t tpSize() const;

private:
  const plan::PlanFile &plan_;
  int tpRank_ = 0;
  std::map<std::string, const accel::plan::Attribute *> map_;
};

/// An FP8 cache's scales of a kv_write / attention step: `k_scale` and
/// `v_scale` (default 1), or `k_head_scales` and `v_head_scales` (f32 lists,
/// one per KV head: both or neither, every entry positive). A plan
/// partitioned for N ranks lists every rank's heads, rank-major: the step's
/// rank (StepAttrs::tpRank) gets its own.
StatusOr<cpu::transformer::KVScales> readKvScales(const StepAttrs &a);

/// A rotary step's style, rotary_dim, theta and `scaling.*` attributes; a
/// scaling the kernels cannot compute fails here, at load.
StatusOr<cpu::transformer::RotaryParams> readRotaryParams(const StepAttrs &a);

/// A `collective` step (docs/plan-format.md), checked for both backends:
/// one input and one output, all_reduce (sum) or all_gather along `axis`,
/// over the plan's tp_size ranks (or, with `allowSingle`, one).
struct CollectiveParams {
  int64_t group = 1;
  bool gather = false;
  int64_t axis = 0;
};
StatusOr<CollectiveParams> readCollectiveParams(const plan::PlanFile &plan,
                                                const accel::plan::Step &step,
                                                const StepAttrs &a, bool allowSingle);

/// The plan's LM head keeps only each sequence's last row (a `logits` step
/// with select_last): its output has one row per sequence whatever the step.
bool selectsLastRows(const plan::PlanFile &plan);

/// `step` has between `required` and `max` operands, the first `required`
/// present.
Status needInputs(const accel::plan::Step &step, size_t required, size_t max);
/// `step` has exactly `n` results.
Status needOutputs(const accel::plan::Step &step, size_t n);

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_ENGINE_STEPATTRS_H
