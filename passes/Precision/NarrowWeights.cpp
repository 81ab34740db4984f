//===- NarrowWeights.cpp - f32 GEMM/embedding weights → bf16 or f16 -------===//
//
// `accelc -precision=bf16|fp16`: the weights that dominate a model's size
// (every GEMM's and the embedding table) are stored in half the bytes,
// rounded to nearest even; everything numerically sensitive (norm weights,
// biases, rotary tables, the residual stream, statistics) stays f32. See
// docs/precision.md for the policy table.
//
//===----------------------------------------------------------------------===//
#include "PrecisionUtils.h"

#include "accel/dialects/Onnx/OnnxDialect.h"
#include "accel/dialects/Transformer/TransformerOps.h"
#include "accel/passes/Passes.h"
#include "core/DType.h"

#include <atomic>
#include <cmath>

namespace accel {
#define GEN_PASS_DEF_NARROWWEIGHTS
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::precision;

namespace {

struct NarrowWeightsPass : accel::impl::NarrowWeightsBase<NarrowWeightsPass> {
  using NarrowWeightsBase::NarrowWeightsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    Type target;
    if (dtype == "bf16")
      target = BFloat16Type::get(ctx);
    else if (dtype == "f16")
      target = Float16Type::get(ctx);
    else {
      func.emitError() << "accel-narrow-weights: dtype must be bf16 or f16, not '" << dtype
                       << "'";
      return signalPassFailure();
    }
    const bool bf16 = target.isBF16();
    DenseMap<void *, unsigned> holders = countBlobHolders(func);
    auto weights = selectF32Weights(func, WeightSelection());
    for (auto &[c, uses] : weights) {
      ElementsAttr old = c.getValueAttr();
      auto type = cast<RankedTensorType>(old.getType());
      auto narrowType = RankedTensorType::get(type.getShape(), target);
      const int64_t perRow = type.getRank() == 0 ? 1 : type.getNumElements() / std::max<int64_t>(type.getDimSize(0), 1);
      // f16 overflows are counted now (one streamed read), so that the
      // warning names the weight; the values are made when the plan writer
      // reads them (a lazy weight over the f32 one).
      std::atomic<int64_t> overflow{0};
      if (!bf16)
        forEachF32Rows(old, [&](int64_t b, int64_t e, const float *s) {
          int64_t n = 0;
          for (int64_t i = 0, m = (e - b) * perRow; i < m; ++i)
            n += (rt::f32ToF16(s[i]) & 0x7FFF) == 0x7C00 && std::isfinite(s[i]);
          overflow += n;
        });
      ElementsAttr value = mapWeightRows(
          narrowType, old, bf16 ? ".bf16" : ".f16",
          [bf16, perRow](int64_t b, int64_t e, const char *in, char *out) {
            const auto *s = reinterpret_cast<const float *>(in);
            auto *dst = reinterpret_cast<uint16_t *>(out);
            const int64_t n = (e - b) * perRow;
            if (bf16)
              for (int64_t i = 0; i < n; ++i)
                dst[i] = rt::f32ToBf16(s[i]);
            else
              for (int64_t i = 0; i < n; ++i)
                dst[i] = rt::f32ToF16(s[i]);
          });
      if (overflow > 0)
        c.emitWarning() << overflow.load() << " weight values beyond the f16 range (65504) became "
                        << "infinite; -precision=bf16 keeps f32's range";
      replaceWeight(c, uses, value, holders);
    }
  }
};

} // namespace
