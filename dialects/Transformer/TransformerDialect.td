//===- TransformerDialect.td - the transformer dialect ----*- tablegen -*-===//
//
// The dialect, and the base classes of its ops, attributes and types.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_TRANSFORMER_DIALECT
#define ACCEL_TRANSFORMER_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Transformer_Dialect : Dialect {
  let name = "transformer";
  let cppNamespace = "::accel::transformer";
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let summary = "LLM operators on token-major ragged activations";
  let description = [{
    The middle level of accel: raising patterns produce it from the onnx
    dialect; the fusion, precision, partition and layout passes rewrite it;
    it lowers to the exec dialect.

    **Activations are token-major.** A step of the engine runs a ragged batch
    of sequences (prefill chunks and decode tokens mixed) as one flat list of
    tokens, so every activation is `tensor<?xHxT>` (`[tokens, hidden]`), with
    the token dimension dynamic. Per-head values are `[tokens, heads,
    head_dim]` (`transformer.split_heads` / `transformer.merge_heads` convert).
    There is no batch or sequence dimension anywhere.

    **Step metadata.** A `!transformer.batch` value, an argument of the
    model function, stands for what the runtime scheduler decides per step:
    the sequences in the batch, where each one's tokens start
    (`query_start_loc`), their context lengths, every token's position, the
    block table of every sequence and the cache slot of every new token.
    `transformer.positions` reads positions out of it; `transformer.attention`
    and `transformer.logits` (last-token selection) read the rest.

    **KV cache.** A `!transformer.kv_cache<...>` value, also a function
    argument, is a *reference* to the paged KV pool of all layers.
    `transformer.attention` with `layer = i` writes this step's K and V into
    layer `i` of the pool (slots from the batch) and attends over the whole
    context; it declares a read and a write effect on the cache operand, so
    attention ops stay in program order and are never dead-code eliminated.
    All other ops are pure.

    **Weights** use torch's layout: a linear weight is `[out, in]`. Element
    types are f32, f16 and bf16 for activations; weights, the KV cache and
    `transformer.quantize` results may also be f8E4M3FN, f8E5M2, i8 and i4
    (i4 only for weights), always with explicit scales.

    A decoder layer, abridged:

    ```mlir
    func.func @forward(%ids: tensor<?xi32>, %batch: !transformer.batch,
                       %cache: !transformer.kv_cache<layers = 32, kv_heads = 8, head_dim = 128, block_size = 16, bf16>,
                       %embed: tensor<128256x4096xbf16>, ...) -> tensor<?x128256xf32> {
      %h = transformer.embedding %embed[%ids] : (tensor<128256x4096xbf16>, tensor<?xi32>) -> tensor<?x4096xbf16>
      %pos = transformer.positions %batch : tensor<?xi32>
      %n = transformer.rms_norm %h, %ln1 {epsilon = 1.0e-05} : tensor<?x4096xbf16>, tensor<4096xbf16>
      %q0 = transformer.linear %n, %wq : (tensor<?x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<?x4096xbf16>
      %q1 = transformer.split_heads %q0 : tensor<?x4096xbf16> -> tensor<?x32x128xbf16>
      %q = transformer.rotary %q1, %pos style = half_split {rotary_dim = 128, theta = 5.0e+05}
             : (tensor<?x32x128xbf16>, tensor<?xi32>) -> tensor<?x32x128xbf16>
      ...
      %o = transformer.attention %q, %k, %v, %cache[0], %batch
             {causal, head_dim = 128, num_heads = 32, num_kv_heads = 8, scale = 0.088388347648318441}
             : tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, !transformer.kv_cache<...>
      ...
    }
    ```
  }];
}

/// Base class of every transformer op.
class Transformer_Op<string mnemonic, list<Trait> traits = []>
    : Op<Transformer_Dialect, mnemonic, traits>;

/// Base class of every transformer type.
class Transformer_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Transformer_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

/// Base class of every transformer attribute (enum attributes excepted).
class Transformer_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Transformer_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // ACCEL_TRANSFORMER_DIALECT
