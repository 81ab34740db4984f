//===- QuantizeActivations.cpp - static per-tensor i8 activations (W8A8) --===//
//
// `accelc -precision=w8a8` (and w8a8-fp8), the last step: each i8-weight
// (f8E4M3FN-weight) linear with calibration statistics (accel.calib_absmax,
// after accel-smooth-quant) reads an i8 (f8E4M3FN) x quantised with the
// static per-tensor scale `max_j absmax_j / 127` (`/ 448`):
//
//   %xq = transformer.quantize %x, %s
//   %y  = transformer.linear %xq, %q weight_scale(%ws) input_scale(%s) ...
//
// The plan writer folds the quantize into the linear's gemm step.
//
//===----------------------------------------------------------------------===//
#include "PrecisionUtils.h"

#include "accel/dialects/Transformer/TransformerOps.h"
#include "accel/passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

namespace accel {
#define GEN_PASS_DEF_QUANTIZEACTIVATIONS
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::precision;
namespace tf = accel::transformer;

namespace {

/// `ql` in place of `l`, with `l`'s activation epilogue (which a W8A8
/// linear does not take) as a transformer.activation after it.
void replaceLinear(tf::LinearOp l, tf::LinearOp ql, OpBuilder &b) {
  Value y = ql.getResult();
  if (l.getActivationAttr())
    y = tf::ActivationOp::create(b, l.getLoc(), l.getType(), y, l.getActivationAttr());
  l.getResult().replaceAllUsesWith(y);
  l.erase();
}

struct QuantizeActivationsPass : accel::impl::QuantizeActivationsBase<QuantizeActivationsPass> {
  using QuantizeActivationsBase::QuantizeActivationsBase;

  /// Dynamic per-token scales: %q, %s = transformer.dynamic_quantize %x
  /// (s [tokens] computed at run time), read by the linear with
  /// input_scale(%s).
  void quantizeDynamically(ArrayRef<tf::LinearOp> linears, Type q8) {
    Type f32 = Float32Type::get(&getContext());
    for (tf::LinearOp l : linears) {
      l->removeAttr(kCalibAbsMaxAttr);
      auto xType = cast<RankedTensorType>(l.getX().getType());
      if (!xType.getElementType().isF32() || l.getWeight().getType().getElementType() != q8 ||
          !l.getWeightScale() || l.getWeightZeroPoint() || l.getGroupSize())
        continue;
      OpBuilder b(l);
      Location loc = l.getLoc();
      auto qType = RankedTensorType::get(xType.getShape(), q8);
      auto sType = RankedTensorType::get({xType.getDimSize(0)}, f32);
      auto dq = tf::DynamicQuantizeOp::create(b, loc, qType, sType, l.getX());
      auto ql = tf::LinearOp::create(b, loc, l.getType(), dq.getResult(), l.getWeight(),
                                     l.getBias(), l.getWeightScale(), Value(), dq.getScale(),
                                     l.getGranularityAttr(), nullptr, nullptr);
      replaceLinear(l, ql, b);
    }
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<tf::LinearOp> linears;
    func.walk([&](tf::LinearOp l) {
      if (l->hasAttr(kCalibAbsMaxAttr) || dynamic)
        linears.push_back(l);
    });
    MLIRContext *ctx = &getContext();
    Type f32 = Float32Type::get(ctx);
    Type q8;
    double qmax = 0;
    if (dtype == "i8") {
      q8 = IntegerType::get(ctx, 8);
      qmax = 127.0;
    } else if (dtype == "f8E4M3FN") {
      q8 = Float8E4M3FNType::get(ctx);
      qmax = 448.0;
    } else {
      func.emitError() << "accel-quantize-activations: dtype must be i8 or f8E4M3FN, not '"
                       << dtype << "'";
      return signalPassFailure();
    }
    if (dynamic) {
      quantizeDynamically(linears, q8);
      return;
    }
    for (tf::LinearOp l : linears) {
      auto stats = dyn_cast<DenseElementsAttr>(l->getAttr(kCalibAbsMaxAttr));
      l->removeAttr(kCalibAbsMaxAttr);
      auto xType = cast<RankedTensorType>(l.getX().getType());
      if (!stats || !xType.getElementType().isF32() ||
          l.getWeight().getType().getElementType() != q8 || !l.getWeightScale() ||
          l.getWeightZeroPoint() || l.getGroupSize())
        continue;
      float amax = 0.0f;
      for (float a : stats.getValues<float>())
        amax = std::max(amax, std::fabs(a));
      const float scale = amax > 0.0f && std::isfinite(amax) ? float(amax / qmax) : 1.0f;

      OpBuilder b(l);
      Location loc = l.getLoc();
      auto scaleType = RankedTensorType::get({}, f32);
      Value s = createConstant(l, loc, DenseElementsAttr::get(scaleType, ArrayRef<float>(scale)));
      auto qType = RankedTensorType::get(xType.getShape(), q8);
      Value xq = tf::QuantizeOp::create(b, loc, qType, l.getX(), s, Value(), nullptr, nullptr);
      auto ql = tf::LinearOp::create(b, loc, l.getType(), xq, l.getWeight(), l.getBias(),
                                     l.getWeightScale(), Value(), s, l.getGranularityAttr(),
                                     nullptr, nullptr);
      // A W8A8 linear takes no activation epilogue: it becomes its own op.
      replaceLinear(l, ql, b);
    }
    // Statistics on anything left (a linear that was not quantised).
    func.walk([&](Operation *op) { op->removeAttr(kCalibAbsMaxAttr); });
  }
};

} // namespace
