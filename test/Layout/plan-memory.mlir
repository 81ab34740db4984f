// RUN: accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-plan-memory))' | FileCheck %s
// RUN: accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-plan-memory{max-tokens=16}))' | FileCheck %s --check-prefix=BOUND
// RUN: not accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-plan-memory{max-tokens=0}))' 2>&1 | FileCheck %s --check-prefix=ZERO

// The offsets below are worked out by hand from the rules in
// docs/passes/layout.md: intervals are op indices in the block (def .. last
// use, inclusive), buffers are placed largest first (ties: earlier start),
// each in the smallest gap among the buffers it overlaps in time.

// ZERO: error: accel-plan-memory needs max-tokens of at least 1, got 0

// A chain of four 4096-byte values: each lives from its op to the next
// ([0,1] [1,2] [2,3] [3,4]), so %c takes %a's bytes and %d takes %b's.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: attributes {accel.arena_bytes = 8192 : i64, accel.arena_naive_bytes = 16384 : i64}
// CHECK: onnx.Neg %{{.*}} {accel.arena = [array<i64: 0, 4096>]}
// CHECK: onnx.Neg %{{.*}} {accel.arena = [array<i64: 4096, 4096>]}
// CHECK: onnx.Neg %{{.*}} {accel.arena = [array<i64: 0, 4096>]}
// CHECK: onnx.Neg %{{.*}} {accel.arena = [array<i64: 4096, 4096>]}
func.func @chain(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %a = onnx.Neg %x : (tensor<1024xf32>) -> tensor<1024xf32>
  %b = onnx.Neg %a : (tensor<1024xf32>) -> tensor<1024xf32>
  %c = onnx.Neg %b : (tensor<1024xf32>) -> tensor<1024xf32>
  %d = onnx.Neg %c : (tensor<1024xf32>) -> tensor<1024xf32>
  return %d : tensor<1024xf32>
}

// -----

// %a [0,2] and %b [1,2] are both live at the Add, and the Add's result
// [2,3] may not reuse its operands' bytes: three disjoint buffers.
// CHECK-LABEL: func.func @two_live
// CHECK-SAME: accel.arena_bytes = 12288 : i64
// CHECK: %[[A:.+]] = onnx.Neg %{{.*}} {accel.arena = [array<i64: 0, 4096>]}
// CHECK: %[[B:.+]] = onnx.Neg %{{.*}} {accel.arena = [array<i64: 4096, 4096>]}
// CHECK: onnx.Add %[[A]], %[[B]] {accel.arena = [array<i64: 8192, 4096>]}
func.func @two_live(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %a = onnx.Neg %x : (tensor<1024xf32>) -> tensor<1024xf32>
  %b = onnx.Neg %x : (tensor<1024xf32>) -> tensor<1024xf32>
  %c = onnx.Add %a, %b : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  return %c : tensor<1024xf32>
}

// -----

// The Reshape is a view: it gets %a's offset and bytes and keeps %a alive
// until its own last use (op 3), so %b [3,4] cannot take offset 0. A view
// of an argument is not planned. The shape is a weight: not planned.
// CHECK-LABEL: func.func @view
// CHECK-SAME: accel.arena_bytes = 8192 : i64, accel.arena_naive_bytes = 8192 : i64
// CHECK: onnx.Neg %{{.*}} {accel.arena = [array<i64: 0, 4096>]}
// CHECK: onnx.Constant {value = dense<1024> : tensor<1xi64>} : () -> tensor<1xi64>
// CHECK: onnx.Reshape %{{.*}} {accel.arena = [array<i64: 0, 4096>]}
// CHECK: onnx.Neg %{{.*}} {accel.arena = [array<i64: 4096, 4096>]}
// CHECK: onnx.Reshape %{{[^ ]*}}, %{{[^ ]*}} :
func.func @view(%x: tensor<2x512xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %a = onnx.Neg %x : (tensor<2x512xf32>) -> tensor<2x512xf32>
  %s = onnx.Constant {value = dense<[1024]> : tensor<1xi64>} : () -> tensor<1xi64>
  %r = onnx.Reshape %a, %s : (tensor<2x512xf32>, tensor<1xi64>) -> tensor<1024xf32>
  %b = onnx.Neg %r : (tensor<1024xf32>) -> tensor<1024xf32>
  %v = onnx.Reshape %x, %s : (tensor<2x512xf32>, tensor<1xi64>) -> tensor<1024xf32>
  return %b, %v : tensor<1024xf32>, tensor<1024xf32>
}

// -----

// 12 and 10 bytes, both live: each takes a 256-byte slot; the attribute
// keeps the unaligned size.
// CHECK-LABEL: func.func @alignment
// CHECK-SAME: accel.arena_bytes = 512 : i64, accel.arena_naive_bytes = 512 : i64
// CHECK: onnx.Neg %{{.*}} {accel.arena = [array<i64: 0, 12>]}
// CHECK: onnx.Neg %{{.*}} {accel.arena = [array<i64: 256, 10>]}
func.func @alignment(%x: tensor<3xf32>, %y: tensor<5xf16>) -> (tensor<3xf32>, tensor<5xf16>) {
  %a = onnx.Neg %x : (tensor<3xf32>) -> tensor<3xf32>
  %b = onnx.Neg %y : (tensor<5xf16>) -> tensor<5xf16>
  return %a, %b : tensor<3xf32>, tensor<5xf16>
}

// -----

// %a is returned, so it lives to the end [0,4]: %d [3,4] takes %b's bytes
// (%b [1,2] is dead by then), never %a's.
// CHECK-LABEL: func.func @returned
// CHECK-SAME: accel.arena_bytes = 12288 : i64, accel.arena_naive_bytes = 16384 : i64
// CHECK: onnx.Neg %{{.*}} {accel.arena = [array<i64: 0, 4096>]}
// CHECK: onnx.Neg %{{.*}} {accel.arena = [array<i64: 4096, 4096>]}
// CHECK: onnx.Neg %{{.*}} {accel.arena = [array<i64: 8192, 4096>]}
// CHECK: onnx.Neg %{{.*}} {accel.arena = [array<i64: 4096, 4096>]}
func.func @returned(%x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %a = onnx.Neg %x : (tensor<1024xf32>) -> tensor<1024xf32>
  %b = onnx.Neg %x : (tensor<1024xf32>) -> tensor<1024xf32>
  %c = onnx.Neg %b : (tensor<1024xf32>) -> tensor<1024xf32>
  %d = onnx.Neg %c : (tensor<1024xf32>) -> tensor<1024xf32>
  return %a, %d : tensor<1024xf32>, tensor<1024xf32>
}

// -----

// Dynamic dims take max-tokens: at 2048, [?, 64] f32 is 524288 bytes,
// [?, ?] f32 is 2048 * 2048 * 4 = 16777216 (placed first, the largest) and
// each [?, 32] half of the split 262144; at 16, 4096, 1024 and 2048, so
// %b, the smallest, is placed last, above the split's two results (all four
// are returned: all live together). split has one entry per result.
// CHECK-LABEL: func.func @token_bound
// CHECK-SAME: accel.arena_bytes = 17825792 : i64, accel.arena_naive_bytes = 17825792 : i64
// CHECK: onnx.Neg %{{.*}} {accel.arena = [array<i64: 16777216, 524288>]}
// CHECK: onnx.Neg %{{.*}} {accel.arena = [array<i64: 0, 16777216>]}
// CHECK: transformer.split %{{.*}} {accel.arena = [array<i64: 17301504, 262144>, array<i64: 17563648, 262144>]}
// BOUND-LABEL: func.func @token_bound
// BOUND-SAME: accel.arena_bytes = 9216 : i64, accel.arena_naive_bytes = 9216 : i64
// BOUND: onnx.Neg %{{.*}} {accel.arena = [array<i64: 0, 4096>]}
// BOUND: onnx.Neg %{{.*}} {accel.arena = [array<i64: 8192, 1024>]}
// BOUND: transformer.split %{{.*}} {accel.arena = [array<i64: 4096, 2048>, array<i64: 6144, 2048>]}
func.func @token_bound(%x: tensor<?x64xf32>, %y: tensor<?x?xf32>) -> (tensor<?x64xf32>, tensor<?x?xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
  %a = onnx.Neg %x : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %b = onnx.Neg %y : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %s:2 = transformer.split %x : tensor<?x64xf32> -> tensor<?x32xf32>, tensor<?x32xf32>
  return %a, %b, %s#0, %s#1 : tensor<?x64xf32>, tensor<?x?xf32>, tensor<?x32xf32>, tensor<?x32xf32>
}

// -----

// Nothing to plan: weights, shape arithmetic (kept on the host) and a view
// of an argument get no bytes, so the arena is empty.
// CHECK-LABEL: func.func @nothing
// CHECK-SAME: accel.arena_bytes = 0 : i64, accel.arena_naive_bytes = 0 : i64
// CHECK-NOT: accel.arena =
// CHECK: return
func.func @nothing(%x: tensor<?x64xf32>) -> (tensor<64xf32>, tensor<2xi64>, tensor<?xf32>) {
  %w = onnx.Constant {value = dense<1.0> : tensor<64xf32>} : () -> tensor<64xf32>
  %s = onnx.Shape %x : (tensor<?x64xf32>) -> tensor<2xi64>
  %m = onnx.Constant {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %r = onnx.Reshape %x, %m : (tensor<?x64xf32>, tensor<1xi64>) -> tensor<?xf32>
  return %w, %s, %r : tensor<64xf32>, tensor<2xi64>, tensor<?xf32>
}
