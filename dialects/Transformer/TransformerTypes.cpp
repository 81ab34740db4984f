//===- TransformerTypes.cpp - !transformer.kv_cache and !transformer.batch ===//
#include "accel/dialects/Transformer/TransformerDialect.h"

#include "VerifyUtils.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace accel::transformer;

//===----------------------------------------------------------------------===//
// KVCacheType
//===----------------------------------------------------------------------===//

LogicalResult
KVCacheType::verify(function_ref<InFlightDiagnostic()> emitError,
                    int64_t layers, int64_t kvHeads, int64_t headDim,
                    int64_t blockSize, Type elementType) {
  if (layers <= 0)
    return emitError() << "kv_cache layers must be positive, got " << layers;
  if (kvHeads <= 0)
    return emitError() << "kv_cache kv_heads must be positive, got " << kvHeads;
  if (headDim <= 0)
    return emitError() << "kv_cache head_dim must be positive, got " << headDim;
  if (blockSize <= 0 || !llvm::isPowerOf2_64(blockSize))
    return emitError() << "kv_cache block_size must be a positive power of two, got "
                       << blockSize;
  if (!detail::isFloatElement(elementType) &&
      !detail::isFloat8Element(elementType) &&
      !elementType.isSignlessInteger(8))
    return emitError() << "kv_cache element type must be f32, f16, bf16, "
                          "f8E4M3FN, f8E5M2 or i8, got "
                       << elementType;
  return success();
}

bool KVCacheType::isQuantized() const {
  return !detail::isFloatElement(getElementType());
}
