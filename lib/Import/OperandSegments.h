//===- OperandSegments.h - operand/result groups of onnx ops ----*- C++ -*-===//
#ifndef ACCEL_LIB_IMPORT_OPERANDSEGMENTS_H
#define ACCEL_LIB_IMPORT_OPERANDSEGMENTS_H

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace accel::import {
/// For an onnx op sized by `operandSegmentSizes`, the number of ODS operand
/// groups; std::nullopt for ops whose operands need no sizes.
std::optional<unsigned> getNumOperandGroups(llvm::StringRef opName);
/// Same for `resultSegmentSizes`.
std::optional<unsigned> getNumResultGroups(llvm::StringRef opName);
} // namespace accel::import

#endif // ACCEL_LIB_IMPORT_OPERANDSEGMENTS_H
