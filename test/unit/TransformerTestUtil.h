//===- TransformerTestUtil.h - helpers for the transformer-kernel tests ---===//
#ifndef ACCEL_TEST_UNIT_TRANSFORMERTESTUTIL_H
#define ACCEL_TEST_UNIT_TRANSFORMERTESTUTIL_H

#include "core/Tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#define TT_CONCAT_IMPL(a, b) a##b
#define TT_CONCAT(a, b) TT_CONCAT_IMPL(a, b)
/// `lhs = value of expr`, failing the test (and returning) on an error.
#define TT_ASSIGN(lhs, expr) TT_ASSIGN_IMPL(TT_CONCAT(_tt_s_, __LINE__), lhs, expr)
#define TT_ASSIGN_IMPL(tmp, lhs, expr)                                         \
  auto tmp = (expr);                                                           \
  ASSERT_TRUE(tmp.isOk()) << tmp.status().toString();                          \
  lhs = std::move(tmp).value()
#define TT_OK(expr)                                                            \
  do {                                                                         \
    ::accel::rt::Status _tt_st = (expr);                                       \
    ASSERT_TRUE(_tt_st.isOk()) << _tt_st.toString();                           \
  } while (0)

namespace tt {

using namespace accel::rt;

/// Deterministic pseudo-random floats in [lo, hi).
inline std::vector<float> randomFloats(size_t n, uint32_t seed, float lo = -1.0f,
                                       float hi = 1.0f) {
  std::vector<float> v(n);
  uint64_t x = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (float &e : v) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    e = lo + (hi - lo) * float(x >> 40) / float(1ull << 24);
  }
  return v;
}

inline Tensor f32(Shape s, const std::vector<float> &v) {
  return Tensor::fromVector<float>(std::move(s), v).value();
}
inline Tensor randomF32(Shape s, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return f32(std::move(s), randomFloats(size_t(n), seed, lo, hi));
}
inline Tensor i32(Shape s, const std::vector<int32_t> &v) {
  return Tensor::fromVector<int32_t>(std::move(s), v).value();
}
inline Tensor i64(Shape s, const std::vector<int64_t> &v) {
  return Tensor::fromVector<int64_t>(std::move(s), v).value();
}

/// Every element of `got` within `tol` (absolute, and relative above 1) of
/// `want`, shapes equal.
inline ::testing::AssertionResult allClose(const Tensor &got,
                                           const std::vector<float> &want,
                                           const Shape &shape, double tol = 1e-5) {
  if (got.shape() != shape)
    return ::testing::AssertionFailure() << "shape " << shapeToString(got.shape())
                                         << " != " << shapeToString(shape);
  std::vector<float> g = got.toFloats();
  if (g.size() != want.size())
    return ::testing::AssertionFailure() << "size " << g.size() << " != " << want.size();
  for (size_t i = 0; i < g.size(); ++i) {
    const double diff = std::fabs(double(g[i]) - double(want[i]));
    if (!(diff <= tol * std::max(1.0, std::fabs(double(want[i])))))
      return ::testing::AssertionFailure() << "element " << i << ": got " << g[i]
                                           << ", want " << want[i] << " (diff " << diff
                                           << ")";
  }
  return ::testing::AssertionSuccess();
}
inline ::testing::AssertionResult allClose(const Tensor &got, const Tensor &want,
                                           double tol = 1e-5) {
  return allClose(got, want.toFloats(), want.shape(), tol);
}

} // namespace tt

#endif // ACCEL_TEST_UNIT_TRANSFORMERTESTUTIL_H
