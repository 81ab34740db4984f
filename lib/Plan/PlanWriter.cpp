//===- PlanWriter.cpp - serialise an exec module as a plan file -----------===//
//
// One-to-one: every view of the exec schedule is a plan value (a constant,
// a step input, an arena slice or a view of another value), every step op a
// plan step of the StepKind of the same name with its operands in order and
// its attributes under the names docs/plan-format.md gives, the kv_pool the
// plan's KV cache and the activations arena its memory plan. Nothing is
// decided here: the exec passes decided it. The file is written to
// `<path>.tmp` and renamed, so a failed compile never leaves a half-written
// plan behind.
//
//===----------------------------------------------------------------------===//
#include "accel/Plan/PlanWriter.h"

#include "accel/Codegen/Codegen.h"

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

using namespace mlir;
namespace ex = accel::exec;
namespace tf = accel::transformer;
namespace pb = accel::plan;
namespace fmt = accel::rt::plan;
namespace weights = accel::weights;
using accel::plan::PlanOptions;

namespace {

llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// "node_name" for a location the importer made, else "".
std::string locationName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location l : fused.getLocations()) {
      std::string s = locationName(l);
      if (!s.empty())
        return s;
    }
    return "";
  }
  return ""; // a file location: the plan records its source once
}

std::string describeOp(Operation *op) {
  std::string where = locationName(op->getLoc());
  return "'" + op->getName().getStringRef().str() + "'" +
         (where.empty() ? "" : " at '" + where + "'");
}

/// The plan's step kind of an exec step op: the one table of the contract
/// between the compiler and the runtime (plan.StepKind mirrors
/// ExecStepOps.td).
pb::StepKind stepKindOf(Operation *op) {
  return llvm::TypeSwitch<Operation *, pb::StepKind>(op)
      .Case([](ex::EmbeddingOp) { return pb::EMBEDDING; })
      .Case([](ex::RmsNormOp) { return pb::RMS_NORM; })
      .Case([](ex::AddRmsNormOp) { return pb::ADD_RMS_NORM; })
      .Case([](ex::LayerNormOp) { return pb::LAYER_NORM; })
      .Case([](ex::ResidualAddOp) { return pb::RESIDUAL_ADD; })
      .Case([](ex::ActivationOp) { return pb::ACTIVATION; })
      .Case([](ex::GatedActOp) { return pb::GATED_ACT; })
      .Case([](ex::GatedMlpOp) { return pb::GATED_MLP; })
      .Case([](ex::MoeOp) { return pb::MOE; })
      .Case([](ex::RotaryOp) { return pb::ROTARY; })
      .Case([](ex::QkvRotaryOp) { return pb::QKV_ROTARY; })
      .Case([](ex::QkvRotaryKvWriteOp) { return pb::QKV_ROTARY_KV_WRITE; })
      .Case([](ex::KVWriteOp) { return pb::KV_WRITE; })
      .Case([](ex::AttentionOp) { return pb::ATTENTION; })
      .Case([](ex::GemmOp) { return pb::GEMM; })
      .Case([](ex::LogitsOp) { return pb::LOGITS; })
      .Case([](ex::SplitOp) { return pb::SPLIT; })
      .Case([](ex::CopyOp) { return pb::COPY; })
      .Case([](ex::CollectiveOp) { return pb::COLLECTIVE; })
      .Case([](ex::PpTransferOp) { return pb::PP_TRANSFER; })
      .Case([](ex::OnnxOp) { return pb::ONNX; })
      .Case([](ex::LaunchOp) { return pb::LAUNCH; })
      .Default([](Operation *) { return pb::STEP_KIND_UNSPECIFIED; });
}

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

void setI(pb::Step &st, const std::string &name, int64_t v) {
  pb::Attribute *a = st.add_attributes();
  a->set_name(name);
  a->set_i(v);
}
void setF(pb::Step &st, const std::string &name, double v) {
  pb::Attribute *a = st.add_attributes();
  a->set_name(name);
  a->set_f(v);
}
void setS(pb::Step &st, const std::string &name, const std::string &v) {
  pb::Attribute *a = st.add_attributes();
  a->set_name(name);
  a->set_s(v);
}
void setF(pb::Step &st, const std::string &name, std::optional<APFloat> v) {
  if (v)
    setF(st, name, v->convertToDouble());
}
void setFloats(pb::Step &st, const std::string &name, std::optional<ArrayRef<double>> v) {
  if (!v)
    return;
  pb::Attribute *a = st.add_attributes();
  a->set_name(name);
  for (double x : *v)
    a->mutable_floats()->add_values(float(x));
}

std::string dtypeOf(Value v) {
  auto t = cast<ex::ViewType>(v.getType());
  std::optional<accel::rt::DType> dt = accel::eval::toDType(t.getElementType());
  return dt ? accel::rt::dtypeName(*dt) : "";
}

/// An ONNX attribute, as the CPU reference kernels take them.
llvm::Error onnxAttr(ScheduleBuilder &b, pb::Step &st, StringRef name, Attribute attr) {
  pb::Attribute *a = st.add_attributes();
  a->set_name(name.str());
  if (auto i = dyn_cast<IntegerAttr>(attr)) {
    a->set_i(i.getValue().getSExtValue());
  } else if (auto f = dyn_cast<FloatAttr>(attr)) {
    a->set_f(f.getValueAsDouble());
  } else if (auto s = dyn_cast<StringAttr>(attr)) {
    a->set_s(s.getValue().str());
  } else if (auto is = dyn_cast<DenseI64ArrayAttr>(attr)) {
    for (int64_t v : is.asArrayRef())
      a->mutable_ints()->add_values(v);
  } else if (auto fs = dyn_cast<DenseF32ArrayAttr>(attr)) {
    for (float v : fs.asArrayRef())
      a->mutable_floats()->add_values(v);
  } else if (auto arr = dyn_cast<ArrayAttr>(attr)) {
    a->mutable_strings();
    for (Attribute e : arr) {
      auto s = dyn_cast<StringAttr>(e);
      if (!s)
        return error("attribute '" + name + "' is an array of non-strings");
      a->mutable_strings()->add_values(s.getValue().str());
    }
  } else if (auto e = dyn_cast<ElementsAttr>(attr)) {
    llvm::Expected<accel::rt::Tensor> t = accel::eval::toTensor(e);
    if (!t)
      return t.takeError();
    a->set_tensor(b.attributeConstant(std::move(*t), st.location() + "." + name.str()));
  } else {
    return error("attribute '" + name + "' has a kind a plan cannot carry");
  }
  return llvm::Error::success();
}

/// A rotation's attributes (rotary, qkv_rotary, qkv_rotary_kv_write).
template <typename OpT> void rotaryParams(pb::Step &s, OpT op) {
  setS(s, "style", tf::stringifyRotaryStyle(op.getStyle().getValue()).str());
  setI(s, "rotary_dim", op.getRotaryDim());
  setF(s, "theta", op.getTheta());
  if (tf::RopeScalingAttr sc = op.getScalingAttr()) {
    setS(s, "scaling.kind", tf::stringifyRopeScalingKind(sc.getKind()).str());
    setF(s, "scaling.factor", sc.getFactor().convertToDouble());
    if (std::optional<int64_t> m = sc.getOriginalMaxPosition())
      setI(s, "scaling.original_max_position", *m);
    setF(s, "scaling.low_freq_factor", sc.getLowFreqFactor());
    setF(s, "scaling.high_freq_factor", sc.getHighFreqFactor());
    setF(s, "scaling.beta_fast", sc.getBetaFast());
    setF(s, "scaling.beta_slow", sc.getBetaSlow());
  }
}

/// The KV-cache attributes of a step that reads or writes layer `layer`.
template <typename OpT> void kvParams(pb::Step &st, OpT op) {
  setI(st, "layer", op.getLayer());
  setF(st, "k_scale", op.getKScale());
  setF(st, "v_scale", op.getVScale());
  setFloats(st, "k_head_scales", op.getKHeadScales());
  setFloats(st, "v_head_scales", op.getVHeadScales());
}

/// Inputs, outputs and attributes of one step op (docs/plan-format.md).
llvm::Error stepOperands(ScheduleBuilder &b, pb::Step &st, Operation *o) {
  auto in = [&](std::initializer_list<Value> vs) -> llvm::Error {
    for (Value v : vs)
      if (llvm::Error e = b.input(st, v, o))
        return e;
    return llvm::Error::success();
  };
  auto out = [&](std::initializer_list<Value> vs) -> llvm::Error {
    for (Value v : vs)
      if (llvm::Error e = b.output(st, v, o))
        return e;
    return llvm::Error::success();
  };
#define TRY(x)                                                                                   \
  if (llvm::Error e = (x))                                                                       \
    return e;
  if (auto op = dyn_cast<ex::EmbeddingOp>(o)) {
    TRY(in({op.getTable(), op.getIds()}));
    TRY(out({op.getOut()}));
    setF(st, "scale", op.getScale());
    if (std::optional<int64_t> n = op.getVocabShards())
      setI(st, "vocab_shards", *n);
    if (std::optional<int64_t> n = op.getVocabSize())
      setI(st, "vocab_size", *n);
  } else if (auto op = dyn_cast<ex::RmsNormOp>(o)) {
    TRY(in({op.getX(), op.getWeight()}));
    TRY(out({op.getOut()}));
    setF(st, "epsilon", op.getEpsilon().convertToDouble());
    setF(st, "weight_offset", op.getWeightOffset());
  } else if (auto op = dyn_cast<ex::AddRmsNormOp>(o)) {
    TRY(in({op.getX(), op.getResidual(), op.getWeight()}));
    TRY(out({op.getOut(), op.getSum()}));
    setF(st, "epsilon", op.getEpsilon().convertToDouble());
    setF(st, "weight_offset", op.getWeightOffset());
  } else if (auto op = dyn_cast<ex::LayerNormOp>(o)) {
    TRY(in({op.getX(), op.getWeight(), op.getBias()}));
    TRY(out({op.getOut()}));
    setF(st, "epsilon", op.getEpsilon().convertToDouble());
  } else if (auto op = dyn_cast<ex::ResidualAddOp>(o)) {
    TRY(in({op.getResidual(), op.getBranch()}));
    TRY(out({op.getOut()}));
  } else if (auto op = dyn_cast<ex::ActivationOp>(o)) {
    TRY(in({op.getInput()}));
    TRY(out({op.getOut()}));
    setS(st, "kind", tf::stringifyActivationKind(op.getKind().getValue()).str());
  } else if (auto op = dyn_cast<ex::GatedActOp>(o)) {
    TRY(in({op.getInput()}));
    TRY(out({op.getOut()}));
    setS(st, "kind", tf::stringifyActivationKind(op.getKind().getValue()).str());
  } else if (auto op = dyn_cast<ex::GatedMlpOp>(o)) {
    TRY(in({op.getX(), op.getGateUp(), op.getGate(), op.getUp(), op.getDown()}));
    TRY(out({op.getOut()}));
    setS(st, "kind", tf::stringifyActivationKind(op.getKind().getValue()).str());
  } else if (auto op = dyn_cast<ex::MoeOp>(o)) {
    TRY(in({op.getX(), op.getRouter(), op.getRouterBias(), op.getGateUp(), op.getGate(),
            op.getUp(), op.getDown(), op.getSharedGateUp(), op.getSharedDown(),
            op.getSharedExpertGate(), op.getGateUpScale(), op.getGateScale(), op.getUpScale(),
            op.getDownScale()}));
    // Float experts have no scales: their step keeps the 10 inputs it had
    // before quantised experts (plans stay as they were).
    while (st.inputs_size() > 10 && st.inputs(st.inputs_size() - 1) == -1)
      st.mutable_inputs()->RemoveLast();
    TRY(out({op.getOut()}));
    setS(st, "kind", tf::stringifyActivationKind(op.getKind().getValue()).str());
    setS(st, "routing", tf::stringifyMoeRouting(op.getRouting().getValue()).str());
    setI(st, "num_experts", op.getNumExperts());
    setI(st, "top_k", op.getTopK());
  } else if (auto op = dyn_cast<ex::RotaryOp>(o)) {
    TRY(in({op.getInput(), op.getPositions(), op.getCos(), op.getSin()}));
    TRY(out({op.getOut()}));
    rotaryParams(st, op);
  } else if (auto op = dyn_cast<ex::QkvRotaryOp>(o)) {
    TRY(in({op.getQkv(), op.getPositions(), op.getCos(), op.getSin()}));
    TRY(out({op.getQ(), op.getK(), op.getV()}));
    setI(st, "num_heads", op.getNumHeads());
    setI(st, "num_kv_heads", op.getNumKvHeads());
    setI(st, "head_dim", op.getHeadDim());
    rotaryParams(st, op);
  } else if (auto op = dyn_cast<ex::QkvRotaryKvWriteOp>(o)) {
    TRY(in({op.getQkv(), op.getPositions(), op.getCos(), op.getSin()}));
    TRY(out({op.getQ()}));
    kvParams(st, op);
    setI(st, "num_heads", op.getNumHeads());
    setI(st, "num_kv_heads", op.getNumKvHeads());
    setI(st, "head_dim", op.getHeadDim());
    rotaryParams(st, op);
  } else if (auto op = dyn_cast<ex::KVWriteOp>(o)) {
    TRY(in({op.getK(), op.getV()}));
    kvParams(st, op);
  } else if (auto op = dyn_cast<ex::AttentionOp>(o)) {
    TRY(in({op.getQ()}));
    TRY(out({op.getOut()}));
    kvParams(st, op);
    auto q = cast<ex::ViewType>(op.getQ().getType());
    setF(st, "scale", op.getScale().convertToDouble());
    setI(st, "causal", op.getCausal() ? 1 : 0);
    if (std::optional<int64_t> w = op.getSlidingWindow())
      setI(st, "sliding_window", *w);
    setF(st, "softcap", op.getSoftcap());
    setI(st, "num_heads", q.getDimSize(1));
    setI(st, "num_kv_heads", op.getNumKvHeads());
    setI(st, "head_dim", q.getDimSize(2));
  } else if (auto op = dyn_cast<ex::GemmOp>(o)) {
    // x, weight, bias, then weight_scale; a zero point (or -1 before a static
    // input scale); the static input scale.
    TRY(in({op.getX(), op.getWeight(), op.getBias()}));
    if (op.getWeightScale())
      TRY(in({op.getWeightScale()}));
    if (op.getZeroPoint() || op.getInputScale())
      TRY(in({op.getZeroPoint()}));
    if (op.getInputScale())
      TRY(in({op.getInputScale()}));
    TRY(out({op.getOut()}));
    setS(st, "out_dtype", dtypeOf(op.getOut()));
    if (op.getDynamicInput())
      setS(st, "input_quant", "dynamic_per_token");
    if (op.getGranularity())
      setS(st, "granularity",
           tf::stringifyQuantGranularity(op.getGranularity()->getValue()).str());
    if (std::optional<int64_t> g = op.getGroupSize())
      setI(st, "group_size", *g);
    if (op.getActivation())
      setS(st, "activation", tf::stringifyActivationKind(op.getActivation()->getValue()).str());
  } else if (auto op = dyn_cast<ex::LogitsOp>(o)) {
    TRY(in({op.getHidden(), op.getLmHead(), op.getBias()}));
    TRY(out({op.getOut()}));
    setS(st, "out_dtype", dtypeOf(op.getOut()));
    setF(st, "softcap", op.getSoftcap());
    setI(st, "select_last", op.getSelectLast() ? 1 : 0);
  } else if (auto op = dyn_cast<ex::SplitOp>(o)) {
    TRY(in({op.getInput()}));
    pb::Attribute *sizes = st.add_attributes();
    sizes->set_name("sizes");
    for (Value r : op.getOutputs()) {
      TRY(b.output(st, r, o));
      sizes->mutable_ints()->add_values(cast<ex::ViewType>(r.getType()).getShape().back());
    }
  } else if (auto op = dyn_cast<ex::CopyOp>(o)) {
    TRY(in({op.getSource()}));
    TRY(out({op.getTarget()}));
  } else if (auto op = dyn_cast<ex::CollectiveOp>(o)) {
    TRY(in({op.getInput()}));
    TRY(out({op.getOutput()}));
    setI(st, "collective", int64_t(op.getKind()));
    if (op.getReduction())
      setS(st, "kind", ex::stringifyReduceKind(*op.getReduction()).str());
    if (op.getKind() != ex::CollectiveKind::all_reduce)
      setI(st, "axis", op.getAxis());
    setI(st, "group_size", op.getGroup());
  } else if (auto op = dyn_cast<ex::PpTransferOp>(o)) {
    TRY(in({op.getInput()}));
    TRY(out({op.getOutput()}));
    setI(st, "from_stage", op.getFromStage());
    setI(st, "to_stage", op.getToStage());
  } else if (auto op = dyn_cast<ex::OnnxOp>(o)) {
    st.set_onnx_op(op.getOp().str());
    if (op.getDomain())
      st.set_onnx_domain(op.getDomain()->str());
    auto present = [](std::optional<ArrayRef<bool>> p, size_t n) {
      return p ? SmallVector<bool>(p->begin(), p->end()) : SmallVector<bool>(n, true);
    };
    size_t next = 0;
    for (bool here : present(op.getInputPresent(), op.getInputs().size()))
      TRY(b.input(st, here ? op.getInputs()[next++] : Value(), o));
    next = 0;
    for (bool here : present(op.getOutputPresent(), op.getOutputs().size())) {
      if (!here) {
        st.add_outputs(-1);
        continue;
      }
      TRY(b.output(st, op.getOutputs()[next++], o));
    }
    while (st.outputs_size() > 0 && st.outputs(st.outputs_size() - 1) == -1)
      st.mutable_outputs()->RemoveLast();
    setI(st, "accel.num_outputs", st.outputs_size());
    if (DictionaryAttr attrs = op.getAttrsAttr())
      for (NamedAttribute a : attrs)
        if (llvm::Error e = onnxAttr(b, st, a.getName().getValue(), a.getValue()))
          return error(describeOp(o) + ": " + llvm::toString(std::move(e)));
  } else {
    return error(describeOp(o) + " has no plan step yet");
  }
#undef TRY
  return llvm::Error::success();
}

/// The weights sections, written by all cores: each tensor is cut into
/// chunks of rows (at most kChunkBytes), every chunk is computed (lazy
/// weights: transposed, narrowed, quantised, sliced... on the fly), given
/// its CRC and written at its offset with pwrite; the section's CRC is the
/// chunks' combined in file order, with the zero padding between them. At
/// most one chunk per thread is in memory.
class WeightsWriter {
public:
  static constexpr size_t kChunkBytes = size_t(16) << 20;

  struct Job {
    const ScheduleBuilder::Constant *constant;
    size_t shard;
    int64_t begin, end; // rows; or bytes of an owned tensor (rowBytes 1)
    uint64_t fileOffset;
    uint64_t length;
    uint32_t crc = 0;
  };

  WeightsWriter(int fd, const std::vector<ScheduleBuilder::Constant> &constants,
                const PlanOptions &options)
      : fd_(fd), constants_(constants), options_(options) {}

  /// Plans the chunks of one weights section (rank `rank`) at `base`.
  void addSection(size_t rank, uint64_t base, uint64_t size) {
    Section sec;
    sec.base = base;
    sec.size = size;
    sec.firstJob = jobs_.size();
    for (const auto &c : constants_) {
      size_t shard = c.count() == 1 ? 0 : rank;
      uint64_t at = base + c.offset;
      if (!c.shards.empty()) {
        std::optional<weights::Rows> rows = weights::rowsOf(c.shards[shard]);
        const int64_t step =
            std::max<int64_t>(1, int64_t(kChunkBytes / std::max<size_t>(rows->rowBytes, 1)));
        for (int64_t r = 0; r < rows->rows; r += step) {
          int64_t e = std::min(rows->rows, r + step);
          jobs_.push_back({&c, shard, r, e, at, uint64_t(e - r) * rows->rowBytes});
          at += uint64_t(e - r) * rows->rowBytes;
        }
      } else {
        const int64_t n = int64_t(c.owned[shard]->byteSize());
        for (int64_t r = 0; r < n; r += int64_t(kChunkBytes)) {
          int64_t e = std::min(n, r + int64_t(kChunkBytes));
          jobs_.push_back({&c, shard, r, e, at, uint64_t(e - r)});
          at += uint64_t(e - r);
        }
      }
      ++sec.tensors;
    }
    sec.endJob = jobs_.size();
    sections_.push_back(sec);
    totalTensors_ += sec.tensors;
  }

  /// Computes and writes every chunk; the sections' CRCs in order. Empty
  /// `error` on success.
  std::vector<uint32_t> run(std::string &error) {
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex mu;
    uint64_t tensorsDone = 0, bytesDone = 0;
    auto report = [&] {
      if (options_.onProgress)
        options_.onProgress("writing weights", tensorsDone, totalTensors_, bytesDone);
    };
    report();
    auto work = [&] {
      std::vector<char> buf;
      while (!failed) {
        size_t i = next++;
        if (i >= jobs_.size())
          return;
        Job &job = jobs_[i];
        const char *data;
        if (!job.constant->shards.empty()) {
          ElementsAttr attr = job.constant->shards[job.shard];
          std::optional<weights::Rows> rows = weights::rowsOf(attr);
          buf.resize(job.length);
          rows->produce(job.begin, job.end, buf.data());
          data = buf.data();
        } else {
          data = static_cast<const char *>(job.constant->owned[job.shard]->rawData()) + job.begin;
        }
        job.crc = fmt::crc32c(data, job.length);
        for (uint64_t done = 0; done < job.length;) {
          ssize_t n = ::pwrite(fd_, data + done, size_t(job.length - done),
                               off_t(job.fileOffset + done));
          if (n < 0 && errno == EINTR)
            continue;
          if (n <= 0) {
            std::lock_guard<std::mutex> lock(mu);
            error = std::strerror(n < 0 ? errno : ENOSPC);
            failed = true;
            return;
          }
          done += uint64_t(n);
        }
        std::lock_guard<std::mutex> lock(mu);
        bytesDone += job.length;
        // A tensor is done when its last chunk is (chunks finish in any
        // order; counting last chunks is close enough for a progress line).
        if (i + 1 == jobs_.size() || jobs_[i + 1].constant != job.constant ||
            jobs_[i + 1].shard != job.shard || jobs_[i + 1].begin == 0)
          ++tensorsDone;
        report();
      }
    };
    weights::runOnCores(int64_t(jobs_.size()), work);
    std::vector<uint32_t> crcs;
    if (failed)
      return crcs;
    // Each section's CRC: its chunks' combined with the zeros between them.
    std::vector<char> zeros(fmt::kSectionAlignment, 0);
    auto zeroCrc = [&](uint32_t crc, uint64_t n) {
      while (n) {
        size_t k = size_t(std::min<uint64_t>(n, zeros.size()));
        crc = fmt::crc32c(zeros.data(), k, crc);
        n -= k;
      }
      return crc;
    };
    for (const Section &sec : sections_) {
      uint32_t crc = 0;
      uint64_t pos = sec.base;
      for (size_t j = sec.firstJob; j < sec.endJob; ++j) {
        const Job &job = jobs_[j];
        crc = zeroCrc(crc, job.fileOffset - pos);
        crc = fmt::crc32cCombine(crc, job.crc, job.length);
        pos = job.fileOffset + job.length;
      }
      crc = zeroCrc(crc, sec.base + sec.size - pos);
      crcs.push_back(crc);
    }
    return crcs;
  }

private:
  struct Section {
    uint64_t base = 0, size = 0;
    size_t firstJob = 0, endJob = 0;
    uint64_t tensors = 0;
  };
  int fd_;
  const std::vector<ScheduleBuilder::Constant> &constants_;
  const PlanOptions &options_;
  std::vector<Job> jobs_;
  std::vector<Section> sections_;
  uint64_t totalTensors_ = 0;
};

/// pwrite of all of `n` bytes at `offset`.
bool writeAt(int fd, const void *data, size_t n, uint64_t offset) {
  const char *p = static_cast<const char *>(data);
  while (n) {
    ssize_t k = ::pwrite(fd, p, n, off_t(offset));
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    p += k;
    n -= size_t(k);
    offset += uint64_t(k);
  }
  return true;
}

} // namespace

llvm::Error accel::plan::writePlan(ModuleOp module, const PlanOptions &options,
                                   const std::string &path) {
  // The schedule, the KV pool and the arenas the exec passes declared.
  ex::ScheduleOp schedule;
  ex::KVPoolOp pool;
  ex::ArenaOp weights, activations;
  for (Operation &op : module.getBody()->getOperations()) {
    if (auto s = dyn_cast<ex::ScheduleOp>(op)) {
      if (schedule)
        return error("the module has more than one exec.schedule; a plan has one");
      schedule = s;
    } else if (auto p = dyn_cast<ex::KVPoolOp>(op)) {
      if (pool)
        return error("the module has more than one exec.kv_pool; a plan has one");
      pool = p;
    } else if (auto a = dyn_cast<ex::ArenaOp>(op)) {
      ex::ArenaOp &slot = a.getKind() == ex::ArenaKind::weights ? weights : activations;
      if (slot || a.getKind() == ex::ArenaKind::workspace)
        return error("the module declares arena @" + a.getSymName() +
                     ", and a plan has one weights and one activations arena");
      slot = a;
    }
  }
  if (!schedule)
    return error("the module has no exec.schedule: lower it with accel-lower-to-exec first");
  if (!pool)
    return error("the module has no exec.kv_pool");

  pb::PlanMetadata meta;
  meta.set_accelc_version(options.accelcVersion);
  meta.set_target(options.target);
  int64_t tpSize = 1, ppSize = 1;
  if (auto tp = module->getAttrOfType<IntegerAttr>("accel.tp_size"))
    tpSize = tp.getInt();
  if (auto pp = module->getAttrOfType<IntegerAttr>("accel.pp_size"))
    ppSize = pp.getInt();
  if (tpSize < 1 || tpSize > 4096)
    return error("the module has an invalid accel.tp_size of " + llvm::Twine(tpSize));
  if (ppSize < 1 || ppSize > 4096)
    return error("the module has an invalid accel.pp_size of " + llvm::Twine(ppSize));
  meta.set_tp_size(int32_t(tpSize));
  meta.set_pp_size(int32_t(ppSize));
  meta.set_precision(options.precision);
  meta.set_compute_dtype(options.computeDType);

  pb::KVCache *kv = meta.mutable_kv_cache();
  kv->set_num_layers(pool.getLayers());
  kv->set_num_kv_heads(pool.getKvHeads());
  kv->set_head_dim(pool.getHeadDim());
  kv->set_block_size(pool.getBlockSize());
  std::optional<rt::DType> kvType = eval::toDType(pool.getDtype());
  if (!kvType)
    return error("the KV pool's element type has no runtime representation");
  kv->set_dtype(rt::dtypeName(*kvType));
  if (ppSize > 1) {
    std::optional<ArrayRef<int64_t>> stages = pool.getStageLayers();
    if (!stages || int64_t(stages->size()) != ppSize)
      return error("the plan has " + llvm::Twine(ppSize) +
                   " pipeline stages but the KV pool lists no layers for each");
    for (int64_t n : *stages)
      kv->add_stage_layers(n);
  }

  pb::Schedule &s = *meta.mutable_schedule();
  s.set_token_ids(-1);
  s.set_logits(-1);
  s.set_positions(-1);
  if (activations) {
    pb::Arena *arena = s.mutable_arena();
    arena->set_fixed_bytes(uint64_t(activations.getSize()));
    arena->set_bytes_per_token(uint64_t(activations.getPerToken()));
    arena->set_bytes_per_seq(uint64_t(activations.getPerSeq()));
    arena->set_alignment(uint32_t(activations.getAlignment()));
  }
  ScheduleBuilder b(s, weights ? uint64_t(weights.getSize()) : 0);

  for (Operation &op : schedule.getBody().front()) {
    const std::string name = locationName(op.getLoc());
    if (isa<ex::StepSizeOp>(op))
      continue;
    if (auto input = dyn_cast<ex::StepInputOp>(op)) {
      llvm::Expected<pb::Value *> v = b.define(input.getResult(), name);
      if (!v)
        return error(describeOp(&op) + ": " + llvm::toString(v.takeError()));
      (*v)->set_placement(pb::Value::STEP_INPUT);
      if (input.getKind() == ex::StepInputKind::token_ids) {
        (*v)->set_step_input(pb::Value::TOKEN_IDS);
        (*v)->set_name("token_ids");
        s.set_token_ids((*v)->id());
      } else {
        (*v)->set_step_input(pb::Value::POSITIONS);
        (*v)->set_name("positions");
        s.set_positions((*v)->id());
      }
      continue;
    }
    if (auto w = dyn_cast<ex::WeightOp>(op)) {
      llvm::Expected<pb::Value *> v = b.define(w.getResult(), w.getName().str());
      if (!v)
        return error(describeOp(&op) + ": " + llvm::toString(v.takeError()));
      std::vector<ElementsAttr> shards;
      if (std::optional<ArrayAttr> parts = w.getShards()) {
        if (int64_t(parts->size()) != tpSize)
          return error(describeOp(&op) + " has " + llvm::Twine(parts->size()) +
                       " tensor-parallel shards in a plan of " + llvm::Twine(tpSize) + " ranks");
        for (mlir::Attribute a : *parts)
          shards.push_back(cast<ElementsAttr>(a));
      } else if (std::optional<ElementsAttr> value = w.getValue()) {
        shards.push_back(*value);
      } else {
        return error(describeOp(&op) + " (weight '" + w.getName() +
                     "') has no bytes: it was printed with its weights elided");
      }
      // Checked now, computed when written: a runtime dtype, values present.
      uint64_t bytes = 0;
      bool holdBytes = false;
      for (ElementsAttr a : shards) {
        auto type = cast<ShapedType>(a.getType());
        std::optional<rt::DType> dt = eval::toDType(type.getElementType());
        if (!dt || !type.hasStaticShape())
          return error(describeOp(&op) + ": constant of a type that has no runtime representation");
        if (!weights::hasValues(a) && !isa<DenseElementsAttr>(a))
          return error(describeOp(&op) + " (weight '" + w.getName() +
                       "') has no bytes: it was printed with its weights elided");
        holdBytes |= !weights::rowsOf(a);
        bytes = uint64_t(type.getNumElements()) * rt::dtypeSize(*dt);
      }
      if (uint64_t(w.getOffset()) + bytes > b.weightsSize())
        return error(describeOp(&op) + " (weight '" + w.getName() +
                     "') does not fit the weights arena");
      b.weight(**v, uint64_t(w.getOffset()), shards, bytes);
      if (holdBytes) { // sub-byte and boolean weights: as the evaluator reads them
        auto &c = b.constants().back();
        for (ElementsAttr a : shards) {
          llvm::Expected<rt::Tensor> t = eval::toTensor(a);
          if (!t)
            return error(describeOp(&op) + ": " + llvm::toString(t.takeError()));
          c.owned.push_back(std::make_shared<rt::Tensor>(std::move(*t)));
        }
        c.shards.clear();
      }
      continue;
    }
    if (auto slice = dyn_cast<ex::SliceOp>(op)) {
      llvm::Expected<pb::Value *> v = b.define(slice.getResult(), name);
      if (!v)
        return error(describeOp(&op) + ": " + llvm::toString(v.takeError()));
      (*v)->set_placement(pb::Value::ARENA);
      (*v)->set_region(slice.getRegion() == ex::ArenaRegion::fixed    ? pb::Value::FIXED
                       : slice.getRegion() == ex::ArenaRegion::tokens ? pb::Value::TOKENS
                                                                      : pb::Value::SEQS);
      (*v)->set_arena_offset(uint64_t(slice.getOffset()));
      continue;
    }
    if (auto view = dyn_cast<ex::ViewOp>(op)) {
      llvm::Expected<int32_t> source = b.use(view.getSource(), &op);
      if (!source)
        return source.takeError();
      llvm::Expected<pb::Value *> v = b.define(view.getResult(), name);
      if (!v)
        return error(describeOp(&op) + ": " + llvm::toString(v.takeError()));
      (*v)->set_placement(pb::Value::VIEW);
      (*v)->set_view_of(*source);
      continue;
    }
    if (auto out = dyn_cast<ex::StepOutputOp>(op)) {
      llvm::Expected<int32_t> id = b.use(out.getView(), &op);
      if (!id)
        return id.takeError();
      if (out.getKind() != ex::StepOutputKind::logits)
        return error(describeOp(&op) + ": a plan's step outputs logits");
      s.set_logits(*id);
      meta.mutable_model()->set_vocab_size(
          cast<ex::ViewType>(out.getView().getType()).getShape().back());
      continue;
    }
    if (isa<ex::AllocOp>(op))
      return error(describeOp(&op) + " is a buffer without a place: run "
                                     "accel-exec-assign-buffers before writing the plan");
    pb::StepKind kind = stepKindOf(&op);
    if (kind == pb::STEP_KIND_UNSPECIFIED)
      return error(describeOp(&op) + " cannot be written to a plan");
    pb::Step &st = *s.add_steps();
    st.set_kind(kind);
    st.set_location(name);
    if (auto stage = op.getAttrOfType<IntegerAttr>("accel.pp_stage"))
      st.set_stage(int32_t(stage.getInt())); // accelc -pp (passes/Partition)
    // The generated kernel it runs (accel-exec-select-kernels), first.
    if (auto kernel = op.getAttrOfType<FlatSymbolRefAttr>("kernel"))
      setS(st, "kernel", kernel.getValue().str());
    if (llvm::Error e = stepOperands(b, st, &op))
      return e;
  }
  if (s.token_ids() < 0)
    return error("the schedule reads no token ids");
  if (s.logits() < 0)
    return error("the schedule has no logits output (exec.step_output logits)");
  const codegen::GeneratedKernels *kernels =
      options.kernels && !options.kernels->empty() ? options.kernels : nullptr;

  pb::ModelConfig *model = meta.mutable_model();
  model->set_source(options.source);
  if (auto producer = module->getAttrOfType<StringAttr>("onnx.producer"))
    model->set_producer(producer.getValue().str());
  // Without config.json's max positions, a learned position table (GPT-2's
  // wpe: an embedding read with the step's positions) bounds them.
  int64_t maxPosition = options.maxPosition;
  if (maxPosition == 0)
    schedule.walk([&](ex::EmbeddingOp op) {
      auto table = cast<ex::ViewType>(op.getTable().getType());
      // Through the views between them.
      mlir::Value ids = op.getIds();
      while (auto view = ids.getDefiningOp<ex::ViewOp>())
        ids = view.getSource();
      auto input = ids.getDefiningOp<ex::StepInputOp>();
      if (input && input.getKind() == ex::StepInputKind::positions && !table.isDynamicDim(0))
        maxPosition = maxPosition ? std::min(maxPosition, table.getDimSize(0)) : table.getDimSize(0);
    });
  model->set_max_position(maxPosition);
  for (int32_t id : options.eosTokenIds)
    model->add_eos_token_ids(id);
  model->set_bos_token_id(options.bosTokenId);
  if (!options.chatTemplates.empty() || !options.specialTokens.empty()) {
    pb::ChatTemplates *chat = meta.mutable_chat_templates();
    for (const auto &[name, source] : options.chatTemplates) {
      pb::ChatTemplate *t = chat->add_templates();
      t->set_name(name);
      t->set_source(source);
    }
    for (const auto &[name, text] : options.specialTokens)
      (*chat->mutable_special_tokens())[name] = text;
    chat->set_origin(options.chatTemplateOrigin);
  }

  // Layout: header page, weights, tokenizer, metadata.
  // One weights section per rank, all of one layout (constants name rank 0's).
  uint64_t offset = fmt::kSectionAlignment;
  std::vector<int> weightSections;
  for (int64_t rank = 0; rank < tpSize; ++rank) {
    pb::Section *weights = meta.add_sections();
    weights->set_name("weights.rank" + std::to_string(rank));
    weights->set_kind(pb::Section::WEIGHTS);
    weights->set_rank(int32_t(rank));
    weights->set_offset(offset);
    weights->set_size(b.weightsSize());
    weightSections.push_back(meta.sections_size() - 1);
    offset = fmt::alignUp(offset + b.weightsSize(), fmt::kSectionAlignment);
  }
  pb::Section *tokenizer = nullptr;
  if (!options.tokenizerJson.empty()) {
    tokenizer = meta.add_sections();
    tokenizer->set_name("tokenizer.json");
    tokenizer->set_kind(pb::Section::TOKENIZER);
    tokenizer->set_offset(offset);
    tokenizer->set_size(options.tokenizerJson.size());
    tokenizer->set_crc32c(
        fmt::crc32c(options.tokenizerJson.data(), options.tokenizerJson.size()));
    offset = fmt::alignUp(offset + options.tokenizerJson.size(), fmt::kSectionAlignment);
  }
  // Generated kernels: PTX, then the cubin when there is one.
  struct Image {
    pb::Section *section;
    const std::string *bytes;
  };
  std::vector<Image> images;
  if (kernels) {
    auto image = [&](const std::string &bytes, const std::string &name) -> int {
      pb::Section *sec = meta.add_sections();
      sec->set_name(name);
      sec->set_kind(pb::Section::KERNEL_IMAGE);
      sec->set_offset(offset);
      sec->set_size(bytes.size());
      sec->set_crc32c(fmt::crc32c(bytes.data(), bytes.size()));
      offset = fmt::alignUp(offset + bytes.size(), fmt::kSectionAlignment);
      images.push_back({sec, &bytes});
      return meta.sections_size() - 1;
    };
    const int ptx = image(kernels->ptx, "kernels." + kernels->chip + ".ptx");
    const int cubin =
        kernels->cubin.empty() ? -1 : image(kernels->cubin, "kernels." + kernels->chip + ".cubin");
    codegen::recordKernels(*kernels, ptx, cubin, meta);
  }

  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return error("cannot write '" + tmp + "': " + std::strerror(errno));
  auto fail = [&](const std::string &what) {
    ::close(fd);
    std::remove(tmp.c_str());
    return error("cannot write '" + path + "': " + what);
  };
  // Weights, every rank's section, on all cores (WeightsWriter); the
  // padding between tensors is left as holes, which read as zeros.
  {
    WeightsWriter ww(fd, b.constants(), options);
    for (size_t rank = 0; rank < weightSections.size(); ++rank) {
      const pb::Section &weights = meta.sections(weightSections[rank]);
      ww.addSection(rank, weights.offset(), weights.size());
    }
    std::string why;
    std::vector<uint32_t> crcs = ww.run(why);
    if (!why.empty())
      return fail(why);
    for (size_t rank = 0; rank < weightSections.size(); ++rank)
      meta.mutable_sections(weightSections[rank])->set_crc32c(crcs[rank]);
  }
  if (tokenizer && !writeAt(fd, options.tokenizerJson.data(), options.tokenizerJson.size(),
                            tokenizer->offset()))
    return fail(std::strerror(errno));
  for (const Image &img : images)
    if (!writeAt(fd, img.bytes->data(), img.bytes->size(), img.section->offset()))
      return fail(std::strerror(errno));
  std::string metaBytes;
  if (!meta.SerializeToString(&metaBytes))
    return fail("the metadata does not serialise");
  fmt::Header h;
  h.metadataOffset = offset;
  h.metadataSize = metaBytes.size();
  h.metadataCrc = fmt::crc32c(metaBytes.data(), metaBytes.size());
  h.target = options.target;
  h.tpSize = uint32_t(tpSize);
  if (!writeAt(fd, metaBytes.data(), metaBytes.size(), offset))
    return fail(std::strerror(errno));
  h.fileSize = offset + metaBytes.size();
  std::string header = fmt::encodeHeader(h);
  if (!writeAt(fd, header.data(), header.size(), 0))
    return fail(std::strerror(errno));
  if (::close(fd) != 0) {
    std::remove(tmp.c_str());
    return error("cannot write '" + path + "': " + std::strerror(errno));
  }
  if (options.checkWritten) {
    if (std::string refused = options.checkWritten(tmp); !refused.empty()) {
      std::remove(tmp.c_str());
      return error(refused);
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    std::remove(tmp.c_str());
    return error("cannot write '" + path + "': " + ec.message());
  }
  return llvm::Error::success();
}
