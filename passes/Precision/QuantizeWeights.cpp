//===- QuantizeWeights.cpp - f32 linear weights → i8 / f8E4M3FN + scales --===//
//
// `accelc -precision=int8-weight|fp8`: every linear's f32 constant weight
// becomes a symmetric quantised weight with f32 scales, per output channel
// (default) or per tensor, computed from the weight itself (static):
//
//   scale[o] = max_i |w[o, i]| / qmax      (qmax 127 for i8, 448 for e4m3)
//   q[o, i]  = round_to_nearest_even(w[o, i] / scale[o])   (i8 clamped to ±127)
//
// Gated MLPs in their fused gate_up form are split into linear, gated_act,
// linear first, so that their two GEMMs (two thirds of a Llama's weights)
// are quantised as well. Biases stay f32. Activations stay f32 (weight-only
// quantisation: the CPU dequantises a block of rows at a time inside the
// GEMM). The lm head and the embedding table are left for
// accel-narrow-weights (bf16) by the pipeline; see docs/precision.md.
// A mixture of experts' stacked expert weights [E, R, C] are quantised per
// expert and row (scales [E, R], whatever the granularity); its router and
// shared expert stay float.
//
//===----------------------------------------------------------------------===//
#include "PrecisionUtils.h"

#include "accel/Weights/Weights.h"

#include "accel/dialects/Onnx/OnnxDialect.h"
#include "accel/dialects/Transformer/TransformerOps.h"
#include "accel/passes/Passes.h"
#include "core/DType.h"
#include "mlir/IR/Builders.h"

#include <cmath>

namespace accel {
#define GEN_PASS_DEF_QUANTIZEWEIGHTS
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::precision;
namespace tf = accel::transformer;

namespace {

/// max |w| of each of `n` rows of `cols` values at `w`, into `out`.
void rowAbsMax(const float *w, int64_t n, int64_t cols, float *out) {
  for (int64_t r = 0; r < n; ++r) {
    float m = 0.0f;
    for (int64_t i = 0; i < cols; ++i)
      m = std::max(m, std::fabs(w[r * cols + i]));
    out[r] = m;
  }
}

/// The quantised weight of `old` (f32, rows of `cols` values as the weights
/// library reads them: `rowsPerItem` flat rows per item), computed when the
/// plan writer reads it: flat row k is rounded after dividing by
/// scales[perRow ? k : 0], to i8 (±127) or e4m3 (saturating).
ElementsAttr quantisedRows(RankedTensorType qType, ElementsAttr old, bool i8,
                           std::vector<float> scales, int64_t rowsPerItem, int64_t cols,
                           bool perRow) {
  return precision::mapWeightRows(
      qType, old, i8 ? ".i8" : ".f8",
      [scales = std::move(scales), rowsPerItem, cols, i8, perRow](int64_t b, int64_t e,
                                                                  const char *in, char *out) {
        const auto *w = reinterpret_cast<const float *>(in);
        for (int64_t r = 0; r < (e - b) * rowsPerItem; ++r) {
          const float scale = scales[perRow ? size_t(b * rowsPerItem + r) : 0];
          for (int64_t i = 0; i < cols; ++i) {
            const float v = w[r * cols + i] / scale;
            out[r * cols + i] =
                i8 ? char(int8_t(std::max(-127.0f, std::min(127.0f, std::nearbyint(v)))))
                   : char(rt::f32ToF8E4M3FN(v, /*saturate=*/true));
          }
        }
      });
}

struct QuantizeWeightsPass : accel::impl::QuantizeWeightsBase<QuantizeWeightsPass> {
  using QuantizeWeightsBase::QuantizeWeightsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    if (dtype == "i4") {
      if (granularity != "per_group") {
        func.emitError() << "accel-quantize-weights: dtype i4 needs granularity per_group, not '"
                         << granularity << "'";
        return signalPassFailure();
      }
      if (groupSize < 1) {
        func.emitError() << "accel-quantize-weights: group-size must be at least 1, got "
                         << std::to_string(int64_t(groupSize));
        return signalPassFailure();
      }
      return quantizeInt4(func);
    }
    const bool i8 = dtype == "i8";
    if (!i8 && dtype != "f8E4M3FN") {
      func.emitError() << "accel-quantize-weights: dtype must be i8, f8E4M3FN or i4, not '"
                       << dtype << "'";
      return signalPassFailure();
    }
    const bool perChannel = granularity == "per_channel";
    if (!perChannel && granularity != "per_tensor") {
      func.emitError() << "accel-quantize-weights: granularity must be per_channel or "
                          "per_tensor, not '"
                       << granularity << "'";
      return signalPassFailure();
    }
    // The experts' weights, stacked [E, rows, cols]: per expert and row
    // (whatever the granularity), weight-only.
    Type qElemMoe = i8 ? Type(IntegerType::get(ctx, 8)) : Type(Float8E4M3FNType::get(ctx));
    const float qmaxMoe = i8 ? 127.0f : 448.0f;
    SmallVector<tf::MoeOp> moes;
    func.walk([&](tf::MoeOp m) { moes.push_back(m); });
    for (tf::MoeOp m : moes)
      if (m.getX().getType().getElementType().isF32())
        quantizeExperts(m, qElemMoe, qmaxMoe, i8);
    splitGatedMlps(func);

    WeightSelection which;
    which.gatedMlp = which.lmHead = which.embedding = false;
    DenseMap<void *, unsigned> holders = countBlobHolders(func);
    auto weights = selectF32Weights(func, which);
    Type qElem = i8 ? Type(IntegerType::get(ctx, 8)) : Type(Float8E4M3FNType::get(ctx));
    const float qmax = i8 ? 127.0f : 448.0f;
    auto gran = tf::QuantGranularityAttr::get(
        ctx, perChannel ? tf::QuantGranularity::PerChannel : tf::QuantGranularity::PerTensor);
    for (auto &[c, uses] : weights) {
      ElementsAttr old = c.getValueAttr();
      auto type = cast<RankedTensorType>(old.getType());
      const int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);

      // Scales first (they are needed to quantise): max |w| of each row, the
      // weight read a chunk of rows at a time.
      std::vector<float> scales(size_t(perChannel ? rows : 1), 1.0f);
      std::vector<float> absmax(size_t(rows), 0.0f);
      const bool src = forEachF32Rows(old, [&](int64_t b, int64_t e, const float *s) {
        rowAbsMax(s, e - b, cols, &absmax[size_t(b)]);
      });
      if (src) {
        if (perChannel) {
          for (int64_t r = 0; r < rows; ++r)
            scales[size_t(r)] = absmax[size_t(r)] > 0.0f ? absmax[size_t(r)] / qmax : 1.0f;
        } else {
          float m = 0.0f;
          for (float a : absmax)
            m = std::max(m, a);
          scales[0] = m > 0.0f ? m / qmax : 1.0f;
        }
      }
      auto scaleType = perChannel ? RankedTensorType::get({rows}, b32(ctx))
                                  : RankedTensorType::get({}, b32(ctx));
      // The scales are small: inline unless the weight is an elided blob.
      ElementsAttr scaleValue =
          src ? ElementsAttr(DenseElementsAttr::get(scaleType, ArrayRef<float>(scales)))
              : makeElements(scaleType, old, ".scale", [](MutableArrayRef<char>) {});
      auto qType = RankedTensorType::get(type.getShape(), qElem);
      // The quantised values: computed row by row when the plan writer reads
      // them (accel/Weights/Weights.h).
      ElementsAttr qValue = quantisedRows(qType, old, i8, scales, 1, cols, perChannel);

      Value q = createConstant(c, c.getLoc(), qValue);
      Value scale = createConstant(c, c.getLoc(), scaleValue);
      for (OpOperand *use : uses) {
        auto l = cast<tf::LinearOp>(use->getOwner());
        OpBuilder b(l);
        // The activation epilogue, if any, stays (weight-only quantisation).
        auto ql = tf::LinearOp::create(b, l.getLoc(), l.getType(), l.getX(), q, l.getBias(),
                                       scale, Value(), Value(), gran, nullptr,
                                       l.getActivationAttr());
        // accel-calibrate-activations' statistics travel on (w8a8).
        ql->setDiscardableAttrs(l->getDiscardableAttrDictionary());
        l.getResult().replaceAllUsesWith(ql.getResult());
        l.erase();
      }
      if (c.getResult().use_empty()) {
        if (!weights::isLazy(qValue)) // a lazy one reads it later
          releaseBlob(old, holders);
        c.erase();
      }
    }
  }

  /// -precision=int4-weight: per-group symmetric i4 (±7), one scale per
  /// output feature and group of groupSize input features.
  void quantizeInt4(func::FuncOp func) {
    MLIRContext *ctx = &getContext();
    splitGatedMlps(func);
    WeightSelection which;
    which.gatedMlp = which.lmHead = which.embedding = false;
    DenseMap<void *, unsigned> holders = countBlobHolders(func);
    auto weights = selectF32Weights(func, which);
    for (auto &[c, uses] : weights) {
      ElementsAttr old = c.getValueAttr();
      auto type = cast<RankedTensorType>(old.getType());
      const int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
      const int64_t g = cols % groupSize == 0 ? int64_t(groupSize) : cols;
      const int64_t groups = cols / g;
      std::vector<float> scales(size_t(rows * groups), 1.0f);
      const bool src = forEachF32Rows(old, [&](int64_t b, int64_t e, const float *w) {
        for (int64_t r = b; r < e; ++r)
          for (int64_t k = 0; k < groups; ++k) {
            float m = 0.0f;
            const float *x = w + (r - b) * cols + k * g;
            for (int64_t i = 0; i < g; ++i)
              m = std::max(m, std::fabs(x[i]));
            scales[size_t(r * groups + k)] = m > 0.0f ? m / 7.0f : 1.0f;
          }
      });
      const bool perGroup = groups > 1;
      auto scaleType = perGroup ? RankedTensorType::get({rows, groups}, b32(ctx))
                                : RankedTensorType::get({rows}, b32(ctx));
      ElementsAttr scaleValue =
          src ? ElementsAttr(DenseElementsAttr::get(scaleType, ArrayRef<float>(scales)))
              : makeElements(scaleType, old, ".scale", [](MutableArrayRef<char>) {});
      auto qType = RankedTensorType::get(type.getShape(), IntegerType::get(ctx, 4));
      ElementsAttr qValue = precision::mapWeightRows(
          qType, old, ".i4",
          [scales, cols, g, groups](int64_t b, int64_t e, const char *in, char *out) {
            const auto *w = reinterpret_cast<const float *>(in);
            for (int64_t r = 0; r < e - b; ++r)
              for (int64_t i = 0; i < cols; ++i) {
                const float s = scales[size_t((b + r) * groups + i / g)];
                const float v = std::nearbyint(w[r * cols + i] / s);
                out[r * cols + i] = char(int8_t(std::max(-7.0f, std::min(7.0f, v))));
              }
          });
      Value q = createConstant(c, c.getLoc(), qValue);
      Value scale = createConstant(c, c.getLoc(), scaleValue);
      auto gran = tf::QuantGranularityAttr::get(
          ctx, perGroup ? tf::QuantGranularity::PerGroup : tf::QuantGranularity::PerChannel);
      IntegerAttr size =
          perGroup ? IntegerAttr::get(IntegerType::get(ctx, 64), g) : IntegerAttr();
      for (OpOperand *use : uses) {
        auto l = cast<tf::LinearOp>(use->getOwner());
        OpBuilder b(l);
        auto ql = tf::LinearOp::create(b, l.getLoc(), l.getType(), l.getX(), q, l.getBias(),
                                       scale, Value(), Value(), gran, size,
                                       l.getActivationAttr());
        ql->setDiscardableAttrs(l->getDiscardableAttrDictionary());
        l.getResult().replaceAllUsesWith(ql.getResult());
        l.erase();
      }
      if (c.getResult().use_empty()) {
        if (!weights::isLazy(qValue))
          releaseBlob(old, holders);
        c.erase();
      }
    }
  }

  static Type b32(MLIRContext *ctx) { return Float32Type::get(ctx); }

  /// transformer.moe's f32 expert weights [E, R, C] → i8 / f8E4M3FN with f32
  /// scales [E, R]: scale[e, r] = max_c |w[e, r, c]| / qmax.
  static void quantizeExperts(tf::MoeOp m, Type qElem, float qmax, bool i8) {
    auto one = [&](OpOperand *operand, function_ref<void(Value)> setScale) {
      if (!operand)
        return;
      onnx::ConstantOp c = f32Constant(operand->get());
      if (!c)
        return;
      ElementsAttr old = c.getValueAttr();
      auto type = cast<RankedTensorType>(old.getType());
      const int64_t experts = type.getDimSize(0), rows = type.getDimSize(1),
                    cols = type.getDimSize(2);
      std::vector<float> scales(size_t(experts * rows), 0.0f);
      const bool src = forEachF32Rows(old, [&](int64_t b, int64_t e, const float *w) {
        rowAbsMax(w, (e - b) * rows, cols, &scales[size_t(b * rows)]);
      });
      for (float &sc : scales)
        sc = sc > 0.0f ? sc / qmax : 1.0f;
      MLIRContext *ctx = m.getContext();
      auto scaleType = RankedTensorType::get({experts, rows}, b32(ctx));
      ElementsAttr scaleValue =
          src ? ElementsAttr(DenseElementsAttr::get(scaleType, ArrayRef<float>(scales)))
              : makeElements(scaleType, old, ".scale", [](MutableArrayRef<char>) {});
      auto qType = RankedTensorType::get(type.getShape(), qElem);
      ElementsAttr qValue = quantisedRows(qType, old, i8, scales, rows, cols, /*perRow=*/true);
      operand->set(createConstant(m, c.getLoc(), qValue));
      setScale(createConstant(m, c.getLoc(), scaleValue));
      if (c.getResult().use_empty())
        c.erase();
    };
    auto first = [](MutableOperandRange r) -> OpOperand * { return r.empty() ? nullptr : &r[0]; };
    one(first(m.getGateUpMutable()), [&](Value s) { m.getGateUpScaleMutable().assign(s); });
    one(first(m.getGateMutable()), [&](Value s) { m.getGateScaleMutable().assign(s); });
    one(first(m.getUpMutable()), [&](Value s) { m.getUpScaleMutable().assign(s); });
    one(&m.getDownMutable(), [&](Value s) { m.getDownScaleMutable().assign(s); });
  }
};

} // namespace
