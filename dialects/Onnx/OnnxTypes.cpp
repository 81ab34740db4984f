//===- OnnxTypes.cpp - ONNX data types as MLIR types ----------------------===//
#include "accel/dialects/Onnx/OnnxTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

Type accel::onnx::convertOnnxDataType(MLIRContext *ctx,
                                      int32_t tensorProtoType) {
  Builder b(ctx);
  auto uint = [&](unsigned width) {
    return IntegerType::get(ctx, width, IntegerType::Unsigned);
  };
  switch (tensorProtoType) {
  case 1:
    return b.getF32Type();
  case 2:
    return uint(8);
  case 3:
    return b.getIntegerType(8);
  case 4:
    return uint(16);
  case 5:
    return b.getIntegerType(16);
  case 6:
    return b.getIntegerType(32);
  case 7:
    return b.getIntegerType(64);
  case 9:
    return b.getI1Type();
  case 10:
    return b.getF16Type();
  case 11:
    return b.getF64Type();
  case 12:
    return uint(32);
  case 13:
    return uint(64);
  case 14:
    return ComplexType::get(b.getF32Type());
  case 15:
    return ComplexType::get(b.getF64Type());
  case 16:
    return b.getBF16Type();
  case 17:
    return Float8E4M3FNType::get(ctx);
  case 18:
    return Float8E4M3FNUZType::get(ctx);
  case 19:
    return Float8E5M2Type::get(ctx);
  case 20:
    return Float8E5M2FNUZType::get(ctx);
  case 21:
    return uint(4);
  case 22:
    return b.getIntegerType(4);
  case 23:
    return Float4E2M1FNType::get(ctx);
  case 24:
    return Float8E8M0FNUType::get(ctx);
  default:
    return Type();
  }
}
