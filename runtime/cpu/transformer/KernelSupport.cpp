//===- KernelSupport.cpp - what the transformer kernels share -------------===//
#include "runtime/cpu/transformer/KernelSupport.h"

#include <cstring>

namespace accel::rt::cpu::transformer::detail {

Status opError(const char *op, const std::string &msg) {
  return invalidArgument(std::string(op) + ": " + msg);
}

Status opUnimplemented(const char *op, const std::string &msg) {
  return unimplemented(std::string(op) + ": " + msg);
}

bool isActivationType(DType t) {
  return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16;
}

Status requireActivation(const char *op, const char *what, const Tensor &t) {
  if (!t.defined())
    return opError(op, std::string(what) + " is missing");
  if (!isActivationType(t.dtype()))
    return opError(op, std::string(what) + " " + t.describe() +
                           " must be f32, f16 or bf16");
  return Status::ok();
}

Status requireRank(const char *op, const char *what, const Tensor &t,
                   int64_t rank) {
  if (t.rank() != rank)
    return opError(op, std::string(what) + " " + t.describe() + " must have rank " +
                           std::to_string(rank));
  return Status::ok();
}

StatusOr<Tensor> asF32(const char *op, const Tensor &t) {
  if (t.dtype() == DType::kF32)
    return t;
  Tensor c = t.astype(DType::kF32);
  if (!c.defined())
    return Status(StatusCode::kResourceExhausted,
                  std::string(op) + ": cannot allocate an f32 copy of " + t.describe());
  return c;
}

StatusOr<Tensor> newF32(const char *op, const Shape &shape) {
  StatusOr<Tensor> t = Tensor::allocate(DType::kF32, shape);
  if (!t)
    return opError(op, t.status().message());
  return t;
}

StatusOr<Tensor> fromF32(const char *op, Tensor t, DType to) {
  if (to == DType::kF32)
    return t;
  Tensor c = t.astype(to);
  if (!c.defined())
    return Status(StatusCode::kResourceExhausted,
                  std::string(op) + ": cannot allocate the " + dtypeName(to) +
                      " result");
  return c;
}

StatusOr<std::vector<int64_t>> readIndices(const char *op, const char *what,
                                           const Tensor &t) {
  if (t.dtype() != DType::kI32 && t.dtype() != DType::kI64)
    return opError(op, std::string(what) + " " + t.describe() + " must be i32 or i64");
  if (t.rank() != 1)
    return opError(op, std::string(what) + " " + t.describe() + " must have rank 1");
  std::vector<int64_t> v(size_t(t.numElements()));
  if (t.dtype() == DType::kI32) {
    const int32_t *p = t.data<int32_t>();
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = p[i];
  } else {
    const int64_t *p = t.data<int64_t>();
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = p[i];
  }
  return v;
}

void loadRow(DType dt, const void *src, int64_t n, float *dst, float scale) {
  switch (dt) {
  case DType::kF32: {
    const float *s = static_cast<const float *>(src);
    if (scale == 1.0f)
      std::memcpy(dst, s, size_t(n) * sizeof(float));
    else
      for (int64_t i = 0; i < n; ++i)
        dst[i] = s[i] * scale;
    return;
  }
  case DType::kF16: {
    const uint16_t *s = static_cast<const uint16_t *>(src);
    for (int64_t i = 0; i < n; ++i)
      dst[i] = f16ToF32(s[i]) * scale;
    return;
  }
  case DType::kBF16: {
    const uint16_t *s = static_cast<const uint16_t *>(src);
    for (int64_t i = 0; i < n; ++i)
      dst[i] = bf16ToF32(s[i]) * scale;
    return;
  }
  case DType::kF8E4M3FN: {
    const uint8_t *s = static_cast<const uint8_t *>(src);
    for (int64_t i = 0; i < n; ++i)
      dst[i] = f8E4M3FNToF32(s[i]) * scale;
    return;
  }
  case DType::kF8E5M2: {
    const uint8_t *s = static_cast<const uint8_t *>(src);
    for (int64_t i = 0; i < n; ++i)
      dst[i] = f8E5M2ToF32(s[i]) * scale;
    return;
  }
  default:
    for (int64_t i = 0; i < n; ++i)
      dst[i] = 0.0f;
    return;
  }
}

void storeRow(DType dt, const float *src, int64_t n, void *dst, float scale) {
  switch (dt) {
  case DType::kF32: {
    float *d = static_cast<float *>(dst);
    for (int64_t i = 0; i < n; ++i)
      d[i] = scale == 1.0f ? src[i] : src[i] / scale;
    return;
  }
  case DType::kF16: {
    uint16_t *d = static_cast<uint16_t *>(dst);
    for (int64_t i = 0; i < n; ++i)
      d[i] = f32ToF16(scale == 1.0f ? src[i] : src[i] / scale);
    return;
  }
  case DType::kBF16: {
    uint16_t *d = static_cast<uint16_t *>(dst);
    for (int64_t i = 0; i < n; ++i)
      d[i] = f32ToBf16(scale == 1.0f ? src[i] : src[i] / scale);
    return;
  }
  case DType::kF8E4M3FN: {
    uint8_t *d = static_cast<uint8_t *>(dst);
    for (int64_t i = 0; i < n; ++i)
      d[i] = f32ToF8E4M3FN(scale == 1.0f ? src[i] : src[i] / scale);
    return;
  }
  case DType::kF8E5M2: {
    uint8_t *d = static_cast<uint8_t *>(dst);
    for (int64_t i = 0; i < n; ++i)
      d[i] = f32ToF8E5M2(scale == 1.0f ? src[i] : src[i] / scale);
    return;
  }
  default:
    return;
  }
}

} // namespace accel::rt::cpu::transformer::detail
