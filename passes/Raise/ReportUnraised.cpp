//===- ReportUnraised.cpp - say what raising left in primitive form -------===//
//
// The last step of raising. Movement and shape ops (Reshape, Transpose,
// Concat, Slice, Shape, ...) are expected glue; any other onnx op left is
// arithmetic that no pattern recognised. It still runs, on the generic path,
// but slower: one warning per operator kind names how many are left and
// where the first one is, so a user can see which subgraph was not raised.
//
//===----------------------------------------------------------------------===//
#include "accel/dialects/Onnx/OnnxOps.h"
#include "accel/passes/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

namespace accel {
#define GEN_PASS_DEF_REPORTUNRAISED
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;

namespace {
struct ReportUnraisedPass
    : public accel::impl::ReportUnraisedBase<ReportUnraisedPass> {
  void runOnOperation() override {
    static const llvm::StringSet<> glue = {
        "onnx.Constant", "onnx.ConstantOfShape", "onnx.Shape",   "onnx.Reshape",
        "onnx.Transpose", "onnx.Squeeze",        "onnx.Unsqueeze", "onnx.Concat",
        "onnx.Slice",     "onnx.Split",          "onnx.Expand",  "onnx.Identity",
        "onnx.Cast",      "onnx.Range"};
    llvm::MapVector<StringRef, std::pair<Operation *, unsigned>> left;
    getOperation().walk([&](Operation *op) {
      if (op->getDialect() && op->getDialect()->getNamespace() == "onnx" &&
          !glue.contains(op->getName().getStringRef())) {
        auto &entry = left[op->getName().getStringRef()];
        if (!entry.first)
          entry.first = op;
        ++entry.second;
      }
    });
    for (auto &[name, entry] : left)
      entry.first->emitWarning()
          << entry.second << " '" << name
          << "' op(s) were not raised and run on the generic path (first one here)";
  }
};
} // namespace
