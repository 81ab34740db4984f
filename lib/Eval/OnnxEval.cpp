//===- OnnxEval.cpp - run onnx dialect ops on the CPU ONNX kernels --------===//
//
// Every onnx op runs through rt::onnx::runOp: its name gives the ONNX op type
// and domain ("onnx.ms_X" is com.microsoft's X), optional operands and
// results are mapped back to ONNX's positional inputs and outputs through
// operandSegmentSizes / resultSegmentSizes, and attributes are converted to
// the kernels' AttrMap.
//
//===----------------------------------------------------------------------===//
#include "accel/Eval/Evaluator.h"

#include "runtime/cpu/onnx/OnnxKernels.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace accel;
using namespace accel::eval;

static llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

static llvm::Error convertAttr(Attribute a, rt::onnx::AttrValue &out) {
  if (auto i = dyn_cast<IntegerAttr>(a)) {
    out = int64_t(i.getValue().getSExtValue());
  } else if (auto f = dyn_cast<FloatAttr>(a)) {
    out = float(f.getValueAsDouble());
  } else if (auto s = dyn_cast<StringAttr>(a)) {
    out = s.getValue().str();
  } else if (auto is = dyn_cast<DenseI64ArrayAttr>(a)) {
    out = std::vector<int64_t>(is.asArrayRef().begin(), is.asArrayRef().end());
  } else if (auto fs = dyn_cast<DenseF32ArrayAttr>(a)) {
    out = std::vector<float>(fs.asArrayRef().begin(), fs.asArrayRef().end());
  } else if (auto arr = dyn_cast<ArrayAttr>(a)) {
    std::vector<std::string> strings;
    for (Attribute e : arr) {
      auto s = dyn_cast<StringAttr>(e);
      if (!s)
        return error("array attribute of non-strings");
      strings.push_back(s.getValue().str());
    }
    out = std::move(strings);
  } else if (auto e = dyn_cast<ElementsAttr>(a)) {
    llvm::Expected<rt::Tensor> t = toTensor(e);
    if (!t)
      return t.takeError();
    out = std::move(*t);
  } else {
    return error("attribute kind not supported by the evaluator");
  }
  return llvm::Error::success();
}

static llvm::Error runOnnxOp(Evaluator &, Operation *op,
                             ArrayRef<const rt::Tensor *> operands,
                             SmallVectorImpl<rt::Tensor> &outputs) {
  StringRef name = op->getName().getStringRef();
  name.consume_front("onnx.");
  std::string domain;
  if (name.consume_front("ms_"))
    domain = "com.microsoft";

  DictionaryAttr attrs = op->getAttrDictionary();
  // Positional inputs, with nullptr for absent optional ones.
  std::vector<const rt::Tensor *> inputs;
  if (auto seg = dyn_cast_or_null<DenseI32ArrayAttr>(attrs.get("operandSegmentSizes"))) {
    size_t next = 0;
    for (int32_t n : seg.asArrayRef()) {
      if (n == 0)
        inputs.push_back(nullptr);
      for (int32_t i = 0; i < n; ++i)
        inputs.push_back(operands[next++]);
    }
    while (!inputs.empty() && !inputs.back())
      inputs.pop_back();
  } else {
    inputs.assign(operands.begin(), operands.end());
  }
  // Positional outputs.
  SmallVector<int> resultPos; // result i → ONNX output index
  size_t numOutputs = op->getNumResults();
  if (auto seg = dyn_cast_or_null<DenseI32ArrayAttr>(attrs.get("resultSegmentSizes"))) {
    int pos = 0;
    for (int32_t n : seg.asArrayRef()) {
      for (int32_t i = 0; i < n; ++i)
        resultPos.push_back(pos++);
      if (n == 0)
        ++pos;
    }
    numOutputs = resultPos.empty() ? 0 : size_t(resultPos.back() + 1);
  } else {
    for (unsigned i = 0; i < op->getNumResults(); ++i)
      resultPos.push_back(int(i));
  }

  rt::onnx::AttrMap map;
  for (NamedAttribute a : attrs) {
    StringRef n = a.getName().getValue();
    if (n == "operandSegmentSizes" || n == "resultSegmentSizes")
      continue;
    rt::onnx::AttrValue v;
    if (llvm::Error e = convertAttr(a.getValue(), v))
      return error("attribute '" + n + "': " + llvm::toString(std::move(e)));
    map.emplace(n.str(), std::move(v));
  }

  std::vector<rt::Tensor> out;
  rt::Status s = rt::onnx::runOp(name, domain, map, inputs, numOutputs, out);
  if (!s.isOk())
    return error(s.message());
  for (int pos : resultPos) {
    if (size_t(pos) >= out.size() || !out[pos].defined())
      return error("the kernel did not produce output " + llvm::Twine(pos));
    outputs.push_back(std::move(out[pos]));
  }
  return llvm::Error::success();
}

/// onnx.Constant: the tensor of whichever value attribute it carries. Weight
/// blobs are viewed, not copied.
static llvm::Error runConstant(Evaluator &, Operation *op, ArrayRef<const rt::Tensor *>,
                               SmallVectorImpl<rt::Tensor> &outputs) {
  DictionaryAttr attrs = op->getAttrDictionary();
  if (auto value = dyn_cast_or_null<ElementsAttr>(attrs.get("value"))) {
    llvm::Expected<rt::Tensor> t = toTensor(value);
    if (!t)
      return t.takeError();
    outputs.push_back(std::move(*t));
    return llvm::Error::success();
  }
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type)
    return error("Constant without 'value' needs a ranked result type");
  std::vector<double> values;
  if (auto f = dyn_cast_or_null<FloatAttr>(attrs.get("value_float")))
    values = {f.getValueAsDouble()};
  else if (auto i = dyn_cast_or_null<IntegerAttr>(attrs.get("value_int")))
    values = {double(i.getValue().getSExtValue())};
  else if (auto fs = dyn_cast_or_null<DenseF32ArrayAttr>(attrs.get("value_floats")))
    values.assign(fs.asArrayRef().begin(), fs.asArrayRef().end());
  else if (auto is = dyn_cast_or_null<DenseI64ArrayAttr>(attrs.get("value_ints")))
    for (int64_t v : is.asArrayRef())
      values.push_back(double(v));
  else
    return error("Constant has no value attribute");
  std::optional<rt::DType> dtype = toDType(type.getElementType());
  if (!dtype)
    return error("Constant has an unsupported element type");
  rt::StatusOr<rt::Tensor> t = rt::Tensor::fromDoubles(
      *dtype, rt::Shape(type.getShape().begin(), type.getShape().end()), values);
  if (!t)
    return error(t.status().message());
  outputs.push_back(std::move(*t));
  return llvm::Error::success();
}

void registerOnnxEvaluators() {
  Evaluator::registerOp("onnx.*", runOnnxOp);
  Evaluator::registerOp("onnx.Constant", runConstant);
}
