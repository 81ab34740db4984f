//===- Elementwise.cpp - arithmetic, math, comparison, logic, Where, Clip -===//
//
// numpy multidirectional broadcasting; integer ops exact in their own type
// (+ - * wrap); float ops computed in f32 (f64 for f64) and stored back in the
// input's dtype.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/onnx/ElementwiseUtil.h"

#include <cmath>
#include <limits>

namespace accel::rt::onnx {

Status checkAllowed(const KernelContext &ctx, const Tensor &t, unsigned allow) {
  const DType d = t.dtype();
  bool ok = (isFloat(d) && (allow & kAllowFloat)) ||
            (isInteger(d) && d != DType::kI4 && d != DType::kU4 &&
             (allow & kAllowInt)) ||
            (d == DType::kI1 && (allow & kAllowBool));
  if (ok)
    return Status::ok();
  const char *want = allow == kAllowFloat     ? "a floating-point"
                     : allow == kAllowBool    ? "a boolean"
                     : allow == kAllowInt     ? "an integer"
                     : allow == kAllowNumeric ? "a numeric"
                                              : "a numeric or boolean";
  return ctx.error(std::string("expects ") + want + " tensor, got " + t.describe());
}

namespace {

template <typename T> constexpr bool isFloatT = std::is_floating_point_v<T>;

Status setOut(KernelContext &ctx, StatusOr<Tensor> r) {
  if (!r)
    return r.status();
  ctx.outputs[0] = std::move(r).value();
  return Status::ok();
}

// ---------------------------------------------------------------------------
// Unary math.
// ---------------------------------------------------------------------------
#define ACCEL_UNARY(NAME, ALLOW, EXPR)                                         \
  Status k##NAME(KernelContext &ctx) {                                         \
    return setOut(ctx, unaryTensor<ALLOW>(ctx, *ctx.in(0), [&](auto x) {       \
      using T = decltype(x);                                                   \
      (void)sizeof(T);                                                         \
      return EXPR;                                                             \
    }));                                                                       \
  }

ACCEL_UNARY(Sqrt, kAllowFloat, std::sqrt(x))
ACCEL_UNARY(Reciprocal, kAllowFloat, T(1) / x)
ACCEL_UNARY(Exp, kAllowFloat, std::exp(x))
ACCEL_UNARY(Log, kAllowFloat, std::log(x))
ACCEL_UNARY(Sin, kAllowFloat, std::sin(x))
ACCEL_UNARY(Cos, kAllowFloat, std::cos(x))
ACCEL_UNARY(Tan, kAllowFloat, std::tan(x))
ACCEL_UNARY(Tanh, kAllowFloat, std::tanh(x))
ACCEL_UNARY(Erf, kAllowFloat, std::erf(x))
ACCEL_UNARY(Floor, kAllowFloat, std::floor(x))
ACCEL_UNARY(Ceil, kAllowFloat, std::ceil(x))
ACCEL_UNARY(Round, kAllowFloat, std::nearbyint(x)) // half to even
ACCEL_UNARY(Sigmoid, kAllowFloat,
            x >= T(0) ? T(1) / (T(1) + std::exp(-x))
                      : std::exp(x) / (T(1) + std::exp(x)))
ACCEL_UNARY(Softplus, kAllowFloat,
            x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)))
ACCEL_UNARY(Softsign, kAllowFloat, x / (T(1) + std::fabs(x)))
ACCEL_UNARY(HardSwish, kAllowFloat,
            x * std::max(T(0), std::min(T(1), x / T(6) + T(0.5))))
ACCEL_UNARY(Mish, kAllowFloat,
            x * std::tanh(x > T(0) ? x + std::log1p(std::exp(-x))
                                   : std::log1p(std::exp(x))))
ACCEL_UNARY(Sinh, kAllowFloat, std::sinh(x))
ACCEL_UNARY(Cosh, kAllowFloat, std::cosh(x))
ACCEL_UNARY(Asin, kAllowFloat, std::asin(x))
ACCEL_UNARY(Acos, kAllowFloat, std::acos(x))
ACCEL_UNARY(Atan, kAllowFloat, std::atan(x))
ACCEL_UNARY(Asinh, kAllowFloat, std::asinh(x))
ACCEL_UNARY(Acosh, kAllowFloat, std::acosh(x))
ACCEL_UNARY(Atanh, kAllowFloat, std::atanh(x))
ACCEL_UNARY(Neg, kAllowNumeric, wrapSub(T(0), x))
ACCEL_UNARY(Relu, kAllowNumeric, x > T(0) ? x : T(0))
#undef ACCEL_UNARY

Status kAbs(KernelContext &ctx) {
  return setOut(ctx, unaryTensor<kAllowNumeric>(ctx, *ctx.in(0), [](auto x) {
    using T = decltype(x);
    if constexpr (isFloatT<T>)
      return std::fabs(x);
    else if constexpr (std::is_signed_v<T>)
      return x < 0 ? wrapSub(T(0), x) : x;
    else
      return x;
  }));
}

Status kSign(KernelContext &ctx) {
  return setOut(ctx, unaryTensor<kAllowNumeric>(ctx, *ctx.in(0), [](auto x) {
    using T = decltype(x);
    if constexpr (isFloatT<T>)
      if (std::isnan(x))
        return x;
    return x > T(0) ? T(1) : x < T(0) ? T(-1) : T(0);
  }));
}

template <bool Tanh> float geluF(float x) {
  if constexpr (Tanh)
    return 0.5f * x *
           (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
  else
    return 0.5f * x * (1.0f + std::erf(x * 0.7071067811865476f));
}
template <bool Tanh> double geluD(double x) {
  if constexpr (Tanh)
    return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  else
    return 0.5 * x * (1.0 + std::erf(x * 0.7071067811865476));
}
template <bool Tanh> StatusOr<Tensor> gelu(const KernelContext &ctx, const Tensor &x) {
  return unaryTensor<kAllowFloat>(ctx, x, [](auto v) {
    if constexpr (std::is_same_v<decltype(v), double>)
      return geluD<Tanh>(v);
    else
      return geluF<Tanh>(v);
  });
}

Status kGelu(KernelContext &ctx) {
  std::string approx = ctx.attrString("approximate", "none");
  if (approx == "none")
    return setOut(ctx, gelu<false>(ctx, *ctx.in(0)));
  if (approx == "tanh")
    return setOut(ctx, gelu<true>(ctx, *ctx.in(0)));
  return ctx.error("attribute 'approximate' must be \"none\" or \"tanh\", got \"" +
                   approx + "\"");
}

Status kLeakyRelu(KernelContext &ctx) {
  const double alpha = ctx.attrFloat("alpha", 0.01f);
  return setOut(ctx, unaryTensor<kAllowFloat>(ctx, *ctx.in(0), [&](auto x) {
    using T = decltype(x);
    return x >= T(0) ? x : T(alpha) * x;
  }));
}

Status kElu(KernelContext &ctx) {
  const double alpha = ctx.attrFloat("alpha", 1.0f);
  return setOut(ctx, unaryTensor<kAllowFloat>(ctx, *ctx.in(0), [&](auto x) {
    using T = decltype(x);
    return x >= T(0) ? x : T(alpha) * std::expm1(x);
  }));
}

Status kSelu(KernelContext &ctx) {
  const double alpha = ctx.attrFloat("alpha", 1.67326319217681884765625f);
  const double gamma = ctx.attrFloat("gamma", 1.05070102214813232421875f);
  return setOut(ctx, unaryTensor<kAllowFloat>(ctx, *ctx.in(0), [&](auto x) {
    using T = decltype(x);
    return T(gamma) * (x > T(0) ? x : T(alpha) * std::expm1(x));
  }));
}

Status kCelu(KernelContext &ctx) {
  const double alpha = ctx.attrFloat("alpha", 1.0f);
  return setOut(ctx, unaryTensor<kAllowFloat>(ctx, *ctx.in(0), [&](auto x) {
    using T = decltype(x);
    return std::max(T(0), x) + std::min(T(0), T(alpha) * std::expm1(x / T(alpha)));
  }));
}

Status kThresholdedRelu(KernelContext &ctx) {
  const double alpha = ctx.attrFloat("alpha", 1.0f);
  return setOut(ctx, unaryTensor<kAllowFloat>(ctx, *ctx.in(0), [&](auto x) {
    using T = decltype(x);
    return x > T(alpha) ? x : T(0);
  }));
}

Status kShrink(KernelContext &ctx) {
  const double bias = ctx.attrFloat("bias", 0.0f), lambd = ctx.attrFloat("lambd", 0.5f);
  return setOut(ctx, unaryTensor<kAllowNumeric>(ctx, *ctx.in(0), [&](auto x) {
    using T = decltype(x);
    const double v = double(x);
    return T(v < -lambd ? v + bias : v > lambd ? v - bias : 0.0);
  }));
}

/// Swish (opset 24): x * sigmoid(alpha * x).
Status kSwish(KernelContext &ctx) {
  const double alpha = ctx.attrFloat("alpha", 1.0f);
  return setOut(ctx, unaryTensor<kAllowFloat>(ctx, *ctx.in(0), [&](auto x) {
    using T = decltype(x);
    const T z = T(alpha) * x;
    return x * (z >= T(0) ? T(1) / (T(1) + std::exp(-z)) : std::exp(z) / (T(1) + std::exp(z)));
  }));
}

Status kHardSigmoid(KernelContext &ctx) {
  const double alpha = ctx.attrFloat("alpha", 0.2f), beta = ctx.attrFloat("beta", 0.5f);
  return setOut(ctx, unaryTensor<kAllowFloat>(ctx, *ctx.in(0), [&](auto x) {
    using T = decltype(x);
    return std::max(T(0), std::min(T(1), T(alpha) * x + T(beta)));
  }));
}

Status kNot(KernelContext &ctx) {
  return setOut(ctx, unaryTensor<kAllowBool>(ctx, *ctx.in(0), [](bool x) { return !x; }));
}

Status kBitwiseNot(KernelContext &ctx) {
  return setOut(ctx, unaryTensor<kAllowInt>(ctx, *ctx.in(0), [](auto x) {
    using T = decltype(x);
    return T(~x);
  }));
}

/// Floats in, booleans out (IsNaN, IsInf).
template <typename Pred>
Status floatPredicate(KernelContext &ctx, Pred pred) {
  const Tensor &x = *ctx.in(0);
  ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, x, kAllowFloat));
  Tensor w, out;
  ACCEL_RT_ASSIGN_OR_RETURN(w, widen(x));
  ACCEL_RT_ASSIGN_OR_RETURN(out, Tensor::allocate(DType::kI1, x.shape()));
  const int64_t n = x.numElements();
  bool *z = out.data<bool>();
  dispatchAllowed<kAllowFloat>(w.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *a = w.data<T>();
    for (int64_t i = 0; i < n; ++i)
      z[i] = pred(double(a[i]));
  });
  ctx.outputs[0] = std::move(out);
  return Status::ok();
}

Status kIsNaN(KernelContext &ctx) {
  return floatPredicate(ctx, [](double v) { return std::isnan(v); });
}

Status kIsInf(KernelContext &ctx) {
  const bool neg = ctx.attrInt("detect_negative", 1) != 0;
  const bool pos = ctx.attrInt("detect_positive", 1) != 0;
  return floatPredicate(ctx, [&](double v) {
    return std::isinf(v) && ((v > 0 && pos) || (v < 0 && neg));
  });
}

// ---------------------------------------------------------------------------
// Binary arithmetic.
// ---------------------------------------------------------------------------
Status kAdd(KernelContext &ctx) {
  return setOut(ctx, binaryTensor<kAllowNumeric, false>(
                         ctx, *ctx.in(0), *ctx.in(1),
                         [](auto a, auto b) { return wrapAdd(a, b); }));
}
Status kSub(KernelContext &ctx) {
  return setOut(ctx, binaryTensor<kAllowNumeric, false>(
                         ctx, *ctx.in(0), *ctx.in(1),
                         [](auto a, auto b) { return wrapSub(a, b); }));
}
Status kMul(KernelContext &ctx) {
  return setOut(ctx, binaryTensor<kAllowNumeric, false>(
                         ctx, *ctx.in(0), *ctx.in(1),
                         [](auto a, auto b) { return wrapMul(a, b); }));
}

/// Integer division and modulo by zero are errors, not undefined behaviour.
Status checkNoZeroDivisor(const KernelContext &ctx, const Tensor &b) {
  if (!isInteger(b.dtype()))
    return Status::ok();
  for (int64_t v : b.toInt64s())
    if (v == 0)
      return ctx.error("integer division by zero");
  return Status::ok();
}

Status kDiv(KernelContext &ctx) {
  ACCEL_RT_RETURN_IF_ERROR(checkNoZeroDivisor(ctx, *ctx.in(1)));
  return setOut(ctx, binaryTensor<kAllowNumeric, false>(
                         ctx, *ctx.in(0), *ctx.in(1), [](auto a, auto b) {
                           using T = decltype(a);
                           if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
                             if (b == T(-1))
                               return wrapSub(T(0), a); // MIN / -1 wraps
                           return T(a / b);
                         }));
}

Status kMod(KernelContext &ctx) {
  const bool fmod = ctx.attrInt("fmod", 0) != 0;
  const Tensor &a = *ctx.in(0), &b = *ctx.in(1);
  ACCEL_RT_RETURN_IF_ERROR(checkNoZeroDivisor(ctx, b));
  return setOut(ctx, binaryTensor<kAllowNumeric, false>(ctx, a, b, [&](auto x, auto y) {
    using T = decltype(x);
    if constexpr (isFloatT<T>) {
      T r = std::fmod(x, y);
      if (!fmod && r != 0 && ((r < 0) != (y < 0)))
        r += y; // numpy's mod: the sign of the divisor
      return r;
    } else if constexpr (std::is_signed_v<T>) {
      if (y == T(-1))
        return T(0);
      T r = T(x % y);
      if (!fmod && r != 0 && ((r < 0) != (y < 0)))
        r = T(r + y); // Python's %: the sign of the divisor
      return r;
    } else {
      return T(x % y);
    }
  }));
}

template <typename T> T intPow(T base, int64_t e) {
  if (e < 0) // only 1 and -1 have integer reciprocals
    return base == T(1) ? T(1)
           : (std::is_signed_v<T> && base == T(-1)) ? (e % 2 ? base : T(1))
                                                    : T(0);
  T r = T(1);
  while (e) {
    if (e & 1)
      r = wrapMul(r, base);
    base = wrapMul(base, base);
    e >>= 1;
  }
  return r;
}

Status kPow(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0), &y = *ctx.in(1);
  ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, x, kAllowNumeric));
  ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, y, kAllowNumeric));
  Shape shape;
  ACCEL_RT_ASSIGN_OR_RETURN(shape, broadcastShapes(ctx, {&x.shape(), &y.shape()}));
  Tensor wx, out;
  ACCEL_RT_ASSIGN_OR_RETURN(wx, widen(x));
  ACCEL_RT_ASSIGN_OR_RETURN(out, Tensor::allocate(wx.dtype(), shape));
  Status st;
  dispatchAllowed<kAllowNumeric>(wx.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (isFloatT<T>) {
      // The exponent in the base's compute type (f64 exponents keep f64).
      StatusOr<Tensor> wy = convertTo(y, dtypeOf<T>());
      if (!wy) {
        st = wy.status();
        return;
      }
      const Tensor &e = *wy;
      if (e.numElements() == 1 && (*e.data<T>() == T(2) || *e.data<T>() == T(0.5))) {
        const bool square = *e.data<T>() == T(2);
        broadcastBinary(shape, wx.shape(), wx.data<T>(), e.shape(), e.data<T>(),
                        out.data<T>(), [square](T a, T) {
                          return square ? a * a : std::sqrt(a);
                        });
        return;
      }
      broadcastBinary(shape, wx.shape(), wx.data<T>(), e.shape(), e.data<T>(),
                      out.data<T>(), [](T a, T b) { return std::pow(a, b); });
    } else {
      // Integer base: exact for integer exponents, truncated for float ones.
      StatusOr<Tensor> wy = convertTo(y, isFloat(y.dtype()) ? DType::kF64 : DType::kI64);
      if (!wy) {
        st = wy.status();
        return;
      }
      if (isFloat(y.dtype()))
        broadcastBinary(shape, wx.shape(), wx.data<T>(), wy->shape(),
                        wy->template data<double>(), out.data<T>(), [](T a, double b) {
                          double r = std::pow(double(a), b);
                          return std::isfinite(r) ? T(r) : T(0);
                        });
      else
        broadcastBinary(shape, wx.shape(), wx.data<T>(), wy->shape(),
                        wy->template data<int64_t>(), out.data<T>(),
                        [](T a, int64_t b) { return intPow(a, b); });
    }
  });
  ACCEL_RT_RETURN_IF_ERROR(st);
  return setOut(ctx, convertTo(out, x.dtype()));
}

Status kPRelu(KernelContext &ctx) {
  return setOut(ctx, binaryTensor<kAllowNumeric, false>(
                         ctx, *ctx.in(0), *ctx.in(1), [](auto x, auto slope) {
                           using T = decltype(x);
                           return x < T(0) ? wrapMul(slope, x) : x;
                         }));
}

#define ACCEL_BITWISE(NAME, OP)                                                \
  Status k##NAME(KernelContext &ctx) {                                         \
    return setOut(ctx, binaryTensor<kAllowInt, false>(                         \
                           ctx, *ctx.in(0), *ctx.in(1), [](auto a, auto b) {   \
                             using T = decltype(a);                            \
                             return T(a OP b);                                 \
                           }));                                                \
  }
ACCEL_BITWISE(BitwiseAnd, &)
ACCEL_BITWISE(BitwiseOr, |)
ACCEL_BITWISE(BitwiseXor, ^)
#undef ACCEL_BITWISE

// ---------------------------------------------------------------------------
// Variadic Max, Min, Sum, Mean.
// ---------------------------------------------------------------------------
template <typename Fn> Status foldVariadic(KernelContext &ctx, Fn fn, bool mean) {
  for (size_t i = 0; i < ctx.inputs.size(); ++i)
    if (!ctx.in(i))
      return ctx.error("input " + std::to_string(i) + " is missing");
  if (ctx.inputs.size() == 1) {
    ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, *ctx.in(0), kAllowNumeric));
    ctx.outputs[0] = *ctx.in(0);
    return Status::ok();
  }
  Tensor acc = *ctx.in(0);
  for (size_t i = 1; i < ctx.inputs.size(); ++i) {
    StatusOr<Tensor> next = binaryTensor<kAllowNumeric, false>(ctx, acc, *ctx.in(i), fn);
    if (!next)
      return next.status();
    acc = std::move(next).value();
  }
  if (mean) {
    const double n = double(ctx.inputs.size());
    StatusOr<Tensor> m = unaryTensor<kAllowFloat>(ctx, acc, [n](auto v) {
      using T = decltype(v);
      return T(v / T(n));
    });
    if (!m)
      return m.status();
    acc = std::move(m).value();
  }
  ctx.outputs[0] = std::move(acc);
  return Status::ok();
}

Status kMax(KernelContext &ctx) {
  return foldVariadic(ctx, [](auto a, auto b) {
    using T = decltype(a);
    if constexpr (isFloatT<T>)
      if (std::isnan(a) || std::isnan(b))
        return std::numeric_limits<T>::quiet_NaN();
    return a < b ? b : a;
  }, false);
}
Status kMin(KernelContext &ctx) {
  return foldVariadic(ctx, [](auto a, auto b) {
    using T = decltype(a);
    if constexpr (isFloatT<T>)
      if (std::isnan(a) || std::isnan(b))
        return std::numeric_limits<T>::quiet_NaN();
    return b < a ? b : a;
  }, false);
}
Status kSum(KernelContext &ctx) {
  return foldVariadic(ctx, [](auto a, auto b) { return wrapAdd(a, b); }, false);
}
Status kMean(KernelContext &ctx) {
  return foldVariadic(ctx, [](auto a, auto b) { return wrapAdd(a, b); }, true);
}

// ---------------------------------------------------------------------------
// Comparison and logic: booleans out.
// ---------------------------------------------------------------------------
#define ACCEL_COMPARE(NAME, ALLOW, EXPR)                                       \
  Status k##NAME(KernelContext &ctx) {                                         \
    return setOut(ctx, binaryTensor<ALLOW, true>(ctx, *ctx.in(0), *ctx.in(1),  \
                                                 [](auto a, auto b) {          \
                                                   return bool(EXPR);          \
                                                 }));                          \
  }
ACCEL_COMPARE(Equal, kAllowAll, a == b)
ACCEL_COMPARE(Greater, kAllowNumeric, a > b)
ACCEL_COMPARE(GreaterOrEqual, kAllowNumeric, a >= b)
ACCEL_COMPARE(Less, kAllowNumeric, a < b)
ACCEL_COMPARE(LessOrEqual, kAllowNumeric, a <= b)
ACCEL_COMPARE(And, kAllowBool, a && b)
ACCEL_COMPARE(Or, kAllowBool, a || b)
ACCEL_COMPARE(Xor, kAllowBool, a != b)
#undef ACCEL_COMPARE

// ---------------------------------------------------------------------------
// Where, Clip, Identity, Dropout.
// ---------------------------------------------------------------------------
template <typename T>
void whereTyped(const Shape &shape, const Tensor &c, const Tensor &x,
                const Tensor &y, Tensor &out) {
  const bool *pc = c.data<bool>();
  const T *px = x.data<T>(), *py = y.data<T>();
  T *pz = out.data<T>();
  forEachBroadcastRun<3>(shape, {&c.shape(), &x.shape(), &y.shape()},
                         [&](int64_t o, const int64_t *off, int64_t n,
                             const int64_t *st) {
                           const bool *cc = pc + off[0];
                           const T *xx = px + off[1], *yy = py + off[2];
                           T *zz = pz + o;
                           for (int64_t i = 0; i < n; ++i)
                             zz[i] = cc[i * st[0]] ? xx[i * st[1]] : yy[i * st[2]];
                         });
}

Status kWhere(KernelContext &ctx) {
  const Tensor &c = *ctx.in(0), &x = *ctx.in(1), &y = *ctx.in(2);
  if (c.dtype() != DType::kI1)
    return ctx.error("condition must be a boolean tensor, got " + c.describe());
  if (x.dtype() != y.dtype())
    return ctx.error("X and Y must have the same type, got " + x.describe() +
                     " and " + y.describe());
  Shape shape;
  ACCEL_RT_ASSIGN_OR_RETURN(shape,
                            broadcastShapes(ctx, {&c.shape(), &x.shape(), &y.shape()}));
  Tensor out;
  ACCEL_RT_ASSIGN_OR_RETURN(out, Tensor::allocate(x.dtype(), shape));
  switch (dtypeSize(x.dtype())) {
  case 1: whereTyped<uint8_t>(shape, c, x, y, out); break;
  case 2: whereTyped<uint16_t>(shape, c, x, y, out); break;
  case 4: whereTyped<uint32_t>(shape, c, x, y, out); break;
  default: whereTyped<uint64_t>(shape, c, x, y, out); break;
  }
  ctx.outputs[0] = std::move(out);
  return Status::ok();
}

Status kClip(KernelContext &ctx) {
  const Tensor &x = *ctx.in(0);
  ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, x, kAllowNumeric));
  // Bounds: inputs 1 and 2 (opset 11+) or attributes min/max (opset 6).
  double lo = -std::numeric_limits<double>::infinity(), hi = -lo;
  bool hasLo = false, hasHi = false;
  for (int k = 1; k <= 2; ++k) {
    const Tensor *b = ctx.in(size_t(k));
    if (!b)
      continue;
    if (b->dtype() != x.dtype())
      return ctx.error(std::string(k == 1 ? "min" : "max") + " must have the input's type " +
                       dtypeName(x.dtype()) + ", got " + b->describe());
    if (b->numElements() != 1)
      return ctx.error(std::string(k == 1 ? "min" : "max") + " must be a scalar, got " +
                       b->describe());
    (k == 1 ? lo : hi) = b->toDoubles()[0];
    (k == 1 ? hasLo : hasHi) = true;
  }
  if (!hasLo && ctx.hasAttr("min"))
    lo = ctx.attrFloat("min", 0), hasLo = true;
  if (!hasHi && ctx.hasAttr("max"))
    hi = ctx.attrFloat("max", 0), hasHi = true;
  return setOut(ctx, unaryTensor<kAllowNumeric>(ctx, x, [&](auto v) {
    using T = decltype(v);
    if constexpr (isFloatT<T>) {
      if (std::isnan(v))
        return v;
      if (hasLo && v < T(lo))
        v = T(lo);
      if (hasHi && v > T(hi))
        v = T(hi);
      return v;
    } else {
      // Integer bounds compared exactly in the input's own type.
      const T l = hasLo ? T(lo) : std::numeric_limits<T>::lowest();
      const T h = hasHi ? T(hi) : std::numeric_limits<T>::max();
      return v < l ? l : v > h ? h : v;
    }
  }));
}

Status kIdentity(KernelContext &ctx) {
  ctx.outputs[0] = *ctx.in(0);
  return Status::ok();
}

/// Inference: Y = X; the optional mask is all true.
Status kDropout(KernelContext &ctx) {
  const Tensor *ratio = ctx.in(1), *training = ctx.in(2);
  const bool train = training && training->numElements() == 1 && training->toInt64s()[0] != 0;
  const bool zeroRatio = ratio && ratio->numElements() == 1 && ratio->toDoubles()[0] == 0.0;
  if (train && !zeroRatio)
    return ctx.unsupported("training_mode=true (random dropout) is not supported");
  ctx.outputs[0] = *ctx.in(0);
  if (ctx.wants(1))
    ctx.outputs[1] = Tensor::zeros(DType::kI1, ctx.in(0)->shape());
  if (ctx.wants(1)) {
    if (!ctx.outputs[1].defined())
      return ctx.error("out of memory for the mask");
    std::memset(ctx.outputs[1].rawData(), 1, ctx.outputs[1].byteSize());
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------
// com.microsoft activations.
// ---------------------------------------------------------------------------
/// FastGelu(X, bias?) and BiasGelu(A, B): gelu of X (+ bias).
template <bool Tanh> Status biasedGelu(KernelContext &ctx) {
  Tensor x = *ctx.in(0);
  if (const Tensor *bias = ctx.in(1)) {
    StatusOr<Tensor> sum = binaryTensor<kAllowFloat, false>(
        ctx, x, *bias, [](auto a, auto b) { return a + b; });
    if (!sum)
      return sum.status();
    x = std::move(sum).value();
  }
  return setOut(ctx, gelu<Tanh>(ctx, x));
}
Status kFastGelu(KernelContext &ctx) { return biasedGelu<true>(ctx); }
Status kBiasGelu(KernelContext &ctx) { return biasedGelu<false>(ctx); }
Status kMsGelu(KernelContext &ctx) { return setOut(ctx, gelu<false>(ctx, *ctx.in(0))); }

Status kQuickGelu(KernelContext &ctx) {
  const double alpha = ctx.attrFloat("alpha", 1.702f);
  return setOut(ctx, unaryTensor<kAllowFloat>(ctx, *ctx.in(0), [&](auto x) {
    using T = decltype(x);
    const T z = T(alpha) * x;
    return x * (z >= T(0) ? T(1) / (T(1) + std::exp(-z))
                          : std::exp(z) / (T(1) + std::exp(z)));
  }));
}

} // namespace

void addElementwiseKernels(KernelTable &t, KernelTable &ms) {
  for (auto [name, fn] : std::initializer_list<std::pair<const char *, KernelFn>>{
           {"Sqrt", kSqrt}, {"Reciprocal", kReciprocal}, {"Exp", kExp},
           {"Log", kLog}, {"Sin", kSin}, {"Cos", kCos}, {"Tan", kTan},
           {"Tanh", kTanh}, {"Erf", kErf}, {"Floor", kFloor}, {"Ceil", kCeil},
           {"Round", kRound}, {"Sigmoid", kSigmoid}, {"Softplus", kSoftplus},
           {"Softsign", kSoftsign}, {"HardSwish", kHardSwish}, {"Mish", kMish},
           {"Neg", kNeg}, {"Relu", kRelu}, {"Abs", kAbs}, {"Sign", kSign},
           {"Gelu", kGelu}, {"LeakyRelu", kLeakyRelu}, {"Elu", kElu},
           {"HardSigmoid", kHardSigmoid}, {"Not", kNot}, {"Sinh", kSinh},
           {"Cosh", kCosh}, {"Asin", kAsin}, {"Acos", kAcos}, {"Atan", kAtan},
           {"Asinh", kAsinh}, {"Acosh", kAcosh}, {"Atanh", kAtanh}, {"Selu", kSelu},
           {"Celu", kCelu}, {"ThresholdedRelu", kThresholdedRelu}, {"Shrink", kShrink},
           {"Swish", kSwish},
           {"BitwiseNot", kBitwiseNot}, {"IsNaN", kIsNaN}, {"IsInf", kIsInf},
           {"Identity", kIdentity}})
    t[name] = {fn, 1, 1, 1};
  for (auto [name, fn] : std::initializer_list<std::pair<const char *, KernelFn>>{
           {"Add", kAdd}, {"Sub", kSub}, {"Mul", kMul}, {"Div", kDiv},
           {"Mod", kMod}, {"Pow", kPow}, {"PRelu", kPRelu}, {"BitwiseAnd", kBitwiseAnd},
           {"BitwiseOr", kBitwiseOr}, {"BitwiseXor", kBitwiseXor},
           {"Equal", kEqual}, {"Greater", kGreater},
           {"GreaterOrEqual", kGreaterOrEqual}, {"Less", kLess},
           {"LessOrEqual", kLessOrEqual}, {"And", kAnd}, {"Or", kOr},
           {"Xor", kXor}})
    t[name] = {fn, 2, 2, 1};
  for (auto [name, fn] : std::initializer_list<std::pair<const char *, KernelFn>>{
           {"Max", kMax}, {"Min", kMin}, {"Sum", kSum}, {"Mean", kMean}})
    t[name] = {fn, 1, -1, 1};
  t["Where"] = {kWhere, 3, 3, 1};
  t["Clip"] = {kClip, 1, 3, 1};
  t["Dropout"] = {kDropout, 1, 3, 2};

  ms["Gelu"] = {kMsGelu, 1, 1, 1};
  ms["FastGelu"] = {kFastGelu, 1, 2, 1};
  ms["BiasGelu"] = {kBiasGelu, 2, 2, 1};
  ms["QuickGelu"] = {kQuickGelu, 1, 1, 1};
}

} // namespace accel::rt::onnx
