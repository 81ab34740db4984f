//===- TensorConversion.cpp - MLIR elements attributes ↔ runtime tensors ---===//
#include "accel/Eval/Evaluator.h"
#include "accel/Weights/Weights.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace accel;

std::optional<rt::DType> eval::toDType(Type elementType) {
  std::string name;
  llvm::raw_string_ostream os(name);
  elementType.print(os);
  return rt::dtypeFromName(name);
}

static llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

llvm::Expected<rt::Tensor> eval::toTensor(ElementsAttr attr) {
  auto type = cast<ShapedType>(attr.getType());
  std::optional<rt::DType> dtype = toDType(type.getElementType());
  if (!dtype || !type.hasStaticShape()) {
    std::string t;
    llvm::raw_string_ostream os(t);
    os << type;
    return error("constant of type " + t + " has no runtime representation");
  }
  rt::Shape shape(type.getShape().begin(), type.getShape().end());

  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return error("dense_resource '" + resource.getRawHandle().getKey() +
                   "' has no data (it was elided when the IR was printed)");
    // A lazy weight (accel/Weights/Weights.h) is computed into a tensor of
    // its own, not cached: the evaluator frees it after its last use, so
    // that running a model (calibration) holds one weight at a time.
    if (weights::isLazy(attr)) {
      std::optional<weights::Rows> rows = weights::rowsOf(attr);
      rt::StatusOr<rt::Tensor> t = rt::Tensor::allocate(*dtype, shape);
      if (!t)
        return error(t.status().message());
      if (rows->bytes() != t->byteSize())
        return error("lazy weight '" + resource.getRawHandle().getKey() +
                     "' does not match its type");
      if (rows->rows)
        rows->produce(0, rows->rows, static_cast<char *>(t->rawData()));
      return std::move(*t);
    }
    ArrayRef<char> bytes = blob->getData();
    size_t want = size_t(type.getNumElements()) * rt::dtypeSize(*dtype);
    if (bytes.size() != want)
      return error("dense_resource '" + resource.getRawHandle().getKey() + "' holds " +
                   llvm::Twine(bytes.size()) + " bytes, its type needs " +
                   llvm::Twine(want));
    return rt::Tensor::view(*dtype, shape, bytes.data(), nullptr);
  }

  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return error("constant kind is not supported by the evaluator");
  rt::StatusOr<rt::Tensor> t = rt::Tensor::allocate(*dtype, shape);
  if (!t)
    return error(t.status().message());
  int64_t n = type.getNumElements();
  size_t eb = rt::dtypeSize(*dtype);
  Type et = type.getElementType();
  if (et.isInteger(1)) {
    bool *out = t->data<bool>();
    int64_t i = 0;
    for (bool b : dense.getValues<bool>())
      out[i++] = b;
  } else if (auto it = dyn_cast<IntegerType>(et); it && it.getWidth() < 8) {
    int8_t *out = t->data<int8_t>();
    int64_t i = 0;
    for (const APInt &v : dense.getValues<APInt>())
      out[i++] = int8_t(it.isUnsigned() ? v.getZExtValue() : v.getSExtValue());
  } else if (dense.isSplat()) {
    ArrayRef<char> raw = dense.getRawData();
    char *out = static_cast<char *>(t->rawData());
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(out + i * eb, raw.data(), eb);
  } else {
    ArrayRef<char> raw = dense.getRawData();
    if (raw.size() != size_t(n) * eb)
      return error("dense constant storage does not match its type");
    std::memcpy(t->rawData(), raw.data(), raw.size());
  }
  return std::move(*t);
}
