//===- Engine.h - a loaded plan, its KV cache and its executor --*- C++ -*-===//
//
// What accel-run and the C API drive: open a plan, then score token
// sequences (logits at every position, fed through the paged KV cache a
// chunk at a time) or generate from a prompt. One sequence at a time for
// now; continuous batching is the scheduler's job (issue 6).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_ENGINE_ENGINE_H
#define ACCEL_RUNTIME_ENGINE_ENGINE_H

#include "runtime/engine/CpuExecutor.h"

#include <functional>
#include <memory>
#include <vector>

namespace accel::rt::engine {

struct EngineOptions {
  /// Longest sequence (prompt + generated) the engine accepts; 0: the
  /// plan's max_position, or 2048 when the plan does not know it.
  int64_t maxModelLen = 0;
  plan::LoadOptions load;
};

class Engine {
public:
  static StatusOr<std::unique_ptr<Engine>> open(const std::string &planPath,
                                                const EngineOptions &options = {});
  static StatusOr<std::unique_ptr<Engine>> create(std::shared_ptr<const plan::PlanFile> plan,
                                                  const EngineOptions &options = {});

  const plan::PlanFile &plan() const { return *plan_; }
  int64_t maxModelLen() const { return maxModelLen_; }
  int64_t vocabSize() const { return vocab_; }

  /// f32 logits [ids.size(), vocab] of every position of one sequence, fed
  /// `chunk` tokens per step (0: the whole sequence in one step; 1: decode
  /// one token at a time).
  StatusOr<Tensor> score(const std::vector<int64_t> &ids, int64_t chunk = 0);

  /// Generation, one sequence: prefill `prompt`, then call `next` with the
  /// f32 logits row of the last position; it returns the next token, or -1
  /// to stop. Stops by itself at maxModelLen. Returns the generated tokens.
  using NextToken = std::function<StatusOr<int64_t>(const float *logits, int64_t vocab)>;
  StatusOr<std::vector<int64_t>> generate(const std::vector<int64_t> &prompt,
                                          const NextToken &next);

private:
  Engine() = default;
  /// Runs one step of `n` tokens starting at ids[start] for `seq`; returns
  /// f32 logits of the step's rows.
  StatusOr<Tensor> step(kv::SequenceKV &seq, const int64_t *ids, int64_t n);

  std::shared_ptr<const plan::PlanFile> plan_;
  std::unique_ptr<CpuExecutor> executor_;
  std::unique_ptr<kv::BlockPool> pool_;
  int64_t maxModelLen_ = 0;
  int64_t vocab_ = 0;
};

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_ENGINE_ENGINE_H
