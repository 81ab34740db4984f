//===- OnnxMatMulOps.td - matrix products ------------------*- tablegen -*-===//
//
// MatMul and Gemm. The weight-only quantized ms_MatMulNBits lives with the
// quantization ops.
//
//===----------------------------------------------------------------------===//

#ifndef ACCEL_ONNX_MATMUL_OPS
#define ACCEL_ONNX_MATMUL_OPS

include "OnnxDialect.td"

//===----------------------------------------------------------------------===//
// MatMul
//===----------------------------------------------------------------------===//

def Onnx_MatMulOp : Onnx_Op<"MatMul"> {
  let summary = "numpy matmul: matrix product, batch dims broadcast";
  let description = [{
    The last dim of `A` meets the second-to-last of `B` (the only dim of a
    1-D `B`); batch dims broadcast. A 1-D operand is promoted to a matrix and
    the promoted dim removed from the result, as `numpy.matmul` does.

    ```mlir
    %y = onnx.MatMul %x, %w : (tensor<?x?x4096xf16>, tensor<4096x11008xf16>) -> tensor<?x?x11008xf16>
    ```
  }];
  let arguments = (ins AnyTensor:$A, AnyTensor:$B);
  let results = (outs AnyTensor:$Y);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gemm
//===----------------------------------------------------------------------===//

def Onnx_GemmOp : Onnx_Op<"Gemm"> {
  let summary = "Y = alpha * op(A) * op(B) + beta * C on matrices";
  let description = [{
    `A` and `B` are 2-D, transposed first when `transA` / `transB` is 1; the
    optional `C` broadcasts (one way) to the `[M, N]` result.

    ```mlir
    %y = onnx.Gemm %x, %w C(%b) {transB = 1 : i64}
        : (tensor<?x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>) -> tensor<?x3072xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$A, AnyTensor:$B, Optional<AnyTensor>:$C,
                       DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.0">:$beta,
                       DefaultValuedAttr<I64Attr, "0">:$transA,
                       DefaultValuedAttr<I64Attr, "0">:$transB);
  let results = (outs AnyTensor:$Y);
  let assemblyFormat = [{
    $A `,` $B (`C` `(` $C^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // ACCEL_ONNX_MATMUL_OPS
