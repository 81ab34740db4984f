//===- RaiseUtils.h - helpers shared by the raising patterns ----*- C++ -*-===//
//
// Private to passes/Raise: constants and weights, the token-major views
// (transformer.flatten_tokens / unflatten_tokens) every raised op is wrapped
// in, and a small symbolic-dimension tracer that proves two dynamic
// dimensions equal (what the Reshape spellings of the exporters need).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_PASSES_RAISE_RAISEUTILS_H
#define ACCEL_PASSES_RAISE_RAISEUTILS_H

#include "accel/dialects/Transformer/TransformerOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace accel::raise {

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

/// The constant an onnx.Constant (or arith.constant) defines, or null.
mlir::ElementsAttr getConstant(mlir::Value v);

/// The single float value of a constant with one element (rank 0 or a
/// one-element tensor), if `v` is one.
std::optional<double> getScalarConstant(mlir::Value v);

/// True when `v` is a scalar constant within `relTol` (relative) of
/// `expected`.
bool isScalarConstant(mlir::Value v, double expected, double relTol = 1e-6);

/// True when `a` and `b` agree within `relTol` relative to the larger.
bool approxEqual(double a, double b, double relTol);

/// The raw bytes of a dense or dense_resource constant of a byte-sized
/// element type, element after element in row-major order (a splat is not
/// expanded: null). Null when the data is unavailable (an elided blob).
std::optional<llvm::ArrayRef<char>> getRawData(mlir::ElementsAttr attr);

/// f32, f16 or bf16: the element types of transformer activations.
bool isFloatElement(mlir::Type type);
/// A ranked tensor of f32, f16 or bf16.
bool isFloatTensor(mlir::Type type);

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

/// For an ONNX MatMul weight `[in, out]`: the `[out, in]` weight that
/// transformer.linear takes. A `Transpose(%c) {perm = [1, 0]}` of a 2-D
/// constant gives `%c` itself (how exporters spell tied lm heads); a 2-D
/// float onnx.Constant gives a new onnx.Constant holding the transposed data,
/// inserted after it: a dense_resource blob is copied transposed into a new
/// blob named after the original + ".T" (reused when it already exists; an
/// elided blob gives an elided ".T" blob), an inline dense value into an
/// inline dense value. Fails for anything else.
mlir::FailureOr<mlir::Value> getTorchLayoutWeight(mlir::RewriterBase &rewriter,
                                                  mlir::Value weight);

/// The same, for a weight already in torch layout (Gemm with transB = 1):
/// `weight` itself when it is a 2-D float constant.
mlir::FailureOr<mlir::Value> getConstantMatrix(mlir::Value weight);

/// The float onnx.Constant `value` (1-D or 2-D) with its rows (the entries
/// of dim 0) reordered: row i of the result is row `order[i]` of `value`,
/// `order` a permutation. The new constant is inserted after the old one: a
/// dense_resource blob is copied into a new blob named after the original +
/// `suffix` (an elided blob gives an elided one), an inline dense value
/// into an inline dense value. Fails for anything else. The rewrite is
/// exact: it only moves bytes.
mlir::FailureOr<mlir::Value> permuteRows(mlir::RewriterBase &rewriter,
                                         mlir::Value value,
                                         llvm::ArrayRef<int64_t> order,
                                         llvm::StringRef suffix);

/// The 2-D float constant `[out, in]` = transpose of the constant `weight`
/// `[in, out]`, compared element by element with the constant `table`
/// `[out, in]`: true when every byte agrees (a duplicated tied weight).
bool isTransposeOf(mlir::Value weight, mlir::Value table);

//===----------------------------------------------------------------------===//
// Token-major views
//===----------------------------------------------------------------------===//

/// `[d0, ..., H] -> [d0 * ..., H]` with transformer.flatten_tokens; `x`
/// itself when it is rank 2 already.
mlir::Value flattenTokens(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value x);

/// `[d0, ..., dn] -> [d0 * ... * dn]` (ids form); `ids` itself when 1-D.
mlir::Value flattenIds(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value ids);

/// `r` viewed with the token dims of `like` and the type `resultType`
/// (transformer.unflatten_tokens); `r` itself when it has that type.
mlir::Value unflattenTokens(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value r, mlir::Value like,
                            mlir::Type resultType);

/// When `v` is `unflatten_tokens(%r like %x)` of a `[T, N]` `%r`: `%r` (and
/// `%x` in `like`). When `v` is rank 2 already: `v` (and `like` = `v`).
/// Otherwise null.
mlir::Value peelUnflatten(mlir::Value v, mlir::Value *like = nullptr);

/// The batch-major value a token-major `[T, N]` value `r` was flattened from,
/// following transformer.flatten_tokens and the token-wise transformer ops
/// back to the flatten (features form); null when there is none.
mlir::Value getTokenOrigin(mlir::Value r);

//===----------------------------------------------------------------------===//
// Symbolic dimensions
//===----------------------------------------------------------------------===//

/// Where a dimension comes from: a static size, or dimension `dim` of the
/// block argument or op result `value` that no traced op derives further.
struct DimSource {
  int64_t size = mlir::ShapedType::kDynamic;
  mlir::Value value;
  int64_t dim = -1;
  bool isStatic() const { return !mlir::ShapedType::isDynamic(size); }
};

/// Traces dimension `d` of `v` back through elementwise ops, norms, MatMul,
/// Gather, Reshape (with a Shape/Concat target), Transpose, Unsqueeze and
/// unflatten_tokens. Dynamic dims of dynamo exports are never broadcast
/// (torch.export specialises sizes 0 and 1), so an elementwise op's dim is
/// that of any operand that is not statically 1.
std::optional<DimSource> traceDim(mlir::Value v, int64_t d);

/// True when both sources are provably the same size: equal static sizes,
/// the same dimension of the same value, or dimensions of function
/// arguments with the same `onnx.dim_params` name.
bool sameDim(const std::optional<DimSource> &a,
             const std::optional<DimSource> &b);

/// One element of a Reshape target: a constant (possibly 0 or -1) or a
/// traced dimension.
struct ShapePiece {
  std::optional<int64_t> constant;
  std::optional<DimSource> source;
};

/// The elements of a 1-D i64 shape value built from constants, onnx.Shape
/// slices and onnx.Concat; nullopt for anything else.
std::optional<llvm::SmallVector<ShapePiece>> getShapePieces(mlir::Value shape);

//===----------------------------------------------------------------------===//
// Small matchers
//===----------------------------------------------------------------------===//

/// The positive axis of `axis` in a rank-`rank` tensor, if in range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// True when `op` is an onnx.ReduceMean over exactly the last axis (given
/// as attribute or constant input) with keepdims = 1.
bool isLastAxisMean(mlir::Operation *op);

/// `v` without a leading onnx.Cast to a float type (the f32 upcast of a
/// mixed-precision norm), and `v` when there is none.
mlir::Value stripFloatCast(mlir::Value v);

/// True when `v` is `x * x` or `Pow(x, 2)`; sets `x`.
bool matchSquare(mlir::Value v, mlir::Value &x);

/// True when `v` is `1 / sqrt(s)` spelled Reciprocal(Sqrt(s)), Pow(s, -0.5)
/// or Div(1, Sqrt(s)); sets `s`.
bool matchRsqrt(mlir::Value v, mlir::Value &s);

/// True when `v` is `Add(m, eps)` (either order) with `eps` a positive
/// scalar constant and `m` an onnx.ReduceMean over the last axis with
/// keepdims; sets `mean` (the ReduceMean's input) and `eps`.
bool matchMeanPlusEps(mlir::Value v, mlir::Value &meanInput, double &eps);

/// The function's embedding tables: constants `[vocab, hidden]` read by a
/// transformer.embedding or an onnx.Gather on axis 0 with integer indices.
llvm::SmallVector<mlir::Value> findEmbeddingTables(mlir::Operation *scope);

/// True when `op` is `Reshape(x, [-1, K])` of an x `[.., K]` (rank 2 or
/// more): the same as flatten_tokens.
bool isTokenFlattenReshape(mlir::Operation *op);

/// True when `v` holds the graph output `logits`: it is returned by
/// func.return, possibly through float onnx.Casts, Gemma 2's softcap
/// `Mul(Tanh(Div(v, c)), c)` and a `Reshape(., [-1, vocab])` (what a
/// function made token-major returns).
bool flowsToGraphOutput(mlir::Value v);

/// True when `v`, the result of a projection to `outFeatures`, is the lm
/// head: it flows to the graph output (flowsToGraphOutput) and
/// `outFeatures` is the vocabulary size of an embedding table of the
/// function.
bool isLmHead(mlir::Value v, int64_t outFeatures);

/// The checks onnxruntime's two Skip norms (SkipLayerNormalization,
/// SkipSimplifiedLayerNormalization) share before they can become a residual
/// add and a norm: no bias, mean / inv_std_var unused, skip, output and sum
/// typed like the float input, a positive epsilon (onnxruntime's default
/// 1e-12 when absent). Returns the epsilon, or fails with `why` set.
template <typename SkipNormOp>
std::optional<double> checkSkipNorm(SkipNormOp op, const char *&why) {
  double eps = op.getEpsilon() ? op.getEpsilon()->convertToDouble() : 1e-12;
  mlir::Type type = op.getInput().getType();
  if (op.getBias() || (op.getMean() && !op.getMean().use_empty()) ||
      (op.getInvStdVar() && !op.getInvStdVar().use_empty())) {
    why = "bias, mean or inv_std_var used";
    return std::nullopt;
  }
  if (op.getSkip().getType() != type || op.getOutput().getType() != type ||
      (op.getInputSkipBiasSum() && op.getInputSkipBiasSum().getType() != type) ||
      !isFloatTensor(type) || !(eps > 0)) {
    why = "types or epsilon do not fit";
    return std::nullopt;
  }
  return eps;
}

/// Rewrites a Skip norm that passed checkSkipNorm as
/// `sum = residual_add(skip, input)` and `makeNorm(sum)` on token-major
/// [tokens, hidden] values, and replaces the op's output (and its sum result,
/// when used) with them in the op's own shape.
template <typename SkipNormOp, typename MakeNorm>
void rewriteSkipNorm(SkipNormOp op, mlir::PatternRewriter &rewriter, MakeNorm makeNorm) {
  mlir::Value input = op.getInput();
  mlir::Type type = input.getType();
  mlir::Location loc = op.getLoc();
  mlir::Value residual = flattenTokens(rewriter, loc, op.getSkip());
  mlir::Value branch = flattenTokens(rewriter, loc, input);
  mlir::Value sum = transformer::ResidualAddOp::create(rewriter, loc, residual.getType(),
                                                       residual, branch);
  mlir::Value norm = makeNorm(sum);
  if (mlir::Value sumResult = op.getInputSkipBiasSum())
    rewriter.replaceAllUsesWith(sumResult, unflattenTokens(rewriter, loc, sum, input, type));
  rewriter.replaceAllUsesWith(op.getOutput(), unflattenTokens(rewriter, loc, norm, input, type));
  rewriter.eraseOp(op);
}

} // namespace accel::raise

#endif // ACCEL_PASSES_RAISE_RAISEUTILS_H
