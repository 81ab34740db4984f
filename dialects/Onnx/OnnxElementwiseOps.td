//===- OnnxElementwiseOps.td - elementwise onnx ops --------*- tablegen -*-===//
//
// Unary math and activations, numpy-broadcasting binary arithmetic,
// comparisons and logic, Where, the variadic Max/Min/Sum, Clip and Cast.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_ONNX_ELEMENTWISE_OPS
#define ACCEL_ONNX_ELEMENTWISE_OPS

include "OnnxDialect.td"

//===----------------------------------------------------------------------===//
// Unary elementwise
//===----------------------------------------------------------------------===//

// One input, one output of the same shape and element type. `inName` and
// `outName` are the ONNX names of the input and output.
class Onnx_UnaryOp<string mnemonic, string inName = "X", string outName = "Y",
                   list<Trait> traits = []>
    : Onnx_Op<mnemonic,
              !listconcat(traits, [SameOperandsAndResultShape,
                                   SameOperandsAndResultElementType])> {
  let arguments = !dag(ins, [AnyTensor], [inName]);
  let results = !dag(outs, [AnyTensor], [outName]);
}

//===----------------------------------------------------------------------===//
// Sqrt
//===----------------------------------------------------------------------===//

def Onnx_SqrtOp : Onnx_UnaryOp<"Sqrt"> {
  let summary = "elementwise square root";
  let description = [{
    ```mlir
    %y = onnx.Sqrt %x : (tensor<?x1xf32>) -> tensor<?x1xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Reciprocal
//===----------------------------------------------------------------------===//

def Onnx_ReciprocalOp : Onnx_UnaryOp<"Reciprocal"> {
  let summary = "elementwise 1 / x";
  let description = [{
    ```mlir
    %y = onnx.Reciprocal %x : (tensor<?x1xf32>) -> tensor<?x1xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Neg
//===----------------------------------------------------------------------===//

def Onnx_NegOp : Onnx_UnaryOp<"Neg"> {
  let summary = "elementwise negation";
  let description = [{
    Used by the rotate-half of rotary embeddings.

    ```mlir
    %y = onnx.Neg %x : (tensor<1x32x?x64xf16>) -> tensor<1x32x?x64xf16>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Sin
//===----------------------------------------------------------------------===//

def Onnx_SinOp : Onnx_UnaryOp<"Sin", "input", "output"> {
  let summary = "elementwise sine";
  let description = [{
    ```mlir
    %s = onnx.Sin %freqs : (tensor<?x64xf32>) -> tensor<?x64xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Cos
//===----------------------------------------------------------------------===//

def Onnx_CosOp : Onnx_UnaryOp<"Cos", "input", "output"> {
  let summary = "elementwise cosine";
  let description = [{
    ```mlir
    %c = onnx.Cos %freqs : (tensor<?x64xf32>) -> tensor<?x64xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Tanh
//===----------------------------------------------------------------------===//

def Onnx_TanhOp : Onnx_UnaryOp<"Tanh", "input", "output"> {
  let summary = "elementwise hyperbolic tangent";
  let description = [{
    ```mlir
    %y = onnx.Tanh %x : (tensor<?x3072xf32>) -> tensor<?x3072xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Sigmoid
//===----------------------------------------------------------------------===//

def Onnx_SigmoidOp : Onnx_UnaryOp<"Sigmoid"> {
  let summary = "elementwise logistic function 1 / (1 + exp(-x))";
  let description = [{
    SiLU is exported as `Mul(x, Sigmoid(x))`.

    ```mlir
    %s = onnx.Sigmoid %gate : (tensor<?x11008xf16>) -> tensor<?x11008xf16>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Erf
//===----------------------------------------------------------------------===//

def Onnx_ErfOp : Onnx_UnaryOp<"Erf", "input", "output"> {
  let summary = "elementwise Gauss error function";
  let description = [{
    Exact GELU is exported as `0.5 * x * (1 + Erf(x / sqrt(2)))`.

    ```mlir
    %e = onnx.Erf %x : (tensor<?x3072xf32>) -> tensor<?x3072xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Relu
//===----------------------------------------------------------------------===//

def Onnx_ReluOp : Onnx_UnaryOp<"Relu"> {
  let summary = "elementwise max(x, 0)";
  let description = [{
    ```mlir
    %y = onnx.Relu %x : (tensor<?x3072xf32>) -> tensor<?x3072xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Abs
//===----------------------------------------------------------------------===//

def Onnx_AbsOp : Onnx_UnaryOp<"Abs"> {
  let summary = "elementwise absolute value";
  let description = [{
    ```mlir
    %y = onnx.Abs %x : (tensor<?xi64>) -> tensor<?xi64>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Exp
//===----------------------------------------------------------------------===//

def Onnx_ExpOp : Onnx_UnaryOp<"Exp", "input", "output"> {
  let summary = "elementwise natural exponential";
  let description = [{
    ```mlir
    %y = onnx.Exp %x : (tensor<32xf32>) -> tensor<32xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Log
//===----------------------------------------------------------------------===//

def Onnx_LogOp : Onnx_UnaryOp<"Log", "input", "output"> {
  let summary = "elementwise natural logarithm";
  let description = [{
    ```mlir
    %y = onnx.Log %x : (tensor<32xf32>) -> tensor<32xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Floor
//===----------------------------------------------------------------------===//

def Onnx_FloorOp : Onnx_UnaryOp<"Floor"> {
  let summary = "elementwise round toward negative infinity";
  let description = [{
    ```mlir
    %y = onnx.Floor %x : (tensor<?xf32>) -> tensor<?xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Ceil
//===----------------------------------------------------------------------===//

def Onnx_CeilOp : Onnx_UnaryOp<"Ceil"> {
  let summary = "elementwise round toward positive infinity";
  let description = [{
    ```mlir
    %y = onnx.Ceil %x : (tensor<?xf32>) -> tensor<?xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Identity
//===----------------------------------------------------------------------===//

def Onnx_IdentityOp : Onnx_UnaryOp<"Identity", "input", "output"> {
  let summary = "returns its input";
  let description = [{
    ```mlir
    %y = onnx.Identity %x : (tensor<?x64xbf16>) -> tensor<?x64xbf16>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Not
//===----------------------------------------------------------------------===//

def Onnx_NotOp : Onnx_UnaryOp<"Not"> {
  let summary = "elementwise logical negation of a boolean tensor";
  let description = [{
    ```mlir
    %y = onnx.Not %mask : (tensor<?x?xi1>) -> tensor<?x?xi1>
    ```
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gelu
//===----------------------------------------------------------------------===//

def Onnx_GeluOp : Onnx_UnaryOp<"Gelu"> {
  let summary = "Gaussian error linear unit (opset 20)";
  let description = [{
    `approximate` is `"none"` (the erf form) or `"tanh"`.

    ```mlir
    %y = onnx.Gelu %x {approximate = "tanh"} : (tensor<?x3072xf32>) -> tensor<?x3072xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$X,
                       DefaultValuedAttr<StrAttr, "\"none\"">:$approximate);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// IsNaN
//===----------------------------------------------------------------------===//

def Onnx_IsNaNOp : Onnx_Op<"IsNaN", [SameOperandsAndResultShape]> {
  let summary = "elementwise test for NaN, into a boolean tensor";
  let description = [{
    ```mlir
    %nan = onnx.IsNaN %x : (tensor<?x32000xf32>) -> tensor<?x32000xi1>
    ```
  }];
  let arguments = (ins AnyTensor:$X);
  let results = (outs AnyTensor:$Y);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Binary elementwise with numpy broadcasting
//===----------------------------------------------------------------------===//

// Inputs A and B of one element type, broadcast against each other; the
// result C has their broadcast shape and, unless the op says otherwise, their
// element type.
class Onnx_BinaryOp<string mnemonic, list<Trait> traits = []>
    : Onnx_Op<mnemonic, traits> {
  let arguments = (ins AnyTensor:$A, AnyTensor:$B);
  let results = (outs AnyTensor:$C);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Add
//===----------------------------------------------------------------------===//

def Onnx_AddOp : Onnx_BinaryOp<"Add", [Commutative]> {
  let summary = "elementwise addition with numpy broadcasting";
  let description = [{
    ```mlir
    %c = onnx.Add %a, %b : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Sub
//===----------------------------------------------------------------------===//

def Onnx_SubOp : Onnx_BinaryOp<"Sub"> {
  let summary = "elementwise subtraction with numpy broadcasting";
  let description = [{
    ```mlir
    %c = onnx.Sub %one, %mask : (tensor<f32>, tensor<?x1x1x?xf32>) -> tensor<?x1x1x?xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Mul
//===----------------------------------------------------------------------===//

def Onnx_MulOp : Onnx_BinaryOp<"Mul", [Commutative]> {
  let summary = "elementwise multiplication with numpy broadcasting";
  let description = [{
    ```mlir
    %c = onnx.Mul %x, %weight : (tensor<?x?x4096xf16>, tensor<4096xf16>) -> tensor<?x?x4096xf16>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Div
//===----------------------------------------------------------------------===//

def Onnx_DivOp : Onnx_BinaryOp<"Div"> {
  let summary = "elementwise division with numpy broadcasting";
  let description = [{
    Integer division truncates toward zero.

    ```mlir
    %c = onnx.Div %scores, %sqrt_d : (tensor<1x32x?x?xf32>, tensor<f32>) -> tensor<1x32x?x?xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Mod
//===----------------------------------------------------------------------===//

def Onnx_ModOp : Onnx_BinaryOp<"Mod"> {
  let summary = "elementwise remainder with numpy broadcasting";
  let description = [{
    With `fmod = 0` (integers only) the result takes the divisor's sign, as
    Python's `%`; with `fmod = 1` the dividend's, as C's `fmod`. Floating-point
    operands require `fmod = 1`.

    ```mlir
    %r = onnx.Mod %pos, %window : (tensor<?xi64>, tensor<i64>) -> tensor<?xi64>
    ```
  }];
  let arguments = (ins AnyTensor:$A, AnyTensor:$B,
                       DefaultValuedAttr<I64Attr, "0">:$fmod);
}

//===----------------------------------------------------------------------===//
// Pow
//===----------------------------------------------------------------------===//

def Onnx_PowOp : Onnx_Op<"Pow"> {
  let summary = "elementwise power with numpy broadcasting";
  let description = [{
    The exponent `Y` may have another element type than the base `X`; the
    result has `X`'s.

    ```mlir
    %z = onnx.Pow %x, %two : (tensor<?x4096xf32>, tensor<f32>) -> tensor<?x4096xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$X, AnyTensor:$Y);
  let results = (outs AnyTensor:$Z);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Comparisons
//===----------------------------------------------------------------------===//

// A and B of one element type; the result is a boolean (i1) tensor.
class Onnx_CompareOp<string mnemonic, string what, list<Trait> traits = []>
    : Onnx_BinaryOp<mnemonic, traits> {
  let summary = "elementwise " # what # " comparison, into a boolean tensor";
}

def Onnx_EqualOp : Onnx_CompareOp<"Equal", "A == B", [Commutative]> {
  let description = [{
    ```mlir
    %c = onnx.Equal %ids, %pad : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi1>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Greater
//===----------------------------------------------------------------------===//

def Onnx_GreaterOp : Onnx_CompareOp<"Greater", "A > B"> {
  let description = [{
    ```mlir
    %c = onnx.Greater %cols, %rows : (tensor<1x?xi64>, tensor<?x1xi64>) -> tensor<?x?xi1>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// GreaterOrEqual
//===----------------------------------------------------------------------===//

def Onnx_GreaterOrEqualOp : Onnx_CompareOp<"GreaterOrEqual", "A >= B"> {
  let description = [{
    ```mlir
    %c = onnx.GreaterOrEqual %a, %b : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Less
//===----------------------------------------------------------------------===//

def Onnx_LessOp : Onnx_CompareOp<"Less", "A < B"> {
  let description = [{
    ```mlir
    %c = onnx.Less %a, %b : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// LessOrEqual
//===----------------------------------------------------------------------===//

def Onnx_LessOrEqualOp : Onnx_CompareOp<"LessOrEqual", "A <= B"> {
  let description = [{
    The causal mask of torch exports: key position <= query position.

    ```mlir
    %c = onnx.LessOrEqual %k, %q : (tensor<1x?xi64>, tensor<?x1xi64>) -> tensor<?x?xi1>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Logical And / Or / Xor
//===----------------------------------------------------------------------===//

// A and B are boolean (i1) tensors; so is the result.
class Onnx_LogicalOp<string mnemonic, string what>
    : Onnx_BinaryOp<mnemonic, [Commutative]> {
  let summary = "elementwise logical " # what # " of boolean tensors";
}

def Onnx_AndOp : Onnx_LogicalOp<"And", "and"> {
  let description = [{
    ```mlir
    %c = onnx.And %causal, %padding : (tensor<?x?xi1>, tensor<1x?xi1>) -> tensor<?x?xi1>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Or
//===----------------------------------------------------------------------===//

def Onnx_OrOp : Onnx_LogicalOp<"Or", "or"> {
  let description = [{
    ```mlir
    %c = onnx.Or %a, %b : (tensor<?x?xi1>, tensor<?x?xi1>) -> tensor<?x?xi1>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Xor
//===----------------------------------------------------------------------===//

def Onnx_XorOp : Onnx_LogicalOp<"Xor", "exclusive or"> {
  let description = [{
    ```mlir
    %c = onnx.Xor %a, %b : (tensor<?x?xi1>, tensor<?x?xi1>) -> tensor<?x?xi1>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Where
//===----------------------------------------------------------------------===//

def Onnx_WhereOp : Onnx_Op<"Where"> {
  let summary = "elementwise select, all three inputs broadcast together";
  let description = [{
    `output = condition ? X : Y`; `condition` is a boolean (i1) tensor.

    ```mlir
    %m = onnx.Where %allowed, %zero, %neg_inf
        : (tensor<?x?xi1>, tensor<f32>, tensor<f32>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$condition, AnyTensor:$X, AnyTensor:$Y);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Variadic Max / Min / Sum
//===----------------------------------------------------------------------===//

// One or more inputs of one element type, broadcast together.
class Onnx_VariadicOp<string mnemonic, string outName, string what>
    : Onnx_Op<mnemonic> {
  let summary = "elementwise " # what # " of one or more broadcast inputs";
  let arguments = (ins Variadic<AnyTensor>:$data_0);
  let results = !dag(outs, [AnyTensor], [outName]);
  let hasVerifier = 1;
}

def Onnx_MaxOp : Onnx_VariadicOp<"Max", "max", "maximum"> {
  let description = [{
    ```mlir
    %m = onnx.Max %scores, %floor : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Min
//===----------------------------------------------------------------------===//

def Onnx_MinOp : Onnx_VariadicOp<"Min", "min", "minimum"> {
  let description = [{
    ```mlir
    %m = onnx.Min %a, %b, %c : (tensor<?xi64>, tensor<?xi64>, tensor<i64>) -> tensor<?xi64>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Sum
//===----------------------------------------------------------------------===//

def Onnx_SumOp : Onnx_VariadicOp<"Sum", "sum", "sum"> {
  let description = [{
    ```mlir
    %s = onnx.Sum %a, %b : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Clip
//===----------------------------------------------------------------------===//

def Onnx_ClipOp : Onnx_Op<"Clip", [AttrSizedOperandSegments]> {
  let summary = "elementwise clamp to optional scalar bounds";
  let description = [{
    `min` and `max` are optional scalar inputs of the input's element type;
    either may be absent alone.

    ```mlir
    %y = onnx.Clip %x max(%hi) : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$input, Optional<AnyTensor>:$min,
                       Optional<AnyTensor>:$max);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = [{
    $input (`min` `(` $min^ `)`)? (`max` `(` $max^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

def Onnx_CastOp : Onnx_Op<"Cast", [SameOperandsAndResultShape]> {
  let summary = "elementwise conversion to the element type `to`";
  let description = [{
    `to` is an ONNX `TensorProto.DataType` id (1 float, 10 float16, 16
    bfloat16, 7 int64, 9 bool, 17 float8e4m3fn, ...); the result's element type
    must be the one it names. `saturate` (opset 19) only matters for float8
    results.

    ```mlir
    %y = onnx.Cast %x {to = 1 : i64} : (tensor<?x4096xbf16>) -> tensor<?x4096xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$input, I64Attr:$to,
                       DefaultValuedAttr<I64Attr, "1">:$saturate);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

#endif // ACCEL_ONNX_ELEMENTWISE_OPS
