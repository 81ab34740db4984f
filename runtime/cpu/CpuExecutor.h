//===- CpuExecutor.h - run a plan's schedule on the CPU ---------*- C++ -*-===//
//
// The CPU backend: every step of a plan's schedule (docs/plan-format.md) is a
// call of a plain C++ kernel from runtime/cpu (OpenBLAS for GEMMs). create()
// turns each step into a prepared call once — unknown kinds, bad attributes
// and kernels the CPU lacks fail there, naming the step — so that running a
// step only moves tensors.
//
// Buffers: values are runtime tensors, freed after their last reader (the
// static arena of the Layout pass is a GPU concern). Constants view the
// mapped plan.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_CPUEXECUTOR_H
#define ACCEL_RUNTIME_CPU_CPUEXECUTOR_H

#include "runtime/comm/Communicator.h"
#include "runtime/engine/Backend.h"
#include "runtime/kv/BlockPool.h"
#include "runtime/kv/StepMetadata.h"
#include "runtime/plan/PlanFile.h"

#include <functional>
#include <memory>
#include <vector>

namespace accel::rt::engine {

/// What a step sees besides its operands.
struct StepContext {
  kv::BlockPool *pool = nullptr;
  const kv::StepMetadata *meta = nullptr;
  /// The rank's tensor-parallel group (collective steps of a plan with
  /// tp_size > 1); null for a single-rank plan.
  comm::Communicator *comm = nullptr;
  /// The rank's pipeline link (pp_transfer steps of a plan with pp_size >
  /// 1); null for a plan of one stage.
  comm::StageLink *link = nullptr;
};

class CpuExecutor final : public Backend {
public:
  /// The executor of tensor-parallel rank `rank` of pipeline stage `stage`
  /// (its constants are that rank's weights section; it runs the steps of
  /// its stage and its side of every pp_transfer that leaves or reaches it;
  /// runtime/cpu/TpCpuExecutor runs them all).
  static StatusOr<std::unique_ptr<CpuExecutor>>
  create(std::shared_ptr<const plan::PlanFile> plan, int rank = 0, int stage = 0);

  /// Runs the schedule once: `tokenIds` [tokens] (any integer dtype) for the
  /// step described by `meta`, whose K/V go to `pool`. Returns the logits
  /// value, [tokens, vocab] (or [seqs, vocab] when the plan selects each
  /// sequence's last token).
  /// `comm`: the rank's group, for a plan with tp_size > 1; `link`: its
  /// pipeline link, for a plan with pp_size > 1. A stage other than the
  /// last returns an undefined tensor (the logits are the last stage's).
  StatusOr<Tensor> run(const Tensor &tokenIds, kv::BlockPool &pool,
                       const kv::StepMetadata &meta, comm::Communicator *comm,
                       comm::StageLink *link);
  /// A plan of one rank and one stage (Backend::run).
  StatusOr<Tensor> run(const Tensor &tokenIds, kv::BlockPool &pool,
                       const kv::StepMetadata &meta) override {
    return run(tokenIds, pool, meta, nullptr, nullptr);
  }

  using Kernel = std::function<Status(const StepContext &, const std::vector<const Tensor *> &,
                                      std::vector<Tensor> &)>;

private:
  struct Prepared {
    Kernel kernel;
    std::vector<int32_t> inputs;
    std::vector<int32_t> outputs;
    std::vector<int32_t> freeAfter; // values whose last reader is this step
    std::string what;               // "step 12 (launch rms_norm at 'node')"
  };
  CpuExecutor() = default;

  std::shared_ptr<const plan::PlanFile> plan_;
  std::vector<Prepared> steps_;
  std::vector<Tensor> constants_; // by value id; undefined for non-constants
  DType tokenDType_ = DType::kI64;
  bool returnsLogits_ = true; // the last pipeline stage
};

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_CPU_CPUEXECUTOR_H
