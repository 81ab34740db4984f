// RUN: accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-smooth-quant))' | FileCheck %s
// RUN: accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-smooth-quant{alpha=1.0 max-scale=8.0}))' | FileCheck %s --check-prefix=CLAMP
// RUN: not accel-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(accel-smooth-quant{alpha=1.5}))' 2>&1 | FileCheck %s --check-prefix=BAD
//
// SmoothQuant migration, docs/precision.md:
//   s_j = max|x_j|^alpha / max|W_{:,j}|^(1 - alpha), x' = x / s, W' = W diag(s),
// 1/s folded into x's producer, accel.calib_absmax divided by s.

// BAD: accel-smooth-quant: alpha must be in [0, 1] and max-scale at least 1, got alpha=1.5

// Two linears share the rms_norm's output (unfused q and k): one s from
// both. max|x| = [16, 1]; column maxima over both weights [1, 0.25]; alpha
// 0.5: s = [sqrt(16)/sqrt(1), sqrt(1)/sqrt(0.25)] = [4, 2]. Norm weight
// [1, 0.5] / s = [0.25, 0.25]; W1 [[1, .25], [.5, .125]] -> [[4, .5], [2, .25]];
// W2 [[.25, .0625]] -> [[1, .125]]; statistics [16, 1] / s = [4, 0.5].
// CHECK-LABEL: func @shared_norm
// CHECK-DAG: %[[G:.+]] = onnx.Constant {value = dense<2.500000e-01> : tensor<2xf32>}
// CHECK-DAG: %[[W1:.+]] = onnx.Constant {value = dense<{{\[}}[4.000000e+00, 5.000000e-01], [2.000000e+00, 2.500000e-01]]> : tensor<2x2xf32>}
// CHECK-DAG: %[[W2:.+]] = onnx.Constant {value = dense<{{\[}}[1.000000e+00, 1.250000e-01]]> : tensor<1x2xf32>}
// CHECK: %[[N:.+]] = transformer.rms_norm %{{.+}}, %[[G]]
// CHECK: transformer.linear %[[N]], %[[W1]] {accel.calib_absmax = dense<[4.000000e+00, 5.000000e-01]> : tensor<2xf32>}
// CHECK: transformer.linear %[[N]], %[[W2]] {accel.calib_absmax = dense<[4.000000e+00, 5.000000e-01]> : tensor<2xf32>}
// alpha 1, max-scale 8: s = [16, 1] clamped to [8, 1].
// CLAMP-LABEL: func @shared_norm
// CLAMP-DAG: onnx.Constant {value = dense<[1.250000e-01, 5.000000e-01]> : tensor<2xf32>}
// CLAMP-DAG: onnx.Constant {value = dense<{{\[}}[8.000000e+00, 2.500000e-01], [4.000000e+00, 1.250000e-01]]> : tensor<2x2xf32>}
func.func @shared_norm(%h: tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<?x1xf32>) {
  %g = onnx.Constant {value = dense<[1.0, 0.5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %w1 = onnx.Constant {value = dense<[[1.0, 0.25], [0.5, 0.125]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %w2 = onnx.Constant {value = dense<[[0.25, 0.0625]]> : tensor<1x2xf32>} : () -> tensor<1x2xf32>
  %n = transformer.rms_norm %h, %g {epsilon = 1.0e-05} : tensor<?x2xf32>, tensor<2xf32>
  %q = transformer.linear %n, %w1 {accel.calib_absmax = dense<[16.0, 1.0]> : tensor<2xf32>} : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  %k = transformer.linear %n, %w2 {accel.calib_absmax = dense<[16.0, 1.0]> : tensor<2xf32>} : (tensor<?x2xf32>, tensor<1x2xf32>) -> tensor<?x1xf32>
  return %q, %k : tensor<?x2xf32>, tensor<?x1xf32>
}

// -----

// Gemma's rms_norm scales by (weight + 1): (w + 1) / s - 1 with s = [4, 2]
// gives [(1 + 1)/4 - 1, (0.5 + 1)/2 - 1] = [-0.5, -0.25].
// CHECK-LABEL: func @norm_with_offset
// CHECK: %[[G:.+]] = onnx.Constant {value = dense<[-5.000000e-01, -2.500000e-01]> : tensor<2xf32>}
// CHECK: transformer.rms_norm %{{.+}}, %[[G]] {epsilon = 1.000000e-05 : f64, weight_offset = 1.000000e+00 : f64}
func.func @norm_with_offset(%h: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %g = onnx.Constant {value = dense<[1.0, 0.5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %w = onnx.Constant {value = dense<[[1.0, 0.25], [0.5, 0.125]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %n = transformer.rms_norm %h, %g {epsilon = 1.0e-05, weight_offset = 1.0} : tensor<?x2xf32>, tensor<2xf32>
  %q = transformer.linear %n, %w {accel.calib_absmax = dense<[16.0, 1.0]> : tensor<2xf32>} : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  return %q : tensor<?x2xf32>
}

// -----

// layer_norm: weight and bias both divided by s = [4, 2]; the add_rms_norm's
// residual sum is not what the linear reads, its normed result is.
// CHECK-LABEL: func @layer_norm_and_add_rms_norm
// CHECK-DAG: %[[LW:.+]] = onnx.Constant {value = dense<[2.500000e-01, 5.000000e-01]> : tensor<2xf32>}
// CHECK-DAG: %[[LB:.+]] = onnx.Constant {value = dense<[1.250000e-01, -5.000000e-01]> : tensor<2xf32>}
// CHECK-DAG: %[[AW:.+]] = onnx.Constant {value = dense<[5.000000e-01, 1.000000e+00]> : tensor<2xf32>}
// CHECK: transformer.layer_norm %{{.+}}, %[[LW]] bias(%[[LB]])
// CHECK: transformer.add_rms_norm %{{.+}}, %{{.+}}, %[[AW]]
// CLAMP-LABEL: func @layer_norm_and_add_rms_norm
// CLAMP-DAG: onnx.Constant {value = dense<[1.250000e-01, 1.000000e+00]> : tensor<2xf32>}
// CLAMP-DAG: onnx.Constant {value = dense<[6.250000e-02, -1.000000e+00]> : tensor<2xf32>}
func.func @layer_norm_and_add_rms_norm(%h: tensor<?x2xf32>, %r: tensor<?x2xf32>) -> (tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x2xf32>) {
  %lw = onnx.Constant {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %lb = onnx.Constant {value = dense<[0.5, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %aw = onnx.Constant {value = dense<[2.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %w = onnx.Constant {value = dense<[[1.0, 0.25]]> : tensor<1x2xf32>} : () -> tensor<1x2xf32>
  %w2 = onnx.Constant {value = dense<[[1.0, 0.25]]> : tensor<1x2xf32>} : () -> tensor<1x2xf32>
  %n = transformer.layer_norm %h, %lw bias(%lb) {epsilon = 1.0e-05} : (tensor<?x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  %y = transformer.linear %n, %w {accel.calib_absmax = dense<[16.0, 1.0]> : tensor<2xf32>} : (tensor<?x2xf32>, tensor<1x2xf32>) -> tensor<?x1xf32>
  %a, %sum = transformer.add_rms_norm %h, %r, %aw {epsilon = 1.0e-05} : tensor<?x2xf32>, tensor<2xf32>
  %z = transformer.linear %a, %w2 {accel.calib_absmax = dense<[16.0, 1.0]> : tensor<2xf32>} : (tensor<?x2xf32>, tensor<1x2xf32>) -> tensor<?x1xf32>
  return %y, %z, %sum : tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x2xf32>
}

// -----

// The down projection after gated_act: silu(gate) * up is linear in up, so
// 1/s = [1/4, 1/2] goes into the up rows (2 and 3) of the gate_up linear:
// [4, 4] -> [1, 1], [2, 2] -> [1, 1]; its gate rows stay. W_down
// [[1, .25], [.5, 0]] -> [[4, .5], [2, 0]].
// CHECK-LABEL: func @down_after_gated_act
// CHECK-DAG: %[[GU:.+]] = onnx.Constant {value = dense<{{\[}}[3.000000e+00, 3.000000e+00], [5.000000e+00, 5.000000e+00], [1.000000e+00, 1.000000e+00], [1.000000e+00, 1.000000e+00]]> : tensor<4x2xf32>}
// CHECK-DAG: %[[GB:.+]] = onnx.Constant {value = dense<[1.000000e+00, 1.000000e+00, 2.500000e-01, 5.000000e-01]> : tensor<4xf32>}
// CHECK-DAG: %[[D:.+]] = onnx.Constant {value = dense<{{\[}}[4.000000e+00, 5.000000e-01], [2.000000e+00, 0.000000e+00]]> : tensor<2x2xf32>}
// CHECK: %[[G:.+]] = transformer.linear %{{.+}}, %[[GU]] bias(%[[GB]])
// CHECK: %[[A:.+]] = transformer.gated_act %[[G]] kind = silu
// CHECK: transformer.linear %[[A]], %[[D]]
func.func @down_after_gated_act(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %gu = onnx.Constant {value = dense<[[3.0, 3.0], [5.0, 5.0], [4.0, 4.0], [2.0, 2.0]]> : tensor<4x2xf32>} : () -> tensor<4x2xf32>
  %gb = onnx.Constant {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %d = onnx.Constant {value = dense<[[1.0, 0.25], [0.5, 0.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %g = transformer.linear %x, %gu bias(%gb) : (tensor<?x2xf32>, tensor<4x2xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %a = transformer.gated_act %g kind = silu : tensor<?x4xf32> -> tensor<?x2xf32>
  %y = transformer.linear %a, %d {accel.calib_absmax = dense<[16.0, 1.0]> : tensor<2xf32>} : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// Not smoothed: a linear reading a function argument (attention's output,
// gelu's: nothing to fold 1/s into), and a norm whose output something
// other than the calibrated linears reads too (it would see x / s).
// CHECK-LABEL: func @untouched
// CHECK-DAG: onnx.Constant {value = dense<[1.000000e+00, 5.000000e-01]> : tensor<2xf32>}
// CHECK-DAG: onnx.Constant {value = dense<{{\[}}[1.000000e+00, 2.500000e-01]]> : tensor<1x2xf32>}
// CHECK-DAG: onnx.Constant {value = dense<{{\[}}[2.000000e+00, 2.500000e-01]]> : tensor<1x2xf32>}
// CHECK: transformer.linear %arg0, %{{.+}} {accel.calib_absmax = dense<[1.600000e+01, 1.000000e+00]> : tensor<2xf32>}
// CHECK: transformer.linear %{{.+}}, %{{.+}} {accel.calib_absmax = dense<[1.600000e+01, 1.000000e+00]> : tensor<2xf32>}
func.func @untouched(%x: tensor<?x2xf32>) -> (tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x2xf32>) {
  %g = onnx.Constant {value = dense<[1.0, 0.5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %w = onnx.Constant {value = dense<[[1.0, 0.25]]> : tensor<1x2xf32>} : () -> tensor<1x2xf32>
  %w2 = onnx.Constant {value = dense<[[2.0, 0.25]]> : tensor<1x2xf32>} : () -> tensor<1x2xf32>
  %y = transformer.linear %x, %w {accel.calib_absmax = dense<[16.0, 1.0]> : tensor<2xf32>} : (tensor<?x2xf32>, tensor<1x2xf32>) -> tensor<?x1xf32>
  %n = transformer.rms_norm %x, %g {epsilon = 1.0e-05} : tensor<?x2xf32>, tensor<2xf32>
  %z = transformer.linear %n, %w2 {accel.calib_absmax = dense<[16.0, 1.0]> : tensor<2xf32>} : (tensor<?x2xf32>, tensor<1x2xf32>) -> tensor<?x1xf32>
  return %y, %z, %n : tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x2xf32>
}
