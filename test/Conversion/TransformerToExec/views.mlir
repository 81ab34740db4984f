// RUN: accel-opt %s -split-input-file -accel-lower-to-exec | FileCheck %s
//
// Views/ lowering and the shapes behind it (TokenShapes): reshapes are
// exec.view, with every `?` that is always 1 made static; the shape
// arithmetic that computed a Reshape's target lowers to nothing; a buffer
// of k x T rows is allocated [k, ?] and viewed; splits copy.

// The glue raising leaves around attention (llama_op18): Shape, Concat and
// Reshape of [1, T, 4, 16] with the `?` batch static.
// CHECK-LABEL: exec.kv_pool @kv layers 1
// CHECK-NOT: onnx.
// CHECK-NOT: exec.onnx
// CHECK: %[[X:.+]] = exec.alloc sizes(%{{.+}}) : !exec.view<?x16xf32>
// CHECK: %[[B:.+]] = exec.view %[[X]] : !exec.view<?x16xf32> -> !exec.view<1x?x16xf32>
// CHECK-NEXT: %[[R:.+]] = exec.view %[[B]] : !exec.view<1x?x16xf32> -> !exec.view<1x?x4x4xf32>
// CHECK-NEXT: %[[R2:.+]] = exec.view %[[R]] : !exec.view<1x?x4x4xf32> -> !exec.view<1x?x16xf32>
// CHECK-NEXT: %[[F:.+]] = exec.view %[[R2]] : !exec.view<1x?x16xf32> -> !exec.view<?x16xf32>
// CHECK-NOT: exec.onnx
// CHECK: exec.step_output logits %[[F]]
func.func @reshape_glue(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x16xf32> {
  %shape = onnx.Constant {value = dense<[1, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %bi = onnx.Reshape %ids, %shape : (tensor<?xi64>, tensor<2xi64>) -> tensor<?x?xi64>
  %table = onnx.Constant {value = dense<0.25> : tensor<16x16xf32>} : () -> tensor<16x16xf32>
  %x = transformer.embedding %table[%ids] : (tensor<16x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
  %u = transformer.unflatten_tokens %x like %bi : tensor<?x16xf32>, tensor<?x?xi64> -> tensor<?x?x16xf32>
  %s0 = onnx.Shape %bi {end = 1 : i64} : (tensor<?x?xi64>) -> tensor<1xi64>
  %s1 = onnx.Shape %bi {end = 2 : i64, start = 1 : i64} : (tensor<?x?xi64>) -> tensor<1xi64>
  %four = onnx.Constant {value = dense<4> : tensor<1xi64>} : () -> tensor<1xi64>
  %target = onnx.Concat %s0, %s1, %four, %four {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %r = onnx.Reshape %u, %target : (tensor<?x?x16xf32>, tensor<4xi64>) -> tensor<?x?x4x4xf32>
  %sixteen = onnx.Constant {value = dense<16> : tensor<1xi64>} : () -> tensor<1xi64>
  %target2 = onnx.Concat %s0, %s1, %sixteen {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %r2 = onnx.Reshape %r, %target2 : (tensor<?x?x4x4xf32>, tensor<3xi64>) -> tensor<?x?x16xf32>
  %f = transformer.flatten_tokens %r2 : tensor<?x?x16xf32> -> tensor<?x16xf32>
  return %f : tensor<?x16xf32>
}

// -----

// Per-head norms (Gemma 3's q_norm): [T, 4, 4] flattened to [4T, 4] rows;
// the norm's result of 4T rows is a [4, T, 4] buffer viewed as [?, 4].
// CHECK-LABEL: exec.kv_pool @kv layers 2
// CHECK: %[[H:.+]] = exec.view %{{.+}} : !exec.view<?x16xf32> -> !exec.view<?x4x4xf32>
// CHECK-NEXT: %[[ROWS:.+]] = exec.view %[[H]] : !exec.view<?x4x4xf32> -> !exec.view<?x4xf32>
// CHECK: %[[BUF:.+]] = exec.alloc sizes(%{{.+}}) : !exec.view<4x?x4xf32>
// CHECK-NEXT: %[[OUT:.+]] = exec.view %[[BUF]] : !exec.view<4x?x4xf32> -> !exec.view<?x4xf32>
// CHECK-NEXT: exec.rms_norm %[[ROWS]], %{{.+}} -> %[[OUT]]
func.func @rows_of_heads(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 2, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x16xf32> {
  %table = onnx.Constant {value = dense<0.25> : tensor<16x16xf32>} : () -> tensor<16x16xf32>
  %x = transformer.embedding %table[%ids] : (tensor<16x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
  %h = transformer.split_heads %x : tensor<?x16xf32> -> tensor<?x4x4xf32>
  %rows = transformer.flatten_tokens %h : tensor<?x4x4xf32> -> tensor<?x4xf32>
  %w = onnx.Constant {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %n = transformer.rms_norm %rows, %w {epsilon = 1.0e-06 : f64} : tensor<?x4xf32>, tensor<4xf32>
  %back = transformer.unflatten_tokens %n like %h : tensor<?x4xf32>, tensor<?x4x4xf32> -> tensor<?x4x4xf32>
  %m = transformer.merge_heads %back : tensor<?x4x4xf32> -> tensor<?x16xf32>
  return %m : tensor<?x16xf32>
}

// -----

// transformer.split and an ONNX Split of the last axis copy into one
// buffer per part (GPT-2's c_attn).
// CHECK-LABEL: exec.kv_pool @kv layers 3
// CHECK: exec.split %[[X:.+]] -> %{{.+}}, %{{.+}} : !exec.view<?x16xf32> -> !exec.view<?x8xf32>, !exec.view<?x8xf32>
// CHECK: exec.split %{{.+}} -> %{{.+}}, %{{.+}} : !exec.view<1x?x16xf32> -> !exec.view<1x?x12xf32>, !exec.view<1x?x4xf32>
func.func @splits(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 3, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x8xf32> {
  %table = onnx.Constant {value = dense<0.25> : tensor<16x16xf32>} : () -> tensor<16x16xf32>
  %x = transformer.embedding %table[%ids] : (tensor<16x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
  %a:2 = transformer.split %x : tensor<?x16xf32> -> tensor<?x8xf32>, tensor<?x8xf32>
  %shape = onnx.Constant {value = dense<[1, -1, 16]> : tensor<3xi64>} : () -> tensor<3xi64>
  %bx = onnx.Reshape %x, %shape : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x?x16xf32>
  %sizes = onnx.Constant {value = dense<[12, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %p0, %p1 = onnx.Split %bx split(%sizes) {axis = 2 : i64} : (tensor<?x?x16xf32>, tensor<2xi64>) -> (tensor<?x?x12xf32>, tensor<?x?x4xf32>)
  %y = transformer.residual_add %a#0, %a#1 : tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
