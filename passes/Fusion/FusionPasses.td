//===- FusionPasses.td - transformer-level fusion ---------*- tablegen -*-===//
//
// Fusion runs on the raised, token-major transformer dialect (after
// passes/Raise) and merges ops that read the same data or run back to back
// on one row: the residual add into the norm after it, the q/k/v and
// gate/up projections into one GEMM each (their weights concatenated into a
// new constant at compile time). Every rewrite is exact: each output
// element is computed by the same arithmetic as before.
//
// The pipeline is lib/Driver/Pipeline.cpp's buildFusionPipeline, run by
// `accelc -o model.plan` after raising; `accelc -emit=transformer` stops
// before it.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_PASSES_FUSION
#define ACCEL_PASSES_FUSION

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// accel-fuse-add-rms-norm
//===----------------------------------------------------------------------===//

def FuseAddRmsNorm : Pass<"accel-fuse-add-rms-norm", "mlir::func::FuncOp"> {
  let summary = "fuses a residual add and the rms_norm of its sum into transformer.add_rms_norm";
  let description = [{
    Matches `transformer.rms_norm` whose input is a `transformer.residual_add`
    (the pre-norm residual stream of Llama, Qwen2, Mistral, Phi3, Gemma) and
    replaces both by `transformer.add_rms_norm` at the add: its first result
    is the norm, its second the sum, which replaces every other use of the
    add (the next residual). A norm of anything else, a `layer_norm` of a
    sum, or a per-head `rms_norm` (q/k norms) is left alone.

    Before:

    ```mlir
    %h1 = transformer.residual_add %h, %attn : tensor<?x64xf32>
    %n = transformer.rms_norm %h1, %w {epsilon = 1.0e-05 : f64} : tensor<?x64xf32>, tensor<64xf32>
    %h2 = transformer.residual_add %h1, %mlp : tensor<?x64xf32>
    ```

    After:

    ```mlir
    %n, %h1 = transformer.add_rms_norm %attn, %h, %w {epsilon = 1.0e-05 : f64}
                : tensor<?x64xf32>, tensor<64xf32>
    %h2 = transformer.residual_add %h1, %mlp : tensor<?x64xf32>
    ```
  }];
  let dependentDialects = ["accel::transformer::TransformerDialect"];
}

//===----------------------------------------------------------------------===//
// accel-fuse-qkv
//===----------------------------------------------------------------------===//

def FuseQkv : Pass<"accel-fuse-qkv", "mlir::func::FuncOp"> {
  let summary = "fuses the linears that read one input (q, k, v) into one linear and a split";
  let description = [{
    Groups the `transformer.linear` ops of a block by their input; a group
    of two or more float linears with `onnx.Constant` weights (and, all or
    none, constant biases), of one weight and one result element type,
    becomes one linear over the weights concatenated along the output
    features (a new constant: a `dense_resource` blob when the weights are
    blobs, an inline `dense` when they are inline) and a `transformer.split`
    that gives each old result back. Linears with quantised weights, weights
    that are not constants, or a bias on some but not all are left alone.
    Old weights left without uses are erased.

    Before:

    ```mlir
    %q = transformer.linear %x, %wq : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
    %k = transformer.linear %x, %wk : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
    %v = transformer.linear %x, %wv : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
    ```

    After:

    ```mlir
    %wqkv = onnx.Constant {value = dense_resource<wq.qkv> : tensor<128x64xf32>} : () -> tensor<128x64xf32>
    %qkv = transformer.linear %x, %wqkv : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
    %q, %k, %v = transformer.split %qkv
                   : tensor<?x128xf32> -> tensor<?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>
    ```
  }];
  let dependentDialects = ["accel::transformer::TransformerDialect",
                           "accel::onnx::OnnxDialect"];
}

//===----------------------------------------------------------------------===//
// accel-fuse-gate-up
//===----------------------------------------------------------------------===//

def FuseGateUp : Pass<"accel-fuse-gate-up", "mlir::func::FuncOp"> {
  let summary = "stacks a gated MLP's gate and up weights into its gate_up form";
  let description = [{
    `transformer.gated_mlp gate(%g) up(%u)` with `onnx.Constant` weights
    becomes `gated_mlp gate_up(%gu)`, `%gu` the new constant `[g; u]`
    (`[2 * intermediate, hidden]`, gate rows first: Phi3's `gate_up_proj`
    layout, the one the gated_mlp kernels read), so that the two
    projections are one GEMM. Weights that are not constants are left alone.

    Before:

    ```mlir
    %y = transformer.gated_mlp %x gate(%wg) up(%wu) down(%wd) kind = silu
           : (tensor<?x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>)
             -> tensor<?x64xf32>
    ```

    After:

    ```mlir
    %wgu = onnx.Constant {value = dense_resource<wg.gate_up> : tensor<256x64xf32>} : () -> tensor<256x64xf32>
    %y = transformer.gated_mlp %x gate_up(%wgu) down(%wd) kind = silu
           : (tensor<?x64xf32>, tensor<256x64xf32>, tensor<64x128xf32>) -> tensor<?x64xf32>
    ```
  }];
  let dependentDialects = ["accel::transformer::TransformerDialect",
                           "accel::onnx::OnnxDialect"];
}

#endif // ACCEL_PASSES_FUSION
