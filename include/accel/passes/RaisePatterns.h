//===- RaisePatterns.h - onnx → transformer raising patterns ----*- C++ -*-===//
//
// The rewrite patterns behind each accel-raise-* pass, so that a combined
// pipeline can run them together in one greedy driver. Every pattern is
// semantics-preserving on its own for any batch size: a token-wise op is
// wrapped as flatten_tokens → op → unflatten_tokens, and the pairs between
// consecutive raised ops fold away.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_PASSES_RAISEPATTERNS_H
#define ACCEL_PASSES_RAISEPATTERNS_H

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace accel {

/// Pow/ReduceMean/Add/Sqrt/Reciprocal/Mul RMS norms (and their Div, Cast
/// and Gemma `1 + w` spellings), RMSNormalization,
/// ms_SimplifiedLayerNormalization and ms_SkipSimplifiedLayerNormalization
/// → transformer.rms_norm (+ residual_add).
void populateRaiseRmsNormPatterns(mlir::RewritePatternSet &patterns);

/// LayerNormalization, its ReduceMean/Sub/Pow/... decomposition and
/// ms_SkipLayerNormalization → transformer.layer_norm (+ residual_add).
void populateRaiseLayerNormPatterns(mlir::RewritePatternSet &patterns);

/// MatMul with a constant weight, Gemm, the Reshape-to-2-D spelling around
/// Gemm, bias Adds → transformer.linear. With `absorbBias`, a following
/// Add of a 1-D bias becomes the linear's bias.
void populateRaiseLinearPatterns(mlir::RewritePatternSet &patterns,
                                 bool absorbBias = true);

/// MatMul of a DequantizeLinear'd constant weight (per tensor, per output
/// channel, or blocked along in_features; i8/ui8/i4/ui4/f8E4M3FN/f8E5M2,
/// possibly under a Transpose) and com.microsoft MatMulNBits →
/// transformer.linear with the quantised weight and its scales. Without
/// `allForms`, only i8 or f8E4M3FN, per tensor or per channel, without a
/// zero point (after the exact unsigned → signed shift) is raised; the rest
/// stays on the ONNX path.
void populateRaiseQuantizedLinearPatterns(mlir::RewritePatternSet &patterns,
                                          bool allForms = true);

/// The lm head (a MatMul that produces the graph output) and Gemma 2's final
/// softcap → transformer.logits. With `detectTied`, an lm head weight whose
/// data is the transposed embedding table becomes that table.
void populateRaiseLogitsPatterns(mlir::RewritePatternSet &patterns,
                                 bool detectTied = true);

/// x * Sigmoid(x), the tanh and erf GELU formulas, onnx.Gelu, Relu →
/// transformer.activation. Constants are matched within `tolerance`
/// (relative).
void populateRaiseActivationsPatterns(mlir::RewritePatternSet &patterns,
                                      double tolerance = 1e-4);

/// down(act(gate(x)) * up(x)) over transformer.linear/activation, separate
/// or with a fused gate_up projection split in halves → transformer.gated_mlp.
void populateRaiseMlpPatterns(mlir::RewritePatternSet &patterns);

/// Gather from a constant table → transformer.embedding, absorbing a scalar
/// scale (Gemma's sqrt(hidden)).
void populateRaiseEmbeddingPatterns(mlir::RewritePatternSet &patterns);

/// Adds onto the residual stream → transformer.residual_add.
void populateRaiseResidualAddPatterns(mlir::RewritePatternSet &patterns);

/// The view glue between raised ops (transposes around row-wise ops,
/// GatherND/Slice/Split of fused QKV layouts, per-head norms) → token-major
/// views, transformer.split and rank-3 norms (accel-raise-views).
void populateRaiseViewsPatterns(mlir::RewritePatternSet &patterns);

} // namespace accel

#endif // ACCEL_PASSES_RAISEPATTERNS_H
