//===- Onnx.cpp - ONNX operators raising left: exec.onnx ------------------===//
//
// Any ONNX operator without a lowering of its own (Views.cpp handles the
// reshapes and splits) becomes exec.onnx: the operator, its ONNX attributes,
// its present inputs and its outputs in new buffers sized by TokenShapes.
// The CPU backend runs the ONNX reference kernels; for GPU targets
// accel-exec-select-kernels refuses the operator (or, with accelc
// -allow-host-steps, keeps it as a host step).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

using namespace mlir;
namespace ex = accel::exec;

namespace accel::conversion {

/// Which ONNX positions of a segmented operand/result list are present,
/// when one is absent; empty otherwise.
static SmallVector<bool> present(Operation *op, StringRef key) {
  SmallVector<bool> out;
  auto seg = op->getAttrOfType<DenseI32ArrayAttr>(key);
  if (!seg)
    return out;
  bool anyAbsent = false;
  for (int32_t n : seg.asArrayRef()) {
    if (n == 0) {
      out.push_back(false);
      anyAbsent = true;
    }
    for (int32_t i = 0; i < n; ++i)
      out.push_back(true);
  }
  if (!anyAbsent)
    out.clear();
  return out;
}

LogicalResult lowerOnnxOperator(Operation *op, Lowering &l) {
  StringRef name = op->getName().getStringRef();
  name.consume_front("onnx.");
  StringRef domain;
  if (name.consume_front("ms_"))
    domain = "com.microsoft";
  FailureOr<SmallVector<Value>> ins = l.views(op->getOperands(), op);
  if (failed(ins))
    return failure();
  SmallVector<Value> outs;
  for (Value r : op->getResults()) {
    FailureOr<Value> out = l.alloc(r);
    if (failed(out))
      return failure();
    outs.push_back(*out);
  }
  OpBuilder &b = l.builder();
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute a : op->getAttrs()) {
    StringRef n = a.getName().getValue();
    if (n == "operandSegmentSizes" || n == "resultSegmentSizes" || n.starts_with("accel."))
      continue;
    attrs.push_back(a);
  }
  auto step = ex::OnnxOp::create(b, op->getLoc(), b.getStringAttr(name),
                                 domain.empty() ? StringAttr() : b.getStringAttr(domain), *ins,
                                 outs, attrs.empty() ? DictionaryAttr() : b.getDictionaryAttr(attrs),
                                 DenseBoolArrayAttr(), DenseBoolArrayAttr());
  if (SmallVector<bool> p = present(op, "operandSegmentSizes"); !p.empty())
    step.setInputPresentAttr(b.getDenseBoolArrayAttr(p));
  if (SmallVector<bool> p = present(op, "resultSegmentSizes"); !p.empty())
    step.setOutputPresentAttr(b.getDenseBoolArrayAttr(p));
  l.finish(step, op);
  return success();
}

void populateOnnxLowerings(LoweringPatterns &patterns) { patterns.setOnnxFallback(lowerOnnxOperator); }

void populateTransformerToExecPatterns(LoweringPatterns &patterns) {
  populateEmbeddingLowerings(patterns);
  populateNormLowerings(patterns);
  populatePointwiseLowerings(patterns);
  populateMoeLowerings(patterns);
  populateRotaryLowerings(patterns);
  populateAttentionLowerings(patterns);
  populateLinearLowerings(patterns);
  populateCollectiveLowerings(patterns);
  populateViewLowerings(patterns);
  populateOnnxLowerings(patterns);
}

} // namespace accel::conversion
