//===- KernelUtil.h - what every ONNX kernel file shares --------*- C++ -*-===//
//
// Internal to runtime/cpu/onnx: the kernel calling convention, attribute
// access, axis normalisation, numpy broadcasting and the registry each
// family file adds its kernels to.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_ONNX_KERNELUTIL_H
#define ACCEL_RUNTIME_CPU_ONNX_KERNELUTIL_H

#include "runtime/cpu/onnx/OnnxKernels.h"

#include <algorithm>
#include <cstring>
#include <array>
#include <optional>
#include <vector>

// ACCEL_RT_RETURN_IF_ERROR / ACCEL_RT_ASSIGN_OR_RETURN: core/Status.h.

namespace accel::rt::onnx {

/// What a kernel sees. Attribute getters return the default when the
/// attribute is absent; one of the wrong kind records an error that runOp
/// reports instead of the kernel's result.
class KernelContext {
public:
  KernelContext(std::string_view op, const AttrMap &attrs,
                const std::vector<const Tensor *> &inputs, size_t numOutputs,
                std::vector<Tensor> &outputs)
      : op(op), attrs(attrs), inputs(inputs), numOutputs(numOutputs),
        outputs(outputs) {}

  std::string_view op;
  const AttrMap &attrs;
  const std::vector<const Tensor *> &inputs;
  size_t numOutputs;
  std::vector<Tensor> &outputs;

  /// Input i, or nullptr when absent.
  const Tensor *in(size_t i) const {
    return i < inputs.size() ? inputs[i] : nullptr;
  }
  bool has(size_t i) const { return in(i) != nullptr; }
  /// Whether output i was asked for.
  bool wants(size_t i) const { return i < numOutputs; }

  bool hasAttr(std::string_view name) const;
  int64_t attrInt(std::string_view name, int64_t dflt);
  float attrFloat(std::string_view name, float dflt);
  std::string attrString(std::string_view name, std::string dflt);
  std::optional<std::vector<int64_t>> attrInts(std::string_view name);
  std::optional<std::vector<float>> attrFloats(std::string_view name);
  const Tensor *attrTensor(std::string_view name);
  Status attrStatus() const { return attrStatus_; }

  /// "<Op>: <msg>" as kInvalidArgument / kUnimplemented.
  Status error(const std::string &msg) const;
  Status unsupported(const std::string &msg) const;

private:
  void wrongKind(std::string_view name, const char *want);
  Status attrStatus_;
};

using KernelFn = Status (*)(KernelContext &);
struct KernelInfo {
  KernelFn fn;
  int minInputs, maxInputs; // maxInputs -1: variadic
  int maxOutputs;           // -1: variadic
};
using KernelTable = std::map<std::string, KernelInfo, std::less<>>;

// Each family file adds its kernels (domain "" unless named otherwise).
void addElementwiseKernels(KernelTable &onnx, KernelTable &microsoft);
void addCastKernels(KernelTable &onnx);
void addMatMulKernels(KernelTable &onnx);
void addReduceKernels(KernelTable &onnx);
void addShapeKernels(KernelTable &onnx);
void addSliceKernels(KernelTable &onnx); // called by addShapeKernels
void addGatherKernels(KernelTable &onnx);
void addNormKernels(KernelTable &onnx, KernelTable &microsoft);
void addAttentionKernels(KernelTable &onnx);
void addRotaryKernels(KernelTable &onnx);
void addMicrosoftRotaryKernel(KernelTable &microsoft);
void addMicrosoftAttentionKernels(KernelTable &microsoft);
void addQuantizeKernels(KernelTable &onnx);
void addGenerateKernels(KernelTable &onnx);
void addEinsumKernels(KernelTable &onnx);
void addMatMulNBitsKernel(KernelTable &microsoft);

// ---------------------------------------------------------------------------
// Helpers.
// ---------------------------------------------------------------------------

/// Maps a possibly negative axis into [0, rank); error names the op.
StatusOr<int64_t> normalizeAxis(const KernelContext &ctx, int64_t axis,
                                int64_t rank);
/// An optional input tensor or attribute as int64 values (axes, shapes).
std::vector<int64_t> int64Values(const Tensor &t);
/// Requires an integer tensor (int32/int64) and reads it.
StatusOr<std::vector<int64_t>> readIndexTensor(const KernelContext &ctx,
                                               const Tensor &t,
                                               const char *what);

/// astype that reports an allocation failure.
StatusOr<Tensor> convertTo(const Tensor &t, DType to, bool saturate = true);
/// f32 for the narrow floats, the tensor itself otherwise.
StatusOr<Tensor> widen(const Tensor &t);
/// The tensor's compute dtype: f32 for narrow floats, itself otherwise.
inline DType computeType(DType t) { return isNarrowFloat(t) ? DType::kF32 : t; }

/// numpy multidirectional broadcast of several shapes.
StatusOr<Shape> broadcastShapes(const KernelContext &ctx,
                                const std::vector<const Shape *> &shapes);

/// Element strides of `in` aligned to `out` (0 along broadcast dims).
std::vector<int64_t> broadcastStrides(const Shape &in, const Shape &out);

/// Walks an output of shape `out` in contiguous runs, with N inputs that
/// broadcast to it: body(outOffset, inOffsets, count, inInnerStrides), where
/// each inner stride is 0 (broadcast) or 1. Dims are coalesced first so runs
/// are as long as the layouts allow.
template <size_t N, typename F>
void forEachBroadcastRun(const Shape &out, const std::array<const Shape *, N> &ins,
                         F &&body) {
  int64_t total = 1;
  for (int64_t d : out)
    total *= d;
  if (total == 0)
    return;
  // Strides per input, then coalesce adjacent dims.
  std::vector<int64_t> dims;
  std::array<std::vector<int64_t>, N> strides;
  {
    std::array<std::vector<int64_t>, N> full;
    for (size_t k = 0; k < N; ++k)
      full[k] = broadcastStrides(*ins[k], out);
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] == 1)
        continue;
      bool merge = !dims.empty();
      for (size_t k = 0; merge && k < N; ++k) {
        int64_t prev = strides[k].back();
        merge = prev == full[k][i] * out[i];
      }
      if (merge) {
        dims.back() *= out[i];
        for (size_t k = 0; k < N; ++k)
          strides[k].back() = full[k][i];
      } else {
        dims.push_back(out[i]);
        for (size_t k = 0; k < N; ++k)
          strides[k].push_back(full[k][i]);
      }
    }
  }
  if (dims.empty()) {
    dims.push_back(1);
    for (size_t k = 0; k < N; ++k)
      strides[k].push_back(0);
  }
  const size_t r = dims.size();
  const int64_t inner = dims[r - 1];
  std::array<int64_t, N> innerStride, off{};
  for (size_t k = 0; k < N; ++k)
    innerStride[k] = strides[k][r - 1];
  std::vector<int64_t> idx(r, 0);
  for (int64_t o = 0; o < total; o += inner) {
    body(o, off.data(), inner, innerStride.data());
    // Advance the odometer over the outer dims.
    for (int64_t d = int64_t(r) - 2; d >= 0; --d) {
      if (++idx[d] < dims[d]) {
        for (size_t k = 0; k < N; ++k)
          off[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k)
        off[k] -= strides[k][d] * (dims[d] - 1);
      idx[d] = 0;
    }
  }
}

/// out[i] = f(a[i], b[i]) with broadcasting; `out` has shape `outShape`.
template <typename A, typename B, typename R, typename F>
void broadcastBinary(const Shape &outShape, const Shape &aShape, const A *a,
                     const Shape &bShape, const B *b, R *out, F f) {
  forEachBroadcastRun<2>(
      outShape, {&aShape, &bShape},
      [&](int64_t o, const int64_t *off, int64_t n, const int64_t *st) {
        const A *x = a + off[0];
        const B *y = b + off[1];
        R *z = out + o;
        if (st[0] && st[1]) {
          for (int64_t i = 0; i < n; ++i)
            z[i] = R(f(x[i], y[i]));
        } else if (st[1]) {
          const A x0 = x[0];
          for (int64_t i = 0; i < n; ++i)
            z[i] = R(f(x0, y[i]));
        } else if (st[0]) {
          const B y0 = y[0];
          for (int64_t i = 0; i < n; ++i)
            z[i] = R(f(x[i], y0));
        } else {
          const R v = R(f(x[0], y[0]));
          for (int64_t i = 0; i < n; ++i)
            z[i] = v;
        }
      });
}

/// Copies `src` (shape `from`, element size `elem`) broadcast to shape `to`.
void broadcastCopy(const void *src, const Shape &from, void *dst,
                   const Shape &to, size_t elem);

/// Permutes a contiguous tensor: out dim i is in dim perm[i].
void transposeBytes(const void *src, const Shape &inShape,
                    const std::vector<int64_t> &perm, void *dst, size_t elem);

/// Copies a strided view of `src` into the dense `dst` of `outShape`:
/// output index (i0, i1, ...) reads src[offset + sum(ik * stride[k])].
/// Transpose (permuted strides) and Slice (start offset, stepped strides)
/// are both this walk; rows with unit inner stride are memcpy'd.
template <typename T>
void copyStridedView(const T *src, int64_t offset, const std::vector<int64_t> &stride,
                     const Shape &outShape, T *dst) {
  const size_t r = outShape.size();
  int64_t total = 1;
  for (int64_t d : outShape)
    total *= d;
  if (total == 0)
    return;
  if (r == 0) {
    dst[0] = src[offset];
    return;
  }
  const int64_t inner = outShape[r - 1], innerSt = stride[r - 1];
  std::vector<int64_t> idx(r, 0);
  int64_t off = offset;
  for (int64_t o = 0; o < total; o += inner) {
    const T *s = src + off;
    T *d = dst + o;
    if (innerSt == 1)
      std::memcpy(d, s, size_t(inner) * sizeof(T));
    else
      for (int64_t i = 0; i < inner; ++i)
        d[i] = s[i * innerSt];
    for (int64_t k = int64_t(r) - 2; k >= 0; --k) {
      if (++idx[size_t(k)] < outShape[size_t(k)]) {
        off += stride[size_t(k)];
        break;
      }
      off -= stride[size_t(k)] * (outShape[size_t(k)] - 1);
      idx[size_t(k)] = 0;
    }
  }
}

} // namespace accel::rt::onnx

#endif // ACCEL_RUNTIME_CPU_ONNX_KERNELUTIL_H
