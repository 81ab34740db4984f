//===- AttentionMatch.h - find and prove attention subgraphs ----*- C++ -*-===//
//
// An attention site is found from its softmax: the scores chain back to
// MatMul(q, kᵀ) (through scalar scales, an additive mask, a tanh softcap),
// the probabilities forward to MatMul(p, v) (through the IsNaN guard torch
// writes), and q, k, v back to per-head tensors [batch, heads, seq, head_dim]
// through the movement ops exporters use for transposes and GQA's repeat_kv.
// The guess is then proved by evaluation: q, k and v are bound to random
// tensors and the site's output must equal a reference attention computed
// here with the mask the graph itself produces, which also tells causal and
// sliding window apart.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_PASSES_RAISE_ATTENTIONMATCH_H
#define ACCEL_PASSES_RAISE_ATTENTIONMATCH_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <string>

namespace accel::raise {

struct AttentionSite {
  mlir::Operation *softmax = nullptr;
  /// Per-head inputs [batch, heads, seq, head_dim] (k and v: this step's new
  /// keys and values when the graph concatenates a past).
  mlir::Value q, k, v;
  /// Graph arguments holding past keys/values, and the concatenations that
  /// the graph returns as present keys/values (null without a past).
  mlir::Value pastK, pastV, presentK, presentV;
  /// The additive mask added to the scores (null: none).
  mlir::Value mask;
  /// The attention output [batch, heads, seq, head_dim].
  mlir::Value out;
  double scale = 1.0;
  std::optional<double> softcap;
  int64_t numHeads = 0, numKvHeads = 0, headDim = 0;
  bool causal = false;
  std::optional<int64_t> slidingWindow;
  /// The mask is boolean (true: may attend) rather than additive.
  bool boolMask = false;
  /// The op itself is causal (opset-23 Attention's is_causal) on top of
  /// any mask.
  bool causalAttr = false;
  /// com.microsoft GroupQueryAttention: the op itself. q, k and v are then
  /// its (possibly packed) query [batch, seq, hidden], `out` is unused, and
  /// the op is replaced as a whole (it is causal by definition).
  mlir::Operation *gqa = nullptr;
  /// GQA's fused rotary (do_rotary): the [max_position, rotary_dim / 2]
  /// tables, and the pairing.
  mlir::Value cosCache, sinCache;
  bool rotaryInterleaved = false;
};

/// Finds the structure of the attention around `softmax`; on failure,
/// `why` says what did not match.
std::optional<AttentionSite> matchAttention(mlir::Operation *softmax, std::string &why);

/// Same for the fused opset-23 `onnx.Attention` with 4-D q, k, v and no
/// past inputs.
std::optional<AttentionSite> matchOnnxAttention(mlir::Operation *attention,
                                                std::string &why);

/// com.microsoft GroupQueryAttention whose past/present are graph
/// inputs/outputs (or absent) and whose extras (attention_bias, head_sink,
/// quantized KV, smooth softmax, qk output, position_ids) are not used.
std::optional<AttentionSite> matchGroupQueryAttention(mlir::Operation *op, std::string &why);

/// Proves a GQA site by evaluation: under probes of S new tokens after P
/// cached ones (attention_mask all ones), seqlens_k must be P + S - 1 and
/// total_sequence_length P + S, i.e. the op sees an unpadded batch whose
/// past is the paged cache; the rotary tables must evaluate to
/// [max_position, rotary_dim / 2] without any graph input.
bool proveGroupQueryAttention(mlir::func::FuncOp func, AttentionSite &site, std::string &why);

/// Proves `site` by evaluation and fills in causal / sliding_window.
/// Returns false with `why` when the subgraph is not the attention it looks
/// like, or its mask is neither causal nor a causal sliding window.
/// `maskWindows` caches what each mask value was found to be (layers share
/// one mask): -1 neither, 0 causal, W a sliding window.
bool proveAttention(mlir::func::FuncOp func, AttentionSite &site, std::string &why,
                    llvm::DenseMap<mlir::Value, int64_t> *maskWindows = nullptr);

} // namespace accel::raise

#endif // ACCEL_PASSES_RAISE_ATTENTIONMATCH_H
