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

    Not done yet: the runtime allocating from the arena.
  }];
  let options = [
    Option<"maxTokens", "max-tokens", "int64_t", /*default=*/"2048",
           "the bound taken for every dynamic dimension (the tokens of one step)">
  ];
}

//===----------------------------------------------------------------------===//
// accel-pad-gemm-dims
//===----------------------------------------------------------------------===//

def PadGemmDims : Pass<"accel-pad-gemm-dims", "mlir::func::FuncOp"> {
  let summary = "pads an MLP's intermediate size to the target's GEMM multiple with zero weights";
  let description = [{
    The intermediate size I of a feed-forward block is both the N (output
    rows) of its first GEMM and the K (leading dimension) of its second.
    GPU kernels want K a multiple of 16 bytes and whole tiles
    (`TargetDesc::gemmDimMultiple`, 64 elements on sm_80/sm_90: Gemv.cu's
    batch-1 kernels need K a multiple of 8 bf16, or 16 8-bit elements, and
    cuBLASLt's tensor-core kernels take K in tiles of 64). When I is not a
    multiple of `multiple`, this pass rounds it up to I' and pads the
    weights with zeros, so that every GEMM of the block sees aligned sizes:

    | op | padded |
    |---|---|
    | `transformer.gated_mlp` with `gate_up` `[2I, H]` | I' - I zero rows after the gate rows and after the up rows: `[2I', H]` |
    | `transformer.gated_mlp` with `gate`, `up` `[I, H]` | zero rows: `[I', H]` each |
    | its `down` `[H, I]` | zero columns: `[H, I']` |
    | `transformer.linear` A (float, `[I, H]`, optional bias and activation) whose only use is the `x` of `transformer.linear` B (float, `[H2, I]`): GPT-2's c_fc → c_proj | A's rows and bias, B's columns; A's result type `[?, I']` |

    Nothing changes numerically: a padded column of the intermediate is
    act(0) * 0 = 0 (gated) or act(0 + 0) (GPT-2), and meets only B's zero
    weights, so every output is the same sum plus zero products (equal to
    the unpadded plan's within f32 summation order).

    Only float-weight blocks are padded: it runs after the precision passes,
    and quantised MLPs (int8-weight, fp8, w8a8: linears, `gated_act` and
    quantise ops) are left as they are, as is any block whose weights are not
    constants. With `-tp=N`, accelc passes `multiple` times N, so that every
    rank's share is a multiple too. `multiple` 0 or 1 changes nothing.

    ```mlir
    // accel-opt -pass-pipeline='builtin.module(func.func(accel-pad-gemm-dims{multiple=64}))'
    %m = transformer.gated_mlp %x gate_up(%gu) down(%d) kind = silu
           : (tensor<?x64xf32>, tensor<200x64xf32>, tensor<64x100xf32>) -> tensor<?x64xf32>
    // becomes
    %m = transformer.gated_mlp %x gate_up(%gu_pad) down(%d_pad) kind = silu
           : (tensor<?x64xf32>, tensor<256x64xf32>, tensor<64x128xf32>) -> tensor<?x64xf32>
    ```
  }];
  let options = [
    Option<"multiple", "multiple", "int64_t", /*default=*/"0",
           "the multiple the intermediate size is rounded up to (0: none)">
  ];
}

#endif // ACCEL_PASSES_LAYOUT
