// RUN: accel-opt %s -split-input-file -accel-raise-rotary 2>/dev/null | FileCheck %s
// RUN: accel-opt %s -split-input-file -accel-raise-rotary 2>&1 >/dev/null | FileCheck %s --check-prefix=DIAG
// RUN: accel-opt %s -split-input-file -accel-raise-rotary -accel-report-unraised 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT

// onnxruntime's com.microsoft RotaryEmbedding, cut from test/fixtures/models/llama_genai_rotemb
// (onnxruntime-genai's builder with RoPE kept out of GroupQueryAttention) after
// accel-raise-attention made the graph token-major: q as [1, tokens, heads * head_dim]
// (transformer.unflatten_tokens there), position_ids Reshape(positions, [1, -1]), the builder's
// [max_position, head_dim / 2] cos/sin tables (theta 1e4, here head_dim 4 and 8 positions),
// num_heads = 0 (the head size comes from the tables). It becomes transformer.rotary on
// [tokens, heads, head_dim] with the tables.
// CHECK-LABEL: func.func @builder_3d
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x8xf32>, %[[B:[^:]+]]: !transformer.batch)
// CHECK: %[[P:.+]] = transformer.positions %[[B]]
// CHECK: %[[COS:.+]] = onnx.Constant {{.+}} tensor<8x2xf32>
// CHECK: %[[SIN:.+]] = onnx.Constant {{.+}} tensor<8x2xf32>
// CHECK: %[[T:.+]] = onnx.Reshape %[[X]], %{{.+}} -> tensor<?x2x4xf32>
// CHECK: %[[R:.+]] = transformer.rotary %[[T]], %[[P]] cos_sin(%[[COS]], %[[SIN]]) style = half_split {rotary_dim = 4 : i64} : (tensor<?x2x4xf32>, tensor<?xi64>, tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<?x2x4xf32>
// CHECK: %[[Y:.+]] = onnx.Reshape %[[R]], %{{.+}} -> tensor<?x?x8xf32>
// CHECK: return %[[Y]]
// CHECK-NOT: onnx.ms_RotaryEmbedding
func.func @builder_3d(%x: tensor<?x?x8xf32>, %batch: !transformer.batch) -> tensor<?x?x8xf32> {
  %pos = transformer.positions %batch : tensor<?xi64>
  %shape = onnx.Constant {value = dense<[1, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %pid = onnx.Reshape %pos, %shape : (tensor<?xi64>, tensor<2xi64>) -> tensor<?x?xi64>
  %cos = onnx.Constant {value = dense<[[1.0, 1.0], [0.540302, 0.99995], [-0.416147, 0.9998], [-0.989992, 0.99955], [-0.653644, 0.9992], [0.283662, 0.99875], [0.96017, 0.998201], [0.753902, 0.997551]]> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %sin = onnx.Constant {value = dense<[[0.0, 0.0], [0.841471, 0.00999983], [0.909297, 0.0199987], [0.14112, 0.0299955], [-0.756802, 0.0399893], [-0.958924, 0.0499792], [-0.279415, 0.059964], [0.656987, 0.0699428]]> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %y = onnx.ms_RotaryEmbedding %x, %pid, %cos, %sin : (tensor<?x?x8xf32>, tensor<?x?xi64>, tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// Interleaved pairs and a partial rotary (rotary_embedding_dim 2 of head_dim 4, so num_heads
// is given): style and rotary_dim come from the attributes.
// CHECK-LABEL: func.func @interleaved_partial
// CHECK: transformer.rotary %{{.+}}, %{{.+}} cos_sin(%{{.+}}, %{{.+}}) style = interleaved {rotary_dim = 2 : i64} : (tensor<?x2x4xf32>, tensor<?xi64>, tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<?x2x4xf32>
// CHECK-NOT: onnx.ms_RotaryEmbedding
func.func @interleaved_partial(%x: tensor<?x?x8xf32>, %batch: !transformer.batch) -> tensor<?x?x8xf32> {
  %pos = transformer.positions %batch : tensor<?xi64>
  %shape = onnx.Constant {value = dense<[1, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %pid = onnx.Reshape %pos, %shape : (tensor<?xi64>, tensor<2xi64>) -> tensor<?x?xi64>
  %cos = onnx.Constant {value = dense<[[1.0], [0.540302], [-0.416147], [-0.989992], [-0.653644], [0.283662], [0.96017], [0.753902]]> : tensor<8x1xf32>} : () -> tensor<8x1xf32>
  %sin = onnx.Constant {value = dense<[[0.0], [0.841471], [0.909297], [0.14112], [-0.756802], [-0.958924], [-0.279415], [0.656987]]> : tensor<8x1xf32>} : () -> tensor<8x1xf32>
  %y = onnx.ms_RotaryEmbedding %x, %pid, %cos, %sin {interleaved = 1 : i64, num_heads = 2 : i64, rotary_embedding_dim = 2 : i64} : (tensor<?x?x8xf32>, tensor<?x?xi64>, tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// 4-D [1, heads, tokens, head_dim] input: transposed to token-major, rotated, transposed back.
// CHECK-LABEL: func.func @four_d
// CHECK: %[[T4:.+]] = onnx.Transpose %{{.+}} {perm = array<i64: 0, 2, 1, 3>}
// CHECK: %[[T:.+]] = onnx.Reshape %[[T4]], %{{.+}} -> tensor<?x2x4xf32>
// CHECK: %[[R:.+]] = transformer.rotary %[[T]], %{{.+}} cos_sin(%{{.+}}, %{{.+}}) style = half_split {rotary_dim = 4 : i64}
// CHECK: %[[B4:.+]] = onnx.Reshape %[[R]], %{{.+}} -> tensor<?x?x2x4xf32>
// CHECK: onnx.Transpose %[[B4]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK-NOT: onnx.ms_RotaryEmbedding
func.func @four_d(%x: tensor<1x2x?x4xf32>, %batch: !transformer.batch) -> tensor<1x2x?x4xf32> {
  %pos = transformer.positions %batch : tensor<?xi64>
  %shape = onnx.Constant {value = dense<[1, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %pid = onnx.Reshape %pos, %shape : (tensor<?xi64>, tensor<2xi64>) -> tensor<?x?xi64>
  %cos = onnx.Constant {value = dense<[[1.0, 1.0], [0.540302, 0.99995], [-0.416147, 0.9998], [-0.989992, 0.99955], [-0.653644, 0.9992], [0.283662, 0.99875], [0.96017, 0.998201], [0.753902, 0.997551]]> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %sin = onnx.Constant {value = dense<[[0.0, 0.0], [0.841471, 0.00999983], [0.909297, 0.0199987], [0.14112, 0.0299955], [-0.756802, 0.0399893], [-0.958924, 0.0499792], [-0.279415, 0.059964], [0.656987, 0.0699428]]> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %y = onnx.ms_RotaryEmbedding %x, %pid, %cos, %sin : (tensor<1x2x?x4xf32>, tensor<?x?xi64>, tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<1x2x?x4xf32>
  return %y : tensor<1x2x?x4xf32>
}

// -----

// Not raised: position_ids are positions + 1. They depend only on the positions, but the
// evaluation at chosen positions shows they are not the token positions.
// DIAG: warning: rotary embedding could not be raised: its position_ids are not the token positions
// REPORT: warning: 1 'onnx.ms_RotaryEmbedding' op(s) were not raised
// CHECK-LABEL: func.func @positions_plus_one
// CHECK-NOT: transformer.rotary
// CHECK: onnx.ms_RotaryEmbedding
func.func @positions_plus_one(%x: tensor<?x?x8xf32>, %batch: !transformer.batch) -> tensor<?x?x8xf32> {
  %pos = transformer.positions %batch : tensor<?xi64>
  %shape = onnx.Constant {value = dense<[1, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %pid = onnx.Reshape %pos, %shape : (tensor<?xi64>, tensor<2xi64>) -> tensor<?x?xi64>
  %one = onnx.Constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %pid1 = onnx.Add %pid, %one : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
  %cos = onnx.Constant {value = dense<[[1.0, 1.0], [0.540302, 0.99995], [-0.416147, 0.9998], [-0.989992, 0.99955], [-0.653644, 0.9992], [0.283662, 0.99875], [0.96017, 0.998201], [0.753902, 0.997551]]> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %sin = onnx.Constant {value = dense<[[0.0, 0.0], [0.841471, 0.00999983], [0.909297, 0.0199987], [0.14112, 0.0299955], [-0.756802, 0.0399893], [-0.958924, 0.0499792], [-0.279415, 0.059964], [0.656987, 0.0699428]]> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %y = onnx.ms_RotaryEmbedding %x, %pid1, %cos, %sin : (tensor<?x?x8xf32>, tensor<?x?xi64>, tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// Not raised: position_ids are a graph input, not computed from the token positions.
// DIAG: warning: rotary embedding could not be raised: its position_ids are not computed from the token positions
// REPORT: warning: 1 'onnx.ms_RotaryEmbedding' op(s) were not raised
// CHECK-LABEL: func.func @position_ids_input
// CHECK-NOT: transformer.rotary
// CHECK: onnx.ms_RotaryEmbedding
func.func @position_ids_input(%x: tensor<?x?x8xf32>, %batch: !transformer.batch, %ids: tensor<?x?xi64>) -> tensor<?x?x8xf32> {
  %pos = transformer.positions %batch : tensor<?xi64>
  %cos = onnx.Constant {value = dense<[[1.0, 1.0], [0.540302, 0.99995], [-0.416147, 0.9998], [-0.989992, 0.99955], [-0.653644, 0.9992], [0.283662, 0.99875], [0.96017, 0.998201], [0.753902, 0.997551]]> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %sin = onnx.Constant {value = dense<[[0.0, 0.0], [0.841471, 0.00999983], [0.909297, 0.0199987], [0.14112, 0.0299955], [-0.756802, 0.0399893], [-0.958924, 0.0499792], [-0.279415, 0.059964], [0.656987, 0.0699428]]> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %y = onnx.ms_RotaryEmbedding %x, %ids, %cos, %sin : (tensor<?x?x8xf32>, tensor<?x?xi64>, tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// Not raised: a one-element position_ids is onnxruntime's start offset (positions offset + s),
// which one sequence's positions in a ragged batch are not in general.
// DIAG: warning: rotary embedding could not be raised: its position_ids are {{.+}}, not the token positions [1, tokens]
// REPORT: warning: 1 'onnx.ms_RotaryEmbedding' op(s) were not raised
// CHECK-LABEL: func.func @offset
// CHECK-NOT: transformer.rotary
// CHECK: onnx.ms_RotaryEmbedding
func.func @offset(%x: tensor<?x?x8xf32>, %batch: !transformer.batch) -> tensor<?x?x8xf32> {
  %pos = transformer.positions %batch : tensor<?xi64>
  %zero = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %onev = onnx.Constant {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %first = onnx.Slice %pos, %zero, %onev : (tensor<?xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %cos = onnx.Constant {value = dense<[[1.0, 1.0], [0.540302, 0.99995], [-0.416147, 0.9998], [-0.989992, 0.99955], [-0.653644, 0.9992], [0.283662, 0.99875], [0.96017, 0.998201], [0.753902, 0.997551]]> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %sin = onnx.Constant {value = dense<[[0.0, 0.0], [0.841471, 0.00999983], [0.909297, 0.0199987], [0.14112, 0.0299955], [-0.756802, 0.0399893], [-0.958924, 0.0499792], [-0.279415, 0.059964], [0.656987, 0.0699428]]> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %y = onnx.ms_RotaryEmbedding %x, %first, %cos, %sin : (tensor<?x?x8xf32>, tensor<1xi64>, tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// Not raised: is_packed_batching (sequences packed without padding, positions per batch entry).
// DIAG: warning: rotary embedding could not be raised: is_packed_batching = 1
// REPORT: warning: 1 'onnx.ms_RotaryEmbedding' op(s) were not raised
// CHECK-LABEL: func.func @packed_batching
// CHECK-NOT: transformer.rotary
// CHECK: onnx.ms_RotaryEmbedding
func.func @packed_batching(%x: tensor<?x?x8xf32>, %batch: !transformer.batch) -> tensor<?x?x8xf32> {
  %pos = transformer.positions %batch : tensor<?xi64>
  %shape = onnx.Constant {value = dense<[1, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %pid = onnx.Reshape %pos, %shape : (tensor<?xi64>, tensor<2xi64>) -> tensor<?x?xi64>
  %cos = onnx.Constant {value = dense<[[1.0, 1.0], [0.540302, 0.99995], [-0.416147, 0.9998], [-0.989992, 0.99955], [-0.653644, 0.9992], [0.283662, 0.99875], [0.96017, 0.998201], [0.753902, 0.997551]]> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %sin = onnx.Constant {value = dense<[[0.0, 0.0], [0.841471, 0.00999983], [0.909297, 0.0199987], [0.14112, 0.0299955], [-0.756802, 0.0399893], [-0.958924, 0.0499792], [-0.279415, 0.059964], [0.656987, 0.0699428]]> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %y = onnx.ms_RotaryEmbedding %x, %pid, %cos, %sin {is_packed_batching = 1 : i64} : (tensor<?x?x8xf32>, tensor<?x?xi64>, tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// Not raised: scale other than 1 (the CPU kernel does not support it either).
// DIAG: warning: rotary embedding could not be raised: scale is not 1
// REPORT: warning: 1 'onnx.ms_RotaryEmbedding' op(s) were not raised
// CHECK-LABEL: func.func @scale
// CHECK-NOT: transformer.rotary
// CHECK: onnx.ms_RotaryEmbedding
func.func @scale(%x: tensor<?x?x8xf32>, %batch: !transformer.batch) -> tensor<?x?x8xf32> {
  %pos = transformer.positions %batch : tensor<?xi64>
  %shape = onnx.Constant {value = dense<[1, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %pid = onnx.Reshape %pos, %shape : (tensor<?xi64>, tensor<2xi64>) -> tensor<?x?xi64>
  %cos = onnx.Constant {value = dense<[[1.0, 1.0], [0.540302, 0.99995], [-0.416147, 0.9998], [-0.989992, 0.99955], [-0.653644, 0.9992], [0.283662, 0.99875], [0.96017, 0.998201], [0.753902, 0.997551]]> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %sin = onnx.Constant {value = dense<[[0.0, 0.0], [0.841471, 0.00999983], [0.909297, 0.0199987], [0.14112, 0.0299955], [-0.756802, 0.0399893], [-0.958924, 0.0499792], [-0.279415, 0.059964], [0.656987, 0.0699428]]> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %y = onnx.ms_RotaryEmbedding %x, %pid, %cos, %sin {scale = 2.000000e+00 : f32} : (tensor<?x?x8xf32>, tensor<?x?xi64>, tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}
