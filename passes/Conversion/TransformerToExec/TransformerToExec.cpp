//===- TransformerToExec.cpp - accel-lower-to-exec ------------------------===//
//
// The driver: declares the KV pool, the weights arena and the schedule, then
// lowers the function's ops in order with the family patterns (Lowering.h),
// and replaces the function by the schedule.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "accel/dialects/Transformer/TransformerOps.h"
#include "accel/passes/Passes.h"

namespace accel {
#define GEN_PASS_DEF_LOWERTOEXEC
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
namespace ex = accel::exec;
namespace tf = accel::transformer;

namespace accel::conversion {



/// The module's one public function.
static FailureOr<func::FuncOp> entry(ModuleOp module) {
  func::FuncOp func;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (f.isPrivate() || f.isExternal())
      continue;
    if (func)
      return module.emitError() << "has more than one public function (@" << func.getSymName()
                                << ", @" << f.getSymName() << "); a schedule has one entry";
    func = f;
  }
  if (!func)
    return module.emitError("has no public function to lower to exec");
  return func;
}

LogicalResult lowerToExec(ModuleOp module) {
  FailureOr<func::FuncOp> found = entry(module);
  if (failed(found))
    return failure();
  func::FuncOp func = *found;
  if (!func.getBody().hasOneBlock())
    return func.emitError("has more than one block; a schedule is straight-line");

  // The arguments: the token ids, the batch and the KV cache.
  Value ids;
  tf::KVCacheType cache;
  for (BlockArgument arg : func.getArguments()) {
    if (auto c = dyn_cast<tf::KVCacheType>(arg.getType())) {
      cache = c;
    } else if (isa<tf::BatchType>(arg.getType())) {
    } else if (!ids && isa<RankedTensorType>(arg.getType())) {
      ids = arg;
    } else {
      return func.emitError() << "takes argument #" << arg.getArgNumber() << " of type "
                              << arg.getType()
                              << "; a token-major function takes the token ids, the batch "
                                 "and the KV cache only (was its attention raised?)";
    }
  }
  if (!ids || !cache)
    return func.emitError("is not token-major (it takes no token ids or no KV cache): its "
                          "attention was not raised, see the report of unraised subgraphs");

  OpBuilder b(module.getContext());
  b.setInsertionPoint(func);
  Location loc = func.getLoc();
  // The module records the parallelism the runtime needs.
  for (StringRef key : {"accel.tp_size", "accel.pp_size"})
    if (Attribute a = func->getAttr(key))
      module->setAttr(key, a);
  auto pool = ex::KVPoolOp::create(
      b, loc, "kv", int64_t(cache.getLayers()), int64_t(cache.getBlockSize()),
      int64_t(cache.getKvHeads()), int64_t(cache.getHeadDim()), cache.getElementType(),
      func->getAttrOfType<DenseI64ArrayAttr>("accel.pp_layers"));
  auto weights = ex::ArenaOp::create(b, loc, "weights", ex::ArenaKind::weights, 0, 0, 0, 64,
                                     b.getStringAttr("weights"));
  auto schedule = ex::ScheduleOp::create(b, loc, "main", ex::ScheduleKind::mixed);
  schedule.getBody().emplaceBlock();

  LoweringPatterns patterns;
  populateTransformerToExecPatterns(patterns);
  Lowering l(func, schedule, pool, weights, patterns);
  FailureOr<Value> tokens = l.stepInput(ex::StepInputKind::token_ids,
                                        cast<RankedTensorType>(ids.getType()).getElementType(),
                                        func);
  if (failed(tokens))
    return failure();
  l.map(ids, *tokens);

  for (Operation &op : func.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      int logits = -1;
      for (unsigned i = 0; i < func.getNumResults(); ++i)
        if (DictionaryAttr attrs = func.getResultAttrDict(i))
          if (auto n = attrs.getAs<StringAttr>("onnx.name"); n && n == "logits")
            logits = int(i);
      if (logits < 0 && func.getNumResults() == 1)
        logits = 0;
      if (logits < 0)
        return func.emitError() << "has " << func.getNumResults()
                                << " results and none is named 'logits'";
      Value result = ret.getOperand(unsigned(logits));
      auto type = cast<RankedTensorType>(result.getType());
      if (type.getRank() != 2 || type.isDynamicDim(1))
        return func.emitError() << "returns logits of type " << type
                                << "; a plan needs [rows, vocab] with a static vocabulary";
      FailureOr<Value> v = l.view(result, &op);
      if (failed(v))
        return failure();
      l.builder().setInsertionPointToEnd(&schedule.getBody().front());
      ex::StepOutputOp::create(l.builder(), op.getLoc(), ex::StepOutputKind::logits, *v);
      continue;
    }
    if (l.isDeferred(&op) ||
        (op.getNumResults() && llvm::all_of(op.getResults(), [&](Value r) {
           return l.isMapped(r);
         })))
      continue;
    if (op.getNumRegions() != 0)
      return op.emitError("has regions; control flow cannot be lowered to a schedule");
    l.builder().setInsertionPointToEnd(&schedule.getBody().front());
    if (failed(l.lower(&op)))
      return failure();
  }
  func.erase();
  return success();
}

} // namespace accel::conversion

namespace {

struct LowerToExecPass : accel::impl::LowerToExecBase<LowerToExecPass> {
  void runOnOperation() override {
    if (failed(accel::conversion::lowerToExec(getOperation())))
      signalPassFailure();
  }
};

} // namespace
