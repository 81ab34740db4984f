//===- Probe.cpp - evaluate a graph on probe inputs -----------------------===//
#include "Probe.h"

#include "accel/dialects/Onnx/OnnxOps.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace accel;
using namespace accel::raise;

std::string raise::argName(func::FuncOp func, unsigned index) {
  if (auto n = func.getArgAttrOfType<StringAttr>(index, "onnx.name"))
    return n.getValue().str();
  return "arg" + std::to_string(index);
}

ArgRole raise::classifyArg(func::FuncOp func, unsigned index) {
  std::string lower = StringRef(argName(func, index)).lower();
  StringRef n(lower);
  if (n.contains("past") && n.ends_with("key"))
    return ArgRole::PastKey;
  if (n.contains("past") && n.ends_with("value"))
    return ArgRole::PastValue;
  if (n.contains("input_ids"))
    return ArgRole::InputIds;
  if (n.contains("attention_mask"))
    return ArgRole::AttentionMask;
  if (n.contains("position_ids"))
    return ArgRole::PositionIds;
  return ArgRole::Other;
}

rt::Tensor raise::randomTensor(const rt::Shape &shape, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  rt::Tensor t = rt::Tensor::zeros(rt::DType::kF32, shape);
  float *p = t.data<float>();
  for (int64_t i = 0; i < t.numElements(); ++i)
    p[i] = dist(rng);
  return t;
}

llvm::Error raise::bindProbeInputs(eval::Evaluator &ev, func::FuncOp func, int64_t seqLen,
                                   int64_t pastLen) {
  auto fail = [&](unsigned i, const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "graph input '" + argName(func, i) + "' " + why);
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
    if (!type)
      return fail(i, "is not a ranked tensor");
    std::optional<rt::DType> dtype = eval::toDType(type.getElementType());
    if (!dtype)
      return fail(i, "has an element type the evaluator does not know");
    ArgRole role = classifyArg(func, i);
    rt::Shape shape;
    for (auto [d, size] : llvm::enumerate(type.getShape())) {
      if (!ShapedType::isDynamic(size)) {
        shape.push_back(size);
      } else if (d == 0) {
        shape.push_back(1); // batch
      } else if (role == ArgRole::PastKey || role == ArgRole::PastValue) {
        shape.push_back(pastLen);
      } else if (role == ArgRole::AttentionMask) {
        shape.push_back(pastLen + seqLen);
      } else {
        shape.push_back(seqLen);
      }
    }
    rt::Tensor t = rt::Tensor::zeros(*dtype, shape);
    if (!t.defined())
      return fail(i, "cannot be allocated for the probe");
    if (role == ArgRole::AttentionMask || role == ArgRole::PositionIds) {
      std::vector<double> values(size_t(t.numElements()));
      for (size_t k = 0; k < values.size(); ++k)
        values[k] = role == ArgRole::AttentionMask ? 1.0
                                                   : double(pastLen + int64_t(k) % seqLen);
      rt::StatusOr<rt::Tensor> filled = rt::Tensor::fromDoubles(*dtype, shape, values);
      if (!filled)
        return fail(i, filled.status().message());
      t = std::move(*filled);
    }
    ev.bind(func.getArgument(i), std::move(t));
  }
  return llvm::Error::success();
}

bool raise::dependsOnlyOnShapesAnd(Value v, ArrayRef<Value> allowed) {
  llvm::SmallPtrSet<Operation *, 32> seen;
  SmallVector<Value> work{v};
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (llvm::is_contained(allowed, x))
      continue;
    Operation *op = x.getDefiningOp();
    if (!op)
      return false; // another argument
    if (!seen.insert(op).second || isa<onnx::ShapeOp>(op))
      continue;
    llvm::append_range(work, op->getOperands());
  }
  return true;
}
