//===- KernelTestUtil.h - helpers for the ONNX kernel unit tests -*- C++ -*-===//
#ifndef ACCEL_TEST_UNIT_KERNELTESTUTIL_H
#define ACCEL_TEST_UNIT_KERNELTESTUTIL_H

#include "core/Tensor.h"
#include "runtime/cpu/onnx/OnnxKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace kt {

using namespace accel::rt;
using accel::rt::onnx::AttrMap;

inline Tensor F(Shape s, std::vector<float> v) {
  return Tensor::fromVector<float>(std::move(s), v).value();
}
inline Tensor I64(Shape s, std::vector<int64_t> v) {
  return Tensor::fromVector<int64_t>(std::move(s), v).value();
}
inline Tensor I32(Shape s, std::vector<int32_t> v) {
  return Tensor::fromVector<int32_t>(std::move(s), v).value();
}
inline Tensor B(Shape s, std::vector<bool> v) {
  return Tensor::fromVector<bool>(std::move(s), v).value();
}
inline Tensor D(DType t, Shape s, std::vector<double> v) {
  return Tensor::fromDoubles(t, std::move(s), v).value();
}
/// 0, 1, 2, ... as f32 (scaled).
inline Tensor iota(Shape s, float scale = 1.0f, float offset = 0.0f) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[size_t(i)] = float(i) * scale + offset;
  return F(std::move(s), v);
}
/// Deterministic pseudo-random floats in [-1, 1).
inline Tensor rnd(Shape s, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t x = seed * 2654435761u + 12345u;
  for (auto &e : v) {
    x = x * 1664525u + 1013904223u;
    e = float(x >> 8) / float(1 << 24) * 2.0f - 1.0f;
  }
  return F(std::move(s), v);
}

/// Runs an op; absent inputs are undefined Tensors. Returns the Status.
inline Status runStatus(const std::string &op, const AttrMap &attrs,
                        const std::vector<Tensor> &in, std::vector<Tensor> &out,
                        size_t nOut = 1, const std::string &domain = "") {
  std::vector<const Tensor *> ptrs;
  for (const Tensor &t : in)
    ptrs.push_back(t.defined() ? &t : nullptr);
  return onnx::runOp(op, domain, attrs, ptrs, nOut, out);
}

/// Runs an op that must succeed; returns its outputs.
inline std::vector<Tensor> run(const std::string &op, const AttrMap &attrs,
                               const std::vector<Tensor> &in, size_t nOut = 1,
                               const std::string &domain = "") {
  std::vector<Tensor> out;
  Status s = runStatus(op, attrs, in, out, nOut, domain);
  EXPECT_TRUE(s.isOk()) << op << ": " << s.toString();
  if (!s.isOk())
    out.assign(nOut, Tensor::zeros(DType::kF32, {0}));
  return out;
}
inline Tensor run1(const std::string &op, const AttrMap &attrs,
                   const std::vector<Tensor> &in) {
  return run(op, attrs, in, 1)[0];
}

/// The error message of an op that must fail.
inline std::string runError(const std::string &op, const AttrMap &attrs,
                            const std::vector<Tensor> &in, size_t nOut = 1) {
  std::vector<Tensor> out;
  Status s = runStatus(op, attrs, in, out, nOut);
  EXPECT_FALSE(s.isOk()) << op << " unexpectedly succeeded";
  return s.message();
}

inline ::testing::AssertionResult near(const Tensor &t, const Shape &shape,
                                       const std::vector<double> &want,
                                       double tol = 1e-5) {
  if (t.shape() != shape)
    return ::testing::AssertionFailure()
           << "shape " << shapeToString(t.shape()) << " != " << shapeToString(shape);
  std::vector<double> got = t.toDoubles();
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    const bool bothNan = std::isnan(got[i]) && std::isnan(want[i]);
    const double diff = std::fabs(got[i] - want[i]);
    if (!bothNan && !(got[i] == want[i]) &&
        !(diff <= tol * std::max(1.0, std::fabs(want[i]))))
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << got[i] << ", want " << want[i];
  }
  return ::testing::AssertionSuccess();
}
inline ::testing::AssertionResult nearTensor(const Tensor &t, const Tensor &want,
                                             double tol = 1e-5) {
  return near(t, want.shape(), want.toDoubles(), tol);
}

} // namespace kt

#endif // ACCEL_TEST_UNIT_KERNELTESTUTIL_H
