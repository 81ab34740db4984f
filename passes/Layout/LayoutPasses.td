//===- LayoutPasses.td - memory layout --------------------*- tablegen -*-===//
//
// Layout runs last on the fused (and, with -tp, partitioned) token-major
// transformer dialect and decides where activations live in device memory.
// docs/passes/layout.md has the rules and what is not done yet.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_PASSES_LAYOUT
#define ACCEL_PASSES_LAYOUT

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// accel-plan-memory
//===----------------------------------------------------------------------===//

def PlanMemory : Pass<"accel-plan-memory", "mlir::func::FuncOp"> {
  let summary = "assigns every activation a 256-byte-aligned offset in one arena by liveness";
  let description = [{
    Plans one arena for the activations of the function (one block): every
    ranked tensor result of an op that is not a weight (`onnx.Constant` or a
    constant-like op) and not shape arithmetic (`onnx.Shape`/`onnx.Size` and
    ONNX ops on their results and constants, which the runtime keeps on the
    host). Its size is taken with **every dynamic dimension at
    `max-tokens`**: the token dimension is the usual one, and any other
    dynamic dimension (the `[batch, seq]` of unflattened values) is bounded
    by it too, an over-estimate.

    Its live interval is def .. last use over the op order of the block (a
    use in a nested region counts at its ancestor op); values returned by
    the function are used by `func.return` and so live to the end. A
    value's bytes are never shared with a value whose interval overlaps
    (including the operands of the op that defines it: no in-place reuse).

    Views, which the runtime makes without a copy (`onnx.Reshape`,
    `Flatten`, `Squeeze`, `Unsqueeze`, `Identity`; `transformer.split_heads`,
    `merge_heads`, `flatten_tokens`, `unflatten_tokens`), get no buffer:
    they share their source's offset and bytes and extend its interval.
    A view of an argument or a weight is not planned.

    Offsets are greedy best-fit, largest buffer first (ties: earlier
    start): each goes in the smallest gap, between the buffers already
    placed whose intervals overlap its own, that holds its size rounded up
    to 256 bytes; else above them all. Every offset is a multiple of 256.

    Results: each op with a planned result gets `accel.arena`, one
    `array<i64: offset, bytes>` per result (`array<i64>` for a result not
    planned; bytes unaligned); the function gets `accel.arena_bytes` (the
    arena: max of offset + aligned bytes) and `accel.arena_naive_bytes`
    (one aligned buffer per non-view activation, summed).

    Before (`max-tokens=2048`; `tensor<?x64xf32>` is 524288 bytes):

    ```mlir
    func.func @f(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
      %w = onnx.Constant {value = dense<1.0> : tensor<64x64xf32>} : () -> tensor<64x64xf32>
      %0 = transformer.linear %x, %w : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
      %1 = transformer.activation %0 kind = silu : tensor<?x64xf32>
      %2 = transformer.linear %1, %w : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
      return %2 : tensor<?x64xf32>
    }
    ```

    After (%2 reuses %0's bytes: their intervals [1, 2] and [3, 4] are
    disjoint):

    ```mlir
    func.func @f(%x: tensor<?x64xf32>) -> tensor<?x64xf32>
        attributes {accel.arena_bytes = 1048576 : i64, accel.arena_naive_bytes = 1572864 : i64} {
      %w = onnx.Constant {value = dense<1.0> : tensor<64x64xf32>} : () -> tensor<64x64xf32>
      %0 = transformer.linear %x, %w {accel.arena = [array<i64: 0, 524288>]} : ...
      %1 = transformer.activation %0 kind = silu {accel.arena = [array<i64: 524288, 524288>]} : ...
      %2 = transformer.linear %1, %w {accel.arena = [array<i64: 0, 524288>]} : ...
      return %2 : tensor<?x64xf32>
    }
    ```

    Not done yet: padding leading dimensions by the target's rules, weight
    pre-layout for the kernels that read them, and the runtime allocating
    from the arena.
  }];
  let options = [
    Option<"maxTokens", "max-tokens", "int64_t", /*default=*/"2048",
           "the bound taken for every dynamic dimension (the tokens of one step)">
  ];
}

#endif // ACCEL_PASSES_LAYOUT
