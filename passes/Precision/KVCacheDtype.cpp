//===- KVCacheDtype.cpp - the paged KV cache stored as fp8 -----------------===//
//
// `accelc -kv-cache-dtype=fp8`: the function's !transformer.kv_cache argument
// gets f8E4M3FN elements and every transformer.attention static per-layer
// K/V scales (stored = value / scale; vLLM's default of 1.0 unless given),
// or, with calibration tokens (`accelc -calibration`), per-KV-head scales
// from the largest |k| and |v| each head produced on them. Attention still
// computes in f32 on the CPU, reading the cache through the scales
// (runtime/cpu/transformer/PagedAttention.cpp).
//
//===----------------------------------------------------------------------===//
#include "PrecisionUtils.h"

#include "accel/dialects/Transformer/TransformerOps.h"
#include "accel/passes/Passes.h"
#include "core/Tensor.h"

#include <cmath>
#include <vector>

namespace accel {
#define GEN_PASS_DEF_KVCACHEDTYPE
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::precision;
namespace tf = accel::transformer;

namespace {

/// The largest finite f8E4M3FN value: a calibrated scale maps the largest
/// |value| a head produced onto it.
constexpr double kE4M3Max = 448.0;

/// Per attention op, max |k| and max |v| per KV head over the calibration
/// tokens (the evaluator's attention inputs 1 and 2, [tokens, kv_heads,
/// head_dim]).
struct HeadAbsMax {
  std::vector<double> k, v;
};

LogicalResult calibrateHeads(func::FuncOp func, StringRef tokens,
                             llvm::DenseMap<Operation *, HeadAbsMax> &out) {
  func.walk([&](tf::AttentionOp op) {
    const size_t heads = size_t(op.getNumKvHeads());
    out[op] = HeadAbsMax{std::vector<double>(heads, 0.0), std::vector<double>(heads, 0.0)};
  });
  auto observe = [&](Operation *op, ArrayRef<const rt::Tensor *> inputs) {
    auto it = out.find(op);
    if (it == out.end() || inputs.size() < 3)
      return;
    for (int which = 1; which <= 2; ++which) {
      const rt::Tensor *t = inputs[size_t(which)];
      std::vector<double> &m = which == 1 ? it->second.k : it->second.v;
      if (!t || !t->defined() || t->rank() != 3 || t->dim(1) != int64_t(m.size()))
        continue;
      const rt::Tensor f = t->dtype() == rt::DType::kF32 ? *t : t->toF32();
      const float *p = f.data<float>();
      const int64_t tokensN = f.dim(0), heads = f.dim(1), d = f.dim(2);
      for (int64_t i = 0; i < tokensN; ++i)
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t c = 0; c < d; ++c)
            m[size_t(h)] = std::max(m[size_t(h)], double(std::fabs(p[(i * heads + h) * d + c])));
    }
  };
  return runCalibration(func, "accel-kv-cache-dtype", tokens, observe);
}

DenseF64ArrayAttr headScales(MLIRContext *ctx, const std::vector<double> &absmax) {
  std::vector<double> s(absmax.size());
  for (size_t h = 0; h < s.size(); ++h)
    s[h] = absmax[h] > 0.0 && std::isfinite(absmax[h]) ? absmax[h] / kE4M3Max : 1.0;
  return DenseF64ArrayAttr::get(ctx, s);
}

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
    // Calibrate on the float cache, before the function changes type.
    llvm::DenseMap<Operation *, HeadAbsMax> absmax;
    if (!tokens.empty() && failed(calibrateHeads(func, tokens, absmax)))
      return signalPassFailure();
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
      auto it = absmax.find(op);
      if (it == absmax.end()) {
        op.setKScaleAttr(ks);
        op.setVScaleAttr(vs);
        return;
      }
      op.setKHeadScalesAttr(headScales(ctx, it->second.k));
      op.setVHeadScalesAttr(headScales(ctx, it->second.v));
    });
  }
};

} // namespace
