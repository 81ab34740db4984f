//===- OnnxVerifyUtils.h - shared onnx op verifier helpers --*- C++ -*-===//
//
// Helpers the onnx op verifiers share: ONNX axis normalisation, numpy
// (multidirectional) broadcasting, and rank / element-type checks that accept
// dynamic dims and unranked tensors. Every `verify*` helper emits an op error
// and returns failure when the check fails; with unranked operands or dynamic
// dims it checks only what is known.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_DIALECTS_ONNX_ONNXVERIFYUTILS_H
#define ACCEL_DIALECTS_ONNX_ONNXVERIFYUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace accel::onnx {

/// ODS returns `I64Attr` values as `uint64_t`; ONNX INT attributes are
/// signed (axis = -1).
inline int64_t asSigned(uint64_t v) { return static_cast<int64_t>(v); }

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

/// The shape of `v` when its type is a ranked tensor, otherwise nullopt
/// (also for an absent optional operand, a null `v`).
std::optional<llvm::ArrayRef<int64_t>> shapeOf(mlir::Value v);

/// The rank of `v` when its type is a ranked tensor, otherwise nullopt
/// (also for a null `v`).
std::optional<int64_t> rankOf(mlir::Value v);

/// The element type of the tensor `v`.
mlir::Type elementTypeOf(mlir::Value v);

/// The number of elements of `v` when its shape is fully static.
std::optional<int64_t> numElementsOf(mlir::Value v);

/// Two dims agree when either is dynamic or they are equal.
bool dimsAgree(int64_t a, int64_t b);

/// Formats a shape as `[2, ?, 64]`.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// The numpy broadcast of two shapes, dynamic where unknown; failure when two
/// static dims differ and neither is 1.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// Checks that `result`'s shape (when ranked) has `expected`'s rank and that
/// every dim agrees with it.
mlir::LogicalResult verifyResultShape(mlir::Operation *op, mlir::Value result,
                                      llvm::ArrayRef<int64_t> expected);

/// Checks that `operands` are multidirectionally broadcastable (numpy rules)
/// and that `result`'s shape agrees with their broadcast.
mlir::LogicalResult verifyBroadcast(mlir::Operation *op,
                                    mlir::ValueRange operands,
                                    mlir::Value result);

/// Checks that `from` broadcasts to `to` in one direction (ONNX
/// "unidirectional broadcasting": every trailing dim of `from` is 1 or equal).
mlir::LogicalResult verifyUnidirectionalBroadcast(mlir::Operation *op,
                                                  llvm::StringRef fromName,
                                                  llvm::ArrayRef<int64_t> from,
                                                  llvm::StringRef toName,
                                                  llvm::ArrayRef<int64_t> to);

//===----------------------------------------------------------------------===//
// Axes
//===----------------------------------------------------------------------===//

/// `axis` normalised into [0, rank), or nullopt when outside [-rank, rank).
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// Checks `axis` against [-rank, rank-1]: "<what> 3 is out of range [-3, 2]".
mlir::LogicalResult verifyAxis(mlir::Operation *op, llvm::StringRef what,
                               int64_t axis, int64_t rank);

/// Checks every axis in range and no axis named twice (after normalisation);
/// returns the normalised axes.
mlir::FailureOr<llvm::SmallVector<int64_t>>
verifyAxes(mlir::Operation *op, llvm::StringRef what,
           llvm::ArrayRef<int64_t> axes, int64_t rank);

//===----------------------------------------------------------------------===//
// Operands, element types and attribute values
//===----------------------------------------------------------------------===//

/// Checks the two spellings of `axes` (an input since opset 13 / 18, an
/// attribute before): not both, and the input a 1-D i64 tensor.
mlir::LogicalResult
verifyAxesForms(mlir::Operation *op, mlir::Value input,
                std::optional<llvm::ArrayRef<int64_t>> attr);

/// Checks that `v` (when ranked) has one of `ranks`:
/// "operand 'X' must have rank 3 or 4, got 2".
mlir::LogicalResult verifyRank(mlir::Operation *op, mlir::Value v,
                               llvm::StringRef name,
                               llvm::ArrayRef<int64_t> ranks);

/// Checks `v`'s element type is `expected`:
/// "operand 'condition' must have element type 'i1', got 'f32'".
mlir::LogicalResult verifyElementType(mlir::Operation *op, mlir::Value v,
                                      llvm::StringRef name,
                                      mlir::Type expected);

/// Checks two values share an element type:
/// "operands 'A' and 'B' have different element types 'f32' and 'f16'".
mlir::LogicalResult verifySameElementType(mlir::Operation *op, mlir::Value a,
                                          llvm::StringRef aName, mlir::Value b,
                                          llvm::StringRef bName);

/// Checks `v` has element type i32 or i64 (ONNX's Tind).
mlir::LogicalResult verifyIndexElementType(mlir::Operation *op, mlir::Value v,
                                           llvm::StringRef name);

/// Checks `v` is a 1-D tensor of i64 (ONNX shape / axes / split inputs).
mlir::LogicalResult verifyI64Vector(mlir::Operation *op, mlir::Value v,
                                    llvm::StringRef name);

/// Checks `v` holds one element when its shape is static (rank 0, or all
/// dims 1): "operand 'min' must be a scalar, got 'tensor<2xf32>'".
mlir::LogicalResult verifyScalar(mlir::Operation *op, mlir::Value v,
                                 llvm::StringRef name);

/// Checks an ONNX boolean attribute is 0 or 1.
mlir::LogicalResult verifyFlag(mlir::Operation *op, llvm::StringRef name,
                               int64_t value);

/// Checks that `result` has `input`'s element type and an agreeing shape:
/// "result type 'tensor<4xf16>' does not match operand 'X' type
/// 'tensor<4xf32>'".
mlir::LogicalResult verifySameType(mlir::Operation *op, mlir::Value result,
                                   llvm::StringRef resultName,
                                   mlir::Value input,
                                   llvm::StringRef inputName);

} // namespace accel::onnx

#endif // ACCEL_DIALECTS_ONNX_ONNXVERIFYUTILS_H
