//===- OnnxImporter.cpp - ONNX protobuf to the onnx dialect ---------------===//
//
// One op per node, in graph order; initializers become onnx.Constant; graph
// inputs and outputs become the function's arguments and results, with the
// names of symbolic dims kept in `onnx.dim_params`. Model-local functions
// (FunctionProto) are inlined at their call sites. Every error is located at
// the node or tensor it is about.
//
//===----------------------------------------------------------------------===//
#include "accel/Import/OnnxImporter.h"

#include "ImportState.h"
#include "OperandSegments.h"

#include "accel/dialects/Onnx/OnnxDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/coded_stream.h>

#include <limits>

using namespace mlir;
using namespace accel;
using namespace accel::import;

Location ImportState::nodeLoc(StringRef name, int index) const {
  auto file = FileLineColLoc::get(context, modelPath, index < 0 ? 0 : index, 0);
  return NameLoc::get(StringAttr::get(context, name), file);
}

namespace {

/// The ONNX opsets of the default domain accel accepts.
constexpr int64_t kMinOpset = 13, kMaxOpset = 23;
/// The most nodes that inlining model-local functions may create.
constexpr int64_t kMaxInlinedNodes = 1 << 20;

class GraphImporter {
public:
  GraphImporter(ImportState &state, OpBuilder &builder)
      : state_(state), b_(builder) {}

  LogicalResult importModel(ModuleOp module);

private:
  struct Scope {
    llvm::StringMap<Value> values;
    llvm::StringMap<const ::onnx::TypeProto *> types;
    const Scope *parent = nullptr;
    Value lookup(StringRef name) const {
      for (const Scope *s = this; s; s = s->parent) {
        auto it = s->values.find(name);
        if (it != s->values.end())
          return it->second;
      }
      return {};
    }
  };

  Type convertType(const ::onnx::TypeProto &type, Location loc);
  LogicalResult importNode(const ::onnx::NodeProto &node, int index, Scope &scope,
                           const google::protobuf::RepeatedPtrField<
                               ::onnx::AttributeProto> *callerAttrs);
  LogicalResult inlineFunction(const ::onnx::FunctionProto &fn,
                               const ::onnx::NodeProto &call, int index, Scope &scope);
  Type fallbackResultType(StringRef opType, ArrayRef<Value> operands,
                          ArrayRef<NamedAttribute> attrs, unsigned resultIndex);
  /// The node's name; inside an inlined function, prefixed by the graph
  /// node that called it, so that diagnostics point into the graph.
  std::string nodeName(const ::onnx::NodeProto &node, int index) const {
    std::string own = node.name().empty() ? node.op_type() + "#" + std::to_string(index)
                                          : node.name();
    return inlineDepth_ > 0 ? callSite_ + "/" + own : own;
  }

  ImportState &state_;
  OpBuilder &b_;
  llvm::StringMap<int64_t> opsets_;
  std::map<std::pair<std::string, std::string>, const ::onnx::FunctionProto *> functions_;
  int inlineDepth_ = 0;
  int64_t inlinedNodes_ = 0;
  std::string callSite_; // the graph node whose function is being inlined
};

Type GraphImporter::convertType(const ::onnx::TypeProto &type, Location loc) {
  if (!type.has_tensor_type()) {
    emitError(loc) << "only tensor values are supported (sequence, map and "
                      "optional types are not)";
    return {};
  }
  const auto &tt = type.tensor_type();
  Type element = convertElementType(state_.context, tt.elem_type());
  if (!element) {
    emitError(loc) << "element type " << elementTypeName(tt.elem_type())
                   << " is not supported";
    return {};
  }
  if (!tt.has_shape())
    return UnrankedTensorType::get(element);
  SmallVector<int64_t> shape;
  for (const auto &d : tt.shape().dim())
    shape.push_back(d.has_dim_value() && d.dim_value() >= 0 ? d.dim_value()
                                                             : ShapedType::kDynamic);
  return RankedTensorType::get(shape, element);
}

/// The names of a value's symbolic dims ("" for static or unnamed dims), or
/// null when it has none or its imported type is not ranked.
static ArrayAttr dimParams(Builder &b, const ::onnx::TypeProto &type, Type imported) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape() ||
      !isa<RankedTensorType>(imported))
    return {};
  SmallVector<Attribute> names;
  bool any = false;
  for (const auto &d : type.tensor_type().shape().dim()) {
    names.push_back(b.getStringAttr(d.has_dim_param() ? d.dim_param() : ""));
    any |= d.has_dim_param();
  }
  return any ? b.getArrayAttr(names) : ArrayAttr();
}

/// When the model gives no type for a node's result, a conservative one:
/// unranked, with the element type the operator defines.
Type GraphImporter::fallbackResultType(StringRef opType, ArrayRef<Value> operands,
                                       ArrayRef<NamedAttribute> attrs,
                                       unsigned resultIndex) {
  Builder b(state_.context);
  static const llvm::StringSet<> boolOps = {"Equal", "Greater", "Less", "LessOrEqual",
                                            "GreaterOrEqual", "And", "Or", "Not",
                                            "Xor", "IsNaN", "IsInf"};
  if (boolOps.contains(opType))
    return UnrankedTensorType::get(b.getI1Type());
  if (opType == "Shape" || opType == "Size" || opType == "NonZero" ||
      opType == "ArgMax" || opType == "ArgMin")
    return UnrankedTensorType::get(b.getI64Type());
  for (const NamedAttribute &a : attrs) {
    if (opType == "Cast" && a.getName() == "to")
      if (auto to = dyn_cast<IntegerAttr>(a.getValue()))
        if (Type t = convertElementType(state_.context, to.getInt()))
          return UnrankedTensorType::get(t);
    if ((opType == "Constant" || opType == "ConstantOfShape") && a.getName() == "value")
      if (auto v = dyn_cast<ElementsAttr>(a.getValue()))
        return opType == "Constant" ? v.getType()
                                    : UnrankedTensorType::get(v.getElementType());
  }
  if (opType == "ConstantOfShape")
    return UnrankedTensorType::get(b.getF32Type());
  // DequantizeLinear keeps its input's shape, in the scale's element type:
  // a QDQ model without value_info still gives its weights a shape.
  if ((opType == "DequantizeLinear") && operands.size() > 1) {
    Type element = getElementTypeOrSelf(operands[1].getType());
    if (auto in = dyn_cast<RankedTensorType>(operands[0].getType()))
      return RankedTensorType::get(in.getShape(), element);
    return UnrankedTensorType::get(element);
  }
  // Where's value operands are 1 and 2; Gather-like ops keep operand 0's.
  unsigned from = opType == "Where" ? 1 : 0;
  if (from < operands.size())
    return UnrankedTensorType::get(getElementTypeOrSelf(operands[from].getType()));
  return {};
}

LogicalResult GraphImporter::inlineFunction(const ::onnx::FunctionProto &fn,
                                            const ::onnx::NodeProto &call, int index,
                                            Scope &scope) {
  Location loc = state_.nodeLoc(nodeName(call, index), index);
  if (inlineDepth_ == 0)
    callSite_ = nodeName(call, index);
  if (++inlineDepth_ > 32)
    return emitError(loc) << "model-local function '" << fn.name()
                          << "' is recursive or nested more than 32 deep";
  llvm::scope_exit restore([&] { --inlineDepth_; });
  // Functions that call others several times grow exponentially with depth:
  // bound the total so that a small model cannot make the import hang.
  inlinedNodes_ += fn.node_size();
  if (inlinedNodes_ > kMaxInlinedNodes)
    return emitError(loc) << "inlining model-local function '" << fn.name()
                          << "' makes the graph larger than " << kMaxInlinedNodes
                          << " nodes";
  Scope inner;
  inner.parent = nullptr; // a function body sees only its formal inputs
  for (int i = 0; i < fn.input_size(); ++i) {
    if (i >= call.input_size() || call.input(i).empty())
      continue;
    Value v = scope.lookup(call.input(i));
    if (!v)
      return emitError(loc) << "input '" << call.input(i) << "' of node '"
                            << nodeName(call, index) << "' is not defined before it";
    inner.values[fn.input(i)] = v;
  }
  // Attributes the body refers to (ref_attr_name) come from the call. (The
  // ONNX 1.12 schema this build reads has no attribute defaults on
  // functions; an attribute the caller leaves unset is absent.)
  const auto &attrs = call.attribute();
  for (int i = 0; i < fn.node_size(); ++i)
    if (failed(importNode(fn.node(i), index, inner, &attrs)))
      return failure();
  for (int i = 0; i < fn.output_size() && i < call.output_size(); ++i) {
    if (call.output(i).empty())
      continue;
    Value v = inner.values.lookup(fn.output(i));
    if (!v)
      return emitError(loc) << "model-local function '" << fn.name()
                            << "' does not define its output '" << fn.output(i) << "'";
    // The body's values are untyped in the model; the call's output may be.
    if (const ::onnx::TypeProto *tp = scope.types.lookup(call.output(i));
        tp && isa<UnrankedTensorType>(v.getType()))
      if (Type t = convertType(*tp, loc);
          t && getElementTypeOrSelf(t) == getElementTypeOrSelf(v.getType()))
        v.setType(t);
    scope.values[call.output(i)] = v;
  }
  return success();
}

LogicalResult GraphImporter::importNode(
    const ::onnx::NodeProto &node, int index, Scope &scope,
    const google::protobuf::RepeatedPtrField<::onnx::AttributeProto> *callerAttrs) {
  std::string name = nodeName(node, index);
  Location loc = state_.nodeLoc(name, index);
  const std::string &domain = node.domain();

  // Model-local functions are inlined.
  auto fn = functions_.find({domain, node.op_type()});
  if (fn != functions_.end())
    return inlineFunction(*fn->second, node, index, scope);

  std::string opName;
  // onnxruntime registers these contrib ops in the default domain too, and
  // onnxruntime-genai's builder writes them there.
  static const llvm::StringSet<> contribInDefaultDomain = {
      "SimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization"};
  if ((domain.empty() || domain == "ai.onnx") &&
      contribInDefaultDomain.contains(node.op_type()))
    opName = "onnx.ms_" + node.op_type();
  else if (domain.empty() || domain == "ai.onnx")
    opName = "onnx." + node.op_type();
  else if (domain == "com.microsoft")
    opName = "onnx.ms_" + node.op_type();
  else
    return emitError(loc) << "node '" << name << "' uses operator '" << node.op_type()
                          << "' of domain '" << domain
                          << "', which accel does not support (supported domains: "
                             "'' (ai.onnx) and 'com.microsoft')";
  int64_t opset = opsets_.lookup(domain.empty() ? "" : domain);
  std::optional<RegisteredOperationName> registered =
      RegisteredOperationName::lookup(opName, state_.context);
  if (!registered)
    return emitError(loc) << "node '" << name << "' uses operator '" << node.op_type()
                          << "' (domain '" << (domain.empty() ? "ai.onnx" : domain)
                          << "', opset " << opset
                          << "), which accel does not support";

  // Operands: ONNX inputs in order; "" marks an absent optional input.
  SmallVector<Value> operands;
  SmallVector<int32_t> operandSegments;
  std::optional<unsigned> groups = getNumOperandGroups(opName);
  if (groups && unsigned(node.input_size()) > *groups)
    return emitError(loc) << "node '" << name << "' has " << node.input_size()
                          << " inputs; " << node.op_type() << " takes at most " << *groups;
  int lastPresent = -1;
  for (int i = 0; i < node.input_size(); ++i)
    if (!node.input(i).empty())
      lastPresent = i;
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty()) {
      if (groups)
        operandSegments.push_back(0);
      else if (i < lastPresent)
        return emitError(loc) << "node '" << name << "' leaves input " << i
                              << " empty, which " << node.op_type() << " does not allow";
      continue;
    }
    Value v = scope.lookup(node.input(i));
    if (!v)
      return emitError(loc) << "node '" << name << "' uses '" << node.input(i)
                            << "' before it is defined (the graph is not "
                               "topologically sorted, or the name is unknown)";
    operands.push_back(v);
    if (groups)
      operandSegments.push_back(1);
  }
  if (groups)
    operandSegments.resize(*groups, 0);

  // Attributes, with references to the enclosing function's resolved.
  SmallVector<NamedAttribute> attrs;
  for (const ::onnx::AttributeProto &a : node.attribute()) {
    const ::onnx::AttributeProto *value = &a;
    if (!a.ref_attr_name().empty()) {
      value = nullptr;
      if (callerAttrs)
        for (const auto &c : *callerAttrs)
          if (c.name() == a.ref_attr_name())
            value = &c;
      if (!value)
        continue; // the caller did not set it: the attribute is absent
    }
    if (!llvm::is_contained(registered->getAttributeNames(),
                            StringAttr::get(state_.context, a.name())))
      return emitError(loc) << "node '" << name << "' sets attribute '" << a.name()
                            << "', which accel's " << node.op_type()
                            << " does not support";
    Attribute attr = importAttribute(state_, *value, loc);
    if (!attr)
      return failure();
    attrs.push_back(b_.getNamedAttr(a.name(), attr));
  }
  if (groups)
    attrs.push_back(
        b_.getNamedAttr("operandSegmentSizes", b_.getDenseI32ArrayAttr(operandSegments)));

  // Results: typed from value_info / graph outputs when the model says.
  SmallVector<Type> resultTypes;
  SmallVector<int32_t> resultSegments;
  std::optional<unsigned> resultGroups = getNumResultGroups(opName);
  SmallVector<std::string> resultNames;
  for (int i = 0; i < node.output_size(); ++i) {
    const std::string &out = node.output(i);
    if (out.empty()) {
      if (resultGroups)
        resultSegments.push_back(0);
      continue;
    }
    Type t;
    // A Constant's type is its value's: onnxruntime-genai's builder declares
    // value_info of shape [] for its [1]-shaped constants, and onnxruntime
    // goes by the value too.
    if (node.op_type() == "Constant" && (node.domain().empty() || node.domain() == "ai.onnx"))
      t = fallbackResultType(node.op_type(), operands, attrs, i);
    if (t) {
    } else if (const ::onnx::TypeProto *tp = scope.types.lookup(out);
               tp && tp->has_tensor_type() && tp->tensor_type().elem_type())
      t = convertType(*tp, loc);
    if (!t)
      t = fallbackResultType(node.op_type(), operands, attrs, i);
    if (!t)
      return emitError(loc) << "cannot tell the type of output '" << out << "' of node '"
                            << name << "'";
    resultTypes.push_back(t);
    resultNames.push_back(out);
    if (resultGroups)
      resultSegments.push_back(1);
  }
  if (resultGroups) {
    if (resultSegments.size() > *resultGroups)
      return emitError(loc) << "node '" << name << "' has " << node.output_size()
                            << " outputs; " << node.op_type() << " has at most "
                            << *resultGroups;
    resultSegments.resize(*resultGroups, 0);
    attrs.push_back(
        b_.getNamedAttr("resultSegmentSizes", b_.getDenseI32ArrayAttr(resultSegments)));
  }

  OperationState st(loc, *registered);
  st.addOperands(operands);
  st.addTypes(resultTypes);
  st.addAttributes(attrs);
  Operation *op = b_.create(st);
  // An inherent attribute of the wrong kind (an INTS where the operator
  // takes an INT) is silently dropped when the op's properties are built;
  // say so instead of verifying an op that lost it.
  for (NamedAttribute a : attrs) {
    std::optional<Attribute> kept = op->getInherentAttr(a.getName());
    if (kept && *kept != a.getValue()) {
      op->erase();
      return emitError(loc) << "node '" << name << "' (" << node.op_type() << "): attribute '"
                            << a.getName().getValue()
                            << "' has the wrong kind for this operator";
    }
  }
  if (failed(verify(op)))
    return emitError(loc) << "node '" << name << "' (" << node.op_type()
                          << ") does not satisfy the operator's constraints (see above)";
  for (auto [out, v] : llvm::zip(resultNames, op->getResults()))
    scope.values[out] = v;
  return success();
}

LogicalResult GraphImporter::importModel(ModuleOp module) {
  const ::onnx::ModelProto &model = *state_.model;
  Location modelLoc = FileLineColLoc::get(state_.context, state_.modelPath, 0, 0);
  // Opsets per domain.
  SmallVector<NamedAttribute> opsetAttrs;
  for (const auto &os : model.opset_import()) {
    std::string d = os.domain() == "ai.onnx" ? "" : os.domain();
    opsets_[d] = os.version();
    // The default domain is spelled "ai.onnx" in IR: an empty dictionary
    // key would not parse back.
    opsetAttrs.push_back(b_.getNamedAttr(d.empty() ? "ai.onnx" : d,
                                         b_.getI64IntegerAttr(os.version())));
  }
  if (!opsets_.count(""))
    return emitError(modelLoc) << "the model imports no opset of the default ONNX domain";
  int64_t opset = opsets_.lookup("");
  if (opset < kMinOpset || opset > kMaxOpset)
    return emitError(modelLoc) << "the model uses opset " << opset
                               << " of the default ONNX domain; accel supports opsets "
                               << kMinOpset << " to " << kMaxOpset;
  module->setAttr("onnx.opset_import", b_.getDictionaryAttr(opsetAttrs));
  module->setAttr("onnx.ir_version", b_.getI64IntegerAttr(model.ir_version()));
  if (!model.producer_name().empty())
    module->setAttr("onnx.producer",
                    b_.getStringAttr(model.producer_name() + " " + model.producer_version()));
  for (const auto &fn : model.functions())
    functions_[{fn.domain(), fn.name()}] = &fn;

  const ::onnx::GraphProto &graph = model.graph();
  Scope scope;
  for (const auto &vi : graph.value_info())
    scope.types[vi.name()] = &vi.type();
  for (const auto &vi : graph.output())
    scope.types[vi.name()] = &vi.type();

  llvm::StringSet<> initializerNames;
  for (const auto &t : graph.initializer())
    initializerNames.insert(t.name());

  // Signature.
  SmallVector<Type> argTypes;
  SmallVector<const ::onnx::ValueInfoProto *> args;
  for (const auto &in : graph.input()) {
    if (initializerNames.contains(in.name()))
      continue; // IR < 4: initializers are listed as inputs too
    Type t = convertType(in.type(), state_.nodeLoc(in.name(), 0));
    if (!t)
      return emitError(modelLoc) << "graph input '" << in.name() << "' has an unsupported type";
    argTypes.push_back(t);
    args.push_back(&in);
  }
  auto func = func::FuncOp::create(modelLoc, state_.options.functionName,
                                   b_.getFunctionType(argTypes, {}));
  module.push_back(func);
  Block *entry = func.addEntryBlock();
  b_.setInsertionPointToStart(entry);
  for (auto [i, in] : llvm::enumerate(args)) {
    scope.values[in->name()] = entry->getArgument(i);
    func.setArgAttr(i, "onnx.name", b_.getStringAttr(in->name()));
    if (ArrayAttr dims = dimParams(b_, in->type(), entry->getArgument(i).getType()))
      func.setArgAttr(i, "onnx.dim_params", dims);
  }

  // Initializers.
  std::optional<RegisteredOperationName> constantOp =
      RegisteredOperationName::lookup("onnx.Constant", state_.context);
  if (!constantOp)
    return emitError(modelLoc) << "internal error: onnx.Constant is not registered";
  for (auto [i, t] : llvm::enumerate(graph.initializer())) {
    Location loc = state_.nodeLoc(t.name(), 0);
    ElementsAttr value = importTensor(state_, t, loc);
    if (!value)
      return failure();
    OperationState st(loc, *constantOp);
    st.addTypes(value.getType());
    st.addAttribute("value", value);
    scope.values[t.name()] = b_.create(st)->getResult(0);
  }

  for (int i = 0; i < graph.node_size(); ++i)
    if (failed(importNode(graph.node(i), i, scope, nullptr)))
      return failure();

  // Results.
  SmallVector<Value> results;
  for (const auto &out : graph.output()) {
    Value v = scope.lookup(out.name());
    if (!v)
      return emitError(modelLoc) << "graph output '" << out.name()
                                 << "' is not produced by any node or initializer";
    results.push_back(v);
  }
  func::ReturnOp::create(b_, modelLoc, results);
  func.setType(b_.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (auto [i, out] : llvm::enumerate(graph.output())) {
    func.setResultAttr(i, "onnx.name", b_.getStringAttr(out.name()));
    if (ArrayAttr dims = dimParams(b_, out.type(), results[i].getType()))
      func.setResultAttr(i, "onnx.dim_params", dims);
  }
  return success();
}

} // namespace

/// Parses `size` bytes named `name` (the model file's path, or a buffer's
/// name) into a ModelProto that copies every byte it keeps. On failure emits
/// an error and returns null.
static std::shared_ptr<::onnx::ModelProto>
parseModel(MLIRContext &context, const uint8_t *data, size_t size, StringRef name) {
  Location fileLoc = FileLineColLoc::get(&context, name, 0, 0);
  auto model = std::make_shared<::onnx::ModelProto>();
  if (size > size_t(std::numeric_limits<int>::max())) {
    emitError(fileLoc) << "'" << name << "' is " << size
                       << " bytes; ONNX files over 2 GiB must keep their weights as "
                          "external data";
    return nullptr;
  }
  {
    google::protobuf::io::CodedInputStream in(data, int(size));
    in.SetRecursionLimit(256);
    if (!model->ParseFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
      emitError(fileLoc) << "'" << name
                         << "' is not a valid ONNX model (the protobuf does not "
                            "parse: the file is truncated, corrupt, or not ONNX)";
      return nullptr;
    }
  }
  if (model->ir_version() <= 0 || !model->has_graph()) {
    emitError(fileLoc) << "'" << name << "' is not an ONNX model (it has no "
                       << (model->has_graph() ? "IR version" : "graph") << ")";
    return nullptr;
  }
  return model;
}

/// Imports a parsed model; `externalData` resolves external-data locations.
static OwningOpRef<ModuleOp> importParsedModel(MLIRContext &context,
                                               std::shared_ptr<::onnx::ModelProto> model,
                                               StringRef name, ExternalDataFiles externalData,
                                               const OnnxImportOptions &options) {
  Location fileLoc = FileLineColLoc::get(&context, name, 0, 0);
  ImportState state{&context, options, name.str(), std::move(model),
                    std::move(externalData), {}};
  OpBuilder builder(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  GraphImporter importer(state, builder);
  if (failed(importer.importModel(*module)))
    return nullptr;
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

OwningOpRef<ModuleOp> accel::importOnnxFile(MLIRContext &context, StringRef path,
                                            const OnnxImportOptions &options) {
  context.loadDialect<accel::onnx::OnnxDialect, func::FuncDialect>();
  Location fileLoc = FileLineColLoc::get(&context, path, 0, 0);
  // Only a regular file, read up to its size: a FIFO would block, and
  // /dev/zero never ends.
  std::string why;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      import::mapRegularFile(path.str(), "ONNX model", why);
  if (!buffer) {
    emitError(fileLoc) << why;
    return nullptr;
  }
  auto model = parseModel(context, reinterpret_cast<const uint8_t *>(buffer->getBufferStart()),
                          buffer->getBufferSize(), path);
  if (!model)
    return nullptr;
  buffer.reset(); // the protobuf now owns every byte it needs
  return importParsedModel(context, std::move(model), path,
                           ExternalDataFiles(llvm::sys::path::parent_path(path).str()), options);
}

OwningOpRef<ModuleOp> accel::importOnnxBuffer(MLIRContext &context, StringRef bytes,
                                              StringRef name,
                                              const OnnxImportOptions &options) {
  context.loadDialect<accel::onnx::OnnxDialect, func::FuncDialect>();
  auto model = parseModel(context, reinterpret_cast<const uint8_t *>(bytes.data()),
                          bytes.size(), name);
  if (!model)
    return nullptr;
  return importParsedModel(context, std::move(model), name, ExternalDataFiles::none(), options);
}
