//===- PlanWriter.cpp - serialise a compiled model as a plan file ----------===//
//
// One pass over the entry function in program order: every SSA value gets a
// plan value id, every constant a place in the weights section, every op a
// step (docs/plan-format.md lists the step kinds and their operands). The
// file is written to `<path>.tmp` and renamed, so a failed compile never
// leaves a half-written plan behind.
//
//===----------------------------------------------------------------------===//
#include "accel/Plan/PlanWriter.h"

#include "accel/Codegen/Codegen.h"

#include "accel/Eval/Evaluator.h"
#include "accel/Eval/Stepper.h"
#include "accel/dialects/Onnx/OnnxOps.h"
#include "accel/dialects/Transformer/TransformerOps.h"
#include "runtime/plan/Plan.pb.h"
#include "runtime/plan/PlanFormat.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

using namespace mlir;
namespace tf = accel::transformer;
namespace pb = accel::plan;
namespace fmt = accel::rt::plan;

namespace {

llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// "node_name" for a location the importer made, else a printed location.
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

class ScheduleBuilder {
public:
  explicit ScheduleBuilder(pb::PlanMetadata &meta) : meta_(meta), s_(*meta.mutable_schedule()) {}

  /// A new value for `v` (an op result or an argument).
  llvm::Expected<int32_t> define(Value v, const std::string &name) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      return error("a value of type that is not a ranked tensor cannot live in a plan");
    std::optional<accel::rt::DType> dt = accel::eval::toDType(type.getElementType());
    if (!dt)
      return error("element type of a value has no runtime representation");
    pb::Value *pv = s_.add_values();
    pv->set_id(s_.values_size() - 1);
    pv->set_dtype(accel::rt::dtypeName(*dt));
    for (int64_t d : type.getShape())
      pv->add_shape(ShapedType::isDynamic(d) ? -1 : d);
    pv->set_name(name);
    ids_[v] = pv->id();
    return pv->id();
  }

  /// A new constant value holding `t` (appended to the weights section).
  int32_t constant(accel::rt::Tensor t, const std::string &name, Value v = {}) {
    std::vector<accel::rt::Tensor> shards;
    shards.push_back(std::move(t));
    return constant(std::move(shards), name, v);
  }

  /// A new constant with one tensor per tensor-parallel rank (or one for
  /// all): every rank's weights section holds its shard at the same offset.
  int32_t constant(std::vector<accel::rt::Tensor> shards, const std::string &name,
                   Value v = {}) {
    const accel::rt::Tensor &t = shards.front();
    pb::Value *pv = s_.add_values();
    pv->set_id(s_.values_size() - 1);
    pv->set_dtype(accel::rt::dtypeName(t.dtype()));
    for (int64_t d : t.shape())
      pv->add_shape(d);
    pv->set_name(name);
    pv->set_is_constant(true);
    pv->set_section(0);
    weightsSize_ = fmt::alignUp(weightsSize_, fmt::kTensorAlignment);
    pv->set_offset(weightsSize_);
    pv->set_size(t.byteSize());
    weightsSize_ += t.byteSize();
    uint64_t at = weightsSize_ - t.byteSize();
    constants_.push_back({at, std::move(shards)});
    if (v)
      ids_[v] = pv->id();
    return pv->id();
  }

  llvm::Expected<int32_t> use(Value v, Operation *user) {
    auto it = ids_.find(v);
    if (it == ids_.end())
      return error(describeOp(user) + " reads a value the plan cannot carry (a !transformer "
                                      "type where a tensor is expected)");
    return it->second;
  }

  pb::Step &step(const char *kind, const std::string &op, Operation *from) {
    pb::Step *st = s_.add_steps();
    st->set_kind(kind);
    st->set_op(op);
    st->set_location(locationName(from->getLoc()));
    if (auto stage = from->getAttrOfType<IntegerAttr>("accel.pp_stage"))
      st->set_stage(int32_t(stage.getInt())); // accelc -pp (passes/Partition)
    if (kernelOf_)
      if (auto it = kernelOf_->find(from); it != kernelOf_->end()) {
        pb::Attribute *a = st->add_attributes();
        a->set_name("kernel"); // the generated kernel it launches
        a->set_s(it->second);
      }
    return *st;
  }

  /// The generated kernel of each op that has one (lib/Codegen).
  void setKernels(const llvm::DenseMap<Operation *, std::string> *kernelOf) {
    kernelOf_ = kernelOf;
  }

  /// Adds `v` (or -1 when null) as the next input of `st`.
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

  llvm::Error outputs(pb::Step &st, Operation *op) {
    for (Value r : op->getResults()) {
      llvm::Expected<int32_t> id = define(r, locationName(op->getLoc()));
      if (!id)
        return error(describeOp(op) + ": " + llvm::toString(id.takeError()));
      st.add_outputs(*id);
    }
    return llvm::Error::success();
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
  pb::PlanMetadata &meta_;
  pb::Schedule &s_;
  const llvm::DenseMap<Operation *, std::string> *kernelOf_ = nullptr;
  llvm::DenseMap<Value, int32_t> ids_;
  std::vector<Constant> constants_;
  uint64_t weightsSize_ = 0;
};

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

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

/// An ONNX attribute, as OnnxEval hands them to the same kernels.
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
    a->set_tensor(b.constant(std::move(*t), st.location() + "." + name.str()));
  } else {
    return error("attribute '" + name + "' has a kind a plan cannot carry");
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

llvm::Error onnxConstant(ScheduleBuilder &b, Operation *op, int64_t tpSize) {
  // A constant of a partitioned function (passes/Partition): one value per
  // rank, all of one type.
  if (auto shards = op->getAttrOfType<ArrayAttr>("accel.tp_shards")) {
    if (int64_t(shards.size()) != tpSize)
      return error(describeOp(op) + " has " + llvm::Twine(shards.size()) +
                   " tensor-parallel shards but the function has " + llvm::Twine(tpSize) +
                   " ranks");
    std::vector<accel::rt::Tensor> tensors;
    for (Attribute a : shards) {
      auto e = dyn_cast<ElementsAttr>(a);
      if (!e)
        return error(describeOp(op) + " has a tensor-parallel shard that is not a tensor");
      llvm::Expected<accel::rt::Tensor> t = accel::eval::toTensor(e);
      if (!t)
        return error(describeOp(op) + ": " + llvm::toString(t.takeError()));
      if (!tensors.empty() && (t->shape() != tensors.front().shape() ||
                               t->dtype() != tensors.front().dtype()))
        return error(describeOp(op) + " has tensor-parallel shards of different types");
      tensors.push_back(std::move(*t));
    }
    b.constant(std::move(tensors), locationName(op->getLoc()), op->getResult(0));
    return llvm::Error::success();
  }
  // Evaluate it with the same code the evaluator uses (value, value_float,
  // value_ints, ...).
  accel::eval::Evaluator ev;
  llvm::Expected<accel::rt::Tensor> t = ev.evaluate(op->getResult(0));
  if (!t)
    return error(describeOp(op) + ": " + llvm::toString(t.takeError()));
  b.constant(std::move(*t), locationName(op->getLoc()), op->getResult(0));
  return llvm::Error::success();
}

llvm::Error onnxOp(ScheduleBuilder &b, Operation *op) {
  StringRef name = op->getName().getStringRef();
  name.consume_front("onnx.");
  std::string type = name.consume_front("ms_") ? "onnx.com.microsoft." + name.str()
                                               : "onnx." + name.str();
  pb::Step &st = b.step("launch", type, op);
  DictionaryAttr attrs = op->getAttrDictionary();

  // Positional inputs and outputs, -1 for absent optional ones.
  if (auto seg = dyn_cast_or_null<DenseI32ArrayAttr>(attrs.get("operandSegmentSizes"))) {
    unsigned next = 0;
    for (int32_t n : seg.asArrayRef()) {
      if (n == 0)
        st.add_inputs(-1);
      for (int32_t i = 0; i < n; ++i)
        if (llvm::Error e = b.input(st, op->getOperand(next++), op))
          return e;
    }
  } else {
    for (Value v : op->getOperands())
      if (llvm::Error e = b.input(st, v, op))
        return e;
  }
  if (auto seg = dyn_cast_or_null<DenseI32ArrayAttr>(attrs.get("resultSegmentSizes"))) {
    unsigned next = 0;
    for (int32_t n : seg.asArrayRef()) {
      if (n == 0)
        st.add_outputs(-1);
      for (int32_t i = 0; i < n; ++i) {
        Value r = op->getResult(next++);
        llvm::Expected<int32_t> id = b.define(r, locationName(op->getLoc()));
        if (!id)
          return error(describeOp(op) + ": " + llvm::toString(id.takeError()));
        st.add_outputs(*id);
      }
    }
    while (st.outputs_size() > 0 && st.outputs(st.outputs_size() - 1) == -1)
      st.mutable_outputs()->RemoveLast();
  } else if (llvm::Error e = b.outputs(st, op)) {
    return e;
  }
  setI(st, "accel.num_outputs", st.outputs_size());
  for (NamedAttribute a : attrs) {
    StringRef n = a.getName().getValue();
    if (n == "operandSegmentSizes" || n == "resultSegmentSizes" || n == "accel.pp_stage")
      continue;
    if (llvm::Error e = onnxAttr(b, st, n, a.getValue()))
      return error(describeOp(op) + ": " + llvm::toString(std::move(e)));
  }
  return llvm::Error::success();
}

/// A launch of `op`'s operands (absent optional ones as -1, and skipping
/// !transformer.batch / kv_cache operands) and results.
llvm::Expected<pb::Step *> launch(ScheduleBuilder &b, Operation *op, const std::string &name,
                                  ArrayRef<Value> inputs) {
  pb::Step &st = b.step("launch", name, op);
  for (Value v : inputs)
    if (llvm::Error e = b.input(st, v, op))
      return std::move(e);
  if (llvm::Error e = b.outputs(st, op))
    return std::move(e);
  return &st;
}

std::string dtypeOf(Value v) {
  auto t = cast<ShapedType>(v.getType());
  std::optional<accel::rt::DType> dt = accel::eval::toDType(t.getElementType());
  return dt ? accel::rt::dtypeName(*dt) : "";
}

/// The KV-cache attributes of a step that writes `op`'s k and v: the layer
/// and an FP8 cache's scales (per layer, or per KV head).
void kvWriteParams(pb::Step &st, tf::AttentionOp op) {
  setI(st, "layer", int64_t(op.getLayer()));
  setF(st, "k_scale", op.getKScale());
  setF(st, "v_scale", op.getVScale());
  setFloats(st, "k_head_scales", op.getKHeadScales());
  setFloats(st, "v_head_scales", op.getVHeadScales());
}

/// A rotation's attributes (transformer.rotary and transformer.qkv_rotary
/// carry the same): style, rotary_dim, theta and `scaling.*`.
template <typename OpT> void rotaryParams(pb::Step &s, OpT op) {
  setS(s, "style", tf::stringifyRotaryStyle(op.getStyle()).str());
  setI(s, "rotary_dim", int64_t(op.getRotaryDim()));
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

/// The attention whose KV-cache write a qkv_rotary step does itself: the
/// one attention that reads its k and v, as k and v, and nothing else does.
tf::AttentionOp fusedAttention(tf::QkvRotaryOp op) {
  if (!op.getK().hasOneUse() || !op.getV().hasOneUse())
    return {};
  auto attention = dyn_cast<tf::AttentionOp>(*op.getK().getUsers().begin());
  if (!attention || attention.getK() != op.getK() || attention.getV() != op.getV())
    return {};
  return attention;
}

llvm::Error qkvRotaryOp(ScheduleBuilder &b, tf::QkvRotaryOp op) {
  // Fused: `kv_write qkv_rotary` writes k and v into the cache and gives q
  // to the attention's attention_prefill. Else a launch of q, k, v.
  tf::AttentionOp attention = fusedAttention(op);
  pb::Step &st = b.step(attention ? "kv_write" : "launch", "qkv_rotary", op);
  for (Value v : {op.getQkv(), op.getPositions(), op.getCosCache(), op.getSinCache()})
    if (llvm::Error e = b.input(st, v, op))
      return e;
  if (attention) {
    llvm::Expected<int32_t> q = b.define(op.getQ(), locationName(op->getLoc()));
    if (!q)
      return error(describeOp(op) + ": " + llvm::toString(q.takeError()));
    st.add_outputs(*q);
    kvWriteParams(st, attention);
  } else if (llvm::Error e = b.outputs(st, op)) {
    return e;
  }
  setI(st, "num_heads", int64_t(op.getNumHeads()));
  setI(st, "num_kv_heads", int64_t(op.getNumKvHeads()));
  setI(st, "head_dim", int64_t(op.getHeadDim()));
  rotaryParams(st, op);
  return llvm::Error::success();
}

llvm::Error attentionOp(ScheduleBuilder &b, tf::AttentionOp op) {
  // exec.kv_write, then exec.attention_prefill (it serves decode tokens
  // too); a fused qkv_rotary step has written k and v already.
  auto qkv = op.getK().getDefiningOp<tf::QkvRotaryOp>();
  if (!qkv || fusedAttention(qkv) != op) {
    pb::Step &write = b.step("kv_write", "kv_write", op);
    if (llvm::Error e = b.input(write, op.getK(), op))
      return e;
    if (llvm::Error e = b.input(write, op.getV(), op))
      return e;
    kvWriteParams(write, op);
  }
  pb::Step &attend = b.step("attention_prefill", "attention", op);
  if (llvm::Error e = b.input(attend, op.getQ(), op))
    return e;
  if (llvm::Error e = b.outputs(attend, op))
    return e;
  kvWriteParams(attend, op);
  setF(attend, "scale", op.getScale().convertToDouble());
  setI(attend, "causal", op.getCausal() ? 1 : 0);
  if (std::optional<uint64_t> w = op.getSlidingWindow())
    setI(attend, "sliding_window", int64_t(*w));
  setF(attend, "softcap", op.getSoftcap());
  setI(attend, "num_heads", int64_t(op.getNumHeads()));
  setI(attend, "num_kv_heads", int64_t(op.getNumKvHeads()));
  setI(attend, "head_dim", int64_t(op.getHeadDim()));
  return llvm::Error::success();
}

/// A transformer.quantize that a W8A8 linear's gemm step does itself: f32
/// to i8 or f8E4M3FN, per-tensor f32 scale, no zero point, read only by
/// linears with that input scale.
bool w8a8Quantize(tf::QuantizeOp q) {
  auto in = cast<ShapedType>(q.getInput().getType());
  auto out = cast<ShapedType>(q.getResult().getType());
  auto scale = cast<ShapedType>(q.getScale().getType());
  const Type qt = out.getElementType();
  if (!in.getElementType().isF32() || !(qt.isInteger(8) || isa<Float8E4M3FNType>(qt)) ||
      q.getZeroPoint() ||
      scale.getRank() != 0 || !scale.getElementType().isF32())
    return false;
  return llvm::all_of(q.getResult().getUses(), [&](OpOperand &u) {
    auto l = dyn_cast<tf::LinearOp>(u.getOwner());
    return l && l.getX() == q.getResult() && l.getInputScale() == q.getScale();
  });
}

/// A transformer.dynamic_quantize that W8A8 linears' gemm steps do
/// themselves (`input_quant = "dynamic_per_token"`): f32 to i8 or f8E4M3FN
/// with per-token scales, both results read only by linears that take the
/// quantised x with those scales.
bool dynamicW8A8Quantize(tf::DynamicQuantizeOp q) {
  auto in = cast<ShapedType>(q.getInput().getType());
  auto out = cast<ShapedType>(q.getResult().getType());
  const Type qt = out.getElementType();
  if (!in.getElementType().isF32() || !(qt.isInteger(8) || isa<Float8E4M3FNType>(qt)) ||
      q.getScale().getType().getRank() != 1)
    return false;
  auto readByLinears = [&](Value v) {
    return llvm::all_of(v.getUses(), [&](OpOperand &u) {
      auto l = dyn_cast<tf::LinearOp>(u.getOwner());
      return l && l.getX() == q.getResult() && l.getInputScale() == q.getScale();
    });
  };
  return readByLinears(q.getResult()) && readByLinears(q.getScale());
}

llvm::Error transformerOp(ScheduleBuilder &b, Operation *o) {
  auto done = [](llvm::Expected<pb::Step *> st) -> llvm::Error {
    return st ? llvm::Error::success() : st.takeError();
  };
  // Folded into the W8A8 linears that read it (their gemm steps quantise).
  if (auto q = dyn_cast<tf::QuantizeOp>(o); q && w8a8Quantize(q))
    return llvm::Error::success();
  if (auto q = dyn_cast<tf::DynamicQuantizeOp>(o); q && dynamicW8A8Quantize(q))
    return llvm::Error::success();
  if (auto op = dyn_cast<tf::PositionsOp>(o)) {
    auto st = launch(b, o, "positions", {});
    if (st)
      setS(**st, "dtype", dtypeOf(op.getResult()));
    return done(std::move(st));
  }
  if (auto op = dyn_cast<tf::EmbeddingOp>(o)) {
    auto st = launch(b, o, "embedding", {op.getTable(), op.getIds()});
    if (st)
      setF(**st, "scale", op.getScale());
    // Vocabulary-parallel (accel-partition): rank r's table holds rows
    // [r * rows, (r+1) * rows) of the vocabulary.
    if (st && op.getVocabShards())
      setI(**st, "vocab_shards", int64_t(*op.getVocabShards()));
    // A padded vocabulary (accel-partition): ids stop at vocab_size.
    if (st && op.getVocabSize())
      setI(**st, "vocab_size", int64_t(*op.getVocabSize()));
    return done(std::move(st));
  }
  if (auto op = dyn_cast<tf::RmsNormOp>(o)) {
    auto st = launch(b, o, "rms_norm", {op.getX(), op.getWeight()});
    if (st) {
      setF(**st, "epsilon", op.getEpsilon().convertToDouble());
      setF(**st, "weight_offset", op.getWeightOffset());
    }
    return done(std::move(st));
  }
  if (auto op = dyn_cast<tf::AddRmsNormOp>(o)) {
    auto st = launch(b, o, "add_rms_norm", {op.getX(), op.getResidual(), op.getWeight()});
    if (st) {
      setF(**st, "epsilon", op.getEpsilon().convertToDouble());
      setF(**st, "weight_offset", op.getWeightOffset());
    }
    return done(std::move(st));
  }
  if (auto op = dyn_cast<tf::LayerNormOp>(o)) {
    auto st = launch(b, o, "layer_norm", {op.getX(), op.getWeight(), op.getBias()});
    if (st)
      setF(**st, "epsilon", op.getEpsilon().convertToDouble());
    return done(std::move(st));
  }
  if (auto op = dyn_cast<tf::ResidualAddOp>(o))
    return done(launch(b, o, "residual_add", {op.getResidual(), op.getBranch()}));
  if (auto op = dyn_cast<tf::LinearOp>(o)) {
    // Weight-only quantisation (docs/precision.md): an i8/i4/fp8 weight with
    // its scale as the fourth operand and an optional zero point as the fifth
    // (per tensor, per channel, or per group with `group_size`).
    // W8A8 (accel-quantize-activations): the i8 x comes from a per-tensor
    // transformer.quantize of an f32 tensor with the same scale; the step
    // reads that f32 tensor and quantises it itself, the input scale being
    // the sixth operand (after a -1 zero point when there is none).
    Value x = op.getX();
    bool dynamicX = false;
    if (auto dq = x.getDefiningOp<tf::DynamicQuantizeOp>();
        dq && op.getInputScale() == dq.getScale() && dynamicW8A8Quantize(dq)) {
      x = dq.getInput();
      dynamicX = true;
    } else if (Value xs = op.getInputScale()) {
      auto q = x.getDefiningOp<tf::QuantizeOp>();
      if (!q || !w8a8Quantize(q) || q.getScale() != xs)
        return error(describeOp(o) + ": a linear with quantised activations is written to a plan "
                                     "only when its i8 or f8E4M3FN x is a per-tensor "
                                     "transformer.quantize of an f32 tensor by the linear's "
                                     "input_scale");
      x = q.getInput();
    }
    pb::Step &st = b.step("gemm", "linear", o);
    for (Value v : {x, Value(op.getWeight()), Value(op.getBias())})
      if (llvm::Error e = b.input(st, v, o))
        return e;
    if (op.getWeightScale())
      if (llvm::Error e = b.input(st, op.getWeightScale(), o))
        return e;
    if (op.getWeightZeroPoint() || (op.getInputScale() && !dynamicX))
      if (llvm::Error e = b.input(st, op.getWeightZeroPoint(), o))
        return e;
    if (op.getInputScale() && !dynamicX)
      if (llvm::Error e = b.input(st, op.getInputScale(), o))
        return e;
    if (llvm::Error e = b.outputs(st, o))
      return e;
    setS(st, "out_dtype", dtypeOf(op.getResult()));
    if (dynamicX)
      setS(st, "input_quant", "dynamic_per_token");
    if (std::optional<tf::QuantGranularity> g = op.getGranularity())
      setS(st, "granularity", tf::stringifyQuantGranularity(*g).str());
    if (std::optional<uint64_t> group = op.getGroupSize())
      setI(st, "group_size", int64_t(*group));
    // The activation epilogue, spelled as a `launch activation` step's kind.
    if (std::optional<tf::ActivationKind> act = op.getActivation())
      setS(st, "activation", tf::stringifyActivationKind(*act).str());
    return llvm::Error::success();
  }
  if (auto op = dyn_cast<tf::LogitsOp>(o)) {
    pb::Step &st = b.step("gemm", "logits", o);
    for (Value v : {op.getHidden(), op.getLmHead(), op.getBias()})
      if (llvm::Error e = b.input(st, v, o))
        return e;
    if (llvm::Error e = b.outputs(st, o))
      return e;
    setS(st, "out_dtype", dtypeOf(op.getResult()));
    setS(st, "epilogue", "logits");
    setF(st, "softcap", op.getSoftcap());
    setI(st, "select_last", op.getBatch() ? 1 : 0);
    return llvm::Error::success();
  }
  if (auto op = dyn_cast<tf::RotaryOp>(o)) {
    auto st = launch(b, o, "rotary",
                     {op.getInput(), op.getPositions(), op.getCosCache(), op.getSinCache()});
    if (!st)
      return st.takeError();
    rotaryParams(**st, op);
    return llvm::Error::success();
  }
  if (auto op = dyn_cast<tf::QkvRotaryOp>(o))
    return qkvRotaryOp(b, op);
  if (auto op = dyn_cast<tf::AttentionOp>(o))
    return attentionOp(b, op);
  if (auto op = dyn_cast<tf::ActivationOp>(o)) {
    auto st = launch(b, o, "activation", {op.getInput()});
    if (st)
      setS(**st, "kind", tf::stringifyActivationKind(op.getKind()).str());
    return done(std::move(st));
  }
  if (auto op = dyn_cast<tf::GatedActOp>(o)) {
    auto st = launch(b, o, "gated_act", {op.getInput()});
    if (st)
      setS(**st, "kind", tf::stringifyActivationKind(op.getKind()).str());
    return done(std::move(st));
  }
  if (auto op = dyn_cast<tf::GatedMlpOp>(o)) {
    auto st = launch(b, o, "gated_mlp",
                     {op.getX(), op.getGateUp(), op.getGate(), op.getUp(), op.getDown()});
    if (st)
      setS(**st, "kind", tf::stringifyActivationKind(op.getKind()).str());
    return done(std::move(st));
  }
  if (auto op = dyn_cast<tf::SplitOp>(o)) {
    auto st = launch(b, o, "split", {op.getInput()});
    if (!st)
      return st.takeError();
    pb::Attribute *a = (*st)->add_attributes();
    a->set_name("sizes");
    for (Value r : op.getResults())
      a->mutable_ints()->add_values(cast<RankedTensorType>(r.getType()).getDimSize(1));
    return llvm::Error::success();
  }
  if (auto op = dyn_cast<tf::SplitHeadsOp>(o)) {
    auto st = launch(b, o, "split_heads", {op.getInput()});
    if (st)
      setI(**st, "num_heads", op.getResult().getType().getDimSize(1));
    return done(std::move(st));
  }
  if (auto op = dyn_cast<tf::MergeHeadsOp>(o))
    return done(launch(b, o, "merge_heads", {op.getInput()}));
  if (auto op = dyn_cast<tf::FlattenTokensOp>(o)) {
    auto st = launch(b, o, "flatten_tokens", {op.getInput()});
    if (st)
      setI(**st, "rank", op.getResult().getType().getRank());
    return done(std::move(st));
  }
  if (auto op = dyn_cast<tf::UnflattenTokensOp>(o)) {
    auto st = launch(b, o, "unflatten_tokens", {op.getInput(), op.getLike()});
    if (st)
      setI(**st, "num_token_dims", op.getNumTokenDims());
    return done(std::move(st));
  }
  if (auto op = dyn_cast<tf::AllReduceOp>(o)) {
    pb::Step &st = b.step("collective", "all_reduce", o);
    if (llvm::Error e = b.input(st, op.getInput(), o))
      return e;
    if (llvm::Error e = b.outputs(st, o))
      return e;
    setI(st, "group_size", int64_t(op.getGroupSize()));
    setS(st, "kind", tf::stringifyReduceKind(op.getKind()).str());
    return llvm::Error::success();
  }
  if (auto op = dyn_cast<tf::PpTransferOp>(o)) {
    pb::Step &st = b.step("collective", "pp_transfer", o);
    if (llvm::Error e = b.input(st, op.getInput(), o))
      return e;
    if (llvm::Error e = b.outputs(st, o))
      return e;
    setI(st, "from_stage", int64_t(op.getFromStage()));
    setI(st, "to_stage", int64_t(op.getToStage()));
    return llvm::Error::success();
  }
  if (auto op = dyn_cast<tf::AllGatherOp>(o)) {
    pb::Step &st = b.step("collective", "all_gather", o);
    if (llvm::Error e = b.input(st, op.getInput(), o))
      return e;
    if (llvm::Error e = b.outputs(st, o))
      return e;
    setI(st, "group_size", int64_t(op.getGroupSize()));
    setI(st, "axis", int64_t(op.getAxis()));
    return llvm::Error::success();
  }
  return error(describeOp(o) + " cannot be written to a plan yet (quantisation ops arrive "
                               "with issue 7)");
}

//===----------------------------------------------------------------------===//
// The file
//===----------------------------------------------------------------------===//

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
  // The entry: the public function (raising keeps one).
  func::FuncOp func;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (f.isPrivate() || f.isExternal())
      continue;
    if (func)
      return error("the module has more than one public function (@" + func.getSymName() +
                   ", @" + f.getSymName() + "); a plan has one entry");
    func = f;
  }
  if (!func)
    return error("the module has no public function to compile");
  const std::string fn = ("@" + func.getSymName()).str();
  if (!eval::isTokenMajor(func))
    return error(fn + " is not in the token-major form that raising makes (its attention was "
                      "not recognised; see the report of unraised subgraphs), and a plan needs "
                      "it to run through the paged KV cache");
  std::optional<unsigned> idsArg = eval::tokenIdsArgument(func);
  if (!idsArg)
    return error(fn + " must take exactly one tensor argument, the token ids");
  if (!func.getBody().hasOneBlock())
    return error(fn + " has more than one block");

  pb::PlanMetadata meta;
  meta.set_accelc_version(options.accelcVersion);
  meta.set_target(options.target);
  // Tensor-parallel ranks: accel.tp_size, set by passes/Partition.
  int64_t tpSize = 1;
  if (auto tp = func->getAttrOfType<IntegerAttr>("accel.tp_size"))
    tpSize = tp.getInt();
  if (tpSize < 1 || tpSize > 4096)
    return error(fn + " has an invalid accel.tp_size of " + llvm::Twine(tpSize));
  meta.set_tp_size(int32_t(tpSize));
  // Pipeline stages: accel.pp_size and accel.pp_layers, set by passes/Partition.
  int64_t ppSize = 1;
  if (auto pp = func->getAttrOfType<IntegerAttr>("accel.pp_size"))
    ppSize = pp.getInt();
  if (ppSize < 1 || ppSize > 4096)
    return error(fn + " has an invalid accel.pp_size of " + llvm::Twine(ppSize));
  meta.set_pp_size(int32_t(ppSize));
  meta.set_precision(options.precision);
  meta.set_compute_dtype(options.computeDType);
  ScheduleBuilder b(meta);
  const codegen::GeneratedKernels *kernels =
      options.kernels && !options.kernels->empty() ? options.kernels : nullptr;
  if (kernels)
    b.setKernels(&kernels->selection.kernelOf);

  // Arguments: the token ids; the batch and the cache are the runtime's.
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    if (auto cache = dyn_cast<tf::KVCacheType>(arg.getType())) {
      pb::KVCache *kv = meta.mutable_kv_cache();
      kv->set_num_layers(cache.getLayers());
      kv->set_num_kv_heads(cache.getKvHeads());
      kv->set_head_dim(cache.getHeadDim());
      kv->set_block_size(cache.getBlockSize());
      std::optional<rt::DType> dt = eval::toDType(cache.getElementType());
      if (!dt)
        return error(fn + "'s KV cache element type has no runtime representation");
      meta.mutable_kv_cache()->set_dtype(rt::dtypeName(*dt));
      if (ppSize > 1) {
        auto counts = func->getAttrOfType<DenseI64ArrayAttr>("accel.pp_layers");
        if (!counts || int64_t(counts.size()) != ppSize)
          return error(fn + " is split into " + llvm::Twine(ppSize) +
                       " pipeline stages but has no accel.pp_layers for each");
        for (int64_t n : counts.asArrayRef())
          kv->add_stage_layers(n);
      }
      continue;
    }
    if (isa<tf::BatchType>(arg.getType()))
      continue;
    llvm::Expected<int32_t> id = b.define(arg, "token_ids");
    if (!id)
      return error(fn + " argument " + llvm::Twine(i) + ": " + llvm::toString(id.takeError()));
    meta.mutable_schedule()->set_token_ids(*id);
  }

  // The body, in program order.
  for (Operation &op : func.getBody().front()) {
    if (op.getNumRegions() != 0)
      return error(describeOp(&op) + " has regions; control flow cannot be written to a plan");
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      int logits = -1;
      for (unsigned i = 0; i < func.getNumResults(); ++i)
        if (DictionaryAttr attrs = func.getResultAttrDict(i))
          if (auto n = attrs.getAs<StringAttr>("onnx.name"); n && n == "logits")
            logits = int(i);
      if (logits < 0 && func.getNumResults() == 1)
        logits = 0;
      if (logits < 0)
        return error(fn + " has " + llvm::Twine(func.getNumResults()) +
                     " results and none is named 'logits'");
      mlir::Value v = ret.getOperand(unsigned(logits));
      llvm::Expected<int32_t> id = b.use(v, &op);
      if (!id)
        return id.takeError();
      meta.mutable_schedule()->set_logits(*id);
      auto type = cast<RankedTensorType>(v.getType());
      if (type.getRank() < 2 || type.isDynamicDim(type.getRank() - 1))
        return error(fn + "'s logits " + llvm::Twine(type.getRank()) +
                     "-D tensor needs a static vocabulary (last) dimension");
      meta.mutable_model()->set_vocab_size(type.getShape().back());
      continue;
    }
    llvm::Error e = llvm::Error::success();
    if (isa<onnx::ConstantOp>(op)) {
      e = onnxConstant(b, &op, tpSize);
    } else if (op.getDialect() && op.getDialect()->getNamespace() == "onnx") {
      e = onnxOp(b, &op);
    } else if (op.getDialect() && op.getDialect()->getNamespace() == "transformer") {
      e = transformerOp(b, &op);
    } else {
      e = error(describeOp(&op) + " cannot be written to a plan");
    }
    if (e)
      return e;
  }

  pb::ModelConfig *model = meta.mutable_model();
  model->set_source(options.source);
  if (auto producer = module->getAttrOfType<StringAttr>("onnx.producer"))
    model->set_producer(producer.getValue().str());
  // Without config.json's max positions, a learned position table (GPT-2's
  // wpe: an embedding read with the step's positions) bounds them.
  int64_t maxPosition = options.maxPosition;
  if (maxPosition == 0)
    module.walk([&](tf::EmbeddingOp op) {
      auto table = dyn_cast<RankedTensorType>(op.getTable().getType());
      // Through the reshapes an exporter puts between them.
      mlir::Value ids = op.getIds();
      while (Operation *def = ids.getDefiningOp()) {
        llvm::StringRef name = def->getName().getStringRef();
        if (def->getNumOperands() == 0 ||
            !llvm::is_contained({"onnx.Unsqueeze", "onnx.Squeeze", "onnx.Reshape", "onnx.Cast",
                                 "transformer.flatten_tokens", "transformer.unflatten_tokens"},
                                name))
          break;
        ids = def->getOperand(0);
      }
      if (ids.getDefiningOp<tf::PositionsOp>() && table && !table.isDynamicDim(0))
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
