//===- MoeOps.cpp - the moe verifier ---------------------------------------===//
//---------------------------------------===//
//
// transformer.moe: every shape and attribute the routing and the experts
// depend on, one sentence per inconsistency.
//
//===----------------------------------------------------------------------===//
#include "accel/dialects/Transformer/TransformerOps.h"

#include "VerifyUtils.h"

using namespace mlir;
using namespace accel::transformer;
using namespace accel::transformer::detail;

static RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

LogicalResult MoeOp::verify() {
  RankedTensorType x = getX().getType();
  const int64_t hidden = x.getDimSize(1);
  const int64_t experts = int64_t(getNumExperts());
  const int64_t topK = int64_t(getTopK());
  if (topK > experts)
    return emitOpError("top_k = ") << topK << " exceeds num_experts = " << experts;

  RankedTensorType router = getRouter().getType();
  if (!compatible(router.getDimSize(0), experts) || !compatible(router.getDimSize(1), hidden))
    return emitOpError("router must be [num_experts = ")
           << experts << ", hidden = " << dim(hidden) << "], got " << router;
  if (Value bias = getRouterBias(); bias && !compatible(typeOf(bias).getDimSize(0), experts))
    return emitOpError("router_bias must be [num_experts = ")
           << experts << "], got " << bias.getType();

  Value gateUp = getGateUp(), gate = getGate(), up = getUp();
  if (gateUp && (gate || up))
    return emitOpError("takes gate_up or gate and up, not both");
  if (!gateUp && !(gate && up))
    return emitOpError("needs gate_up, or both gate and up");
  auto checkExperts = [&](RankedTensorType t, StringRef name) -> LogicalResult {
    if (!compatible(t.getDimSize(0), experts))
      return emitOpError() << name << " stacks " << dim(t.getDimSize(0))
                           << " experts but num_experts = " << experts;
    return success();
  };
  int64_t inter;
  if (gateUp) {
    RankedTensorType t = typeOf(gateUp);
    if (failed(checkExperts(t, "gate_up")))
      return failure();
    int64_t rows = t.getDimSize(1);
    if (!compatible(t.getDimSize(2), hidden) || (!ShapedType::isDynamic(rows) && rows % 2 != 0))
      return emitOpError("gate_up must be [num_experts, 2 * intermediate, hidden = ")
             << dim(hidden) << "], got " << t;
    inter = ShapedType::isDynamic(rows) ? rows : rows / 2;
  } else {
    if (gate.getType() != up.getType())
      return emitOpError("gate and up must have the same type, got ")
             << gate.getType() << " and " << up.getType();
    RankedTensorType t = typeOf(gate);
    if (failed(checkExperts(t, "gate")))
      return failure();
    if (!compatible(t.getDimSize(2), hidden))
      return emitOpError("gate and up must be [num_experts, intermediate, hidden = ")
             << dim(hidden) << "], got " << t;
    inter = t.getDimSize(1);
  }
  RankedTensorType down = getDown().getType();
  if (failed(checkExperts(down, "down")))
    return failure();
  if (!compatible(down.getDimSize(1), hidden) || !compatible(down.getDimSize(2), inter))
    return emitOpError("down must be [num_experts, hidden = ")
           << dim(hidden) << ", intermediate = " << dim(inter) << "], got " << down;

  Value sharedGateUp = getSharedGateUp(), sharedDown = getSharedDown();
  if (bool(sharedGateUp) != bool(sharedDown))
    return emitOpError("a shared expert needs both shared_gate_up and shared_down");
  if (sharedGateUp) {
    RankedTensorType gu = typeOf(sharedGateUp), d = typeOf(sharedDown);
    int64_t rows = gu.getDimSize(0);
    if (!compatible(gu.getDimSize(1), hidden) || (!ShapedType::isDynamic(rows) && rows % 2 != 0))
      return emitOpError("shared_gate_up must be [2 * shared intermediate, hidden = ")
             << dim(hidden) << "], got " << gu;
    int64_t shared = ShapedType::isDynamic(rows) ? rows : rows / 2;
    if (!compatible(d.getDimSize(0), hidden) || !compatible(d.getDimSize(1), shared))
      return emitOpError("shared_down must be [hidden = ")
             << dim(hidden) << ", shared intermediate = " << dim(shared) << "], got " << d;
  }
  if (Value g = getSharedExpertGate()) {
    if (!sharedGateUp)
      return emitOpError("shared_expert_gate scales a shared expert, and there is none");
    RankedTensorType t = typeOf(g);
    if (!compatible(t.getDimSize(0), 1) || !compatible(t.getDimSize(1), hidden))
      return emitOpError("shared_expert_gate must be [1, hidden = ")
             << dim(hidden) << "], got " << t;
  }

  // Quantised experts: i8 / f8E4M3FN with an f32 scale per expert and row.
  auto checkScale = [&](Value weight, Value scale, StringRef name) -> LogicalResult {
    if (!weight) {
      if (scale)
        return emitOpError() << name << "_scale scales a " << name << " weight, and there is none";
      return success();
    }
    RankedTensorType w = typeOf(weight);
    Type elem = w.getElementType();
    const bool quantised = elem.isInteger(8) || isa<Float8E4M3FNType>(elem);
    if (!quantised) {
      if (scale)
        return emitOpError() << name << "_scale scales quantised (i8 or f8E4M3FN) experts, but "
                             << name << " is " << elem;
      return success();
    }
    if (!scale)
      return emitOpError() << name << " is quantised (" << elem << ") and needs " << name
                           << "_scale [num_experts, rows]";
    RankedTensorType st = typeOf(scale);
    if (!st.getElementType().isF32() || !compatible(st.getDimSize(0), w.getDimSize(0)) ||
        !compatible(st.getDimSize(1), w.getDimSize(1)))
      return emitOpError() << name << "_scale must be f32 [" << dim(w.getDimSize(0)) << ", "
                           << dim(w.getDimSize(1)) << "] (per expert and row), got " << st;
    return success();
  };
  if (failed(checkScale(gateUp, getGateUpScale(), "gate_up")) ||
      failed(checkScale(gate, getGateScale(), "gate")) ||
      failed(checkScale(up, getUpScale(), "up")) ||
      failed(checkScale(getDown(), getDownScale(), "down")))
    return failure();

  for (Value weight :
       std::initializer_list<Value>{getRouter(), getRouterBias(), gateUp, gate, up, getDown(),
                                    sharedGateUp, sharedDown, getSharedExpertGate()}) {
    if (!weight)
      continue;
    Type elem = typeOf(weight).getElementType();
    bool scaled = (weight == gateUp && getGateUpScale()) || (weight == gate && getGateScale()) ||
                  (weight == up && getUpScale()) || (weight == getDown() && getDownScale());
    if (scaled)
      continue;
    if (!isCompatibleFloatWeight(elem, x.getElementType()))
      return emitOpError("weight element type ")
             << elem << " does not match the x element type " << x.getElementType()
             << " (only f32 x may read f16 or bf16 weights)";
  }
  return success();
}
