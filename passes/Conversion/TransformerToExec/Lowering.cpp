//===- Lowering.cpp - the state the exec lowering patterns share ----------===//
#include "Lowering.h"

#include "accel/dialects/Onnx/OnnxOps.h"
#include "accel/dialects/Transformer/TransformerOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
namespace ex = accel::exec;

namespace accel::conversion {

/// Weights are 64-byte aligned (the plan's tensor alignment).
static constexpr int64_t kWeightAlignment = 64;

const LowerFn *LoweringPatterns::lookup(Operation *op) const {
  auto it = byName_.find(op->getName().getStringRef());
  if (it != byName_.end())
    return &it->second;
  if (onnxFallback_ && op->getName().getStringRef().starts_with("onnx."))
    return &onnxFallback_;
  return nullptr;
}

Lowering::Lowering(func::FuncOp func, ex::ScheduleOp schedule, ex::KVPoolOp pool,
                   ex::ArenaOp weights, const LoweringPatterns &patterns)
    : func_(func), schedule_(schedule), pool_(pool), weights_(weights), patterns_(patterns),
      shapes_(func), builder_(schedule.getContext()) {
  builder_.setInsertionPointToEnd(&schedule.getBody().front());
  if (auto tp = func->getAttrOfType<IntegerAttr>("accel.tp_size"))
    tpSize_ = tp.getInt();
}

FlatSymbolRefAttr Lowering::pool() const {
  return pool_ ? FlatSymbolRefAttr::get(const_cast<ex::KVPoolOp &>(pool_).getSymNameAttr())
               : FlatSymbolRefAttr();
}

FlatSymbolRefAttr Lowering::weightsArena() const {
  return FlatSymbolRefAttr::get(const_cast<ex::ArenaOp &>(weights_).getSymNameAttr());
}

Value Lowering::stepSize(ex::StepSizeKind kind) {
  Value &v = stepSizes_[unsigned(kind)];
  if (!v) {
    OpBuilder::InsertionGuard guard(builder_);
    builder_.setInsertionPointToStart(&schedule_.getBody().front());
    v = ex::StepSizeOp::create(builder_, schedule_.getLoc(), builder_.getIndexType(), kind);
  }
  return v;
}

FailureOr<Value> Lowering::stepInput(ex::StepInputKind kind, Type elementType, Operation *user) {
  Value &v = stepInputs_[unsigned(kind)];
  auto type = ex::ViewType::get({ShapedType::kDynamic}, elementType);
  if (v) {
    if (v.getType() != type)
      return user->emitError() << "reads the step's " << ex::stringifyStepInputKind(kind)
                               << " as " << elementType << " after another op read them as "
                               << cast<ex::ViewType>(v.getType()).getElementType();
    return v;
  }
  OpBuilder::InsertionGuard guard(builder_);
  builder_.setInsertionPointToStart(&schedule_.getBody().front());
  // After the step sizes.
  for (Operation &op : schedule_.getBody().front())
    if (isa<ex::StepSizeOp, ex::StepInputOp>(op))
      builder_.setInsertionPointAfter(&op);
  v = ex::StepInputOp::create(builder_, schedule_.getLoc(), type, kind);
  return v;
}

Operation *Lowering::finish(Operation *step, Operation *from) {
  if (Attribute stage = from->getAttr("accel.pp_stage"))
    step->setAttr("accel.pp_stage", stage);
  return step;
}

//===----------------------------------------------------------------------===//
// Types and buffers
//===----------------------------------------------------------------------===//

FailureOr<ex::ViewType> Lowering::viewType(Value tensor, Operation *where) {
  auto type = dyn_cast<RankedTensorType>(tensor.getType());
  if (!type)
    return where->emitError() << "reads a value of type " << tensor.getType()
                              << ", which has no exec view";
  if (!ex::ViewType::isSupportedElementType(type.getElementType()))
    return where->emitError() << "has a value of element type " << type.getElementType()
                              << ", which no backend stores";
  std::optional<SymShape> shape = shapes_.shape(tensor);
  if (!shape || shape->size() != size_t(type.getRank()))
    return where->emitError() << "has a value of type " << type
                              << " whose shape the lowering could not relate to the step's "
                                 "tokens";
  SmallVector<int64_t> dims;
  for (auto [i, d] : llvm::enumerate(*shape)) {
    if (!d.isKnown())
      return where->emitError() << "has a value of type " << type << " whose dimension " << i
                                << " the lowering could not relate to the step's tokens";
    dims.push_back(d.isConst() ? d.value : ShapedType::kDynamic);
  }
  return ex::ViewType::get(dims, type.getElementType());
}

FailureOr<Value> Lowering::alloc(Value result) {
  Operation *op = result.getDefiningOp();
  FailureOr<ex::ViewType> type = viewType(result, op);
  if (failed(type))
    return failure();
  SymShape shape = *shapes_.shape(result);
  SmallVector<int64_t> bufferDims;
  SmallVector<Value> sizes;
  int64_t scaled = 0;
  for (const SymDim &d : shape) {
    if (d.isConst()) {
      bufferDims.push_back(d.value);
      continue;
    }
    ++scaled;
    if (d.value != 1)
      bufferDims.push_back(d.value);
    bufferDims.push_back(ShapedType::kDynamic);
    sizes.push_back(stepSize(d.unit == StepUnit::tokens ? ex::StepSizeKind::tokens
                                                        : ex::StepSizeKind::seqs));
  }
  if (scaled > 1)
    return op->emitError() << "has a result of shape ["
                           << llvm::join(llvm::map_range(shape, [](SymDim d) { return d.str(); }),
                                         ", ")
                           << "], which varies with the step in more than one dimension; no "
                              "arena region can hold it";
  auto bufferType = ex::ViewType::get(bufferDims, type->getElementType());
  Value buffer = ex::AllocOp::create(builder_, op->getLoc(), bufferType, sizes);
  if (bufferType != *type)
    buffer = ex::ViewOp::create(builder_, op->getLoc(), *type, buffer);
  views_[result] = buffer;
  return buffer;
}

void Lowering::map(Value tensor, Value view) {
  FailureOr<ex::ViewType> want = viewType(tensor, tensor.getDefiningOp()
                                                      ? tensor.getDefiningOp()
                                                      : func_.getOperation());
  if (succeeded(want) && view.getType() != *want)
    view = ex::ViewOp::create(builder_, view.getLoc(), *want, view);
  views_[tensor] = view;
}

//===----------------------------------------------------------------------===//
// Views of values
//===----------------------------------------------------------------------===//

bool Lowering::isDeferred(Operation *op) const {
  if (isa<onnx::ConstantOp>(op))
    return true;
  // Shape arithmetic, and a shape tensor handed to another pipeline stage.
  if (!(op->getName().getStringRef().starts_with("onnx.") || isa<transformer::PpTransferOp>(op)) ||
      op->getNumResults() == 0)
    return false;
  return llvm::all_of(op->getResults(), [&](Value r) { return shapes_.contents(r).has_value(); });
}

FailureOr<Value> Lowering::view(Value tensor, Operation *user) {
  if (auto it = views_.find(tensor); it != views_.end())
    return it->second;
  Operation *def = tensor.getDefiningOp();
  if (!def)
    return user->emitError() << "reads a function argument of type " << tensor.getType()
                             << " where a tensor is expected";
  if (isa<onnx::ConstantOp>(def))
    return weight(def, tensor, user);
  if (std::optional<SymShape> c = shapes_.contents(tensor);
      c && llvm::all_of(*c, [](SymDim d) { return d.isConst(); }))
    return shapeConstant(tensor, *c);
  if (!isDeferred(def) || lowering_.count(def))
    return user->emitError() << "reads the result of '" << def->getName()
                             << "', which was not lowered to exec";
  lowering_.insert(def);
  LogicalResult lowered = lower(def);
  lowering_.erase(def);
  if (failed(lowered))
    return failure();
  if (auto it = views_.find(tensor); it != views_.end())
    return it->second;
  return user->emitError() << "reads the result of '" << def->getName()
                           << "', which was lowered to no view";
}

FailureOr<Value> Lowering::optionalView(Value tensor, Operation *user) {
  if (!tensor)
    return Value();
  return view(tensor, user);
}

FailureOr<SmallVector<Value>> Lowering::views(ValueRange tensors, Operation *user) {
  SmallVector<Value> out;
  for (Value t : tensors) {
    FailureOr<Value> v = view(t, user);
    if (failed(v))
      return failure();
    out.push_back(*v);
  }
  return out;
}

LogicalResult Lowering::lower(Operation *op) {
  const LowerFn *fn = patterns_.lookup(op);
  if (!fn)
    return op->emitError() << "'" << op->getName() << "' has no lowering to the exec dialect";
  return (*fn)(op, *this);
}

/// Places a weight of `bytes` bytes and returns its offset.
static int64_t placeWeight(int64_t &used, int64_t bytes) {
  int64_t offset = llvm::alignTo(used, kWeightAlignment);
  used = offset + bytes;
  return offset;
}

/// Bytes of a weight as the plan stores it (i4 one per byte, unpacked).
static int64_t storedBytes(ex::ViewType type) {
  if (type.getElementType().isInteger(4))
    return type.getNumElements();
  return type.getStaticByteSize();
}

std::string Lowering::uniqueWeightName(std::string name) {
  unsigned &uses = weightNames_[name];
  std::string unique = uses ? name + "." + std::to_string(uses) : name;
  ++uses;
  // `name.1` may itself be an ONNX name seen before or later.
  while (uses > 1 && weightNames_.count(unique) && weightNames_[unique] > 0)
    unique = name + "." + std::to_string(uses++);
  if (unique != name)
    ++weightNames_[unique];
  return unique;
}

FailureOr<Value> Lowering::weight(Operation *constant, Value result, Operation *user) {
  auto type = dyn_cast<RankedTensorType>(result.getType());
  if (!type || !type.hasStaticShape())
    return constant->emitError() << "is a constant of type " << result.getType()
                                 << ", which a weight cannot hold";
  if (!ex::ViewType::isSupportedElementType(type.getElementType()))
    return constant->emitError() << "is a constant of element type " << type.getElementType()
                                 << ", which no backend stores";
  auto viewTy = ex::ViewType::get(type.getShape(), type.getElementType());
  std::string name = locationName(constant->getLoc());
  if (name.empty())
    name = "constant";
  name = uniqueWeightName(std::move(name));
  ex::WeightOp w;
  {
    OpBuilder::InsertionGuard guard(builder_);
    w = ex::WeightOp::create(builder_, constant->getLoc(), viewTy, name,
                             weightsArena().getValue(),
                             placeWeight(weightBytes_, storedBytes(viewTy)), IntegerAttr(),
                             ElementsAttr(), ArrayAttr());
  }
  if (auto shards = constant->getAttrOfType<ArrayAttr>("accel.tp_shards")) {
    if (int64_t(shards.size()) != tpSize_)
      return constant->emitError() << "has " << shards.size()
                                   << " tensor-parallel shards but the function has " << tpSize_
                                   << " ranks";
    w.setShardsAttr(shards);
  } else if (auto value = constant->getAttrOfType<ElementsAttr>("value")) {
    w.setValueAttr(value);
  } else {
    // value_float, value_int, value_floats, value_ints: a splat or a list.
    Attribute a;
    for (StringRef key : {"value_float", "value_int", "value_floats", "value_ints"})
      if ((a = constant->getAttr(key)))
        break;
    DenseElementsAttr data;
    if (auto f = dyn_cast_or_null<FloatAttr>(a))
      data = DenseElementsAttr::get(type, f.getValue());
    else if (auto i = dyn_cast_or_null<IntegerAttr>(a))
      data = DenseElementsAttr::get(type, i.getValue());
    else if (auto fs = dyn_cast_or_null<DenseF32ArrayAttr>(a))
      data = DenseElementsAttr::get(type, fs.asArrayRef());
    else if (auto is = dyn_cast_or_null<DenseI64ArrayAttr>(a))
      data = DenseElementsAttr::get(type, is.asArrayRef());
    if (!data) {
      w.erase();
      return constant->emitError("is a constant whose value the lowering cannot read");
    }
    w.setValueAttr(data);
  }
  weights_.setSize(llvm::alignTo(weightBytes_, kWeightAlignment));
  views_[result] = w.getResult();
  (void)user;
  return w.getResult();
}

FailureOr<Value> Lowering::shapeConstant(Value tensor, const SymShape &contents) {
  auto type = dyn_cast<RankedTensorType>(tensor.getType());
  if (!type || !type.getElementType().isSignlessInteger())
    return tensor.getDefiningOp()->emitError("computes a shape the lowering cannot store");
  SmallVector<int64_t> dims;
  std::optional<SymShape> shape = shapes_.shape(tensor);
  for (const SymDim &d : shape ? *shape : SymShape{})
    dims.push_back(d.isConst() ? d.value : 1);
  if (!shape)
    dims.push_back(int64_t(contents.size()));
  auto dataType = RankedTensorType::get(dims, type.getElementType());
  SmallVector<APInt> values;
  for (const SymDim &d : contents)
    values.push_back(APInt(type.getElementTypeBitWidth(), uint64_t(d.value), true));
  auto data = DenseElementsAttr::get(dataType, values);
  auto viewTy = ex::ViewType::get(dims, type.getElementType());
  Operation *def = tensor.getDefiningOp();
  std::string name = locationName(def->getLoc());
  OpBuilder::InsertionGuard guard(builder_);
  auto w = ex::WeightOp::create(builder_, def->getLoc(), viewTy,
                                uniqueWeightName((name.empty() ? "shape" : name) + ".value"),
                                weightsArena().getValue(),
                                placeWeight(weightBytes_, storedBytes(viewTy)), IntegerAttr(),
                                data, ArrayAttr());
  weights_.setSize(llvm::alignTo(weightBytes_, kWeightAlignment));
  views_[tensor] = w.getResult();
  return w.getResult();
}

} // namespace accel::conversion
