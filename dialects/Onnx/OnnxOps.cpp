//===- OnnxOps.cpp - onnx dialect op classes ------------------------------===//
//
// The generated op classes. The verifiers live with their op family:
// OnnxElementwise.cpp, OnnxMatMul.cpp, OnnxShapeOps.cpp, OnnxIndexing.cpp,
// OnnxConstants.cpp, OnnxReduction.cpp, OnnxNormalization.cpp,
// OnnxAttention.cpp and OnnxQuantization.cpp.
//
//===----------------------------------------------------------------------===//
#include "accel/dialects/Onnx/OnnxOps.h"

using namespace mlir;
using namespace accel::onnx;

#define GET_OP_CLASSES
#include "dialects/Onnx/OnnxOps.cpp.inc"
