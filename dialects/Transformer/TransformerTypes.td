//===- TransformerTypes.td - transformer dialect types ----*- tablegen -*-===//
//
// The paged KV cache and step-metadata types, and the tensor constraints the
// ops use (which element types each operand accepts).
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_TRANSFORMER_TYPES
#define ACCEL_TRANSFORMER_TYPES

include "TransformerDialect.td"
include "mlir/IR/BuiltinTypeInterfaces.td"
include "mlir/IR/CommonTypeConstraints.td"

//===----------------------------------------------------------------------===//
// !transformer.kv_cache
//===----------------------------------------------------------------------===//

def Transformer_KVCacheType : Transformer_Type<"KVCache", "kv_cache"> {
  let summary = "the paged key/value cache of every layer of a model";
  let description = [{
    A reference to the paged KV pool the runtime allocates once (sized by
    `--gpu-memory-utilization`, `--block-size`, `--kv-cache-dtype`). The pool
    holds, for each of `layers` layers, K and V blocks of `block_size` tokens
    by `kv_heads` heads by `head_dim` channels of the element type. The
    number of blocks is a runtime quantity and not part of the type.

    Only `transformer.attention` touches it: with `layer = i` it writes this
    step's K and V into layer `i` (the slot of every token comes from the
    `!transformer.batch`) and reads the context back.

    The element type is f32, f16 or bf16 (the model's own, then attention's
    q must have it too) or a quantized f8E4M3FN, f8E5M2 or i8 (then attention
    carries `k_scale` and `v_scale`). `block_size` is a power of two.

    ```mlir
    !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>
    !transformer.kv_cache<layers = 28, kv_heads = 4, head_dim = 128, block_size = 32, f8E4M3FN>
    ```
  }];
  let parameters = (ins
    "int64_t":$layers,
    "int64_t":$kvHeads,
    "int64_t":$headDim,
    "int64_t":$blockSize,
    "::mlir::Type":$elementType
  );
  let assemblyFormat = [{
    `<` `layers` `=` $layers `,` `kv_heads` `=` $kvHeads `,`
        `head_dim` `=` $headDim `,` `block_size` `=` $blockSize `,`
        $elementType `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True for an f8E4M3FN, f8E5M2 or i8 cache, which needs K/V scales.
    bool isQuantized() const;
  }];
}

//===----------------------------------------------------------------------===//
// !transformer.batch
//===----------------------------------------------------------------------===//

def Transformer_BatchType : Transformer_Type<"Batch", "batch"> {
  let summary = "per-step metadata of a ragged batch of sequences";
  let description = [{
    What the runtime's scheduler decides for one engine step, passed to the
    model function as an argument: the number of sequences, where each one's
    tokens start in the flat token list (`query_start_loc`), each sequence's
    context length after this step, each token's position, each sequence's
    block table, and each new token's cache slot. Its layout is the
    runtime's; the compiler reads it only through ops:
    `transformer.positions`, `transformer.attention` and
    `transformer.logits` (`select_last`).

    ```mlir
    func.func @forward(%ids: tensor<?xi32>, %batch: !transformer.batch, ...)
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Element-type and tensor constraints
//===----------------------------------------------------------------------===//

def Transformer_FloatElement
    : AnyTypeOf<[F32, F16, BF16], "f32, f16 or bf16">;

def Transformer_GemmInputElement
    : AnyTypeOf<[F32, F16, BF16, F8E4M3FN, F8E5M2, I8],
                "f32, f16, bf16, f8E4M3FN, f8E5M2 or i8">;

def Transformer_WeightElement
    : AnyTypeOf<[F32, F16, BF16, F8E4M3FN, F8E5M2, I8, I<4>],
                "f32, f16, bf16, f8E4M3FN, f8E5M2, i8 or i4">;

def Transformer_QuantElement
    : AnyTypeOf<[F8E4M3FN, F8E5M2, I8, I<4>], "f8E4M3FN, f8E5M2, i8 or i4">;

def Transformer_ActQuantElement
    : AnyTypeOf<[F8E4M3FN, F8E5M2, I8], "f8E4M3FN, f8E5M2 or i8">;

def Transformer_GatherElement
    : AnyTypeOf<[F32, F16, BF16, F8E4M3FN, F8E5M2, I8, I32, I64],
                "f32, f16, bf16, f8E4M3FN, f8E5M2, i8, i32 or i64">;

def Transformer_IntQuantElement : AnyTypeOf<[I8, I<4>], "i8 or i4">;

def Transformer_IndexElement : AnyTypeOf<[I32, I64], "i32 or i64">;

/// `[tokens, hidden]`, a token-major activation.
def Transformer_HiddenTensor : TensorRankOf<[Transformer_FloatElement], [2]>;
/// `[tokens, heads, head_dim]`, a per-head activation.
def Transformer_HeadsTensor : TensorRankOf<[Transformer_FloatElement], [3]>;
/// A normalisation input: `[tokens, hidden]` or `[tokens, heads, head_dim]`.
def Transformer_NormTensor : TensorRankOf<[Transformer_FloatElement], [2, 3]>;
def Transformer_FloatVector : TensorRankOf<[Transformer_FloatElement], [1]>;
def Transformer_FloatMatrix : TensorRankOf<[Transformer_FloatElement], [2]>;
def Transformer_AnyFloatTensor : RankedTensorOf<[Transformer_FloatElement]>;
def Transformer_IndexVector : TensorRankOf<[Transformer_IndexElement], [1]>;

#endif // ACCEL_TRANSFORMER_TYPES
