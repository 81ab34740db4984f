//===- Linear.cpp - dense layers ------------------------------------------===//
#include "runtime/cpu/transformer/Linear.h"

#include "runtime/cpu/Gemm.h"
#include "runtime/cpu/transformer/KernelSupport.h"

namespace accel::rt::cpu::transformer {

using namespace detail;

StatusOr<Tensor> linear(const Tensor &x, const Tensor &weight, const Tensor *bias,
                        std::optional<DType> outType) {
  const char *op = "linear";
  if (weight.defined() && !isActivationType(weight.dtype()))
    return opUnimplemented(op, std::string("weight ") + weight.describe() +
                                   " is quantised; the CPU backend has no "
                                   "dequantising linear yet (float weights only)");
  ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, "x", x));
  ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, "weight", weight));
  ACCEL_RT_RETURN_IF_ERROR(requireRank(op, "x", x, 2));
  ACCEL_RT_RETURN_IF_ERROR(requireRank(op, "weight", weight, 2));
  const int64_t t = x.dim(0), in = x.dim(1), out = weight.dim(0);
  if (weight.dim(1) != in)
    return opError(op, "weight " + weight.describe() + " must be [out, " +
                           std::to_string(in) + "] for x " + x.describe());
  if (bias) {
    ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, "bias", *bias));
    if (bias->rank() != 1 || bias->dim(0) != out)
      return opError(op, "bias " + bias->describe() + " must be [" +
                             std::to_string(out) + "]");
  }
  const DType rt = outType.value_or(x.dtype());
  if (!isActivationType(rt))
    return opError(op, std::string("result type ") + dtypeName(rt) +
                           " must be f32, f16 or bf16");
  Tensor xf, bf, y;
  ACCEL_RT_ASSIGN_OR_RETURN(xf, asF32(op, x));
  // f16/bf16 weights are widened a block of rows at a time inside the GEMM
  // (never a whole f32 copy of a large weight, e.g. a bf16 lm head).
  const WeightFormat format = weight.dtype() == DType::kBF16  ? WeightFormat::kBF16
                              : weight.dtype() == DType::kF16 ? WeightFormat::kF16
                                                              : WeightFormat::kF32;
  if (bias) {
    ACCEL_RT_ASSIGN_OR_RETURN(bf, asF32(op, *bias));
  }
  ACCEL_RT_ASSIGN_OR_RETURN(y, newF32(op, {t, out}));
  float *ys = y.data<float>();
  if (t > 0 && out > 0) {
    gemmF32Weights(t, out, in, xf.data<float>(), in, weight.rawData(), format, in, nullptr,
                   false, 0.0f, ys, out);
    if (bias) {
      const float *b = bf.data<float>();
      for (int64_t r = 0; r < t; ++r)
        for (int64_t o = 0; o < out; ++o)
          ys[r * out + o] += b[o];
    }
  }
  return fromF32(op, std::move(y), rt);
}

} // namespace accel::rt::cpu::transformer
