//===- TransformerEnums.td - transformer dialect enums ----*- tablegen -*-===//
//
// Enums of the transformer dialect. Each one is wrapped in an EnumAttr whose
// assembly is the bare word, so op formats print `kind = silu`.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_TRANSFORMER_ENUMS
#define ACCEL_TRANSFORMER_ENUMS

include "TransformerDialect.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// ActivationKind
//===----------------------------------------------------------------------===//

def Transformer_ActivationKind : I32Enum<"ActivationKind",
    "activation kind", [
      // x * sigmoid(x) (Llama, Qwen2, Mistral, Phi3: HF `silu`).
      I32EnumCase<"Silu", 0, "silu">,
      // The exact, erf-based GELU (HF `gelu`).
      I32EnumCase<"Gelu", 1, "gelu">,
      // The tanh approximation of GELU (GPT-2's `gelu_new`, Gemma's
      // `gelu_pytorch_tanh`).
      I32EnumCase<"GeluTanh", 2, "gelu_tanh">,
      // x * sigmoid(1.702 x) (HF `quick_gelu`).
      I32EnumCase<"QuickGelu", 3, "quick_gelu">,
      I32EnumCase<"Relu", 4, "relu">,
      // relu(x)^2 (HF `relu2`).
      I32EnumCase<"ReluSquared", 5, "relu_squared">,
      I32EnumCase<"Sigmoid", 6, "sigmoid">,
      I32EnumCase<"Tanh", 7, "tanh">
    ]> {
  let cppNamespace = "::accel::transformer";
}

def Transformer_ActivationKindAttr
    : EnumAttr<Transformer_Dialect, Transformer_ActivationKind, "activation_kind">;

//===----------------------------------------------------------------------===//
// RotaryStyle
//===----------------------------------------------------------------------===//

def Transformer_RotaryStyle : I32Enum<"RotaryStyle",
    "rotary style", [
      // Channels (2i, 2i+1) form a pair: GPT-J, and ONNX RotaryEmbedding
      // with interleaved = 1 (vLLM `is_neox_style = False`).
      I32EnumCase<"Interleaved", 0, "interleaved">,
      // Channels (i, i + rotary_dim / 2) form a pair: GPT-NeoX, Llama, Qwen2,
      // Mistral, Phi3, Gemma (HF `rotate_half`; vLLM `is_neox_style = True`).
      I32EnumCase<"HalfSplit", 1, "half_split">
    ]> {
  let cppNamespace = "::accel::transformer";
}

def Transformer_RotaryStyleAttr
    : EnumAttr<Transformer_Dialect, Transformer_RotaryStyle, "rotary_style">;

//===----------------------------------------------------------------------===//
// RopeScalingKind
//===----------------------------------------------------------------------===//

def Transformer_RopeScalingKind : I32Enum<"RopeScalingKind",
    "rope scaling kind", [
      // Positions divided by `factor` (HF `linear`).
      I32EnumCase<"Linear", 0, "linear">,
      // theta grows with the sequence length past original_max_position
      // (HF `dynamic`).
      I32EnumCase<"DynamicNtk", 1, "dynamic_ntk">,
      // Llama 3.1's wavelength-banded frequency scaling (HF `llama3`).
      I32EnumCase<"Llama3", 2, "llama3">,
      // YaRN (HF `yarn`).
      I32EnumCase<"Yarn", 3, "yarn">
    ]> {
  let cppNamespace = "::accel::transformer";
}

//===----------------------------------------------------------------------===//
// QuantGranularity
//===----------------------------------------------------------------------===//

def Transformer_QuantGranularity : I32Enum<"QuantGranularity",
    "quantization granularity", [
      // One scale for the whole weight: a rank-0 scale.
      I32EnumCase<"PerTensor", 0, "per_tensor">,
      // One scale per output feature: scale [out_features].
      I32EnumCase<"PerChannel", 1, "per_channel">,
      // One scale per output feature and group of `group_size` consecutive
      // input features (GPTQ, AWQ, MatMulNBits): scale [out, in / group_size].
      I32EnumCase<"PerGroup", 2, "per_group">
    ]> {
  let cppNamespace = "::accel::transformer";
}

def Transformer_QuantGranularityAttr
    : EnumAttr<Transformer_Dialect, Transformer_QuantGranularity, "granularity">;

//===----------------------------------------------------------------------===//
// ReduceKind
//===----------------------------------------------------------------------===//

def Transformer_ReduceKind : I32Enum<"ReduceKind",
    "reduction kind", [
      I32EnumCase<"Sum", 0, "sum">,
      I32EnumCase<"Max", 1, "max">,
      I32EnumCase<"Min", 2, "min">
    ]> {
  let cppNamespace = "::accel::transformer";
}

def Transformer_ReduceKindAttr
    : EnumAttr<Transformer_Dialect, Transformer_ReduceKind, "reduce_kind">;

//===----------------------------------------------------------------------===//
// MoeRouting
//===----------------------------------------------------------------------===//

def Transformer_MoeRouting : I32Enum<"MoeRouting",
    "mixture-of-experts routing weights", [
      // p = softmax over all E router logits, the k largest, divided by
      // their sum (= softmax over the k largest logits): Mixtral; Qwen3-MoE
      // and Qwen2-MoE with norm_topk_prob = true (vLLM `renormalize=True`).
      I32EnumCase<"Renormalize", 0, "renormalize">,
      // p = softmax over all E router logits, the k largest used as they
      // are: Qwen2-MoE and Qwen3-MoE with norm_topk_prob = false.
      I32EnumCase<"Softmax", 1, "softmax">
    ]> {
  let cppNamespace = "::accel::transformer";
}

def Transformer_MoeRoutingAttr
    : EnumAttr<Transformer_Dialect, Transformer_MoeRouting, "moe_routing">;

#endif // ACCEL_TRANSFORMER_ENUMS
