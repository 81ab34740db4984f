// RUN: accel-opt %s -split-input-file -accel-lower-to-exec | FileCheck %s
//
// Onnx/ lowering: an ONNX operator raising left that is not a reshape
// becomes exec.onnx, with its ONNX attributes, its outputs in buffers sized
// by TokenShapes, and its absent optional inputs recorded.

// A Transpose of [1, T, 4, 4] (Gemma 3 and GPT-NeoX glue): the output is
// [1, 4, T, 4], one dynamic dimension, in its own buffer.
// CHECK-LABEL: exec.kv_pool @kv layers 1
// CHECK: %[[T:.+]] = exec.alloc sizes(%{{.+}}) : !exec.view<1x4x?x4xf32>
// CHECK-NEXT: exec.onnx "Transpose"(%{{.+}}) -> (%[[T]]) {attrs = {perm = array<i64: 0, 2, 1, 3>}} : (!exec.view<1x?x4x4xf32>) -> (!exec.view<1x4x?x4xf32>)
// A Cast to another type is an operator too; one to the same type is a view.
// CHECK: exec.onnx "Cast"(%{{.+}}) -> (%{{.+}}) {attrs = {saturate = 1 : i64, to = 10 : i64}} : (!exec.view<1x4x?x4xf32>) -> (!exec.view<1x4x?x4xf16>)
// CHECK-NOT: exec.onnx "Cast"
func.func @transpose(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x16xf32> {
  %table = onnx.Constant {value = dense<0.25> : tensor<16x16xf32>} : () -> tensor<16x16xf32>
  %x = transformer.embedding %table[%ids] : (tensor<16x16xf32>, tensor<?xi64>) -> tensor<?x16xf32>
  %shape = onnx.Constant {value = dense<[1, -1, 4, 4]> : tensor<4xi64>} : () -> tensor<4xi64>
  %r = onnx.Reshape %x, %shape : (tensor<?x16xf32>, tensor<4xi64>) -> tensor<?x?x4x4xf32>
  %t = onnx.Transpose %r {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x4xf32>) -> tensor<?x4x?x4xf32>
  %h = onnx.Cast %t {to = 10 : i64} : (tensor<?x4x?x4xf32>) -> tensor<?x4x?x4xf16>
  %same = onnx.Cast %t {to = 1 : i64} : (tensor<?x4x?x4xf32>) -> tensor<?x4x?x4xf32>
  return %x : tensor<?x16xf32>
}

// -----

// Shape arithmetic whose value a step reads is a constant weight when it is
// known (a Concat of static dims), and a Slice without its optional axes
// and steps records them as absent.
// CHECK-LABEL: exec.kv_pool @kv layers 2
// CHECK: %[[SHAPE:.+]] = exec.weight "{{.*}}" @weights[{{[0-9]+}}] {value = dense<[2, 8]> : tensor<2xi64>} : !exec.view<2xi64>
// CHECK: exec.onnx "Expand"(%{{.+}}, %[[SHAPE]]) -> (%{{.+}}) : (!exec.view<1x8xf32>, !exec.view<2xi64>) -> (!exec.view<2x8xf32>)
// CHECK: exec.onnx "Slice"(%{{.+}}, %{{.+}}, %{{.+}}) -> (%{{.+}}) {input_present = array<i1: true, true, true, false, false>} : (!exec.view<2x8xf32>, !exec.view<1xi64>, !exec.view<1xi64>) -> (!exec.view<1x8xf32>)
func.func @shape_values(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 2, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x8xf32> {
  %row = onnx.Constant {value = dense<1.0> : tensor<1x8xf32>} : () -> tensor<1x8xf32>
  %two = onnx.Constant {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %eight = onnx.Constant {value = dense<8> : tensor<1xi64>} : () -> tensor<1xi64>
  %shape = onnx.Concat %two, %eight {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %e = onnx.Expand %row, %shape : (tensor<1x8xf32>, tensor<2xi64>) -> tensor<2x8xf32>
  %zero = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %one = onnx.Constant {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %s = onnx.Slice %e, %zero, %one : (tensor<2x8xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x8xf32>
  %table = onnx.Constant {value = dense<0.25> : tensor<16x8xf32>} : () -> tensor<16x8xf32>
  %x = transformer.embedding %table[%ids] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  return %x : tensor<?x8xf32>
}
