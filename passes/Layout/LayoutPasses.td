//===- LayoutPasses.td - memory layout --------------------*- tablegen -*-===//
//
// Layout rules of the target on the fused token-major transformer dialect
// (GEMM dimension padding). Where activations live in memory is decided at
// the exec level (passes/Exec, accel-exec-assign-buffers).
// docs/passes/layout.md has the rules.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_PASSES_LAYOUT
#define ACCEL_PASSES_LAYOUT

include "mlir/Pass/PassBase.td"

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
