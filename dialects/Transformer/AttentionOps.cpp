//===- AttentionOps.cpp - rotary and attention verifiers ------------------===//
#include "accel/dialects/Transformer/TransformerOps.h"

#include "VerifyUtils.h"

using namespace mlir;
using namespace accel::transformer;
using namespace accel::transformer::detail;

//===----------------------------------------------------------------------===//
// RotaryOp
//===----------------------------------------------------------------------===//

LogicalResult RotaryOp::verify() {
  RankedTensorType input = getInput().getType();
  int64_t headDim = input.getDimSize(2);
  int64_t rotaryDim = static_cast<int64_t>(getRotaryDim());
  if (rotaryDim % 2 != 0)
    return emitOpError("rotary_dim ") << rotaryDim << " must be even";
  if (!ShapedType::isDynamic(headDim) && rotaryDim > headDim)
    return emitOpError("rotary_dim ")
           << rotaryDim << " exceeds the head_dim " << headDim << " of the input";
  int64_t positions = getPositions().getType().getDimSize(0);
  if (!compatible(positions, input.getDimSize(0)))
    return emitOpError("positions has ")
           << dim(positions) << " tokens but the input has "
           << dim(input.getDimSize(0));

  Value cos = getCosCache(), sin = getSinCache();
  if (static_cast<bool>(cos) != static_cast<bool>(sin))
    return emitOpError("cos_sin needs both the cos and the sin table");
  bool hasTables = static_cast<bool>(cos);
  if (getTheta() && hasTables)
    return emitOpError("takes theta or cos_sin tables, not both");
  if (!getTheta() && !hasTables)
    return emitOpError("needs theta or cos_sin tables");
  if (getScaling() && !getTheta())
    return emitOpError("scaling applies to theta, not to cos_sin tables");
  if (failed(verifyPositive(*this, "theta", getTheta())))
    return failure();
  if (hasTables) {
    if (cos.getType() != sin.getType())
      return emitOpError("cos and sin tables must have the same type, got ")
             << cos.getType() << " and " << sin.getType();
    auto table = cast<RankedTensorType>(cos.getType());
    if (!compatible(table.getDimSize(1), rotaryDim / 2))
      return emitOpError("cos_sin tables must be [max_position, rotary_dim / 2 = ")
             << rotaryDim / 2 << "], got " << table;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  int64_t numHeads = static_cast<int64_t>(getNumHeads());
  int64_t numKvHeads = static_cast<int64_t>(getNumKvHeads());
  int64_t headDim = static_cast<int64_t>(getHeadDim());
  if (numHeads % numKvHeads != 0)
    return emitOpError("num_heads ")
           << numHeads << " is not a multiple of num_kv_heads " << numKvHeads;

  RankedTensorType q = getQ().getType(), k = getK().getType();
  if (!compatible(q.getDimSize(1), numHeads) ||
      !compatible(q.getDimSize(2), headDim))
    return emitOpError("q must be [tokens, num_heads = ")
           << numHeads << ", head_dim = " << headDim << "], got " << q;
  if (!compatible(k.getDimSize(1), numKvHeads) ||
      !compatible(k.getDimSize(2), headDim))
    return emitOpError("k and v must be [tokens, num_kv_heads = ")
           << numKvHeads << ", head_dim = " << headDim << "], got " << k;
  if (!compatible(q.getDimSize(0), k.getDimSize(0)))
    return emitOpError("q has ")
           << dim(q.getDimSize(0)) << " tokens but k and v have "
           << dim(k.getDimSize(0));
  if (q.getElementType() != k.getElementType())
    return emitOpError("q element type ")
           << q.getElementType() << " does not match the k and v element type "
           << k.getElementType();

  KVCacheType cache = getCache().getType();
  int64_t layer = static_cast<int64_t>(getLayer());
  if (layer >= cache.getLayers())
    return emitOpError("layer ")
           << layer << " is out of range for a kv cache of "
           << cache.getLayers() << " layers";
  if (cache.getKvHeads() != numKvHeads)
    return emitOpError("the kv cache has ")
           << cache.getKvHeads() << " kv_heads but num_kv_heads is "
           << numKvHeads;
  if (cache.getHeadDim() != headDim)
    return emitOpError("the kv cache has head_dim ")
           << cache.getHeadDim() << " but head_dim is " << headDim;
  if (cache.isQuantized()) {
    if (!getKScale() || !getVScale())
      return emitOpError("a kv cache of ")
             << cache.getElementType() << " needs k_scale and v_scale";
    if (failed(verifyPositive(*this, "k_scale", getKScale())) ||
        failed(verifyPositive(*this, "v_scale", getVScale())))
      return failure();
  } else {
    if (getKScale() || getVScale())
      return emitOpError("k_scale and v_scale only apply to a quantized kv "
                         "cache, got ")
             << cache.getElementType();
    if (cache.getElementType() != q.getElementType())
      return emitOpError("the kv cache element type ")
             << cache.getElementType()
             << " does not match the q element type " << q.getElementType();
  }
  if (failed(verifyPositive(*this, "scale", getScale())))
    return failure();
  return verifyPositive(*this, "softcap", getSoftcap());
}
