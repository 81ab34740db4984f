// RUN: accel-opt %s -split-input-file -accel-raise-rotary 2>/dev/null | FileCheck %s
// RUN: accel-opt %s -split-input-file -accel-raise-rotary 2>&1 >/dev/null | FileCheck %s --check-prefix=DIAG

// Llama's rotary as torch dynamo writes it, on a token-major graph: cos/sin
// from positions × inv_freq (theta 1e4, head_dim 4), rotate_half by
// Slice/Neg/Concat, x·cos + rotate_half(x)·sin.
// CHECK-LABEL: func.func @half_split
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x2x?x4xf32>, %[[B:[^:]+]]: !transformer.batch)
// CHECK: %[[P:.+]] = transformer.positions %[[B]]
// CHECK: transformer.rotary %{{.+}}, %[[P]] style = half_split {rotary_dim = 4 : i64, theta = 1.000000e+04 : f64} : (tensor<?x2x4xf32>, tensor<?xi64>) -> tensor<?x2x4xf32>
// CHECK-NOT: onnx.Cos
// CHECK-NOT: onnx.Neg
func.func @half_split(%x: tensor<?x2x?x4xf32>, %batch: !transformer.batch) -> tensor<?x2x?x4xf32> {
  %pos = transformer.positions %batch : tensor<?xi64>
  %ax0 = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax1 = onnx.Constant {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %p2 = onnx.Unsqueeze %pos axes(%ax1) : (tensor<?xi64>, tensor<1xi64>) -> tensor<?x1xi64>
  %pf = onnx.Cast %p2 {to = 1 : i64} : (tensor<?x1xi64>) -> tensor<?x1xf32>
  %invf = onnx.Constant {value = dense<[[1.0, 0.00999999977]]> : tensor<1x2xf32>} : () -> tensor<1x2xf32>
  %f = onnx.MatMul %pf, %invf : (tensor<?x1xf32>, tensor<1x2xf32>) -> tensor<?x2xf32>
  %ff = onnx.Concat %f, %f {axis = -1 : i64} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x4xf32>
  %cos = onnx.Cos %ff : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %sin = onnx.Sin %ff : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %c4 = onnx.Unsqueeze %cos axes(%ax0) : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<1x?x4xf32>
  %s4 = onnx.Unsqueeze %sin axes(%ax0) : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<1x?x4xf32>
  %zero = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %two = onnx.Constant {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %end = onnx.Constant {value = dense<9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  %axis = onnx.Constant {value = dense<3> : tensor<1xi64>} : () -> tensor<1xi64>
  %lo = onnx.Slice %x, %zero, %two axes(%axis) : (tensor<?x2x?x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x2xf32>
  %hi = onnx.Slice %x, %two, %end axes(%axis) : (tensor<?x2x?x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x2xf32>
  %nhi = onnx.Neg %hi : (tensor<?x2x?x2xf32>) -> tensor<?x2x?x2xf32>
  %rot = onnx.Concat %nhi, %lo {axis = -1 : i64} : (tensor<?x2x?x2xf32>, tensor<?x2x?x2xf32>) -> tensor<?x2x?x4xf32>
  %a = onnx.Mul %x, %c4 : (tensor<?x2x?x4xf32>, tensor<1x?x4xf32>) -> tensor<?x2x?x4xf32>
  %b = onnx.Mul %rot, %s4 : (tensor<?x2x?x4xf32>, tensor<1x?x4xf32>) -> tensor<?x2x?x4xf32>
  %y = onnx.Add %a, %b : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  return %y : tensor<?x2x?x4xf32>
}

// -----

// Not raised: without the Neg the "rotation" is x·cos + swap(x)·sin, which
// no rotary embedding computes; the proof by evaluation rejects it.
// DIAG: warning: rotary embedding could not be raised: it is not x·cos + rotate(x)·sin
// CHECK-LABEL: func.func @no_negation
// CHECK-NOT: transformer.rotary
// CHECK: onnx.Cos
func.func @no_negation(%x: tensor<?x2x?x4xf32>, %batch: !transformer.batch) -> tensor<?x2x?x4xf32> {
  %pos = transformer.positions %batch : tensor<?xi64>
  %ax0 = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax1 = onnx.Constant {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %p2 = onnx.Unsqueeze %pos axes(%ax1) : (tensor<?xi64>, tensor<1xi64>) -> tensor<?x1xi64>
  %pf = onnx.Cast %p2 {to = 1 : i64} : (tensor<?x1xi64>) -> tensor<?x1xf32>
  %invf = onnx.Constant {value = dense<[[1.0, 0.00999999977]]> : tensor<1x2xf32>} : () -> tensor<1x2xf32>
  %f = onnx.MatMul %pf, %invf : (tensor<?x1xf32>, tensor<1x2xf32>) -> tensor<?x2xf32>
  %ff = onnx.Concat %f, %f {axis = -1 : i64} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x4xf32>
  %cos = onnx.Cos %ff : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %sin = onnx.Sin %ff : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %c4 = onnx.Unsqueeze %cos axes(%ax0) : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<1x?x4xf32>
  %s4 = onnx.Unsqueeze %sin axes(%ax0) : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<1x?x4xf32>
  %zero = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %two = onnx.Constant {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %end = onnx.Constant {value = dense<9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  %axis = onnx.Constant {value = dense<3> : tensor<1xi64>} : () -> tensor<1xi64>
  %lo = onnx.Slice %x, %zero, %two axes(%axis) : (tensor<?x2x?x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x2xf32>
  %hi = onnx.Slice %x, %two, %end axes(%axis) : (tensor<?x2x?x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x2xf32>
  %rot = onnx.Concat %hi, %lo {axis = -1 : i64} : (tensor<?x2x?x2xf32>, tensor<?x2x?x2xf32>) -> tensor<?x2x?x4xf32>
  %a = onnx.Mul %x, %c4 : (tensor<?x2x?x4xf32>, tensor<1x?x4xf32>) -> tensor<?x2x?x4xf32>
  %b = onnx.Mul %rot, %s4 : (tensor<?x2x?x4xf32>, tensor<1x?x4xf32>) -> tensor<?x2x?x4xf32>
  %y = onnx.Add %a, %b : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  return %y : tensor<?x2x?x4xf32>
}

// -----

// llama31_op18's rotary: HF's llama3 rule (theta 5e5, factor 8, low 1, high 4,
// original_max_position 32, head_dim 16) keeps frequency 0 and divides the
// other seven by 8, so inv_freq is not theta^(-2i/d). theta, the factor and
// band edges that reproduce every frequency with the runtime's formula are
// recovered from the frequencies measured at positions 1, 2, 4, ..., 2^20
// (with no blended frequency the edges are a choice: HF's low 1 / high 4 and
// the largest power of two below the first scaled wavelength, which here are
// the model's own).
// CHECK-LABEL: func.func @llama3_scaling
// CHECK: transformer.rotary %{{.+}}, %{{.+}} style = half_split {rotary_dim = 16 : i64, scaling = #transformer.rope_scaling<llama3, factor = 8.000000e+00, original_max_position = 32, low_freq_factor = 1.000000e+00, high_freq_factor = 4.000000e+00>, theta = 5.000000e+05 : f64}
// CHECK-NOT: onnx.Cos
func.func @llama3_scaling(%x: tensor<?x2x?x16xf32>, %batch: !transformer.batch) -> tensor<?x2x?x16xf32> {
  %pos = transformer.positions %batch : tensor<?xi64>
  %ax0 = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax1 = onnx.Constant {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %p2 = onnx.Unsqueeze %pos axes(%ax1) : (tensor<?xi64>, tensor<1xi64>) -> tensor<?x1xi64>
  %pf = onnx.Cast %p2 {to = 1 : i64} : (tensor<?x1xi64>) -> tensor<?x1xf32>
  %invf = onnx.Constant {value = dense<[[1.0, 0.024240344762802124, 0.004700753837823868, 0.0009115831344388425, 0.00017677668074611574, 3.428102354519069e-05, 6.647869668086059e-06, 1.289173155782919e-06]]> : tensor<1x8xf32>} : () -> tensor<1x8xf32>
  %f = onnx.MatMul %pf, %invf : (tensor<?x1xf32>, tensor<1x8xf32>) -> tensor<?x8xf32>
  %ff = onnx.Concat %f, %f {axis = -1 : i64} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x16xf32>
  %cos = onnx.Cos %ff : (tensor<?x16xf32>) -> tensor<?x16xf32>
  %sin = onnx.Sin %ff : (tensor<?x16xf32>) -> tensor<?x16xf32>
  %c4 = onnx.Unsqueeze %cos axes(%ax0) : (tensor<?x16xf32>, tensor<1xi64>) -> tensor<1x?x16xf32>
  %s4 = onnx.Unsqueeze %sin axes(%ax0) : (tensor<?x16xf32>, tensor<1xi64>) -> tensor<1x?x16xf32>
  %zero = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %half = onnx.Constant {value = dense<8> : tensor<1xi64>} : () -> tensor<1xi64>
  %end = onnx.Constant {value = dense<9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  %axis = onnx.Constant {value = dense<3> : tensor<1xi64>} : () -> tensor<1xi64>
  %lo = onnx.Slice %x, %zero, %half axes(%axis) : (tensor<?x2x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x8xf32>
  %hi = onnx.Slice %x, %half, %end axes(%axis) : (tensor<?x2x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x8xf32>
  %nhi = onnx.Neg %hi : (tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  %rot = onnx.Concat %nhi, %lo {axis = -1 : i64} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x16xf32>
  %a = onnx.Mul %x, %c4 : (tensor<?x2x?x16xf32>, tensor<1x?x16xf32>) -> tensor<?x2x?x16xf32>
  %b = onnx.Mul %rot, %s4 : (tensor<?x2x?x16xf32>, tensor<1x?x16xf32>) -> tensor<?x2x?x16xf32>
  %y = onnx.Add %a, %b : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
  return %y : tensor<?x2x?x16xf32>
}

// -----

// Llama 3.1 8B's rotary (head_dim 128, theta 5e5, factor 8, low 1, high 4,
// original_max_position 8192; frequencies computed here with the formula in
// f32): 29 frequencies kept, 29 divided by 8 and 6 blended between, whose
// line in 1 / wavelength gives both band edges, hence low and high once
// original_max_position is taken as the low edge's wavelength (8192).
// CHECK-LABEL: func.func @llama31_8b_scaling
// CHECK: transformer.rotary %{{.+}}, %{{.+}} style = half_split {rotary_dim = 128 : i64, scaling = #transformer.rope_scaling<llama3, factor = 8.000000e+00, original_max_position = 8192, low_freq_factor = 1.000000e+00, high_freq_factor = 4.000000e+00>, theta = 5.000000e+05 : f64}
func.func @llama31_8b_scaling(%x: tensor<?x2x?x128xf32>, %batch: !transformer.batch) -> tensor<?x2x?x128xf32> {
  %pos = transformer.positions %batch : tensor<?xi64>
  %ax0 = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax1 = onnx.Constant {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %p2 = onnx.Unsqueeze %pos axes(%ax1) : (tensor<?xi64>, tensor<1xi64>) -> tensor<?x1xi64>
  %pf = onnx.Cast %p2 {to = 1 : i64} : (tensor<?x1xi64>) -> tensor<?x1xf32>
  %invf = onnx.Constant {value = dense<[[1.0, 0.8146172165870667, 0.663601279258728, 0.5405809879302979, 0.44036662578582764, 0.3587302267551422, 0.2922278344631195, 0.2380538135766983, 0.193922758102417, 0.1579728126525879, 0.12868738174438477, 0.10483095049858093, 0.08539710193872452, 0.06956595182418823, 0.05666961893439293, 0.046164050698280334, 0.03760603070259094, 0.030634520575404167, 0.02495540864765644, 0.020329104736447334, 0.016560440883040428, 0.013490419834852219, 0.010989529080688953, 0.008952259086072445, 0.00729266507551074, 0.005940730683505535, 0.00483942124992609, 0.003942275885492563, 0.0032114461064338684, 0.0021665706299245358, 0.0013718936825171113, 0.0008567514596506953, 0.0005248460220173001, 0.0003126936499029398, 0.0001785077911335975, 9.556212171446532e-05, 7.784655463183299e-05, 6.341514381347224e-05, 5.165906986803748e-05, 4.208236714475788e-05, 3.428102354519069e-05, 2.7925909307668917e-05, 2.2748929040972143e-05, 1.8531669411459006e-05, 1.5096217794052791e-05, 1.2297638932068367e-05, 1.0017868589784484e-05, 8.160727702488657e-06, 6.647869668086059e-06, 5.415469331637723e-06, 4.411534519022098e-06, 3.593711880967021e-06, 2.927499735960737e-06, 2.3847917418606812e-06, 1.9426925064180978e-06, 1.5825507944100536e-06, 1.289173155782919e-06, 1.050182618200779e-06, 8.554969213037111e-07, 6.969025321268418e-07, 5.677088097399974e-07, 4.6246537976912805e-07, 3.76732259610435e-07, 3.068925877869333e-07]]> : tensor<1x64xf32>} : () -> tensor<1x64xf32>
  %f = onnx.MatMul %pf, %invf : (tensor<?x1xf32>, tensor<1x64xf32>) -> tensor<?x64xf32>
  %ff = onnx.Concat %f, %f {axis = -1 : i64} : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x128xf32>
  %cos = onnx.Cos %ff : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %sin = onnx.Sin %ff : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %c4 = onnx.Unsqueeze %cos axes(%ax0) : (tensor<?x128xf32>, tensor<1xi64>) -> tensor<1x?x128xf32>
  %s4 = onnx.Unsqueeze %sin axes(%ax0) : (tensor<?x128xf32>, tensor<1xi64>) -> tensor<1x?x128xf32>
  %zero = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %half = onnx.Constant {value = dense<64> : tensor<1xi64>} : () -> tensor<1xi64>
  %end = onnx.Constant {value = dense<9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  %axis = onnx.Constant {value = dense<3> : tensor<1xi64>} : () -> tensor<1xi64>
  %lo = onnx.Slice %x, %zero, %half axes(%axis) : (tensor<?x2x?x128xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x64xf32>
  %hi = onnx.Slice %x, %half, %end axes(%axis) : (tensor<?x2x?x128xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x64xf32>
  %nhi = onnx.Neg %hi : (tensor<?x2x?x64xf32>) -> tensor<?x2x?x64xf32>
  %rot = onnx.Concat %nhi, %lo {axis = -1 : i64} : (tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>) -> tensor<?x2x?x128xf32>
  %a = onnx.Mul %x, %c4 : (tensor<?x2x?x128xf32>, tensor<1x?x128xf32>) -> tensor<?x2x?x128xf32>
  %b = onnx.Mul %rot, %s4 : (tensor<?x2x?x128xf32>, tensor<1x?x128xf32>) -> tensor<?x2x?x128xf32>
  %y = onnx.Add %a, %b : (tensor<?x2x?x128xf32>, tensor<?x2x?x128xf32>) -> tensor<?x2x?x128xf32>
  return %y : tensor<?x2x?x128xf32>
}

// -----

// Every frequency of theta 1e4 divided by 4 (HF's `linear` rope scaling,
// head_dim 8).
// CHECK-LABEL: func.func @linear_scaling
// CHECK: transformer.rotary %{{.+}}, %{{.+}} style = half_split {rotary_dim = 8 : i64, scaling = #transformer.rope_scaling<linear, factor = 4.000000e+00>, theta = 1.000000e+04 : f64}
func.func @linear_scaling(%x: tensor<?x2x?x8xf32>, %batch: !transformer.batch) -> tensor<?x2x?x8xf32> {
  %pos = transformer.positions %batch : tensor<?xi64>
  %ax0 = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax1 = onnx.Constant {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %p2 = onnx.Unsqueeze %pos axes(%ax1) : (tensor<?xi64>, tensor<1xi64>) -> tensor<?x1xi64>
  %pf = onnx.Cast %p2 {to = 1 : i64} : (tensor<?x1xi64>) -> tensor<?x1xf32>
  %invf = onnx.Constant {value = dense<[[0.25, 0.025, 0.0025, 0.00025]]> : tensor<1x4xf32>} : () -> tensor<1x4xf32>
  %f = onnx.MatMul %pf, %invf : (tensor<?x1xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  %ff = onnx.Concat %f, %f {axis = -1 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  %cos = onnx.Cos %ff : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %sin = onnx.Sin %ff : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %c4 = onnx.Unsqueeze %cos axes(%ax0) : (tensor<?x8xf32>, tensor<1xi64>) -> tensor<1x?x8xf32>
  %s4 = onnx.Unsqueeze %sin axes(%ax0) : (tensor<?x8xf32>, tensor<1xi64>) -> tensor<1x?x8xf32>
  %zero = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %half = onnx.Constant {value = dense<4> : tensor<1xi64>} : () -> tensor<1xi64>
  %end = onnx.Constant {value = dense<9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  %axis = onnx.Constant {value = dense<3> : tensor<1xi64>} : () -> tensor<1xi64>
  %lo = onnx.Slice %x, %zero, %half axes(%axis) : (tensor<?x2x?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x4xf32>
  %hi = onnx.Slice %x, %half, %end axes(%axis) : (tensor<?x2x?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x4xf32>
  %nhi = onnx.Neg %hi : (tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %rot = onnx.Concat %nhi, %lo {axis = -1 : i64} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x8xf32>
  %a = onnx.Mul %x, %c4 : (tensor<?x2x?x8xf32>, tensor<1x?x8xf32>) -> tensor<?x2x?x8xf32>
  %b = onnx.Mul %rot, %s4 : (tensor<?x2x?x8xf32>, tensor<1x?x8xf32>) -> tensor<?x2x?x8xf32>
  %y = onnx.Add %a, %b : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  return %y : tensor<?x2x?x8xf32>
}

// -----

// Not raised: frequencies that follow no rule the runtime knows (neither
// theta^(-2i/d) nor a linear or llama3 scaling of it).
// DIAG: warning: rotary embedding could not be raised: it is not x·cos + rotate(x)·sin with frequencies theta^(-2i/d), plain or with a linear or llama3 rope scaling
// CHECK-LABEL: func.func @no_frequency_rule
// CHECK-NOT: transformer.rotary
// CHECK: onnx.Cos
func.func @no_frequency_rule(%x: tensor<?x2x?x8xf32>, %batch: !transformer.batch) -> tensor<?x2x?x8xf32> {
  %pos = transformer.positions %batch : tensor<?xi64>
  %ax0 = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax1 = onnx.Constant {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %p2 = onnx.Unsqueeze %pos axes(%ax1) : (tensor<?xi64>, tensor<1xi64>) -> tensor<?x1xi64>
  %pf = onnx.Cast %p2 {to = 1 : i64} : (tensor<?x1xi64>) -> tensor<?x1xf32>
  %invf = onnx.Constant {value = dense<[[1.0, 0.3, 0.02, 0.0001]]> : tensor<1x4xf32>} : () -> tensor<1x4xf32>
  %f = onnx.MatMul %pf, %invf : (tensor<?x1xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  %ff = onnx.Concat %f, %f {axis = -1 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  %cos = onnx.Cos %ff : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %sin = onnx.Sin %ff : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %c4 = onnx.Unsqueeze %cos axes(%ax0) : (tensor<?x8xf32>, tensor<1xi64>) -> tensor<1x?x8xf32>
  %s4 = onnx.Unsqueeze %sin axes(%ax0) : (tensor<?x8xf32>, tensor<1xi64>) -> tensor<1x?x8xf32>
  %zero = onnx.Constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %half = onnx.Constant {value = dense<4> : tensor<1xi64>} : () -> tensor<1xi64>
  %end = onnx.Constant {value = dense<9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  %axis = onnx.Constant {value = dense<3> : tensor<1xi64>} : () -> tensor<1xi64>
  %lo = onnx.Slice %x, %zero, %half axes(%axis) : (tensor<?x2x?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x4xf32>
  %hi = onnx.Slice %x, %half, %end axes(%axis) : (tensor<?x2x?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2x?x4xf32>
  %nhi = onnx.Neg %hi : (tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %rot = onnx.Concat %nhi, %lo {axis = -1 : i64} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x8xf32>
  %a = onnx.Mul %x, %c4 : (tensor<?x2x?x8xf32>, tensor<1x?x8xf32>) -> tensor<?x2x?x8xf32>
  %b = onnx.Mul %rot, %s4 : (tensor<?x2x?x8xf32>, tensor<1x?x8xf32>) -> tensor<?x2x?x8xf32>
  %y = onnx.Add %a, %b : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  return %y : tensor<?x2x?x8xf32>
}
