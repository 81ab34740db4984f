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

/// One group's int4 quantisation: value = (code - zeroPoint) * scale, codes
/// -8..7 with a zero point, -7..7 (zero point 0) without.
struct Int4Group {
  float scale = 1.0f;
  int8_t zeroPoint = 0;
};

/// round(w / scale) + zeroPoint clamped to [lo, 7], as a float: w times the
/// inverse scale, rounded half to even by adding and taking away 1.5 * 2^23
/// (|w / scale| stays below 16 here), so that the search's loop vectorises.
/// The search and the written codes both use it.
inline float int4CodeF(float w, float inv, float zp, float lo) {
  float v = (w * inv + 12582912.0f) - 12582912.0f;
  v += zp;
  return v < lo ? lo : (v > 7.0f ? 7.0f : v);
}

int8_t int4Code(float w, const Int4Group &q, bool asym) {
  return int8_t(int4CodeF(w, 1.0f / q.scale, float(q.zeroPoint), asym ? -8.0f : -7.0f));
}

/// The scale (and zero point, `asym`) of the `n` values at `w`: from their
/// extremes (and 0), or (`search`) from the shrinking of them, 1.0 down to
/// 0.70 in steps of 0.02, whose rounded values are closest in squared error
/// (the first of equals, so 1.0 when nothing is gained).
Int4Group fitInt4Group(const float *w, int64_t n, bool asym, bool search) {
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, w[i]);
    hi = std::max(hi, w[i]);
  }
  auto fit = [&](float shrink) {
    Int4Group q;
    if (asym) {
      const float a = lo * shrink, b = hi * shrink;
      if (b - a <= 0.0f)
        return q; // all zero
      q.scale = (b - a) / 15.0f;
      q.zeroPoint = int8_t(std::max(-8.0f, std::min(7.0f, std::nearbyint(-a / q.scale) - 8.0f)));
    } else {
      const float m = std::max(-lo, hi) * shrink;
      q.scale = m > 0.0f ? m / 7.0f : 1.0f;
    }
    return q;
  };
  auto error = [&](const Int4Group &q) {
    const float inv = 1.0f / q.scale, s = q.scale, zp = float(q.zeroPoint);
    const float low = asym ? -8.0f : -7.0f;
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int j = 0; j < 8; ++j) {
        const float d = w[i + j] - (int4CodeF(w[i + j], inv, zp, low) - zp) * s;
        acc[j] += d * d;
      }
    double e = 0.0;
    for (; i < n; ++i) {
      const float d = w[i] - (int4CodeF(w[i], inv, zp, low) - zp) * s;
      e += double(d) * d;
    }
    for (float a : acc)
      e += a;
    return e;
  };
  Int4Group best = fit(1.0f);
  if (!search)
    return best;
  double bestErr = error(best);
  for (int step = 1; step <= 15; ++step) {
    const Int4Group q = fit(1.0f - 0.02f * float(step));
    const double e = error(q);
    if (e < bestErr) {
      bestErr = e;
      best = q;
    }
  }
  return best;
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

  /// -precision=int4-weight: per-group i4, one scale per output feature
  /// and group of groupSize input features: symmetric (±7), or with an i4
  /// zero point per group (`zero-points`: -8..7 over the group's range).
  /// `search-scales` picks each group's range from 16 shrinkings of its
  /// extremes (1.0, 0.98, .., 0.70) by the squared error of the rounded
  /// group (Int4Group); otherwise the extremes themselves.
  void quantizeInt4(func::FuncOp func) {
    MLIRContext *ctx = &getContext();
    splitGatedMlps(func);
    WeightSelection which;
    which.gatedMlp = which.lmHead = which.embedding = false;
    DenseMap<void *, unsigned> holders = countBlobHolders(func);
    auto weights = selectF32Weights(func, which);
    const bool asym = zeroPoints, search = searchScales;
    for (auto &[c, uses] : weights) {
      ElementsAttr old = c.getValueAttr();
      auto type = cast<RankedTensorType>(old.getType());
      const int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
      const int64_t g = cols % groupSize == 0 ? int64_t(groupSize) : cols;
      const int64_t groups = cols / g;
      std::vector<float> scales(size_t(rows * groups), 1.0f);
      std::vector<int8_t> zps(size_t(rows * groups), 0);
      const bool src = forEachF32Rows(old, [&](int64_t b, int64_t e, const float *w) {
        for (int64_t r = b; r < e; ++r)
          for (int64_t k = 0; k < groups; ++k) {
            const Int4Group q = fitInt4Group(w + (r - b) * cols + k * g, g, asym, search);
            scales[size_t(r * groups + k)] = q.scale;
            zps[size_t(r * groups + k)] = q.zeroPoint;
          }
      });
      const bool perGroup = groups > 1;
      auto scaleType = perGroup ? RankedTensorType::get({rows, groups}, b32(ctx))
                                : RankedTensorType::get({rows}, b32(ctx));
      ElementsAttr scaleValue =
          src ? ElementsAttr(DenseElementsAttr::get(scaleType, ArrayRef<float>(scales)))
              : makeElements(scaleType, old, ".scale", [](MutableArrayRef<char>) {});
      auto i4 = IntegerType::get(ctx, 4);
      auto qType = RankedTensorType::get(type.getShape(), i4);
      ElementsAttr qValue = precision::mapWeightRows(
          qType, old, ".i4",
          [scales, zps, cols, g, groups, asym](int64_t b, int64_t e, const char *in, char *out) {
            const auto *w = reinterpret_cast<const float *>(in);
            for (int64_t r = 0; r < e - b; ++r)
              for (int64_t i = 0; i < cols; ++i) {
                const size_t at = size_t((b + r) * groups + i / g);
                out[r * cols + i] =
                    char(int4Code(w[r * cols + i], Int4Group{scales[at], zps[at]}, asym));
              }
          });
      Value q = createConstant(c, c.getLoc(), qValue);
      Value scale = createConstant(c, c.getLoc(), scaleValue);
      Value zp;
      if (asym) {
        // The zero points, i4 like the weight, laid out as the scales.
        auto zpType = RankedTensorType::get(scaleType.getShape(), i4);
        ElementsAttr zpValue =
            src ? ElementsAttr(DenseElementsAttr::get(
                      zpType, ArrayRef<APInt>(llvm::to_vector(llvm::map_range(
                                  zps, [](int8_t v) { return APInt(4, uint64_t(int64_t(v)), true); })))))
                : makeElements(zpType, old, ".zp", [](MutableArrayRef<char>) {});
        zp = createConstant(c, c.getLoc(), zpValue);
      }
      auto gran = tf::QuantGranularityAttr::get(
          ctx, perGroup ? tf::QuantGranularity::PerGroup : tf::QuantGranularity::PerChannel);
      IntegerAttr size =
          perGroup ? IntegerAttr::get(IntegerType::get(ctx, 64), g) : IntegerAttr();
      for (OpOperand *use : uses) {
        auto l = cast<tf::LinearOp>(use->getOwner());
        OpBuilder b(l);
        auto ql = tf::LinearOp::create(b, l.getLoc(), l.getType(), l.getX(), q, l.getBias(),
                                       scale, zp, Value(), gran, size, l.getActivationAttr());
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
