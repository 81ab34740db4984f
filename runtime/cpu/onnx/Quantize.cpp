//===- Quantize.cpp - QuantizeLinear and DequantizeLinear -----------------===//
//
// Per-tensor (scale has one element), per-axis (scale is 1-D along `axis`)
// and blocked (block_size > 0: scale has x's rank with ceil(D / block_size)
// along `axis`) quantisation, computed in f32:
//   QuantizeLinear:   y = saturate(round_half_even(x / scale) + zero_point)
//                     (f8 outputs: y = cast(x / scale), honouring `saturate`)
//   DequantizeLinear: y = (x - zero_point) * scale
// Quantised types: i8 ui8 i16 ui16 i4 ui4 f8E4M3FN f8E5M2 (and i32 inputs
// to DequantizeLinear).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/onnx/ElementwiseUtil.h"

#include <cmath>

namespace accel::rt::onnx {

namespace {

/// Maps each element of x (seen as [outer, d, inner] around `axis`) to its
/// scale / zero-point index.
struct QuantPlan {
  enum Kind { kTensor, kAxis, kBlocked } kind = kTensor;
  int64_t outer = 1, d = 1, inner = 1, block = 0, blocks = 1;
  int64_t index(int64_t o, int64_t k, int64_t i) const {
    switch (kind) {
    case kTensor: return 0;
    case kAxis: return k;
    case kBlocked: return (o * blocks + k / block) * inner + i;
    }
    return 0;
  }
};

StatusOr<QuantPlan> planQuant(KernelContext &ctx, const Tensor &x, const Tensor &scale,
                              const Tensor *zp) {
  QuantPlan p;
  if (!isFloat(scale.dtype()))
    return ctx.error("scale must be floating-point, got " + scale.describe());
  if (zp && zp->shape() != scale.shape() &&
      !(zp->numElements() == 1 && scale.numElements() == 1))
    return ctx.error("zero point " + zp->describe() + " must have the scale's shape " +
                     shapeToString(scale.shape()));
  const int64_t blockSize = ctx.attrInt("block_size", 0);
  if (blockSize < 0)
    return ctx.error("block_size must be >= 0, got " + std::to_string(blockSize));
  if (scale.numElements() == 1 && scale.rank() <= 1 && blockSize == 0) {
    p.outer = x.numElements();
    return p;
  }
  if (x.rank() == 0)
    return ctx.error("a scalar input needs a scalar scale, got " + scale.describe());
  int64_t axis;
  ACCEL_RT_ASSIGN_OR_RETURN(axis, normalizeAxis(ctx, ctx.attrInt("axis", 1), x.rank()));
  for (int64_t i = 0; i < x.rank(); ++i)
    (i < axis ? p.outer : i == axis ? p.d : p.inner) *= x.dim(i);
  if (blockSize == 0) {
    if (scale.rank() != 1 || scale.dim(0) != x.dim(axis))
      return ctx.error("per-axis scale " + scale.describe() + " must be 1-D of size " +
                       std::to_string(x.dim(axis)) + " (axis " + std::to_string(axis) +
                       " of " + x.describe() + ")");
    p.kind = QuantPlan::kAxis;
    return p;
  }
  p.kind = QuantPlan::kBlocked;
  p.block = blockSize;
  p.blocks = (x.dim(axis) + blockSize - 1) / blockSize;
  Shape want = x.shape();
  want[size_t(axis)] = p.blocks;
  if (scale.shape() != want)
    return ctx.error("blocked scale " + scale.describe() + " must have shape " +
                     shapeToString(want) + " for block_size " + std::to_string(blockSize));
  return p;
}

bool isQuantType(DType t) {
  switch (t) {
  case DType::kI8: case DType::kU8: case DType::kI16: case DType::kU16:
  case DType::kI4: case DType::kU4: case DType::kF8E4M3FN: case DType::kF8E5M2:
    return true;
  default:
    return false;
  }
}

void intRange(DType t, double &lo, double &hi) {
  switch (t) {
  case DType::kI8: lo = -128, hi = 127; break;
  case DType::kU8: lo = 0, hi = 255; break;
  case DType::kI16: lo = -32768, hi = 32767; break;
  case DType::kU16: lo = 0, hi = 65535; break;
  case DType::kI4: lo = -8, hi = 7; break;
  case DType::kU4: lo = 0, hi = 15; break;
  default: lo = -2147483648.0, hi = 2147483647.0; break;
  }
}

Status kQuantizeLinear(KernelContext &ctx) {
  const Tensor &x0 = *ctx.in(0), &scale0 = *ctx.in(1);
  const Tensor *zp = ctx.in(2);
  if (!isFloat(x0.dtype()) && x0.dtype() != DType::kI32)
    return ctx.error("input must be floating-point or i32, got " + x0.describe());
  DType out = DType::kU8;
  if (zp) {
    out = zp->dtype();
  } else if (int64_t od = ctx.attrInt("output_dtype", 0)) {
    StatusOr<DType> t = dtypeFromOnnx(od);
    if (!t)
      return ctx.unsupported(t.status().message());
    out = *t;
  }
  if (ctx.hasAttr("output_dtype") && zp && ctx.attrInt("output_dtype", 0) != 0) {
    StatusOr<DType> t = dtypeFromOnnx(ctx.attrInt("output_dtype", 0));
    if (t && *t != out)
      return ctx.error("output_dtype disagrees with the zero point's type " +
                       std::string(dtypeName(out)));
  }
  if (!isQuantType(out))
    return ctx.error(std::string("cannot quantize to ") + dtypeName(out));
  const bool saturate = ctx.attrInt("saturate", 1) != 0;
  QuantPlan p;
  ACCEL_RT_ASSIGN_OR_RETURN(p, planQuant(ctx, x0, scale0, zp));
  const std::vector<float> x = x0.toFloats(), scale = scale0.toFloats();
  const std::vector<float> zero = zp ? zp->toFloats() : std::vector<float>(scale.size(), 0.0f);
  std::vector<float> q(x.size());
  double lo = 0, hi = 0;
  const bool fp8 = isFloat(out);
  intRange(out, lo, hi);
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t k = 0; k < p.d; ++k)
      for (int64_t i = 0; i < p.inner; ++i) {
        const int64_t e = (o * p.d + k) * p.inner + i;
        const int64_t s = p.index(o, k, i);
        const float v = x[size_t(e)] / scale[size_t(s)];
        if (fp8) {
          q[size_t(e)] = v + zero[size_t(s)];
        } else {
          float r = std::nearbyint(v) + zero[size_t(s)]; // ties to even
          if (std::isnan(r))
            r = 0;
          q[size_t(e)] = float(std::clamp<double>(r, lo, hi));
        }
      }
  Tensor qf;
  ACCEL_RT_ASSIGN_OR_RETURN(qf, Tensor::fromVector<float>(x0.shape(), q));
  ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[0], convertTo(qf, out, saturate));
  return Status::ok();
}

Status kDequantizeLinear(KernelContext &ctx) {
  const Tensor &x0 = *ctx.in(0), &scale0 = *ctx.in(1);
  const Tensor *zp = ctx.in(2);
  if (!isQuantType(x0.dtype()) && x0.dtype() != DType::kI32)
    return ctx.error(std::string("cannot dequantize ") + x0.describe());
  if (zp && zp->dtype() != x0.dtype())
    return ctx.error("zero point " + zp->describe() + " must have the input's type " +
                     dtypeName(x0.dtype()));
  DType out = scale0.dtype();
  if (int64_t od = ctx.attrInt("output_dtype", 0)) {
    StatusOr<DType> t = dtypeFromOnnx(od);
    if (!t)
      return ctx.unsupported(t.status().message());
    out = *t;
  }
  QuantPlan p;
  ACCEL_RT_ASSIGN_OR_RETURN(p, planQuant(ctx, x0, scale0, zp));
  const std::vector<double> x = x0.toDoubles();
  const std::vector<float> scale = scale0.toFloats();
  const std::vector<double> zero =
      zp && !isFloat(zp->dtype()) ? zp->toDoubles() : std::vector<double>(scale.size(), 0.0);
  std::vector<float> y(x.size());
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t k = 0; k < p.d; ++k)
      for (int64_t i = 0; i < p.inner; ++i) {
        const int64_t e = (o * p.d + k) * p.inner + i;
        const int64_t s = p.index(o, k, i);
        y[size_t(e)] = float(x[size_t(e)] - zero[size_t(s)]) * scale[size_t(s)];
      }
  Tensor yf;
  ACCEL_RT_ASSIGN_OR_RETURN(yf, Tensor::fromVector<float>(x0.shape(), y));
  ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[0], convertTo(yf, out));
  return Status::ok();
}

} // namespace

void addQuantizeKernels(KernelTable &t) {
  t["QuantizeLinear"] = {kQuantizeLinear, 2, 3, 1};
  t["DequantizeLinear"] = {kDequantizeLinear, 2, 3, 1};
}

} // namespace accel::rt::onnx
