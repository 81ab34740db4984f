//===- MemoryPlan.cpp - liveness and best-fit arena offsets ---------------===//
//
// planMemory() in three steps:
//   1. classify every result of the function's block: a buffer (an
//      activation with its own bytes), a view of one (reshape-like ops the
//      runtime implements without a copy), or not planned (weights, shape
//      arithmetic kept on the host, arguments and views of them);
//   2. live intervals over op indices, def .. last use (a use inside a
//      nested region counts at its ancestor op in the block; func.return is
//      the last op, so returned values live to the end); a view extends its
//      buffer's interval;
//   3. offsets: buffers largest first (ties: earlier start, then op order),
//      each placed in the smallest gap, between the buffers already placed
//      whose intervals overlap its own, that fits it; else above them all.
//
//===----------------------------------------------------------------------===//
#include "accel/passes/MemoryPlan.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;

namespace accel::layout {

int64_t alignArena(int64_t bytes) { return llvm::alignTo(bytes, kArenaAlignment); }

namespace {

/// Ops whose result the runtime makes as a view of operand 0 (no copy):
/// runtime/engine/GpuSteps.cpp (the ONNX view ops and the transformer
/// split_heads / merge_heads / flatten_tokens / unflatten_tokens steps).
bool isViewOp(Operation *op) {
  static constexpr llvm::StringLiteral kViews[] = {
      "onnx.Reshape",           "onnx.Flatten",           "onnx.Squeeze",
      "onnx.Unsqueeze",         "onnx.Identity",          "transformer.split_heads",
      "transformer.merge_heads", "transformer.flatten_tokens", "transformer.unflatten_tokens"};
  return llvm::is_contained(kViews, op->getName().getStringRef());
}

bool isWeight(Operation *op) {
  return op->getName().getStringRef() == "onnx.Constant" || op->hasTrait<OpTrait::ConstantLike>();
}

/// The number of bytes of `type` with every dynamic dimension at
/// `maxTokens`, or nullopt on overflow.
std::optional<int64_t> sizeInBytes(RankedTensorType type, int64_t maxTokens) {
  Type element = type.getElementType();
  int64_t bits;
  if (element.isIntOrFloat())
    bits = element.getIntOrFloatBitWidth();
  else if (element.isIndex())
    bits = 64;
  else
    return std::nullopt;
  int64_t count = 1;
  for (int64_t d : type.getShape())
    if (llvm::MulOverflow(count, ShapedType::isDynamic(d) ? maxTokens : d, count))
      return std::nullopt;
  int64_t totalBits;
  if (llvm::MulOverflow(count, bits, totalBits))
    return std::nullopt;
  return llvm::divideCeil(totalBits, 8);
}

} // namespace

FailureOr<MemoryPlan> planMemory(func::FuncOp func, int64_t maxTokens) {
  MemoryPlan plan;
  if (maxTokens < 1)
    return func.emitError() << "accel-plan-memory needs max-tokens of at least 1, got "
                            << maxTokens;
  if (func.isExternal())
    return plan;
  if (!func.getBody().hasOneBlock())
    return func.emitError() << "accel-plan-memory needs a function of one block, and @"
                            << func.getSymName() << " has "
                            << func.getBody().getBlocks().size();
  Block &block = func.getBody().front();

  llvm::DenseMap<Operation *, int64_t> index;
  for (auto [i, op] : llvm::enumerate(block))
    index[&op] = int64_t(i);

  // 1. Classify.
  llvm::DenseSet<Value> host; // shape arithmetic, on the host
  llvm::DenseMap<Value, unsigned> planned;
  for (Operation &op : block) {
    if (isWeight(&op) || op.getNumResults() == 0)
      continue;
    StringRef name = op.getName().getStringRef();
    if (name == "onnx.Shape" || name == "onnx.Size") {
      host.insert(op.getResults().begin(), op.getResults().end());
      continue;
    }
    // ONNX ops on shapes (and constants) only compute more shapes: the
    // runtime keeps them on the host too.
    if (name.starts_with("onnx.") && op.getNumOperands() > 0 &&
        llvm::any_of(op.getOperands(), [&](Value v) { return host.contains(v); }) &&
        llvm::all_of(op.getOperands(), [&](Value v) {
          return host.contains(v) || (v.getDefiningOp() && isWeight(v.getDefiningOp()));
        })) {
      host.insert(op.getResults().begin(), op.getResults().end());
      continue;
    }
    const bool view = isViewOp(&op) && op.getNumResults() == 1 && op.getNumOperands() > 0;
    for (OpResult r : op.getResults()) {
      auto type = dyn_cast<RankedTensorType>(r.getType());
      if (!type)
        continue;
      PlannedValue pv;
      pv.value = r;
      pv.start = pv.end = index[&op];
      for (OpOperand &use : r.getUses())
        if (Operation *user = block.findAncestorOpInBlock(*use.getOwner()))
          pv.end = std::max(pv.end, index[user]);
      const unsigned self = plan.values.size();
      if (view) {
        auto it = planned.find(op.getOperand(0));
        if (it == planned.end())
          continue; // a view of an argument, a weight or a host value
        pv.buffer = plan.values[it->second].buffer;
        PlannedValue &buffer = plan.values[pv.buffer];
        buffer.end = std::max(buffer.end, pv.end);
        pv.bytes = buffer.bytes;
      } else {
        std::optional<int64_t> bytes = sizeInBytes(type, maxTokens);
        if (!bytes)
          return op.emitError() << "accel-plan-memory cannot size result #" << r.getResultNumber()
                                << " (" << type << ") at " << maxTokens << " tokens";
        pv.buffer = self;
        pv.bytes = *bytes;
      }
      planned[r] = self;
      plan.values.push_back(pv);
    }
  }

  // 3. Offsets, largest first.
  std::vector<unsigned> order;
  for (auto [i, pv] : llvm::enumerate(plan.values))
    if (pv.buffer == i)
      order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
    const PlannedValue &x = plan.values[a], &y = plan.values[b];
    if (alignArena(x.bytes) != alignArena(y.bytes))
      return alignArena(x.bytes) > alignArena(y.bytes);
    return x.start < y.start;
  });
  std::vector<unsigned> placed;
  for (unsigned i : order) {
    PlannedValue &pv = plan.values[i];
    const int64_t size = alignArena(pv.bytes);
    std::vector<unsigned> conflicts;
    for (unsigned j : placed) {
      const PlannedValue &q = plan.values[j];
      if (q.start <= pv.end && pv.start <= q.end)
        conflicts.push_back(j);
    }
    llvm::sort(conflicts,
               [&](unsigned a, unsigned b) { return plan.values[a].offset < plan.values[b].offset; });
    int64_t cursor = 0, best = -1, bestGap = 0;
    for (unsigned j : conflicts) {
      const PlannedValue &q = plan.values[j];
      const int64_t gap = q.offset - cursor;
      if (gap >= size && (best < 0 || gap < bestGap)) {
        best = cursor;
        bestGap = gap;
      }
      cursor = std::max(cursor, q.offset + alignArena(q.bytes));
    }
    pv.offset = best >= 0 ? best : cursor;
    placed.push_back(i);
    plan.peakBytes = std::max(plan.peakBytes, pv.offset + size);
    plan.naiveBytes += size;
  }
  for (PlannedValue &pv : plan.values)
    pv.offset = plan.values[pv.buffer].offset;
  return plan;
}

void writeMemoryPlan(func::FuncOp func, const MemoryPlan &plan) {
  Builder b(func.getContext());
  llvm::DenseMap<Operation *, SmallVector<Attribute>> perOp;
  for (const PlannedValue &pv : plan.values) {
    auto r = cast<OpResult>(pv.value);
    SmallVector<Attribute> &entries = perOp[r.getOwner()];
    if (entries.empty())
      entries.assign(r.getOwner()->getNumResults(), b.getDenseI64ArrayAttr({}));
    entries[r.getResultNumber()] = b.getDenseI64ArrayAttr({pv.offset, pv.bytes});
  }
  func.walk([&](Operation *op) {
    if (op != func.getOperation())
      op->removeAttr(kArenaAttr);
  });
  for (auto &[op, entries] : perOp)
    op->setAttr(kArenaAttr, b.getArrayAttr(entries));
  func->setAttr(kArenaBytesAttr, b.getI64IntegerAttr(plan.peakBytes));
  func->setAttr(kArenaNaiveBytesAttr, b.getI64IntegerAttr(plan.naiveBytes));
}

} // namespace accel::layout
