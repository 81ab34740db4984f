//===- OnnxOps.cpp - exec.onnx: an ONNX operator left by raising ----------===//
#include "ExecAssembly.h"
#include "ExecVerify.h"

using namespace mlir;
using namespace accel::exec;
using namespace accel::exec::detail;

/// `present` (when given) has `count` true entries.
static LogicalResult verifyPresent(Operation *op, std::optional<ArrayRef<bool>> present,
                                   size_t count, StringRef what) {
  if (!present)
    return success();
  size_t n = llvm::count(*present, true);
  if (n != count)
    return op->emitOpError() << what << "_present marks " << n << " present " << what
                             << "s but the op has " << count;
  return success();
}

LogicalResult OnnxOp::verify() {
  if (getOp().empty())
    return emitOpError("names no ONNX operator");
  if (getOutputs().empty())
    return emitOpError() << "ONNX operator '" << getOp() << "' writes no output";
  if (failed(verifyPresent(*this, getInputPresent(), getInputs().size(), "input")))
    return failure();
  return verifyPresent(*this, getOutputPresent(), getOutputs().size(), "output");
}

ParseResult accel::exec::parseTypeList(OpAsmParser &parser, SmallVectorImpl<Type> &types) {
  if (parser.parseLParen())
    return failure();
  if (succeeded(parser.parseOptionalRParen()))
    return success();
  if (parser.parseTypeList(types))
    return failure();
  return parser.parseRParen();
}

void accel::exec::printTypeList(OpAsmPrinter &printer, Operation *, TypeRange types) {
  printer << "(";
  llvm::interleaveComma(types, printer);
  printer << ")";
}
