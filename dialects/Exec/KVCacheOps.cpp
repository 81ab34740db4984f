//===- KVCacheOps.cpp - the KV pool and the steps that use it -------------===//
//
// exec.kv_pool, exec.kv_write, exec.qkv_rotary_kv_write, exec.attention.
//
//===----------------------------------------------------------------------===//
#include "ExecVerify.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace accel::exec;
using namespace accel::exec::detail;

//===----------------------------------------------------------------------===//
// KVPoolOp
//===----------------------------------------------------------------------===//

int64_t KVPoolOp::getBytesPerBlock() {
  return 2 * getBlockSize() * getKvHeads() * getHeadDim() *
         elementBytes(getDtype());
}

bool KVPoolOp::isFP8() { return isFP8Type(getDtype()); }

LogicalResult KVPoolOp::verify() {
  if (getLayers() < 1)
    return emitOpError() << "layers must be positive, got " << getLayers();
  if (getBlockSize() < 1 || !llvm::isPowerOf2_64(getBlockSize()))
    return emitOpError() << "block_size must be a power of two, got "
                         << getBlockSize();
  if (getKvHeads() < 1)
    return emitOpError() << "kv_heads must be positive, got " << getKvHeads();
  if (getHeadDim() < 1)
    return emitOpError() << "head_dim must be positive, got " << getHeadDim();
  Type dtype = getDtype();
  if (!isWideFloatType(dtype) && !isFP8Type(dtype))
    return emitOpError() << "a kv pool holds f32, f16, bf16, f8E4M3FN or "
                            "f8E5M2, got "
                         << dtype;
  if (std::optional<ArrayRef<int64_t>> stages = getStageLayers()) {
    int64_t sum = 0;
    for (int64_t n : *stages) {
      if (n < 1)
        return emitOpError() << "every pipeline stage holds at least one layer, got " << n;
      sum += n;
    }
    if (sum != getLayers())
      return emitOpError() << "the stages' layers sum to " << sum << ", not the pool's "
                           << getLayers();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

KVPoolOp accel::exec::detail::lookupPool(Operation *op, SymbolTableCollection &symbols,
                                         FlatSymbolRefAttr name, int64_t layer) {
  auto pool = lookupSymbol<KVPoolOp>(op, symbols, name, "an exec.kv_pool");
  if (!pool)
    return nullptr;
  if (layer < 0 || layer >= pool.getLayers()) {
    op->emitOpError() << "layer " << layer << " is out of range for kv pool " << name << " of "
                      << pool.getLayers() << " layers";
    return nullptr;
  }
  return pool;
}

LogicalResult accel::exec::detail::verifyKvScales(Operation *op, KVPoolOp pool,
                                                  std::optional<APFloat> kScale,
                                                  std::optional<APFloat> vScale,
                                                  std::optional<ArrayRef<double>> kHeads,
                                                  std::optional<ArrayRef<double>> vHeads) {
  if (kScale.has_value() != vScale.has_value())
    return op->emitOpError("k_scale and v_scale come as a pair");
  if (kHeads.has_value() != vHeads.has_value() ||
      (kHeads && kHeads->size() != vHeads->size()))
    return op->emitOpError("k_head_scales and v_head_scales come as a pair of equal length");
  bool scaled = kScale || kHeads;
  if (pool.isFP8() && !scaled)
    return op->emitOpError() << "the FP8 kv pool @" << pool.getSymName()
                             << " needs k and v scales";
  if (!pool.isFP8() && scaled)
    return op->emitOpError("k and v scales are only for an FP8 kv pool");
  // Per-head lists hold every tensor-parallel rank's KV heads, rank-major
  // (the module's accel.tp_size ranks; each rank reads its own part).
  int64_t ranks = 1;
  if (auto module = op->getParentOfType<ModuleOp>())
    if (auto tp = module->getAttrOfType<IntegerAttr>("accel.tp_size"))
      ranks = std::max<int64_t>(1, tp.getInt());
  if (kHeads && int64_t(kHeads->size()) != pool.getKvHeads() * ranks)
    return op->emitOpError() << "has " << kHeads->size() << " per-head scales but kv pool @"
                             << pool.getSymName() << " has " << pool.getKvHeads()
                             << " KV heads" << (ranks > 1 ? " on each of " : "")
                             << (ranks > 1 ? std::to_string(ranks) + " ranks" : "");
  return success();
}

/// k or v of a step: [tokens, kv_heads, head_dim] with the pool's head_dim.
static LogicalResult verifyHeads(Operation *op, Value v, StringRef name, KVPoolOp pool) {
  ViewType t = viewType(v);
  if (t.getRank() != 3 || t.isDynamicDim(1) || t.isDynamicDim(2))
    return op->emitOpError() << name << " must be [tokens, heads, head_dim] with static heads "
                                "and head_dim, got "
                             << t;
  if (pool && t.getDimSize(2) != pool.getHeadDim())
    return op->emitOpError() << name << " has head_dim " << t.getDimSize(2) << " but kv pool @"
                             << pool.getSymName() << " has " << pool.getHeadDim();
  return success();
}

/// A step writing or reading `from` elements through `pool`: the pool holds
/// that type, or it is FP8 and `from` a wide float (quantised on the way).
static LogicalResult verifyPoolDtype(Operation *op, Type from, StringRef what, KVPoolOp pool,
                                     FlatSymbolRefAttr name) {
  Type to = pool.getDtype();
  if (from != to && !(pool.isFP8() && isWideFloatType(from)))
    return op->emitOpError() << "cannot use " << from << " " << what << " with kv pool " << name
                             << " of " << to;
  return success();
}

//===----------------------------------------------------------------------===//
// KVWriteOp
//===----------------------------------------------------------------------===//

LogicalResult KVWriteOp::verify() { return verifyHeads(*this, getK(), "k", nullptr); }

LogicalResult KVWriteOp::verifySymbolUses(SymbolTableCollection &symbols) {
  KVPoolOp pool = lookupPool(*this, symbols, getPoolAttr(), getLayer());
  if (!pool)
    return failure();
  if (failed(verifyHeads(*this, getK(), "k", pool)))
    return failure();
  if (viewType(getK()).getDimSize(1) != pool.getKvHeads())
    return emitOpError() << "k has " << viewType(getK()).getDimSize(1)
                         << " heads but kv pool " << getPoolAttr() << " has "
                         << pool.getKvHeads();
  if (failed(verifyPoolDtype(*this, viewType(getK()).getElementType(), "keys and values", pool,
                             getPoolAttr())))
    return failure();
  return verifyKvScales(*this, pool, getKScale(), getVScale(), getKHeadScales(),
                        getVHeadScales());
}

//===----------------------------------------------------------------------===//
// QkvRotaryKvWriteOp
//===----------------------------------------------------------------------===//

LogicalResult QkvRotaryKvWriteOp::verify() {
  int64_t h = getNumHeads(), kvh = getNumKvHeads(), d = getHeadDim();
  if (h < 1 || kvh < 1 || d < 1)
    return emitOpError("num_heads, num_kv_heads and head_dim must be positive");
  if (failed(verifyHeads(*this, getQ(), "q", nullptr)))
    return failure();
  ViewType qkv = viewType(getQkv()), q = viewType(getQ());
  int64_t want = (h + 2 * kvh) * d;
  if (qkv.getRank() != 2 || qkv.isDynamicDim(1) || qkv.getDimSize(1) != want)
    return emitOpError() << "qkv must be [tokens, (num_heads + 2 * num_kv_heads) * head_dim] = "
                            "[tokens, "
                         << want << "], got " << qkv;
  if (!isWideFloatType(qkv.getElementType()))
    return emitOpError() << "qkv must be f32, f16 or bf16, got " << qkv;
  if (q.getDimSize(1) != h || q.getDimSize(2) != d || q.getElementType() != qkv.getElementType())
    return emitOpError() << "q must be [tokens, " << h << ", " << d << "] of "
                         << qkv.getElementType() << ", got " << q;
  if (failed(verifySameRows(*this, getQkv(), "qkv", getQ(), "q")))
    return failure();
  return verifyRotation(*this, getQkv(), "qkv", getPositions(), getCos(), getSin(), getRotaryDim(), d,
                        getTheta());
}

LogicalResult QkvRotaryKvWriteOp::verifySymbolUses(SymbolTableCollection &symbols) {
  KVPoolOp pool = lookupPool(*this, symbols, getPoolAttr(), getLayer());
  if (!pool)
    return failure();
  if (getHeadDim() != pool.getHeadDim())
    return emitOpError() << "head_dim " << getHeadDim() << " differs from kv pool "
                         << getPoolAttr() << "'s " << pool.getHeadDim();
  if (getNumKvHeads() != pool.getKvHeads())
    return emitOpError() << "num_kv_heads " << getNumKvHeads() << " differs from kv pool "
                         << getPoolAttr() << "'s " << pool.getKvHeads();
  if (failed(verifyPoolDtype(*this, viewType(getQkv()).getElementType(), "keys and values",
                             pool, getPoolAttr())))
    return failure();
  return verifyKvScales(*this, pool, getKScale(), getVScale(), getKHeadScales(),
                        getVHeadScales());
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  if (failed(verifyHeads(*this, getQ(), "q", nullptr)) ||
      failed(verifySameType(*this, getQ(), "q", getOut(), "out")))
    return failure();
  ViewType q = viewType(getQ());
  if (!isWideFloatType(q.getElementType()))
    return emitOpError() << "q must be f32, f16 or bf16, got " << q;
  if (getNumKvHeads() < 1 || q.getDimSize(1) % getNumKvHeads() != 0)
    return emitOpError() << "the " << q.getDimSize(1)
                         << " query heads must be a multiple of num_kv_heads ("
                         << getNumKvHeads() << ")";
  if (!(getScale().convertToDouble() > 0))
    return emitOpError("scale must be positive");
  if (getSlidingWindow() && *getSlidingWindow() < 1)
    return emitOpError("sliding_window must be positive");
  if (getSoftcap() && !(getSoftcap()->convertToDouble() > 0))
    return emitOpError("softcap must be positive");
  return success();
}

LogicalResult AttentionOp::verifySymbolUses(SymbolTableCollection &symbols) {
  KVPoolOp pool = lookupPool(*this, symbols, getPoolAttr(), getLayer());
  if (!pool)
    return failure();
  if (failed(verifyHeads(*this, getQ(), "q", pool)))
    return failure();
  if (getNumKvHeads() != pool.getKvHeads())
    return emitOpError() << "num_kv_heads " << getNumKvHeads() << " differs from kv pool "
                         << getPoolAttr() << "'s " << pool.getKvHeads();
  if (failed(verifyPoolDtype(*this, viewType(getQ()).getElementType(), "queries", pool,
                             getPoolAttr())))
    return failure();
  return verifyKvScales(*this, pool, getKScale(), getVScale(), getKHeadScales(),
                        getVHeadScales());
}
