//===- OnnxCanonicalize.cpp - canonicalization of onnx movement ops -------===//
//
// Raising leaves pairs of movement ops behind (a transpose to token-major and
// back, a reshape to [T, heads, D] and back); these patterns fold them:
//
//   Transpose(Transpose(x, p1), p2)  → Transpose(x, p1∘p2), or x when identity
//                                      (x may be more static than the result,
//                                      or less when only reshapes read it)
//   Reshape(Reshape(x, s1), s2)      → Reshape(x, s2)   (s2 constant, no 0s)
//   Reshape(x, s)                    → x   when s keeps x's shape
//
//===----------------------------------------------------------------------===//
#include "accel/dialects/Onnx/OnnxOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace accel::onnx;

namespace {
SmallVector<int64_t> permOf(TransposeOp op) {
  auto type = dyn_cast<RankedTensorType>(op.getData().getType());
  if (std::optional<ArrayRef<int64_t>> perm = op.getPerm())
    return SmallVector<int64_t>(perm->begin(), perm->end());
  SmallVector<int64_t> rev;
  if (type)
    for (int64_t i = type.getRank() - 1; i >= 0; --i)
      rev.push_back(i);
  return rev;
}

/// Whether `x` may stand in for `op`'s result: the same element type and
/// rank, every static dim of the result static and equal in `x` (x only knows
/// more, e.g. [1, ?, 32, 128] for [?, ?, 32, 128]), and every user an onnx
/// op (their verifiers accept a more static operand; other dialects' may
/// not).
bool refinesForOnnxUsers(Value x, Operation *op) {
  auto from = dyn_cast<RankedTensorType>(x.getType());
  auto to = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!from || !to || from.getElementType() != to.getElementType() ||
      from.getRank() != to.getRank())
    return false;
  for (int64_t i = 0; i < to.getRank(); ++i)
    if (!to.isDynamicDim(i) && (from.isDynamicDim(i) || from.getDimSize(i) != to.getDimSize(i)))
      return false;
  for (Operation *user : op->getResult(0).getUsers())
    if (user->getDialect() != op->getDialect())
      return false;
  return true;
}

/// Whether `x` may stand in for `op`'s result although it knows less (e.g.
/// [?, ?, 32, 128] for [1, ?, 32, 128], the attention output of a torch 2.11
/// export between its two transposes): the same element type and rank, no
/// static dims that disagree, and every user an onnx.Reshape, whose result
/// type comes from its shape operand, not from its input's type.
bool feedsOnlyReshapes(Value x, Operation *op) {
  auto from = dyn_cast<RankedTensorType>(x.getType());
  auto to = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!from || !to || from.getElementType() != to.getElementType() ||
      from.getRank() != to.getRank() || op->getResult(0).use_empty())
    return false;
  for (int64_t i = 0; i < to.getRank(); ++i)
    if (!to.isDynamicDim(i) && !from.isDynamicDim(i) && from.getDimSize(i) != to.getDimSize(i))
      return false;
  return llvm::all_of(op->getResult(0).getUsers(),
                      [](Operation *user) { return isa<ReshapeOp>(user); });
}

struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rewriter) const override {
    auto inner = op.getData().getDefiningOp<TransposeOp>();
    if (!inner)
      return failure();
    SmallVector<int64_t> p1 = permOf(inner), p2 = permOf(op);
    if (p1.empty() || p1.size() != p2.size())
      return failure();
    SmallVector<int64_t> composed;
    bool identity = true;
    for (auto [i, p] : llvm::enumerate(p2)) {
      composed.push_back(p1[size_t(p)]);
      identity &= composed.back() == int64_t(i);
    }
    Value x = inner.getData();
    if (identity && (x.getType() == op.getType() || refinesForOnnxUsers(x, op) ||
                     feedsOnlyReshapes(x, op))) {
      rewriter.replaceOp(op, x);
      return success();
    }
    if (identity)
      return failure(); // types differ in more than what is static: keep the ops
    rewriter.modifyOpInPlace(op, [&] {
      op.getDataMutable().assign(x);
      op.setPermAttr(rewriter.getDenseI64ArrayAttr(composed));
    });
    return success();
  }
};

/// The constant shape operand of a reshape, if it is one.
std::optional<SmallVector<int64_t>> constantShape(ReshapeOp op) {
  auto constant = op.getShape().getDefiningOp<ConstantOp>();
  auto shape = constant ? dyn_cast_or_null<DenseIntElementsAttr>(constant.getValueAttr())
                        : DenseIntElementsAttr();
  if (!shape)
    return std::nullopt;
  SmallVector<int64_t> dims;
  for (const APInt &v : shape.getValues<APInt>())
    dims.push_back(v.getSExtValue());
  return dims;
}

struct FoldReshapes : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op, PatternRewriter &rewriter) const override {
    std::optional<SmallVector<int64_t>> shape = constantShape(op);
    if (!shape)
      return failure();
    auto in = dyn_cast<RankedTensorType>(op.getData().getType());
    // Reshape(x, s) that keeps x's shape.
    if (in && in == op.getType() && int64_t(shape->size()) == in.getRank()) {
      int64_t inferred = 0;
      bool keeps = true;
      for (auto [i, d] : llvm::enumerate(*shape)) {
        if (d == -1) {
          ++inferred;
          continue;
        }
        keeps &= !in.isDynamicDim(i) && in.getDimSize(i) == d;
      }
      if (keeps && inferred <= 1 && int64_t(in.getNumDynamicDims()) <= inferred) {
        rewriter.replaceOp(op, op.getData());
        return success();
      }
    }
    // Reshape(Reshape(x, s1), s2) → Reshape(x, s2) when s2 copies no dim.
    auto inner = op.getData().getDefiningOp<ReshapeOp>();
    if (!inner || llvm::is_contained(*shape, 0))
      return failure();
    rewriter.modifyOpInPlace(op, [&] { op.getDataMutable().assign(inner.getData()); });
    return success();
  }
};
} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *ctx) {
  results.add<ComposeTransposes>(ctx);
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *ctx) {
  results.add<FoldReshapes>(ctx);
}
