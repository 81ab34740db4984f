//===- CheckpointImporter.cpp - HF checkpoints to the transformer dialect -===//
//
// One builder for every supported family: a decoder of `layers` blocks whose
// parts (norm kind, QKV layout, q/k norms, rotary, MLP kind, how the block
// adds its branches) come from the typed config (HfConfig). It emits what
// the raise pipeline makes of an ONNX export of the same model: the
// token-major @main_graph(ids, batch, cache) -> logits, with
// transformer.split_heads / merge_heads as the per-head views.
//
//===----------------------------------------------------------------------===//
#include "accel/Import/CheckpointImporter.h"

#include "CheckpointWeights.h"
#include "HfConfig.h"
#include "Safetensors.h"

#include "accel/dialects/Transformer/TransformerDialect.h"
#include "accel/dialects/Transformer/TransformerOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <cmath>

using namespace mlir;
using namespace accel::import::ckpt;
namespace tf = accel::transformer;

bool accel::isCheckpointDir(llvm::StringRef path) { return llvm::sys::fs::is_directory(path); }

namespace {

/// HF tensor names of one family.
struct Names {
  std::string embed, positions, finalNorm, lmHead, layer;
  // Per layer, after `layer` + index + ".".
  std::string norm1, norm2, post1, post2;
  std::string q, k, v, qkv, o, qNorm, kNorm;
  std::string gate, up, gateUp, down, fc, proj;
};

Names namesFor(const HfConfig &c) {
  Names n;
  const std::string &t = c.modelType;
  if (t == "gpt2") {
    n.embed = "transformer.wte.weight";
    n.positions = "transformer.wpe.weight";
    n.finalNorm = "transformer.ln_f";
    n.layer = "transformer.h.";
    n.norm1 = "ln_1";
    n.norm2 = "ln_2";
    n.qkv = "attn.c_attn";
    n.o = "attn.c_proj";
    n.fc = "mlp.c_fc";
    n.proj = "mlp.c_proj";
  } else if (t == "gpt_neox") {
    n.embed = "gpt_neox.embed_in.weight";
    n.finalNorm = "gpt_neox.final_layer_norm";
    n.lmHead = "embed_out.weight";
    n.layer = "gpt_neox.layers.";
    n.norm1 = "input_layernorm";
    n.norm2 = "post_attention_layernorm";
    n.qkv = "attention.query_key_value";
    n.o = "attention.dense";
    n.fc = "mlp.dense_h_to_4h";
    n.proj = "mlp.dense_4h_to_h";
  } else if (t == "falcon") {
    n.embed = "transformer.word_embeddings.weight";
    n.finalNorm = "transformer.ln_f";
    n.lmHead = "lm_head.weight";
    n.layer = "transformer.h.";
    n.norm1 = "input_layernorm";
    n.qkv = "self_attention.query_key_value";
    n.o = "self_attention.dense";
    n.fc = "mlp.dense_h_to_4h";
    n.proj = "mlp.dense_4h_to_h";
  } else {
    n.embed = "model.embed_tokens.weight";
    n.finalNorm = "model.norm";
    n.lmHead = "lm_head.weight";
    n.layer = "model.layers.";
    n.norm1 = "input_layernorm";
    n.norm2 = "post_attention_layernorm";
    if (c.block == BlockKind::Sandwich) {
      n.post1 = "post_attention_layernorm";
      n.norm2 = "pre_feedforward_layernorm";
      n.post2 = "post_feedforward_layernorm";
    } else if (c.block == BlockKind::PostNorm) {
      n.norm1 = n.norm2 = "";
      n.post1 = "post_attention_layernorm";
      n.post2 = "post_feedforward_layernorm";
    }
    n.q = "self_attn.q_proj";
    n.k = "self_attn.k_proj";
    n.v = "self_attn.v_proj";
    n.qkv = "self_attn.qkv_proj";
    n.o = "self_attn.o_proj";
    n.qNorm = "self_attn.q_norm";
    n.kNorm = "self_attn.k_norm";
    n.gate = "mlp.gate_proj";
    n.up = "mlp.up_proj";
    n.gateUp = "mlp.gate_up_proj";
    n.down = "mlp.down_proj";
    n.fc = "mlp.c_fc";
    n.proj = "mlp.c_proj";
  }
  return n;
}

class DecoderBuilder {
public:
  DecoderBuilder(MLIRContext &ctx, const HfConfig &c, const CheckpointTensors &tensors,
                 const std::string &dir, const accel::CheckpointImportOptions &options)
      : ctx_(ctx), b_(&ctx), c_(c), names_(namesFor(c)),
        weights_(b_, tensors, dir, options.inlineConstantBytes), options_(options),
        fileLoc_(FileLineColLoc::get(&ctx, dir, 0, 0)) {}

  OwningOpRef<ModuleOp> build();

private:
  Location loc(const std::string &name) {
    return NameLoc::get(StringAttr::get(&ctx_, name), fileLoc_);
  }
  RankedTensorType tokens(int64_t n) {
    return RankedTensorType::get({ShapedType::kDynamic, n}, b_.getF32Type());
  }
  RankedTensorType headsType(int64_t h) {
    return RankedTensorType::get({ShapedType::kDynamic, h, c_.headDim}, b_.getF32Type());
  }
  FloatAttr f64(double v) { return b_.getF64FloatAttr(v); }
  /// HF adds epsilons to f32 tensors: the f32 value is the model's.
  FloatAttr eps() { return f64(double(float(c_.normEps))); }

  Value weight(const std::string &name, llvm::ArrayRef<int64_t> shape,
               const WeightLayout &layout = {}) {
    if (failed_)
      return {};
    Value v = weights_.get(name, shape, loc(name), layout);
    failed_ |= !v;
    return v;
  }
  /// The norm `prefix` (.weight, and .bias for LayerNorm) of `x` ([T, n] or
  /// [T, H, n]); `scale` multiplies its weight.
  Value norm(const std::string &prefix, Value x, int64_t n, double scale = 1.0);
  Value linear(const std::string &prefix, Value x, int64_t out, int64_t in, bool bias,
               const WeightLayout &layout = {});
  /// A pre-quantised (AWQ / GPTQ) linear of the stacked rows of `prefixes`
  /// (each [outs[i], in]), with their biases when `bias`.
  Value quantLinear(const std::string &name, llvm::ArrayRef<std::string> prefixes,
                    llvm::ArrayRef<int64_t> outs, Value x, int64_t in, bool bias);
  bool quantised() const { return !c_.quant.method.empty(); }
  Value attention(const std::string &p, Value x, int64_t layer);
  Value mlp(const std::string &p, Value x);
  /// The layer's feed-forward block: its MoE where the config makes it
  /// sparse, else the dense MLP.
  Value ffn(const std::string &p, Value x, int64_t layer);
  Value moe(const std::string &p, Value x, int64_t layer);
  Value concat(const std::string &name, const std::vector<std::string> &parts,
               llvm::ArrayRef<int64_t> partShape, llvm::ArrayRef<int64_t> shape) {
    if (failed_)
      return {};
    Value v = weights_.concat(name, parts, partShape, shape,
                              [&](llvm::StringRef n) { return loc(n.str()); });
    failed_ |= !v;
    return v;
  }
  void fail(const std::string &name, const std::string &message) {
    emitError(loc(name)) << message;
    failed_ = true;
  }
  Value rotary(Value x, int64_t layer, int64_t heads);

  MLIRContext &ctx_;
  OpBuilder b_;
  const HfConfig &c_;
  Names names_;
  CheckpointWeights weights_;
  const accel::CheckpointImportOptions &options_;
  Location fileLoc_;
  bool failed_ = false;
  Value ids_, batch_, cache_, positions_;
};

Value DecoderBuilder::norm(const std::string &prefix, Value x, int64_t n, double scale) {
  WeightLayout l;
  l.scale = scale;
  Value w = weight(prefix + ".weight", {n}, l);
  if (!w)
    return {};
  Location at = loc(prefix);
  if (c_.layerNorm) {
    Value bias = weight(prefix + ".bias", {n});
    if (!bias)
      return {};
    return tf::LayerNormOp::create(b_, at, x.getType(), x, w, bias, eps());
  }
  FloatAttr offset = c_.normWeightOffset ? f64(c_.normWeightOffset) : FloatAttr();
  return tf::RmsNormOp::create(b_, at, x.getType(), x, w, eps(), offset);
}

Value DecoderBuilder::quantLinear(const std::string &name, llvm::ArrayRef<std::string> prefixes,
                                  llvm::ArrayRef<int64_t> outs, Value x, int64_t in, bool bias) {
  if (failed_ || !x)
    return {};
  std::optional<QuantWeight> q = weights_.quantized(
      name, prefixes, outs, in, c_.quant, [&](llvm::StringRef n) { return loc(n.str()); });
  if (!q) {
    failed_ = true;
    return {};
  }
  int64_t out = 0;
  for (int64_t o : outs)
    out += o;
  Value b;
  if (bias) { // one linear's own bias (stacked linears are built without)
    b = weight(prefixes.front() + ".bias", {out});
    if (!b)
      return {};
  }
  auto gran = tf::QuantGranularityAttr::get(&ctx_, q->groupSize ? tf::QuantGranularity::PerGroup
                                                                : tf::QuantGranularity::PerChannel);
  IntegerAttr size = q->groupSize ? b_.getI64IntegerAttr(q->groupSize) : IntegerAttr();
  return tf::LinearOp::create(b_, loc(prefixes.front()), tokens(out), x, q->weight, b, q->scale,
                              q->zeroPoint, Value(), gran, size, tf::ActivationKindAttr());
}

Value DecoderBuilder::linear(const std::string &prefix, Value x, int64_t out, int64_t in,
                             bool bias, const WeightLayout &layout) {
  if (quantised() && weights_.has(prefix + ".qweight")) {
    if (layout.transposed || layout.interleavedHeads || layout.scale != 1.0) {
      fail(prefix, "'" + prefix + "' is quantised (" + c_.quant.method +
                       ") in a layout accel reads only in float (transposed, interleaved "
                       "heads or scaled)");
      return {};
    }
    return quantLinear(prefix, {prefix}, {out}, x, in, bias);
  }
  Value w = weight(prefix + ".weight", {out, in}, layout);
  Value b;
  if (bias) {
    WeightLayout bl;
    bl.interleavedHeads = layout.interleavedHeads;
    bl.scale = layout.scale;
    b = weight(prefix + ".bias", {out}, bl);
  }
  if (!w || (bias && !b))
    return {};
  return tf::LinearOp::create(b_, loc(prefix), tokens(out), x, w, b, Value(), Value(), Value(),
                              tf::QuantGranularityAttr(), IntegerAttr(),
                              tf::ActivationKindAttr());
}

Value DecoderBuilder::rotary(Value x, int64_t layer, int64_t heads) {
  const bool local = c_.localRope && c_.slidingWindow[size_t(layer)];
  const RopeDesc &rope = local ? *c_.localRope : c_.rope;
  tf::RopeScalingAttr scaling;
  if (rope.scaling == "linear")
    scaling = tf::RopeScalingAttr::get(&ctx_, tf::RopeScalingKind::Linear,
                                       llvm::APFloat(rope.factor), std::nullopt, std::nullopt,
                                       std::nullopt, std::nullopt, std::nullopt);
  else if (rope.scaling == "llama3")
    scaling = tf::RopeScalingAttr::get(
        &ctx_, tf::RopeScalingKind::Llama3, llvm::APFloat(rope.factor),
        rope.originalMaxPosition, llvm::APFloat(rope.lowFreqFactor),
        llvm::APFloat(rope.highFreqFactor), std::nullopt, std::nullopt);
  return tf::RotaryOp::create(b_, x.getLoc(), headsType(heads), x, positions_, Value(), Value(),
                              tf::RotaryStyle::HalfSplit, uint64_t(c_.rotaryDim),
                              f64(rope.theta), scaling);
}

Value DecoderBuilder::attention(const std::string &p, Value x, int64_t layer) {
  const int64_t H = c_.heads, KV = c_.kvHeads, D = c_.headDim, E = c_.hidden;
  const int64_t qDim = H * D, kvDim = KV * D;
  Value q, k, v;
  // One GEMM of the stacked q, k and v rows (a fused checkpoint's, or a
  // 4-bit one's: the fusion passes fuse float weights only), then split.
  Value qkv;
  std::string fusedName;
  if (c_.qkv == QkvLayout::Separate && quantised() && weights_.has(p + names_.q + ".qweight") &&
      !c_.qkvBias) {
    fusedName = p + names_.q;
    qkv = quantLinear(p + "qkv", {p + names_.q, p + names_.k, p + names_.v}, {qDim, kvDim, kvDim},
                      x, E, false);
  } else if (c_.qkv == QkvLayout::Separate) {
    q = linear(p + names_.q, x, qDim, E, c_.qkvBias);
    k = linear(p + names_.k, x, kvDim, E, c_.qkvBias);
    v = linear(p + names_.v, x, kvDim, E, c_.qkvBias);
  } else {
    WeightLayout l;
    l.transposed = c_.qkv == QkvLayout::Conv1D;
    l.interleavedHeads = c_.qkv == QkvLayout::HeadInterleaved ? H : 0;
    fusedName = p + names_.qkv;
    qkv = linear(p + names_.qkv, x, qDim + 2 * kvDim, E, c_.qkvBias, l);
  }
  if (!fusedName.empty()) {
    if (!qkv)
      return {};
    auto split = tf::SplitOp::create(b_, loc(fusedName),
                                     TypeRange{tokens(qDim), tokens(kvDim), tokens(kvDim)}, qkv);
    q = split.getResult(0);
    k = split.getResult(1);
    v = split.getResult(2);
  }
  if (!q || !k || !v)
    return {};
  if (c_.qkNorm == "full") {
    q = norm(p + names_.qNorm, q, qDim);
    k = norm(p + names_.kNorm, k, kvDim);
    if (!q || !k)
      return {};
  }
  Location at = loc(p + "attention");
  q = tf::SplitHeadsOp::create(b_, at, headsType(H), q);
  k = tf::SplitHeadsOp::create(b_, at, headsType(KV), k);
  v = tf::SplitHeadsOp::create(b_, at, headsType(KV), v);
  if (c_.qkNorm == "head") {
    q = norm(p + names_.qNorm, q, D);
    k = norm(p + names_.kNorm, k, D);
    if (!q || !k)
      return {};
  }
  if (c_.rotary) {
    q = rotary(q, layer, H);
    k = rotary(k, layer, KV);
  }
  const int64_t window = c_.slidingWindow[size_t(layer)];
  Value o = tf::AttentionOp::create(
      b_, at, headsType(H), q, k, v, cache_, batch_, uint64_t(layer), uint64_t(H), uint64_t(KV),
      uint64_t(D), llvm::APFloat(c_.attnScale), /*causal=*/true,
      window ? b_.getI64IntegerAttr(window) : IntegerAttr(),
      c_.attnSoftcap ? f64(c_.attnSoftcap) : FloatAttr(), FloatAttr(), FloatAttr(),
      DenseF64ArrayAttr(), DenseF64ArrayAttr());
  o = tf::MergeHeadsOp::create(b_, at, tokens(qDim), o);
  WeightLayout ol;
  ol.transposed = c_.qkv == QkvLayout::Conv1D;
  ol.scale = c_.residualMultiplier;
  return linear(p + names_.o, o, E, qDim, c_.oBias, ol);
}

Value DecoderBuilder::mlp(const std::string &p, Value x) {
  const int64_t E = c_.hidden, F = c_.intermediate;
  auto kind = tf::symbolizeActivationKind(c_.activation);
  if (!kind) {
    emitError(fileLoc_) << "config.json: activation '" << c_.activation << "' is not supported";
    failed_ = true;
    return {};
  }
  WeightLayout downLayout;
  downLayout.scale = c_.residualMultiplier;
  if (c_.gated) {
    if (c_.mlpBias) {
      emitError(fileLoc_) << "config.json: 'mlp_bias' (biases on a gated MLP) is not supported";
      failed_ = true;
      return {};
    }
    if (quantised() && !c_.fusedGateUp && weights_.has(p + names_.gate + ".qweight")) {
      // 4-bit: gate and up as one GEMM, the gated activation, down.
      Value gu = quantLinear(p + "gate_up", {p + names_.gate, p + names_.up}, {F, F}, x, E, false);
      if (!gu)
        return {};
      Value act = tf::GatedActOp::create(b_, loc(p + "mlp"), tokens(F), gu, *kind);
      return linear(p + names_.down, act, E, F, false, downLayout);
    }
    Value gate, up, gateUp;
    if (c_.fusedGateUp) {
      gateUp = weight(p + names_.gateUp + ".weight", {2 * F, E});
    } else {
      gate = weight(p + names_.gate + ".weight", {F, E});
      up = weight(p + names_.up + ".weight", {F, E});
    }
    Value down = weight(p + names_.down + ".weight", {E, F}, downLayout);
    if (failed_)
      return {};
    return tf::GatedMlpOp::create(b_, loc(p + "mlp"), tokens(E), x, gateUp, gate, up, down,
                                  *kind);
  }
  WeightLayout l;
  l.transposed = c_.qkv == QkvLayout::Conv1D;
  Value h = linear(p + names_.fc, x, F, E, c_.mlpBias, l);
  if (!h)
    return {};
  h = tf::ActivationOp::create(b_, h.getLoc(), h.getType(), h, *kind);
  downLayout.transposed = l.transposed;
  return linear(p + names_.proj, h, E, F, c_.mlpBias, downLayout);
}

Value DecoderBuilder::ffn(const std::string &p, Value x, int64_t layer) {
  if (c_.moe && c_.moe->sparse[size_t(layer)])
    return moe(p, x, layer);
  return mlp(p, x);
}

Value DecoderBuilder::moe(const std::string &p, Value x, int64_t layer) {
  if (!x)
    return {};
  if (quantised()) {
    fail(p, "a mixture of experts in a pre-quantised (" + c_.quant.method +
                ") checkpoint is not supported");
    return {};
  }
  const MoeDesc &m = *c_.moe;
  const int64_t H = c_.hidden, E = m.experts, I = m.intermediate;
  auto kind = tf::symbolizeActivationKind(c_.activation);
  if (!kind) {
    fail(p + "mlp", "config.json: activation '" + c_.activation + "' is not supported");
    return {};
  }
  // The block: Mixtral's checkpoints name it block_sparse_moe, transformers
  // 5's modules (and Qwen's checkpoints) mlp.
  const bool mixtral = c_.modelType == "mixtral";
  std::string b = p + "mlp.";
  if (weights_.has(p + "block_sparse_moe.gate.weight") ||
      (mixtral && !weights_.has(p + "mlp.gate.weight")))
    b = p + "block_sparse_moe.";
  const std::string routerName = b + "gate.weight";
  if (const std::vector<int64_t> *s = weights_.shapeOf(routerName);
      s && s->size() == 2 && (*s)[0] != E) {
    fail(routerName, "tensor '" + routerName + "' routes to " + std::to_string((*s)[0]) +
                         " experts where config.json's '" + m.expertsField + "' is " +
                         std::to_string(E));
    return {};
  }
  Value router = weight(routerName, {E, H});
  // Experts stacked as transformers 5 holds them (gate_up_proj [E, 2I, H],
  // gate rows first; down_proj [E, H, I]), or one module per expert as
  // checkpoints store them (Mixtral w1/w3/w2, Qwen gate/up/down_proj):
  // stacked and fused here.
  Value gateUp, down;
  if (weights_.has(b + "experts.gate_up_proj")) {
    gateUp = weight(b + "experts.gate_up_proj", {E, 2 * I, H});
    down = weight(b + "experts.down_proj", {E, H, I});
  } else {
    const bool w123 = weights_.has(b + "experts.0.w1.weight") ||
                      (mixtral && !weights_.has(b + "experts.0.gate_proj.weight"));
    const char *gateName = w123 ? "w1" : "gate_proj", *upName = w123 ? "w3" : "up_proj",
               *downName = w123 ? "w2" : "down_proj";
    auto name = [&](int64_t e, const char *proj) {
      return b + "experts." + std::to_string(e) + "." + proj + ".weight";
    };
    if (weights_.has(name(E, gateName))) {
      fail(name(E, gateName), "the checkpoint holds a tensor of expert " + std::to_string(E) +
                                  " ('" + name(E, gateName) + "') where config.json's '" +
                                  m.expertsField + "' is " + std::to_string(E));
      return {};
    }
    std::vector<std::string> gateUps, downs;
    for (int64_t e = 0; e < E; ++e) {
      gateUps.push_back(name(e, gateName));
      gateUps.push_back(name(e, upName));
      downs.push_back(name(e, downName));
    }
    gateUp = concat(b + "experts.gate_up_proj", gateUps, {I, H}, {E, 2 * I, H});
    down = concat(b + "experts.down_proj", downs, {H, I}, {E, H, I});
  }
  // Qwen2-MoE's shared expert, scaled by sigmoid(x . shared_expert_gate).
  Value sharedGateUp, sharedDown, sharedGate;
  if (const int64_t S = m.sharedIntermediate) {
    const std::string se = b + "shared_expert.";
    sharedGateUp = concat(se + "gate_up_proj",
                          {se + "gate_proj.weight", se + "up_proj.weight"}, {S, H}, {2 * S, H});
    sharedDown = weight(se + "down_proj.weight", {H, S});
    sharedGate = weight(b + "shared_expert_gate.weight", {1, H});
  }
  if (failed_ || !router || !gateUp || !down)
    return {};
  return tf::MoeOp::create(b_, loc(b + "experts"), tokens(H), x, router, Value(), gateUp,
                           Value(), Value(), down, sharedGateUp, sharedDown, sharedGate,
                           Value(), Value(), Value(), Value(), *kind,
                           m.renormalize ? tf::MoeRouting::Renormalize : tf::MoeRouting::Softmax,
                           uint64_t(E), uint64_t(m.topK));
}

OwningOpRef<ModuleOp> DecoderBuilder::build() {
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc_);
  b_.setInsertionPointToEnd(module->getBody());
  Type f32 = b_.getF32Type();
  auto idsType = RankedTensorType::get({ShapedType::kDynamic}, b_.getI64Type());
  auto cacheType = tf::KVCacheType::get(&ctx_, c_.layers, c_.kvHeads, c_.headDim, 16, f32);
  auto logitsType = tokens(c_.vocabSize);
  auto fnType = b_.getFunctionType({idsType, tf::BatchType::get(&ctx_), cacheType}, {logitsType});
  auto fn = func::FuncOp::create(b_, fileLoc_, options_.functionName, fnType);
  fn.setResultAttr(0, "onnx.name", b_.getStringAttr("logits"));
  Block *body = fn.addEntryBlock();
  b_.setInsertionPointToEnd(body);
  ids_ = body->getArgument(0);
  batch_ = body->getArgument(1);
  cache_ = body->getArgument(2);
  positions_ = tf::PositionsOp::create(b_, fileLoc_, idsType, batch_);

  const int64_t E = c_.hidden;
  Value table = weight(names_.embed, {c_.vocabSize, E});
  if (!table)
    return nullptr;
  FloatAttr embedScale =
      c_.embeddingScale ? f64(double(float(c_.embeddingScale))) : FloatAttr();
  Value h = tf::EmbeddingOp::create(b_, loc(names_.embed), tokens(E), table, ids_, embedScale);
  if (c_.absolutePositions) {
    Value wpe = weight(names_.positions, {c_.maxPositions, E});
    if (!wpe)
      return nullptr;
    Value pe = tf::EmbeddingOp::create(b_, loc(names_.positions), tokens(E), wpe, positions_,
                                       FloatAttr());
    h = tf::ResidualAddOp::create(b_, loc(names_.positions), tokens(E), h, pe);
  }
  for (int64_t i = 0; i < c_.layers && !failed_; ++i) {
    const std::string p = names_.layer + std::to_string(i) + ".";
    auto add = [&](Value residual, Value branch) -> Value {
      if (!residual || !branch)
        return {};
      return tf::ResidualAddOp::create(b_, loc(p + "residual"), tokens(E), residual, branch);
    };
    switch (c_.block) {
    case BlockKind::Sequential: {
      Value a = attention(p, norm(p + names_.norm1, h, E), i);
      h = add(h, a);
      if (!h)
        break;
      h = add(h, ffn(p, norm(p + names_.norm2, h, E), i));
      break;
    }
    case BlockKind::Parallel: {
      Value n1 = norm(p + names_.norm1, h, E);
      Value a = attention(p, n1, i);
      Value m = mlp(p, c_.sharedParallelNorm ? n1 : norm(p + names_.norm2, h, E));
      h = add(h, add(m, a));
      break;
    }
    case BlockKind::Sandwich: {
      Value a = attention(p, norm(p + names_.norm1, h, E), i);
      h = add(h, a ? norm(p + names_.post1, a, E) : Value());
      if (!h)
        break;
      Value m = mlp(p, norm(p + names_.norm2, h, E));
      h = add(h, m ? norm(p + names_.post2, m, E) : Value());
      break;
    }
    case BlockKind::PostNorm: {
      Value a = attention(p, h, i);
      h = add(h, a ? norm(p + names_.post1, a, E) : Value());
      if (!h)
        break;
      Value m = mlp(p, h);
      h = add(h, m ? norm(p + names_.post2, m, E) : Value());
      break;
    }
    }
    if (!h)
      failed_ = true;
  }
  if (failed_)
    return nullptr;
  // Granite divides the logits by logits_scaling: the final norm's weight
  // carries it (exact for a power of two).
  h = norm(names_.finalNorm, h, E, 1.0 / c_.logitsScaling);
  if (!h)
    return nullptr;
  // Tied embeddings: the table is the lm head (the file has no lm_head.weight,
  // or one HF ignores).
  Value head = table;
  if (!c_.tieEmbeddings) {
    head = weight(names_.lmHead.empty() ? "lm_head.weight" : names_.lmHead, {c_.vocabSize, E});
    if (!head)
      return nullptr;
  }
  Value logits = tf::LogitsOp::create(b_, loc("logits"), logitsType, h, head, Value(), Value(),
                                      c_.finalSoftcap ? f64(c_.finalSoftcap) : FloatAttr());
  func::ReturnOp::create(b_, fileLoc_, logits);
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

} // namespace

OwningOpRef<ModuleOp> accel::importCheckpointDir(MLIRContext &context, llvm::StringRef dirRef,
                                                 const CheckpointImportOptions &options) {
  context.loadDialect<func::FuncDialect, tf::TransformerDialect>();
  context.getOrLoadDialect("onnx");
  const std::string dir = dirRef.str();
  Location where = FileLineColLoc::get(&context, dir, 0, 0);
  rt::StatusOr<HfConfig> config = readHfConfig(dir);
  if (!config) {
    emitError(where) << config.status().message();
    return nullptr;
  }
  rt::StatusOr<std::shared_ptr<CheckpointTensors>> tensors = CheckpointTensors::open(dir);
  if (!tensors) {
    emitError(where) << tensors.status().message();
    return nullptr;
  }
  DecoderBuilder builder(context, *config, **tensors, dir, options);
  return builder.build();
}
