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

namespace {
/// One AWQ / GPTQ linear's three tensors (copies: each holds its file's
/// mapping, so the plan writer can read them after the import).
struct QuantParts {
  StTensor qweight, qzeros, scales;
  bool hasZeros = true;
  int64_t out = 0, rowBegin = 0; // its rows in the stacked weight
};

int32_t word(const StTensor &t, int64_t i) {
  int32_t v;
  std::memcpy(&v, t.bytes.data() + i * 4, 4);
  return v;
}

/// The stored nibble for (out row n, in column k): AWQ packs 8 output
/// columns per int32 of a row of in_features in the order 0 2 4 6 1 3 5 7;
/// GPTQ packs 8 input rows per int32 of an output column, in order.
int awqNibble(const StTensor &packed, int64_t cols8, int64_t r, int64_t n) {
  static const int kPos[8] = {0, 4, 1, 5, 2, 6, 3, 7}; // column n % 8 is nibble kPos[n % 8]
  return int((uint32_t(word(packed, r * cols8 + n / 8)) >> (4 * kPos[n % 8])) & 15u);
}
int gptqWeightNibble(const StTensor &qweight, int64_t out, int64_t n, int64_t k) {
  return int((uint32_t(word(qweight, (k / 8) * out + n)) >> (4 * (k % 8))) & 15u);
}
int gptqZeroNibble(const StTensor &qzeros, int64_t out, int64_t g, int64_t n) {
  return int((uint32_t(word(qzeros, g * (out / 8) + n / 8)) >> (4 * (n % 8))) & 15u);
}

float f16At(const StTensor &t, int64_t i) {
  uint16_t h;
  std::memcpy(&h, t.bytes.data() + i * 2, 2);
  return t.dtype == "BF16" ? accel::rt::bf16ToF32(h) : accel::rt::f16ToF32(h);
}
} // namespace

std::optional<QuantWeight>
CheckpointWeights::quantized(llvm::StringRef name, llvm::ArrayRef<std::string> prefixes,
                             llvm::ArrayRef<int64_t> outs, int64_t in, const QuantConfig &q,
                             llvm::function_ref<Location(llvm::StringRef)> locOf) {
  const bool awq = q.method == "awq";
  const int64_t group = q.groupSize ? q.groupSize : in;
  if (in % group != 0) {
    emitError(locOf(prefixes.front())) << "quantization_config.group_size " << group
                                       << " does not divide the " << in << " input features";
    return std::nullopt;
  }
  const int64_t groups = in / group;
  std::vector<QuantParts> parts;
  int64_t total = 0;
  for (size_t i = 0; i < prefixes.size(); ++i) {
    const std::string &p = prefixes[i];
    const int64_t out = outs[i];
    if (out % 8 != 0) {
      emitError(locOf(p)) << "'" << p << "': " << out
                          << " output features are not a multiple of the 8 an int32 packs";
      return std::nullopt;
    }
    auto need = [&](const std::string &suffix, const char *dtype,
                    std::vector<int64_t> shape) -> const StTensor * {
      const std::string n = p + suffix;
      const StTensor *t = tensors_.find(n);
      if (!t) {
        emitError(locOf(p)) << "the checkpoint (" << tensors_.describe() << ") has no tensor '"
                            << n << "', which its " << q.method << " quantization_config implies";
        return nullptr;
      }
      const bool half = std::string(dtype) == "F16";
      if (!(t->dtype == dtype || (half && t->dtype == "BF16"))) {
        emitError(locOf(p)) << t->file << ": tensor '" << n << "' has dtype " << t->dtype
                            << " where " << q.method << " stores " << dtype;
        return nullptr;
      }
      if (t->shape != shape) {
        emitError(locOf(p)) << t->file << ": tensor '" << n << "' has shape "
                            << shapeString(t->shape) << " where " << q.method
                            << " and config.json imply " << shapeString(shape);
        return nullptr;
      }
      return t;
    };
    QuantParts qp;
    qp.out = out;
    qp.rowBegin = total;
    if (in % 8 != 0 && !awq) {
      emitError(locOf(p)) << "'" << p << "': " << in
                          << " input features are not a multiple of the 8 an int32 packs";
      return std::nullopt;
    }
    const StTensor *qw =
        awq ? need(".qweight", "I32", {in, out / 8}) : need(".qweight", "I32", {in / 8, out});
    if (!qw)
      return std::nullopt;
    qp.qweight = *qw;
    qp.hasZeros = !awq || q.zeroPoint;
    if (qp.hasZeros) {
      const StTensor *qz = need(".qzeros", "I32", {groups, out / 8});
      if (!qz)
        return std::nullopt;
      qp.qzeros = *qz;
    }
    const StTensor *sc = need(".scales", "F16", {groups, out});
    if (!sc)
      return std::nullopt;
    qp.scales = *sc;
    // Zero points must fit i4 once GPTQ v1's + 1 is applied.
    if (!awq && q.gptqV1)
      for (int64_t g = 0; g < groups; ++g)
        for (int64_t n = 0; n < out; ++n)
          if (gptqZeroNibble(qp.qzeros, out, g, n) == 15) {
            emitError(locOf(p)) << tensors_.describe() << ": '" << p
                                << ".qzeros' stores 15 (zero point 16 in GPTQ's format v1) at "
                                   "group "
                                << g << ", output " << n << ", outside 4 bits";
            return std::nullopt;
          }
    parts.push_back(qp);
    total += out;
  }
  MLIRContext *ctx = b_.getContext();
  auto i4 = IntegerType::get(ctx, 4);
  // The zero point (0..16 for GPTQ v1) of row n of `qp`, group g; values
  // are stored as i4: nibble - 8, zero point - 8.
  auto zeroAt = [awq, q](const QuantParts &qp, int64_t g, int64_t n) -> int {
    if (awq)
      return qp.hasZeros ? awqNibble(qp.qzeros, qp.out / 8, g, n) : 8;
    return gptqZeroNibble(qp.qzeros, qp.out, g, n) + (q.gptqV1 ? 1 : 0);
  };
  auto partOf = [parts](int64_t row) -> const QuantParts & {
    for (const QuantParts &qp : parts)
      if (row < qp.rowBegin + qp.out)
        return qp;
    return parts.back();
  };
  // Values: one row of in_features per output row.
  auto wType = RankedTensorType::get({total, in}, i4);
  accel::weights::RowFn wRows = [parts, partOf, awq, in](int64_t b, int64_t e, char *out) {
    for (int64_t row = b; row < e; ++row) {
      const QuantParts &qp = partOf(row);
      const int64_t n = row - qp.rowBegin;
      char *o = out + (row - b) * in;
      for (int64_t k = 0; k < in; ++k) {
        const int u = awq ? awqNibble(qp.qweight, qp.out / 8, k, n)
                          : gptqWeightNibble(qp.qweight, qp.out, n, k);
        o[k] = char(int8_t(u - 8));
      }
    }
  };
  // Scales and zero points: [rows, groups] (or [rows]).
  llvm::SmallVector<int64_t> sShape = groups > 1 ? llvm::SmallVector<int64_t>{total, groups}
                                                 : llvm::SmallVector<int64_t>{total};
  auto sType = RankedTensorType::get(sShape, b_.getF32Type());
  auto zType = RankedTensorType::get(sShape, i4);
  accel::weights::RowFn sRows = [partOf, groups](int64_t b, int64_t e, char *out) {
    for (int64_t row = b; row < e; ++row) {
      const QuantParts &qp = partOf(row);
      for (int64_t g = 0; g < groups; ++g) {
        const float v = f16At(qp.scales, g * qp.out + (row - qp.rowBegin));
        std::memcpy(out + ((row - b) * groups + g) * 4, &v, 4);
      }
    }
  };
  accel::weights::RowFn zRows = [partOf, zeroAt, groups](int64_t b, int64_t e, char *out) {
    for (int64_t row = b; row < e; ++row) {
      const QuantParts &qp = partOf(row);
      for (int64_t g = 0; g < groups; ++g)
        out[(row - b) * groups + g] = char(int8_t(zeroAt(qp, g, row - qp.rowBegin) - 8));
    }
  };
  // Small weights inline (so IR tests can read them), large ones lazy.
  auto make = [&](RankedTensorType type, const std::string &suffix, int64_t rowBytes,
                  const accel::weights::RowFn &rows) -> ElementsAttr {
    const int64_t nrows = type.getDimSize(0);
    if (nrows * rowBytes <= inlineBytes_) {
      std::vector<char> bytes(size_t(nrows * rowBytes));
      rows(0, nrows, bytes.data());
      if (type.getElementType().isF32())
        return DenseElementsAttr::getFromRawBuffer(type, llvm::ArrayRef<char>(bytes));
      llvm::SmallVector<llvm::APInt> v;
      for (char c : bytes)
        v.push_back(llvm::APInt(4, uint64_t(int64_t(int8_t(c))), true));
      return DenseElementsAttr::get(type, v);
    }
    return accel::weights::lazy(type, (name + suffix).str(), rows, {});
  };
  QuantWeight w;
  w.groupSize = groups > 1 ? group : 0;
  Location at = locOf(prefixes.front());
  w.weight = constant(at, make(wType, ".i4", in, wRows));
  w.scale = constant(at, make(sType, ".scale", groups * 4, sRows));
  w.zeroPoint = constant(at, make(zType, ".zp", groups, zRows));
  return w;
}
