//===- PlanSteps.cpp - each exec op as a plan step -------------------------===//
//
// The operands, results and attributes of every exec step op, as the plan's
// step table (docs/plan-format.md) has them, and the names and kinds the
// writer gives steps.
//
//===----------------------------------------------------------------------===//
#include "PlanSchedule.h"

namespace accel::planwriter {

llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
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

} // namespace accel::planwriter
