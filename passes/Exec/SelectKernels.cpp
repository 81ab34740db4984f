//===- SelectKernels.cpp - accel-exec-select-kernels ----------------------===//
//
// lib/Codegen decides which steps a generated kernel runs and how each is
// specialised (selectKernels); this pass writes that into the IR: one
// exec.kernel per specialisation, built for the target SM, and the `kernel`
// attribute of every step that runs one. It also refuses what a GPU cannot
// run: exec.onnx steps (unless host steps are allowed). exec.moe, float or
// with quantised (i8 / f8E4M3FN) experts, runs the runtime's hand-written
// kernels (runtime/cuda/ops/Moe.cpp) and gets no `kernel` attribute.
//
//===----------------------------------------------------------------------===//
#include "accel/passes/ExecPasses.h"
#include "accel/passes/Passes.h"

#include "accel/Codegen/Codegen.h"
#include "accel/dialects/Exec/ExecOps.h"

#include "mlir/IR/Builders.h"

namespace accel {
#define GEN_PASS_DEF_SELECTKERNELS
#include "passes/Passes.h.inc"
} // namespace accel

using namespace mlir;
namespace ex = accel::exec;

namespace accel::execpasses {

FailureOr<int64_t> selectKernels(ModuleOp module, const std::string &chip, bool allowOnnx,
                                 bool generate) {
  StringRef sm(chip);
  int32_t smNumber = 0;
  if (!sm.consume_front("sm_") || sm.getAsInteger(10, smNumber))
    return module.emitError() << "accel-exec-select-kernels needs a chip such as sm_90, got '"
                              << chip << "'";
  if (!allowOnnx) {
    ex::OnnxOp bad;
    module.walk([&](ex::OnnxOp op) {
      if (!bad)
        bad = op;
    });
    if (bad)
      return bad.emitError()
             << "ONNX operator '" << bad.getOp()
             << "' was left by raising and has no GPU kernel, so a GPU plan would run it on "
                "the host every step; compile for -target=cpu, accept host steps with "
                "-allow-host-steps, or report the model so that its subgraph is raised";
  }
  if (!generate)
    return int64_t(0);
  codegen::KernelSelection sel = codegen::selectKernels(module);
  OpBuilder b(module.getContext());
  Operation *first = nullptr;
  for (Operation &op : module.getBody()->getOperations())
    if (isa<ex::ScheduleOp>(op)) {
      first = &op;
      break;
    }
  if (first)
    b.setInsertionPoint(first);
  else
    b.setInsertionPointToEnd(module.getBody());
  for (auto old : llvm::make_early_inc_range(module.getOps<ex::KernelOp>()))
    old.erase();
  for (const codegen::KernelSpec &spec : sel.kernels)
    ex::KernelOp::create(b, module.getLoc(), spec.name(), b.getArrayAttr({}),
                         b.getDenseI32ArrayAttr({smNumber}), ex::KernelImage::none,
                         b.getStringAttr(codegen::familyName(spec.family)),
                         codegen::specConfig(spec, b.getContext()));
  for (auto &[op, name] : sel.kernelOf)
    op->setAttr("kernel", FlatSymbolRefAttr::get(b.getContext(), name));
  return int64_t(sel.kernels.size());
}

} // namespace accel::execpasses

namespace {

struct SelectKernelsPass : accel::impl::SelectKernelsBase<SelectKernelsPass> {
  using SelectKernelsBase::SelectKernelsBase;
  void runOnOperation() override {
    if (failed(accel::execpasses::selectKernels(getOperation(), chip, allowOnnx, generate)))
      signalPassFailure();
  }
};

} // namespace
