//===- FuseQkv.cpp - linears reading one input → one linear + split -------===//
//
// Attention's q, k and v projections read the same normed hidden state:
// three GEMMs with one A operand. With their weights (and biases)
// concatenated along the output features they are one GEMM, whose result
// transformer.split cuts back into q, k and v. Every column of the fused
// result is the same dot product it was in its own linear, so nothing
// changes numerically.
//
// The pass groups every float linear of a block by its input (and by the
// weight and result types, whether it has a bias, its activation epilogue,
// which the fused linear keeps: it is elementwise, and whether it projects
// attention's q, k or v); a group of two or more, all with onnx.Constant
// weights and biases, is fused. That is QKV in every model raising produces;
// a fused QKV (Phi3's qkv_proj, GPT-2's c_attn, Falcon's query_key_value) is
// one linear already and stays, and is not fused with the MLP projection of
// a parallel block that reads the same norm (Falcon).
//
//===----------------------------------------------------------------------===//
#include "FusionUtils.h"

#include "accel/dialects/Onnx/OnnxDialect.h"
#include "accel/dialects/Transformer/TransformerOps.h"
#include "accel/passes/FusionPatterns.h"
#include "accel/passes/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/MapVector.h"

namespace accel {
#define GEN_PASS_DEF_FUSEQKV
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::fusion;

namespace {

/// A float linear with a constant weight (and constant bias, if any) and no
/// quantisation operands.
static bool isFusable(transformer::LinearOp op) {
  if (op.getWeightScale() || op.getWeightZeroPoint() || op.getInputScale() ||
      op.getGranularityAttr() || op.getGroupSizeAttr())
    return false;
  if (!getFloatConstant(op.getWeight()))
    return false;
  if (Value bias = op.getBias(); bias && !getFloatConstant(bias))
    return false;
  auto result = dyn_cast<RankedTensorType>(op.getType());
  return result && !result.isDynamicDim(1);
}

/// Whether the result of `op` reaches q, k or v of a transformer.attention
/// through views, splits and per-head ops (rotary, norms).
static bool feedsAttention(transformer::LinearOp op) {
  SmallVector<Value> work{op.getResult()};
  for (int steps = 0; !work.empty() && steps < 64; ++steps) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (isa<transformer::AttentionOp>(user))
        return true;
      if (user->getDialect() == op->getDialect()
              ? isa<transformer::SplitOp, transformer::SplitHeadsOp,
                    transformer::FlattenTokensOp, transformer::UnflattenTokensOp,
                    transformer::RotaryOp, transformer::RmsNormOp>(user)
              : user->getDialect()->getNamespace() == "onnx" &&
                    llvm::is_contained({StringRef("onnx.Reshape"), StringRef("onnx.Slice"),
                                        StringRef("onnx.Split"), StringRef("onnx.Transpose")},
                                       user->getName().getStringRef()))
        for (Value r : user->getResults())
          work.push_back(r);
    }
  }
  return false;
}

/// What linears must share to be one GEMM: the input, the weight and
/// result element types, whether they have a bias, the activation epilogue
/// (null when none), and whether they project attention's q, k or v. The
/// last keeps a parallel block's MLP (Falcon's dense_h_to_4h, which reads
/// the same norm as query_key_value) out of the QKV GEMM: fused, it would be
/// a part of the QKV split that neither accel-partition nor
/// accel-fuse-qkv-rotary could place.
using GroupKey = std::tuple<Value, Type, Type, unsigned, Attribute, unsigned>;

} // namespace

/// Replaces `group` (in block order) by one linear over the concatenated
/// weights and a split, at the first linear.
static LogicalResult fuseGroup(RewriterBase &rewriter,
                               ArrayRef<transformer::LinearOp> group) {
  transformer::LinearOp first = group.front();
  SmallVector<Value> weights, biases;
  SmallVector<Location> locs;
  SmallVector<Type> partTypes;
  int64_t outFeatures = 0;
  for (transformer::LinearOp op : group) {
    weights.push_back(op.getWeight());
    if (Value bias = op.getBias())
      biases.push_back(bias);
    locs.push_back(op.getLoc());
    partTypes.push_back(op.getType());
    outFeatures += cast<RankedTensorType>(op.getType()).getDimSize(1);
  }
  rewriter.setInsertionPoint(first);
  FailureOr<Value> weight = concatConstants(rewriter, weights, ".qkv");
  if (failed(weight))
    return failure();
  Value bias;
  if (!biases.empty()) {
    FailureOr<Value> b = concatConstants(rewriter, biases, ".qkv");
    if (failed(b)) {
      rewriter.eraseOp(weight->getDefiningOp());
      return failure();
    }
    bias = *b;
  }
  auto firstType = cast<RankedTensorType>(first.getType());
  auto fusedType = RankedTensorType::get({firstType.getDimSize(0), outFeatures},
                                         firstType.getElementType());
  Location loc = rewriter.getFusedLoc(locs);
  auto fused = transformer::LinearOp::create(
      rewriter, loc, fusedType, first.getX(), *weight, bias, Value(), Value(),
      Value(), transformer::QuantGranularityAttr(), IntegerAttr(), first.getActivationAttr());
  auto split = transformer::SplitOp::create(rewriter, loc, partTypes, fused.getResult());
  for (auto [index, part] : llvm::enumerate(split.getResults())) {
    transformer::LinearOp op = group[index];
    Value w = op.getWeight(), b = op.getBias();
    rewriter.replaceOp(op, part);
    eraseIfDead(rewriter, w);
    if (b)
      eraseIfDead(rewriter, b);
  }
  return success();
}

namespace {

struct FuseQkvPass : accel::impl::FuseQkvBase<FuseQkvPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<Block *> blocks;
    getOperation()->walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks) {
      llvm::MapVector<GroupKey, SmallVector<transformer::LinearOp>> groups;
      for (auto op : block->getOps<transformer::LinearOp>()) {
        if (!isFusable(op))
          continue;
        GroupKey key{op.getX(), op.getWeight().getType().getElementType(),
                     cast<RankedTensorType>(op.getType()).getElementType(),
                     op.getBias() ? 1u : 0u, op.getActivationAttr(), feedsAttention(op) ? 1u : 0u};
        groups[key].push_back(op);
      }
      for (auto &[key, group] : groups)
        if (group.size() >= 2)
          (void)fuseGroup(rewriter, group);
    }
  }
};

} // namespace
