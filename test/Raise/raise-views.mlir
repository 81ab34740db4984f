// RUN: accel-opt %s -split-input-file -accel-raise-views | FileCheck %s
//
// The view glue the exporters write between raised ops, cut from the
// fixtures' -emit=transformer IR before this pass (names as there).

// gemma3_op18, layer 0: q is viewed [B, S, 4, 16], transposed to
// [B, 4, S, 16] for q_norm (raised row-wise on the transposed layout), and
// transposed back for the rotary. The transposes cancel (a row-wise op
// commutes with any permutation of the rows) and the norm becomes the
// per-head rms_norm on [tokens, 4, 16].
// CHECK-LABEL: func.func @gemma3_q_norm
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?x?xi64>, %[[Q:[^:]+]]: tensor<?x64xf32>, %[[POS:[^:]+]]: tensor<?xi64>)
// CHECK: %[[W:.+]] = onnx.Constant {{.*}} : () -> tensor<16xf32>
// CHECK: %[[U:.+]] = transformer.unflatten_tokens %[[Q]] like %[[IDS]]
// CHECK: %[[H:.+]] = onnx.Reshape %[[U]], %{{.+}} : (tensor<?x?x64xf32>, tensor<3xi64>) -> tensor<?x4x16xf32>
// CHECK-NEXT: %[[N:.+]] = transformer.rms_norm %[[H]], %[[W]] {epsilon = 9.9999999747524271E-7 : f64} : tensor<?x4x16xf32>, tensor<16xf32>
// CHECK-NEXT: %[[R:.+]] = transformer.rotary %[[N]], %[[POS]]
// CHECK-NEXT: return %[[R]]
// CHECK-NOT: onnx.Transpose
func.func @gemma3_q_norm(%2: tensor<?x?xi64>, %37: tensor<?x64xf32>, %0: tensor<?xi64>) -> tensor<?x4x16xf32> {
  %4 = onnx.Constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %9 = onnx.Constant {value = dense_resource<q_norm.weight> : tensor<16xf32>} : () -> tensor<16xf32>
  %32 = onnx.Constant {value = dense<16> : tensor<1xi64>} : () -> tensor<1xi64>
  %33 = onnx.Shape %2 {end = 1 : i64} : (tensor<?x?xi64>) -> tensor<1xi64>
  %34 = onnx.Shape %2 {end = 2 : i64, start = 1 : i64} : (tensor<?x?xi64>) -> tensor<1xi64>
  %38 = transformer.unflatten_tokens %37 like %2 : tensor<?x64xf32>, tensor<?x?xi64> -> tensor<?x?x64xf32>
  %39 = onnx.Concat %33, %34, %4, %32 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %40 = onnx.Reshape %38, %39 {allowzero = 1 : i64} : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
  %41 = onnx.Transpose %40 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
  %48 = transformer.flatten_tokens %41 : tensor<?x4x?x16xf32> -> tensor<?x16xf32>
  %49 = transformer.rms_norm %48, %9 {epsilon = 9.9999999747524271E-7 : f64} : tensor<?x16xf32>, tensor<16xf32>
  %50 = transformer.unflatten_tokens %49 like %41 : tensor<?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %54 = onnx.Transpose %50 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
  %55 = onnx.Constant {value = dense<[-1, 4, 16]> : tensor<3xi64>} : () -> tensor<3xi64>
  %56 = onnx.Reshape %54, %55 : (tensor<?x?x4x16xf32>, tensor<3xi64>) -> tensor<?x4x16xf32>
  %57 = transformer.rotary %56, %0 style = half_split {rotary_dim = 16 : i64, theta = 1.000000e+04 : f64} : (tensor<?x4x16xf32>, tensor<?xi64>) -> tensor<?x4x16xf32>
  return %57 : tensor<?x4x16xf32>
}

// -----

// The same sandwich around a chain of row-wise ops (a norm, then an
// activation): still one permutation of the rows, undone. Without a
// reshape to [-1, H, D] after it, the norm stays on rows.
// CHECK-LABEL: func.func @transposes_around_row_chain
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x4x16xf32>
// CHECK-NEXT: %[[F:.+]] = transformer.flatten_tokens %[[X]] : tensor<?x?x4x16xf32> -> tensor<?x16xf32>
// CHECK-NEXT: %[[N:.+]] = transformer.rms_norm %[[F]]
// CHECK-NEXT: %[[A:.+]] = transformer.activation %[[N]] kind = silu
// CHECK-NEXT: %[[U:.+]] = transformer.unflatten_tokens %[[A]] like %[[X]] : tensor<?x16xf32>, tensor<?x?x4x16xf32> -> tensor<?x?x4x16xf32>
// CHECK-NEXT: return %[[U]]
func.func @transposes_around_row_chain(%x: tensor<?x?x4x16xf32>, %w: tensor<16xf32>) -> tensor<?x?x4x16xf32> {
  %t = onnx.Transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
  %f = transformer.flatten_tokens %t : tensor<?x4x?x16xf32> -> tensor<?x16xf32>
  %n = transformer.rms_norm %f, %w {epsilon = 1.0e-06 : f64} : tensor<?x16xf32>, tensor<16xf32>
  %a = transformer.activation %n kind = silu : tensor<?x16xf32>
  %u = transformer.unflatten_tokens %a like %t : tensor<?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %b = onnx.Transpose %u {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
  return %b : tensor<?x?x4x16xf32>
}

// -----

// Negative: the second transpose is not the inverse of the first (the rows
// come back in another order), so both stay.
// CHECK-LABEL: func.func @transposes_do_not_cancel
// CHECK: onnx.Transpose %{{.+}} {perm = array<i64: 0, 2, 1, 3>}
// CHECK: transformer.rms_norm
// CHECK: onnx.Transpose %{{.+}} {perm = array<i64: 2, 0, 1, 3>}
func.func @transposes_do_not_cancel(%x: tensor<?x?x4x16xf32>, %w: tensor<16xf32>) -> tensor<?x?x4x16xf32> {
  %t = onnx.Transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
  %f = transformer.flatten_tokens %t : tensor<?x4x?x16xf32> -> tensor<?x16xf32>
  %n = transformer.rms_norm %f, %w {epsilon = 1.0e-06 : f64} : tensor<?x16xf32>, tensor<16xf32>
  %u = transformer.unflatten_tokens %n like %t : tensor<?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %b = onnx.Transpose %u {perm = array<i64: 2, 0, 1, 3>} : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
  return %b : tensor<?x?x4x16xf32>
}

// -----

// Negative: the transposed rows are also read by something else (here the
// function's result), so the flatten cannot be moved to the untransposed
// value.
// CHECK-LABEL: func.func @rows_read_twice
// CHECK: onnx.Transpose
// CHECK: transformer.rms_norm
// CHECK: onnx.Transpose
func.func @rows_read_twice(%x: tensor<?x?x4x16xf32>, %w: tensor<16xf32>) -> (tensor<?x?x4x16xf32>, tensor<?x4x?x16xf32>) {
  %t = onnx.Transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
  %f = transformer.flatten_tokens %t : tensor<?x4x?x16xf32> -> tensor<?x16xf32>
  %n = transformer.rms_norm %f, %w {epsilon = 1.0e-06 : f64} : tensor<?x16xf32>, tensor<16xf32>
  %u = transformer.unflatten_tokens %n like %t : tensor<?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %b = onnx.Transpose %u {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
  return %b, %u : tensor<?x?x4x16xf32>, tensor<?x4x?x16xf32>
}

// -----

// Negative: the transpose moves the last axis, so its rows are not the
// input's rows at all.
// CHECK-LABEL: func.func @last_axis_moves
// CHECK-COUNT-2: onnx.Transpose
func.func @last_axis_moves(%x: tensor<?x16x16xf32>, %w: tensor<16xf32>) -> tensor<?x16x16xf32> {
  %t = onnx.Transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<?x16x16xf32>) -> tensor<?x16x16xf32>
  %f = transformer.flatten_tokens %t : tensor<?x16x16xf32> -> tensor<?x16xf32>
  %n = transformer.rms_norm %f, %w {epsilon = 1.0e-06 : f64} : tensor<?x16xf32>, tensor<16xf32>
  %u = transformer.unflatten_tokens %n like %t : tensor<?x16xf32>, tensor<?x16x16xf32> -> tensor<?x16x16xf32>
  %b = onnx.Transpose %u {perm = array<i64: 0, 2, 1>} : (tensor<?x16x16xf32>) -> tensor<?x16x16xf32>
  return %b : tensor<?x16x16xf32>
}

// -----

// A transpose that only moves a size-1 axis keeps the elements' order: a
// reshape, its dynamic dims read off the input.
// CHECK-LABEL: func.func @unit_axis_transpose
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x?x?x16xf32>)
// CHECK-DAG: %[[D1:.+]] = onnx.Shape %[[X]] {end = 2 : i64, start = 1 : i64}
// CHECK-DAG: %[[D2:.+]] = onnx.Shape %[[X]] {end = 3 : i64, start = 2 : i64}
// CHECK-DAG: %[[C:.+]] = onnx.Constant {value = dense<[1, 16]> : tensor<2xi64>}
// CHECK: %[[S:.+]] = onnx.Concat %[[D1]], %[[D2]], %[[C]] {axis = 0 : i64}
// CHECK: onnx.Reshape %[[X]], %[[S]] {allowzero = 1 : i64} : (tensor<1x?x?x16xf32>, tensor<4xi64>) -> tensor<?x?x1x16xf32>
// CHECK-NOT: onnx.Transpose
func.func @unit_axis_transpose(%x: tensor<1x?x?x16xf32>) -> tensor<?x?x1x16xf32> {
  %t = onnx.Transpose %x {perm = array<i64: 1, 2, 0, 3>} : (tensor<1x?x?x16xf32>) -> tensor<?x?x1x16xf32>
  return %t : tensor<?x?x1x16xf32>
}

// -----

// Negative: two dims larger than 1 swap places, a real transpose.
// CHECK-LABEL: func.func @real_transpose
// CHECK: onnx.Transpose
// CHECK-NOT: onnx.Reshape
func.func @real_transpose(%x: tensor<1x?x4x16xf32>) -> tensor<1x4x?x16xf32> {
  %t = onnx.Transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x?x4x16xf32>) -> tensor<1x4x?x16xf32>
  return %t : tensor<1x4x?x16xf32>
}

// -----

// falcon_op18, layer 0 (multi-query): query_key_value [B, S, 96] viewed as
// [B, S, 6, 16]; q is heads 0..3 (a Slice), k and v are heads -2 and -1
// taken by GatherND of a [6, B, S, 16] transpose and transposed back. All
// three are column blocks of the projection: one transformer.split.
// CHECK-LABEL: func.func @falcon_qkv
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?x?xi64>, %[[QKV:[^:]+]]: tensor<?x96xf32>)
// CHECK: %[[P:.+]]:3 = transformer.split %[[QKV]] : tensor<?x96xf32> -> tensor<?x64xf32>, tensor<?x16xf32>, tensor<?x16xf32>
// CHECK-DAG: %[[Q:.+]] = transformer.unflatten_tokens %[[P]]#0 like %[[IDS]] : tensor<?x64xf32>, tensor<?x?xi64> -> tensor<?x?x64xf32>
// CHECK-DAG: %[[K:.+]] = transformer.unflatten_tokens %[[P]]#1 like %[[IDS]] : tensor<?x16xf32>, tensor<?x?xi64> -> tensor<?x?x16xf32>
// CHECK-DAG: %[[V:.+]] = transformer.unflatten_tokens %[[P]]#2 like %[[IDS]] : tensor<?x16xf32>, tensor<?x?xi64> -> tensor<?x?x16xf32>
// CHECK-DAG: onnx.Reshape %[[Q]], %{{.+}} : (tensor<?x?x64xf32>, tensor<3xi64>) -> tensor<?x4x16xf32>
// CHECK-DAG: onnx.Reshape %[[K]], %{{.+}} : (tensor<?x?x16xf32>, tensor<3xi64>) -> tensor<?x1x16xf32>
// CHECK-DAG: onnx.Reshape %[[V]], %{{.+}} : (tensor<?x?x16xf32>, tensor<3xi64>) -> tensor<?x1x16xf32>
// CHECK-NOT: onnx.GatherND
// CHECK-NOT: onnx.Slice
// CHECK-NOT: onnx.Transpose
func.func @falcon_qkv(%2: tensor<?x?xi64>, %31: tensor<?x96xf32>) -> (tensor<?x4x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>) {
  %11 = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %12 = onnx.Constant {value = dense<-2> : tensor<1xi64>} : () -> tensor<1xi64>
  %13 = onnx.Constant {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %14 = onnx.Constant {value = dense<-2> : tensor<1x1xi64>} : () -> tensor<1x1xi64>
  %15 = onnx.Constant {value = dense<-1> : tensor<1x1xi64>} : () -> tensor<1x1xi64>
  %23 = onnx.Constant {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %24 = onnx.Constant {value = dense<6> : tensor<1xi64>} : () -> tensor<1xi64>
  %25 = onnx.Constant {value = dense<16> : tensor<1xi64>} : () -> tensor<1xi64>
  %27 = onnx.Shape %2 {end = 1 : i64} : (tensor<?x?xi64>) -> tensor<1xi64>
  %28 = onnx.Shape %2 {end = 2 : i64, start = 1 : i64} : (tensor<?x?xi64>) -> tensor<1xi64>
  %32 = transformer.unflatten_tokens %31 like %2 : tensor<?x96xf32>, tensor<?x?xi64> -> tensor<?x?x96xf32>
  %33 = onnx.Concat %27, %28, %24, %25 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %34 = onnx.Reshape %32, %33 {allowzero = 1 : i64} : (tensor<?x?x96xf32>, tensor<4xi64>) -> tensor<?x?x6x16xf32>
  %35 = onnx.Slice %34, %11, %12 axes(%13) steps(%23) : (tensor<?x?x6x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x4x16xf32>
  %36 = onnx.Transpose %34 {perm = array<i64: 2, 0, 1, 3>} : (tensor<?x?x6x16xf32>) -> tensor<6x?x?x16xf32>
  %37 = onnx.GatherND %36, %14 : (tensor<6x?x?x16xf32>, tensor<1x1xi64>) -> tensor<1x?x?x16xf32>
  %38 = onnx.GatherND %36, %15 : (tensor<6x?x?x16xf32>, tensor<1x1xi64>) -> tensor<1x?x?x16xf32>
  %39 = onnx.Constant {value = dense<[-1, 4, 16]> : tensor<3xi64>} : () -> tensor<3xi64>
  %40 = onnx.Reshape %35, %39 : (tensor<?x?x4x16xf32>, tensor<3xi64>) -> tensor<?x4x16xf32>
  %42 = onnx.Transpose %37 {perm = array<i64: 1, 2, 0, 3>} : (tensor<1x?x?x16xf32>) -> tensor<?x?x1x16xf32>
  %43 = onnx.Constant {value = dense<[-1, 1, 16]> : tensor<3xi64>} : () -> tensor<3xi64>
  %44 = onnx.Reshape %42, %43 : (tensor<?x?x1x16xf32>, tensor<3xi64>) -> tensor<?x1x16xf32>
  %46 = onnx.Transpose %38 {perm = array<i64: 1, 2, 0, 3>} : (tensor<1x?x?x16xf32>) -> tensor<?x?x1x16xf32>
  %47 = onnx.Reshape %46, %43 : (tensor<?x?x1x16xf32>, tensor<3xi64>) -> tensor<?x1x16xf32>
  return %40, %44, %47 : tensor<?x4x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>
}

// -----

// GatherND of one row, on a dynamic leading axis: a Slice (the last row's
// end is past the axis, not 0).
// CHECK-LABEL: func.func @gather_last_row
// CHECK-DAG: %[[B:.+]] = onnx.Constant {value = dense<-1> : tensor<1xi64>}
// CHECK-DAG: %[[E:.+]] = onnx.Constant {value = dense<9223372036854775807> : tensor<1xi64>}
// CHECK: onnx.Slice %{{.+}}, %[[B]], %[[E]] axes(%{{.+}}) steps(%{{.+}}) : {{.*}} -> tensor<1x?x16xf32>
// CHECK-NOT: onnx.GatherND
func.func @gather_last_row(%x: tensor<?x?x16xf32>) -> tensor<1x?x16xf32> {
  %i = onnx.Constant {value = dense<-1> : tensor<1x1xi64>} : () -> tensor<1x1xi64>
  %g = onnx.GatherND %x, %i : (tensor<?x?x16xf32>, tensor<1x1xi64>) -> tensor<1x?x16xf32>
  return %g : tensor<1x?x16xf32>
}

// -----

// Negative: GatherND of two rows (indices [2, 1]) is not one slice.
// CHECK-LABEL: func.func @gather_two_rows
// CHECK: onnx.GatherND
func.func @gather_two_rows(%x: tensor<6x?x16xf32>) -> tensor<2x?x16xf32> {
  %i = onnx.Constant {value = dense<[[1], [4]]> : tensor<2x1xi64>} : () -> tensor<2x1xi64>
  %g = onnx.GatherND %x, %i : (tensor<6x?x16xf32>, tensor<2x1xi64>) -> tensor<2x?x16xf32>
  return %g : tensor<2x?x16xf32>
}

// -----

// Phi-3's qkv_proj: three last-axis Slices of the projection → one split.
// CHECK-LABEL: func.func @column_slices
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?x?xi64>, %[[QKV:[^:]+]]: tensor<?x32xf32>)
// CHECK: %[[P:.+]]:3 = transformer.split %[[QKV]] : tensor<?x32xf32> -> tensor<?x16xf32>, tensor<?x8xf32>, tensor<?x8xf32>
// CHECK-DAG: transformer.unflatten_tokens %[[P]]#0 like %[[IDS]]
// CHECK-DAG: transformer.unflatten_tokens %[[P]]#1 like %[[IDS]]
// CHECK-DAG: transformer.unflatten_tokens %[[P]]#2 like %[[IDS]]
// CHECK-NOT: onnx.Slice
func.func @column_slices(%ids: tensor<?x?xi64>, %qkv: tensor<?x32xf32>) -> (tensor<?x?x16xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %u = transformer.unflatten_tokens %qkv like %ids : tensor<?x32xf32>, tensor<?x?xi64> -> tensor<?x?x32xf32>
  %ax = onnx.Constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %c0 = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %c16 = onnx.Constant {value = dense<16> : tensor<1xi64>} : () -> tensor<1xi64>
  %c24 = onnx.Constant {value = dense<24> : tensor<1xi64>} : () -> tensor<1xi64>
  %end = onnx.Constant {value = dense<9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  %q = onnx.Slice %u, %c0, %c16 axes(%ax) : (tensor<?x?x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x16xf32>
  %k = onnx.Slice %u, %c16, %c24 axes(%ax) : (tensor<?x?x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x8xf32>
  %v = onnx.Slice %u, %c24, %end axes(%ax) : (tensor<?x?x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x8xf32>
  return %q, %k, %v : tensor<?x?x16xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>
}

// -----

// Negative: overlapping column blocks are not one split.
// CHECK-LABEL: func.func @overlapping_slices
// CHECK-NOT: transformer.split
// CHECK-COUNT-2: onnx.Slice
func.func @overlapping_slices(%ids: tensor<?x?xi64>, %x: tensor<?x32xf32>) -> (tensor<?x?x16xf32>, tensor<?x?x16xf32>) {
  %u = transformer.unflatten_tokens %x like %ids : tensor<?x32xf32>, tensor<?x?xi64> -> tensor<?x?x32xf32>
  %ax = onnx.Constant {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %c0 = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %c8 = onnx.Constant {value = dense<8> : tensor<1xi64>} : () -> tensor<1xi64>
  %c16 = onnx.Constant {value = dense<16> : tensor<1xi64>} : () -> tensor<1xi64>
  %c24 = onnx.Constant {value = dense<24> : tensor<1xi64>} : () -> tensor<1xi64>
  %a = onnx.Slice %u, %c0, %c16 axes(%ax) : (tensor<?x?x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x16xf32>
  %b = onnx.Slice %u, %c8, %c24 axes(%ax) : (tensor<?x?x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x16xf32>
  return %a, %b : tensor<?x?x16xf32>, tensor<?x?x16xf32>
}

// -----

// Negative: the token-major value is also read whole (here by the
// function's result): the slices stay slices.
// CHECK-LABEL: func.func @slices_and_whole
// CHECK-NOT: transformer.split
// CHECK: onnx.Slice
func.func @slices_and_whole(%ids: tensor<?x?xi64>, %x: tensor<?x32xf32>) -> (tensor<?x?x16xf32>, tensor<?x?x32xf32>) {
  %u = transformer.unflatten_tokens %x like %ids : tensor<?x32xf32>, tensor<?x?xi64> -> tensor<?x?x32xf32>
  %ax = onnx.Constant {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %c0 = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %c16 = onnx.Constant {value = dense<16> : tensor<1xi64>} : () -> tensor<1xi64>
  %a = onnx.Slice %u, %c0, %c16 axes(%ax) : (tensor<?x?x32xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x16xf32>
  return %a, %u : tensor<?x?x16xf32>, tensor<?x?x32xf32>
}

// -----

// gptneox_op18, layer 0: query_key_value [B, S, 3 * 64] is viewed per head
// as [B, S, 4, 48], transposed to [B, 4, S, 48], split in q, k, v of 16 and
// each transposed back. The split happens before the transpose, and the
// projection's rows (2 heads of 3 x 1 here, for readable weights) are
// reordered so that q, k and v are column blocks: rows [0, 3 | 1, 4 | 2, 5].
// CHECK-LABEL: func.func @neox_qkv
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?x?xi64>, %[[X:[^:]+]]: tensor<?x2xf32>)
// CHECK-DAG: %[[W:.+]] = onnx.Constant {value = dense<{{\[}}[0.000000e+00, 0.000000e+00], [3.000000e+00, 3.000000e+00], [1.000000e+00, 1.000000e+00], [4.000000e+00, 4.000000e+00], [2.000000e+00, 2.000000e+00], [5.000000e+00, 5.000000e+00]]> : tensor<6x2xf32>}
// CHECK-DAG: %[[B:.+]] = onnx.Constant {value = dense<[1.000000e+01, 1.300000e+01, 1.100000e+01, 1.400000e+01, 1.200000e+01, 1.500000e+01]> : tensor<6xf32>}
// CHECK: %[[L:.+]] = transformer.linear %[[X]], %[[W]] bias(%[[B]]) : (tensor<?x2xf32>, tensor<6x2xf32>, tensor<6xf32>) -> tensor<?x6xf32>
// CHECK-NEXT: %[[P:.+]]:3 = transformer.split %[[L]] : tensor<?x6xf32> -> tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>
// CHECK: %[[Q:.+]] = transformer.unflatten_tokens %[[P]]#0 like %[[IDS]] : tensor<?x2xf32>, tensor<?x?xi64> -> tensor<?x?x2xf32>
// CHECK: onnx.Reshape %[[Q]], %{{.+}} : (tensor<?x?x2xf32>, tensor<3xi64>) -> tensor<?x2x1xf32>
// CHECK-NOT: onnx.Transpose
// CHECK-NOT: onnx.Split
func.func @neox_qkv(%2: tensor<?x?xi64>, %36: tensor<?x2xf32>) -> (tensor<?x2x1xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>) {
  %w = onnx.Constant {value = dense<[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0], [5.0, 5.0]]> : tensor<6x2xf32>} : () -> tensor<6x2xf32>
  %b = onnx.Constant {value = dense<[10.0, 11.0, 12.0, 13.0, 14.0, 15.0]> : tensor<6xf32>} : () -> tensor<6xf32>
  %22 = onnx.Constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %32 = onnx.Constant {value = dense<3> : tensor<1xi64>} : () -> tensor<1xi64>
  %33 = onnx.Shape %2 {end = 1 : i64} : (tensor<?x?xi64>) -> tensor<1xi64>
  %34 = onnx.Shape %2 {end = 2 : i64, start = 1 : i64} : (tensor<?x?xi64>) -> tensor<1xi64>
  %37 = transformer.linear %36, %w bias(%b) : (tensor<?x2xf32>, tensor<6x2xf32>, tensor<6xf32>) -> tensor<?x6xf32>
  %38 = transformer.unflatten_tokens %37 like %2 : tensor<?x6xf32>, tensor<?x?xi64> -> tensor<?x?x6xf32>
  %39 = onnx.Concat %33, %34, %22, %32 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %40 = onnx.Reshape %38, %39 {allowzero = 1 : i64} : (tensor<?x?x6xf32>, tensor<4xi64>) -> tensor<?x?x2x3xf32>
  %41 = onnx.Transpose %40 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x3xf32>) -> tensor<?x2x?x3xf32>
  %42:3 = onnx.Split %41 {axis = 3 : i64, num_outputs = 3 : i64} : (tensor<?x2x?x3xf32>) -> (tensor<?x2x?x1xf32>, tensor<?x2x?x1xf32>, tensor<?x2x?x1xf32>)
  %43 = onnx.Transpose %42#0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x2x?x1xf32>) -> tensor<?x?x2x1xf32>
  %44 = onnx.Constant {value = dense<[-1, 2, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
  %45 = onnx.Reshape %43, %44 : (tensor<?x?x2x1xf32>, tensor<3xi64>) -> tensor<?x2x1xf32>
  %47 = onnx.Transpose %42#1 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x2x?x1xf32>) -> tensor<?x?x2x1xf32>
  %48 = onnx.Reshape %47, %44 : (tensor<?x?x2x1xf32>, tensor<3xi64>) -> tensor<?x2x1xf32>
  %50 = onnx.Transpose %42#2 {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x2x?x1xf32>) -> tensor<?x?x2x1xf32>
  %51 = onnx.Reshape %50, %44 : (tensor<?x?x2x1xf32>, tensor<3xi64>) -> tensor<?x2x1xf32>
  return %45, %48, %51 : tensor<?x2x1xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>
}

// -----

// Negative: the projection is also read whole, so its rows cannot be
// reordered; the split moves before the transpose, and stays.
// CHECK-LABEL: func.func @neox_qkv_read_twice
// CHECK: transformer.linear
// CHECK-NOT: transformer.split
// CHECK: onnx.Split
func.func @neox_qkv_read_twice(%2: tensor<?x?xi64>, %36: tensor<?x2xf32>) -> (tensor<?x?x2x1xf32>, tensor<?x6xf32>) {
  %w = onnx.Constant {value = dense<[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0], [5.0, 5.0]]> : tensor<6x2xf32>} : () -> tensor<6x2xf32>
  %shape = onnx.Constant {value = dense<[0, 0, 2, 3]> : tensor<4xi64>} : () -> tensor<4xi64>
  %37 = transformer.linear %36, %w : (tensor<?x2xf32>, tensor<6x2xf32>) -> tensor<?x6xf32>
  %38 = transformer.unflatten_tokens %37 like %2 : tensor<?x6xf32>, tensor<?x?xi64> -> tensor<?x?x6xf32>
  %40 = onnx.Reshape %38, %shape : (tensor<?x?x6xf32>, tensor<4xi64>) -> tensor<?x?x2x3xf32>
  %42:3 = onnx.Split %40 {axis = 3 : i64, num_outputs = 3 : i64} : (tensor<?x?x2x3xf32>) -> (tensor<?x?x2x1xf32>, tensor<?x?x2x1xf32>, tensor<?x?x2x1xf32>)
  return %42#0, %37 : tensor<?x?x2x1xf32>, tensor<?x6xf32>
}

// -----

// gpt2_op18, layer 0: Conv1D's `view(size_out)` after its addmm, a Reshape
// of the token-major c_attn output to [Shape(ids)[0], Shape(ids)[1], 192]:
// unflatten_tokens, so that c_attn's Split is one transformer.split.
// CHECK-LABEL: func.func @gpt2_conv1d_view
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?x?xi64>, %[[R:[^:]+]]: tensor<?x192xf32>)
// CHECK: %[[P:.+]]:3 = transformer.split %[[R]] : tensor<?x192xf32> -> tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>
// CHECK-NOT: onnx.Reshape
// CHECK-NOT: onnx.Split
func.func @gpt2_conv1d_view(%2: tensor<?x?xi64>, %43: tensor<?x192xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) {
  %33 = onnx.Constant {value = dense<192> : tensor<1xi64>} : () -> tensor<1xi64>
  %35 = onnx.Shape %2 {end = 1 : i64} : (tensor<?x?xi64>) -> tensor<1xi64>
  %36 = onnx.Shape %2 {end = 2 : i64, start = 1 : i64} : (tensor<?x?xi64>) -> tensor<1xi64>
  %44 = onnx.Concat %35, %36, %33 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %45 = onnx.Reshape %43, %44 {allowzero = 1 : i64} : (tensor<?x192xf32>, tensor<3xi64>) -> tensor<?x?x192xf32>
  %46:3 = onnx.Split %45 {axis = 2 : i64, num_outputs = 3 : i64} : (tensor<?x?x192xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>)
  return %46#0, %46#1, %46#2 : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>
}

// -----

// Negative: the target takes dim 1 of the ids where the token dims need
// dim 0 (a transposed view, not the tokens in order).
// CHECK-LABEL: func.func @reshape_swapped_dims
// CHECK: onnx.Reshape
// CHECK-NOT: transformer.unflatten_tokens
func.func @reshape_swapped_dims(%2: tensor<?x?xi64>, %43: tensor<?x192xf32>) -> tensor<?x?x192xf32> {
  %33 = onnx.Constant {value = dense<192> : tensor<1xi64>} : () -> tensor<1xi64>
  %35 = onnx.Shape %2 {end = 1 : i64} : (tensor<?x?xi64>) -> tensor<1xi64>
  %36 = onnx.Shape %2 {end = 2 : i64, start = 1 : i64} : (tensor<?x?xi64>) -> tensor<1xi64>
  %44 = onnx.Concat %36, %35, %33 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %45 = onnx.Reshape %43, %44 {allowzero = 1 : i64} : (tensor<?x192xf32>, tensor<3xi64>) -> tensor<?x?x192xf32>
  return %45 : tensor<?x?x192xf32>
}

// -----

// gpt2_op18: the position ids, unsqueezed to [1, T] for the position
// embedding and flattened again: the positions themselves.
// CHECK-LABEL: func.func @gpt2_positions
// CHECK-SAME: (%[[POS:[^:]+]]: tensor<?xi64>
// CHECK-NEXT: %[[E:.+]] = transformer.embedding %{{.+}}[%[[POS]]]
// CHECK-NOT: onnx.Unsqueeze
func.func @gpt2_positions(%0: tensor<?xi64>, %3: tensor<128x64xf32>) -> tensor<?x64xf32> {
  %31 = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %38 = onnx.Unsqueeze %0 axes(%31) : (tensor<?xi64>, tensor<1xi64>) -> tensor<1x?xi64>
  %39 = transformer.flatten_tokens %38 : tensor<1x?xi64> -> tensor<?xi64>
  %40 = transformer.embedding %3[%39] : (tensor<128x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
  return %40 : tensor<?x64xf32>
}

// -----

// Negative: an axis inserted last splits each row's features off: those
// are not the rows of x.
// CHECK-LABEL: func.func @unsqueeze_last_axis
// CHECK: onnx.Unsqueeze
func.func @unsqueeze_last_axis(%x: tensor<?x4xf32>) -> tensor<?x1xf32> {
  %a = onnx.Constant {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %u = onnx.Unsqueeze %x axes(%a) : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<?x4x1xf32>
  %f = transformer.flatten_tokens %u : tensor<?x4x1xf32> -> tensor<?x1xf32>
  return %f : tensor<?x1xf32>
}
