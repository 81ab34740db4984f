//===- AttentionOps.cpp - rotary, qkv_rotary and attention verifiers -----===//
#include "accel/dialects/Transformer/TransformerOps.h"

#include "VerifyUtils.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

#include <cmath>

using namespace mlir;
using namespace accel::transformer;
using namespace accel::transformer::detail;

/// What transformer.rotary and transformer.qkv_rotary share: rotary_dim
/// even and at most `headDim`, as many positions as `tokens`, and the
/// frequencies from theta (with an optional scaling) or from both cos/sin
/// tables `[max_position, rotary_dim / 2]`. `what` names the rotated tensor.
static LogicalResult verifyRotation(Operation *op, int64_t headDim, int64_t tokens,
                                    StringRef what, Value positionsValue, int64_t rotaryDim,
                                    Value cos, Value sin, std::optional<APFloat> theta,
                                    bool hasScaling) {
  if (rotaryDim % 2 != 0)
    return op->emitOpError("rotary_dim ") << rotaryDim << " must be even";
  if (!ShapedType::isDynamic(headDim) && rotaryDim > headDim)
    return op->emitOpError("rotary_dim ")
           << rotaryDim << " exceeds the head_dim " << headDim << " of the " << what;
  int64_t positions = cast<RankedTensorType>(positionsValue.getType()).getDimSize(0);
  if (!compatible(positions, tokens))
    return op->emitOpError("positions has ")
           << dim(positions) << " tokens but the " << what << " has " << dim(tokens);

  if (static_cast<bool>(cos) != static_cast<bool>(sin))
    return op->emitOpError("cos_sin needs both the cos and the sin table");
  bool hasTables = static_cast<bool>(cos);
  if (theta && hasTables)
    return op->emitOpError("takes theta or cos_sin tables, not both");
  if (!theta && !hasTables)
    return op->emitOpError("needs theta or cos_sin tables");
  if (hasScaling && !theta)
    return op->emitOpError("scaling applies to theta, not to cos_sin tables");
  if (failed(verifyPositive(op, "theta", theta)))
    return failure();
  if (hasTables) {
    if (cos.getType() != sin.getType())
      return op->emitOpError("cos and sin tables must have the same type, got ")
             << cos.getType() << " and " << sin.getType();
    auto table = cast<RankedTensorType>(cos.getType());
    if (!compatible(table.getDimSize(1), rotaryDim / 2))
      return op->emitOpError("cos_sin tables must be [max_position, rotary_dim / 2 = ")
             << rotaryDim / 2 << "], got " << table;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// RotaryOp
//===----------------------------------------------------------------------===//

LogicalResult RotaryOp::verify() {
  RankedTensorType input = getInput().getType();
  return verifyRotation(*this, input.getDimSize(2), input.getDimSize(0), "input",
                        getPositions(), static_cast<int64_t>(getRotaryDim()), getCosCache(),
                        getSinCache(), getTheta(), static_cast<bool>(getScaling()));
}

//===----------------------------------------------------------------------===//
// QkvRotaryOp
//===----------------------------------------------------------------------===//

LogicalResult QkvRotaryOp::verify() {
  int64_t numHeads = static_cast<int64_t>(getNumHeads());
  int64_t numKvHeads = static_cast<int64_t>(getNumKvHeads());
  int64_t headDim = static_cast<int64_t>(getHeadDim());
  RankedTensorType qkv = getQkv().getType();
  int64_t columns = (numHeads + 2 * numKvHeads) * headDim;
  if (!compatible(qkv.getDimSize(1), columns))
    return emitOpError("qkv must have (num_heads + 2 * num_kv_heads) * head_dim = (")
           << numHeads << " + 2 * " << numKvHeads << ") * " << headDim << " = " << columns
           << " columns, got " << dim(qkv.getDimSize(1));
  for (auto [name, result, heads] :
       {std::tuple<StringRef, Value, int64_t>{"q", getQ(), numHeads},
        std::tuple<StringRef, Value, int64_t>{"k", getK(), numKvHeads},
        std::tuple<StringRef, Value, int64_t>{"v", getV(), numKvHeads}}) {
    auto type = cast<RankedTensorType>(result.getType());
    if (!compatible(type.getDimSize(0), qkv.getDimSize(0)) ||
        !compatible(type.getDimSize(1), heads) || !compatible(type.getDimSize(2), headDim))
      return emitOpError("result ")
             << name << " must be [tokens = " << dim(qkv.getDimSize(0)) << ", "
             << (name == "q" ? "num_heads" : "num_kv_heads") << " = " << heads
             << ", head_dim = " << headDim << "], got " << type;
    if (type.getElementType() != qkv.getElementType())
      return emitOpError("result ")
             << name << " element type " << type.getElementType()
             << " does not match the qkv element type " << qkv.getElementType();
  }
  return verifyRotation(*this, headDim, qkv.getDimSize(0), "qkv", getPositions(),
                        static_cast<int64_t>(getRotaryDim()), getCosCache(), getSinCache(),
                        getTheta(), static_cast<bool>(getScaling()));
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
  const bool perHead = getKHeadScales() || getVHeadScales();
  if (cache.isQuantized()) {
    if (perHead) {
      if (!getKHeadScales() || !getVHeadScales() || getKScale() || getVScale())
        return emitOpError("per-head kv scales need both k_head_scales and "
                           "v_head_scales, and no k_scale or v_scale");
      // In a function partitioned for N tensor-parallel ranks
      // (accel.tp_size = N) the lists hold every rank's heads, rank-major.
      int64_t ranks = 1;
      if (auto fn = (*this)->getParentOfType<FunctionOpInterface>())
        if (auto tp = fn->getAttrOfType<IntegerAttr>("accel.tp_size"))
          ranks = std::max<int64_t>(tp.getInt(), 1);
      for (auto [name, list] :
           {std::pair<const char *, ArrayRef<double>>{"k_head_scales", *getKHeadScales()},
            {"v_head_scales", *getVHeadScales()}}) {
        if (int64_t(list.size()) != numKvHeads * ranks)
          return emitOpError(name) << " has " << list.size() << " entries for "
                                   << numKvHeads << " kv heads"
                                   << (ranks > 1 ? " on each of " + std::to_string(ranks) +
                                                       " tensor-parallel ranks"
                                                 : std::string());
        for (double s : list)
          if (!(s > 0.0) || !std::isfinite(s))
            return emitOpError(name) << " must be positive and finite, got " << s;
      }
    } else {
      if (!getKScale() || !getVScale())
        return emitOpError("a kv cache of ")
               << cache.getElementType()
               << " needs k_scale and v_scale (or k_head_scales and v_head_scales)";
      if (failed(verifyPositive(*this, "k_scale", getKScale())) ||
          failed(verifyPositive(*this, "v_scale", getVScale())))
        return failure();
    }
  } else {
    if (getKScale() || getVScale() || perHead)
      return emitOpError("kv scales only apply to a quantized kv cache, got ")
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
