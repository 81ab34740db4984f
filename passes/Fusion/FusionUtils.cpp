//===- FusionUtils.cpp - helpers shared by the fusion passes --------------===//
#include "FusionUtils.h"

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
  auto resource = cast<DenseResourceElementsAttr>(attr);
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob || blob->getData().size() != width * size_t(count))
    return std::nullopt;
  ArrayRef<char> data = blob->getData();
  bytes.assign(data.begin(), data.end());
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

  ElementsAttr value;
  if (!anyResource) {
    value = DenseElementsAttr::getFromRawBuffer(type, *bytes);
  } else {
    std::string key;
    for (ElementsAttr attr : attrs)
      if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
        key = resource.getRawHandle().getKey().str();
        break;
      }
    key += suffix.str();
    if (bytes) {
      AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
          bytes->size(), std::max<size_t>(width, 64), /*dataIsMutable=*/true);
      std::memcpy(blob.getMutableData().data(), bytes->data(), bytes->size());
      value = DenseResourceElementsAttr::get(type, key, std::move(blob));
    } else {
      auto &manager =
          DenseResourceElementsHandle::getManagerInterface(rewriter.getContext());
      value = DenseResourceElementsAttr::get(type, manager.insert(key));
    }
  }
  Location loc = suffixed(parts.front().getLoc(), suffix);
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
