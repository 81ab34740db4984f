//===- KernelUtil.cpp - what every ONNX kernel file shares ----------------===//
#include "runtime/cpu/onnx/KernelUtil.h"

#include <cstring>

namespace accel::rt::onnx {

// ---------------------------------------------------------------------------
// KernelContext.
// ---------------------------------------------------------------------------
bool KernelContext::hasAttr(std::string_view name) const {
  return attrs.find(name) != attrs.end();
}

void KernelContext::wrongKind(std::string_view name, const char *want) {
  if (attrStatus_.isOk())
    attrStatus_ = invalidArgument(std::string(op) + ": attribute '" +
                                  std::string(name) + "' must be " + want);
}

int64_t KernelContext::attrInt(std::string_view name, int64_t dflt) {
  auto it = attrs.find(name);
  if (it == attrs.end())
    return dflt;
  if (auto *v = std::get_if<int64_t>(&it->second))
    return *v;
  wrongKind(name, "an integer");
  return dflt;
}

float KernelContext::attrFloat(std::string_view name, float dflt) {
  auto it = attrs.find(name);
  if (it == attrs.end())
    return dflt;
  if (auto *v = std::get_if<float>(&it->second))
    return *v;
  if (auto *v = std::get_if<int64_t>(&it->second))
    return float(*v);
  wrongKind(name, "a float");
  return dflt;
}

std::string KernelContext::attrString(std::string_view name, std::string dflt) {
  auto it = attrs.find(name);
  if (it == attrs.end())
    return dflt;
  if (auto *v = std::get_if<std::string>(&it->second))
    return *v;
  wrongKind(name, "a string");
  return dflt;
}

std::optional<std::vector<int64_t>> KernelContext::attrInts(std::string_view name) {
  auto it = attrs.find(name);
  if (it == attrs.end())
    return std::nullopt;
  if (auto *v = std::get_if<std::vector<int64_t>>(&it->second))
    return *v;
  if (auto *v = std::get_if<int64_t>(&it->second))
    return std::vector<int64_t>{*v};
  wrongKind(name, "a list of integers");
  return std::nullopt;
}

std::optional<std::vector<float>> KernelContext::attrFloats(std::string_view name) {
  auto it = attrs.find(name);
  if (it == attrs.end())
    return std::nullopt;
  if (auto *v = std::get_if<std::vector<float>>(&it->second))
    return *v;
  if (auto *v = std::get_if<float>(&it->second))
    return std::vector<float>{*v};
  wrongKind(name, "a list of floats");
  return std::nullopt;
}

const Tensor *KernelContext::attrTensor(std::string_view name) {
  auto it = attrs.find(name);
  if (it == attrs.end())
    return nullptr;
  if (auto *v = std::get_if<Tensor>(&it->second))
    return v;
  wrongKind(name, "a tensor");
  return nullptr;
}

Status KernelContext::error(const std::string &msg) const {
  return invalidArgument(std::string(op) + ": " + msg);
}
Status KernelContext::unsupported(const std::string &msg) const {
  return unimplemented(std::string(op) + ": " + msg);
}

// ---------------------------------------------------------------------------
// Helpers.
// ---------------------------------------------------------------------------
StatusOr<int64_t> normalizeAxis(const KernelContext &ctx, int64_t axis,
                                int64_t rank) {
  if (axis < -rank || axis >= rank)
    return ctx.error("axis " + std::to_string(axis) +
                     " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> int64Values(const Tensor &t) { return t.toInt64s(); }

StatusOr<std::vector<int64_t>> readIndexTensor(const KernelContext &ctx,
                                               const Tensor &t,
                                               const char *what) {
  if (t.dtype() != DType::kI64 && t.dtype() != DType::kI32)
    return ctx.error(std::string(what) + " must be int32 or int64, got " +
                     t.describe());
  return t.toInt64s();
}

StatusOr<Tensor> convertTo(const Tensor &t, DType to, bool saturate) {
  if (t.dtype() == to)
    return t;
  Tensor out = t.astype(to, saturate);
  if (!out.defined())
    return Status(StatusCode::kResourceExhausted,
                  "out of memory converting " + t.describe() + " to " +
                      dtypeName(to));
  return out;
}

StatusOr<Tensor> widen(const Tensor &t) {
  return convertTo(t, computeType(t.dtype()));
}

StatusOr<Shape> broadcastShapes(const KernelContext &ctx,
                                const std::vector<const Shape *> &shapes) {
  size_t rank = 0;
  for (const Shape *s : shapes)
    rank = std::max(rank, s->size());
  Shape out(rank, 1);
  for (const Shape *s : shapes) {
    size_t off = rank - s->size();
    for (size_t i = 0; i < s->size(); ++i) {
      int64_t d = (*s)[i], &o = out[off + i];
      if (d == o || d == 1)
        continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string all;
      for (const Shape *t : shapes)
        all += (all.empty() ? "" : " and ") + shapeToString(*t);
      return ctx.error("shapes " + all + " do not broadcast");
    }
  }
  return out;
}

std::vector<int64_t> broadcastStrides(const Shape &in, const Shape &out) {
  std::vector<int64_t> st(out.size(), 0);
  int64_t s = 1;
  size_t off = out.size() - in.size();
  for (size_t i = in.size(); i-- > 0;) {
    st[off + i] = in[i] == 1 ? 0 : s;
    s *= in[i];
  }
  return st;
}

namespace {
template <typename T>
void fillRun(void *dst, const void *src, int64_t n) {
  T v;
  std::memcpy(&v, src, sizeof(T));
  T *d = static_cast<T *>(dst);
  for (int64_t i = 0; i < n; ++i)
    d[i] = v;
}
} // namespace

void broadcastCopy(const void *src, const Shape &from, void *dst,
                   const Shape &to, size_t elem) {
  auto *s = static_cast<const char *>(src);
  auto *d = static_cast<char *>(dst);
  forEachBroadcastRun<1>(to, {&from}, [&](int64_t o, const int64_t *off,
                                          int64_t n, const int64_t *st) {
    if (st[0]) {
      std::memcpy(d + o * elem, s + off[0] * elem, size_t(n) * elem);
      return;
    }
    switch (elem) {
    case 1: fillRun<uint8_t>(d + o, s + off[0], n); break;
    case 2: fillRun<uint16_t>(d + o * 2, s + off[0] * 2, n); break;
    case 4: fillRun<uint32_t>(d + o * 4, s + off[0] * 4, n); break;
    default: fillRun<uint64_t>(d + o * 8, s + off[0] * 8, n); break;
    }
  });
}

namespace {
template <typename T>
void transposeTyped(const T *src, const Shape &inShape,
                    const std::vector<int64_t> &perm, T *dst) {
  const size_t r = inShape.size();
  std::vector<int64_t> inStride(r, 1);
  for (size_t i = r; i-- > 1;)
    inStride[i - 1] = inStride[i] * inShape[i];
  Shape outShape(r);
  std::vector<int64_t> st(r);
  for (size_t i = 0; i < r; ++i) {
    outShape[i] = inShape[size_t(perm[i])];
    st[i] = inStride[size_t(perm[i])];
  }
  copyStridedView(src, 0, st, outShape, dst);
}
} // namespace

void transposeBytes(const void *src, const Shape &inShape,
                    const std::vector<int64_t> &perm, void *dst, size_t elem) {
  switch (elem) {
  case 1:
    transposeTyped(static_cast<const uint8_t *>(src), inShape, perm,
                   static_cast<uint8_t *>(dst));
    break;
  case 2:
    transposeTyped(static_cast<const uint16_t *>(src), inShape, perm,
                   static_cast<uint16_t *>(dst));
    break;
  case 4:
    transposeTyped(static_cast<const uint32_t *>(src), inShape, perm,
                   static_cast<uint32_t *>(dst));
    break;
  default:
    transposeTyped(static_cast<const uint64_t *>(src), inShape, perm,
                   static_cast<uint64_t *>(dst));
    break;
  }
}

} // namespace accel::rt::onnx
