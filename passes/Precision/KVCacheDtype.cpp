//===- KVCacheDtype.cpp - the paged KV cache stored as fp8 -----------------===//
//
// `accelc -kv-cache-dtype=fp8`: the function's !transformer.kv_cache argument
// gets f8E4M3FN elements and every transformer.attention static per-layer
// K/V scales (stored = value / scale; vLLM's default of 1.0 unless given).
// Attention still computes in f32 on the CPU, reading the cache through the
// scales (runtime/cpu/transformer/PagedAttention.cpp).
//
//===----------------------------------------------------------------------===//
#include "PrecisionUtils.h"

#include "accel/dialects/Transformer/TransformerOps.h"
#include "accel/passes/Passes.h"

namespace accel {
#define GEN_PASS_DEF_KVCACHEDTYPE
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
namespace tf = accel::transformer;

namespace {

struct KVCacheDtypePass : accel::impl::KVCacheDtypeBase<KVCacheDtypePass> {
  using KVCacheDtypeBase::KVCacheDtypeBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    Type elem;
    if (dtype == "f8E4M3FN")
      elem = Float8E4M3FNType::get(ctx);
    else {
      func.emitError() << "accel-kv-cache-dtype: dtype must be f8E4M3FN, not '" << dtype << "'";
      return signalPassFailure();
    }
    if (!(kScale > 0.0) || !(vScale > 0.0)) {
      func.emitError() << "accel-kv-cache-dtype: k-scale and v-scale must be positive";
      return signalPassFailure();
    }
    if (func.isExternal())
      return;
    Block &entry = func.getBody().front();
    bool changed = false;
    for (BlockArgument arg : entry.getArguments()) {
      auto cache = dyn_cast<tf::KVCacheType>(arg.getType());
      if (!cache || cache.getElementType() == elem)
        continue;
      if (cache.isQuantized()) {
        func.emitError() << "accel-kv-cache-dtype: the kv cache is " << cache.getElementType()
                         << " already";
        return signalPassFailure();
      }
      arg.setType(tf::KVCacheType::get(ctx, cache.getLayers(), cache.getKvHeads(),
                                       cache.getHeadDim(), cache.getBlockSize(), elem));
      changed = true;
    }
    if (!changed)
      return;
    func.setType(FunctionType::get(ctx, entry.getArgumentTypes(),
                                   func.getFunctionType().getResults()));
    FloatAttr ks = FloatAttr::get(Float64Type::get(ctx), kScale);
    FloatAttr vs = FloatAttr::get(Float64Type::get(ctx), vScale);
    func.walk([&](tf::AttentionOp op) {
      op.setKScaleAttr(ks);
      op.setVScaleAttr(vs);
    });
  }
};

} // namespace
