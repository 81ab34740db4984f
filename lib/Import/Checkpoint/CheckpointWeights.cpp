//===- CheckpointWeights.cpp - checkpoint tensors as weight constants -----===//
#include "CheckpointWeights.h"

#include "../WeightElements.h"

#include "accel/Weights/Weights.h"
#include "core/DType.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

#include <algorithm>
#include <cstring>
#include <functional>

using namespace mlir;
using namespace accel::import::ckpt;

namespace {
std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}
} // namespace

namespace {
/// A checked tensor's bytes as a source of f32 values, holding its mapping.
struct Source {
  enum Kind { F32, BF16, F16 } kind = F32;
  const char *data = nullptr;
  std::shared_ptr<const llvm::MemoryBuffer> owner;

  explicit Source(const accel::import::ckpt::StTensor &t)
      : kind(t.dtype == "F32" ? F32 : t.dtype == "BF16" ? BF16 : F16), data(t.bytes.data()),
        owner(t.owner) {}

  float at(int64_t i) const {
    if (kind == F32) {
      float f;
      std::memcpy(&f, data + i * 4, 4);
      return f;
    }
    uint16_t h;
    std::memcpy(&h, data + i * 2, 2);
    return kind == BF16 ? accel::rt::bf16ToF32(h) : accel::rt::f16ToF32(h);
  }
  size_t elementBytes() const { return kind == F32 ? 4 : 2; }
  /// Elements [from, from + n) into out; then hands the pages read back to
  /// the OS (a mapped file's, registered by weights::fromBytes), with the
  /// 64 KB before them that the kernel's fault-around may have mapped.
  void widen(int64_t from, int64_t n, float *out) const {
    if (kind == F32)
      std::memcpy(out, data + from * 4, size_t(n) * 4);
    else
      for (int64_t i = 0; i < n; ++i)
        out[i] = at(from + i);
    release(size_t(from) * elementBytes(), size_t(n) * elementBytes());
  }
  void release(size_t offset, size_t size) const {
    constexpr size_t kFaultAround = 64 << 10;
    const size_t lo = offset > kFaultAround ? offset - kFaultAround : 0;
    accel::weights::dropPages(data + lo, offset + size - lo);
  }
};

/// Writes the flat f32 elements [begin, end) of a weight.
using FlatFn = std::function<void(int64_t begin, int64_t end, float *out)>;

/// A weight whose values `flat` computes: inline when small, else a lazy
/// weight (accel/Weights) computed a band of rows at a time by the plan
/// writer, so that nothing the size of the tensor is held. `sources` are the
/// stored tensors it reads, made blobs over the mapped file so that the
/// writer drops their pages once read.
ElementsAttr computedWeight(RankedTensorType type, llvm::StringRef name, int64_t inlineBytes,
                            FlatFn flat,
                            llvm::ArrayRef<const accel::import::ckpt::StTensor *> sources) {
  const int64_t n = type.getNumElements();
  if (n * 4 <= inlineBytes) {
    std::vector<char> bytes(size_t(n) * 4);
    flat(0, n, reinterpret_cast<float *>(bytes.data()));
    return DenseElementsAttr::getFromRawBuffer(type, llvm::ArrayRef<char>(bytes));
  }
  std::vector<ElementsAttr> blobs;
  for (const accel::import::ckpt::StTensor *t : sources) {
    MLIRContext *ctx = type.getContext();
    Type et = t->dtype == "F32"    ? Type(Float32Type::get(ctx))
              : t->dtype == "BF16" ? Type(BFloat16Type::get(ctx))
                                   : Type(Float16Type::get(ctx));
    auto storedType = RankedTensorType::get({t->numElements}, et);
    const bool mapped = t->owner->getBufferKind() == llvm::MemoryBuffer::MemoryBuffer_MMap;
    blobs.push_back(accel::weights::fromBytes(storedType, (name + ".stored").str(), t->bytes,
                                              t->owner, size_t(t->elementBytes), mapped));
  }
  const int64_t rows = type.getRank() ? type.getDimSize(0) : 1;
  const int64_t rowLen = rows ? n / rows : 0;
  accel::weights::RowFn produce = [flat, rowLen](int64_t b, int64_t e, char *out) {
    flat(b * rowLen, e * rowLen, reinterpret_cast<float *>(out));
  };
  return accel::weights::lazy(type, name, std::move(produce), std::move(blobs));
}
} // namespace

const StTensor *CheckpointWeights::checked(llvm::StringRef name, llvm::ArrayRef<int64_t> stored,
                                           Location loc) {
  const StTensor *t = tensors_.find(name);
  if (!t) {
    emitError(loc) << "the checkpoint (" << tensors_.describe() << ") has no tensor '" << name
                   << "', which config.json implies";
    return nullptr;
  }
  if (t->dtype != "F32" && t->dtype != "BF16" && t->dtype != "F16") {
    emitError(loc) << t->file << ": tensor '" << name << "' has dtype " << t->dtype
                   << "; accel reads F32, BF16 and F16 weights";
    return nullptr;
  }
  if (llvm::ArrayRef<int64_t>(t->shape) != stored) {
    emitError(loc) << t->file << ": tensor '" << name << "' has shape " << shapeString(t->shape)
                   << " where config.json implies " << shapeString(stored);
    return nullptr;
  }
  return t;
}

Value CheckpointWeights::constant(Location loc, ElementsAttr value) {
  OperationState state(loc, "onnx.Constant");
  state.addAttribute("value", value);
  state.addTypes(value.getType());
  return b_.create(state)->getResult(0);
}

Value CheckpointWeights::get(llvm::StringRef name, llvm::ArrayRef<int64_t> shape, Location loc,
                             const WeightLayout &layout) {
  llvm::SmallVector<int64_t> stored(shape.begin(), shape.end());
  if (layout.transposed && stored.size() == 2)
    std::swap(stored[0], stored[1]);
  const StTensor *t = checked(name, stored, loc);
  if (!t)
    return {};
  auto type = RankedTensorType::get(shape, b_.getF32Type());
  const int64_t n = t->numElements;
  const bool asStored = t->dtype == "F32" && !layout.transposed && !layout.interleavedHeads &&
                        layout.scale == 1.0;
  ElementsAttr value;
  if (asStored && n * 4 > inlineBytes_) {
    value = weightElements(type, name, t->bytes, t->owner, 4,
                           t->owner->getBufferKind() == llvm::MemoryBuffer::MemoryBuffer_MMap);
  } else {
    // Widened, rearranged or scaled: computed by rows when the plan is
    // written (or now, when small enough to inline).
    const Source src(*t);
    const double scale = layout.scale;
    FlatFn flat;
    if (layout.transposed) {
      const int64_t rows = shape[0], cols = shape[1]; // out, in; stored [in, out]
      flat = [src, rows, cols](int64_t b, int64_t e, float *out) {
        for (int64_t j = b; j < e; ++j)
          out[j - b] = src.at((j % cols) * rows + j / cols);
        src.release(0, size_t(rows) * size_t(cols) * src.elementBytes());
      };
    } else if (layout.interleavedHeads) {
      // Rows [h][part][d] → [part][h][d]; a row is everything after dim 0.
      const int64_t heads = layout.interleavedHeads;
      const int64_t rowLen = shape.size() > 1 ? shape[1] : 1;
      const int64_t d = shape[0] / (3 * heads);
      flat = [src, heads, rowLen, d](int64_t b, int64_t e, float *out) {
        for (int64_t j = b; j < e;) {
          const int64_t dst = j / rowLen, c = j % rowLen;
          const int64_t i = dst % d, part = dst / (heads * d), h = (dst / d) % heads;
          const int64_t from = ((h * 3 + part) * d + i) * rowLen + c;
          const int64_t take = std::min(e - j, rowLen - c);
          src.widen(from, take, out + (j - b));
          j += take;
        }
      };
    } else {
      flat = [src](int64_t b, int64_t e, float *out) { src.widen(b, e - b, out); };
    }
    if (scale != 1.0)
      flat = [inner = std::move(flat), scale](int64_t b, int64_t e, float *out) {
        inner(b, e, out);
        for (int64_t i = 0; i < e - b; ++i)
          out[i] = float(double(out[i]) * scale);
      };
    value = computedWeight(type, name, inlineBytes_, std::move(flat), {t});
  }
  return constant(loc, value);
}

Value CheckpointWeights::concat(llvm::StringRef name, llvm::ArrayRef<std::string> parts,
                                llvm::ArrayRef<int64_t> partShape, llvm::ArrayRef<int64_t> shape,
                                llvm::function_ref<Location(llvm::StringRef)> locOf) {
  int64_t partElements = 1, total = 1;
  for (int64_t d : partShape)
    partElements *= d;
  for (int64_t d : shape)
    total *= d;
  if (partElements * int64_t(parts.size()) != total) {
    emitError(locOf(name)) << "internal: " << parts.size() << " tensors of " << shapeString(partShape)
                   << " do not make " << shapeString(shape);
    return {};
  }
  llvm::SmallVector<const StTensor *> tensors;
  for (const std::string &part : parts) {
    const StTensor *t = checked(part, partShape, locOf(part));
    if (!t)
      return {};
    tensors.push_back(t);
  }
  auto type = RankedTensorType::get(shape, b_.getF32Type());
  std::vector<Source> sources;
  for (const StTensor *t : tensors)
    sources.emplace_back(*t);
  FlatFn flat = [sources, partElements](int64_t b, int64_t e, float *out) {
    for (int64_t j = b; j < e;) {
      const int64_t part = j / partElements, k = j % partElements;
      const int64_t take = std::min(e - j, partElements - k);
      sources[size_t(part)].widen(k, take, out + (j - b));
      j += take;
    }
  };
  ElementsAttr value = computedWeight(type, name, inlineBytes_, std::move(flat), tensors);
  return constant(locOf(name), value);
}
