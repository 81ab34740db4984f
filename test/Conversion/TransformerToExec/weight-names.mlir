// RUN: accel-opt %s -accel-lower-to-exec | FileCheck %s
//
// A weight is named for its constant's location (accel::exec::locationName):
// a NameLoc's name, the first name inside a FusedLoc, "constant" for a file
// location; names already taken get a suffix.

// CHECK-LABEL: exec.schedule @main mixed
// CHECK: exec.weight "embed_table" @weights
// CHECK: exec.weight "norm.weight" @weights
// CHECK: exec.weight "constant" @weights
// CHECK: exec.weight "norm.weight.1" @weights
func.func @names(%ids: tensor<?xi64>, %b: !transformer.batch,
    %kv: !transformer.kv_cache<layers = 1, kv_heads = 1, head_dim = 8, block_size = 16, f32>)
    -> tensor<?x8xf32> {
  %table = onnx.Constant {value = dense<0.25> : tensor<16x8xf32>} : () -> tensor<16x8xf32> loc("embed_table")
  %x = transformer.embedding %table[%ids] : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %w = onnx.Constant {value = dense<1.5> : tensor<8xf32>} : () -> tensor<8xf32> loc(fused["file.onnx":1:1, "norm.weight", "other"])
  %y = transformer.rms_norm %x, %w {epsilon = 1.0e-05 : f64, weight_offset = 1.0 : f64} : tensor<?x8xf32>, tensor<8xf32>
  %w2 = onnx.Constant {value = dense<2.5> : tensor<8xf32>} : () -> tensor<8xf32> loc("file.onnx":2:1)
  %z = transformer.rms_norm %y, %w2 {epsilon = 1.0e-05 : f64, weight_offset = 1.0 : f64} : tensor<?x8xf32>, tensor<8xf32>
  %w3 = onnx.Constant {value = dense<3.5> : tensor<8xf32>} : () -> tensor<8xf32> loc("norm.weight")
  %u = transformer.rms_norm %z, %w3 {epsilon = 1.0e-05 : f64, weight_offset = 1.0 : f64} : tensor<?x8xf32>, tensor<8xf32>
  return %u : tensor<?x8xf32>
}
