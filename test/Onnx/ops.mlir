// RUN: accel-opt %s -split-input-file | accel-opt -split-input-file | FileCheck %s

// Every onnx op parses, verifies and prints back in the form below; the
// output parses again (the second accel-opt). Optional operands and results
// are exercised present and absent, variadic ones with one and several
// values, and the element types exports use (bf16, f16, FP8, int4).

// Elementwise: unary

// CHECK-LABEL: func @unary_math
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[V0:[^ ,:]+]] = onnx.Sqrt %[[X]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[V1:[^ ,:]+]] = onnx.Reciprocal %[[V0]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[V2:[^ ,:]+]] = onnx.Neg %[[V1]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[V3:[^ ,:]+]] = onnx.Sin %[[V2]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[V4:[^ ,:]+]] = onnx.Cos %[[V3]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[V5:[^ ,:]+]] = onnx.Tanh %[[V4]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[V6:[^ ,:]+]] = onnx.Sigmoid %[[V5]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[V7:[^ ,:]+]] = onnx.Erf %[[V6]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[V8:[^ ,:]+]] = onnx.Relu %[[V7]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[V9:[^ ,:]+]] = onnx.Abs %[[V8]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[V10:[^ ,:]+]] = onnx.Exp %[[V9]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[V11:[^ ,:]+]] = onnx.Log %[[V10]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[V12:[^ ,:]+]] = onnx.Floor %[[V11]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[V13:[^ ,:]+]] = onnx.Ceil %[[V12]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[V14:[^ ,:]+]] = onnx.Identity %[[V13]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT: return %[[V14]] : tensor<?x64xf32>
func.func @unary_math(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %0 = onnx.Sqrt %x : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %1 = onnx.Reciprocal %0 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %2 = onnx.Neg %1 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %3 = onnx.Sin %2 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %4 = onnx.Cos %3 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %5 = onnx.Tanh %4 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %6 = onnx.Sigmoid %5 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %7 = onnx.Erf %6 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %8 = onnx.Relu %7 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %9 = onnx.Abs %8 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %10 = onnx.Exp %9 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %11 = onnx.Log %10 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %12 = onnx.Floor %11 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %13 = onnx.Ceil %12 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %14 = onnx.Identity %13 : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return %14 : tensor<?x64xf32>
}

// -----

// CHECK-LABEL: func @unary_unranked_bf16
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<*xbf16>) -> tensor<*xbf16>
// CHECK: %[[Y:[^ ,:]+]] = onnx.Sigmoid %[[X]] : (tensor<*xbf16>) -> tensor<*xbf16>
// CHECK-NEXT: return %[[Y]] : tensor<*xbf16>
func.func @unary_unranked_bf16(%x: tensor<*xbf16>) -> tensor<*xbf16> {
  %y = onnx.Sigmoid %x : (tensor<*xbf16>) -> tensor<*xbf16>
  return %y : tensor<*xbf16>
}

// -----

// CHECK-LABEL: func @gelu
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<?x3072xf16>) -> (tensor<?x3072xf16>, tensor<?x3072xf16>)
// CHECK: %[[EXACT:[^ ,:]+]] = onnx.Gelu %[[X]] : (tensor<?x3072xf16>) -> tensor<?x3072xf16>
// CHECK-NEXT: %[[TANH:[^ ,:]+]] = onnx.Gelu %[[X]] {approximate = "tanh"} : (tensor<?x3072xf16>) -> tensor<?x3072xf16>
// CHECK-NEXT: return %[[EXACT]], %[[TANH]] : tensor<?x3072xf16>, tensor<?x3072xf16>
func.func @gelu(%x: tensor<?x3072xf16>) -> (tensor<?x3072xf16>, tensor<?x3072xf16>) {
  %exact = onnx.Gelu %x : (tensor<?x3072xf16>) -> tensor<?x3072xf16>
  %tanh = onnx.Gelu %x {approximate = "tanh"} : (tensor<?x3072xf16>) -> tensor<?x3072xf16>
  return %exact, %tanh : tensor<?x3072xf16>, tensor<?x3072xf16>
}

// -----

// CHECK-LABEL: func @not_isnan
// CHECK-SAME: (%[[M:[^ ,:]+]]: tensor<?x?xi1>, %[[X:[^ ,:]+]]: tensor<?x32000xf32>) -> (tensor<?x?xi1>, tensor<?x32000xi1>)
// CHECK: %[[N:[^ ,:]+]] = onnx.Not %[[M]] : (tensor<?x?xi1>) -> tensor<?x?xi1>
// CHECK-NEXT: %[[NAN:[^ ,:]+]] = onnx.IsNaN %[[X]] : (tensor<?x32000xf32>) -> tensor<?x32000xi1>
// CHECK-NEXT: return %[[N]], %[[NAN]] : tensor<?x?xi1>, tensor<?x32000xi1>
func.func @not_isnan(%m: tensor<?x?xi1>, %x: tensor<?x32000xf32>) -> (tensor<?x?xi1>, tensor<?x32000xi1>) {
  %n = onnx.Not %m : (tensor<?x?xi1>) -> tensor<?x?xi1>
  %nan = onnx.IsNaN %x : (tensor<?x32000xf32>) -> tensor<?x32000xi1>
  return %n, %nan : tensor<?x?xi1>, tensor<?x32000xi1>
}

// -----

// Elementwise: binary

// CHECK-LABEL: func @arith
// CHECK-SAME: (%[[A:[^ ,:]+]]: tensor<2x?x64xf32>, %[[B:[^ ,:]+]]: tensor<64xf32>) -> tensor<2x?x64xf32>
// CHECK: %[[ADD:[^ ,:]+]] = onnx.Add %[[A]], %[[B]] : (tensor<2x?x64xf32>, tensor<64xf32>) -> tensor<2x?x64xf32>
// CHECK-NEXT: %[[SUB:[^ ,:]+]] = onnx.Sub %[[ADD]], %[[B]] : (tensor<2x?x64xf32>, tensor<64xf32>) -> tensor<2x?x64xf32>
// CHECK-NEXT: %[[MUL:[^ ,:]+]] = onnx.Mul %[[SUB]], %[[B]] : (tensor<2x?x64xf32>, tensor<64xf32>) -> tensor<2x?x64xf32>
// CHECK-NEXT: %[[DIV:[^ ,:]+]] = onnx.Div %[[MUL]], %[[B]] : (tensor<2x?x64xf32>, tensor<64xf32>) -> tensor<2x?x64xf32>
// CHECK-NEXT: return %[[DIV]] : tensor<2x?x64xf32>
func.func @arith(%a: tensor<2x?x64xf32>, %b: tensor<64xf32>) -> tensor<2x?x64xf32> {
  %add = onnx.Add %a, %b : (tensor<2x?x64xf32>, tensor<64xf32>) -> tensor<2x?x64xf32>
  %sub = onnx.Sub %add, %b : (tensor<2x?x64xf32>, tensor<64xf32>) -> tensor<2x?x64xf32>
  %mul = onnx.Mul %sub, %b : (tensor<2x?x64xf32>, tensor<64xf32>) -> tensor<2x?x64xf32>
  %div = onnx.Div %mul, %b : (tensor<2x?x64xf32>, tensor<64xf32>) -> tensor<2x?x64xf32>
  return %div : tensor<2x?x64xf32>
}

// -----

// CHECK-LABEL: func @broadcast_both_ways
// CHECK-SAME: (%[[ROWS:[^ ,:]+]]: tensor<?x1xi64>, %[[COLS:[^ ,:]+]]: tensor<1x?xi64>) -> tensor<?x?xi64>
// CHECK: %[[SUM:[^ ,:]+]] = onnx.Add %[[ROWS]], %[[COLS]] : (tensor<?x1xi64>, tensor<1x?xi64>) -> tensor<?x?xi64>
// CHECK-NEXT: return %[[SUM]] : tensor<?x?xi64>
func.func @broadcast_both_ways(%rows: tensor<?x1xi64>, %cols: tensor<1x?xi64>) -> tensor<?x?xi64> {
  %sum = onnx.Add %rows, %cols : (tensor<?x1xi64>, tensor<1x?xi64>) -> tensor<?x?xi64>
  return %sum : tensor<?x?xi64>
}

// -----

// CHECK-LABEL: func @mod_pow
// CHECK-SAME: (%[[I:[^ ,:]+]]: tensor<?xi64>, %[[N:[^ ,:]+]]: tensor<i64>, %[[X:[^ ,:]+]]: tensor<?x4096xf32>, %[[TWO:[^ ,:]+]]: tensor<f32>, %[[F:[^ ,:]+]]: tensor<4xf32>) -> (tensor<?xi64>, tensor<4xf32>, tensor<?x4096xf32>)
// CHECK: %[[R:[^ ,:]+]] = onnx.Mod %[[I]], %[[N]] : (tensor<?xi64>, tensor<i64>) -> tensor<?xi64>
// CHECK-NEXT: %[[FR:[^ ,:]+]] = onnx.Mod %[[F]], %[[F]] {fmod = 1 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[P:[^ ,:]+]] = onnx.Pow %[[X]], %[[TWO]] : (tensor<?x4096xf32>, tensor<f32>) -> tensor<?x4096xf32>
// CHECK-NEXT: return %[[R]], %[[FR]], %[[P]] : tensor<?xi64>, tensor<4xf32>, tensor<?x4096xf32>
func.func @mod_pow(%i: tensor<?xi64>, %n: tensor<i64>, %x: tensor<?x4096xf32>, %two: tensor<f32>, %f: tensor<4xf32>) -> (tensor<?xi64>, tensor<4xf32>, tensor<?x4096xf32>) {
  %r = onnx.Mod %i, %n : (tensor<?xi64>, tensor<i64>) -> tensor<?xi64>
  %fr = onnx.Mod %f, %f {fmod = 1 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %p = onnx.Pow %x, %two : (tensor<?x4096xf32>, tensor<f32>) -> tensor<?x4096xf32>
  return %r, %fr, %p : tensor<?xi64>, tensor<4xf32>, tensor<?x4096xf32>
}

// -----

// CHECK-LABEL: func @pow_integer_exponent
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<8xbf16>, %[[E:[^ ,:]+]]: tensor<i64>) -> tensor<8xbf16>
// CHECK: %[[P:[^ ,:]+]] = onnx.Pow %[[X]], %[[E]] : (tensor<8xbf16>, tensor<i64>) -> tensor<8xbf16>
// CHECK-NEXT: return %[[P]] : tensor<8xbf16>
func.func @pow_integer_exponent(%x: tensor<8xbf16>, %e: tensor<i64>) -> tensor<8xbf16> {
  %p = onnx.Pow %x, %e : (tensor<8xbf16>, tensor<i64>) -> tensor<8xbf16>
  return %p : tensor<8xbf16>
}

// -----

// CHECK-LABEL: func @compare
// CHECK-SAME: (%[[A:[^ ,:]+]]: tensor<1x?xi64>, %[[B:[^ ,:]+]]: tensor<?x1xi64>) -> (tensor<?x?xi1>, tensor<?x?xi1>, tensor<?x?xi1>, tensor<?x?xi1>, tensor<?x?xi1>)
// CHECK: %[[EQ:[^ ,:]+]] = onnx.Equal %[[A]], %[[B]] : (tensor<1x?xi64>, tensor<?x1xi64>) -> tensor<?x?xi1>
// CHECK-NEXT: %[[GT:[^ ,:]+]] = onnx.Greater %[[A]], %[[B]] : (tensor<1x?xi64>, tensor<?x1xi64>) -> tensor<?x?xi1>
// CHECK-NEXT: %[[GE:[^ ,:]+]] = onnx.GreaterOrEqual %[[A]], %[[B]] : (tensor<1x?xi64>, tensor<?x1xi64>) -> tensor<?x?xi1>
// CHECK-NEXT: %[[LT:[^ ,:]+]] = onnx.Less %[[A]], %[[B]] : (tensor<1x?xi64>, tensor<?x1xi64>) -> tensor<?x?xi1>
// CHECK-NEXT: %[[LE:[^ ,:]+]] = onnx.LessOrEqual %[[A]], %[[B]] : (tensor<1x?xi64>, tensor<?x1xi64>) -> tensor<?x?xi1>
// CHECK-NEXT: return %[[EQ]], %[[GT]], %[[GE]], %[[LT]], %[[LE]] : tensor<?x?xi1>, tensor<?x?xi1>, tensor<?x?xi1>, tensor<?x?xi1>, tensor<?x?xi1>
func.func @compare(%a: tensor<1x?xi64>, %b: tensor<?x1xi64>) -> (tensor<?x?xi1>, tensor<?x?xi1>, tensor<?x?xi1>, tensor<?x?xi1>, tensor<?x?xi1>) {
  %eq = onnx.Equal %a, %b : (tensor<1x?xi64>, tensor<?x1xi64>) -> tensor<?x?xi1>
  %gt = onnx.Greater %a, %b : (tensor<1x?xi64>, tensor<?x1xi64>) -> tensor<?x?xi1>
  %ge = onnx.GreaterOrEqual %a, %b : (tensor<1x?xi64>, tensor<?x1xi64>) -> tensor<?x?xi1>
  %lt = onnx.Less %a, %b : (tensor<1x?xi64>, tensor<?x1xi64>) -> tensor<?x?xi1>
  %le = onnx.LessOrEqual %a, %b : (tensor<1x?xi64>, tensor<?x1xi64>) -> tensor<?x?xi1>
  return %eq, %gt, %ge, %lt, %le : tensor<?x?xi1>, tensor<?x?xi1>, tensor<?x?xi1>, tensor<?x?xi1>, tensor<?x?xi1>
}

// -----

// CHECK-LABEL: func @logical
// CHECK-SAME: (%[[A:[^ ,:]+]]: tensor<?x?xi1>, %[[B:[^ ,:]+]]: tensor<1x?xi1>) -> tensor<?x?xi1>
// CHECK: %[[AND:[^ ,:]+]] = onnx.And %[[A]], %[[B]] : (tensor<?x?xi1>, tensor<1x?xi1>) -> tensor<?x?xi1>
// CHECK-NEXT: %[[OR:[^ ,:]+]] = onnx.Or %[[AND]], %[[B]] : (tensor<?x?xi1>, tensor<1x?xi1>) -> tensor<?x?xi1>
// CHECK-NEXT: %[[XOR:[^ ,:]+]] = onnx.Xor %[[OR]], %[[A]] : (tensor<?x?xi1>, tensor<?x?xi1>) -> tensor<?x?xi1>
// CHECK-NEXT: return %[[XOR]] : tensor<?x?xi1>
func.func @logical(%a: tensor<?x?xi1>, %b: tensor<1x?xi1>) -> tensor<?x?xi1> {
  %and = onnx.And %a, %b : (tensor<?x?xi1>, tensor<1x?xi1>) -> tensor<?x?xi1>
  %or = onnx.Or %and, %b : (tensor<?x?xi1>, tensor<1x?xi1>) -> tensor<?x?xi1>
  %xor = onnx.Xor %or, %a : (tensor<?x?xi1>, tensor<?x?xi1>) -> tensor<?x?xi1>
  return %xor : tensor<?x?xi1>
}

// -----

// CHECK-LABEL: func @where
// CHECK-SAME: (%[[C:[^ ,:]+]]: tensor<?x?xi1>, %[[ZERO:[^ ,:]+]]: tensor<f32>, %[[NINF:[^ ,:]+]]: tensor<f32>) -> tensor<?x?xf32>
// CHECK: %[[M:[^ ,:]+]] = onnx.Where %[[C]], %[[ZERO]], %[[NINF]] : (tensor<?x?xi1>, tensor<f32>, tensor<f32>) -> tensor<?x?xf32>
// CHECK-NEXT: return %[[M]] : tensor<?x?xf32>
func.func @where(%c: tensor<?x?xi1>, %zero: tensor<f32>, %ninf: tensor<f32>) -> tensor<?x?xf32> {
  %m = onnx.Where %c, %zero, %ninf : (tensor<?x?xi1>, tensor<f32>, tensor<f32>) -> tensor<?x?xf32>
  return %m : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func @variadic
// CHECK-SAME: (%[[A:[^ ,:]+]]: tensor<?x64xf32>, %[[B:[^ ,:]+]]: tensor<64xf32>, %[[C:[^ ,:]+]]: tensor<f32>) -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>)
// CHECK: %[[MAX:[^ ,:]+]] = onnx.Max %[[A]], %[[B]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[MIN:[^ ,:]+]] = onnx.Min %[[A]], %[[B]], %[[C]] : (tensor<?x64xf32>, tensor<64xf32>, tensor<f32>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[SUM:[^ ,:]+]] = onnx.Sum %[[A]], %[[B]], %[[C]] : (tensor<?x64xf32>, tensor<64xf32>, tensor<f32>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[ONE:[^ ,:]+]] = onnx.Max %[[A]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT: return %[[MAX]], %[[MIN]], %[[SUM]], %[[ONE]] : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>
func.func @variadic(%a: tensor<?x64xf32>, %b: tensor<64xf32>, %c: tensor<f32>) -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) {
  %max = onnx.Max %a, %b : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %min = onnx.Min %a, %b, %c : (tensor<?x64xf32>, tensor<64xf32>, tensor<f32>) -> tensor<?x64xf32>
  %sum = onnx.Sum %a, %b, %c : (tensor<?x64xf32>, tensor<64xf32>, tensor<f32>) -> tensor<?x64xf32>
  %one = onnx.Max %a : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return %max, %min, %sum, %one : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>
}

// -----

// Clip with both, one or none of its optional bounds.
// CHECK-LABEL: func @clip
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<?xf16>, %[[LO:[^ ,:]+]]: tensor<f16>, %[[HI:[^ ,:]+]]: tensor<f16>) -> (tensor<?xf16>, tensor<?xf16>, tensor<?xf16>, tensor<?xf16>)
// CHECK: %[[BOTH:[^ ,:]+]] = onnx.Clip %[[X]] min(%[[LO]]) max(%[[HI]]) : (tensor<?xf16>, tensor<f16>, tensor<f16>) -> tensor<?xf16>
// CHECK-NEXT: %[[UPPER:[^ ,:]+]] = onnx.Clip %[[X]] max(%[[HI]]) : (tensor<?xf16>, tensor<f16>) -> tensor<?xf16>
// CHECK-NEXT: %[[LOWER:[^ ,:]+]] = onnx.Clip %[[X]] min(%[[LO]]) : (tensor<?xf16>, tensor<f16>) -> tensor<?xf16>
// CHECK-NEXT: %[[NONE:[^ ,:]+]] = onnx.Clip %[[X]] : (tensor<?xf16>) -> tensor<?xf16>
// CHECK-NEXT: return %[[BOTH]], %[[UPPER]], %[[LOWER]], %[[NONE]] : tensor<?xf16>, tensor<?xf16>, tensor<?xf16>, tensor<?xf16>
func.func @clip(%x: tensor<?xf16>, %lo: tensor<f16>, %hi: tensor<f16>) -> (tensor<?xf16>, tensor<?xf16>, tensor<?xf16>, tensor<?xf16>) {
  %both = onnx.Clip %x min(%lo) max(%hi) : (tensor<?xf16>, tensor<f16>, tensor<f16>) -> tensor<?xf16>
  %upper = onnx.Clip %x max(%hi) : (tensor<?xf16>, tensor<f16>) -> tensor<?xf16>
  %lower = onnx.Clip %x min(%lo) : (tensor<?xf16>, tensor<f16>) -> tensor<?xf16>
  %none = onnx.Clip %x : (tensor<?xf16>) -> tensor<?xf16>
  return %both, %upper, %lower, %none : tensor<?xf16>, tensor<?xf16>, tensor<?xf16>, tensor<?xf16>
}

// -----

// CHECK-LABEL: func @cast
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<?x4096xbf16>, %[[I:[^ ,:]+]]: tensor<?xi64>) -> (tensor<?x4096xf32>, tensor<?x4096xf8E4M3FN>, tensor<?xi1>, tensor<?xf8E5M2>)
// CHECK: %[[F:[^ ,:]+]] = onnx.Cast %[[X]] {to = 1 : i64} : (tensor<?x4096xbf16>) -> tensor<?x4096xf32>
// CHECK-NEXT: %[[F8:[^ ,:]+]] = onnx.Cast %[[X]] {saturate = 0 : i64, to = 17 : i64} : (tensor<?x4096xbf16>) -> tensor<?x4096xf8E4M3FN>
// CHECK-NEXT: %[[B:[^ ,:]+]] = onnx.Cast %[[I]] {to = 9 : i64} : (tensor<?xi64>) -> tensor<?xi1>
// CHECK-NEXT: %[[E5:[^ ,:]+]] = onnx.Cast %[[I]] {to = 19 : i64} : (tensor<?xi64>) -> tensor<?xf8E5M2>
// CHECK-NEXT: return %[[F]], %[[F8]], %[[B]], %[[E5]] : tensor<?x4096xf32>, tensor<?x4096xf8E4M3FN>, tensor<?xi1>, tensor<?xf8E5M2>
func.func @cast(%x: tensor<?x4096xbf16>, %i: tensor<?xi64>) -> (tensor<?x4096xf32>, tensor<?x4096xf8E4M3FN>, tensor<?xi1>, tensor<?xf8E5M2>) {
  %f = onnx.Cast %x {to = 1 : i64} : (tensor<?x4096xbf16>) -> tensor<?x4096xf32>
  %f8 = onnx.Cast %x {saturate = 0 : i64, to = 17 : i64} : (tensor<?x4096xbf16>) -> tensor<?x4096xf8E4M3FN>
  %b = onnx.Cast %i {to = 9 : i64} : (tensor<?xi64>) -> tensor<?xi1>
  %e5 = onnx.Cast %i {to = 19 : i64} : (tensor<?xi64>) -> tensor<?xf8E5M2>
  return %f, %f8, %b, %e5 : tensor<?x4096xf32>, tensor<?x4096xf8E4M3FN>, tensor<?xi1>, tensor<?xf8E5M2>
}

// -----

// CHECK-LABEL: func @cast_every_type
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<4xf32>) -> (tensor<4xui8>, tensor<4xi8>, tensor<4xui16>, tensor<4xi16>, tensor<4xi32>, tensor<4xf16>, tensor<4xf64>, tensor<4xui32>, tensor<4xui64>, tensor<4xbf16>, tensor<4xf8E4M3FNUZ>, tensor<4xf8E5M2FNUZ>, tensor<4xui4>, tensor<4xi4>)
// CHECK: %[[V0:[^ ,:]+]] = onnx.Cast %[[X]] {to = 2 : i64} : (tensor<4xf32>) -> tensor<4xui8>
// CHECK-NEXT: %[[V1:[^ ,:]+]] = onnx.Cast %[[X]] {to = 3 : i64} : (tensor<4xf32>) -> tensor<4xi8>
// CHECK-NEXT: %[[V2:[^ ,:]+]] = onnx.Cast %[[X]] {to = 4 : i64} : (tensor<4xf32>) -> tensor<4xui16>
// CHECK-NEXT: %[[V3:[^ ,:]+]] = onnx.Cast %[[X]] {to = 5 : i64} : (tensor<4xf32>) -> tensor<4xi16>
// CHECK-NEXT: %[[V4:[^ ,:]+]] = onnx.Cast %[[X]] {to = 6 : i64} : (tensor<4xf32>) -> tensor<4xi32>
// CHECK-NEXT: %[[V5:[^ ,:]+]] = onnx.Cast %[[X]] {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT: %[[V6:[^ ,:]+]] = onnx.Cast %[[X]] {to = 11 : i64} : (tensor<4xf32>) -> tensor<4xf64>
// CHECK-NEXT: %[[V7:[^ ,:]+]] = onnx.Cast %[[X]] {to = 12 : i64} : (tensor<4xf32>) -> tensor<4xui32>
// CHECK-NEXT: %[[V8:[^ ,:]+]] = onnx.Cast %[[X]] {to = 13 : i64} : (tensor<4xf32>) -> tensor<4xui64>
// CHECK-NEXT: %[[V9:[^ ,:]+]] = onnx.Cast %[[X]] {to = 16 : i64} : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK-NEXT: %[[V10:[^ ,:]+]] = onnx.Cast %[[X]] {to = 18 : i64} : (tensor<4xf32>) -> tensor<4xf8E4M3FNUZ>
// CHECK-NEXT: %[[V11:[^ ,:]+]] = onnx.Cast %[[X]] {to = 20 : i64} : (tensor<4xf32>) -> tensor<4xf8E5M2FNUZ>
// CHECK-NEXT: %[[V12:[^ ,:]+]] = onnx.Cast %[[X]] {to = 21 : i64} : (tensor<4xf32>) -> tensor<4xui4>
// CHECK-NEXT: %[[V13:[^ ,:]+]] = onnx.Cast %[[X]] {to = 22 : i64} : (tensor<4xf32>) -> tensor<4xi4>
// CHECK-NEXT: return %[[V0]], %[[V1]], %[[V2]], %[[V3]], %[[V4]], %[[V5]], %[[V6]], %[[V7]], %[[V8]], %[[V9]], %[[V10]], %[[V11]], %[[V12]], %[[V13]] : tensor<4xui8>, tensor<4xi8>, tensor<4xui16>, tensor<4xi16>, tensor<4xi32>, tensor<4xf16>, tensor<4xf64>, tensor<4xui32>, tensor<4xui64>, tensor<4xbf16>, tensor<4xf8E4M3FNUZ>, tensor<4xf8E5M2FNUZ>, tensor<4xui4>, tensor<4xi4>
func.func @cast_every_type(%x: tensor<4xf32>) -> (tensor<4xui8>, tensor<4xi8>, tensor<4xui16>, tensor<4xi16>, tensor<4xi32>, tensor<4xf16>, tensor<4xf64>, tensor<4xui32>, tensor<4xui64>, tensor<4xbf16>, tensor<4xf8E4M3FNUZ>, tensor<4xf8E5M2FNUZ>, tensor<4xui4>, tensor<4xi4>) {
  %0 = onnx.Cast %x {to = 2 : i64} : (tensor<4xf32>) -> tensor<4xui8>
  %1 = onnx.Cast %x {to = 3 : i64} : (tensor<4xf32>) -> tensor<4xi8>
  %2 = onnx.Cast %x {to = 4 : i64} : (tensor<4xf32>) -> tensor<4xui16>
  %3 = onnx.Cast %x {to = 5 : i64} : (tensor<4xf32>) -> tensor<4xi16>
  %4 = onnx.Cast %x {to = 6 : i64} : (tensor<4xf32>) -> tensor<4xi32>
  %5 = onnx.Cast %x {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16>
  %6 = onnx.Cast %x {to = 11 : i64} : (tensor<4xf32>) -> tensor<4xf64>
  %7 = onnx.Cast %x {to = 12 : i64} : (tensor<4xf32>) -> tensor<4xui32>
  %8 = onnx.Cast %x {to = 13 : i64} : (tensor<4xf32>) -> tensor<4xui64>
  %9 = onnx.Cast %x {to = 16 : i64} : (tensor<4xf32>) -> tensor<4xbf16>
  %10 = onnx.Cast %x {to = 18 : i64} : (tensor<4xf32>) -> tensor<4xf8E4M3FNUZ>
  %11 = onnx.Cast %x {to = 20 : i64} : (tensor<4xf32>) -> tensor<4xf8E5M2FNUZ>
  %12 = onnx.Cast %x {to = 21 : i64} : (tensor<4xf32>) -> tensor<4xui4>
  %13 = onnx.Cast %x {to = 22 : i64} : (tensor<4xf32>) -> tensor<4xi4>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13 : tensor<4xui8>, tensor<4xi8>, tensor<4xui16>, tensor<4xi16>, tensor<4xi32>, tensor<4xf16>, tensor<4xf64>, tensor<4xui32>, tensor<4xui64>, tensor<4xbf16>, tensor<4xf8E4M3FNUZ>, tensor<4xf8E5M2FNUZ>, tensor<4xui4>, tensor<4xi4>
}

// -----

// Matrix products

// CHECK-LABEL: func @matmul
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<?x?x4096xf16>, %[[W:[^ ,:]+]]: tensor<4096x11008xf16>) -> tensor<?x?x11008xf16>
// CHECK: %[[Y:[^ ,:]+]] = onnx.MatMul %[[X]], %[[W]] : (tensor<?x?x4096xf16>, tensor<4096x11008xf16>) -> tensor<?x?x11008xf16>
// CHECK-NEXT: return %[[Y]] : tensor<?x?x11008xf16>
func.func @matmul(%x: tensor<?x?x4096xf16>, %w: tensor<4096x11008xf16>) -> tensor<?x?x11008xf16> {
  %y = onnx.MatMul %x, %w : (tensor<?x?x4096xf16>, tensor<4096x11008xf16>) -> tensor<?x?x11008xf16>
  return %y : tensor<?x?x11008xf16>
}

// -----

// CHECK-LABEL: func @matmul_batched_and_vectors
// CHECK-SAME: (%[[Q:[^ ,:]+]]: tensor<1x32x?x128xbf16>, %[[KT:[^ ,:]+]]: tensor<1x32x128x?xbf16>, %[[V:[^ ,:]+]]: tensor<128xbf16>) -> (tensor<1x32x?x?xbf16>, tensor<1x32x?xbf16>)
// CHECK: %[[S:[^ ,:]+]] = onnx.MatMul %[[Q]], %[[KT]] : (tensor<1x32x?x128xbf16>, tensor<1x32x128x?xbf16>) -> tensor<1x32x?x?xbf16>
// CHECK-NEXT: %[[MV:[^ ,:]+]] = onnx.MatMul %[[Q]], %[[V]] : (tensor<1x32x?x128xbf16>, tensor<128xbf16>) -> tensor<1x32x?xbf16>
// CHECK-NEXT: return %[[S]], %[[MV]] : tensor<1x32x?x?xbf16>, tensor<1x32x?xbf16>
func.func @matmul_batched_and_vectors(%q: tensor<1x32x?x128xbf16>, %kt: tensor<1x32x128x?xbf16>, %v: tensor<128xbf16>) -> (tensor<1x32x?x?xbf16>, tensor<1x32x?xbf16>) {
  %s = onnx.MatMul %q, %kt : (tensor<1x32x?x128xbf16>, tensor<1x32x128x?xbf16>) -> tensor<1x32x?x?xbf16>
  %mv = onnx.MatMul %q, %v : (tensor<1x32x?x128xbf16>, tensor<128xbf16>) -> tensor<1x32x?xbf16>
  return %s, %mv : tensor<1x32x?x?xbf16>, tensor<1x32x?xbf16>
}

// -----

// CHECK-LABEL: func @gemm
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<?x768xf32>, %[[W:[^ ,:]+]]: tensor<3072x768xf32>, %[[B:[^ ,:]+]]: tensor<3072xf32>) -> (tensor<?x3072xf32>, tensor<?x3072xf32>)
// CHECK: %[[Y:[^ ,:]+]] = onnx.Gemm %[[X]], %[[W]] C(%[[B]]) {alpha = 5.000000e-01 : f32, transB = 1 : i64} : (tensor<?x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>) -> tensor<?x3072xf32>
// CHECK-NEXT: %[[NOBIAS:[^ ,:]+]] = onnx.Gemm %[[X]], %[[W]] {transB = 1 : i64} : (tensor<?x768xf32>, tensor<3072x768xf32>) -> tensor<?x3072xf32>
// CHECK-NEXT: return %[[Y]], %[[NOBIAS]] : tensor<?x3072xf32>, tensor<?x3072xf32>
func.func @gemm(%x: tensor<?x768xf32>, %w: tensor<3072x768xf32>, %b: tensor<3072xf32>) -> (tensor<?x3072xf32>, tensor<?x3072xf32>) {
  %y = onnx.Gemm %x, %w C(%b) {alpha = 5.000000e-01 : f32, transB = 1 : i64} : (tensor<?x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>) -> tensor<?x3072xf32>
  %nobias = onnx.Gemm %x, %w {transB = 1 : i64} : (tensor<?x768xf32>, tensor<3072x768xf32>) -> tensor<?x3072xf32>
  return %y, %nobias : tensor<?x3072xf32>, tensor<?x3072xf32>
}

// -----

// Shape and layout

// CHECK-LABEL: func @reshape
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<1x?x4096xf16>, %[[SHAPE:[^ ,:]+]]: tensor<4xi64>) -> tensor<1x?x32x128xf16>
// CHECK: %[[Y:[^ ,:]+]] = onnx.Reshape %[[X]], %[[SHAPE]] : (tensor<1x?x4096xf16>, tensor<4xi64>) -> tensor<1x?x32x128xf16>
// CHECK-NEXT: return %[[Y]] : tensor<1x?x32x128xf16>
func.func @reshape(%x: tensor<1x?x4096xf16>, %shape: tensor<4xi64>) -> tensor<1x?x32x128xf16> {
  %y = onnx.Reshape %x, %shape : (tensor<1x?x4096xf16>, tensor<4xi64>) -> tensor<1x?x32x128xf16>
  return %y : tensor<1x?x32x128xf16>
}

// -----

// CHECK-LABEL: func @reshape_allowzero
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<2x3xf32>, %[[SHAPE:[^ ,:]+]]: tensor<2xi64>) -> tensor<3x2xf32>
// CHECK: %[[Y:[^ ,:]+]] = onnx.Reshape %[[X]], %[[SHAPE]] {allowzero = 1 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
// CHECK-NEXT: return %[[Y]] : tensor<3x2xf32>
func.func @reshape_allowzero(%x: tensor<2x3xf32>, %shape: tensor<2xi64>) -> tensor<3x2xf32> {
  %y = onnx.Reshape %x, %shape {allowzero = 1 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func @transpose
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<1x?x32x128xf16>) -> (tensor<1x32x?x128xf16>, tensor<128x32x?x1xf16>)
// CHECK: %[[Y:[^ ,:]+]] = onnx.Transpose %[[X]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x?x32x128xf16>) -> tensor<1x32x?x128xf16>
// CHECK-NEXT: %[[R:[^ ,:]+]] = onnx.Transpose %[[X]] : (tensor<1x?x32x128xf16>) -> tensor<128x32x?x1xf16>
// CHECK-NEXT: return %[[Y]], %[[R]] : tensor<1x32x?x128xf16>, tensor<128x32x?x1xf16>
func.func @transpose(%x: tensor<1x?x32x128xf16>) -> (tensor<1x32x?x128xf16>, tensor<128x32x?x1xf16>) {
  %y = onnx.Transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x?x32x128xf16>) -> tensor<1x32x?x128xf16>
  %r = onnx.Transpose %x : (tensor<1x?x32x128xf16>) -> tensor<128x32x?x1xf16>
  return %y, %r : tensor<1x32x?x128xf16>, tensor<128x32x?x1xf16>
}

// -----

// CHECK-LABEL: func @concat
// CHECK-SAME: (%[[PAST:[^ ,:]+]]: tensor<1x8x?x128xf16>, %[[NEW:[^ ,:]+]]: tensor<1x8x1x128xf16>, %[[A:[^ ,:]+]]: tensor<2x3xi64>, %[[B:[^ ,:]+]]: tensor<2x5xi64>) -> (tensor<1x8x?x128xf16>, tensor<2x8xi64>, tensor<2x3xi64>)
// CHECK: %[[KV:[^ ,:]+]] = onnx.Concat %[[PAST]], %[[NEW]] {axis = 2 : i64} : (tensor<1x8x?x128xf16>, tensor<1x8x1x128xf16>) -> tensor<1x8x?x128xf16>
// CHECK-NEXT: %[[AB:[^ ,:]+]] = onnx.Concat %[[A]], %[[B]] {axis = -1 : i64} : (tensor<2x3xi64>, tensor<2x5xi64>) -> tensor<2x8xi64>
// CHECK-NEXT: %[[ONE:[^ ,:]+]] = onnx.Concat %[[A]] {axis = 0 : i64} : (tensor<2x3xi64>) -> tensor<2x3xi64>
// CHECK-NEXT: return %[[KV]], %[[AB]], %[[ONE]] : tensor<1x8x?x128xf16>, tensor<2x8xi64>, tensor<2x3xi64>
func.func @concat(%past: tensor<1x8x?x128xf16>, %new: tensor<1x8x1x128xf16>, %a: tensor<2x3xi64>, %b: tensor<2x5xi64>) -> (tensor<1x8x?x128xf16>, tensor<2x8xi64>, tensor<2x3xi64>) {
  %kv = onnx.Concat %past, %new {axis = 2 : i64} : (tensor<1x8x?x128xf16>, tensor<1x8x1x128xf16>) -> tensor<1x8x?x128xf16>
  %ab = onnx.Concat %a, %b {axis = -1 : i64} : (tensor<2x3xi64>, tensor<2x5xi64>) -> tensor<2x8xi64>
  %one = onnx.Concat %a {axis = 0 : i64} : (tensor<2x3xi64>) -> tensor<2x3xi64>
  return %kv, %ab, %one : tensor<1x8x?x128xf16>, tensor<2x8xi64>, tensor<2x3xi64>
}

// -----

// Slice with and without its optional axes / steps.
// CHECK-LABEL: func @slice
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<1x32x?x128xf16>, %[[STARTS:[^ ,:]+]]: tensor<1xi64>, %[[ENDS:[^ ,:]+]]: tensor<1xi64>, %[[AXES:[^ ,:]+]]: tensor<1xi64>, %[[STEPS:[^ ,:]+]]: tensor<1xi64>) -> (tensor<1x32x?x64xf16>, tensor<1x32x?x64xf16>, tensor<?x32x?x128xf16>, tensor<?x32x?x128xf16>)
// CHECK: %[[A:[^ ,:]+]] = onnx.Slice %[[X]], %[[STARTS]], %[[ENDS]] axes(%[[AXES]]) : (tensor<1x32x?x128xf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x32x?x64xf16>
// CHECK-NEXT: %[[B:[^ ,:]+]] = onnx.Slice %[[X]], %[[STARTS]], %[[ENDS]] axes(%[[AXES]]) steps(%[[STEPS]]) : (tensor<1x32x?x128xf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x32x?x64xf16>
// CHECK-NEXT: %[[C:[^ ,:]+]] = onnx.Slice %[[X]], %[[STARTS]], %[[ENDS]] steps(%[[STEPS]]) : (tensor<1x32x?x128xf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x32x?x128xf16>
// CHECK-NEXT: %[[D:[^ ,:]+]] = onnx.Slice %[[X]], %[[STARTS]], %[[ENDS]] : (tensor<1x32x?x128xf16>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x32x?x128xf16>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[D]] : tensor<1x32x?x64xf16>, tensor<1x32x?x64xf16>, tensor<?x32x?x128xf16>, tensor<?x32x?x128xf16>
func.func @slice(%x: tensor<1x32x?x128xf16>, %starts: tensor<1xi64>, %ends: tensor<1xi64>, %axes: tensor<1xi64>, %steps: tensor<1xi64>) -> (tensor<1x32x?x64xf16>, tensor<1x32x?x64xf16>, tensor<?x32x?x128xf16>, tensor<?x32x?x128xf16>) {
  %a = onnx.Slice %x, %starts, %ends axes(%axes) : (tensor<1x32x?x128xf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x32x?x64xf16>
  %b = onnx.Slice %x, %starts, %ends axes(%axes) steps(%steps) : (tensor<1x32x?x128xf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x32x?x64xf16>
  %c = onnx.Slice %x, %starts, %ends steps(%steps) : (tensor<1x32x?x128xf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x32x?x128xf16>
  %d = onnx.Slice %x, %starts, %ends : (tensor<1x32x?x128xf16>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x32x?x128xf16>
  return %a, %b, %c, %d : tensor<1x32x?x64xf16>, tensor<1x32x?x64xf16>, tensor<?x32x?x128xf16>, tensor<?x32x?x128xf16>
}

// -----

// CHECK-LABEL: func @slice_i32
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<?xf32>, %[[S:[^ ,:]+]]: tensor<1xi32>, %[[E:[^ ,:]+]]: tensor<1xi32>) -> tensor<?xf32>
// CHECK: %[[Y:[^ ,:]+]] = onnx.Slice %[[X]], %[[S]], %[[E]] : (tensor<?xf32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xf32>
// CHECK-NEXT: return %[[Y]] : tensor<?xf32>
func.func @slice_i32(%x: tensor<?xf32>, %s: tensor<1xi32>, %e: tensor<1xi32>) -> tensor<?xf32> {
  %y = onnx.Slice %x, %s, %e : (tensor<?xf32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

// Split in its three forms: the split input (opset 13), num_outputs
// (opset 18), the split attribute (opset 11).
// CHECK-LABEL: func @split
// CHECK-SAME: (%[[QKV:[^ ,:]+]]: tensor<?x6144xf16>, %[[SIZES:[^ ,:]+]]: tensor<3xi64>) -> (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<?x3072xf16>, tensor<?x3072xf16>, tensor<?x4096xf16>, tensor<?x2048xf16>)
// CHECK: %[[Q_K_V:[^ ,:]+]]:3 = onnx.Split %[[QKV]] split(%[[SIZES]]) {axis = -1 : i64} : (tensor<?x6144xf16>, tensor<3xi64>) -> (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>)
// CHECK-NEXT: %[[LO_HI:[^ ,:]+]]:2 = onnx.Split %[[QKV]] {axis = 1 : i64, num_outputs = 2 : i64} : (tensor<?x6144xf16>) -> (tensor<?x3072xf16>, tensor<?x3072xf16>)
// CHECK-NEXT: %[[A_B:[^ ,:]+]]:2 = onnx.Split %[[QKV]] {axis = 1 : i64, split = array<i64: 4096, 2048>} : (tensor<?x6144xf16>) -> (tensor<?x4096xf16>, tensor<?x2048xf16>)
// CHECK-NEXT: return %[[Q_K_V]]#0, %[[Q_K_V]]#1, %[[Q_K_V]]#2, %[[LO_HI]]#0, %[[LO_HI]]#1, %[[A_B]]#0, %[[A_B]]#1 : tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<?x3072xf16>, tensor<?x3072xf16>, tensor<?x4096xf16>, tensor<?x2048xf16>
func.func @split(%qkv: tensor<?x6144xf16>, %sizes: tensor<3xi64>) -> (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<?x3072xf16>, tensor<?x3072xf16>, tensor<?x4096xf16>, tensor<?x2048xf16>) {
  %q, %k, %v = onnx.Split %qkv split(%sizes) {axis = -1 : i64} : (tensor<?x6144xf16>, tensor<3xi64>) -> (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>)
  %lo, %hi = onnx.Split %qkv {axis = 1 : i64, num_outputs = 2 : i64} : (tensor<?x6144xf16>) -> (tensor<?x3072xf16>, tensor<?x3072xf16>)
  %a, %b = onnx.Split %qkv {axis = 1 : i64, split = array<i64: 4096, 2048>} : (tensor<?x6144xf16>) -> (tensor<?x4096xf16>, tensor<?x2048xf16>)
  return %q, %k, %v, %lo, %hi, %a, %b : tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<?x3072xf16>, tensor<?x3072xf16>, tensor<?x4096xf16>, tensor<?x2048xf16>
}

// -----

// Squeeze / Unsqueeze with axes as an input (opset 13) and as an attribute
// (opset 11); Squeeze without axes.
// CHECK-LABEL: func @squeeze_unsqueeze
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<1x?x1xi64>, %[[AXES:[^ ,:]+]]: tensor<1xi64>, %[[IDS:[^ ,:]+]]: tensor<?x?xi64>, %[[TWO:[^ ,:]+]]: tensor<2xi64>) -> (tensor<1x?xi64>, tensor<?x1xi64>, tensor<?x1x1x?xi64>, tensor<?x1x1x?xi64>, tensor<?xf32>)
// CHECK: %[[A:[^ ,:]+]] = onnx.Squeeze %[[X]] axes(%[[AXES]]) : (tensor<1x?x1xi64>, tensor<1xi64>) -> tensor<1x?xi64>
// CHECK-NEXT: %[[B:[^ ,:]+]] = onnx.Squeeze %[[X]] {axes = array<i64: 0>} : (tensor<1x?x1xi64>) -> tensor<?x1xi64>
// CHECK-NEXT: %[[C:[^ ,:]+]] = onnx.Unsqueeze %[[IDS]] axes(%[[TWO]]) : (tensor<?x?xi64>, tensor<2xi64>) -> tensor<?x1x1x?xi64>
// CHECK-NEXT: %[[D:[^ ,:]+]] = onnx.Unsqueeze %[[IDS]] {axes = array<i64: 1, -2>} : (tensor<?x?xi64>) -> tensor<?x1x1x?xi64>
// CHECK-NEXT: %[[S:[^ ,:]+]] = onnx.Constant {value = dense<1.000000e+00> : tensor<1x4x1xf32>} : () -> tensor<1x4x1xf32>
// CHECK-NEXT: %[[E:[^ ,:]+]] = onnx.Squeeze %[[S]] : (tensor<1x4x1xf32>) -> tensor<?xf32>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]] : tensor<1x?xi64>, tensor<?x1xi64>, tensor<?x1x1x?xi64>, tensor<?x1x1x?xi64>, tensor<?xf32>
func.func @squeeze_unsqueeze(%x: tensor<1x?x1xi64>, %axes: tensor<1xi64>, %ids: tensor<?x?xi64>, %two: tensor<2xi64>) -> (tensor<1x?xi64>, tensor<?x1xi64>, tensor<?x1x1x?xi64>, tensor<?x1x1x?xi64>, tensor<?xf32>) {
  %a = onnx.Squeeze %x axes(%axes) : (tensor<1x?x1xi64>, tensor<1xi64>) -> tensor<1x?xi64>
  %b = onnx.Squeeze %x {axes = array<i64: 0>} : (tensor<1x?x1xi64>) -> tensor<?x1xi64>
  %c = onnx.Unsqueeze %ids axes(%two) : (tensor<?x?xi64>, tensor<2xi64>) -> tensor<?x1x1x?xi64>
  %d = onnx.Unsqueeze %ids {axes = array<i64: 1, -2>} : (tensor<?x?xi64>) -> tensor<?x1x1x?xi64>
  %s = onnx.Constant {value = dense<1.0> : tensor<1x4x1xf32>} : () -> tensor<1x4x1xf32>
  %e = onnx.Squeeze %s : (tensor<1x4x1xf32>) -> tensor<?xf32>
  return %a, %b, %c, %d, %e : tensor<1x?xi64>, tensor<?x1xi64>, tensor<?x1x1x?xi64>, tensor<?x1x1x?xi64>, tensor<?xf32>
}

// -----

// CHECK-LABEL: func @expand_tile
// CHECK-SAME: (%[[MASK:[^ ,:]+]]: tensor<1x1x?x?xi1>, %[[SHAPE:[^ ,:]+]]: tensor<4xi64>, %[[KV:[^ ,:]+]]: tensor<1x8x?x128xf16>, %[[REPEATS:[^ ,:]+]]: tensor<4xi64>) -> (tensor<?x1x?x?xi1>, tensor<1x32x?x128xf16>)
// CHECK: %[[E:[^ ,:]+]] = onnx.Expand %[[MASK]], %[[SHAPE]] : (tensor<1x1x?x?xi1>, tensor<4xi64>) -> tensor<?x1x?x?xi1>
// CHECK-NEXT: %[[T:[^ ,:]+]] = onnx.Tile %[[KV]], %[[REPEATS]] : (tensor<1x8x?x128xf16>, tensor<4xi64>) -> tensor<1x32x?x128xf16>
// CHECK-NEXT: return %[[E]], %[[T]] : tensor<?x1x?x?xi1>, tensor<1x32x?x128xf16>
func.func @expand_tile(%mask: tensor<1x1x?x?xi1>, %shape: tensor<4xi64>, %kv: tensor<1x8x?x128xf16>, %repeats: tensor<4xi64>) -> (tensor<?x1x?x?xi1>, tensor<1x32x?x128xf16>) {
  %e = onnx.Expand %mask, %shape : (tensor<1x1x?x?xi1>, tensor<4xi64>) -> tensor<?x1x?x?xi1>
  %t = onnx.Tile %kv, %repeats : (tensor<1x8x?x128xf16>, tensor<4xi64>) -> tensor<1x32x?x128xf16>
  return %e, %t : tensor<?x1x?x?xi1>, tensor<1x32x?x128xf16>
}

// -----

// CHECK-LABEL: func @shape
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<?x?x4096xf16>) -> (tensor<3xi64>, tensor<2xi64>, tensor<1xi64>)
// CHECK: %[[ALL:[^ ,:]+]] = onnx.Shape %[[X]] : (tensor<?x?x4096xf16>) -> tensor<3xi64>
// CHECK-NEXT: %[[HEAD:[^ ,:]+]] = onnx.Shape %[[X]] {end = 2 : i64} : (tensor<?x?x4096xf16>) -> tensor<2xi64>
// CHECK-NEXT: %[[LAST:[^ ,:]+]] = onnx.Shape %[[X]] {start = -1 : i64} : (tensor<?x?x4096xf16>) -> tensor<1xi64>
// CHECK-NEXT: return %[[ALL]], %[[HEAD]], %[[LAST]] : tensor<3xi64>, tensor<2xi64>, tensor<1xi64>
func.func @shape(%x: tensor<?x?x4096xf16>) -> (tensor<3xi64>, tensor<2xi64>, tensor<1xi64>) {
  %all = onnx.Shape %x : (tensor<?x?x4096xf16>) -> tensor<3xi64>
  %head = onnx.Shape %x {end = 2 : i64} : (tensor<?x?x4096xf16>) -> tensor<2xi64>
  %last = onnx.Shape %x {start = -1 : i64} : (tensor<?x?x4096xf16>) -> tensor<1xi64>
  return %all, %head, %last : tensor<3xi64>, tensor<2xi64>, tensor<1xi64>
}

// -----

// Indexing

// CHECK-LABEL: func @gather
// CHECK-SAME: (%[[TABLE:[^ ,:]+]]: tensor<32000x4096xf16>, %[[IDS:[^ ,:]+]]: tensor<?x?xi64>, %[[X:[^ ,:]+]]: tensor<?x?x4096xf32>, %[[I:[^ ,:]+]]: tensor<i32>) -> (tensor<?x?x4096xf16>, tensor<?x4096xf32>)
// CHECK: %[[EMB:[^ ,:]+]] = onnx.Gather %[[TABLE]], %[[IDS]] : (tensor<32000x4096xf16>, tensor<?x?xi64>) -> tensor<?x?x4096xf16>
// CHECK-NEXT: %[[LAST:[^ ,:]+]] = onnx.Gather %[[X]], %[[I]] {axis = 1 : i64} : (tensor<?x?x4096xf32>, tensor<i32>) -> tensor<?x4096xf32>
// CHECK-NEXT: return %[[EMB]], %[[LAST]] : tensor<?x?x4096xf16>, tensor<?x4096xf32>
func.func @gather(%table: tensor<32000x4096xf16>, %ids: tensor<?x?xi64>, %x: tensor<?x?x4096xf32>, %i: tensor<i32>) -> (tensor<?x?x4096xf16>, tensor<?x4096xf32>) {
  %emb = onnx.Gather %table, %ids : (tensor<32000x4096xf16>, tensor<?x?xi64>) -> tensor<?x?x4096xf16>
  %last = onnx.Gather %x, %i {axis = 1 : i64} : (tensor<?x?x4096xf32>, tensor<i32>) -> tensor<?x4096xf32>
  return %emb, %last : tensor<?x?x4096xf16>, tensor<?x4096xf32>
}

// -----

// CHECK-LABEL: func @gather_nd
// CHECK-SAME: (%[[LOGITS:[^ ,:]+]]: tensor<?x?x32000xf32>, %[[POS:[^ ,:]+]]: tensor<?x1xi64>, %[[DATA:[^ ,:]+]]: tensor<2x3x4xf32>, %[[IDX:[^ ,:]+]]: tensor<5x2xi64>) -> (tensor<?x32000xf32>, tensor<5x4xf32>)
// CHECK: %[[LAST:[^ ,:]+]] = onnx.GatherND %[[LOGITS]], %[[POS]] {batch_dims = 1 : i64} : (tensor<?x?x32000xf32>, tensor<?x1xi64>) -> tensor<?x32000xf32>
// CHECK-NEXT: %[[ROWS:[^ ,:]+]] = onnx.GatherND %[[DATA]], %[[IDX]] : (tensor<2x3x4xf32>, tensor<5x2xi64>) -> tensor<5x4xf32>
// CHECK-NEXT: return %[[LAST]], %[[ROWS]] : tensor<?x32000xf32>, tensor<5x4xf32>
func.func @gather_nd(%logits: tensor<?x?x32000xf32>, %pos: tensor<?x1xi64>, %data: tensor<2x3x4xf32>, %idx: tensor<5x2xi64>) -> (tensor<?x32000xf32>, tensor<5x4xf32>) {
  %last = onnx.GatherND %logits, %pos {batch_dims = 1 : i64} : (tensor<?x?x32000xf32>, tensor<?x1xi64>) -> tensor<?x32000xf32>
  %rows = onnx.GatherND %data, %idx : (tensor<2x3x4xf32>, tensor<5x2xi64>) -> tensor<5x4xf32>
  return %last, %rows : tensor<?x32000xf32>, tensor<5x4xf32>
}

// -----

// CHECK-LABEL: func @scatter_nd
// CHECK-SAME: (%[[CACHE:[^ ,:]+]]: tensor<64x16x8x128xf16>, %[[SLOTS:[^ ,:]+]]: tensor<?x2xi64>, %[[NEW:[^ ,:]+]]: tensor<?x8x128xf16>) -> (tensor<64x16x8x128xf16>, tensor<64x16x8x128xf16>)
// CHECK: %[[SET:[^ ,:]+]] = onnx.ScatterND %[[CACHE]], %[[SLOTS]], %[[NEW]] : (tensor<64x16x8x128xf16>, tensor<?x2xi64>, tensor<?x8x128xf16>) -> tensor<64x16x8x128xf16>
// CHECK-NEXT: %[[ADD:[^ ,:]+]] = onnx.ScatterND %[[CACHE]], %[[SLOTS]], %[[NEW]] {reduction = "add"} : (tensor<64x16x8x128xf16>, tensor<?x2xi64>, tensor<?x8x128xf16>) -> tensor<64x16x8x128xf16>
// CHECK-NEXT: return %[[SET]], %[[ADD]] : tensor<64x16x8x128xf16>, tensor<64x16x8x128xf16>
func.func @scatter_nd(%cache: tensor<64x16x8x128xf16>, %slots: tensor<?x2xi64>, %new: tensor<?x8x128xf16>) -> (tensor<64x16x8x128xf16>, tensor<64x16x8x128xf16>) {
  %set = onnx.ScatterND %cache, %slots, %new : (tensor<64x16x8x128xf16>, tensor<?x2xi64>, tensor<?x8x128xf16>) -> tensor<64x16x8x128xf16>
  %add = onnx.ScatterND %cache, %slots, %new {reduction = "add"} : (tensor<64x16x8x128xf16>, tensor<?x2xi64>, tensor<?x8x128xf16>) -> tensor<64x16x8x128xf16>
  return %set, %add : tensor<64x16x8x128xf16>, tensor<64x16x8x128xf16>
}

// -----

// CHECK-LABEL: func @trilu
// CHECK-SAME: (%[[FULL:[^ ,:]+]]: tensor<?x?xf32>, %[[ONE:[^ ,:]+]]: tensor<i64>, %[[B:[^ ,:]+]]: tensor<2x?x?xi1>) -> (tensor<?x?xf32>, tensor<2x?x?xi1>)
// CHECK: %[[UPPER:[^ ,:]+]] = onnx.Trilu %[[FULL]] k(%[[ONE]]) : (tensor<?x?xf32>, tensor<i64>) -> tensor<?x?xf32>
// CHECK-NEXT: %[[LOWER:[^ ,:]+]] = onnx.Trilu %[[B]] {upper = 0 : i64} : (tensor<2x?x?xi1>) -> tensor<2x?x?xi1>
// CHECK-NEXT: return %[[UPPER]], %[[LOWER]] : tensor<?x?xf32>, tensor<2x?x?xi1>
func.func @trilu(%full: tensor<?x?xf32>, %one: tensor<i64>, %b: tensor<2x?x?xi1>) -> (tensor<?x?xf32>, tensor<2x?x?xi1>) {
  %upper = onnx.Trilu %full k(%one) : (tensor<?x?xf32>, tensor<i64>) -> tensor<?x?xf32>
  %lower = onnx.Trilu %b {upper = 0 : i64} : (tensor<2x?x?xi1>) -> tensor<2x?x?xi1>
  return %upper, %lower : tensor<?x?xf32>, tensor<2x?x?xi1>
}

// -----

// CHECK-LABEL: func @range
// CHECK-SAME: (%[[START:[^ ,:]+]]: tensor<i64>, %[[LIMIT:[^ ,:]+]]: tensor<i64>, %[[DELTA:[^ ,:]+]]: tensor<i64>) -> tensor<?xi64>
// CHECK: %[[POS:[^ ,:]+]] = onnx.Range %[[START]], %[[LIMIT]], %[[DELTA]] : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
// CHECK-NEXT: return %[[POS]] : tensor<?xi64>
func.func @range(%start: tensor<i64>, %limit: tensor<i64>, %delta: tensor<i64>) -> tensor<?xi64> {
  %pos = onnx.Range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %pos : tensor<?xi64>
}

// -----

// Constants

// CHECK-LABEL: func @constant
// CHECK-SAME: () -> (tensor<3xi64>, tensor<f32>, tensor<2xf32>, tensor<i64>, tensor<2xi64>, tensor<2xbf16>)
// CHECK: %[[V:[^ ,:]+]] = onnx.Constant {value = dense<[0, 0, -1]> : tensor<3xi64>} : () -> tensor<3xi64>
// CHECK-NEXT: %[[F:[^ ,:]+]] = onnx.Constant {value_float = 9.99999974E-6 : f32} : () -> tensor<f32>
// CHECK-NEXT: %[[FS:[^ ,:]+]] = onnx.Constant {value_floats = array<f32: 1.000000e+00, 2.500000e+00>} : () -> tensor<2xf32>
// CHECK-NEXT: %[[I:[^ ,:]+]] = onnx.Constant {value_int = 7 : i64} : () -> tensor<i64>
// CHECK-NEXT: %[[IS:[^ ,:]+]] = onnx.Constant {value_ints = array<i64: 1, -1>} : () -> tensor<2xi64>
// CHECK-NEXT: %[[BF:[^ ,:]+]] = onnx.Constant {value = dense<[1.000000e+00, -2.000000e+00]> : tensor<2xbf16>} : () -> tensor<2xbf16>
// CHECK-NEXT: return %[[V]], %[[F]], %[[FS]], %[[I]], %[[IS]], %[[BF]] : tensor<3xi64>, tensor<f32>, tensor<2xf32>, tensor<i64>, tensor<2xi64>, tensor<2xbf16>
func.func @constant() -> (tensor<3xi64>, tensor<f32>, tensor<2xf32>, tensor<i64>, tensor<2xi64>, tensor<2xbf16>) {
  %v = onnx.Constant {value = dense<[0, 0, -1]> : tensor<3xi64>} : () -> tensor<3xi64>
  %f = onnx.Constant {value_float = 1.0e-05 : f32} : () -> tensor<f32>
  %fs = onnx.Constant {value_floats = array<f32: 1.0, 2.5>} : () -> tensor<2xf32>
  %i = onnx.Constant {value_int = 7 : i64} : () -> tensor<i64>
  %is = onnx.Constant {value_ints = array<i64: 1, -1>} : () -> tensor<2xi64>
  %bf = onnx.Constant {value = dense<[1.0, -2.0]> : tensor<2xbf16>} : () -> tensor<2xbf16>
  return %v, %f, %fs, %i, %is, %bf : tensor<3xi64>, tensor<f32>, tensor<2xf32>, tensor<i64>, tensor<2xi64>, tensor<2xbf16>
}

// -----

// CHECK-LABEL: func @constant_of_shape
// CHECK-SAME: (%[[SHAPE:[^ ,:]+]]: tensor<2xi64>) -> (tensor<?x?xi64>, tensor<?x?xf32>)
// CHECK: %[[Z:[^ ,:]+]] = onnx.ConstantOfShape %[[SHAPE]] {value = dense<0> : tensor<1xi64>} : (tensor<2xi64>) -> tensor<?x?xi64>
// CHECK-NEXT: %[[D:[^ ,:]+]] = onnx.ConstantOfShape %[[SHAPE]] : (tensor<2xi64>) -> tensor<?x?xf32>
// CHECK-NEXT: return %[[Z]], %[[D]] : tensor<?x?xi64>, tensor<?x?xf32>
func.func @constant_of_shape(%shape: tensor<2xi64>) -> (tensor<?x?xi64>, tensor<?x?xf32>) {
  %z = onnx.ConstantOfShape %shape {value = dense<0> : tensor<1xi64>} : (tensor<2xi64>) -> tensor<?x?xi64>
  %d = onnx.ConstantOfShape %shape : (tensor<2xi64>) -> tensor<?x?xf32>
  return %z, %d : tensor<?x?xi64>, tensor<?x?xf32>
}

// -----

// Reductions: axes as an input (opset 18) and as an attribute (opset 17),
// keepdims, noop_with_empty_axes.
// CHECK-LABEL: func @reduce
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<?x?x4096xf32>, %[[AXES:[^ ,:]+]]: tensor<1xi64>) -> (tensor<?x?x1xf32>, tensor<?x?x1xf32>, tensor<?x?xf32>, tensor<f32>, tensor<?x?x4096xf32>, tensor<?x?x1xf32>)
// CHECK: %[[MEAN18:[^ ,:]+]] = onnx.ReduceMean %[[X]] axes(%[[AXES]]) : (tensor<?x?x4096xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
// CHECK-NEXT: %[[MEAN17:[^ ,:]+]] = onnx.ReduceMean %[[X]] {axes = array<i64: -1>} : (tensor<?x?x4096xf32>) -> tensor<?x?x1xf32>
// CHECK-NEXT: %[[SUM:[^ ,:]+]] = onnx.ReduceSum %[[X]] axes(%[[AXES]]) {keepdims = 0 : i64} : (tensor<?x?x4096xf32>, tensor<1xi64>) -> tensor<?x?xf32>
// CHECK-NEXT: %[[ALL:[^ ,:]+]] = onnx.ReduceSum %[[X]] {keepdims = 0 : i64} : (tensor<?x?x4096xf32>) -> tensor<f32>
// CHECK-NEXT: %[[NOOP:[^ ,:]+]] = onnx.ReduceMax %[[X]] {noop_with_empty_axes = 1 : i64} : (tensor<?x?x4096xf32>) -> tensor<?x?x4096xf32>
// CHECK-NEXT: %[[MAX:[^ ,:]+]] = onnx.ReduceMax %[[X]] {axes = array<i64: 2>} : (tensor<?x?x4096xf32>) -> tensor<?x?x1xf32>
// CHECK-NEXT: return %[[MEAN18]], %[[MEAN17]], %[[SUM]], %[[ALL]], %[[NOOP]], %[[MAX]] : tensor<?x?x1xf32>, tensor<?x?x1xf32>, tensor<?x?xf32>, tensor<f32>, tensor<?x?x4096xf32>, tensor<?x?x1xf32>
func.func @reduce(%x: tensor<?x?x4096xf32>, %axes: tensor<1xi64>) -> (tensor<?x?x1xf32>, tensor<?x?x1xf32>, tensor<?x?xf32>, tensor<f32>, tensor<?x?x4096xf32>, tensor<?x?x1xf32>) {
  %mean18 = onnx.ReduceMean %x axes(%axes) : (tensor<?x?x4096xf32>, tensor<1xi64>) -> tensor<?x?x1xf32>
  %mean17 = onnx.ReduceMean %x {axes = array<i64: -1>} : (tensor<?x?x4096xf32>) -> tensor<?x?x1xf32>
  %sum = onnx.ReduceSum %x axes(%axes) {keepdims = 0 : i64} : (tensor<?x?x4096xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  %all = onnx.ReduceSum %x {keepdims = 0 : i64} : (tensor<?x?x4096xf32>) -> tensor<f32>
  %noop = onnx.ReduceMax %x {noop_with_empty_axes = 1 : i64} : (tensor<?x?x4096xf32>) -> tensor<?x?x4096xf32>
  %max = onnx.ReduceMax %x {axes = array<i64: 2>, keepdims = 1 : i64} : (tensor<?x?x4096xf32>) -> tensor<?x?x1xf32>
  return %mean18, %mean17, %sum, %all, %noop, %max : tensor<?x?x1xf32>, tensor<?x?x1xf32>, tensor<?x?xf32>, tensor<f32>, tensor<?x?x4096xf32>, tensor<?x?x1xf32>
}

// -----

// CHECK-LABEL: func @cumsum
// CHECK-SAME: (%[[MASK:[^ ,:]+]]: tensor<?x?xi64>, %[[AXIS:[^ ,:]+]]: tensor<i64>, %[[A32:[^ ,:]+]]: tensor<i32>) -> (tensor<?x?xi64>, tensor<?x?xi64>)
// CHECK: %[[POS:[^ ,:]+]] = onnx.CumSum %[[MASK]], %[[AXIS]] : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
// CHECK-NEXT: %[[REV:[^ ,:]+]] = onnx.CumSum %[[MASK]], %[[A32]] {exclusive = 1 : i64, reverse = 1 : i64} : (tensor<?x?xi64>, tensor<i32>) -> tensor<?x?xi64>
// CHECK-NEXT: return %[[POS]], %[[REV]] : tensor<?x?xi64>, tensor<?x?xi64>
func.func @cumsum(%mask: tensor<?x?xi64>, %axis: tensor<i64>, %a32: tensor<i32>) -> (tensor<?x?xi64>, tensor<?x?xi64>) {
  %pos = onnx.CumSum %mask, %axis : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
  %rev = onnx.CumSum %mask, %a32 {exclusive = 1 : i64, reverse = 1 : i64} : (tensor<?x?xi64>, tensor<i32>) -> tensor<?x?xi64>
  return %pos, %rev : tensor<?x?xi64>, tensor<?x?xi64>
}

// -----

// Normalization

// CHECK-LABEL: func @softmax
// CHECK-SAME: (%[[S:[^ ,:]+]]: tensor<1x32x?x?xf32>) -> (tensor<1x32x?x?xf32>, tensor<1x32x?x?xf32>)
// CHECK: %[[P:[^ ,:]+]] = onnx.Softmax %[[S]] : (tensor<1x32x?x?xf32>) -> tensor<1x32x?x?xf32>
// CHECK-NEXT: %[[Q:[^ ,:]+]] = onnx.Softmax %[[S]] {axis = 1 : i64} : (tensor<1x32x?x?xf32>) -> tensor<1x32x?x?xf32>
// CHECK-NEXT: return %[[P]], %[[Q]] : tensor<1x32x?x?xf32>, tensor<1x32x?x?xf32>
func.func @softmax(%s: tensor<1x32x?x?xf32>) -> (tensor<1x32x?x?xf32>, tensor<1x32x?x?xf32>) {
  %p = onnx.Softmax %s : (tensor<1x32x?x?xf32>) -> tensor<1x32x?x?xf32>
  %q = onnx.Softmax %s {axis = 1 : i64} : (tensor<1x32x?x?xf32>) -> tensor<1x32x?x?xf32>
  return %p, %q : tensor<1x32x?x?xf32>, tensor<1x32x?x?xf32>
}

// -----

// LayerNormalization with and without the bias and the optional results.
// CHECK-LABEL: func @layer_norm
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<?x?x768xf32>, %[[G:[^ ,:]+]]: tensor<768xf32>, %[[B:[^ ,:]+]]: tensor<768xf32>) -> (tensor<?x?x768xf32>, tensor<?x?x768xf32>, tensor<?x?x1xf32>, tensor<?x?x1xf32>, tensor<?x?x768xf32>, tensor<?x?x1xf32>)
// CHECK: %[[Y:[^ ,:]+]] = onnx.LayerNormalization %[[X]], %[[G]] B(%[[B]]) : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
// CHECK-NEXT: %[[Y2:[^ ,:]+]], %[[MEAN:[^ ,:]+]], %[[INV:[^ ,:]+]] = onnx.LayerNormalization %[[X]], %[[G]] {axis = 2 : i64} : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32> Mean(tensor<?x?x1xf32>) InvStdDev(tensor<?x?x1xf32>)
// CHECK-NEXT: %[[Y3:[^ ,:]+]], %[[INV3:[^ ,:]+]] = onnx.LayerNormalization %[[X]], %[[G]] B(%[[B]]) : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32> InvStdDev(tensor<?x?x1xf32>)
// CHECK-NEXT: return %[[Y]], %[[Y2]], %[[MEAN]], %[[INV]], %[[Y3]], %[[INV3]] : tensor<?x?x768xf32>, tensor<?x?x768xf32>, tensor<?x?x1xf32>, tensor<?x?x1xf32>, tensor<?x?x768xf32>, tensor<?x?x1xf32>
func.func @layer_norm(%x: tensor<?x?x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>) -> (tensor<?x?x768xf32>, tensor<?x?x768xf32>, tensor<?x?x1xf32>, tensor<?x?x1xf32>, tensor<?x?x768xf32>, tensor<?x?x1xf32>) {
  %y = onnx.LayerNormalization %x, %g B(%b) {epsilon = 9.99999974E-6 : f32} : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %y2, %mean, %inv = onnx.LayerNormalization %x, %g {axis = 2 : i64} : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32> Mean(tensor<?x?x1xf32>) InvStdDev(tensor<?x?x1xf32>)
  %y3, %inv3 = onnx.LayerNormalization %x, %g B(%b) : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32> InvStdDev(tensor<?x?x1xf32>)
  return %y, %y2, %mean, %inv, %y3, %inv3 : tensor<?x?x768xf32>, tensor<?x?x768xf32>, tensor<?x?x1xf32>, tensor<?x?x1xf32>, tensor<?x?x768xf32>, tensor<?x?x1xf32>
}

// -----

// CHECK-LABEL: func @rms_norm
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<?x?x4096xf32>, %[[W:[^ ,:]+]]: tensor<4096xbf16>, %[[XB:[^ ,:]+]]: tensor<?x4096xbf16>) -> (tensor<?x?x4096xbf16>, tensor<?x4096xbf16>)
// CHECK: %[[Y:[^ ,:]+]] = onnx.RMSNormalization %[[X]], %[[W]] {epsilon = 9.99999997E-7 : f32} : (tensor<?x?x4096xf32>, tensor<4096xbf16>) -> tensor<?x?x4096xbf16>
// CHECK-NEXT: %[[Z:[^ ,:]+]] = onnx.RMSNormalization %[[XB]], %[[W]] {axis = 1 : i64} : (tensor<?x4096xbf16>, tensor<4096xbf16>) -> tensor<?x4096xbf16>
// CHECK-NEXT: return %[[Y]], %[[Z]] : tensor<?x?x4096xbf16>, tensor<?x4096xbf16>
func.func @rms_norm(%x: tensor<?x?x4096xf32>, %w: tensor<4096xbf16>, %xb: tensor<?x4096xbf16>) -> (tensor<?x?x4096xbf16>, tensor<?x4096xbf16>) {
  %y = onnx.RMSNormalization %x, %w {epsilon = 9.99999997E-7 : f32} : (tensor<?x?x4096xf32>, tensor<4096xbf16>) -> tensor<?x?x4096xbf16>
  %z = onnx.RMSNormalization %xb, %w {axis = 1 : i64, stash_type = 1 : i64} : (tensor<?x4096xbf16>, tensor<4096xbf16>) -> tensor<?x4096xbf16>
  return %y, %z : tensor<?x?x4096xbf16>, tensor<?x4096xbf16>
}

// -----

// CHECK-LABEL: func @ms_simplified_layer_norm
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<?x?x4096xf16>, %[[W:[^ ,:]+]]: tensor<4096xf16>) -> (tensor<?x?x4096xf16>, tensor<?x?x4096xf16>, tensor<?x?x1xf32>)
// CHECK: %[[Y:[^ ,:]+]] = onnx.ms_SimplifiedLayerNormalization %[[X]], %[[W]] {epsilon = 9.99999997E-7 : f32, stash_type = 1 : i64} : (tensor<?x?x4096xf16>, tensor<4096xf16>) -> tensor<?x?x4096xf16>
// CHECK-NEXT: %[[Y2:[^ ,:]+]], %[[INV:[^ ,:]+]] = onnx.ms_SimplifiedLayerNormalization %[[X]], %[[W]] : (tensor<?x?x4096xf16>, tensor<4096xf16>) -> tensor<?x?x4096xf16> inv_std_var(tensor<?x?x1xf32>)
// CHECK-NEXT: return %[[Y]], %[[Y2]], %[[INV]] : tensor<?x?x4096xf16>, tensor<?x?x4096xf16>, tensor<?x?x1xf32>
func.func @ms_simplified_layer_norm(%x: tensor<?x?x4096xf16>, %w: tensor<4096xf16>) -> (tensor<?x?x4096xf16>, tensor<?x?x4096xf16>, tensor<?x?x1xf32>) {
  %y = onnx.ms_SimplifiedLayerNormalization %x, %w {epsilon = 9.99999997E-7 : f32, stash_type = 1 : i64} : (tensor<?x?x4096xf16>, tensor<4096xf16>) -> tensor<?x?x4096xf16>
  %y2, %inv = onnx.ms_SimplifiedLayerNormalization %x, %w : (tensor<?x?x4096xf16>, tensor<4096xf16>) -> tensor<?x?x4096xf16> inv_std_var(tensor<?x?x1xf32>)
  return %y, %y2, %inv : tensor<?x?x4096xf16>, tensor<?x?x4096xf16>, tensor<?x?x1xf32>
}

// -----

// CHECK-LABEL: func @ms_skip_layer_norm
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<?x?x768xf16>, %[[RES:[^ ,:]+]]: tensor<?x?x768xf16>, %[[G:[^ ,:]+]]: tensor<768xf16>, %[[B:[^ ,:]+]]: tensor<768xf16>, %[[BIAS:[^ ,:]+]]: tensor<768xf16>) -> (tensor<?x?x768xf16>, tensor<?x?x768xf16>, tensor<?x?x768xf16>, tensor<?x?x1xf32>, tensor<?x?x1xf32>)
// CHECK: %[[Y:[^ ,:]+]], %[[SUM:[^ ,:]+]] = onnx.ms_SkipLayerNormalization %[[X]], %[[RES]], %[[G]] beta(%[[B]]) {epsilon = 9.99999974E-6 : f32} : (tensor<?x?x768xf16>, tensor<?x?x768xf16>, tensor<768xf16>, tensor<768xf16>) -> tensor<?x?x768xf16> input_skip_bias_sum(tensor<?x?x768xf16>)
// CHECK-NEXT: %[[Y2:[^ ,:]+]], %[[MEAN:[^ ,:]+]], %[[INV:[^ ,:]+]] = onnx.ms_SkipLayerNormalization %[[X]], %[[RES]], %[[G]] bias(%[[BIAS]]) : (tensor<?x?x768xf16>, tensor<?x?x768xf16>, tensor<768xf16>, tensor<768xf16>) -> tensor<?x?x768xf16> mean(tensor<?x?x1xf32>) inv_std_var(tensor<?x?x1xf32>)
// CHECK-NEXT: return %[[Y]], %[[SUM]], %[[Y2]], %[[MEAN]], %[[INV]] : tensor<?x?x768xf16>, tensor<?x?x768xf16>, tensor<?x?x768xf16>, tensor<?x?x1xf32>, tensor<?x?x1xf32>
func.func @ms_skip_layer_norm(%x: tensor<?x?x768xf16>, %res: tensor<?x?x768xf16>, %g: tensor<768xf16>, %b: tensor<768xf16>, %bias: tensor<768xf16>) -> (tensor<?x?x768xf16>, tensor<?x?x768xf16>, tensor<?x?x768xf16>, tensor<?x?x1xf32>, tensor<?x?x1xf32>) {
  %y, %sum = onnx.ms_SkipLayerNormalization %x, %res, %g beta(%b) {epsilon = 9.99999974E-6 : f32} : (tensor<?x?x768xf16>, tensor<?x?x768xf16>, tensor<768xf16>, tensor<768xf16>) -> tensor<?x?x768xf16> input_skip_bias_sum(tensor<?x?x768xf16>)
  %y2, %mean, %inv = onnx.ms_SkipLayerNormalization %x, %res, %g bias(%bias) : (tensor<?x?x768xf16>, tensor<?x?x768xf16>, tensor<768xf16>, tensor<768xf16>) -> tensor<?x?x768xf16> mean(tensor<?x?x1xf32>) inv_std_var(tensor<?x?x1xf32>)
  return %y, %sum, %y2, %mean, %inv : tensor<?x?x768xf16>, tensor<?x?x768xf16>, tensor<?x?x768xf16>, tensor<?x?x1xf32>, tensor<?x?x1xf32>
}

// -----

// CHECK-LABEL: func @ms_skip_simplified_layer_norm
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<?x4096xbf16>, %[[RES:[^ ,:]+]]: tensor<?x4096xbf16>, %[[W:[^ ,:]+]]: tensor<4096xbf16>, %[[BIAS:[^ ,:]+]]: tensor<4096xbf16>) -> (tensor<?x4096xbf16>, tensor<?x4096xbf16>, tensor<?x4096xbf16>)
// CHECK: %[[Y:[^ ,:]+]], %[[SUM:[^ ,:]+]] = onnx.ms_SkipSimplifiedLayerNormalization %[[X]], %[[RES]], %[[W]] {epsilon = 9.99999997E-7 : f32} : (tensor<?x4096xbf16>, tensor<?x4096xbf16>, tensor<4096xbf16>) -> tensor<?x4096xbf16> input_skip_bias_sum(tensor<?x4096xbf16>)
// CHECK-NEXT: %[[Y2:[^ ,:]+]] = onnx.ms_SkipSimplifiedLayerNormalization %[[X]], %[[RES]], %[[W]] bias(%[[BIAS]]) : (tensor<?x4096xbf16>, tensor<?x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>) -> tensor<?x4096xbf16>
// CHECK-NEXT: return %[[Y]], %[[SUM]], %[[Y2]] : tensor<?x4096xbf16>, tensor<?x4096xbf16>, tensor<?x4096xbf16>
func.func @ms_skip_simplified_layer_norm(%x: tensor<?x4096xbf16>, %res: tensor<?x4096xbf16>, %w: tensor<4096xbf16>, %bias: tensor<4096xbf16>) -> (tensor<?x4096xbf16>, tensor<?x4096xbf16>, tensor<?x4096xbf16>) {
  %y, %sum = onnx.ms_SkipSimplifiedLayerNormalization %x, %res, %w {epsilon = 9.99999997E-7 : f32} : (tensor<?x4096xbf16>, tensor<?x4096xbf16>, tensor<4096xbf16>) -> tensor<?x4096xbf16> input_skip_bias_sum(tensor<?x4096xbf16>)
  %y2 = onnx.ms_SkipSimplifiedLayerNormalization %x, %res, %w bias(%bias) : (tensor<?x4096xbf16>, tensor<?x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>) -> tensor<?x4096xbf16>
  return %y, %sum, %y2 : tensor<?x4096xbf16>, tensor<?x4096xbf16>, tensor<?x4096xbf16>
}

// -----

// Attention

// GQA with a KV cache, 4-D inputs, present outputs, causal.
// CHECK-LABEL: func @attention_4d_cache
// CHECK-SAME: (%[[Q:[^ ,:]+]]: tensor<1x32x?x128xf16>, %[[K:[^ ,:]+]]: tensor<1x8x?x128xf16>, %[[V:[^ ,:]+]]: tensor<1x8x?x128xf16>, %[[PK:[^ ,:]+]]: tensor<1x8x?x128xf16>, %[[PV:[^ ,:]+]]: tensor<1x8x?x128xf16>) -> (tensor<1x32x?x128xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>)
// CHECK: %[[Y:[^ ,:]+]], %[[PRESENT_K:[^ ,:]+]], %[[PRESENT_V:[^ ,:]+]] = onnx.Attention %[[Q]], %[[K]], %[[V]] past_key(%[[PK]]) past_value(%[[PV]]) {is_causal = 1 : i64} : (tensor<1x32x?x128xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>) -> tensor<1x32x?x128xf16> present_key(tensor<1x8x?x128xf16>) present_value(tensor<1x8x?x128xf16>)
// CHECK-NEXT: return %[[Y]], %[[PRESENT_K]], %[[PRESENT_V]] : tensor<1x32x?x128xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>
func.func @attention_4d_cache(%q: tensor<1x32x?x128xf16>, %k: tensor<1x8x?x128xf16>, %v: tensor<1x8x?x128xf16>, %pk: tensor<1x8x?x128xf16>, %pv: tensor<1x8x?x128xf16>) -> (tensor<1x32x?x128xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>) {
  %y, %present_k, %present_v = onnx.Attention %q, %k, %v past_key(%pk) past_value(%pv) {is_causal = 1 : i64} : (tensor<1x32x?x128xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>) -> tensor<1x32x?x128xf16> present_key(tensor<1x8x?x128xf16>) present_value(tensor<1x8x?x128xf16>)
  return %y, %present_k, %present_v : tensor<1x32x?x128xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>
}

// -----

// 3-D inputs with head counts, a boolean mask, the qk output and every
// attribute.
// CHECK-LABEL: func @attention_3d_mask
// CHECK-SAME: (%[[Q:[^ ,:]+]]: tensor<2x?x4096xbf16>, %[[K:[^ ,:]+]]: tensor<2x?x1024xbf16>, %[[V:[^ ,:]+]]: tensor<2x?x1024xbf16>, %[[MASK:[^ ,:]+]]: tensor<2x1x?x?xi1>) -> (tensor<2x?x4096xbf16>, tensor<2x32x?x?xbf16>)
// CHECK: %[[Y:[^ ,:]+]], %[[QK:[^ ,:]+]] = onnx.Attention %[[Q]], %[[K]], %[[V]] attn_mask(%[[MASK]]) {kv_num_heads = 8 : i64, q_num_heads = 32 : i64, qk_matmul_output_mode = 3 : i64, scale = 1.250000e-01 : f32, softcap = 3.000000e+01 : f32, softmax_precision = 1 : i64} : (tensor<2x?x4096xbf16>, tensor<2x?x1024xbf16>, tensor<2x?x1024xbf16>, tensor<2x1x?x?xi1>) -> tensor<2x?x4096xbf16> qk_matmul_output(tensor<2x32x?x?xbf16>)
// CHECK-NEXT: return %[[Y]], %[[QK]] : tensor<2x?x4096xbf16>, tensor<2x32x?x?xbf16>
func.func @attention_3d_mask(%q: tensor<2x?x4096xbf16>, %k: tensor<2x?x1024xbf16>, %v: tensor<2x?x1024xbf16>, %mask: tensor<2x1x?x?xi1>) -> (tensor<2x?x4096xbf16>, tensor<2x32x?x?xbf16>) {
  %y, %qk = onnx.Attention %q, %k, %v attn_mask(%mask) {kv_num_heads = 8 : i64, q_num_heads = 32 : i64, qk_matmul_output_mode = 3 : i64, scale = 1.250000e-01 : f32, softcap = 3.000000e+01 : f32, softmax_precision = 1 : i64} : (tensor<2x?x4096xbf16>, tensor<2x?x1024xbf16>, tensor<2x?x1024xbf16>, tensor<2x1x?x?xi1>) -> tensor<2x?x4096xbf16> qk_matmul_output(tensor<2x32x?x?xbf16>)
  return %y, %qk : tensor<2x?x4096xbf16>, tensor<2x32x?x?xbf16>
}

// -----

// An additive mask of Q's type, and the opset-24 nonpad_kv_seqlen.
// CHECK-LABEL: func @attention_additive_mask
// CHECK-SAME: (%[[Q:[^ ,:]+]]: tensor<1x4x?x64xf32>, %[[K:[^ ,:]+]]: tensor<1x4x?x64xf32>, %[[V:[^ ,:]+]]: tensor<1x4x?x64xf32>, %[[MASK:[^ ,:]+]]: tensor<?x?xf32>, %[[LENS:[^ ,:]+]]: tensor<1xi64>) -> tensor<1x4x?x64xf32>
// CHECK: %[[Y:[^ ,:]+]] = onnx.Attention %[[Q]], %[[K]], %[[V]] attn_mask(%[[MASK]]) nonpad_kv_seqlen(%[[LENS]]) : (tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>, tensor<?x?xf32>, tensor<1xi64>) -> tensor<1x4x?x64xf32>
// CHECK-NEXT: return %[[Y]] : tensor<1x4x?x64xf32>
func.func @attention_additive_mask(%q: tensor<1x4x?x64xf32>, %k: tensor<1x4x?x64xf32>, %v: tensor<1x4x?x64xf32>, %mask: tensor<?x?xf32>, %lens: tensor<1xi64>) -> tensor<1x4x?x64xf32> {
  %y = onnx.Attention %q, %k, %v attn_mask(%mask) nonpad_kv_seqlen(%lens) : (tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>, tensor<?x?xf32>, tensor<1xi64>) -> tensor<1x4x?x64xf32>
  return %y : tensor<1x4x?x64xf32>
}

// -----

// CHECK-LABEL: func @rotary
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<1x32x?x128xf16>, %[[COS:[^ ,:]+]]: tensor<4096x64xf16>, %[[SIN:[^ ,:]+]]: tensor<4096x64xf16>, %[[POS:[^ ,:]+]]: tensor<1x?xi64>, %[[X3:[^ ,:]+]]: tensor<1x?x4096xf16>, %[[COSG:[^ ,:]+]]: tensor<1x?x32xf16>, %[[SING:[^ ,:]+]]: tensor<1x?x32xf16>) -> (tensor<1x32x?x128xf16>, tensor<1x?x4096xf16>)
// CHECK: %[[Y:[^ ,:]+]] = onnx.RotaryEmbedding %[[X]], %[[COS]], %[[SIN]] position_ids(%[[POS]]) : (tensor<1x32x?x128xf16>, tensor<4096x64xf16>, tensor<4096x64xf16>, tensor<1x?xi64>) -> tensor<1x32x?x128xf16>
// CHECK-NEXT: %[[Z:[^ ,:]+]] = onnx.RotaryEmbedding %[[X3]], %[[COSG]], %[[SING]] {interleaved = 1 : i64, num_heads = 32 : i64, rotary_embedding_dim = 64 : i64} : (tensor<1x?x4096xf16>, tensor<1x?x32xf16>, tensor<1x?x32xf16>) -> tensor<1x?x4096xf16>
// CHECK-NEXT: return %[[Y]], %[[Z]] : tensor<1x32x?x128xf16>, tensor<1x?x4096xf16>
func.func @rotary(%x: tensor<1x32x?x128xf16>, %cos: tensor<4096x64xf16>, %sin: tensor<4096x64xf16>, %pos: tensor<1x?xi64>, %x3: tensor<1x?x4096xf16>, %cosg: tensor<1x?x32xf16>, %sing: tensor<1x?x32xf16>) -> (tensor<1x32x?x128xf16>, tensor<1x?x4096xf16>) {
  %y = onnx.RotaryEmbedding %x, %cos, %sin position_ids(%pos) : (tensor<1x32x?x128xf16>, tensor<4096x64xf16>, tensor<4096x64xf16>, tensor<1x?xi64>) -> tensor<1x32x?x128xf16>
  %z = onnx.RotaryEmbedding %x3, %cosg, %sing {interleaved = 1 : i64, num_heads = 32 : i64, rotary_embedding_dim = 64 : i64} : (tensor<1x?x4096xf16>, tensor<1x?x32xf16>, tensor<1x?x32xf16>) -> tensor<1x?x4096xf16>
  return %y, %z : tensor<1x32x?x128xf16>, tensor<1x?x4096xf16>
}

// -----

// onnxruntime-genai's GQA: packed QKV, KV cache, rotary inside.
// CHECK-LABEL: func @ms_gqa_packed
// CHECK-SAME: (%[[QKV:[^ ,:]+]]: tensor<1x?x6144xf16>, %[[PK:[^ ,:]+]]: tensor<1x8x?x128xf16>, %[[PV:[^ ,:]+]]: tensor<1x8x?x128xf16>, %[[SEQLENS:[^ ,:]+]]: tensor<1xi32>, %[[TOTAL:[^ ,:]+]]: tensor<i32>, %[[COS:[^ ,:]+]]: tensor<4096x64xf16>, %[[SIN:[^ ,:]+]]: tensor<4096x64xf16>) -> (tensor<1x?x4096xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>)
// CHECK: %[[O:[^ ,:]+]], %[[PRESENT_K:[^ ,:]+]], %[[PRESENT_V:[^ ,:]+]] = onnx.ms_GroupQueryAttention %[[QKV]] past_key(%[[PK]]) past_value(%[[PV]]) seqlens_k(%[[SEQLENS]]) total_sequence_length(%[[TOTAL]]) cos_cache(%[[COS]]) sin_cache(%[[SIN]]) {do_rotary = 1 : i64, kv_num_heads = 8 : i64, num_heads = 32 : i64} : (tensor<1x?x6144xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>, tensor<1xi32>, tensor<i32>, tensor<4096x64xf16>, tensor<4096x64xf16>) -> (tensor<1x?x4096xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>)
// CHECK-NEXT: return %[[O]], %[[PRESENT_K]], %[[PRESENT_V]] : tensor<1x?x4096xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>
func.func @ms_gqa_packed(%qkv: tensor<1x?x6144xf16>, %pk: tensor<1x8x?x128xf16>, %pv: tensor<1x8x?x128xf16>, %seqlens: tensor<1xi32>, %total: tensor<i32>, %cos: tensor<4096x64xf16>, %sin: tensor<4096x64xf16>) -> (tensor<1x?x4096xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>) {
  %o, %present_k, %present_v = onnx.ms_GroupQueryAttention %qkv past_key(%pk) past_value(%pv) seqlens_k(%seqlens) total_sequence_length(%total) cos_cache(%cos) sin_cache(%sin) {do_rotary = 1 : i64, kv_num_heads = 8 : i64, num_heads = 32 : i64} : (tensor<1x?x6144xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>, tensor<1xi32>, tensor<i32>, tensor<4096x64xf16>, tensor<4096x64xf16>) -> (tensor<1x?x4096xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>)
  return %o, %present_k, %present_v : tensor<1x?x4096xf16>, tensor<1x8x?x128xf16>, tensor<1x8x?x128xf16>
}

// -----

// Separate Q/K/V without a cache; the qk output; every remaining optional
// input; an FP8 KV cache.
// CHECK-LABEL: func @ms_gqa_separate
// CHECK-SAME: (%[[Q:[^ ,:]+]]: tensor<2x?x2048xbf16>, %[[K:[^ ,:]+]]: tensor<2x?x512xbf16>, %[[V:[^ ,:]+]]: tensor<2x?x512xbf16>, %[[PK:[^ ,:]+]]: tensor<2x4x?x128xf8E4M3FN>, %[[PV:[^ ,:]+]]: tensor<2x4x?x128xf8E4M3FN>, %[[SEQLENS:[^ ,:]+]]: tensor<2xi32>, %[[TOTAL:[^ ,:]+]]: tensor<i32>, %[[POS:[^ ,:]+]]: tensor<2x?xi64>, %[[BIAS:[^ ,:]+]]: tensor<2x16x?x?xbf16>, %[[SINK:[^ ,:]+]]: tensor<16xbf16>, %[[KS:[^ ,:]+]]: tensor<1xf32>, %[[VS:[^ ,:]+]]: tensor<1xf32>) -> (tensor<2x?x2048xbf16>, tensor<2x4x?x128xf8E4M3FN>, tensor<2x4x?x128xf8E4M3FN>, tensor<2x16x?x?xbf16>)
// CHECK: %[[O:[^ ,:]+]], %[[PRESENT_K:[^ ,:]+]], %[[PRESENT_V:[^ ,:]+]], %[[QK:[^ ,:]+]] = onnx.ms_GroupQueryAttention %[[Q]] key(%[[K]]) value(%[[V]]) past_key(%[[PK]]) past_value(%[[PV]]) seqlens_k(%[[SEQLENS]]) total_sequence_length(%[[TOTAL]]) position_ids(%[[POS]]) attention_bias(%[[BIAS]]) head_sink(%[[SINK]]) k_scale(%[[KS]]) v_scale(%[[VS]]) {k_quant_type = "PER_TENSOR", kv_cache_bit_width = 8 : i64, kv_num_heads = 4 : i64, local_window_size = 4096 : i64, num_heads = 16 : i64, qk_output = 1 : i64, scale = 0.0883883461 : f32, smooth_softmax = 1 : i64, softcap = 5.000000e+01 : f32, v_quant_type = "PER_TENSOR"} : (tensor<2x?x2048xbf16>, tensor<2x?x512xbf16>, tensor<2x?x512xbf16>, tensor<2x4x?x128xf8E4M3FN>, tensor<2x4x?x128xf8E4M3FN>, tensor<2xi32>, tensor<i32>, tensor<2x?xi64>, tensor<2x16x?x?xbf16>, tensor<16xbf16>, tensor<1xf32>, tensor<1xf32>) -> (tensor<2x?x2048xbf16>, tensor<2x4x?x128xf8E4M3FN>, tensor<2x4x?x128xf8E4M3FN>) output_qk(tensor<2x16x?x?xbf16>)
// CHECK-NEXT: return %[[O]], %[[PRESENT_K]], %[[PRESENT_V]], %[[QK]] : tensor<2x?x2048xbf16>, tensor<2x4x?x128xf8E4M3FN>, tensor<2x4x?x128xf8E4M3FN>, tensor<2x16x?x?xbf16>
func.func @ms_gqa_separate(%q: tensor<2x?x2048xbf16>, %k: tensor<2x?x512xbf16>, %v: tensor<2x?x512xbf16>, %pk: tensor<2x4x?x128xf8E4M3FN>, %pv: tensor<2x4x?x128xf8E4M3FN>, %seqlens: tensor<2xi32>, %total: tensor<i32>, %pos: tensor<2x?xi64>, %bias: tensor<2x16x?x?xbf16>, %sink: tensor<16xbf16>, %ks: tensor<1xf32>, %vs: tensor<1xf32>) -> (tensor<2x?x2048xbf16>, tensor<2x4x?x128xf8E4M3FN>, tensor<2x4x?x128xf8E4M3FN>, tensor<2x16x?x?xbf16>) {
  %o, %present_k, %present_v, %qk = onnx.ms_GroupQueryAttention %q key(%k) value(%v) past_key(%pk) past_value(%pv) seqlens_k(%seqlens) total_sequence_length(%total) position_ids(%pos) attention_bias(%bias) head_sink(%sink) k_scale(%ks) v_scale(%vs) {k_quant_type = "PER_TENSOR", kv_cache_bit_width = 8 : i64, kv_num_heads = 4 : i64, local_window_size = 4096 : i64, num_heads = 16 : i64, qk_output = 1 : i64, scale = 0.0883883461 : f32, smooth_softmax = 1 : i64, softcap = 5.000000e+01 : f32, v_quant_type = "PER_TENSOR"} : (tensor<2x?x2048xbf16>, tensor<2x?x512xbf16>, tensor<2x?x512xbf16>, tensor<2x4x?x128xf8E4M3FN>, tensor<2x4x?x128xf8E4M3FN>, tensor<2xi32>, tensor<i32>, tensor<2x?xi64>, tensor<2x16x?x?xbf16>, tensor<16xbf16>, tensor<1xf32>, tensor<1xf32>) -> (tensor<2x?x2048xbf16>, tensor<2x4x?x128xf8E4M3FN>, tensor<2x4x?x128xf8E4M3FN>) output_qk(tensor<2x16x?x?xbf16>)
  return %o, %present_k, %present_v, %qk : tensor<2x?x2048xbf16>, tensor<2x4x?x128xf8E4M3FN>, tensor<2x4x?x128xf8E4M3FN>, tensor<2x16x?x?xbf16>
}

// -----

// CHECK-LABEL: func @ms_rotary
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<1x?x4096xf16>, %[[POS:[^ ,:]+]]: tensor<1x?xi64>, %[[COS:[^ ,:]+]]: tensor<4096x64xf16>, %[[SIN:[^ ,:]+]]: tensor<4096x64xf16>, %[[X4:[^ ,:]+]]: tensor<1x32x?x128xf16>, %[[OFFSET:[^ ,:]+]]: tensor<1xi64>) -> (tensor<1x?x4096xf16>, tensor<1x32x?x128xf16>)
// CHECK: %[[Y:[^ ,:]+]] = onnx.ms_RotaryEmbedding %[[X]], %[[POS]], %[[COS]], %[[SIN]] {num_heads = 32 : i64} : (tensor<1x?x4096xf16>, tensor<1x?xi64>, tensor<4096x64xf16>, tensor<4096x64xf16>) -> tensor<1x?x4096xf16>
// CHECK-NEXT: %[[Z:[^ ,:]+]] = onnx.ms_RotaryEmbedding %[[X4]], %[[OFFSET]], %[[COS]], %[[SIN]] {interleaved = 1 : i64, scale = 5.000000e-01 : f32} : (tensor<1x32x?x128xf16>, tensor<1xi64>, tensor<4096x64xf16>, tensor<4096x64xf16>) -> tensor<1x32x?x128xf16>
// CHECK-NEXT: return %[[Y]], %[[Z]] : tensor<1x?x4096xf16>, tensor<1x32x?x128xf16>
func.func @ms_rotary(%x: tensor<1x?x4096xf16>, %pos: tensor<1x?xi64>, %cos: tensor<4096x64xf16>, %sin: tensor<4096x64xf16>, %x4: tensor<1x32x?x128xf16>, %offset: tensor<1xi64>) -> (tensor<1x?x4096xf16>, tensor<1x32x?x128xf16>) {
  %y = onnx.ms_RotaryEmbedding %x, %pos, %cos, %sin {num_heads = 32 : i64} : (tensor<1x?x4096xf16>, tensor<1x?xi64>, tensor<4096x64xf16>, tensor<4096x64xf16>) -> tensor<1x?x4096xf16>
  %z = onnx.ms_RotaryEmbedding %x4, %offset, %cos, %sin {interleaved = 1 : i64, scale = 5.000000e-01 : f32} : (tensor<1x32x?x128xf16>, tensor<1xi64>, tensor<4096x64xf16>, tensor<4096x64xf16>) -> tensor<1x32x?x128xf16>
  return %y, %z : tensor<1x?x4096xf16>, tensor<1x32x?x128xf16>
}

// -----

// Quantization

// Per tensor, with and without a zero point; FP8 and the default ui8.
// CHECK-LABEL: func @quantize_per_tensor
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<?x4096xf16>, %[[S:[^ ,:]+]]: tensor<f16>, %[[ZP:[^ ,:]+]]: tensor<f8E4M3FN>) -> (tensor<?x4096xf8E4M3FN>, tensor<?x4096xui8>, tensor<?x4096xf16>)
// CHECK: %[[Q:[^ ,:]+]] = onnx.QuantizeLinear %[[X]], %[[S]] y_zero_point(%[[ZP]]) : (tensor<?x4096xf16>, tensor<f16>, tensor<f8E4M3FN>) -> tensor<?x4096xf8E4M3FN>
// CHECK-NEXT: %[[U:[^ ,:]+]] = onnx.QuantizeLinear %[[X]], %[[S]] : (tensor<?x4096xf16>, tensor<f16>) -> tensor<?x4096xui8>
// CHECK-NEXT: %[[D:[^ ,:]+]] = onnx.DequantizeLinear %[[Q]], %[[S]] x_zero_point(%[[ZP]]) : (tensor<?x4096xf8E4M3FN>, tensor<f16>, tensor<f8E4M3FN>) -> tensor<?x4096xf16>
// CHECK-NEXT: return %[[Q]], %[[U]], %[[D]] : tensor<?x4096xf8E4M3FN>, tensor<?x4096xui8>, tensor<?x4096xf16>
func.func @quantize_per_tensor(%x: tensor<?x4096xf16>, %s: tensor<f16>, %zp: tensor<f8E4M3FN>) -> (tensor<?x4096xf8E4M3FN>, tensor<?x4096xui8>, tensor<?x4096xf16>) {
  %q = onnx.QuantizeLinear %x, %s y_zero_point(%zp) : (tensor<?x4096xf16>, tensor<f16>, tensor<f8E4M3FN>) -> tensor<?x4096xf8E4M3FN>
  %u = onnx.QuantizeLinear %x, %s : (tensor<?x4096xf16>, tensor<f16>) -> tensor<?x4096xui8>
  %d = onnx.DequantizeLinear %q, %s x_zero_point(%zp) : (tensor<?x4096xf8E4M3FN>, tensor<f16>, tensor<f8E4M3FN>) -> tensor<?x4096xf16>
  return %q, %u, %d : tensor<?x4096xf8E4M3FN>, tensor<?x4096xui8>, tensor<?x4096xf16>
}

// -----

// Per axis (i8, output_dtype) and blocked (int4, bf16 scales).
// CHECK-LABEL: func @quantize_per_axis_blocked
// CHECK-SAME: (%[[W:[^ ,:]+]]: tensor<4096x1024xf32>, %[[S:[^ ,:]+]]: tensor<1024xf32>, %[[Q4:[^ ,:]+]]: tensor<4096x1024xi4>, %[[BS:[^ ,:]+]]: tensor<128x1024xbf16>, %[[BZP:[^ ,:]+]]: tensor<128x1024xi4>) -> (tensor<4096x1024xi8>, tensor<4096x1024xf32>, tensor<4096x1024xbf16>, tensor<4096x1024xf16>)
// CHECK: %[[Q:[^ ,:]+]] = onnx.QuantizeLinear %[[W]], %[[S]] {output_dtype = 3 : i64} : (tensor<4096x1024xf32>, tensor<1024xf32>) -> tensor<4096x1024xi8>
// CHECK-NEXT: %[[D:[^ ,:]+]] = onnx.DequantizeLinear %[[Q]], %[[S]] {axis = -1 : i64} : (tensor<4096x1024xi8>, tensor<1024xf32>) -> tensor<4096x1024xf32>
// CHECK-NEXT: %[[B:[^ ,:]+]] = onnx.DequantizeLinear %[[Q4]], %[[BS]] x_zero_point(%[[BZP]]) {axis = 0 : i64, block_size = 32 : i64} : (tensor<4096x1024xi4>, tensor<128x1024xbf16>, tensor<128x1024xi4>) -> tensor<4096x1024xbf16>
// CHECK-NEXT: %[[H:[^ ,:]+]] = onnx.DequantizeLinear %[[Q4]], %[[BS]] {axis = 0 : i64, block_size = 32 : i64, output_dtype = 10 : i64} : (tensor<4096x1024xi4>, tensor<128x1024xbf16>) -> tensor<4096x1024xf16>
// CHECK-NEXT: return %[[Q]], %[[D]], %[[B]], %[[H]] : tensor<4096x1024xi8>, tensor<4096x1024xf32>, tensor<4096x1024xbf16>, tensor<4096x1024xf16>
func.func @quantize_per_axis_blocked(%w: tensor<4096x1024xf32>, %s: tensor<1024xf32>, %q4: tensor<4096x1024xi4>, %bs: tensor<128x1024xbf16>, %bzp: tensor<128x1024xi4>) -> (tensor<4096x1024xi8>, tensor<4096x1024xf32>, tensor<4096x1024xbf16>, tensor<4096x1024xf16>) {
  %q = onnx.QuantizeLinear %w, %s {output_dtype = 3 : i64} : (tensor<4096x1024xf32>, tensor<1024xf32>) -> tensor<4096x1024xi8>
  %d = onnx.DequantizeLinear %q, %s {axis = -1 : i64} : (tensor<4096x1024xi8>, tensor<1024xf32>) -> tensor<4096x1024xf32>
  %b = onnx.DequantizeLinear %q4, %bs x_zero_point(%bzp) {axis = 0 : i64, block_size = 32 : i64} : (tensor<4096x1024xi4>, tensor<128x1024xbf16>, tensor<128x1024xi4>) -> tensor<4096x1024xbf16>
  %h = onnx.DequantizeLinear %q4, %bs {axis = 0 : i64, block_size = 32 : i64, output_dtype = 10 : i64} : (tensor<4096x1024xi4>, tensor<128x1024xbf16>) -> tensor<4096x1024xf16>
  return %q, %d, %b, %h : tensor<4096x1024xi8>, tensor<4096x1024xf32>, tensor<4096x1024xbf16>, tensor<4096x1024xf16>
}

// -----

// CHECK-LABEL: func @ms_matmul_nbits
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<?x?x4096xf16>, %[[QW:[^ ,:]+]]: tensor<11008x128x16xui8>, %[[SCALES:[^ ,:]+]]: tensor<1409024xf16>, %[[ZP:[^ ,:]+]]: tensor<704512xui8>, %[[BIAS:[^ ,:]+]]: tensor<11008xf16>, %[[S2:[^ ,:]+]]: tensor<11008x128xf16>) -> (tensor<?x?x11008xf16>, tensor<?x?x11008xf16>)
// CHECK: %[[Y:[^ ,:]+]] = onnx.ms_MatMulNBits %[[X]], %[[QW]], %[[SCALES]] {K = 4096 : i64, N = 11008 : i64, block_size = 32 : i64} : (tensor<?x?x4096xf16>, tensor<11008x128x16xui8>, tensor<1409024xf16>) -> tensor<?x?x11008xf16>
// CHECK-NEXT: %[[Z:[^ ,:]+]] = onnx.ms_MatMulNBits %[[X]], %[[QW]], %[[S2]] zero_points(%[[ZP]]) bias(%[[BIAS]]) {K = 4096 : i64, N = 11008 : i64, accuracy_level = 4 : i64, block_size = 32 : i64} : (tensor<?x?x4096xf16>, tensor<11008x128x16xui8>, tensor<11008x128xf16>, tensor<704512xui8>, tensor<11008xf16>) -> tensor<?x?x11008xf16>
// CHECK-NEXT: return %[[Y]], %[[Z]] : tensor<?x?x11008xf16>, tensor<?x?x11008xf16>
func.func @ms_matmul_nbits(%x: tensor<?x?x4096xf16>, %qw: tensor<11008x128x16xui8>, %scales: tensor<1409024xf16>, %zp: tensor<704512xui8>, %bias: tensor<11008xf16>, %s2: tensor<11008x128xf16>) -> (tensor<?x?x11008xf16>, tensor<?x?x11008xf16>) {
  %y = onnx.ms_MatMulNBits %x, %qw, %scales {K = 4096 : i64, N = 11008 : i64, bits = 4 : i64, block_size = 32 : i64} : (tensor<?x?x4096xf16>, tensor<11008x128x16xui8>, tensor<1409024xf16>) -> tensor<?x?x11008xf16>
  %z = onnx.ms_MatMulNBits %x, %qw, %s2 zero_points(%zp) bias(%bias) {K = 4096 : i64, N = 11008 : i64, accuracy_level = 4 : i64, block_size = 32 : i64} : (tensor<?x?x4096xf16>, tensor<11008x128x16xui8>, tensor<11008x128xf16>, tensor<704512xui8>, tensor<11008xf16>) -> tensor<?x?x11008xf16>
  return %y, %z : tensor<?x?x11008xf16>, tensor<?x?x11008xf16>
}

// -----

// Dimension names on function arguments and results.
// CHECK-LABEL: func @dim_params
// CHECK-SAME: (%[[IDS:[^ ,:]+]]: tensor<?x?xi64> {onnx.dim_params = ["batch", "sequence"]}, %[[W:[^ ,:]+]]: tensor<4x64xf32> {onnx.dim_params = ["", ""]}) -> (tensor<?x64xf32> {onnx.dim_params = ["tokens", ""]})
// CHECK: %[[FLAT:[^ ,:]+]] = onnx.Constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
// CHECK-NEXT: %[[I:[^ ,:]+]] = onnx.Reshape %[[IDS]], %[[FLAT]] : (tensor<?x?xi64>, tensor<1xi64>) -> tensor<?xi64>
// CHECK-NEXT: %[[Y:[^ ,:]+]] = onnx.Gather %[[W]], %[[I]] : (tensor<4x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
// CHECK-NEXT: return %[[Y]] : tensor<?x64xf32>
func.func @dim_params(%ids: tensor<?x?xi64> {onnx.dim_params = ["batch", "sequence"]}, %w: tensor<4x64xf32> {onnx.dim_params = ["", ""]}) -> (tensor<?x64xf32> {onnx.dim_params = ["tokens", ""]}) {
  %flat = onnx.Constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %i = onnx.Reshape %ids, %flat : (tensor<?x?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %y = onnx.Gather %w, %i : (tensor<4x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// CHECK-LABEL: func private @dim_params_declaration
// CHECK-SAME: (tensor<?x4096xf16> {onnx.dim_params = ["tokens", ""]}) -> (tensor<?xf32> {onnx.dim_params = ["n"]})
func.func private @dim_params_declaration(tensor<?x4096xf16> {onnx.dim_params = ["tokens", ""]}) -> (tensor<?xf32> {onnx.dim_params = ["n"]})

// -----

// Unranked tensors and dynamic dims are always accepted: nothing known
// contradicts the op (per-tensor scale given as a 1-element 1-D tensor).
// CHECK-LABEL: func @unranked
// CHECK-SAME: (%[[X:[^ ,:]+]]: tensor<*xf32>, %[[W:[^ ,:]+]]: tensor<*xf32>, %[[I:[^ ,:]+]]: tensor<*xi64>, %[[S:[^ ,:]+]]: tensor<1xf32>, %[[D:[^ ,:]+]]: tensor<?x?xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<?x?xf32>, tensor<*xui8>, tensor<*xf32>, tensor<*xf32>, tensor<?x?xf32>)
// CHECK: %[[MM:[^ ,:]+]] = onnx.MatMul %[[X]], %[[W]] : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
// CHECK-NEXT: %[[CAT:[^ ,:]+]] = onnx.Concat %[[X]], %[[W]] {axis = 5 : i64} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
// CHECK-NEXT: %[[G:[^ ,:]+]] = onnx.Gather %[[X]], %[[I]] {axis = 3 : i64} : (tensor<*xf32>, tensor<*xi64>) -> tensor<*xf32>
// CHECK-NEXT: %[[T:[^ ,:]+]] = onnx.Transpose %[[X]] {perm = array<i64: 1, 0>} : (tensor<*xf32>) -> tensor<?x?xf32>
// CHECK-NEXT: %[[Q:[^ ,:]+]] = onnx.QuantizeLinear %[[X]], %[[S]] : (tensor<*xf32>, tensor<1xf32>) -> tensor<*xui8>
// CHECK-NEXT: %[[R:[^ ,:]+]] = onnx.ReduceSum %[[X]] {axes = array<i64: 0>} : (tensor<*xf32>) -> tensor<*xf32>
// CHECK-NEXT: %[[A:[^ ,:]+]] = onnx.Add %[[X]], %[[S]] : (tensor<*xf32>, tensor<1xf32>) -> tensor<*xf32>
// CHECK-NEXT: %[[DM:[^ ,:]+]] = onnx.MatMul %[[D]], %[[D]] : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT: return %[[MM]], %[[CAT]], %[[G]], %[[T]], %[[Q]], %[[R]], %[[A]], %[[DM]] : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<?x?xf32>, tensor<*xui8>, tensor<*xf32>, tensor<*xf32>, tensor<?x?xf32>
func.func @unranked(%x: tensor<*xf32>, %w: tensor<*xf32>, %i: tensor<*xi64>, %s: tensor<1xf32>, %d: tensor<?x?xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<?x?xf32>, tensor<*xui8>, tensor<*xf32>, tensor<*xf32>, tensor<?x?xf32>) {
  %mm = onnx.MatMul %x, %w : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  %cat = onnx.Concat %x, %w {axis = 5 : i64} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  %g = onnx.Gather %x, %i {axis = 3 : i64} : (tensor<*xf32>, tensor<*xi64>) -> tensor<*xf32>
  %t = onnx.Transpose %x {perm = array<i64: 1, 0>} : (tensor<*xf32>) -> tensor<?x?xf32>
  %q = onnx.QuantizeLinear %x, %s : (tensor<*xf32>, tensor<1xf32>) -> tensor<*xui8>
  %r = onnx.ReduceSum %x {axes = array<i64: 0>} : (tensor<*xf32>) -> tensor<*xf32>
  %a = onnx.Add %x, %s : (tensor<*xf32>, tensor<1xf32>) -> tensor<*xf32>
  %dm = onnx.MatMul %d, %d : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %mm, %cat, %g, %t, %q, %r, %a, %dm : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<?x?xf32>, tensor<*xui8>, tensor<*xf32>, tensor<*xf32>, tensor<?x?xf32>
}
