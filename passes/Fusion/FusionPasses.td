//===- FusionPasses.td - transformer-level fusion ---------*- tablegen -*-===//
//
// Fusion runs on the raised, token-major transformer dialect (after
// passes/Raise) and merges ops that read the same data or run back to back
// on one row: the residual add into the norm after it, the q/k/v and
// gate/up projections into one GEMM each (their weights concatenated into a
// new constant at compile time), an activation into the linear before it
// (its epilogue). Every rewrite is exact: each output element is computed
// by the same arithmetic as before.
//
// The pipeline is lib/Driver/Pipeline.cpp's buildFusionPipeline, run by
// `accelc -o model.plan` after raising; `accelc -emit=transformer` stops
// before it. accel-fuse-qkv-rotary runs later, after partitioning
// (buildLateFusionPipeline).
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
    that are not constants, or a bias on some but not all are left alone;
    only linears of one `activation` epilogue (or none) are fused together,
    and the fused linear keeps it. A linear whose result reaches
    `transformer.attention`'s q, k or v is not fused with one whose result
    does not (Falcon's parallel block reads one norm with query_key_value and
    dense_h_to_4h: fused, the MLP would be a part of the QKV split that
    accel-partition and accel-fuse-qkv-rotary could not place).
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

//===----------------------------------------------------------------------===//
// accel-fuse-linear-activation
//===----------------------------------------------------------------------===//

def FuseLinearActivation : Pass<"accel-fuse-linear-activation", "mlir::func::FuncOp"> {
  let summary = "folds a transformer.activation into the linear before it (a GEMM epilogue)";
  let description = [{
    Matches `transformer.activation` whose input is a `transformer.linear`
    with no `activation` yet, no `input_scale` (W8A8) and no other use (the
    result types are then equal), and gives the linear `activation = kind`:
    the activation of the GEMM's result, bias added, in the result element
    type, exactly what the separate op computed. GPT-2's `c_fc` + `gelu_tanh`
    is the case in the fixtures. An activation of anything else, of a
    linear whose result is also read elsewhere, or of a linear that has an
    epilogue already is left alone.

    The pipeline runs it after accel-fuse-gate-up and accel-fuse-qkv;
    accel-partition keeps the epilogue on a column-parallel linear and moves
    it past the all_reduce of a row-parallel one.

    Before:

    ```mlir
    %h = transformer.linear %x, %w bias(%b)
           : (tensor<?x64xf32>, tensor<256x64xf32>, tensor<256xf32>) -> tensor<?x256xf32>
    %a = transformer.activation %h kind = gelu_tanh : tensor<?x256xf32>
    ```

    After:

    ```mlir
    %a = transformer.linear %x, %w bias(%b) activation = gelu_tanh
           : (tensor<?x64xf32>, tensor<256x64xf32>, tensor<256xf32>) -> tensor<?x256xf32>
    ```
  }];
  let dependentDialects = ["accel::transformer::TransformerDialect"];
}

//===----------------------------------------------------------------------===//
// accel-fuse-qkv-rotary
//===----------------------------------------------------------------------===//

def FuseQkvRotary : Pass<"accel-fuse-qkv-rotary", "mlir::func::FuncOp"> {
  let summary = "fuses the split, head views and q/k rotaries before an attention into transformer.qkv_rotary";
  let description = [{
    Matches a `transformer.attention` whose q and k are `transformer.rotary`
    results of one rotation (the same positions, style, rotary_dim, theta,
    scaling and cos/sin tables), used only by the attention, and whose
    rotary inputs and v are per-head views of the columns q | k | v (in this
    order, `H * D`, `Hkv * D`, `Hkv * D` wide) of one 2-D value: results of
    one `transformer.split`, or last-axis `onnx.Slice`s of its
    `transformer.unflatten_tokens` (Phi3's `qkv_proj`). The views looked
    through are `transformer.split_heads`, and `onnx.Reshape` to a constant
    `[-1, H, D]` of a 2-D part or of its `unflatten_tokens`. Every op on the
    way must be used only by the chain. The whole of it becomes one
    `transformer.qkv_rotary` of the 2-D value, at the attention; anything
    else (different rotations, another user of a rotary or a view, columns
    in another order) is left alone.

    The pipeline runs it after partitioning and pipeline stages
    (lib/Driver/Pipeline.cpp's `buildLateFusionPipeline`), just before the
    plan is written, where it lets the plan writer emit one step for the
    split, both rotaries and the KV-cache write.

    Before:

    ```mlir
    %s:3 = transformer.split %qkv : tensor<?x128xf32> -> tensor<?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>
    %q0 = transformer.split_heads %s#0 : tensor<?x64xf32> -> tensor<?x4x16xf32>
    %k0 = transformer.split_heads %s#1 : tensor<?x32xf32> -> tensor<?x2x16xf32>
    %v = transformer.split_heads %s#2 : tensor<?x32xf32> -> tensor<?x2x16xf32>
    %q = transformer.rotary %q0, %pos style = half_split {rotary_dim = 16 : i64, theta = 1.0e+04 : f64}
           : (tensor<?x4x16xf32>, tensor<?xi64>) -> tensor<?x4x16xf32>
    %k = transformer.rotary %k0, %pos style = half_split {rotary_dim = 16 : i64, theta = 1.0e+04 : f64}
           : (tensor<?x2x16xf32>, tensor<?xi64>) -> tensor<?x2x16xf32>
    %o = transformer.attention %q, %k, %v, %cache[0], %batch
           {causal, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.25 : f64}
           : tensor<?x4x16xf32>, tensor<?x2x16xf32>, !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 16, block_size = 16, f32>
    ```

    After:

    ```mlir
    %q, %k, %v = transformer.qkv_rotary %qkv, %pos style = half_split
                   {head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64,
                    rotary_dim = 16 : i64, theta = 1.0e+04 : f64}
                   : (tensor<?x128xf32>, tensor<?xi64>)
                     -> (tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>)
    %o = transformer.attention %q, %k, %v, %cache[0], %batch
           {causal, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.25 : f64}
           : tensor<?x4x16xf32>, tensor<?x2x16xf32>, !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 16, block_size = 16, f32>
    ```
  }];
  let dependentDialects = ["accel::transformer::TransformerDialect"];
}

#endif // ACCEL_PASSES_FUSION
