//===- TransformerDialect.td - the transformer dialect ----*- tablegen -*-===//

#ifndef ACCEL_TRANSFORMER_DIALECT
#define ACCEL_TRANSFORMER_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Transformer_Dialect : Dialect {
  let name = "transformer";
  let cppNamespace = "::accel::transformer";
  let summary = "LLM operators on token-major ragged activations";
  let description = [{
    The middle level of accel. Activations are `[tokens, hidden]` for a
    ragged batch of sequences; attention reads and writes a paged KV cache.
  }];
}

class Transformer_Op<string mnemonic, list<Trait> traits = []>
    : Op<Transformer_Dialect, mnemonic, traits>;

#endif // ACCEL_TRANSFORMER_DIALECT
