//===- CalibrateActivations.cpp - per-channel max |x| of each linear ------===//
//
// `accelc -precision=w8a8 -calibration tokens.npy`, step one: run the f32
// model on the CPU evaluator (lib/Eval, the kernels `accelc -interpret`
// uses) over the calibration tokens and record, for every f32 linear, the
// per-input-channel max |x| it saw (`accel.calib_absmax`). After fusion the
// fused QKV linear reads the attention norm's output and gate_up the MLP
// norm's; the down projection, inside a fused gated MLP, is exposed by
// splitting that MLP first.
//
//===----------------------------------------------------------------------===//
#include "PrecisionUtils.h"

#include "accel/dialects/Transformer/TransformerOps.h"
#include "accel/passes/Passes.h"
#include "core/Tensor.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>
#include <vector>

namespace accel {
#define GEN_PASS_DEF_CALIBRATEACTIVATIONS
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
using namespace accel;
using namespace accel::precision;
namespace tf = accel::transformer;

namespace {

struct CalibrateActivationsPass : accel::impl::CalibrateActivationsBase<CalibrateActivationsPass> {
  using CalibrateActivationsBase::CalibrateActivationsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    splitGatedMlps(func);

    // The linears to watch and their running maxima.
    llvm::DenseMap<Operation *, std::vector<float>> absmax;
    func.walk([&](tf::LinearOp l) {
      auto x = cast<RankedTensorType>(l.getX().getType());
      auto w = l.getWeight().getDefiningOp<onnx::ConstantOp>();
      if (x.getElementType().isF32() && w && l.getWeight().getType().getElementType().isF32() &&
          !l.getWeight().getType().isDynamicDim(1))
        absmax[l] = std::vector<float>(size_t(l.getInFeatures()), 0.0f);
    });
    if (absmax.empty())
      return;
    auto observe = [&](Operation *op, ArrayRef<const rt::Tensor *> inputs) {
      auto it = absmax.find(op);
      if (it == absmax.end() || inputs.empty() || !inputs[0]->defined())
        return;
      const rt::Tensor &x = *inputs[0];
      std::vector<float> &m = it->second;
      const int64_t k = int64_t(m.size());
      if (x.dtype() != rt::DType::kF32 || x.rank() != 2 || x.dim(1) != k)
        return;
      const float *p = x.data<float>();
      for (int64_t t = 0; t < x.dim(0); ++t)
        for (int64_t j = 0; j < k; ++j)
          m[size_t(j)] = std::max(m[size_t(j)], std::fabs(p[t * k + j]));
    };

    if (failed(runCalibration(func, "accel-calibrate-activations", tokens, observe)))
      return signalPassFailure();

    auto type = [&](size_t n) {
      return RankedTensorType::get({int64_t(n)}, Float32Type::get(&getContext()));
    };
    for (auto &[op, m] : absmax)
      op->setAttr(kCalibAbsMaxAttr, DenseElementsAttr::get(type(m.size()), ArrayRef<float>(m)));
  }
};

} // namespace
