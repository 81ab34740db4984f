//===- AttributeImport.cpp - ONNX node attributes to MLIR -----------------===//
#include "ImportState.h"

using namespace mlir;
using namespace accel::import;

Attribute accel::import::importAttribute(ImportState &state,
                                         const ::onnx::AttributeProto &a, Location loc) {
  Builder b(state.context);
  if (!a.ref_attr_name().empty()) {
    emitError(loc) << "attribute '" << a.name() << "' refers to function attribute '"
                   << a.ref_attr_name() << "'; only attributes with values are supported";
    return {};
  }
  switch (a.type()) {
  case ::onnx::AttributeProto::INT:
    return b.getI64IntegerAttr(a.i());
  case ::onnx::AttributeProto::FLOAT:
    return b.getF32FloatAttr(a.f());
  case ::onnx::AttributeProto::STRING:
    return b.getStringAttr(a.s());
  case ::onnx::AttributeProto::INTS:
    return b.getDenseI64ArrayAttr(SmallVector<int64_t>(a.ints().begin(), a.ints().end()));
  case ::onnx::AttributeProto::FLOATS:
    return b.getDenseF32ArrayAttr(SmallVector<float>(a.floats().begin(), a.floats().end()));
  case ::onnx::AttributeProto::STRINGS: {
    SmallVector<Attribute> strings;
    for (const std::string &s : a.strings())
      strings.push_back(b.getStringAttr(s));
    return b.getArrayAttr(strings);
  }
  case ::onnx::AttributeProto::TENSOR:
    return importTensor(state, a.t(), loc);
  default:
    break;
  }
  std::string kind = ::onnx::AttributeProto_AttributeType_IsValid(a.type())
                         ? ::onnx::AttributeProto_AttributeType_Name(a.type())
                         : std::to_string(a.type());
  emitError(loc) << "attribute '" << a.name() << "' is of kind " << kind
                 << ", which accel does not support"
                 << (kind == "GRAPH" || kind == "GRAPHS"
                         ? " (control flow subgraphs cannot be compiled)"
                         : "");
  return {};
}
