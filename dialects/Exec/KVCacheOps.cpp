//===- KVCacheOps.cpp - exec.kv_pool and exec.kv_write --------------------===//
#include "ExecVerify.h"

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
  return success();
}

//===----------------------------------------------------------------------===//
// KVWriteOp
//===----------------------------------------------------------------------===//

LogicalResult KVWriteOp::verify() {
  ViewType k = viewType(getK());
  if (k.getRank() != 3 || k.isDynamicDim(1) || k.isDynamicDim(2))
    return emitOpError() << "k and v must be [tokens, kv_heads, head_dim] "
                            "with static kv_heads and head_dim, got "
                         << k;
  ScheduleOp schedule = enclosingSchedule(*this);
  Extent rows = getExtent(getK(), 0), slots = getExtent(getSlotMapping(), 0);
  if (!extentsAgree(rows, slots, schedule))
    return emitOpError() << "slot_mapping has " << slots.str()
                         << " entries but k has " << rows.str() << " rows";
  if (static_cast<bool>(getKScale()) != static_cast<bool>(getVScale()))
    return emitOpError("kv_scales come as a pair (k, v)");
  return success();
}

LogicalResult KVWriteOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto pool = lookupSymbol<KVPoolOp>(*this, symbolTable, getPoolAttr(),
                                     "an exec.kv_pool");
  if (!pool)
    return failure();
  if (getLayer() < 0 || getLayer() >= pool.getLayers())
    return emitOpError() << "layer " << getLayer() << " is out of range for "
                         << "kv pool " << getPoolAttr() << " of "
                         << pool.getLayers() << " layers";
  ViewType k = viewType(getK());
  if (k.getDimSize(1) != pool.getKvHeads())
    return emitOpError() << "k has " << k.getDimSize(1)
                         << " kv heads but kv pool " << getPoolAttr()
                         << " has " << pool.getKvHeads();
  if (k.getDimSize(2) != pool.getHeadDim())
    return emitOpError() << "k has head_dim " << k.getDimSize(2)
                         << " but kv pool " << getPoolAttr() << " has "
                         << pool.getHeadDim();
  Type from = k.getElementType(), to = pool.getDtype();
  bool quantises = pool.isFP8() && isWideFloatType(from);
  if (from != to && !quantises)
    return emitOpError() << "cannot write " << from << " keys and values "
                         << "into kv pool " << getPoolAttr() << " of " << to;
  if (quantises && !getKScale())
    return emitOpError() << "writing " << from << " into the FP8 kv pool "
                         << getPoolAttr() << " needs kv_scales";
  if (!quantises && getKScale())
    return emitOpError("kv_scales are only for quantising into an FP8 pool");
  return success();
}
