//===- OnnxAttention.cpp - attention and rotary verifiers -----------------===//
#include "OnnxVerifyUtils.h"
#include "accel/dialects/Onnx/OnnxOps.h"

using namespace mlir;
using namespace accel::onnx;

/// `a` and `b` are given together or not at all.
static LogicalResult verifyPair(Operation *op, Value a, Value b,
                                StringRef what) {
  if (static_cast<bool>(a) == static_cast<bool>(b))
    return success();
  return op->emitOpError() << what << " must be both present or both absent";
}

/// A head-count attribute, when present, is positive.
static LogicalResult verifyHeads(Operation *op, StringRef name,
                                 std::optional<uint64_t> v) {
  if (!v || asSigned(*v) > 0)
    return success();
  return op->emitOpError("attribute '")
         << name << "' must be > 0, got " << asSigned(*v);
}

/// The query heads are a multiple of the key/value heads.
static LogicalResult verifyGroups(Operation *op, StringRef qName, int64_t q,
                                  StringRef kvName, int64_t kv) {
  if (ShapedType::isDynamic(q) || ShapedType::isDynamic(kv) || q % kv == 0)
    return success();
  return op->emitOpError() << qName << " (" << q << ") must be a multiple of "
                           << kvName << " (" << kv << ")";
}

/// `hidden` (a static dim) splits into `heads` heads; returns the head size
/// or kDynamic.
static FailureOr<int64_t> headSize(Operation *op, StringRef what,
                                   int64_t hidden, StringRef headsName,
                                   int64_t heads) {
  if (ShapedType::isDynamic(hidden))
    return ShapedType::kDynamic;
  if (hidden % heads != 0)
    return op->emitOpError("the hidden size of ")
           << what << " (" << hidden << ") is not a multiple of " << headsName
           << " (" << heads << ")";
  return hidden / heads;
}

static int64_t dimOr(std::optional<ArrayRef<int64_t>> shape, int64_t i) {
  if (!shape)
    return ShapedType::kDynamic;
  return (*shape)[i < 0 ? shape->size() + i : i];
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  Operation *op = *this;
  if (failed(verifyFlag(op, "is_causal", asSigned(getIsCausal()))))
    return failure();
  int64_t mode = asSigned(getQkMatmulOutputMode());
  if (mode < 0 || mode > 3)
    return emitOpError("attribute 'qk_matmul_output_mode' must be in [0, 3], "
                       "got ")
           << mode;
  if (failed(verifyHeads(op, "q_num_heads", getQNumHeads())) ||
      failed(verifyHeads(op, "kv_num_heads", getKvNumHeads())))
    return failure();
  if (getQNumHeads() && getKvNumHeads() &&
      failed(verifyGroups(op, "attribute 'q_num_heads'",
                          asSigned(*getQNumHeads()), "'kv_num_heads'",
                          asSigned(*getKvNumHeads()))))
    return failure();
  if (failed(verifyPair(op, getPastKey(), getPastValue(),
                        "operands 'past_key' and 'past_value'")) ||
      failed(verifyPair(op, getPresentKey(), getPresentValue(),
                        "results 'present_key' and 'present_value'")))
    return failure();
  if (failed(verifyRank(op, getQ(), "operand 'Q'", {3, 4})) ||
      failed(verifyRank(op, getK(), "operand 'K'", {3, 4})) ||
      failed(verifyRank(op, getV(), "operand 'V'", {3, 4})))
    return failure();
  for (auto [cache, name] : {std::pair{getPastKey(), "operand 'past_key'"},
                             {getPastValue(), "operand 'past_value'"}})
    if (cache && failed(verifyRank(op, cache, name, {4})))
      return failure();
  if (failed(
          verifySameElementType(op, getQ(), "operands 'Q'", getK(), "'K'")) ||
      failed(
          verifyElementType(op, getY(), "result 'Y'", elementTypeOf(getQ()))))
    return failure();
  if (Value mask = getAttnMask()) {
    Type m = elementTypeOf(mask);
    if (!m.isInteger(1) && m != elementTypeOf(getQ()))
      return emitOpError("operand 'attn_mask' must be boolean or have the "
                         "element type of 'Q' (")
             << elementTypeOf(getQ()) << "), got " << m;
  }
  if (Value lens = getNonpadKvSeqlen())
    if (failed(verifyI64Vector(op, lens, "operand 'nonpad_kv_seqlen'")))
      return failure();

  std::optional<int64_t> rank;
  for (Value v : {getQ(), getK(), getV()}) {
    std::optional<int64_t> r = rankOf(v);
    if (r && rank && *r != *rank)
      return emitOpError("operands 'Q', 'K' and 'V' must all be 3-D or all "
                         "be 4-D");
    if (r)
      rank = r;
  }
  if (!rank)
    return success();
  if (failed(verifyRank(op, getY(), "result 'Y'", {*rank})))
    return failure();
  std::optional<ArrayRef<int64_t>> q = shapeOf(getQ()), k = shapeOf(getK()),
                                   v = shapeOf(getV());
  // The sequence dim is 2 in [batch, heads, seq, head] and 1 in
  // [batch, seq, hidden].
  int64_t seqDim = *rank == 4 ? 2 : 1;
  if (!dimsAgree(dimOr(k, seqDim), dimOr(v, seqDim)))
    return emitOpError("operands 'K' and 'V' have different sequence lengths ")
           << dimOr(k, seqDim) << " and " << dimOr(v, seqDim);

  if (*rank == 3) {
    if (!getQNumHeads() || !getKvNumHeads())
      return emitOpError("3-D inputs require the 'q_num_heads' and "
                         "'kv_num_heads' attributes");
    int64_t qHeads = asSigned(*getQNumHeads());
    int64_t kvHeads = asSigned(*getKvNumHeads());
    FailureOr<int64_t> qHead =
        headSize(op, "'Q'", dimOr(q, -1), "'q_num_heads'", qHeads);
    FailureOr<int64_t> kHead =
        headSize(op, "'K'", dimOr(k, -1), "'kv_num_heads'", kvHeads);
    if (failed(qHead) || failed(kHead) ||
        failed(headSize(op, "'V'", dimOr(v, -1), "'kv_num_heads'", kvHeads)))
      return failure();
    if (!dimsAgree(*qHead, *kHead))
      return emitOpError("operands 'Q' and 'K' have different head sizes ")
             << *qHead << " and " << *kHead;
    return success();
  }

  int64_t qHeads = dimOr(q, 1), kHeads = dimOr(k, 1), vHeads = dimOr(v, 1);
  if (getQNumHeads() && !dimsAgree(qHeads, asSigned(*getQNumHeads())))
    return emitOpError("operand 'Q' has ")
           << qHeads << " heads, but 'q_num_heads' is "
           << asSigned(*getQNumHeads());
  if (getKvNumHeads() && !dimsAgree(kHeads, asSigned(*getKvNumHeads())))
    return emitOpError("operand 'K' has ")
           << kHeads << " heads, but 'kv_num_heads' is "
           << asSigned(*getKvNumHeads());
  if (!dimsAgree(kHeads, vHeads))
    return emitOpError("operands 'K' and 'V' have different numbers of heads ")
           << kHeads << " and " << vHeads;
  if (failed(
          verifyGroups(op, "the heads of 'Q'", qHeads, "those of 'K'", kHeads)))
    return failure();
  if (!dimsAgree(dimOr(q, -1), dimOr(k, -1)))
    return emitOpError("operands 'Q' and 'K' have different head sizes ")
           << dimOr(q, -1) << " and " << dimOr(k, -1);
  return success();
}

//===----------------------------------------------------------------------===//
// RotaryEmbedding
//===----------------------------------------------------------------------===//

/// The rotary dim (`rotaryDim`, or the whole head when 0) is even, fits the
/// head, and is twice the caches' last dim.
static LogicalResult verifyRotaryDim(Operation *op, int64_t rotaryDim,
                                     int64_t head, Value cos) {
  if (rotaryDim < 0 || rotaryDim % 2 != 0)
    return op->emitOpError(
               "attribute 'rotary_embedding_dim' must be even and >= 0, got ")
           << rotaryDim;
  if (!ShapedType::isDynamic(head) && rotaryDim > head)
    return op->emitOpError("attribute 'rotary_embedding_dim' (")
           << rotaryDim << ") exceeds the head size (" << head << ")";
  int64_t dim = rotaryDim ? rotaryDim : head;
  int64_t half = dimOr(shapeOf(cos), -1);
  if (ShapedType::isDynamic(dim) || ShapedType::isDynamic(half) ||
      half * 2 == dim)
    return success();
  return op->emitOpError("the last dim of 'cos_cache' (")
         << half << ") must be half the rotary dim (" << dim << ")";
}

/// cos and sin caches: one type, X's element type.
static LogicalResult verifyCaches(Operation *op, Value x, StringRef xName,
                                  Value cos, Value sin) {
  if (failed(verifySameType(op, sin, "operand 'sin_cache'", cos,
                            "operand 'cos_cache'")))
    return failure();
  return verifySameElementType(op, x, xName, cos, "'cos_cache'");
}

LogicalResult RotaryEmbeddingOp::verify() {
  Operation *op = *this;
  if (failed(verifyFlag(op, "interleaved", asSigned(getInterleaved()))) ||
      failed(verifyHeads(op, "num_heads", getNumHeads())) ||
      failed(verifyRank(op, getX(), "operand 'X'", {3, 4})) ||
      failed(verifySameType(op, getY(), "result 'Y'", getX(), "operand 'X'")) ||
      failed(verifyCaches(op, getX(), "operands 'X'", getCosCache(),
                          getSinCache())))
    return failure();
  if (Value pos = getPositionIds()) {
    if (failed(verifyElementType(op, pos, "operand 'position_ids'",
                                 IntegerType::get(getContext(), 64))) ||
        failed(verifyRank(op, pos, "operand 'position_ids'", {2})))
      return failure();
  }
  int64_t cacheRank = getPositionIds() ? 2 : 3;
  if (std::optional<int64_t> r = rankOf(getCosCache()); r && *r != cacheRank)
    return emitOpError("operand 'cos_cache' must have rank ")
           << cacheRank
           << (getPositionIds() ? " when 'position_ids' is given"
                                : " when 'position_ids' is absent")
           << ", got " << *r;

  std::optional<ArrayRef<int64_t>> x = shapeOf(getX());
  if (!x)
    return success();
  int64_t head = x->back();
  if (x->size() == 3) {
    if (!getNumHeads())
      return emitOpError("3-D input requires the 'num_heads' attribute");
    FailureOr<int64_t> h =
        headSize(op, "'X'", x->back(), "'num_heads'", asSigned(*getNumHeads()));
    if (failed(h))
      return failure();
    head = *h;
  } else if (getNumHeads() && !dimsAgree((*x)[1], asSigned(*getNumHeads()))) {
    return emitOpError("operand 'X' has ")
           << (*x)[1] << " heads, but 'num_heads' is "
           << asSigned(*getNumHeads());
  }
  return verifyRotaryDim(op, asSigned(getRotaryEmbeddingDim()), head,
                         getCosCache());
}

//===----------------------------------------------------------------------===//
// ms_GroupQueryAttention
//===----------------------------------------------------------------------===//

LogicalResult MsGroupQueryAttentionOp::verify() {
  Operation *op = *this;
  int64_t heads = asSigned(getNumHeads()), kvHeads = asSigned(getKvNumHeads());
  if (failed(verifyHeads(op, "num_heads", getNumHeads())) ||
      failed(verifyHeads(op, "kv_num_heads", getKvNumHeads())) ||
      failed(verifyGroups(op, "attribute 'num_heads'", heads, "'kv_num_heads'",
                          kvHeads)) ||
      failed(verifyFlag(op, "do_rotary", asSigned(getDoRotary()))) ||
      failed(verifyFlag(op, "rotary_interleaved",
                        asSigned(getRotaryInterleaved()))))
    return failure();
  if (failed(
          verifyPair(op, getKey(), getValue(), "operands 'key' and 'value'")) ||
      failed(verifyPair(op, getPastKey(), getPastValue(),
                        "operands 'past_key' and 'past_value'")) ||
      failed(verifyPair(op, getCosCache(), getSinCache(),
                        "operands 'cos_cache' and 'sin_cache'")))
    return failure();
  if (getDoRotary() && !getCosCache())
    return emitOpError(
        "attribute 'do_rotary' = 1 requires 'cos_cache' and 'sin_cache'");
  Type i32 = IntegerType::get(getContext(), 32);
  if (failed(verifyRank(op, getQuery(), "operand 'query'", {3})) ||
      failed(
          verifyElementType(op, getSeqlensK(), "operand 'seqlens_k'", i32)) ||
      failed(verifyRank(op, getSeqlensK(), "operand 'seqlens_k'", {1})) ||
      failed(verifyElementType(op, getTotalSequenceLength(),
                               "operand 'total_sequence_length'", i32)) ||
      failed(verifyScalar(op, getTotalSequenceLength(),
                          "operand 'total_sequence_length'")) ||
      failed(verifyElementType(op, getOutput(), "result 'output'",
                               elementTypeOf(getQuery()))))
    return failure();
  for (auto [v, name, rank] :
       {std::tuple{getKey(), "operand 'key'", 3},
        {getValue(), "operand 'value'", 3},
        {getPastKey(), "operand 'past_key'", 4},
        {getPastValue(), "operand 'past_value'", 4},
        {getPresentKey(), "result 'present_key'", 4},
        {getPresentValue(), "result 'present_value'", 4}})
    if (v && failed(verifyRank(op, v, name, {rank})))
      return failure();
  if (getCosCache() && failed(verifyCaches(op, getQuery(), "operands 'query'",
                                           getCosCache(), getSinCache())))
    return failure();

  std::optional<ArrayRef<int64_t>> q = shapeOf(getQuery());
  if (!q)
    return success();
  int64_t hidden = q->back();
  FailureOr<int64_t> head = ShapedType::kDynamic;
  if (!getKey()) {
    // Packed QKV: [batch, seq, (num_heads + 2 * kv_num_heads) * head_size].
    head = headSize(op, "the packed QKV 'query'", hidden,
                    "num_heads + 2 * kv_num_heads", heads + 2 * kvHeads);
  } else {
    head = headSize(op, "'query'", hidden, "'num_heads'", heads);
    if (succeeded(head))
      if (std::optional<ArrayRef<int64_t>> k = shapeOf(getKey());
          k && !ShapedType::isDynamic(*head) &&
          !dimsAgree(k->back(), *head * kvHeads))
        return emitOpError("operand 'key' has hidden size ")
               << k->back()
               << ", expected kv_num_heads * head_size = " << *head * kvHeads;
  }
  if (failed(head))
    return failure();
  if (std::optional<ArrayRef<int64_t>> past =
          getPastKey() ? shapeOf(getPastKey()) : std::nullopt) {
    if (!dimsAgree((*past)[1], kvHeads))
      return emitOpError("operand 'past_key' has ")
             << (*past)[1] << " heads, expected 'kv_num_heads' = " << kvHeads;
    if (!dimsAgree((*past)[3], *head))
      return emitOpError("operand 'past_key' has head size ")
             << (*past)[3] << ", expected " << *head;
  }
  int64_t outHidden =
      ShapedType::isDynamic(*head) ? ShapedType::kDynamic : *head * heads;
  return verifyResultShape(op, getOutput(), {(*q)[0], (*q)[1], outHidden});
}

//===----------------------------------------------------------------------===//
// ms_RotaryEmbedding
//===----------------------------------------------------------------------===//

LogicalResult MsRotaryEmbeddingOp::verify() {
  Operation *op = *this;
  if (failed(verifyFlag(op, "interleaved", asSigned(getInterleaved()))) ||
      failed(verifyFlag(op, "is_packed_batching",
                        asSigned(getIsPackedBatching()))) ||
      failed(verifyRank(op, getInput(), "operand 'input'", {3, 4})) ||
      failed(verifySameType(op, getOutput(), "result 'output'", getInput(),
                            "operand 'input'")) ||
      failed(verifyElementType(op, getPositionIds(), "operand 'position_ids'",
                               IntegerType::get(getContext(), 64))) ||
      failed(
          verifyRank(op, getPositionIds(), "operand 'position_ids'", {1, 2})) ||
      failed(verifyRank(op, getCosCache(), "operand 'cos_cache'", {2})) ||
      failed(verifyCaches(op, getInput(), "operands 'input'", getCosCache(),
                          getSinCache())))
    return failure();
  int64_t numHeads = asSigned(getNumHeads());
  int64_t rotaryDim = asSigned(getRotaryEmbeddingDim());
  if (numHeads < 0)
    return emitOpError("attribute 'num_heads' must be >= 0, got ") << numHeads;
  if (rotaryDim > 0 && numHeads == 0)
    return emitOpError("attribute 'rotary_embedding_dim' requires 'num_heads'");
  std::optional<ArrayRef<int64_t>> x = shapeOf(getInput());
  if (!x)
    return success();
  int64_t head = ShapedType::kDynamic;
  if (x->size() == 4) {
    if (numHeads && !dimsAgree((*x)[1], numHeads))
      return emitOpError("operand 'input' has ")
             << (*x)[1] << " heads, but 'num_heads' is " << numHeads;
    head = x->back();
  } else if (numHeads) {
    FailureOr<int64_t> h =
        headSize(op, "'input'", x->back(), "'num_heads'", numHeads);
    if (failed(h))
      return failure();
    head = *h;
  } else {
    // Without num_heads onnxruntime takes the head size from the caches.
    return success();
  }
  return verifyRotaryDim(op, rotaryDim, head, getCosCache());
}
