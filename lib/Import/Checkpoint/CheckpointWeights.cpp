//===- CheckpointWeights.cpp - checkpoint tensors as weight constants -----===//
#include "CheckpointWeights.h"

#include "../WeightElements.h"

#include "core/DType.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

#include <cstring>

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
/// Element `i` of `t` as f32 (F32 as is, BF16/F16 widened).
float elementAt(const accel::import::ckpt::StTensor &t, int64_t i) {
  const char *p = t.bytes.data() + i * t.elementBytes;
  if (t.dtype == "F32") {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return t.dtype == "BF16" ? accel::rt::bf16ToF32(h) : accel::rt::f16ToF32(h);
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
    // Computed once: widened, rearranged or scaled (or small enough to inline).
    std::vector<char> bytes(size_t(n) * 4);
    float *out = reinterpret_cast<float *>(bytes.data());
    auto at = [&](int64_t i) { return elementAt(*t, i); };
    if (layout.transposed) {
      const int64_t rows = shape[0], cols = shape[1]; // out, in; stored [in, out]
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          out[r * cols + c] = at(c * rows + r);
    } else if (layout.interleavedHeads) {
      // Rows [h][part][d] → [part][h][d]; a row is everything after dim 0.
      const int64_t heads = layout.interleavedHeads;
      const int64_t rowLen = shape.size() > 1 ? shape[1] : 1;
      const int64_t d = shape[0] / (3 * heads);
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t part = 0; part < 3; ++part)
          for (int64_t i = 0; i < d; ++i) {
            const int64_t src = (h * 3 + part) * d + i, dst = (part * heads + h) * d + i;
            for (int64_t c = 0; c < rowLen; ++c)
              out[dst * rowLen + c] = at(src * rowLen + c);
          }
    } else {
      for (int64_t i = 0; i < n; ++i)
        out[i] = at(i);
    }
    if (layout.scale != 1.0)
      for (int64_t i = 0; i < n; ++i)
        out[i] = float(double(out[i]) * layout.scale);
    if (n * 4 <= inlineBytes_)
      value = DenseElementsAttr::getFromRawBuffer(type, llvm::ArrayRef<char>(bytes));
    else
      value = weightElements(type, name, std::move(bytes), 4);
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
  std::vector<char> bytes(size_t(total) * 4);
  float *out = reinterpret_cast<float *>(bytes.data());
  for (const StTensor *t : tensors) {
    if (t->dtype == "F32")
      std::memcpy(out, t->bytes.data(), size_t(partElements) * 4);
    else
      for (int64_t i = 0; i < partElements; ++i)
        out[i] = elementAt(*t, i);
    out += partElements;
  }
  ElementsAttr value;
  if (total * 4 <= inlineBytes_)
    value = DenseElementsAttr::getFromRawBuffer(type, llvm::ArrayRef<char>(bytes));
  else
    value = weightElements(type, name, std::move(bytes), 4);
  return constant(locOf(name), value);
}
