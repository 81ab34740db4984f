//===- FusionUtils.cpp - helpers shared by the fusion passes --------------===//
#include "FusionUtils.h"

#include "accel/Weights/Weights.h"
#include "accel/dialects/Onnx/OnnxOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cstring>

using namespace mlir;
using namespace accel;

static bool isFloatElement(Type type) {
  return type.isF32() || type.isF16() || type.isBF16();
}

ElementsAttr accel::fusion::getConstant(Value v, llvm::function_ref<bool(Type)> acceptElement) {
  auto c = v ? v.getDefiningOp<onnx::ConstantOp>() : nullptr;
  if (!c)
    return {};
  ElementsAttr value = c.getValueAttr();
  if (!value || !isa<DenseElementsAttr, DenseResourceElementsAttr>(value))
    return {};
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() || type != c.getType() ||
      !acceptElement(type.getElementType()))
    return {};
  return value;
}

ElementsAttr accel::fusion::getFloatConstant(Value v) { return getConstant(v, isFloatElement); }

std::optional<SmallVector<char>> accel::fusion::rawBytes(ElementsAttr attr, size_t width,
                                                        int64_t count) {
  SmallVector<char> bytes;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    ArrayRef<char> raw = dense.getRawData();
    if (dense.isSplat()) {
      bytes.reserve(width * count);
      for (int64_t i = 0; i < count; ++i)
        bytes.append(raw.begin(), raw.begin() + width);
    } else {
      bytes.assign(raw.begin(), raw.end());
    }
    return bytes;
  }
  if (weights::isLazy(attr)) { // computed here, not cached
    std::optional<weights::Rows> rows = weights::rowsOf(attr);
    if (!rows || rows->bytes() != width * size_t(count))
      return std::nullopt;
    bytes.resize(rows->bytes());
    if (rows->rows)
      rows->produce(0, rows->rows, bytes.data());
    return bytes;
  }
  std::optional<ArrayRef<char>> data = weights::bytes(attr);
  if (!data || data->size() != width * size_t(count))
    return std::nullopt;
  bytes.assign(data->begin(), data->end());
  return bytes;
}

/// `loc` with `suffix` appended to its node name (a NameLoc), or `loc`.
static Location suffixed(Location loc, StringRef suffix) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return NameLoc::get(StringAttr::get(loc.getContext(),
                                        name.getName().str() + suffix.str()),
                        name.getChildLoc());
  return loc;
}

ElementsAttr accel::fusion::makeValue(MLIRContext *context, RankedTensorType type, bool resource,
                                     const std::string &key,
                                     const std::optional<SmallVector<char>> &bytes) {
  if (!resource && bytes)
    return DenseElementsAttr::getFromRawBuffer(type, *bytes);
  if (!bytes) {
    auto &manager = DenseResourceElementsHandle::getManagerInterface(context);
    return DenseResourceElementsAttr::get(type, manager.insert(key));
  }
  size_t width = type.getElementType().getIntOrFloatBitWidth() / 8;
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
      bytes->size(), std::max<size_t>(width, 64), /*dataIsMutable=*/true);
  if (!bytes->empty())
    std::memcpy(blob.getMutableData().data(), bytes->data(), bytes->size());
  return DenseResourceElementsAttr::get(type, key, std::move(blob));
}

FailureOr<Value> accel::fusion::concatConstants(RewriterBase &rewriter,
                                                ArrayRef<Value> parts,
                                                StringRef suffix) {
  if (parts.empty())
    return failure();
  SmallVector<ElementsAttr> attrs;
  for (Value part : parts) {
    ElementsAttr attr = getFloatConstant(part);
    if (!attr)
      return failure();
    attrs.push_back(attr);
  }
  auto first = cast<RankedTensorType>(attrs.front().getType());
  Type elem = first.getElementType();
  SmallVector<int64_t> shape(first.getShape());
  if (shape.empty())
    return failure();
  shape[0] = 0;
  bool anyResource = false;
  for (ElementsAttr attr : attrs) {
    auto type = cast<RankedTensorType>(attr.getType());
    if (type.getElementType() != elem || type.getRank() != first.getRank() ||
        type.getShape().drop_front() != first.getShape().drop_front())
      return failure();
    shape[0] += type.getDimSize(0);
    anyResource |= isa<DenseResourceElementsAttr>(attr);
  }
  auto type = RankedTensorType::get(shape, elem);
  size_t width = elem.getIntOrFloatBitWidth() / 8;
  std::string key;
  for (ElementsAttr attr : attrs)
    if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
      key = resource.getRawHandle().getKey().str();
      break;
    }
  Location loc = suffixed(parts.front().getLoc(), suffix);
  // Weights of a blob: concatenated when the plan writer reads them.
  if (anyResource && llvm::all_of(attrs, [](ElementsAttr a) { return weights::streamable(a); })) {
    ElementsAttr value = weights::concat(attrs, type, key + suffix.str());
    return onnx::ConstantOp::create(rewriter, loc, type, value, FloatAttr(), DenseF32ArrayAttr(),
                                    IntegerAttr(), DenseI64ArrayAttr())
        .getResult();
  }

  // The bytes, part after part; none when any part's blob is elided.
  std::optional<SmallVector<char>> bytes = SmallVector<char>();
  for (ElementsAttr attr : attrs) {
    auto partType = cast<RankedTensorType>(attr.getType());
    std::optional<SmallVector<char>> part =
        rawBytes(attr, width, partType.getNumElements());
    if (!part) {
      bytes.reset();
      break;
    }
    bytes->append(part->begin(), part->end());
  }

  ElementsAttr value = makeValue(rewriter.getContext(), type, anyResource, key + suffix.str(),
                                 bytes);
  auto constant = onnx::ConstantOp::create(rewriter, loc, type, value, FloatAttr(),
                                           DenseF32ArrayAttr(), IntegerAttr(),
                                           DenseI64ArrayAttr());
  return constant.getResult();
}

void accel::fusion::eraseIfDead(RewriterBase &rewriter, Value v) {
  Operation *op = v ? v.getDefiningOp() : nullptr;
  if (op && op->use_empty() && isMemoryEffectFree(op))
    rewriter.eraseOp(op);
}

FailureOr<Value> accel::fusion::insertZeros(RewriterBase &rewriter, Value v, int64_t axis,
                                            ArrayRef<std::pair<int64_t, int64_t>> inserts,
                                            StringRef suffix) {
  ElementsAttr attr = getFloatConstant(v);
  if (!attr)
    return failure();
  auto type = cast<RankedTensorType>(attr.getType());
  if (type.getRank() < 1 || type.getRank() > 2 || axis < 0 || axis >= type.getRank())
    return failure();
  const int64_t rows = type.getDimSize(0);
  const int64_t cols = type.getRank() == 2 ? type.getDimSize(1) : 1;
  const int64_t along = type.getDimSize(axis);
  int64_t added = 0, last = 0;
  for (auto [position, count] : inserts) {
    if (position < last || position > along || count < 0)
      return failure();
    last = position;
    added += count;
  }
  SmallVector<int64_t> shape(type.getShape());
  shape[size_t(axis)] += added;
  auto padded = RankedTensorType::get(shape, type.getElementType());
  const size_t width = type.getElementType().getIntOrFloatBitWidth() / 8;
  if (isa<DenseResourceElementsAttr>(attr) && weights::streamable(attr)) {
    // Padded when the plan writer reads it: each output row is a source row
    // with zeros inserted (axis 1), or a source row or zeros (axis 0).
    std::vector<std::pair<int64_t, int64_t>> ins(inserts.begin(), inserts.end());
    const size_t outRow = weights::rowBytes(padded);
    weights::RowFn produce = [attr, ins, axis, along, cols, width, outRow](int64_t b, int64_t e,
                                                                         char *out) {
      std::optional<weights::Rows> src = weights::rowsOf(attr);
      if (axis == 0) {
        // Output row → source row or -1 (zeros).
        for (int64_t r = b; r < e; ++r) {
          int64_t at = r, source = -1;
          int64_t from = 0;
          for (auto [position, count] : ins) {
            if (at < position - from) {
              source = from + at;
              break;
            }
            at -= position - from;
            from = position;
            if (at < count) {
              source = -2;
              break;
            }
            at -= count;
          }
          if (source == -1)
            source = from + at;
          char *dst = out + size_t(r - b) * outRow;
          if (source < 0 || source >= along) {
            std::memset(dst, 0, outRow);
            continue;
          }
          // A run of consecutive source rows in one call.
          int64_t run = 1;
          while (r + run < e && run < along - source) {
            // The next output row continues the run unless an insert starts.
            bool insertHere = false;
            for (auto [position, count] : ins)
              insertHere |= count > 0 && position == source + run;
            if (insertHere)
              break;
            ++run;
          }
          src->produce(source, source + run, dst);
          r += run - 1;
        }
        return;
      }
      // The source's rows [b, e) in one call, then zeros inserted in each.
      std::vector<char> rowsIn(size_t(e - b) * size_t(cols) * width);
      src->produce(b, e, rowsIn.data());
      for (int64_t r = b; r < e; ++r) {
        const char *row = rowsIn.data() + size_t(r - b) * size_t(cols) * width;
        char *dst = out + size_t(r - b) * outRow;
        int64_t from = 0;
        for (auto [position, count] : ins) {
          std::memcpy(dst, row + from * width, size_t(position - from) * width);
          dst += (position - from) * width;
          std::memset(dst, 0, size_t(count) * width);
          dst += count * width;
          from = position;
        }
        std::memcpy(dst, row + from * width, size_t(along - from) * width);
      }
    };
    std::string key = cast<DenseResourceElementsAttr>(attr).getRawHandle().getKey().str();
    ElementsAttr value = weights::lazy(padded, key + suffix.str(), std::move(produce), {attr});
    return onnx::ConstantOp::create(rewriter, suffixed(v.getLoc(), suffix), padded, value,
                                    FloatAttr(), DenseF32ArrayAttr(), IntegerAttr(),
                                    DenseI64ArrayAttr())
        .getResult();
  }
  std::optional<SmallVector<char>> bytes = rawBytes(attr, width, type.getNumElements());
  std::optional<SmallVector<char>> out;
  if (bytes) {
    out.emplace();
    out->reserve(size_t(padded.getNumElements()) * width);
    // Copies the source indices [from, to) of the padded axis, then `zeros`
    // zero slices, for one row (axis 1) or the whole tensor (axis 0).
    auto emit = [&](const char *base, int64_t stride, int64_t from, int64_t to, int64_t zeros) {
      out->append(base + from * stride, base + to * stride);
      out->append(size_t(zeros * stride), 0);
    };
    const int64_t outer = axis == 0 ? 1 : rows;
    const int64_t stride = axis == 0 ? cols * int64_t(width) : int64_t(width);
    for (int64_t o = 0; o < outer; ++o) {
      const char *base = bytes->data() + (axis == 0 ? 0 : o * cols * int64_t(width));
      int64_t from = 0;
      for (auto [position, count] : inserts) {
        emit(base, stride, from, position, count);
        from = position;
      }
      emit(base, stride, from, along, 0);
    }
  }
  const bool resource = isa<DenseResourceElementsAttr>(attr);
  std::string key =
      resource ? cast<DenseResourceElementsAttr>(attr).getRawHandle().getKey().str() : "";
  ElementsAttr value =
      makeValue(rewriter.getContext(), padded, resource, key + suffix.str(), out);
  auto constant = onnx::ConstantOp::create(rewriter, suffixed(v.getLoc(), suffix), padded, value,
                                           FloatAttr(), DenseF32ArrayAttr(), IntegerAttr(),
                                           DenseI64ArrayAttr());
  return constant.getResult();
}
