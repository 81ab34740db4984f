// RUN: accel-opt %s -split-input-file -accel-raise-attention 2>/dev/null | FileCheck %s
// RUN: accel-opt %s -split-input-file -accel-raise-attention 2>&1 >/dev/null | FileCheck %s --check-prefix=DIAG

// One layer as onnxruntime-genai's builder writes it (cut from llama_genai, weights replaced by
// splats): seqlens_k = ReduceSum(attention_mask) - 1 and total_sequence_length = its width, a
// packed qkv into com.microsoft GroupQueryAttention with do_rotary over [max_pos, 8] tables, and
// past/present KV as graph inputs/outputs. It becomes split -> rotary(q), rotary(k) over the
// tables -> transformer.attention on layer 0 of the paged cache; the mask arithmetic and the
// past/present tensors go.
// CHECK-LABEL: func.func @main_graph
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?xi64>, %[[BATCH:[^:]+]]: !transformer.batch, %[[CACHE:[^:]+]]: !transformer.kv_cache<layers = 1, kv_heads = 2, head_dim = 16, block_size = 16, f32>)
// CHECK-SAME: -> (tensor<?x64xf32> {onnx.name = "logits"})
// CHECK: %[[POS:.+]] = transformer.positions %[[BATCH]]
// CHECK: %[[Q:.+]]:3 = transformer.split %{{.+}} : tensor<?x128xf32> -> tensor<?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>
// CHECK: %[[RQ:.+]] = transformer.rotary %{{.+}}, %[[POS]] cos_sin(%{{.+}}, %{{.+}}) style = half_split {rotary_dim = 16 : i64} : (tensor<?x4x16xf32>
// CHECK: %[[RK:.+]] = transformer.rotary %{{.+}}, %[[POS]] cos_sin(%{{.+}}, %{{.+}}) style = half_split {rotary_dim = 16 : i64} : (tensor<?x2x16xf32>
// CHECK: transformer.attention %[[RQ]], %[[RK]], %{{.+}}, %[[CACHE]][0], %[[BATCH]] {causal, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f64}
// CHECK-NOT: onnx.ms_GroupQueryAttention
// CHECK-NOT: onnx.ReduceSum
// CHECK: return
func.func @main_graph(%ids: tensor<?x?xi64> {onnx.name = "input_ids"}, %mask: tensor<?x?xi64> {onnx.name = "attention_mask"}, %pk: tensor<?x2x?x?xf32> {onnx.name = "past_key_values.0.key"}, %pv: tensor<?x2x?x?xf32> {onnx.name = "past_key_values.0.value"}) -> (tensor<?x?x64xf32> {onnx.name = "logits"}, tensor<?x2x?x?xf32> {onnx.name = "present.0.key"}, tensor<?x2x?x?xf32> {onnx.name = "present.0.value"}) {
  %table = onnx.Constant {value = dense<0.5> : tensor<16x128xf32>} : () -> tensor<16x128xf32>
  %cos = onnx.Constant {value = dense<0.8> : tensor<32x8xf32>} : () -> tensor<32x8xf32>
  %sin = onnx.Constant {value = dense<0.6> : tensor<32x8xf32>} : () -> tensor<32x8xf32>
  %one = onnx.Constant {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %sum = onnx.ReduceSum %mask axes(%one) {keepdims = 0 : i64} : (tensor<?x?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %last = onnx.Sub %sum, %one : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %seqlens = onnx.Cast %last {to = 6 : i64} : (tensor<?xi64>) -> tensor<?xi32>
  %shape = onnx.Shape %mask : (tensor<?x?xi64>) -> tensor<2xi64>
  %i1 = onnx.Constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %width = onnx.Gather %shape, %i1 : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %total = onnx.Cast %width {to = 6 : i64} : (tensor<i64>) -> tensor<*xi32>
  %qkv = onnx.Gather %table, %ids : (tensor<16x128xf32>, tensor<?x?xi64>) -> tensor<?x?x128xf32>
  %o, %k, %v = onnx.ms_GroupQueryAttention %qkv past_key(%pk) past_value(%pv) seqlens_k(%seqlens) total_sequence_length(%total) cos_cache(%cos) sin_cache(%sin) {do_rotary = 1 : i64, kv_num_heads = 2 : i64, num_heads = 4 : i64, scale = 2.500000e-01 : f32} : (tensor<?x?x128xf32>, tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>, tensor<?xi32>, tensor<*xi32>, tensor<32x8xf32>, tensor<32x8xf32>) -> (tensor<?x?x64xf32>, tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>)
  return %o, %k, %v : tensor<?x?x64xf32>, tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>
}

// -----

// Separate q/k/v, no rotary, a local window of 8 keys (onnxruntime: keys (p - 8, p]) and a
// softcap: sliding_window = 8, softcap = 30, scale 1/sqrt(16) by default. No past inputs.
// CHECK-LABEL: func.func @main_graph
// CHECK-NOT: transformer.rotary
// CHECK: transformer.attention %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}[0], %{{.+}} {causal, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f64, sliding_window = 8 : i64, softcap = 3.000000e+01 : f64}
func.func @main_graph(%ids: tensor<?x?xi64> {onnx.name = "input_ids"}, %mask: tensor<?x?xi64> {onnx.name = "attention_mask"}) -> (tensor<?x?x64xf32> {onnx.name = "logits"}, tensor<?x2x?x16xf32> {onnx.name = "present.0.key"}, tensor<?x2x?x16xf32> {onnx.name = "present.0.value"}) {
  %tq = onnx.Constant {value = dense<0.5> : tensor<16x64xf32>} : () -> tensor<16x64xf32>
  %tk = onnx.Constant {value = dense<0.25> : tensor<16x32xf32>} : () -> tensor<16x32xf32>
  %one = onnx.Constant {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %sum = onnx.ReduceSum %mask axes(%one) {keepdims = 0 : i64} : (tensor<?x?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %last = onnx.Sub %sum, %one : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %seqlens = onnx.Cast %last {to = 6 : i64} : (tensor<?xi64>) -> tensor<?xi32>
  %shape = onnx.Shape %mask : (tensor<?x?xi64>) -> tensor<2xi64>
  %i1 = onnx.Constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %width = onnx.Gather %shape, %i1 : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %total = onnx.Cast %width {to = 6 : i64} : (tensor<i64>) -> tensor<i32>
  %q = onnx.Gather %tq, %ids : (tensor<16x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
  %kv = onnx.Gather %tk, %ids : (tensor<16x32xf32>, tensor<?x?xi64>) -> tensor<?x?x32xf32>
  %o, %k, %v = onnx.ms_GroupQueryAttention %q key(%kv) value(%kv) seqlens_k(%seqlens) total_sequence_length(%total) {kv_num_heads = 2 : i64, num_heads = 4 : i64, local_window_size = 8 : i64, softcap = 30.0 : f32} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?xi32>, tensor<i32>) -> (tensor<?x?x64xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>)
  return %o, %k, %v : tensor<?x?x64xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>
}

// -----

// Not raised: seqlens_k is ReduceSum(mask) with no "- 1", so the op would read one key past
// the end of every sequence; the probe catches it and nothing is rewritten.
// DIAG: warning: attention subgraph could not be raised: seqlens_k is not 4 for 5 new tokens after 0 cached ones
// DIAG: warning: no attention subgraph was recognised
// CHECK-LABEL: func.func @main_graph
// CHECK-SAME: %{{[^:]+}}: tensor<?x?xi64> {onnx.name = "input_ids"}
// CHECK: onnx.ms_GroupQueryAttention
// CHECK-NOT: transformer.attention
func.func @main_graph(%ids: tensor<?x?xi64> {onnx.name = "input_ids"}, %mask: tensor<?x?xi64> {onnx.name = "attention_mask"}) -> (tensor<?x?x64xf32> {onnx.name = "logits"}) {
  %table = onnx.Constant {value = dense<0.5> : tensor<16x128xf32>} : () -> tensor<16x128xf32>
  %one = onnx.Constant {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %sum = onnx.ReduceSum %mask axes(%one) {keepdims = 0 : i64} : (tensor<?x?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %seqlens = onnx.Cast %sum {to = 6 : i64} : (tensor<?xi64>) -> tensor<?xi32>
  %shape = onnx.Shape %mask : (tensor<?x?xi64>) -> tensor<2xi64>
  %i1 = onnx.Constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %width = onnx.Gather %shape, %i1 : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %total = onnx.Cast %width {to = 6 : i64} : (tensor<i64>) -> tensor<i32>
  %qkv = onnx.Gather %table, %ids : (tensor<16x128xf32>, tensor<?x?xi64>) -> tensor<?x?x128xf32>
  %o, %k, %v = onnx.ms_GroupQueryAttention %qkv seqlens_k(%seqlens) total_sequence_length(%total) {kv_num_heads = 2 : i64, num_heads = 4 : i64} : (tensor<?x?x128xf32>, tensor<?xi32>, tensor<i32>) -> (tensor<?x?x64xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>)
  return %o : tensor<?x?x64xf32>
}

// -----

// Not raised: the present key feeds more arithmetic, so it is not just the cache.
// DIAG: warning: attention subgraph could not be raised: present_key/present_value are used by something other than the graph outputs
// CHECK-LABEL: func.func @main_graph
// CHECK: onnx.ms_GroupQueryAttention
// CHECK-NOT: transformer.attention
func.func @main_graph(%ids: tensor<?x?xi64> {onnx.name = "input_ids"}, %mask: tensor<?x?xi64> {onnx.name = "attention_mask"}) -> (tensor<?x?x64xf32> {onnx.name = "logits"}, tensor<?x2x?x16xf32> {onnx.name = "present.0.key"}) {
  %table = onnx.Constant {value = dense<0.5> : tensor<16x128xf32>} : () -> tensor<16x128xf32>
  %one = onnx.Constant {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %sum = onnx.ReduceSum %mask axes(%one) {keepdims = 0 : i64} : (tensor<?x?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %last = onnx.Sub %sum, %one : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %seqlens = onnx.Cast %last {to = 6 : i64} : (tensor<?xi64>) -> tensor<?xi32>
  %shape = onnx.Shape %mask : (tensor<?x?xi64>) -> tensor<2xi64>
  %i1 = onnx.Constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %width = onnx.Gather %shape, %i1 : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %total = onnx.Cast %width {to = 6 : i64} : (tensor<i64>) -> tensor<i32>
  %qkv = onnx.Gather %table, %ids : (tensor<16x128xf32>, tensor<?x?xi64>) -> tensor<?x?x128xf32>
  %o, %k, %v = onnx.ms_GroupQueryAttention %qkv seqlens_k(%seqlens) total_sequence_length(%total) {kv_num_heads = 2 : i64, num_heads = 4 : i64} : (tensor<?x?x128xf32>, tensor<?xi32>, tensor<i32>) -> (tensor<?x?x64xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>)
  %k2 = onnx.Mul %k, %k : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
  return %o, %k2 : tensor<?x?x64xf32>, tensor<?x2x?x16xf32>
}

// -----

// Not raised: the past comes from a constant, not from the graph's past_key_values inputs,
// so it cannot be the paged cache.
// DIAG: warning: attention subgraph could not be raised: past_key/past_value are not the graph's past_key_values inputs
// CHECK-LABEL: func.func @main_graph
// CHECK: onnx.ms_GroupQueryAttention
// CHECK-NOT: transformer.attention
func.func @main_graph(%ids: tensor<?x?xi64> {onnx.name = "input_ids"}, %mask: tensor<?x?xi64> {onnx.name = "attention_mask"}) -> (tensor<?x?x64xf32> {onnx.name = "logits"}) {
  %table = onnx.Constant {value = dense<0.5> : tensor<16x128xf32>} : () -> tensor<16x128xf32>
  %past = onnx.Constant {value = dense<0.0> : tensor<1x2x3x16xf32>} : () -> tensor<1x2x3x16xf32>
  %one = onnx.Constant {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %sum = onnx.ReduceSum %mask axes(%one) {keepdims = 0 : i64} : (tensor<?x?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %last = onnx.Sub %sum, %one : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %seqlens = onnx.Cast %last {to = 6 : i64} : (tensor<?xi64>) -> tensor<?xi32>
  %shape = onnx.Shape %mask : (tensor<?x?xi64>) -> tensor<2xi64>
  %i1 = onnx.Constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %width = onnx.Gather %shape, %i1 : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %total = onnx.Cast %width {to = 6 : i64} : (tensor<i64>) -> tensor<i32>
  %qkv = onnx.Gather %table, %ids : (tensor<16x128xf32>, tensor<?x?xi64>) -> tensor<?x?x128xf32>
  %o, %k, %v = onnx.ms_GroupQueryAttention %qkv past_key(%past) past_value(%past) seqlens_k(%seqlens) total_sequence_length(%total) {kv_num_heads = 2 : i64, num_heads = 4 : i64} : (tensor<?x?x128xf32>, tensor<1x2x3x16xf32>, tensor<1x2x3x16xf32>, tensor<?xi32>, tensor<i32>) -> (tensor<?x?x64xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>)
  return %o : tensor<?x?x64xf32>
}
