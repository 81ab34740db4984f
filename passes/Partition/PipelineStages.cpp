//===- PipelineStages.cpp - accel-pipeline-stages: split by layers --------===//
//
// Pipeline parallelism (accelc -pp=M, docs/passes/partition.md): the
// decoder layers are cut into M contiguous, balanced ranges (the first
// L mod M stages get one layer more); the token embedding goes with stage 0,
// the final norm and the lm head with stage M-1.
//
// The cut before a stage's first layer is that layer's input norm (the
// rms_norm / add_rms_norm / layer_norm whose [tokens, hidden] result feeds
// its attention's query, through the projection, split, per-head norm and
// rotary): every op from it on, in program order, belongs to the stage,
// until the next cut. Every op but the weights (onnx.Constant, which every
// stage can read) gets `accel.pp_stage`. A value that a stage reads but an
// earlier stage computes (the residual stream, and the last branch when the
// residual add is fused into the next norm) crosses through one
// transformer.pp_transfer at the start of the reading stage; an op that
// reads only the step's batch (transformer.positions) is recomputed by each
// stage that reads it instead. Attention `layer` indices become stage-local (each stage's KV
// cache holds only its layers) and the function gets `accel.pp_size` and
// `accel.pp_layers` (the layer count of every stage).
//
// Runs after accel-partition, so the two compose (-pp=M -tp=N): the
// transfer of rank r of one stage goes to rank r of the next.
//
//===----------------------------------------------------------------------===//
#include "PartitionUtils.h"

#include "accel/dialects/Onnx/OnnxOps.h"
#include "accel/dialects/Transformer/TransformerOps.h"
#include "accel/passes/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace accel {
#define GEN_PASS_DEF_PIPELINESTAGES
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
namespace tf = accel::transformer;

namespace {

constexpr llvm::StringLiteral kStageAttr = "accel.pp_stage";

/// The input norm of attention `a`'s layer: walks from its query back
/// through operand 0 (projection, split, split_heads, per-head norm, rotary,
/// glue) to the first norm with a [tokens, hidden] result.
Operation *inputNorm(tf::AttentionOp a) {
  Value v = a.getQ();
  for (int guard = 0; guard < 64; ++guard) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getNumOperands() == 0)
      return nullptr;
    if (isa<tf::RmsNormOp, tf::AddRmsNormOp, tf::LayerNormOp>(def) &&
        cast<ShapedType>(def->getResult(0).getType()).getRank() == 2)
      return def;
    v = def->getOperand(0);
  }
  return nullptr;
}

int64_t stageOf(Operation *op) {
  auto s = op->getAttrOfType<IntegerAttr>(kStageAttr);
  return s ? s.getInt() : -1;
}

struct PipelineStagesPass : accel::impl::PipelineStagesBase<PipelineStagesPass> {
  using PipelineStagesBase::PipelineStagesBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    const int64_t m = ppSize;
    if (m < 1) {
      func.emitError() << "-pp must be at least 1, got " << m;
      return signalPassFailure();
    }
    if (m == 1 || func.isExternal())
      return;
    if (func->hasAttr("accel.pp_size")) {
      func.emitError() << "@" << func.getSymName() << " is split into pipeline stages already";
      return signalPassFailure();
    }
    bool hasCache = llvm::any_of(func.getArgumentTypes(),
                                 [](Type t) { return isa<tf::KVCacheType>(t); });
    if (!hasCache || !func.getBody().hasOneBlock()) {
      func.emitError() << "pipeline parallelism needs the token-major function that raising "
                          "makes (with a paged KV cache), and @"
                       << func.getSymName() << " is not one";
      return signalPassFailure();
    }
    // accel-fuse-qkv-rotary runs after partitioning (buildLateFusionPipeline).
    for (auto fused : func.getBody().front().getOps<tf::QkvRotaryOp>()) {
      fused.emitError() << "pipeline parallelism partitions the unfused q/k/v split and rotaries; run "
                           "accel-fuse-qkv-rotary after it, not before";
      return signalPassFailure();
    }
    Block &body = func.getBody().front();
    SmallVector<tf::AttentionOp> attentions(body.getOps<tf::AttentionOp>());
    const int64_t layers = int64_t(attentions.size());
    for (auto [i, a] : llvm::enumerate(attentions))
      if (int64_t(a.getLayer()) != int64_t(i)) {
        a.emitError() << "pipeline parallelism needs one attention per decoder layer in layer "
                         "order, and attention "
                      << i << " reads KV cache layer " << a.getLayer();
        return signalPassFailure();
      }
    if (m > layers) {
      func.emitError() << "-pp=" << m << " asks for more pipeline stages than the " << layers
                       << " decoder layers of this model (every stage needs at least one)";
      return signalPassFailure();
    }

    // Balanced by layer count: the first L mod M stages get one more.
    SmallVector<int64_t> counts, first;
    for (int64_t s = 0, at = 0; s < m; ++s) {
      counts.push_back(layers / m + (s < layers % m ? 1 : 0));
      first.push_back(at);
      at += counts.back();
    }
    // The cut before every stage but the first: its first layer's input norm.
    SmallVector<Operation *> cuts(size_t(m), nullptr);
    for (int64_t s = 1; s < m; ++s) {
      tf::AttentionOp a = attentions[size_t(first[s])];
      Operation *norm = inputNorm(a);
      if (!norm) {
        a.emitError() << "pipeline parallelism cannot find the input norm of layer " << first[s]
                      << " (the rms_norm or layer_norm whose result reaches its attention's "
                         "query), where stage "
                      << s << " would begin";
        return signalPassFailure();
      }
      if (!attentions[size_t(first[s] - 1)]->isBeforeInBlock(norm)) {
        norm->emitError() << "pipeline parallelism cannot begin stage " << s << " at layer "
                          << first[s] << ": its input norm comes before the attention of layer "
                          << first[s] - 1;
        return signalPassFailure();
      }
      cuts[size_t(s)] = norm;
    }

    // Every op (but the weights and the return) gets its stage.
    MLIRContext *ctx = &getContext();
    Builder b(ctx);
    int64_t stage = 0;
    for (Operation &op : body) {
      if (stage + 1 < m && &op == cuts[size_t(stage + 1)])
        ++stage;
      if (isa<onnx::ConstantOp>(op) || op.hasTrait<OpTrait::IsTerminator>())
        continue;
      op.setAttr(kStageAttr, b.getI64IntegerAttr(stage));
      if (auto a = dyn_cast<tf::AttentionOp>(op))
        a.setLayer(uint64_t(int64_t(a.getLayer()) - first[size_t(stage)]));
    }

    // Values that cross: one transfer (or clone) per value and reading stage,
    // at the start of that stage.
    OpBuilder ob(ctx);
    llvm::DenseMap<std::pair<Value, int64_t>, Value> moved;
    auto crossing = [&](Value v, int64_t to) -> Value {
      auto key = std::make_pair(v, to);
      if (auto it = moved.find(key); it != moved.end())
        return it->second;
      Operation *def = v.getDefiningOp();
      ob.setInsertionPoint(cuts[size_t(to)]);
      Value r;
      if (llvm::all_of(def->getOperands(), [](Value o) {
            return isa<BlockArgument>(o) && !isa<RankedTensorType>(o.getType());
          })) {
        Operation *clone = ob.clone(*def);
        clone->setAttr(kStageAttr, ob.getI64IntegerAttr(to));
        r = clone->getResult(cast<OpResult>(v).getResultNumber());
      } else {
        auto t = tf::PpTransferOp::create(ob, def->getLoc(), v.getType(), v,
                                          ob.getI64IntegerAttr(stageOf(def)),
                                          ob.getI64IntegerAttr(to));
        t->setAttr(kStageAttr, ob.getI64IntegerAttr(to));
        r = t.getResult();
      }
      moved[key] = r;
      return r;
    };
    SmallVector<Operation *> ops;
    for (Operation &op : body)
      ops.push_back(&op);
    for (Operation *op : ops) {
      if (isa<tf::PpTransferOp>(op) || isa<onnx::ConstantOp>(op))
        continue;
      int64_t to = op->hasTrait<OpTrait::IsTerminator>() ? m - 1 : stageOf(op);
      if (to <= 0)
        continue;
      for (OpOperand &use : op->getOpOperands()) {
        Operation *def = use.get().getDefiningOp();
        if (!def || isa<onnx::ConstantOp>(def) || stageOf(def) >= to)
          continue;
        use.set(crossing(use.get(), to));
      }
    }

    func->setAttr("accel.pp_size", b.getI64IntegerAttr(m));
    func->setAttr("accel.pp_layers", b.getDenseI64ArrayAttr(counts));
  }
};

} // namespace
