//===- QuantLinear.cpp - linear layers with quantised weights -------------===//
#include "runtime/cpu/transformer/QuantLinear.h"

#include "runtime/cpu/Gemm.h"
#include "runtime/cpu/transformer/KernelSupport.h"

namespace accel::rt::cpu::transformer {

using namespace detail;

StatusOr<Tensor> quantLinear(const Tensor &x, const Tensor &weight, const Tensor &scale,
                             const Tensor *bias, DType outType) {
  const char *op = "linear";
  ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, "x", x));
  ACCEL_RT_RETURN_IF_ERROR(requireRank(op, "x", x, 2));
  ACCEL_RT_RETURN_IF_ERROR(requireRank(op, "weight", weight, 2));
  WeightFormat format;
  if (weight.dtype() == DType::kI8)
    format = WeightFormat::kI8;
  else if (weight.dtype() == DType::kF8E4M3FN)
    format = WeightFormat::kF8E4M3FN;
  else
    return opUnimplemented(op, "weight " + weight.describe() +
                                   " with a scale: the CPU backend dequantises i8 and "
                                   "f8E4M3FN weights only");
  const int64_t t = x.dim(0), in = x.dim(1), out = weight.dim(0);
  if (weight.dim(1) != in)
    return opError(op, "weight " + weight.describe() + " must be [out, " + std::to_string(in) +
                           "] for x " + x.describe());
  const bool perChannel = scale.numElements() == out && scale.rank() == 1 && out != 1;
  if (!perChannel && scale.numElements() != 1)
    return opError(op, "weight scale " + scale.describe() + " must be [" +
                           std::to_string(out) + "] (per channel) or [] (per tensor)");
  if (bias && (bias->rank() != 1 || bias->dim(0) != out))
    return opError(op, "bias " + bias->describe() + " must be [" + std::to_string(out) + "]");
  if (!isActivationType(outType))
    return opError(op, std::string("result type ") + dtypeName(outType) +
                           " must be f32, f16 or bf16");
  Tensor xf, sf, bf, y;
  ACCEL_RT_ASSIGN_OR_RETURN(xf, asF32(op, x));
  ACCEL_RT_ASSIGN_OR_RETURN(sf, asF32(op, scale));
  if (bias) {
    ACCEL_RT_ASSIGN_OR_RETURN(bf, asF32(op, *bias));
  }
  ACCEL_RT_ASSIGN_OR_RETURN(y, newF32(op, {t, out}));
  float *ys = y.data<float>();
  if (t > 0 && out > 0) {
    gemmF32Weights(t, out, in, xf.data<float>(), in, weight.rawData(), format, in,
                   sf.data<float>(), perChannel, 0.0f, ys, out);
    if (bias) {
      const float *b = bf.data<float>();
      for (int64_t r = 0; r < t; ++r)
        for (int64_t o = 0; o < out; ++o)
          ys[r * out + o] += b[o];
    }
  }
  return fromF32(op, std::move(y), outType);
}

} // namespace accel::rt::cpu::transformer
