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

#include <cstdio>

using namespace mlir;
namespace ex = accel::exec;
namespace tf = accel::transformer;
namespace pb = accel::plan;
namespace fmt = accel::rt::plan;

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

  /// A weight: its bytes (one tensor, or one per rank) at `offset`.
  void weight(pb::Value &pv, uint64_t offset, std::vector<accel::rt::Tensor> shards) {
    pv.set_is_constant(true);
    pv.set_placement(pb::Value::CONSTANT);
    pv.set_section(0);
    pv.set_offset(offset);
    pv.set_size(shards.front().byteSize());
    constants_.push_back({offset, std::move(shards)});
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
    std::vector<accel::rt::Tensor> one;
    one.push_back(std::move(t));
    weight(*pv, at, std::move(one));
    return pv->id();
  }

  struct Constant {
    uint64_t offset;
    std::vector<accel::rt::Tensor> shards; // one per rank, or one for all
    const accel::rt::Tensor &forRank(size_t rank) const {
      return shards.size() == 1 ? shards.front() : shards[rank];
    }
  };
  const std::vector<Constant> &constants() const { return constants_; }
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

class FileWriter {
public:
  explicit FileWriter(std::FILE *f) : f_(f) {}
  bool write(const void *data, size_t n) {
    if (n && std::fwrite(data, 1, n, f_) != n)
      return false;
    pos_ += n;
    return true;
  }
  bool padTo(uint64_t offset) {
    static const char zeros[4096] = {};
    while (pos_ < offset)
      if (!write(zeros, size_t(std::min<uint64_t>(sizeof(zeros), offset - pos_))))
        return false;
    return true;
  }
  uint64_t pos() const { return pos_; }

private:
  std::FILE *f_;
  uint64_t pos_ = 0;
};

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
      std::vector<rt::Tensor> shards;
      if (std::optional<ArrayAttr> parts = w.getShards()) {
        if (int64_t(parts->size()) != tpSize)
          return error(describeOp(&op) + " has " + llvm::Twine(parts->size()) +
                       " tensor-parallel shards in a plan of " + llvm::Twine(tpSize) + " ranks");
        for (mlir::Attribute a : *parts) {
          llvm::Expected<rt::Tensor> t = eval::toTensor(cast<ElementsAttr>(a));
          if (!t)
            return error(describeOp(&op) + ": " + llvm::toString(t.takeError()));
          shards.push_back(std::move(*t));
        }
      } else if (std::optional<ElementsAttr> value = w.getValue()) {
        llvm::Expected<rt::Tensor> t = eval::toTensor(*value);
        if (!t)
          return error(describeOp(&op) + ": " + llvm::toString(t.takeError()));
        shards.push_back(std::move(*t));
      } else {
        return error(describeOp(&op) + " (weight '" + w.getName() +
                     "') has no bytes: it was printed with its weights elided");
      }
      if (uint64_t(w.getOffset()) + shards.front().byteSize() > b.weightsSize())
        return error(describeOp(&op) + " (weight '" + w.getName() +
                     "') does not fit the weights arena");
      b.weight(**v, uint64_t(w.getOffset()), std::move(shards));
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
  std::FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    return error("cannot write '" + tmp + "': " + std::strerror(errno));
  FileWriter w(f);
  auto fail = [&](const std::string &what) {
    std::fclose(f);
    std::remove(tmp.c_str());
    return error("cannot write '" + path + "': " + what);
  };
  // Weights, rank by rank, with their CRC computed as they go out (padding
  // included).
  static const char zeros[fmt::kTensorAlignment] = {};
  const uint64_t totalTensors = uint64_t(b.constants().size()) * weightSections.size();
  uint64_t tensorsWritten = 0, bytesWritten = 0;
  auto progress = [&] {
    if (options.onProgress)
      options.onProgress("writing weights", tensorsWritten, totalTensors, bytesWritten);
  };
  progress();
  for (size_t rank = 0; rank < weightSections.size(); ++rank) {
    pb::Section *weights = meta.mutable_sections(weightSections[rank]);
    if (!w.padTo(weights->offset()))
      return fail(std::strerror(errno));
    uint32_t wcrc = 0;
    for (const auto &c : b.constants()) {
      const rt::Tensor &data = c.forRank(rank);
      uint64_t pad = weights->offset() + c.offset - w.pos();
      wcrc = fmt::crc32c(zeros, size_t(pad), wcrc);
      if (!w.padTo(weights->offset() + c.offset) || !w.write(data.rawData(), data.byteSize()))
        return fail(std::strerror(errno));
      wcrc = fmt::crc32c(data.rawData(), data.byteSize(), wcrc);
      ++tensorsWritten;
      bytesWritten += data.byteSize();
      progress();
    }
    uint64_t tail = weights->offset() + weights->size() - w.pos();
    wcrc = fmt::crc32c(zeros, size_t(tail), wcrc);
    if (!w.padTo(weights->offset() + weights->size()))
      return fail(std::strerror(errno));
    weights->set_crc32c(wcrc);
  }
  if (tokenizer && (!w.padTo(tokenizer->offset()) ||
                    !w.write(options.tokenizerJson.data(), options.tokenizerJson.size())))
    return fail(std::strerror(errno));
  for (const Image &img : images)
    if (!w.padTo(img.section->offset()) || !w.write(img.bytes->data(), img.bytes->size()))
      return fail(std::strerror(errno));
  if (!w.padTo(offset))
    return fail(std::strerror(errno));
  std::string metaBytes;
  if (!meta.SerializeToString(&metaBytes))
    return fail("the metadata does not serialise");
  fmt::Header h;
  h.metadataOffset = w.pos();
  h.metadataSize = metaBytes.size();
  h.metadataCrc = fmt::crc32c(metaBytes.data(), metaBytes.size());
  h.target = options.target;
  h.tpSize = uint32_t(tpSize);
  if (!w.write(metaBytes.data(), metaBytes.size()))
    return fail(std::strerror(errno));
  h.fileSize = w.pos();
  std::string header = fmt::encodeHeader(h);
  if (std::fseek(f, 0, SEEK_SET) != 0 || std::fwrite(header.data(), 1, header.size(), f) != header.size())
    return fail(std::strerror(errno));
  if (std::fclose(f) != 0) {
    std::remove(tmp.c_str());
    return error("cannot write '" + path + "': " + std::strerror(errno));
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    std::remove(tmp.c_str());
    return error("cannot write '" + path + "': " + ec.message());
  }
  return llvm::Error::success();
}
