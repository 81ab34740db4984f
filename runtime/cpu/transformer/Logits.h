//===- Logits.h - the language-model head -----------------------*- C++ -*-===//
//
// transformer.logits on the CPU.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_TRANSFORMER_LOGITS_H
#define ACCEL_RUNTIME_CPU_TRANSFORMER_LOGITS_H

#include "core/Tensor.h"

namespace accel::rt::cpu::transformer {

struct LogitsOptions {
  /// [vocab] or null.
  const Tensor *bias = nullptr;
  /// select_last: the step's query_start_loc [seqs + 1]; only each
  /// sequence's last token is projected. Null: every token.
  const Tensor *queryStartLoc = nullptr;
  /// c > 0: logits become c * tanh(logits / c). 0: none.
  float softcap = 0.0f;
  /// The result's dtype (f32, f16 or bf16).
  DType outType = DType::kF32;
};

/// hidden [tokens, H] @ lmHead [vocab, H]^T (+ bias), [seqs, vocab] with
/// select_last, else [tokens, vocab]. A sequence without tokens under
/// select_last fails, naming it.
StatusOr<Tensor> logits(const Tensor &hidden, const Tensor &lmHead,
                        const LogitsOptions &options = {});

} // namespace accel::rt::cpu::transformer

#endif // ACCEL_RUNTIME_CPU_TRANSFORMER_LOGITS_H
