// RUN: accel-opt %s -split-input-file -accel-partition=tp-size=2 | FileCheck %s
//
// The reshape glue exporters leave around attention (as raising keeps it)
// is rewritten into transformer.split / split_heads / merge_heads before the
// heads are split; the ONNX glue dies. Hidden 2, head_dim 2.

// Llama (torch dynamo): unflatten_tokens, Reshape to [-1, heads, head_dim];
// back through Reshape [1, -1, heads, head_dim], Reshape [1, -1, 8] and
// flatten_tokens.
// CHECK-LABEL: func.func @reshape_glue
// CHECK-NOT: onnx.Reshape
// CHECK: %[[S:.+]]:3 = transformer.split %{{.+}} : tensor<?x8xf32> -> tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x2xf32>
// CHECK: %[[O:.+]] = transformer.attention {{.*}}num_heads = 2 : i64, num_kv_heads = 1 : i64
// CHECK: %[[M:.+]] = transformer.merge_heads %[[O]] : tensor<?x2x2xf32> -> tensor<?x4xf32>
// CHECK: transformer.linear %[[M]], %{{.+}} : (tensor<?x4xf32>, tensor<2x4xf32>) -> tensor<?x2xf32>
// CHECK-NOT: onnx.Reshape
// CHECK: return
func.func @reshape_glue(%ids: tensor<?x?xi64>, %x: tensor<?x2xf32>, %batch: !transformer.batch, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> tensor<?x2xf32> {
  %w = onnx.Constant {value = dense<1.0> : tensor<16x2xf32>} : () -> tensor<16x2xf32>
  %wo = onnx.Constant {value = dense<1.0> : tensor<2x8xf32>} : () -> tensor<2x8xf32>
  %sq = onnx.Constant {value = dense<[-1, 4, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %skv = onnx.Constant {value = dense<[-1, 2, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %s4 = onnx.Constant {value = dense<[1, -1, 4, 2]> : tensor<4xi64>} : () -> tensor<4xi64>
  %s3 = onnx.Constant {value = dense<[1, -1, 8]> : tensor<3xi64>} : () -> tensor<3xi64>
  %qkv = transformer.linear %x, %w : (tensor<?x2xf32>, tensor<16x2xf32>) -> tensor<?x16xf32>
  %q, %k, %v = transformer.split %qkv : tensor<?x16xf32> -> tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>
  %qb = transformer.unflatten_tokens %q like %ids : tensor<?x8xf32>, tensor<?x?xi64> -> tensor<?x?x8xf32>
  %kb = transformer.unflatten_tokens %k like %ids : tensor<?x4xf32>, tensor<?x?xi64> -> tensor<?x?x4xf32>
  %vb = transformer.unflatten_tokens %v like %ids : tensor<?x4xf32>, tensor<?x?xi64> -> tensor<?x?x4xf32>
  %q3 = onnx.Reshape %qb, %sq : (tensor<?x?x8xf32>, tensor<3xi64>) -> tensor<?x4x2xf32>
  %k3 = onnx.Reshape %kb, %skv : (tensor<?x?x4xf32>, tensor<3xi64>) -> tensor<?x2x2xf32>
  %v3 = onnx.Reshape %vb, %skv : (tensor<?x?x4xf32>, tensor<3xi64>) -> tensor<?x2x2xf32>
  %o = transformer.attention %q3, %k3, %v3, %cache[0], %batch {causal, head_dim = 2 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.5 : f64} : tensor<?x4x2xf32>, tensor<?x2x2xf32>, !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>
  %o4 = onnx.Reshape %o, %s4 : (tensor<?x4x2xf32>, tensor<4xi64>) -> tensor<?x?x4x2xf32>
  %ob = onnx.Reshape %o4, %s3 : (tensor<?x?x4x2xf32>, tensor<3xi64>) -> tensor<?x?x8xf32>
  %of = transformer.flatten_tokens %ob : tensor<?x?x8xf32> -> tensor<?x8xf32>
  %y = transformer.linear %of, %wo : (tensor<?x8xf32>, tensor<2x8xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// GPT-2: one c_attn linear, onnx.Split of its batch-major result along the
// features into q, k, v (2 heads each).
// CHECK-LABEL: func.func @onnx_split_glue
// CHECK-NOT: onnx.Split
// CHECK: %[[QKV:.+]] = transformer.linear {{.*}} -> tensor<?x6xf32>
// CHECK: transformer.split %[[QKV]] : tensor<?x6xf32> -> tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>
// CHECK: transformer.attention {{.*}}num_heads = 1 : i64, num_kv_heads = 1 : i64
// CHECK: transformer.all_reduce
func.func @onnx_split_glue(%ids: tensor<?x?xi64>, %x: tensor<?x2xf32>, %batch: !transformer.batch, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> tensor<?x2xf32> {
  %w = onnx.Constant {value = dense<1.0> : tensor<12x2xf32>} : () -> tensor<12x2xf32>
  %wo = onnx.Constant {value = dense<1.0> : tensor<2x4xf32>} : () -> tensor<2x4xf32>
  %sh = onnx.Constant {value = dense<[-1, 2, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %s2 = onnx.Constant {value = dense<[-1, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %qkv = transformer.linear %x, %w : (tensor<?x2xf32>, tensor<12x2xf32>) -> tensor<?x12xf32>
  %b = transformer.unflatten_tokens %qkv like %ids : tensor<?x12xf32>, tensor<?x?xi64> -> tensor<?x?x12xf32>
  %q, %k, %v = onnx.Split %b {axis = 2 : i64, num_outputs = 3 : i64} : (tensor<?x?x12xf32>) -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>)
  %q3 = onnx.Reshape %q, %sh : (tensor<?x?x4xf32>, tensor<3xi64>) -> tensor<?x2x2xf32>
  %k3 = onnx.Reshape %k, %sh : (tensor<?x?x4xf32>, tensor<3xi64>) -> tensor<?x2x2xf32>
  %v3 = onnx.Reshape %v, %sh : (tensor<?x?x4xf32>, tensor<3xi64>) -> tensor<?x2x2xf32>
  %o = transformer.attention %q3, %k3, %v3, %cache[0], %batch {causal, head_dim = 2 : i64, num_heads = 2 : i64, num_kv_heads = 2 : i64, scale = 0.5 : f64} : tensor<?x2x2xf32>, tensor<?x2x2xf32>, !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>
  %of = onnx.Reshape %o, %s2 : (tensor<?x2x2xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  %y = transformer.linear %of, %wo : (tensor<?x4xf32>, tensor<2x4xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// Phi3: one qkv_proj, onnx.Slice of the columns [0, 8), [8, 12), [12, 16).
// CHECK-LABEL: func.func @onnx_slice_glue
// CHECK-NOT: onnx.Slice
// CHECK: transformer.split %{{.+}} : tensor<?x8xf32> -> tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x2xf32>
// CHECK: transformer.attention {{.*}}num_heads = 2 : i64, num_kv_heads = 1 : i64
func.func @onnx_slice_glue(%ids: tensor<?x?xi64>, %x: tensor<?x2xf32>, %batch: !transformer.batch, %cache: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>) -> tensor<?x2xf32> {
  %w = onnx.Constant {value = dense<1.0> : tensor<16x2xf32>} : () -> tensor<16x2xf32>
  %wo = onnx.Constant {value = dense<1.0> : tensor<2x8xf32>} : () -> tensor<2x8xf32>
  %c0 = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %c8 = onnx.Constant {value = dense<8> : tensor<1xi64>} : () -> tensor<1xi64>
  %c12 = onnx.Constant {value = dense<12> : tensor<1xi64>} : () -> tensor<1xi64>
  %c16 = onnx.Constant {value = dense<16> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax = onnx.Constant {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %one = onnx.Constant {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %sq = onnx.Constant {value = dense<[-1, 4, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %skv = onnx.Constant {value = dense<[-1, 2, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %s2 = onnx.Constant {value = dense<[-1, 8]> : tensor<2xi64>} : () -> tensor<2xi64>
  %qkv = transformer.linear %x, %w : (tensor<?x2xf32>, tensor<16x2xf32>) -> tensor<?x16xf32>
  %b = transformer.unflatten_tokens %qkv like %ids : tensor<?x16xf32>, tensor<?x?xi64> -> tensor<?x?x16xf32>
  %q = onnx.Slice %b, %c0, %c8 axes(%ax) steps(%one) : (tensor<?x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x8xf32>
  %k = onnx.Slice %b, %c8, %c12 axes(%ax) steps(%one) : (tensor<?x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x4xf32>
  %v = onnx.Slice %b, %c12, %c16 axes(%ax) steps(%one) : (tensor<?x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x4xf32>
  %q3 = onnx.Reshape %q, %sq : (tensor<?x?x8xf32>, tensor<3xi64>) -> tensor<?x4x2xf32>
  %k3 = onnx.Reshape %k, %skv : (tensor<?x?x4xf32>, tensor<3xi64>) -> tensor<?x2x2xf32>
  %v3 = onnx.Reshape %v, %skv : (tensor<?x?x4xf32>, tensor<3xi64>) -> tensor<?x2x2xf32>
  %o = transformer.attention %q3, %k3, %v3, %cache[0], %batch {causal, head_dim = 2 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 0.5 : f64} : tensor<?x4x2xf32>, tensor<?x2x2xf32>, !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 2, block_size = 16, f32>
  %of = onnx.Reshape %o, %s2 : (tensor<?x4x2xf32>, tensor<2xi64>) -> tensor<?x8xf32>
  %y = transformer.linear %of, %wo : (tensor<?x8xf32>, tensor<2x8xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}
