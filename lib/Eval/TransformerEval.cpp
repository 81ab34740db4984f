//===- TransformerEval.cpp - run transformer ops on the CPU kernels --------===//
//
// One OpFn per op of the transformer dialect, each a call of the runtime's
// transformer kernels (runtime/cpu/transformer). `!transformer.batch` and
// `!transformer.kv_cache` operands arrive as undefined tensors: the step
// metadata and the paged KV pool come from Evaluator::pagedState().
//
// Quantised ops reuse the ONNX QuantizeLinear / DequantizeLinear kernels,
// whose semantics the dialect adopts; ops without a CPU kernel (dynamic
// quantisation, collectives across more than one rank) fail in one sentence.
//
//===----------------------------------------------------------------------===//
#include "accel/Eval/Evaluator.h"

#include "accel/dialects/Transformer/TransformerOps.h"
#include "runtime/cpu/onnx/OnnxKernels.h"
#include "runtime/cpu/transformer/TransformerKernels.h"
#include "runtime/kv/BlockPool.h"
#include "runtime/kv/StepMetadata.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace accel;
using namespace accel::eval;
namespace tk = accel::rt::cpu::transformer;
namespace tf = accel::transformer;

namespace {

using Inputs = ArrayRef<const rt::Tensor *>;
using Outputs = SmallVectorImpl<rt::Tensor>;

llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// Moves a kernel's result into `outputs`, or turns its status into an error.
llvm::Error take(rt::StatusOr<rt::Tensor> t, Outputs &outputs) {
  if (!t)
    return error(t.status().message());
  outputs.push_back(std::move(*t));
  return llvm::Error::success();
}

/// The runtime dtype of `v`'s element type.
llvm::Expected<rt::DType> dtypeOf(Value v) {
  Type et = cast<ShapedType>(v.getType()).getElementType();
  if (std::optional<rt::DType> d = toDType(et))
    return *d;
  return error("element type of a result has no runtime representation");
}

/// The operand tensor of `v` (one of op's operands), or null when the
/// optional operand is absent.
const rt::Tensor *operand(Operation *op, Inputs inputs, Value v) {
  if (!v)
    return nullptr;
  for (auto [i, o] : llvm::enumerate(op->getOperands()))
    if (o == v)
      return inputs[i];
  return nullptr;
}

/// The step metadata behind `!transformer.batch` operands.
llvm::Expected<const rt::kv::StepMetadata *> stepOf(Evaluator &ev) {
  if (const rt::kv::StepMetadata *step = ev.pagedState().step)
    return step;
  return error("the op needs the step metadata of a !transformer.batch, and none "
               "was given to the evaluator (run the function with runSequence)");
}

/// Registers `fn(ev, typedOp, inputs, outputs)` for OpT.
template <typename OpT, typename Fn> void add(Fn fn) {
  Evaluator::registerOp(OpT::getOperationName(),
                        [fn](Evaluator &ev, Operation *op, Inputs in, Outputs &out) {
                          return fn(ev, cast<OpT>(op), in, out);
                        });
}

/// An optional f64 attribute as float, or `dflt` when absent.
float floatOr(std::optional<APFloat> v, float dflt) {
  return v ? float(v->convertToDouble()) : dflt;
}

llvm::Expected<tk::ActivationKind> activationKind(tf::ActivationKind kind) {
  if (std::optional<tk::ActivationKind> k =
          tk::activationKindFromName(tf::stringifyActivationKind(kind).str()))
    return *k;
  return error("activation kind '" + tf::stringifyActivationKind(kind) +
               "' has no CPU kernel");
}

/// ONNX DequantizeLinear of `x` with `scale` (and `zeroPoint`), to f32.
llvm::Expected<rt::Tensor> dequantizeOnnx(const rt::Tensor &x, const rt::Tensor &scale,
                                          const rt::Tensor *zeroPoint,
                                          std::optional<int64_t> axis,
                                          std::optional<int64_t> blockSize) {
  rt::onnx::AttrMap attrs;
  if (axis)
    attrs["axis"] = *axis;
  if (blockSize)
    attrs["block_size"] = *blockSize;
  attrs["output_dtype"] = int64_t(rt::dtypeToOnnx(rt::DType::kF32));
  std::vector<rt::Tensor> out;
  rt::Status s =
      rt::onnx::runOp("DequantizeLinear", "", attrs, {&x, &scale, zeroPoint}, 1, out);
  if (!s.isOk())
    return error(s.message());
  return std::move(out[0]);
}

//===----------------------------------------------------------------------===//
// Step metadata, embedding, logits
//===----------------------------------------------------------------------===//

llvm::Error positions(Evaluator &ev, tf::PositionsOp op, Inputs, Outputs &out) {
  auto step = stepOf(ev);
  if (!step)
    return step.takeError();
  auto dt = dtypeOf(op.getResult());
  if (!dt)
    return dt.takeError();
  rt::Tensor t = (*step)->positions.astype(*dt);
  if (!t.defined() && (*step)->numTokens != 0)
    return error("cannot allocate the positions");
  out.push_back(std::move(t));
  return llvm::Error::success();
}

llvm::Error embedding(Evaluator &, tf::EmbeddingOp op, Inputs in, Outputs &out) {
  // One rank's shard of a vocabulary-parallel table (accelc -tp): the
  // interpreter runs one function, not a group of ranks.
  if (std::optional<uint64_t> shards = op.getVocabShards(); shards && *shards != 1)
    return error("a vocabulary-parallel embedding (vocab_shards = " + std::to_string(*shards) +
                 ") needs its tensor-parallel group; -interpret runs unpartitioned IR only");
  float scale = floatOr(op.getScale(), 1.0f);
  // A padded table (vocab_size): ids stop at the real vocabulary.
  int64_t vocab = int64_t(op.getVocabSize().value_or(0));
  rt::StatusOr<rt::Tensor> rows = tk::embedding(*in[0], *in[1], scale, 0, vocab);
  // A bf16/f16 table under f32 activations (accelc -precision): widen.
  auto dt = dtypeOf(op.getResult());
  if (!dt)
    return dt.takeError();
  if (rows && rows->dtype() != *dt)
    rows = rows->astype(*dt);
  return take(std::move(rows), out);
}

llvm::Error logits(Evaluator &ev, tf::LogitsOp op, Inputs in, Outputs &out) {
  tk::LogitsOptions o;
  o.bias = operand(op, in, op.getBias());
  o.softcap = floatOr(op.getSoftcap(), 0.0f);
  auto dt = dtypeOf(op.getResult());
  if (!dt)
    return dt.takeError();
  o.outType = *dt;
  if (op.getBatch()) {
    auto step = stepOf(ev);
    if (!step)
      return step.takeError();
    o.queryStartLoc = &(*step)->queryStartLoc;
  }
  return take(tk::logits(*in[0], *in[1], o), out);
}

//===----------------------------------------------------------------------===//
// Normalisation, residual stream
//===----------------------------------------------------------------------===//

llvm::Error rmsNorm(Evaluator &, tf::RmsNormOp op, Inputs in, Outputs &out) {
  return take(tk::rmsNorm(*in[0], *in[1], float(op.getEpsilon().convertToDouble()),
                          floatOr(op.getWeightOffset(), 0.0f)),
              out);
}

llvm::Error addRmsNorm(Evaluator &, tf::AddRmsNormOp op, Inputs in, Outputs &out) {
  rt::StatusOr<tk::AddRmsNormResult> r =
      tk::addRmsNorm(*in[0], *in[1], *in[2], float(op.getEpsilon().convertToDouble()),
                     floatOr(op.getWeightOffset(), 0.0f));
  if (!r)
    return error(r.status().message());
  out.push_back(std::move(r->normed));
  out.push_back(std::move(r->sum));
  return llvm::Error::success();
}

llvm::Error layerNorm(Evaluator &, tf::LayerNormOp op, Inputs in, Outputs &out) {
  return take(tk::layerNorm(*in[0], *in[1], operand(op, in, op.getBias()),
                            float(op.getEpsilon().convertToDouble())),
              out);
}

llvm::Error residualAdd(Evaluator &, tf::ResidualAddOp, Inputs in, Outputs &out) {
  return take(tk::residualAdd(*in[0], *in[1]), out);
}

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

llvm::Error linear(Evaluator &, tf::LinearOp op, Inputs in, Outputs &out) {
  auto dt = dtypeOf(op.getResult());
  if (!dt)
    return dt.takeError();
  const rt::Tensor *x = in[0], *w = in[1];
  const rt::Tensor *bias = operand(op, in, op.getBias());
  const rt::Tensor *wScale = operand(op, in, op.getWeightScale());
  const rt::Tensor *wZero = operand(op, in, op.getWeightZeroPoint());
  const rt::Tensor *xScale = operand(op, in, op.getInputScale());

  // Quantised operands: dequantise them with the ONNX kernel (the dialect's
  // formulas are DequantizeLinear's), then the float GEMM.
  rt::Tensor wf, xf;
  if (wScale) {
    std::optional<int64_t> axis, block;
    switch (op.getGranularity().value_or(tf::QuantGranularity::PerTensor)) {
    case tf::QuantGranularity::PerTensor:
      break;
    case tf::QuantGranularity::PerChannel:
      axis = 0;
      break;
    case tf::QuantGranularity::PerGroup:
      axis = 1;
      block = int64_t(op.getGroupSize().value_or(0));
      break;
    }
    auto d = dequantizeOnnx(*w, *wScale, wZero, axis, block);
    if (!d)
      return d.takeError();
    wf = std::move(*d);
    w = &wf;
  }
  if (xScale) {
    std::optional<int64_t> axis;
    if (xScale->rank() == 1)
      axis = 0; // per token
    auto d = dequantizeOnnx(*x, *xScale, nullptr, axis, std::nullopt);
    if (!d)
      return d.takeError();
    xf = std::move(*d);
    x = &xf;
  }
  rt::StatusOr<rt::Tensor> y = tk::linear(*x, *w, bias, *dt);
  // The activation epilogue, in the result's dtype as transformer.activation.
  if (std::optional<tf::ActivationKind> act = op.getActivation(); act && y) {
    auto kind = activationKind(*act);
    if (!kind)
      return kind.takeError();
    y = tk::activation(*y, *kind);
  }
  return take(std::move(y), out);
}

//===----------------------------------------------------------------------===//
// rotary, qkv_rotary, attention
//===----------------------------------------------------------------------===//

/// The kernels' parameters of a rotation (transformer.rotary and
/// transformer.qkv_rotary carry the same attributes and tables).
template <typename OpT> tk::RotaryParams rotaryParams(OpT op, Inputs in) {
  tk::RotaryParams p;
  p.style = op.getStyle() == tf::RotaryStyle::Interleaved ? tk::RotaryStyle::kInterleaved
                                                          : tk::RotaryStyle::kHalfSplit;
  p.rotaryDim = int64_t(op.getRotaryDim());
  if (std::optional<APFloat> theta = op.getTheta())
    p.theta = theta->convertToDouble();
  if (tf::RopeScalingAttr s = op.getScalingAttr()) {
    switch (s.getKind()) {
    case tf::RopeScalingKind::Linear:
      p.scaling.kind = tk::RopeScalingKind::kLinear;
      break;
    case tf::RopeScalingKind::DynamicNtk:
      p.scaling.kind = tk::RopeScalingKind::kDynamicNtk;
      break;
    case tf::RopeScalingKind::Llama3:
      p.scaling.kind = tk::RopeScalingKind::kLlama3;
      break;
    case tf::RopeScalingKind::Yarn:
      p.scaling.kind = tk::RopeScalingKind::kYarn;
      break;
    }
    p.scaling.factor = float(s.getFactor().convertToDouble());
    p.scaling.originalMaxPosition = s.getOriginalMaxPosition().value_or(0);
    p.scaling.lowFreqFactor = floatOr(s.getLowFreqFactor(), p.scaling.lowFreqFactor);
    p.scaling.highFreqFactor = floatOr(s.getHighFreqFactor(), p.scaling.highFreqFactor);
    p.scaling.betaFast = floatOr(s.getBetaFast(), p.scaling.betaFast);
    p.scaling.betaSlow = floatOr(s.getBetaSlow(), p.scaling.betaSlow);
  }
  p.cosTable = operand(op, in, op.getCosCache());
  p.sinTable = operand(op, in, op.getSinCache());
  return p;
}

llvm::Error rotary(Evaluator &, tf::RotaryOp op, Inputs in, Outputs &out) {
  return take(tk::rotary(*in[0], *in[1], rotaryParams(op, in)), out);
}

llvm::Error qkvRotary(Evaluator &, tf::QkvRotaryOp op, Inputs in, Outputs &out) {
  tk::QkvHeads heads;
  heads.numHeads = int64_t(op.getNumHeads());
  heads.numKvHeads = int64_t(op.getNumKvHeads());
  heads.headDim = int64_t(op.getHeadDim());
  rt::StatusOr<tk::QkvRotaryResult> r =
      tk::qkvRotary(*in[0], *in[1], heads, rotaryParams(op, in));
  if (!r)
    return error(r.status().message());
  out.push_back(std::move(r->q));
  out.push_back(std::move(r->k));
  out.push_back(std::move(r->v));
  return llvm::Error::success();
}

llvm::Error attention(Evaluator &ev, tf::AttentionOp op, Inputs in, Outputs &out) {
  rt::kv::BlockPool *pool = ev.pagedState().pool;
  if (!pool)
    return error("the op needs a paged KV cache, and none was given to the evaluator "
                 "(run the function with runSequence)");
  auto step = stepOf(ev);
  if (!step)
    return step.takeError();
  tk::PagedAttentionParams p;
  p.layer = int64_t(op.getLayer());
  p.scale = float(op.getScale().convertToDouble());
  p.causal = op.getCausal();
  p.slidingWindow = int64_t(op.getSlidingWindow().value_or(0));
  p.softcap = floatOr(op.getSoftcap(), 0.0f);
  p.kvScales.k = floatOr(op.getKScale(), 1.0f);
  p.kvScales.v = floatOr(op.getVScale(), 1.0f);
  if (auto kh = op.getKHeadScales())
    p.kvScales.kHeads.assign(kh->begin(), kh->end());
  if (auto vh = op.getVHeadScales())
    p.kvScales.vHeads.assign(vh->begin(), vh->end());
  if (p.layer >= pool->numLayers())
    return error("layer " + llvm::Twine(p.layer) + " is not in a KV cache of " +
                 llvm::Twine(pool->numLayers()) + " layers");
  return take(tk::attention(*in[0], *in[1], *in[2], *pool, **step, p), out);
}

//===----------------------------------------------------------------------===//
// MLP
//===----------------------------------------------------------------------===//

llvm::Error activation(Evaluator &, tf::ActivationOp op, Inputs in, Outputs &out) {
  auto kind = activationKind(op.getKind());
  if (!kind)
    return kind.takeError();
  return take(tk::activation(*in[0], *kind), out);
}

llvm::Error gatedAct(Evaluator &, tf::GatedActOp op, Inputs in, Outputs &out) {
  auto kind = activationKind(op.getKind());
  if (!kind)
    return kind.takeError();
  return take(tk::gatedAct(*in[0], *kind), out);
}

llvm::Error gatedMlp(Evaluator &, tf::GatedMlpOp op, Inputs in, Outputs &out) {
  auto kind = activationKind(op.getKind());
  if (!kind)
    return kind.takeError();
  tk::GatedMlpWeights w;
  w.gateUp = operand(op, in, op.getGateUp());
  w.gate = operand(op, in, op.getGate());
  w.up = operand(op, in, op.getUp());
  w.down = operand(op, in, op.getDown());
  return take(tk::gatedMlp(*in[0], w, *kind), out);
}

llvm::Error moe(Evaluator &, tf::MoeOp op, Inputs in, Outputs &out) {
  auto kind = activationKind(op.getKind());
  if (!kind)
    return kind.takeError();
  tk::MoeParams p;
  p.kind = *kind;
  p.routing = op.getRouting() == tf::MoeRouting::Renormalize ? tk::MoeRouting::kRenormalize
                                                             : tk::MoeRouting::kSoftmax;
  p.numExperts = int64_t(op.getNumExperts());
  p.topK = int64_t(op.getTopK());
  tk::MoeWeights w;
  w.router = operand(op, in, op.getRouter());
  w.routerBias = operand(op, in, op.getRouterBias());
  w.gateUp = operand(op, in, op.getGateUp());
  w.gate = operand(op, in, op.getGate());
  w.up = operand(op, in, op.getUp());
  w.down = operand(op, in, op.getDown());
  w.sharedGateUp = operand(op, in, op.getSharedGateUp());
  w.sharedDown = operand(op, in, op.getSharedDown());
  w.sharedExpertGate = operand(op, in, op.getSharedExpertGate());
  return take(tk::moe(*in[0], w, p), out);
}

//===----------------------------------------------------------------------===//
// Head and token layout
//===----------------------------------------------------------------------===//

llvm::Error split(Evaluator &, tf::SplitOp op, Inputs in, Outputs &out) {
  std::vector<int64_t> sizes;
  for (Value r : op.getResults())
    sizes.push_back(cast<RankedTensorType>(r.getType()).getDimSize(1));
  rt::StatusOr<std::vector<rt::Tensor>> parts = tk::splitColumns(*in[0], sizes);
  if (!parts)
    return error(parts.status().message());
  for (rt::Tensor &t : *parts)
    out.push_back(std::move(t));
  return llvm::Error::success();
}

llvm::Error splitHeads(Evaluator &, tf::SplitHeadsOp op, Inputs in, Outputs &out) {
  return take(tk::splitHeads(*in[0], op.getResult().getType().getDimSize(1)), out);
}

llvm::Error mergeHeads(Evaluator &, tf::MergeHeadsOp, Inputs in, Outputs &out) {
  return take(tk::mergeHeads(*in[0]), out);
}

llvm::Error flattenTokens(Evaluator &, tf::FlattenTokensOp op, Inputs in, Outputs &out) {
  const rt::Tensor &x = *in[0];
  int64_t rank = op.getResult().getType().getRank();
  if (rank == 1)
    return take(x.reshaped({x.numElements()}), out);
  if (x.rank() < 1)
    return error("cannot flatten a scalar into [tokens, features]");
  int64_t tokens = 1;
  for (int64_t i = 0; i + 1 < x.rank(); ++i)
    tokens *= x.dim(i);
  return take(x.reshaped({tokens, x.dim(-1)}), out);
}

llvm::Error unflattenTokens(Evaluator &, tf::UnflattenTokensOp op, Inputs in,
                            Outputs &out) {
  const rt::Tensor &x = *in[0], &like = *in[1];
  int64_t tokenDims = op.getNumTokenDims();
  if (tokenDims < 0 || tokenDims > like.rank())
    return error("cannot take " + llvm::Twine(tokenDims) +
                 " token dimensions from a rank-" + llvm::Twine(like.rank()) + " tensor");
  rt::Shape shape(like.shape().begin(), like.shape().begin() + tokenDims);
  for (int64_t i = 1; i < x.rank(); ++i)
    shape.push_back(x.dim(i));
  int64_t tokens = 1;
  for (int64_t i = 0; i < tokenDims; ++i)
    tokens *= like.dim(i);
  if (tokens != x.dim(0))
    return error("the input has " + llvm::Twine(x.dim(0)) +
                 " tokens, its 'like' operand " + rt::shapeToString(like.shape()) + " has " +
                 llvm::Twine(tokens));
  return take(x.reshaped(shape), out);
}

//===----------------------------------------------------------------------===//
// Collectives: one rank only
//===----------------------------------------------------------------------===//

llvm::Error singleRank(uint64_t groupSize) {
  return error("a collective over " + llvm::Twine(groupSize) +
               " ranks is not supported by the evaluator yet (it runs one rank)");
}

llvm::Error allReduce(Evaluator &, tf::AllReduceOp op, Inputs in, Outputs &out) {
  if (op.getGroupSize() != 1)
    return singleRank(op.getGroupSize());
  out.push_back(*in[0]);
  return llvm::Error::success();
}

// One rank runs every stage in turn: the transfer is the identity.
llvm::Error ppTransfer(Evaluator &, tf::PpTransferOp, Inputs in, Outputs &out) {
  out.push_back(*in[0]);
  return llvm::Error::success();
}

llvm::Error allGather(Evaluator &, tf::AllGatherOp op, Inputs in, Outputs &out) {
  if (op.getGroupSize() != 1)
    return singleRank(op.getGroupSize());
  out.push_back(*in[0]);
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Quantisation
//===----------------------------------------------------------------------===//

llvm::Error quantize(Evaluator &, tf::QuantizeOp op, Inputs in, Outputs &out) {
  auto dt = dtypeOf(op.getResult());
  if (!dt)
    return dt.takeError();
  rt::onnx::AttrMap attrs;
  if (std::optional<uint64_t> axis = op.getAxis())
    attrs["axis"] = int64_t(*axis);
  if (std::optional<uint64_t> block = op.getBlockSize())
    attrs["block_size"] = int64_t(*block);
  attrs["output_dtype"] = int64_t(rt::dtypeToOnnx(*dt));
  std::vector<rt::Tensor> res;
  rt::Status s = rt::onnx::runOp("QuantizeLinear", "", attrs,
                                 {in[0], in[1], operand(op, in, op.getZeroPoint())}, 1, res);
  if (!s.isOk())
    return error(s.message());
  out.push_back(std::move(res[0]));
  return llvm::Error::success();
}

llvm::Error dequantize(Evaluator &, tf::DequantizeOp op, Inputs in, Outputs &out) {
  auto dt = dtypeOf(op.getResult());
  if (!dt)
    return dt.takeError();
  std::optional<int64_t> axis, block;
  if (std::optional<uint64_t> a = op.getAxis())
    axis = int64_t(*a);
  if (std::optional<uint64_t> b = op.getBlockSize())
    block = int64_t(*b);
  auto r = dequantizeOnnx(*in[0], *in[1], operand(op, in, op.getZeroPoint()), axis, block);
  if (!r)
    return r.takeError();
  rt::Tensor t = *dt == rt::DType::kF32 ? std::move(*r) : r->astype(*dt);
  out.push_back(std::move(t));
  return llvm::Error::success();
}

llvm::Error dynamicQuantize(Evaluator &, tf::DynamicQuantizeOp, Inputs, Outputs &) {
  return error("dynamic quantisation is not supported by the evaluator yet (the CPU "
               "runtime has no kernel for it)");
}

} // namespace

/// Registers every transformer op (called once, from the Evaluator).
void registerTransformerEvaluators() {
  add<tf::PositionsOp>(positions);
  add<tf::EmbeddingOp>(embedding);
  add<tf::LogitsOp>(logits);
  add<tf::RmsNormOp>(rmsNorm);
  add<tf::AddRmsNormOp>(addRmsNorm);
  add<tf::LayerNormOp>(layerNorm);
  add<tf::LinearOp>(linear);
  add<tf::RotaryOp>(rotary);
  add<tf::QkvRotaryOp>(qkvRotary);
  add<tf::AttentionOp>(attention);
  add<tf::ActivationOp>(activation);
  add<tf::GatedActOp>(gatedAct);
  add<tf::GatedMlpOp>(gatedMlp);
  add<tf::MoeOp>(moe);
  add<tf::ResidualAddOp>(residualAdd);
  add<tf::SplitHeadsOp>(splitHeads);
  add<tf::MergeHeadsOp>(mergeHeads);
  add<tf::FlattenTokensOp>(flattenTokens);
  add<tf::UnflattenTokensOp>(unflattenTokens);
  add<tf::SplitOp>(split);
  add<tf::AllReduceOp>(allReduce);
  add<tf::AllGatherOp>(allGather);
  add<tf::PpTransferOp>(ppTransfer);
  add<tf::QuantizeOp>(quantize);
  add<tf::DynamicQuantizeOp>(dynamicQuantize);
  add<tf::DequantizeOp>(dequantize);
}
