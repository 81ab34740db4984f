//===- OnnxDialect.cpp - the onnx dialect ---------------------------------===//
#include "accel/dialects/Onnx/OnnxDialect.h"
#include "accel/dialects/Onnx/OnnxOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace accel::onnx;

#include "dialects/Onnx/OnnxDialect.cpp.inc"
#include "dialects/Onnx/OnnxEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dialects/Onnx/OnnxAttrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "dialects/Onnx/OnnxTypes.cpp.inc"

void OnnxDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Onnx/OnnxOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Onnx/OnnxAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/Onnx/OnnxTypes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Function argument and result attributes
//===----------------------------------------------------------------------===//

/// Verifies `onnx.name` (the ONNX graph input/output name, a string) and
/// `onnx.dim_params` (the only other onnx attribute a function argument or
/// result may carry) on the value #`index` of type `type` (null when the op
/// is not a function and the type is unknown). `what` is "argument" or
/// "result".
static LogicalResult verifyDimParams(Operation *op, StringRef what,
                                     unsigned index, Type type,
                                     NamedAttribute attr) {
  if (attr.getName() == OnnxDialect::kNameAttrName) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitOpError() << "'" << OnnxDialect::kNameAttrName << "' on "
                               << what << " #" << index << " must be a string";
    return success();
  }
  if (attr.getName() != OnnxDialect::kDimParamsAttrName)
    return op->emitOpError()
           << what << " #" << index << " has unknown attribute '"
           << attr.getName().getValue() << "'";
  auto names = dyn_cast<ArrayAttr>(attr.getValue());
  if (!names || !llvm::all_of(names, llvm::IsaPred<StringAttr>))
    return op->emitOpError()
           << "'" << OnnxDialect::kDimParamsAttrName << "' on " << what << " #"
           << index << " must be an array of strings";
  if (!type)
    return success();
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return op->emitOpError()
           << "'" << OnnxDialect::kDimParamsAttrName << "' on " << what << " #"
           << index << " requires a ranked tensor, got " << type;
  if (static_cast<int64_t>(names.size()) != tensor.getRank())
    return op->emitOpError()
           << "'" << OnnxDialect::kDimParamsAttrName << "' on " << what << " #"
           << index << " has " << names.size() << " entries for rank "
           << tensor.getRank();
  for (auto [dim, name] : llvm::enumerate(names.getAsValueRange<StringAttr>()))
    if (!name.empty() && !tensor.isDynamicDim(dim))
      return op->emitOpError()
             << "'" << OnnxDialect::kDimParamsAttrName << "' on " << what
             << " #" << index << " names static dim " << dim << " (of size "
             << tensor.getDimSize(dim) << ") '" << name << "'";
  return success();
}

LogicalResult OnnxDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  Type type;
  if (auto fn = dyn_cast<FunctionOpInterface>(op)) {
    type = fn.getArgumentTypes()[argIndex];
  } else {
    Region &region = op->getRegion(regionIndex);
    if (!region.empty())
      type = region.getArgument(argIndex).getType();
  }
  return verifyDimParams(op, "argument", argIndex, type, attr);
}

LogicalResult OnnxDialect::verifyRegionResultAttribute(Operation *op,
                                                       unsigned regionIndex,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  Type type;
  if (auto fn = dyn_cast<FunctionOpInterface>(op))
    type = fn.getResultTypes()[resultIndex];
  return verifyDimParams(op, "result", resultIndex, type, attr);
}
