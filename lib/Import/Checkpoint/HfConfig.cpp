//===- HfConfig.cpp - a Hugging Face config.json, typed -------------------===//
#include "HfConfig.h"

#include "Safetensors.h"

#include "core/Json.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <set>

using namespace accel;
using namespace accel::import::ckpt;
namespace json = accel::rt::json;
using rt::Status;
using rt::StatusOr;

const char *accel::import::ckpt::supportedModelTypes() {
  return "llama, mistral, qwen2, qwen3, granite, olmo2, gemma, gemma2, gemma3_text, phi3, "
         "gpt2, gpt_neox, falcon, stablelm, starcoder2, mixtral, qwen2_moe, qwen3_moe";
}

namespace {
/// Typed reads of one JSON object; null counts as absent.
struct Fields {
  const json::Value &obj;
  const json::Value *get(const char *key) const {
    const json::Value *v = obj.find(key);
    return v && !v->isNull() ? v : nullptr;
  }
  bool has(const char *key) const { return get(key) != nullptr; }
};

Status refuse(const std::string &what) {
  return rt::unimplemented("config.json: " + what);
}
} // namespace

namespace {
/// quantization_config: AutoAWQ ("awq", version "gemm", 4 bits) or GPTQ
/// ("gptq", 4 bits, desc_act false, checkpoint_format gptq or gptq_v2);
/// anything else is refused naming the field.
StatusOr<QuantConfig> readQuantConfig(const json::Value &q) {
  if (!q.isObject())
    return rt::invalidArgument("config.json: 'quantization_config' is not an object");
  Fields f{q};
  auto str = [&](const char *key, const std::string &def) {
    const json::Value *v = f.get(key);
    return v && v->isString() ? v->asString() : def;
  };
  auto num = [&](const char *key, double def) {
    const json::Value *v = f.get(key);
    return v && v->isNumber() ? v->asDouble() : def;
  };
  QuantConfig c;
  c.method = str("quant_method", "");
  if (c.method != "awq" && c.method != "gptq")
    return refuse("quantization_config.quant_method '" + c.method +
                  "' is not supported (accel reads awq and gptq checkpoints)");
  const double bits = num(c.method == "awq" ? "w_bit" : "bits", num("bits", 0));
  if (bits != 4)
    return refuse("quantization_config: " + c.method + " with " +
                  std::to_string(int64_t(bits)) + " bits is not supported (4 only)");
  const double group = num(c.method == "awq" ? "q_group_size" : "group_size", num("group_size", -1));
  if (group != -1 && (group < 1 || group != double(int64_t(group))))
    return rt::invalidArgument("config.json: quantization_config.group_size must be a positive "
                               "integer or -1, got " + std::to_string(group));
  c.groupSize = group == -1 ? 0 : int64_t(group);
  if (c.method == "awq") {
    const std::string version = str("version", "gemm");
    if (version != "gemm" && version != "GEMM")
      return refuse("quantization_config: AWQ version '" + version +
                    "' is not supported (gemm only)");
    if (c.groupSize == 0)
      return refuse("quantization_config: AWQ without groups (group_size -1) is not supported");
    const json::Value *zp = f.get("zero_point");
    c.zeroPoint = !zp || !zp->isBool() || zp->asBool();
    if (const json::Value *m = f.get("modules_to_not_convert"); m && m->isArray() && m->size())
      return refuse("quantization_config.modules_to_not_convert is not supported");
  } else {
    if (const json::Value *d = f.get("desc_act"); d && d->isBool() && d->asBool())
      return refuse("quantization_config: GPTQ with desc_act (act-order) is not supported");
    const std::string format = str("checkpoint_format", "gptq");
    if (format != "gptq" && format != "gptq_v2")
      return refuse("quantization_config: GPTQ checkpoint_format '" + format +
                    "' is not supported (gptq, gptq_v2)");
    c.gptqV1 = format == "gptq";
  }
  return c;
}

class Reader {
public:
  explicit Reader(const json::Value &root) : f_{root} {}

  StatusOr<int64_t> integer(std::initializer_list<const char *> keys, std::optional<int64_t> def) {
    for (const char *k : keys)
      if (const json::Value *v = f_.get(k)) {
        if (!v->isInteger() || v->asInt() < 0)
          return rt::invalidArgument("config.json: '" + std::string(k) +
                                     "' is not a non-negative integer");
        return v->asInt();
      }
    if (def)
      return *def;
    return rt::invalidArgument("config.json has no '" + std::string(*keys.begin()) + "'");
  }
  StatusOr<double> number(std::initializer_list<const char *> keys, std::optional<double> def) {
    for (const char *k : keys)
      if (const json::Value *v = f_.get(k)) {
        if (!v->isNumber())
          return rt::invalidArgument("config.json: '" + std::string(k) + "' is not a number");
        return v->asDouble();
      }
    if (def)
      return *def;
    return rt::invalidArgument("config.json has no '" + std::string(*keys.begin()) + "'");
  }
  bool flag(const char *key, bool def) {
    const json::Value *v = f_.get(key);
    return v && v->isBool() ? v->asBool() : def;
  }
  std::string string(std::initializer_list<const char *> keys, const std::string &def) {
    for (const char *k : keys)
      if (const json::Value *v = f_.get(k); v && v->isString())
        return v->asString();
    return def;
  }
  const json::Value *get(const char *key) { return f_.get(key); }

private:
  Fields f_;
};

/// Reads one rope dictionary (rope_parameters, or the legacy rope_scaling +
/// rope_theta pair).
Status readRope(const json::Value *params, double legacyTheta, const json::Value *legacyScaling,
                RopeDesc &rope, const std::string &where) {
  rope.theta = legacyTheta;
  const json::Value *scaling = legacyScaling;
  if (params && params->isObject()) {
    if (const json::Value *t = params->find("rope_theta"); t && t->isNumber())
      rope.theta = t->asDouble();
    scaling = params;
  }
  if (!scaling || !scaling->isObject())
    return Status::ok();
  std::string type;
  for (const char *k : {"rope_type", "type"})
    if (const json::Value *t = scaling->find(k); t && t->isString()) {
      type = t->asString();
      break;
    }
  auto num = [&](const char *k, double def) {
    const json::Value *v = scaling->find(k);
    return v && v->isNumber() ? v->asDouble() : def;
  };
  if (type.empty() || type == "default")
    return Status::ok();
  if (type == "linear") {
    rope.scaling = "linear";
    rope.factor = num("factor", 1.0);
    return Status::ok();
  }
  if (type == "llama3") {
    rope.scaling = "llama3";
    rope.factor = num("factor", 1.0);
    rope.lowFreqFactor = num("low_freq_factor", 1.0);
    rope.highFreqFactor = num("high_freq_factor", 4.0);
    rope.originalMaxPosition = int64_t(num("original_max_position_embeddings", 8192));
    return Status::ok();
  }
  return refuse(where + " rope type '" + type +
                "' is not supported (accel builds default, linear and llama3 rotary)");
}

StatusOr<std::string> activationName(const std::string &hf) {
  std::string name = llvm::StringSwitch<std::string>(hf)
                         .Cases("silu", "swish", "silu")
                         .Case("gelu", "gelu")
                         .Cases("gelu_new", "gelu_pytorch_tanh", "gelu_fast", "gelu_tanh")
                         .Default("");
  if (name.empty())
    return refuse("activation '" + hf + "' is not supported (silu, gelu, gelu_new, "
                  "gelu_pytorch_tanh)");
  return name;
}
/// The sparse MLP of Mixtral, Qwen2-MoE and Qwen3-MoE. router_aux_loss_coef,
/// output_router_logits and router_jitter_noise are training-time fields
/// (HF adds the jitter only while training): read by nobody.
StatusOr<MoeDesc> readMoe(Reader &r, const HfConfig &c) {
  const std::string &t = c.modelType;
  MoeDesc m;
  const bool mixtral = t == "mixtral";
  // transformers maps num_experts and num_local_experts onto each other.
  m.expertsField = mixtral ? "num_local_experts" : "num_experts";
  for (const char *k : {"num_local_experts", "num_experts"})
    if (r.get(k)) {
      m.expertsField = k;
      break;
    }
  ACCEL_RT_ASSIGN_OR_RETURN(m.experts, r.integer({"num_local_experts", "num_experts"},
                                                 mixtral ? 8 : (t == "qwen2_moe" ? 60 : 128)));
  ACCEL_RT_ASSIGN_OR_RETURN(m.topK, r.integer({"num_experts_per_tok"},
                                              mixtral ? 2 : (t == "qwen2_moe" ? 4 : 8)));
  m.sparse.assign(size_t(c.layers), m.experts > 0);
  if (mixtral) {
    if (m.experts == 0)
      return rt::invalidArgument("config.json: 'num_local_experts' is 0");
    m.intermediate = c.intermediate;
    m.renormalize = true; // MixtralTopKRouter always divides by the top-k sum
  } else {
    ACCEL_RT_ASSIGN_OR_RETURN(m.intermediate, r.integer({"moe_intermediate_size"},
                                                        t == "qwen2_moe" ? 1408 : 768));
    m.renormalize = r.flag("norm_topk_prob", false);
    ACCEL_RT_ASSIGN_OR_RETURN(int64_t step, r.integer({"decoder_sparse_step"}, 1));
    std::vector<int64_t> dense;
    if (const json::Value *only = r.get("mlp_only_layers")) {
      if (!only->isArray())
        return rt::invalidArgument("config.json: 'mlp_only_layers' is not a list of layer indices");
      for (const json::Value &e : only->items()) {
        if (!e.isInteger())
          return rt::invalidArgument(
              "config.json: 'mlp_only_layers' is not a list of layer indices");
        dense.push_back(e.asInt());
      }
    }
    if (m.experts > 0 && step == 0)
      return rt::invalidArgument("config.json: 'decoder_sparse_step' is 0");
    // HF: a layer is sparse when it is not in mlp_only_layers, there are
    // experts, and (layer + 1) % decoder_sparse_step == 0.
    for (int64_t i = 0; i < c.layers; ++i)
      m.sparse[size_t(i)] = m.experts > 0 && (i + 1) % std::max<int64_t>(step, 1) == 0 &&
                            std::find(dense.begin(), dense.end(), i) == dense.end();
    if (t == "qwen2_moe") {
      ACCEL_RT_ASSIGN_OR_RETURN(m.sharedIntermediate,
                                r.integer({"shared_expert_intermediate_size"}, 5632));
    }
  }
  if (std::find(m.sparse.begin(), m.sparse.end(), true) != m.sparse.end()) {
    if (m.topK == 0 || m.topK > m.experts)
      return rt::invalidArgument("config.json: 'num_experts_per_tok' (" +
                                 std::to_string(m.topK) + ") must be between 1 and '" +
                                 m.expertsField + "' (" + std::to_string(m.experts) + ")");
    if (m.intermediate == 0)
      return rt::invalidArgument(std::string("config.json: '") +
                                 (mixtral ? "intermediate_size" : "moe_intermediate_size") +
                                 "' is 0");
  }
  return m;
}
} // namespace

StatusOr<HfConfig> accel::import::ckpt::readHfConfig(const std::string &dir) {
  llvm::SmallString<256> configPath(dir);
  llvm::sys::path::append(configPath, "config.json");
  if (!llvm::sys::fs::exists(configPath))
    return rt::notFound("the folder has no config.json: accelc reads a folder as a Hugging Face "
                        "checkpoint (config.json and model.safetensors)");
  ACCEL_RT_ASSIGN_OR_RETURN(std::unique_ptr<llvm::MemoryBuffer> buf,
                            openInFolder(dir, "config.json"));
  StatusOr<json::Value> parsed = json::parse(buf->getBuffer().str());
  if (!parsed)
    return rt::invalidArgument("config.json is not valid JSON (" + parsed.status().message() +
                               ")");
  if (!parsed->isObject())
    return rt::invalidArgument("config.json is not a JSON object");
  const json::Value &root = *parsed;
  Reader r(root);
  HfConfig c;
  c.modelType = r.string({"model_type"}, "");
  if (c.modelType.empty())
    return rt::invalidArgument("config.json has no 'model_type'");
  static const std::set<std::string> known = {
      "llama", "mistral", "qwen2", "qwen3", "granite", "olmo2", "gemma", "gemma2",
      "gemma3_text", "phi3", "gpt2", "gpt_neox", "falcon", "stablelm", "starcoder2",
      "mixtral", "qwen2_moe", "qwen3_moe"};
  if (!known.count(c.modelType))
    return refuse("model_type '" + c.modelType + "' is not one accel imports (" +
                  supportedModelTypes() + ")");
  const std::string &t = c.modelType;
  if (const json::Value *q = r.get("quantization_config")) {
    ACCEL_RT_ASSIGN_OR_RETURN(c.quant, readQuantConfig(*q));
  }

  // Sizes.
  ACCEL_RT_ASSIGN_OR_RETURN(c.vocabSize, r.integer({"vocab_size"}, std::nullopt));
  ACCEL_RT_ASSIGN_OR_RETURN(c.hidden, r.integer({"hidden_size", "n_embd"}, std::nullopt));
  ACCEL_RT_ASSIGN_OR_RETURN(c.layers, r.integer({"num_hidden_layers", "n_layer"}, std::nullopt));
  ACCEL_RT_ASSIGN_OR_RETURN(c.heads, r.integer({"num_attention_heads", "n_head"}, std::nullopt));
  if (c.heads == 0 || c.hidden == 0 || c.layers == 0 || c.vocabSize == 0)
    return rt::invalidArgument("config.json: vocab_size, hidden_size, num_hidden_layers and "
                               "num_attention_heads must be positive");
  ACCEL_RT_ASSIGN_OR_RETURN(c.kvHeads, r.integer({"num_key_value_heads"}, c.heads));
  ACCEL_RT_ASSIGN_OR_RETURN(c.headDim, r.integer({"head_dim"}, c.hidden / c.heads));
  ACCEL_RT_ASSIGN_OR_RETURN(c.intermediate,
                            r.integer({"intermediate_size", "n_inner", "ffn_hidden_size"},
                                      4 * c.hidden));
  ACCEL_RT_ASSIGN_OR_RETURN(c.maxPositions,
                            r.integer({"max_position_embeddings", "n_positions"}, 0));
  ACCEL_RT_ASSIGN_OR_RETURN(c.normEps, r.number({"rms_norm_eps", "layer_norm_eps",
                                                 "layer_norm_epsilon", "norm_epsilon"},
                                                1e-6));
  const bool moe = t == "mixtral" || t == "qwen2_moe" || t == "qwen3_moe";
  // The MoE families' configs default to untied embeddings.
  c.tieEmbeddings = r.flag("tie_word_embeddings", !moe);
  c.activation = r.string({"hidden_activation", "hidden_act", "activation_function",
                           "activation"},
                          "silu");
  ACCEL_RT_ASSIGN_OR_RETURN(c.activation, activationName(c.activation));
  c.qkvBias = c.oBias = r.flag("attention_bias", false);
  c.mlpBias = r.flag("mlp_bias", false);

  // Rotary.
  const json::Value *ropeParams = r.get("rope_parameters");
  ACCEL_RT_ASSIGN_OR_RETURN(double legacyTheta,
                            r.number({"rope_theta", "rotary_emb_base"},
                                     t == "mixtral" ? 1e6 : 10000.0));
  double partial = 1.0;
  if (ropeParams && ropeParams->isObject())
    if (const json::Value *p = ropeParams->find("partial_rotary_factor"); p && p->isNumber())
      partial = p->asDouble();
  if (const json::Value *p = r.get("partial_rotary_factor"); p && p->isNumber())
    partial = p->asDouble();
  if (const json::Value *p = r.get("rotary_pct"); p && p->isNumber())
    partial = p->asDouble();
  if (t == "gemma3_text") {
    // rope_parameters per layer type, or rope_theta + rope_local_base_freq.
    const json::Value *full = ropeParams ? ropeParams->find("full_attention") : nullptr;
    const json::Value *local = ropeParams ? ropeParams->find("sliding_attention") : nullptr;
    ACCEL_RT_RETURN_IF_ERROR(readRope(full ? full : ropeParams, legacyTheta, r.get("rope_scaling"),
                                      c.rope, "full-attention"));
    RopeDesc lr;
    ACCEL_RT_ASSIGN_OR_RETURN(double localTheta, r.number({"rope_local_base_freq"}, 10000.0));
    ACCEL_RT_RETURN_IF_ERROR(readRope(local, localTheta, nullptr, lr, "sliding-attention"));
    c.localRope = lr;
  } else {
    ACCEL_RT_RETURN_IF_ERROR(readRope(ropeParams, legacyTheta, r.get("rope_scaling"), c.rope,
                                      "the"));
  }
  if (c.headDim == 0)
    return rt::invalidArgument("config.json: 'head_dim' is 0");
  // HF: int(head_dim * partial_rotary_factor).
  c.rotaryDim = int64_t(double(c.headDim) * partial);
  if (c.rotaryDim <= 0 || c.rotaryDim > c.headDim || c.rotaryDim % 2)
    return refuse("partial_rotary_factor " + std::to_string(partial) + " gives a rotary "
                  "dimension of " + std::to_string(c.rotaryDim) + " for head_dim " +
                  std::to_string(c.headDim) + ", which must be even and at most head_dim");
  c.attnScale = 1.0 / std::sqrt(double(c.headDim));

  // Sliding windows: layer_types where given, else the family's rule.
  c.slidingWindow.assign(size_t(c.layers), 0);
  ACCEL_RT_ASSIGN_OR_RETURN(int64_t window, r.integer({"sliding_window"}, 0));
  if (const json::Value *types = r.get("layer_types"); types && types->isArray()) {
    if (int64_t(types->size()) != c.layers)
      return rt::invalidArgument("config.json: 'layer_types' lists " +
                                 std::to_string(types->size()) + " layers for " +
                                 std::to_string(c.layers));
    for (int64_t i = 0; i < c.layers; ++i) {
      const json::Value &lt = types->items()[size_t(i)];
      std::string s = lt.isString() ? lt.asString() : "";
      if (s == "sliding_attention")
        c.slidingWindow[size_t(i)] = window;
      else if (s != "full_attention")
        return refuse("layer type '" + s + "' of layer " + std::to_string(i) +
                      " is not supported (full_attention, sliding_attention)");
    }
  } else if (t == "qwen2" || t == "qwen3" || t == "qwen2_moe" || t == "qwen3_moe") {
    if (r.flag("use_sliding_window", false))
      return refuse("'use_sliding_window' without 'layer_types' is not supported");
  } else if (t == "gemma2" || t == "gemma3_text") {
    // Without layer_types: Gemma 2 alternates (even layers local), Gemma 3
    // has every sliding_window_pattern-th layer global.
    ACCEL_RT_ASSIGN_OR_RETURN(int64_t pattern,
                              r.integer({"sliding_window_pattern", "_sliding_window_pattern"},
                                        t == "gemma2" ? 2 : 6));
    for (int64_t i = 0; i < c.layers; ++i)
      c.slidingWindow[size_t(i)] = (pattern && (i + 1) % pattern) ? window : 0;
  } else if (window) {
    for (int64_t &w : c.slidingWindow)
      w = window;
  }

  // The families.
  if (t == "llama" || t == "mistral" || t == "granite" || t == "mixtral") {
    if (t == "mistral" && r.flag("attention_bias", false))
      return refuse("'attention_bias' is not a Mistral field accel honours");
    if (t == "mixtral" && r.flag("attention_bias", false))
      return refuse("'attention_bias' is not a Mixtral field accel honours");
    if (t == "granite") {
      ACCEL_RT_ASSIGN_OR_RETURN(c.embeddingScale, r.number({"embedding_multiplier"}, 1.0));
      ACCEL_RT_ASSIGN_OR_RETURN(c.residualMultiplier, r.number({"residual_multiplier"}, 1.0));
      ACCEL_RT_ASSIGN_OR_RETURN(c.logitsScaling, r.number({"logits_scaling"}, 1.0));
      ACCEL_RT_ASSIGN_OR_RETURN(c.attnScale, r.number({"attention_multiplier"}, c.attnScale));
      if (c.logitsScaling == 0)
        return rt::invalidArgument("config.json: 'logits_scaling' is 0");
    }
  } else if (t == "qwen2") {
    c.qkvBias = true;
    c.oBias = false;
  } else if (t == "qwen2_moe") {
    c.qkvBias = r.flag("qkv_bias", true);
    c.oBias = false;
  } else if (t == "qwen3" || t == "qwen3_moe") {
    c.qkNorm = "head";
    c.oBias = c.qkvBias; // attention_bias applies to q, k, v and o
  } else if (t == "olmo2") {
    c.qkNorm = "full";
    c.block = BlockKind::PostNorm;
  } else if (t == "gemma" || t == "gemma2" || t == "gemma3_text") {
    if (r.flag("use_bidirectional_attention", false))
      return refuse("'use_bidirectional_attention' is not supported");
    c.normWeightOffset = 1.0;
    c.embeddingScale = std::sqrt(double(c.hidden));
    if (t != "gemma") {
      c.block = BlockKind::Sandwich;
      ACCEL_RT_ASSIGN_OR_RETURN(double scalar,
                                r.number({"query_pre_attn_scalar"}, double(c.headDim)));
      c.attnScale = 1.0 / std::sqrt(scalar);
      ACCEL_RT_ASSIGN_OR_RETURN(c.attnSoftcap, r.number({"attn_logit_softcapping"}, 0.0));
      ACCEL_RT_ASSIGN_OR_RETURN(c.finalSoftcap, r.number({"final_logit_softcapping"}, 0.0));
    }
    if (t == "gemma3_text")
      c.qkNorm = "head";
  } else if (t == "phi3") {
    c.qkv = QkvLayout::Fused;
    c.fusedGateUp = true;
    if (const json::Value *rs = r.get("rope_scaling"); rs && rs->isObject())
      return refuse("Phi-3's 'rope_scaling' (LongRoPE) is not supported");
  } else if (t == "gpt2") {
    if (r.flag("scale_attn_by_inverse_layer_idx", false))
      return refuse("'scale_attn_by_inverse_layer_idx' is not supported");
    if (r.flag("add_cross_attention", false))
      return refuse("'add_cross_attention' is not supported");
    if (!r.flag("scale_attn_weights", true))
      c.attnScale = 1.0;
    c.qkv = QkvLayout::Conv1D;
    c.qkvBias = c.oBias = c.mlpBias = true;
    c.layerNorm = true;
    c.gated = false;
    c.rotary = false;
    c.absolutePositions = true;
  } else if (t == "gpt_neox") {
    c.qkv = QkvLayout::HeadInterleaved;
    c.qkvBias = c.oBias = r.flag("attention_bias", true);
    c.mlpBias = true;
    c.layerNorm = true;
    c.gated = false;
    c.block = r.flag("use_parallel_residual", true) ? BlockKind::Parallel : BlockKind::Sequential;
  } else if (t == "falcon") {
    if (r.flag("alibi", false))
      return refuse("'alibi' (ALiBi position biases) is not supported");
    if (r.flag("new_decoder_architecture", false))
      return refuse("'new_decoder_architecture' is not supported");
    if (!r.flag("parallel_attn", true))
      return refuse("'parallel_attn': false is not supported");
    c.kvHeads = r.flag("multi_query", true) ? 1 : c.heads;
    c.qkv = r.flag("multi_query", true) ? QkvLayout::Fused : QkvLayout::HeadInterleaved;
    c.qkvBias = c.oBias = c.mlpBias = r.flag("bias", false);
    c.layerNorm = true;
    c.gated = false;
    c.block = BlockKind::Parallel;
    c.sharedParallelNorm = true;
  } else if (t == "stablelm") {
    if (r.flag("qk_layernorm", false))
      return refuse("'qk_layernorm' (per-head LayerNorm) is not supported");
    if (r.flag("use_parallel_residual", false))
      return refuse("'use_parallel_residual' is not supported for stablelm");
    c.qkvBias = r.flag("use_qkv_bias", false);
    c.oBias = false;
    c.layerNorm = true;
  } else if (t == "starcoder2") {
    c.qkvBias = c.oBias = c.mlpBias = r.flag("use_bias", true);
    c.layerNorm = true;
    c.gated = false;
  }
  if (moe) {
    ACCEL_RT_ASSIGN_OR_RETURN(c.moe, readMoe(r, c));
  }
  if (c.heads % std::max<int64_t>(c.kvHeads, 1) || c.kvHeads == 0)
    return rt::invalidArgument("config.json: num_attention_heads (" + std::to_string(c.heads) +
                               ") is not a multiple of num_key_value_heads (" +
                               std::to_string(c.kvHeads) + ")");

  // BOS/EOS: config.json, then generation_config.json.
  auto addIds = [&](const json::Value *v) {
    auto add = [&](const json::Value &e) {
      if (e.isInteger() && std::find(c.eosTokenIds.begin(), c.eosTokenIds.end(), e.asInt()) ==
                               c.eosTokenIds.end())
        c.eosTokenIds.push_back(e.asInt());
    };
    if (!v)
      return;
    if (v->isArray())
      for (const json::Value &e : v->items())
        add(e);
    else
      add(*v);
  };
  addIds(r.get("eos_token_id"));
  if (const json::Value *b = r.get("bos_token_id"); b && b->isInteger())
    c.bosTokenId = b->asInt();
  llvm::SmallString<256> gen(dir);
  llvm::sys::path::append(gen, "generation_config.json");
  if (llvm::sys::fs::exists(gen)) {
    ACCEL_RT_ASSIGN_OR_RETURN(std::unique_ptr<llvm::MemoryBuffer> g,
                              openInFolder(dir, "generation_config.json"));
    StatusOr<json::Value> gj = json::parse(g->getBuffer().str());
    if (!gj || !gj->isObject())
      return rt::invalidArgument("generation_config.json is not a JSON object");
    Reader gr(*gj);
    addIds(gr.get("eos_token_id"));
    if (const json::Value *b = gr.get("bos_token_id"); b && b->isInteger())
      c.bosTokenId = b->asInt();
  }
  return c;
}
