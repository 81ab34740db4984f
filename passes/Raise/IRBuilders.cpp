//===- IRBuilders.cpp - small IR builders for raising rewrites ------------===//
#include "IRBuilders.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

Value accel::raise::buildOp(OpBuilder &b, Location loc, StringRef name, ValueRange operands,
                            Type result, ArrayRef<NamedAttribute> attrs) {
  OperationState st(loc, name);
  st.addOperands(operands);
  st.addTypes(result);
  st.addAttributes(attrs);
  return b.create(st)->getResult(0);
}

Value accel::raise::i64Vector(OpBuilder &b, Location loc, ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({int64_t(values.size())}, b.getI64Type());
  return buildOp(b, loc, "onnx.Constant", {}, type,
                 {b.getNamedAttr("value", DenseElementsAttr::get(type, values))});
}

Value accel::raise::transpose(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> perm,
                              Type result) {
  return buildOp(b, loc, "onnx.Transpose", x, result,
                 {b.getNamedAttr("perm", b.getDenseI64ArrayAttr(perm))});
}

Value accel::raise::reshape(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> shape,
                            Type result) {
  return buildOp(b, loc, "onnx.Reshape", {x, i64Vector(b, loc, shape)}, result);
}

Value accel::raise::castTo(OpBuilder &b, Location loc, Value x, Type result) {
  Type from = getElementTypeOrSelf(x.getType()), to = getElementTypeOrSelf(result);
  if (from == to)
    return x;
  // ONNX TensorProto ids for the integer types positions use.
  int64_t id = to.isInteger(64) ? 7 : to.isInteger(32) ? 6 : to.isF32() ? 1 : 0;
  auto type = cast<ShapedType>(x.getType()).clone(to);
  return buildOp(b, loc, "onnx.Cast", x, type, {b.getNamedAttr("to", b.getI64IntegerAttr(id))});
}

void accel::raise::eraseDeadOps(Block &block) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block))) {
      if (op.use_empty() && !op.hasTrait<OpTrait::IsTerminator>() &&
          isMemoryEffectFree(&op)) {
        op.erase();
        changed = true;
      }
    }
  }
}
