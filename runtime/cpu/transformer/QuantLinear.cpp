//===- QuantLinear.cpp - linear layers with quantised weights -------------===//
#include "runtime/cpu/transformer/QuantLinear.h"

#include "runtime/cpu/Gemm.h"
#include "runtime/cpu/transformer/KernelSupport.h"
#include "runtime/cpu/transformer/Parallel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace accel::rt::cpu::transformer {

using namespace detail;

namespace {

/// The scale/zero-point layout of a weight [out, in]: per tensor ([] or
/// [1]), per output channel ([out]) or per group of `groupSize` along in
/// ([out, in / groupSize]).
struct QuantLayout {
  int64_t out = 0, in = 0, groupSize = 0; // groupSize 0: not grouped
  bool perChannel = false;
  /// The index of (row o, column i)'s scale and zero point.
  int64_t at(int64_t o, int64_t i) const {
    if (groupSize > 0)
      return o * (in / groupSize) + i / groupSize;
    return perChannel ? o : 0;
  }
};

StatusOr<QuantLayout> layoutOf(const char *op, const char *what, const Tensor &t, int64_t out,
                               int64_t in, int64_t groupSize) {
  QuantLayout l;
  l.out = out;
  l.in = in;
  if (groupSize > 0) {
    if (in % groupSize != 0)
      return opError(op, "group size " + std::to_string(groupSize) + " does not divide the " +
                             std::to_string(in) + " input features");
    if (t.rank() != 2 || t.dim(0) != out || t.dim(1) != in / groupSize)
      return opError(op, std::string(what) + " " + t.describe() + " must be [" +
                             std::to_string(out) + ", " + std::to_string(in / groupSize) +
                             "] (per group of " + std::to_string(groupSize) + ")");
    l.groupSize = groupSize;
    return l;
  }
  l.perChannel = t.numElements() == out && t.rank() == 1 && out != 1;
  if (!l.perChannel && t.numElements() != 1)
    return opError(op, std::string(what) + " " + t.describe() + " must be [" +
                           std::to_string(out) + "] (per channel) or [] (per tensor)");
  return l;
}

/// result = x @ ((weight - zeroPoint) * scale)^T for the forms the blocked
/// i8/fp8 path does not take: i4 weights, zero points, per-group scales,
/// f8E5M2. Decodes a block of weight rows at a time to f32 (memory stays
/// bounded), then multiplies in f32.
void generalQuantGemm(const float *x, int64_t t, const Tensor &weightF32,
                      const QuantLayout &l, const float *scale, const float *zeroPoint,
                      float *y) {
  const int64_t in = l.in, out = l.out;
  const float *w = weightF32.data<float>();
  const int64_t block =
      std::max<int64_t>(1, std::min<int64_t>(out, (int64_t(1) << 20) / std::max<int64_t>(in, 1)));
  std::vector<float> buf(size_t(block * in));
  for (int64_t o0 = 0; o0 < out; o0 += block) {
    const int64_t nb = std::min(block, out - o0);
    for (int64_t j = 0; j < nb; ++j) {
      const int64_t o = o0 + j;
      for (int64_t i = 0; i < in; ++i) {
        const int64_t s = l.at(o, i);
        const float zp = zeroPoint ? zeroPoint[s] : 0.0f;
        buf[size_t(j * in + i)] = (w[o * in + i] - zp) * scale[s];
      }
    }
    gemmF32(false, true, t, nb, in, 1.0f, x, in, buf.data(), in, 0.0f, y + o0, out);
  }
}

} // namespace

namespace {
/// What both quantised linears compute with: x, the weight scale and the
/// bias widened to f32, and the f32 result [t, out]; the bias and result
/// types checked.
struct F32Operands {
  Tensor x, scale, bias, y;
};
StatusOr<F32Operands> f32Operands(const char *op, const Tensor &x, const Tensor &scale,
                                  const Tensor *bias, DType outType, int64_t t, int64_t out) {
  if (bias && (bias->rank() != 1 || bias->dim(0) != out))
    return opError(op, "bias " + bias->describe() + " must be [" + std::to_string(out) + "]");
  if (!isActivationType(outType))
    return opError(op, std::string("result type ") + dtypeName(outType) +
                           " must be f32, f16 or bf16");
  F32Operands f;
  ACCEL_RT_ASSIGN_OR_RETURN(f.x, asF32(op, x));
  ACCEL_RT_ASSIGN_OR_RETURN(f.scale, asF32(op, scale));
  if (bias) {
    ACCEL_RT_ASSIGN_OR_RETURN(f.bias, asF32(op, *bias));
  }
  ACCEL_RT_ASSIGN_OR_RETURN(f.y, newF32(op, {t, out}));
  return f;
}
} // namespace

StatusOr<Tensor> quantLinear(const Tensor &x, const Tensor &weight, const Tensor &scale,
                             const Tensor *bias, DType outType, const Tensor *zeroPoint,
                             int64_t groupSize) {
  const char *op = "linear";
  ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, "x", x));
  ACCEL_RT_RETURN_IF_ERROR(requireRank(op, "x", x, 2));
  ACCEL_RT_RETURN_IF_ERROR(requireRank(op, "weight", weight, 2));
  const DType wt = weight.dtype();
  if (wt != DType::kI8 && wt != DType::kI4 && wt != DType::kU4 && wt != DType::kF8E4M3FN &&
      wt != DType::kF8E5M2)
    return opUnimplemented(op, "weight " + weight.describe() +
                                   " with a scale: the CPU backend dequantises i8, i4, ui4, "
                                   "f8E4M3FN and f8E5M2 weights");
  const int64_t t = x.dim(0), in = x.dim(1), out = weight.dim(0);
  if (weight.dim(1) != in)
    return opError(op, "weight " + weight.describe() + " must be [out, " + std::to_string(in) +
                           "] for x " + x.describe());
  if (groupSize < 0)
    return opError(op, "group size " + std::to_string(groupSize) + " is negative");
  ACCEL_RT_ASSIGN_OR_RETURN(QuantLayout l, layoutOf(op, "weight scale", scale, out, in, groupSize));
  if (zeroPoint) {
    if (wt != DType::kI8 && wt != DType::kI4 && wt != DType::kU4)
      return opError(op, "a zero point needs an i8, i4 or ui4 weight, got " + weight.describe());
    if (zeroPoint->dtype() != wt)
      return opError(op, "zero point " + zeroPoint->describe() + " must be " + dtypeName(wt) +
                             " like the weight");
    ACCEL_RT_ASSIGN_OR_RETURN(QuantLayout zl,
                              layoutOf(op, "zero point", *zeroPoint, out, in, groupSize));
    if (zl.perChannel != l.perChannel)
      return opError(op, "zero point " + zeroPoint->describe() + " and scale " +
                             scale.describe() + " differ in granularity");
  }
  ACCEL_RT_ASSIGN_OR_RETURN(F32Operands f, f32Operands(op, x, scale, bias, outType, t, out));
  Tensor &xf = f.x, &sf = f.scale, &bf = f.bias, &y = f.y;
  float *ys = y.data<float>();
  if (t > 0 && out > 0) {
    if ((wt == DType::kI8 || wt == DType::kF8E4M3FN) && !zeroPoint && groupSize == 0) {
      // Blocked decode inside the GEMM (Gemm.h).
      gemmF32Weights(t, out, in, xf.data<float>(), in, weight.rawData(),
                     wt == DType::kI8 ? WeightFormat::kI8 : WeightFormat::kF8E4M3FN, in,
                     sf.data<float>(), l.perChannel, 0.0f, ys, out);
    } else {
      // i4/ui4 (stored one value per byte), f8E5M2, zero points, groups.
      const Tensor wf = weight.toF32();
      Tensor zf;
      if (zeroPoint)
        zf = zeroPoint->toF32();
      if (!wf.defined() || (zeroPoint && !zf.defined()))
        return Status(StatusCode::kResourceExhausted,
                      "linear: cannot decode the weight " + weight.describe());
      generalQuantGemm(xf.data<float>(), t, wf, l, sf.data<float>(),
                       zeroPoint ? zf.data<float>() : nullptr, ys);
    }
    if (bias) {
      const float *b = bf.data<float>();
      for (int64_t r = 0; r < t; ++r)
        for (int64_t o = 0; o < out; ++o)
          ys[r * out + o] += b[o];
    }
  }
  return fromF32(op, std::move(y), outType);
}

namespace {

/// The checks both W8A8 forms share: x [t, in] float, an i8 or f8E4M3FN
/// weight [out, in].
Status checkW8A8(const char *op, const Tensor &x, const Tensor &weight) {
  ACCEL_RT_RETURN_IF_ERROR(requireActivation(op, "x", x));
  ACCEL_RT_RETURN_IF_ERROR(requireRank(op, "x", x, 2));
  ACCEL_RT_RETURN_IF_ERROR(requireRank(op, "weight", weight, 2));
  if (weight.dtype() != DType::kI8 && weight.dtype() != DType::kF8E4M3FN)
    return opUnimplemented(op, "quantised activations (input_scale) with weight " +
                                   weight.describe() +
                                   ": the CPU backend runs i8 x i8 and f8E4M3FN x f8E4M3FN only");
  if (weight.dim(1) != x.dim(1))
    return opError(op, "weight " + weight.describe() + " must be [out, " +
                           std::to_string(x.dim(1)) + "] for x " + x.describe());
  return Status::ok();
}

/// y = quantise(x[r] / xs[r]) . weight[o] * xs[r] * scale[o] (+ bias), row r
/// of x quantised with its own scale xs[r] (> 0): i8 sums exact in i32,
/// e4m3 sums in f32; each output by one thread in a fixed order (results
/// do not depend on the thread count).
StatusOr<Tensor> w8a8Rows(const char *op, const Tensor &x, const Tensor &weight,
                          const Tensor &scale, const std::vector<float> &xs, const Tensor *bias,
                          DType outType) {
  const bool fp8 = weight.dtype() == DType::kF8E4M3FN;
  const int64_t t = x.dim(0), in = x.dim(1), out = weight.dim(0);
  ACCEL_RT_ASSIGN_OR_RETURN(QuantLayout l, layoutOf(op, "weight scale", scale, out, in, 0));
  ACCEL_RT_ASSIGN_OR_RETURN(F32Operands f, f32Operands(op, x, scale, bias, outType, t, out));
  Tensor &xf = f.x, &sf = f.scale, &bf = f.bias, &y = f.y;
  if (t == 0 || out == 0)
    return fromF32(op, std::move(y), outType);
  const float *xp = xf.data<float>();
  const float *ws = sf.data<float>();
  const float *b = bias ? bf.data<float>() : nullptr;
  float *ys = y.data<float>();
  if (fp8) {
    // x → e4m3 and back (the values an FP8 GEMM multiplies), each row once;
    // each weight row decoded once; f32 sums in a fixed order per output.
    std::vector<float> xq(size_t(t * in));
    for (int64_t r = 0; r < t; ++r)
      for (int64_t i = 0; i < in; ++i)
        xq[size_t(r * in + i)] = f8E4M3FNToF32(f32ToF8E4M3FN(xp[r * in + i] / xs[size_t(r)]));
    const uint8_t *w = static_cast<const uint8_t *>(weight.rawData());
    parallelFor(out, 16, [&](int64_t o0, int64_t o1) {
      std::vector<float> wr(static_cast<size_t>(in));
      for (int64_t o = o0; o < o1; ++o) {
        for (int64_t i = 0; i < in; ++i)
          wr[size_t(i)] = f8E4M3FNToF32(w[o * in + i]);
        const float wsc = ws[l.perChannel ? o : 0];
        for (int64_t r = 0; r < t; ++r) {
          const float *xr = xq.data() + r * in;
          float acc = 0.0f;
          for (int64_t i = 0; i < in; ++i)
            acc += xr[i] * wr[size_t(i)];
          ys[r * out + o] = acc * (xs[size_t(r)] * wsc) + (b ? b[o] : 0.0f);
        }
      }
    });
    return fromF32(op, std::move(y), outType);
  }

  // x → i8, each row once (nearbyint: round half to even, as the compiler's
  // quantisation does).
  std::vector<int8_t> xq(size_t(t * in));
  for (int64_t r = 0; r < t; ++r) {
    const float inv = 1.0f / xs[size_t(r)];
    for (int64_t i = 0; i < in; ++i)
      xq[size_t(r * in + i)] = int8_t(
          std::max(-127.0f, std::min(127.0f, std::nearbyint(xp[r * in + i] * inv))));
  }
  // i8 x i8 → i32 per output, rescaled in f32; |sum| <= 127 * 127 * in fits
  // i32 for in < 133 000.
  const int8_t *w = static_cast<const int8_t *>(weight.rawData());
  parallelFor(out, 16, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      const int8_t *wr = w + o * in;
      const float wsc = ws[l.perChannel ? o : 0];
      for (int64_t r = 0; r < t; ++r) {
        const int8_t *xr = xq.data() + r * in;
        int32_t acc = 0;
        for (int64_t i = 0; i < in; ++i)
          acc += int32_t(xr[i]) * int32_t(wr[i]);
        ys[r * out + o] = float(acc) * (xs[size_t(r)] * wsc) + (b ? b[o] : 0.0f);
      }
    }
  });
  return fromF32(op, std::move(y), outType);
}

} // namespace

StatusOr<Tensor> w8a8Linear(const Tensor &x, const Tensor &weight, const Tensor &scale,
                            const Tensor &inputScale, const Tensor *bias, DType outType) {
  const char *op = "linear";
  ACCEL_RT_RETURN_IF_ERROR(checkW8A8(op, x, weight));
  if (inputScale.numElements() != 1 || inputScale.rank() > 1 ||
      inputScale.dtype() != DType::kF32)
    return opError(op, "input scale " + inputScale.describe() +
                           " must be one f32 (static, per tensor)");
  const float xs = *inputScale.data<float>();
  if (!(xs > 0.0f) || !std::isfinite(xs))
    return opError(op, "input scale " + std::to_string(xs) + " must be positive and finite");
  return w8a8Rows(op, x, weight, scale, std::vector<float>(size_t(x.dim(0)), xs), bias, outType);
}

StatusOr<Tensor> w8a8LinearDynamic(const Tensor &x, const Tensor &weight, const Tensor &scale,
                                   const Tensor *bias, DType outType) {
  const char *op = "linear";
  ACCEL_RT_RETURN_IF_ERROR(checkW8A8(op, x, weight));
  const float qmax = weight.dtype() == DType::kF8E4M3FN ? 448.0f : 127.0f;
  const Tensor xf = x.dtype() == DType::kF32 ? x : x.toF32();
  const int64_t t = x.dim(0), in = x.dim(1);
  std::vector<float> xs(static_cast<size_t>(t));
  const float *xp = xf.data<float>();
  for (int64_t r = 0; r < t; ++r) {
    float amax = 0.0f;
    bool finite = true;
    for (int64_t i = 0; i < in; ++i) {
      finite &= std::isfinite(xp[r * in + i]);
      amax = std::max(amax, std::fabs(xp[r * in + i]));
    }
    if (!finite)
      return opError(op, "row " + std::to_string(r) + " of x " + x.describe() +
                             " is not finite: no dynamic scale for it");
    xs[size_t(r)] = amax > 0.0f ? amax / qmax : 1.0f;
  }
  return w8a8Rows(op, x, weight, scale, xs, bias, outType);
}

} // namespace accel::rt::cpu::transformer
