//===- SmoothQuant.cpp - migrate activation outliers into the weights -----===//
//
// SmoothQuant (Xiao et al. 2023), `accelc -precision=w8a8` step two. Per
// group of linears reading one f32 tensor x (with accel.calib_absmax from
// accel-calibrate-activations):
//
//   s_j = max|x_j|^alpha / (max over the group's weights of max_o |W[o, j]|)^(1 - alpha)
//   x' = x / s      (folded into x's producer: a norm's weight and bias, or
//                    the up half of the linear before a gated_act)
//   W' = W diag(s)  (each linear's columns)
//
// so that x' W'^T = x W^T while x' has smaller outlier channels, which
// makes a per-tensor i8 scale for x cost less. Linears whose x comes from
// anything else are left alone (docs/precision.md).
//
//===----------------------------------------------------------------------===//
#include "PrecisionUtils.h"

#include "accel/Weights/Weights.h"

#include "accel/dialects/Transformer/TransformerOps.h"
#include "accel/passes/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <mutex>
#include <vector>

namespace accel {
#define GEN_PASS_DEF_SMOOTHQUANT
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::precision;
namespace tf = accel::transformer;

namespace {

/// The f32 constant behind `v` with its values, if it has them.
struct F32Const {
  onnx::ConstantOp op;
  std::vector<float> values; // empty when streamed (a weight read a chunk at a time)
  int64_t count = 0;         // elements
};

std::optional<F32Const> readConst(Value v, bool stream = false) {
  if (!v)
    return std::nullopt;
  auto c = v.getDefiningOp<onnx::ConstantOp>();
  if (!c || !c.getValueAttr())
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(c.getValueAttr().getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isF32() ||
      !isa<DenseElementsAttr, DenseResourceElementsAttr>(c.getValueAttr()))
    return std::nullopt;
  // A large weight is not read here: its statistics are streamed and its
  // new value is a lazy weight (accel/Weights/Weights.h).
  if (stream && weights::streamable(c.getValueAttr()))
    return F32Const{c, {}, type.getNumElements()};
  SmallVector<float> storage;
  std::optional<ArrayRef<float>> vals = readF32(c.getValueAttr(), storage);
  if (!vals)
    return std::nullopt;
  return F32Const{c, std::vector<float>(vals->begin(), vals->end()), type.getNumElements()};
}

/// max |w[o, i]| over the rows o of `c` ([rows, k]) into wmax[i].
bool columnAbsMax(const F32Const &c, int64_t k, std::vector<double> &wmax) {
  if (!c.values.empty() || c.count == 0) {
    const int64_t rows = int64_t(c.values.size()) / k;
    for (int64_t o = 0; o < rows; ++o)
      for (int64_t i = 0; i < k; ++i)
        wmax[size_t(i)] = std::max(wmax[size_t(i)], double(std::fabs(c.values[o * k + i])));
    return true;
  }
  std::mutex mu;
  return forEachF32Rows(onnx::ConstantOp(c.op).getValueAttr(), [&](int64_t b, int64_t e, const float *w) {
    std::vector<double> local(size_t(k), 0.0);
    for (int64_t o = 0; o < e - b; ++o)
      for (int64_t i = 0; i < k; ++i)
        local[size_t(i)] = std::max(local[size_t(i)], double(std::fabs(w[o * k + i])));
    std::lock_guard<std::mutex> lock(mu);
    for (int64_t i = 0; i < k; ++i)
      wmax[size_t(i)] = std::max(wmax[size_t(i)], local[size_t(i)]);
  });
}

/// A new value for the constant `c` (same shape), `fn(i, old)` per element
/// (i the row-major index): computed when the plan writer reads it for a
/// streamed weight, now otherwise.
ElementsAttr transformed(const F32Const &c, StringRef suffix,
                         std::function<float(int64_t, float)> fn) {
  ElementsAttr old = onnx::ConstantOp(c.op).getValueAttr();
  auto type = cast<RankedTensorType>(old.getType());
  if (c.values.empty() && c.count) {
    const int64_t perRow = type.getRank() == 0 ? 1 : c.count / std::max<int64_t>(type.getDimSize(0), 1);
    return mapWeightRows(type, old, suffix,
                         [fn, perRow](int64_t b, int64_t e, const char *in, char *out) {
                           const auto *x = reinterpret_cast<const float *>(in);
                           auto *y = reinterpret_cast<float *>(out);
                           for (int64_t i = 0, n = (e - b) * perRow; i < n; ++i)
                             y[i] = fn(b * perRow + i, x[i]);
                         });
  }
  return makeElements(type, old, suffix, [&](MutableArrayRef<char> out) {
    std::vector<float> v(c.values.size());
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = fn(int64_t(i), c.values[i]);
    std::memcpy(out.data(), v.data(), v.size() * sizeof(float));
  });
}

struct SmoothQuantPass : accel::impl::SmoothQuantBase<SmoothQuantPass> {
  using SmoothQuantBase::SmoothQuantBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (alpha < 0.0 || alpha > 1.0 || !(maxScale >= 1.0)) {
      func.emitError() << "accel-smooth-quant: alpha must be in [0, 1] and max-scale at least "
                          "1, got alpha="
                       << alpha << " max-scale=" << maxScale;
      return signalPassFailure();
    }
    // The calibrated linears, grouped by the tensor they read.
    llvm::MapVector<Value, SmallVector<tf::LinearOp>> groups;
    func.walk([&](tf::LinearOp l) {
      if (l->hasAttr(kCalibAbsMaxAttr) && !l.getWeightScale() &&
          cast<RankedTensorType>(l.getX().getType()).getElementType().isF32())
        groups[l.getX()].push_back(l);
    });
    DenseMap<void *, unsigned> holders = countBlobHolders(func);
    for (auto &[x, linears] : groups)
      smooth(x, linears, holders);
  }

  void smooth(Value x, ArrayRef<tf::LinearOp> linears, const DenseMap<void *, unsigned> &holders) {
    // Only these linears may read x: any other reader would see x / s.
    for (OpOperand &use : x.getUses()) {
      auto l = dyn_cast<tf::LinearOp>(use.getOwner());
      if (!l || !llvm::is_contained(linears, l) || use.getOperandNumber() != 0)
        return;
    }
    const int64_t k = cast<RankedTensorType>(x.getType()).getDimSize(1);
    if (ShapedType::isDynamic(k))
      return;

    // Statistics and weights.
    std::vector<double> xmax(size_t(k), 0.0), wmax(size_t(k), 0.0);
    SmallVector<F32Const> weights;
    for (tf::LinearOp l : linears) {
      auto stats = dyn_cast<DenseElementsAttr>(l->getAttr(kCalibAbsMaxAttr));
      if (!stats || stats.getNumElements() != k)
        return;
      int64_t j = 0;
      for (float a : stats.getValues<float>())
        xmax[size_t(j)] = std::max(xmax[size_t(j)], double(a)), ++j;
      std::optional<F32Const> w = readConst(l.getWeight(), /*stream=*/true);
      if (!w || w->count % k != 0 || !columnAbsMax(*w, k, wmax))
        return;
      weights.push_back(std::move(*w));
    }

    // x's producer, and the constants 1/s folds into.
    Operation *def = x.getDefiningOp();
    std::optional<F32Const> normWeight, normBias, guWeight, guBias;
    double offset = 0.0;
    OpOperand *normWeightUse = nullptr, *normBiasUse = nullptr;
    OpOperand *guWeightUse = nullptr, *guBiasUse = nullptr;
    if (auto n = dyn_cast_or_null<tf::RmsNormOp>(def)) {
      normWeight = readConst(n.getWeight());
      normWeightUse = &n.getWeightMutable();
      offset = n.getWeightOffset() ? n.getWeightOffset()->convertToDouble() : 0.0;
    } else if (auto n = dyn_cast_or_null<tf::AddRmsNormOp>(def)) {
      if (x != n.getResult())
        return; // the residual sum is not normed
      normWeight = readConst(n.getWeight());
      normWeightUse = &n.getWeightMutable();
      offset = n.getWeightOffset() ? n.getWeightOffset()->convertToDouble() : 0.0;
    } else if (auto n = dyn_cast_or_null<tf::LayerNormOp>(def)) {
      normWeight = readConst(n.getWeight());
      normWeightUse = &n.getWeightMutable();
      if (n.getBias()) {
        normBias = readConst(n.getBias());
        normBiasUse = &n.getBiasMutable()[0];
        if (!normBias)
          return;
      }
    } else if (auto g = dyn_cast_or_null<tf::GatedActOp>(def)) {
      // act(gate) * up is linear in up: scale the up rows of the linear
      // that produces gated_act's input.
      auto gu = g.getInput().getDefiningOp<tf::LinearOp>();
      if (!gu || !g.getInput().hasOneUse() || gu.getWeightScale() || gu.getActivation() ||
          !cast<RankedTensorType>(gu.getX().getType()).getElementType().isF32())
        return;
      guWeight = readConst(gu.getWeight(), /*stream=*/true);
      guWeightUse = &gu.getWeightMutable();
      if (!guWeight || gu.getOutFeatures() != 2 * k)
        return;
      if (gu.getBias()) {
        guBias = readConst(gu.getBias());
        guBiasUse = &gu.getBiasMutable()[0];
        if (!guBias)
          return;
      }
    } else {
      return; // attention output, gelu output, ...: not smoothed
    }
    if (normWeightUse && (!normWeight || int64_t(normWeight->values.size()) != k))
      return;
    if (normBias && int64_t(normBias->values.size()) != k)
      return;

    // s, clamped.
    std::vector<float> s(size_t(k), 1.0f);
    const double lo = 1.0 / maxScale, hi = maxScale;
    for (int64_t j = 0; j < k; ++j) {
      const double a = xmax[size_t(j)], w = wmax[size_t(j)];
      if (a <= 0.0 || w <= 0.0)
        continue;
      const double v = std::pow(a, alpha) / std::pow(w, 1.0 - alpha);
      s[size_t(j)] = float(std::min(hi, std::max(lo, v)));
    }

    // W' = W diag(s); the statistics become those of x / s.
    MLIRContext *ctx = x.getContext();
    auto statsType = RankedTensorType::get({k}, Float32Type::get(ctx));
    for (auto [lc, w] : llvm::zip(linears, weights)) {
      tf::LinearOp l = lc;
      ElementsAttr v =
          transformed(w, ".smooth", [s, k](int64_t i, float old) { return old * s[size_t(i % k)]; });
      replaceWeight(w.op, {&l.getWeightMutable()}, v, holders);
      auto stats = cast<DenseElementsAttr>(l->getAttr(kCalibAbsMaxAttr));
      std::vector<float> scaled;
      int64_t j = 0;
      for (float a : stats.getValues<float>())
        scaled.push_back(a / s[size_t(j++)]);
      l->setAttr(kCalibAbsMaxAttr, DenseElementsAttr::get(statsType, ArrayRef<float>(scaled)));
    }
    // 1/s into the producer.
    if (normWeight) {
      ElementsAttr v = transformed(*normWeight, ".smooth", [&](int64_t i, float old) {
        return float((double(old) + offset) / s[size_t(i)] - offset);
      });
      replaceWeight(normWeight->op, {normWeightUse}, v, holders);
    }
    if (normBias) {
      ElementsAttr v = transformed(*normBias, ".smooth",
                                   [&](int64_t i, float old) { return old / s[size_t(i)]; });
      replaceWeight(normBias->op, {normBiasUse}, v, holders);
    }
    if (guWeight) {
      // Rows [k, 2k) are the up projection; row k + j feeds channel j.
      const int64_t cols =
          cast<RankedTensorType>(guWeight->op.getValueAttr().getType()).getDimSize(1);
      ElementsAttr v = transformed(*guWeight, ".smooth", [s, k, cols](int64_t i, float old) {
        const int64_t row = i / cols;
        return row < k ? old : old / s[size_t(row - k)];
      });
      replaceWeight(guWeight->op, {guWeightUse}, v, holders);
    }
    if (guBias) {
      ElementsAttr v = transformed(*guBias, ".smooth", [&](int64_t i, float old) {
        return i < k ? old : old / s[size_t(i - k)];
      });
      replaceWeight(guBias->op, {guBiasUse}, v, holders);
    }
  }
};

} // namespace
