//===- HfConfig.h - a Hugging Face config.json, typed -----------*- C++ -*-===//
//
// Internal to lib/Import. config.json (and generation_config.json) read
// into what the checkpoint builders need: one description for every
// supported family, with each family's peculiarities as fields. A
// `model_type` accel does not build, or a field that changes the model's
// arithmetic in a way accel does not reproduce, is one sentence naming it.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_LIB_IMPORT_CHECKPOINT_HFCONFIG_H
#define ACCEL_LIB_IMPORT_CHECKPOINT_HFCONFIG_H

#include "core/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace accel::import::ckpt {

/// How a decoder layer combines its attention and MLP branches.
enum class BlockKind {
  /// h += attn(norm1(h)); h += mlp(norm2(h))  (Llama and most others)
  Sequential,
  /// h += attn(norm1(h)) + mlp(norm2(h))  (GPT-NeoX; Falcon with one norm)
  Parallel,
  /// h += post1(attn(norm1(h))); h += post2(mlp(norm2(h)))  (Gemma 2/3)
  Sandwich,
  /// h += post1(attn(h)); h += post2(mlp(h))  (OLMo 2: no pre-norms)
  PostNorm,
};

/// How q, k and v are stored.
enum class QkvLayout {
  Separate,      ///< q_proj, k_proj, v_proj
  Fused,         ///< one [q; k; v] weight (Phi-3 qkv_proj, Falcon)
  HeadInterleaved, ///< [head][q, k, v][head_dim] rows (GPT-NeoX)
  Conv1D,        ///< GPT-2's c_attn: [in, 3 * hidden], columns [q; k; v]
};

struct RopeDesc {
  double theta = 10000.0;
  /// "" (none), "linear" or "llama3".
  std::string scaling;
  double factor = 1.0, lowFreqFactor = 1.0, highFreqFactor = 4.0;
  int64_t originalMaxPosition = 0;
};

/// A sparse mixture-of-experts MLP (Mixtral, Qwen2-MoE, Qwen3-MoE): the
/// layers it replaces the dense MLP of, and what `transformer.moe` needs.
struct MoeDesc {
  int64_t experts = 0, topK = 0;
  int64_t intermediate = 0;       ///< each expert's (moe_intermediate_size)
  bool renormalize = true;        ///< top-k weights divided by their sum
  int64_t sharedIntermediate = 0; ///< Qwen2-MoE's gated shared expert; 0: none
  std::vector<bool> sparse;       ///< per layer: the MoE (else the dense MLP)
  /// The config field that counts the experts, for messages.
  std::string expertsField;
};

/// A pre-quantised checkpoint's `quantization_config` (docs/checkpoints.md):
/// AutoAWQ's GEMM format or GPTQ's, 4-bit, groups along in_features.
struct QuantConfig {
  std::string method;   ///< "awq" or "gptq"; empty: not quantised
  int64_t groupSize = 0; ///< in_features per scale; 0: one group per row
  bool zeroPoint = true; ///< AWQ: zero points stored (else symmetric, 8)
  bool gptqV1 = true;    ///< GPTQ's format v1 stores zero points minus 1
};

struct HfConfig {
  std::string modelType;
  QuantConfig quant;
  int64_t vocabSize = 0, hidden = 0, layers = 0, heads = 0, kvHeads = 0, headDim = 0,
          intermediate = 0;
  double normEps = 1e-6;
  bool layerNorm = false;       ///< LayerNorm (with bias) instead of RMSNorm
  double normWeightOffset = 0;  ///< Gemma: x * (1 + w)
  bool tieEmbeddings = false;
  bool absolutePositions = false; ///< GPT-2's wpe
  // Rotary.
  bool rotary = true;
  int64_t rotaryDim = 0;
  RopeDesc rope;        ///< full-attention layers (every layer without local rope)
  std::optional<RopeDesc> localRope; ///< Gemma 3's sliding layers
  // Attention.
  QkvLayout qkv = QkvLayout::Separate;
  bool qkvBias = false, oBias = false;
  /// "" (none), "head" (per-head rms norm on [T, H, D]: Qwen3, Gemma 3) or
  /// "full" (rms norm over the whole projection: OLMo 2).
  std::string qkNorm;
  double attnScale = 0;      ///< softmax scale
  double attnSoftcap = 0, finalSoftcap = 0;
  std::vector<int64_t> slidingWindow; ///< per layer, 0 = full attention
  // MLP.
  bool gated = true;
  bool fusedGateUp = false;  ///< Phi-3 gate_up_proj
  bool mlpBias = false;
  std::string activation; ///< an accel ActivationKind name: silu, gelu, gelu_tanh
  std::optional<MoeDesc> moe;
  // Block.
  BlockKind block = BlockKind::Sequential;
  bool sharedParallelNorm = false; ///< Falcon: one norm feeds attention and MLP
  // Scalars.
  double embeddingScale = 0;      ///< Gemma sqrt(hidden), Granite embedding_multiplier
  double residualMultiplier = 1;  ///< Granite
  double logitsScaling = 1;       ///< Granite: logits / logits_scaling
  // Plan facts.
  int64_t maxPositions = 0;
  std::vector<int64_t> eosTokenIds;
  std::optional<int64_t> bosTokenId;
};

/// Reads `dir`/config.json (and generation_config.json when present).
rt::StatusOr<HfConfig> readHfConfig(const std::string &dir);

/// The model_types readHfConfig accepts, for messages and docs.
const char *supportedModelTypes();

} // namespace accel::import::ckpt

#endif // ACCEL_LIB_IMPORT_CHECKPOINT_HFCONFIG_H
