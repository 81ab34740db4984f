//===- ElementwiseUtil.h - unary/binary loops over allowed dtypes -*- C++ -*-===//
//
// Internal to runtime/cpu/onnx. Elementwise kernels name the dtype classes
// they accept; the loops below instantiate only those, widen narrow floats
// to f32, and store results back in the input's dtype.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_ONNX_ELEMENTWISEUTIL_H
#define ACCEL_RUNTIME_CPU_ONNX_ELEMENTWISEUTIL_H

#include "runtime/cpu/onnx/KernelUtil.h"

#include <type_traits>

namespace accel::rt::onnx {

enum : unsigned {
  kAllowFloat = 1,
  kAllowInt = 2,
  kAllowBool = 4,
  kAllowNumeric = kAllowFloat | kAllowInt,
  kAllowAll = kAllowFloat | kAllowInt | kAllowBool,
};

/// Calls f(TypeTag<T>{}) when the compute dtype `ct` is in `Allow`.
template <unsigned Allow, typename F> bool dispatchAllowed(DType ct, F &&f) {
  switch (ct) {
  case DType::kF32:
    if constexpr ((Allow & kAllowFloat) != 0) { f(TypeTag<float>{}); return true; }
    return false;
  case DType::kF64:
    if constexpr ((Allow & kAllowFloat) != 0) { f(TypeTag<double>{}); return true; }
    return false;
  case DType::kI1:
    if constexpr ((Allow & kAllowBool) != 0) { f(TypeTag<bool>{}); return true; }
    return false;
  default:
    break;
  }
  if constexpr ((Allow & kAllowInt) != 0)
    return dispatchInteger(ct, std::forward<F>(f));
  return false;
}

/// Fails unless `t`'s dtype is in `allow` (i4/ui4 are never accepted here).
Status checkAllowed(const KernelContext &ctx, const Tensor &t, unsigned allow);

/// out = fn(x) elementwise, same dtype as x.
template <unsigned Allow, typename Fn>
StatusOr<Tensor> unaryTensor(const KernelContext &ctx, const Tensor &x, Fn fn) {
  ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, x, Allow));
  Tensor w, out;
  ACCEL_RT_ASSIGN_OR_RETURN(w, widen(x));
  ACCEL_RT_ASSIGN_OR_RETURN(out, Tensor::allocate(w.dtype(), x.shape()));
  const int64_t n = x.numElements();
  dispatchAllowed<Allow>(w.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *a = w.data<T>();
    T *z = out.data<T>();
    for (int64_t i = 0; i < n; ++i)
      z[i] = T(fn(a[i]));
  });
  return convertTo(out, x.dtype());
}

/// out = fn(a, b) with numpy broadcasting; a and b share a dtype. The
/// result has that dtype, or i1 when BoolOut.
template <unsigned Allow, bool BoolOut, typename Fn>
StatusOr<Tensor> binaryTensor(const KernelContext &ctx, const Tensor &a,
                              const Tensor &b, Fn fn) {
  if (a.dtype() != b.dtype())
    return ctx.error("operands must have the same type, got " + a.describe() +
                     " and " + b.describe());
  ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, a, Allow));
  Shape shape;
  ACCEL_RT_ASSIGN_OR_RETURN(shape, broadcastShapes(ctx, {&a.shape(), &b.shape()}));
  Tensor wa, wb, out;
  ACCEL_RT_ASSIGN_OR_RETURN(wa, widen(a));
  ACCEL_RT_ASSIGN_OR_RETURN(wb, widen(b));
  const DType ct = wa.dtype();
  ACCEL_RT_ASSIGN_OR_RETURN(out, Tensor::allocate(BoolOut ? DType::kI1 : ct, shape));
  dispatchAllowed<Allow>(ct, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = std::conditional_t<BoolOut, bool, T>;
    broadcastBinary(shape, wa.shape(), wa.data<T>(), wb.shape(), wb.data<T>(),
                    out.data<R>(), fn);
  });
  if (BoolOut)
    return out;
  return convertTo(out, a.dtype());
}

/// Integer +, -, * wrap (two's complement) instead of overflowing.
template <typename T> inline T wrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return T(std::make_unsigned_t<T>(a) + std::make_unsigned_t<T>(b));
  else
    return a + b;
}
template <typename T> inline T wrapSub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return T(std::make_unsigned_t<T>(a) - std::make_unsigned_t<T>(b));
  else
    return a - b;
}
template <typename T> inline T wrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    // Promote small unsigned types past int so the product cannot overflow int.
    using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    return T(W(U(a)) * W(U(b)));
  } else {
    return a * b;
  }
}

} // namespace accel::rt::onnx

#endif // ACCEL_RUNTIME_CPU_ONNX_ELEMENTWISEUTIL_H
