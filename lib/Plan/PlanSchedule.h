//===- PlanSchedule.h - the plan writer's schedule, inside lib/Plan -*- C++ -*-===//
//
// What PlanWriter.cpp (the file frame and metadata), PlanSteps.cpp (each
// exec op's step: operands and attributes) and PlanWeights.h (the weights
// sections) share: the values and steps being built (ScheduleBuilder) and
// the error helpers. Internal to lib/Plan.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_LIB_PLAN_PLANSCHEDULE_H
#define ACCEL_LIB_PLAN_PLANSCHEDULE_H

#include "accel/Codegen/Codegen.h"
#include "accel/Plan/PlanWriter.h"

#include "accel/Eval/Evaluator.h"
#include "accel/Weights/Weights.h"
#include "accel/dialects/Exec/ExecOps.h"
#include "accel/dialects/Exec/ExecUtils.h"
#include "accel/dialects/Transformer/TransformerDialect.h"
#include "runtime/plan/Plan.pb.h"
#include "runtime/plan/PlanFormat.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace accel::planwriter {

using namespace mlir;
namespace ex = accel::exec;
namespace tf = accel::transformer;
namespace pb = accel::plan;
namespace fmt = accel::rt::plan;
namespace weights = accel::weights;
using accel::plan::PlanOptions;

/// An llvm::Error with `msg`.
llvm::Error error(const llvm::Twine &msg);
using accel::exec::locationName; // the plan records a file location once, as its source
/// "'exec.gemm' at 'node'".
std::string describeOp(mlir::Operation *op);
/// The plan's step kind of an exec step op: the one table of the contract
/// between the compiler and the runtime (plan.StepKind mirrors
/// ExecStepOps.td).
pb::StepKind stepKindOf(mlir::Operation *op);

//===----------------------------------------------------------------------===//
// Values and steps
//===----------------------------------------------------------------------===//

class ScheduleBuilder {
public:
  ScheduleBuilder(pb::Schedule &s, uint64_t weightsBytes) : s_(s), weightsSize_(weightsBytes) {}

  /// A new value for the view `v`.
  llvm::Expected<pb::Value *> define(Value v, const std::string &name) {
    auto type = cast<ex::ViewType>(v.getType());
    std::optional<accel::rt::DType> dt = accel::eval::toDType(type.getElementType());
    if (!dt)
      return error("a view of element type that has no runtime representation");
    pb::Value *pv = s_.add_values();
    pv->set_id(s_.values_size() - 1);
    pv->set_dtype(accel::rt::dtypeName(*dt));
    for (int64_t d : type.getShape())
      pv->add_shape(ShapedType::isDynamic(d) ? -1 : d);
    pv->set_name(name);
    ids_[v] = pv->id();
    return pv;
  }

  llvm::Expected<int32_t> use(Value v, Operation *user) {
    auto it = ids_.find(v);
    if (it == ids_.end())
      return error(describeOp(user) + " reads a view the schedule does not declare before it");
    return it->second;
  }

  /// `v` (or -1 when null) as the next input of `st`.
  llvm::Error input(pb::Step &st, Value v, Operation *user) {
    if (!v) {
      st.add_inputs(-1);
      return llvm::Error::success();
    }
    llvm::Expected<int32_t> id = use(v, user);
    if (!id)
      return id.takeError();
    st.add_inputs(*id);
    return llvm::Error::success();
  }
  llvm::Error output(pb::Step &st, Value v, Operation *user) {
    llvm::Expected<int32_t> id = use(v, user);
    if (!id)
      return id.takeError();
    st.add_outputs(*id);
    return llvm::Error::success();
  }

  /// A weight: its bytes (one tensor, or one per rank) at `offset`. The
  /// attributes are read when the plan is written (lazy weights are
  /// computed then, accel/Weights/Weights.h).
  void weight(pb::Value &pv, uint64_t offset, std::vector<ElementsAttr> shards, uint64_t bytes) {
    pv.set_is_constant(true);
    pv.set_placement(pb::Value::CONSTANT);
    pv.set_section(0);
    pv.set_offset(offset);
    pv.set_size(bytes);
    Constant c;
    c.offset = offset;
    c.bytes = bytes;
    c.shards = std::move(shards);
    constants_.push_back(std::move(c));
  }

  /// A constant of an ONNX attribute, after the exec weights.
  int32_t attributeConstant(accel::rt::Tensor t, const std::string &name) {
    pb::Value *pv = s_.add_values();
    pv->set_id(s_.values_size() - 1);
    pv->set_dtype(accel::rt::dtypeName(t.dtype()));
    for (int64_t d : t.shape())
      pv->add_shape(d);
    pv->set_name(name);
    weightsSize_ = fmt::alignUp(weightsSize_, fmt::kTensorAlignment);
    uint64_t at = weightsSize_;
    weightsSize_ += t.byteSize();
    pv->set_is_constant(true);
    pv->set_placement(pb::Value::CONSTANT);
    pv->set_section(0);
    pv->set_offset(at);
    pv->set_size(t.byteSize());
    Constant c;
    c.offset = at;
    c.bytes = t.byteSize();
    c.owned.push_back(std::make_shared<accel::rt::Tensor>(std::move(t)));
    constants_.push_back(std::move(c));
    return pv->id();
  }

  struct Constant {
    uint64_t offset = 0;
    uint64_t bytes = 0;
    std::vector<ElementsAttr> shards; // one per rank, or one for all
    /// Bytes held here instead (attribute constants, sub-byte weights).
    std::vector<std::shared_ptr<accel::rt::Tensor>> owned;
    size_t count() const { return shards.empty() ? owned.size() : shards.size(); }
  };
  std::vector<Constant> &constants() { return constants_; }
  uint64_t weightsSize() const { return weightsSize_; }

private:
  pb::Schedule &s_;
  llvm::DenseMap<Value, int32_t> ids_;
  std::vector<Constant> constants_;
  uint64_t weightsSize_;
};

void setS(pb::Step &st, const std::string &name, const std::string &v);
/// The operands, results and attributes of exec step op `o` into `st`.
llvm::Error stepOperands(ScheduleBuilder &b, pb::Step &st, mlir::Operation *o);

} // namespace accel::planwriter

#endif // ACCEL_LIB_PLAN_PLANSCHEDULE_H
