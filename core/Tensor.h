//===- Tensor.h - a contiguous row-major tensor -----------------*- C++ -*-===//
//
// A dtype, a shape (int64 dims; rank 0 is a scalar) and a data pointer kept
// alive by a shared owner. A tensor either owns a 64-byte aligned allocation
// or views memory someone else owns (a weight blob, an mmap'd plan section)
// without copying it: the owner handle keeps that memory alive.
//
// Copying a Tensor is shallow: both copies share the data. Kernels never
// write to their inputs; use clone() for a private copy.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CORE_TENSOR_H
#define ACCEL_RUNTIME_CORE_TENSOR_H

#include "core/DType.h"
#include "core/Status.h"
#include "core/TypeDispatch.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace accel::rt {

using Shape = std::vector<int64_t>;

/// "[2, 3]"; "[]" for a scalar.
std::string shapeToString(const Shape &shape);
/// Product of the dims; fails on a negative dim or an int64 overflow.
StatusOr<int64_t> checkedNumElements(const Shape &shape);

class Tensor {
public:
  /// An undefined tensor: no data (defined() is false).
  Tensor() = default;

  /// Owned, 64-byte aligned, uninitialised storage. Fails on a negative dim,
  /// an overflowing element count, or when the allocation fails.
  static StatusOr<Tensor> allocate(DType dtype, Shape shape);
  /// Owned storage filled with zero bytes (0, +0.0, false). For shapes the
  /// caller knows are valid; on failure it returns an undefined tensor.
  static Tensor zeros(DType dtype, Shape shape);
  /// Views `data` without copying; `owner` (may be null) keeps it alive.
  /// Writing through a view of read-only memory is the caller's mistake.
  static Tensor view(DType dtype, Shape shape, const void *data,
                     std::shared_ptr<const void> owner);
  /// Copies `values` into a new tensor of dtypeOf<T>() (float -> f32,
  /// int64_t -> i64, bool -> i1, uint16_t -> ui16, ...). Fails when the
  /// shape does not hold values.size() elements.
  template <typename T>
  static StatusOr<Tensor> fromVector(Shape shape, const std::vector<T> &values);
  /// Converts `values` to `dtype` (as astype would), e.g. floats to bf16.
  static StatusOr<Tensor> fromDoubles(DType dtype, Shape shape,
                                      const std::vector<double> &values);
  /// A rank-0 tensor of dtypeOf<T>().
  template <typename T> static Tensor scalar(T value);

  bool defined() const { return data_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape &shape() const { return shape_; }
  int64_t rank() const { return int64_t(shape_.size()); }
  /// Dim `i`; negative i counts from the back. No bounds check.
  int64_t dim(int64_t i) const { return shape_[size_t(i < 0 ? i + rank() : i)]; }
  int64_t numElements() const { return numElements_; }
  size_t byteSize() const { return size_t(numElements_) * dtypeSize(dtype_); }
  /// "f32[2, 3]".
  std::string describe() const;

  void *rawData() { return data_; }
  const void *rawData() const { return data_; }
  /// The data as T. Unchecked: T must be the dtype's storage type (uint16_t
  /// for f16/bf16, uint8_t for f8, int8_t for i4, bool for i1).
  template <typename T> T *data() { return static_cast<T *>(data_); }
  template <typename T> const T *data() const {
    return static_cast<const T *>(data_);
  }
  const std::shared_ptr<const void> &owner() const { return owner_; }

  /// A new tensor holding these elements converted to `to`, with ONNX Cast
  /// semantics as the ONNX reference implements them: floats round to
  /// nearest even; f8 honours `saturate` (see DType.h); float -> integer
  /// truncates toward zero and wraps like an int64 narrowed to the target
  /// (-9.0 -> i4 7, 300.0 -> i8 44; NaN -> 0; beyond int64 saturates to it
  /// first); integer -> narrower integer wraps (i4/ui4 keep the low 4 bits);
  /// anything -> i1 is `!= 0`. Converting to the same dtype copies.
  /// Undefined tensor on allocation failure.
  Tensor astype(DType to, bool saturate = true) const;
  /// astype(kF32).
  Tensor toF32() const { return astype(DType::kF32); }
  /// A deep copy with its own storage.
  Tensor clone() const { return astype(dtype_); }
  /// The same data under another shape with the same element count (shares
  /// storage).
  StatusOr<Tensor> reshaped(Shape shape) const;

  /// Every element as double (exact for integers up to 2^53).
  std::vector<double> toDoubles() const;
  /// Every element as int64 (floats truncated); for shape and index tensors.
  std::vector<int64_t> toInt64s() const;
  /// Every element as float.
  std::vector<float> toFloats() const;

private:
  DType dtype_ = DType::kF32;
  Shape shape_;
  int64_t numElements_ = 0;
  void *data_ = nullptr;
  std::shared_ptr<const void> owner_;
};

// ---------------------------------------------------------------------------
// Template definitions.
// ---------------------------------------------------------------------------
template <typename T>
StatusOr<Tensor> Tensor::fromVector(Shape shape, const std::vector<T> &values) {
  StatusOr<int64_t> n = checkedNumElements(shape);
  if (!n)
    return n.status();
  if (*n != int64_t(values.size()))
    return invalidArgument("Tensor::fromVector: shape " + shapeToString(shape) +
                           " holds " + std::to_string(*n) + " elements, " +
                           std::to_string(values.size()) + " values given");
  StatusOr<Tensor> t = allocate(dtypeOf<T>(), std::move(shape));
  if (!t)
    return t;
  T *out = t->template data<T>();
  for (size_t i = 0; i < values.size(); ++i)
    out[i] = values[i];
  return t;
}

template <typename T> Tensor Tensor::scalar(T value) {
  Tensor t = zeros(dtypeOf<T>(), {});
  *t.data<T>() = value;
  return t;
}

} // namespace accel::rt

#endif // ACCEL_RUNTIME_CORE_TENSOR_H
