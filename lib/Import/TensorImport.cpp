//===- TensorImport.cpp - ONNX tensors to MLIR elements attributes --------===//
//
// Initializers and TENSOR attributes. Small tensors are inlined (readable,
// foldable); large ones become dense_resource blobs that reference bytes
// already in memory: the parsed protobuf's raw_data, or the mmap'd external
// file. The blob's deleter holds the owner alive, so nothing is copied.
//
//===----------------------------------------------------------------------===//
#include "ImportState.h"
#include "WeightElements.h"

#include "accel/Weights/Weights.h"
#include "accel/dialects/Onnx/OnnxTypes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "llvm/Support/MathExtras.h"

#include <cstring>
#include <limits>

using namespace mlir;
using namespace accel::import;

namespace {
/// ::onnx::TensorProto_DataType ids accel reads.
enum : int32_t {
  kFloat = 1, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6,
  kInt64 = 7, kString = 8, kBool = 9, kFloat16 = 10, kDouble = 11,
  kUint32 = 12, kUint64 = 13, kComplex64 = 14, kComplex128 = 15,
  kBfloat16 = 16, kF8E4M3FN = 17, kF8E4M3FNUZ = 18, kF8E5M2 = 19,
  kF8E5M2FNUZ = 20, kUint4 = 21, kInt4 = 22, kFloat4E2M1 = 23,
};

/// Bytes one element occupies in ONNX raw_data (0 for 4-bit types, which
/// pack two per byte).
int64_t rawElementBytes(int32_t dt) {
  switch (dt) {
  case kBool: case kUint8: case kInt8: case kF8E4M3FN: case kF8E4M3FNUZ:
  case kF8E5M2: case kF8E5M2FNUZ:
    return 1;
  case kUint16: case kInt16: case kFloat16: case kBfloat16:
    return 2;
  case kFloat: case kInt32: case kUint32:
    return 4;
  case kInt64: case kDouble: case kUint64:
    return 8;
  default:
    return 0;
  }
}
} // namespace

Type accel::import::convertElementType(MLIRContext *ctx, int32_t dt) {
  // One table of ONNX element types: the dialect's.
  return accel::onnx::convertOnnxDataType(ctx, dt);
}

std::string accel::import::elementTypeName(int32_t dt) {
  if (::onnx::TensorProto_DataType_IsValid(dt))
    return ::onnx::TensorProto_DataType_Name(static_cast<::onnx::TensorProto_DataType>(dt));
  return std::to_string(dt);
}

/// Builds an inline DenseElementsAttr from raw little-endian ONNX bytes.
static ElementsAttr inlineFromRaw(RankedTensorType type, int32_t dt,
                                  ArrayRef<char> bytes, int64_t count) {
  if (dt == kBool) {
    SmallVector<bool> values(count);
    for (int64_t i = 0; i < count; ++i)
      values[i] = bytes[i] != 0;
    return DenseElementsAttr::get(type, values);
  }
  if (dt == kInt4 || dt == kUint4) {
    // Two elements a byte, low nibble first.
    SmallVector<APInt> values;
    values.reserve(count);
    for (int64_t i = 0; i < count; ++i) {
      uint8_t byte = static_cast<uint8_t>(bytes[i / 2]);
      values.push_back(APInt(4, (i % 2) ? (byte >> 4) : (byte & 0xF)));
    }
    return DenseElementsAttr::get(type, values);
  }
  return DenseElementsAttr::getFromRawBuffer(type, bytes);
}

/// Copies the typed repeated fields of `t` into little-endian raw bytes.
static bool typedFieldsToRaw(const ::onnx::TensorProto &t, int32_t dt, int64_t count,
                             std::vector<char> &raw, std::string &why) {
  int64_t eb = rawElementBytes(dt);
  // The field must hold `count` values before anything is allocated: a
  // corrupt model can declare any dims with no data behind them.
  auto want = [&](int64_t have, const char *field) {
    if (have != count) {
      why = std::string(field) + " holds " + std::to_string(have) + " values for " +
            std::to_string(count) + " elements";
      return false;
    }
    raw.assign(size_t(count * (eb ? eb : 1)), 0);
    return true;
  };
  switch (dt) {
  case kFloat:
    if (!want(t.float_data_size(), "float_data")) return false;
    std::memcpy(raw.data(), t.float_data().data(), count * 4);
    return true;
  case kDouble:
    if (!want(t.double_data_size(), "double_data")) return false;
    std::memcpy(raw.data(), t.double_data().data(), count * 8);
    return true;
  case kInt64:
    if (!want(t.int64_data_size(), "int64_data")) return false;
    std::memcpy(raw.data(), t.int64_data().data(), count * 8);
    return true;
  case kUint32: case kUint64:
    if (!want(t.uint64_data_size(), "uint64_data")) return false;
    for (int64_t i = 0; i < count; ++i) {
      uint64_t v = t.uint64_data(i);
      std::memcpy(raw.data() + i * eb, &v, eb); // little endian: low bytes
    }
    return true;
  case kInt32: case kInt16: case kUint16: case kInt8: case kUint8: case kBool:
  case kFloat16: case kBfloat16: case kF8E4M3FN: case kF8E4M3FNUZ:
  case kF8E5M2: case kF8E5M2FNUZ:
    // int32_data holds each value (or its bit pattern) in the low bytes.
    if (!want(t.int32_data_size(), "int32_data")) return false;
    for (int64_t i = 0; i < count; ++i) {
      int32_t v = t.int32_data(i);
      std::memcpy(raw.data() + i * eb, &v, eb);
    }
    return true;
  case kInt4: case kUint4: {
    // int32_data holds the packed bytes, two values each (low nibble first),
    // one byte per entry: ceil(count / 2) entries.
    const int64_t bytes = (count + 1) / 2;
    if (t.int32_data_size() != bytes) {
      why = "int32_data holds " + std::to_string(t.int32_data_size()) + " packed bytes for " +
            std::to_string(count) + " 4-bit elements (" + std::to_string(bytes) + " expected)";
      return false;
    }
    raw.assign(size_t(bytes), 0);
    for (int64_t i = 0; i < bytes; ++i)
      raw[size_t(i)] = static_cast<char>(t.int32_data(int(i)) & 0xFF);
    return true;
  }
  default:
    why = "element type " + elementTypeName(dt) + " cannot be read from typed fields";
    return false;
  }
}

ElementsAttr accel::import::importTensor(ImportState &state,
                                         const ::onnx::TensorProto &t, Location loc) {
  MLIRContext *ctx = state.context;
  int32_t dt = t.data_type();
  Type elementType = convertElementType(ctx, dt);
  if (!elementType) {
    emitError(loc) << "tensor '" << t.name() << "' has element type "
                   << elementTypeName(dt) << ", which accel does not support";
    return {};
  }
  SmallVector<int64_t> shape;
  int64_t count = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) {
      emitError(loc) << "tensor '" << t.name() << "' has a negative dimension " << d;
      return {};
    }
    shape.push_back(d);
    // A corrupt model can claim any dims: the element count (and its size in
    // bytes, below) must not overflow.
    if (llvm::MulOverflow(count, d, count) ||
        count > std::numeric_limits<int64_t>::max() / 8) {
      emitError(loc) << "tensor '" << t.name() << "' has too many elements";
      return {};
    }
  }
  auto type = RankedTensorType::get(shape, elementType);
  int64_t eb = rawElementBytes(dt);
  bool packed4 = dt == kInt4 || dt == kUint4;
  if (eb == 0 && !packed4) {
    emitError(loc) << "tensor '" << t.name() << "' has element type "
                   << elementTypeName(dt) << ", whose data accel cannot read";
    return {};
  }
  int64_t expectBytes = packed4 ? (count + 1) / 2 : count * eb;

  // Locate the bytes and whoever owns them.
  ArrayRef<char> bytes;
  std::shared_ptr<const void> owner;
  std::vector<char> converted;
  bool fileBacked = false;
  if (t.data_location() == ::onnx::TensorProto_DataLocation_EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto &kv : t.external_data()) {
      if (kv.key() == "location")
        location = kv.value();
      else if (kv.key() == "offset" || kv.key() == "length") {
        char *end = nullptr;
        long long v = std::strtoll(kv.value().c_str(), &end, 10);
        if (kv.value().empty() || *end || v < 0) {
          emitError(loc) << "tensor '" << t.name() << "' has external data "
                         << kv.key() << " '" << kv.value() << "', not a byte count";
          return {};
        }
        (kv.key() == "offset" ? offset : length) = v;
      }
    }
    std::string why;
    std::shared_ptr<llvm::MemoryBuffer> file = state.externalData.open(location, why);
    if (!file) {
      emitError(loc) << "tensor '" << t.name() << "': " << why;
      return {};
    }
    if (length < 0)
      length = int64_t(file->getBufferSize()) - offset;
    if (offset > int64_t(file->getBufferSize()) ||
        length > int64_t(file->getBufferSize()) - offset) {
      emitError(loc) << "tensor '" << t.name() << "' reads bytes [" << offset << ", "
                     << offset + length << ") of external data file '" << location
                     << "', which has only " << file->getBufferSize() << " bytes";
      return {};
    }
    bytes = ArrayRef<char>(file->getBufferStart() + offset, length);
    fileBacked = file->getBufferKind() == llvm::MemoryBuffer::MemoryBuffer_MMap;
    owner = file;
  } else if (t.has_raw_data()) {
    bytes = ArrayRef<char>(t.raw_data().data(), t.raw_data().size());
    owner = state.model;
  } else if (count == 0) {
    bytes = {};
  } else {
    std::string why;
    if (!typedFieldsToRaw(t, dt, count, converted, why)) {
      emitError(loc) << "tensor '" << t.name() << "': " << why;
      return {};
    }
    bytes = converted;
  }
  if (int64_t(bytes.size()) != expectBytes) {
    emitError(loc) << "tensor '" << t.name() << "' of type " << type << " needs "
                   << expectBytes << " bytes of data but has " << bytes.size();
    return {};
  }

  if (expectBytes <= state.options.inlineConstantBytes || !owner || packed4 ||
      dt == kBool)
    return inlineFromRaw(type, dt, bytes, count);

  // A dense_resource blob over the owner's bytes (WeightElements.h).
  std::string name = t.name().empty() ? std::string("tensor") : t.name();
  unsigned &uses = state.blobNames[name];
  if (uses++)
    name += "_" + std::to_string(uses);
  return weightElements(type, name, bytes, std::move(owner), eb, fileBacked);
}
