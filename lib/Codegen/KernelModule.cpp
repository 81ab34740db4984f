//===- KernelModule.cpp - the gpu.module of a plan's kernels, and its lowering ===//
#include "accel/Codegen/Codegen.h"

#include "IRWriter.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace accel::codegen {

namespace {
llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}
} // namespace

void registerCodegenDialects(DialectRegistry &registry) {
  registry.insert<arith::ArithDialect, cf::ControlFlowDialect, gpu::GPUDialect,
                  LLVM::LLVMDialect, NVVM::NVVMDialect, math::MathDialect,
                  memref::MemRefDialect, scf::SCFDialect, vector::VectorDialect,
                  func::FuncDialect>();
  // The ConvertToLLVM interfaces convert-gpu-to-nvvm uses, the NVVM target
  // (serialisation to PTX), and the translations to LLVM IR.
  registerAllExtensions(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerAllToLLVMIRTranslations(registry);
}

bool dependentLaunchChip(llvm::StringRef chip) {
  unsigned sm = 0;
  return chip.consume_front("sm_") && !chip.getAsInteger(10, sm) && sm >= 90;
}

llvm::Expected<OwningOpRef<ModuleOp>> buildKernelModule(MLIRContext &context,
                                                        llvm::ArrayRef<KernelSpec> kernels,
                                                        llvm::StringRef chip) {
  // PTX ISA 8.0 (CUDA 12.0): sm_80 and sm_90, and the drivers of both.
  std::string text = "module attributes {gpu.container_module} {\n"
                     "  gpu.module @accel_kernels [#nvvm.target<chip = \"" +
                     chip.str() + "\", features = \"+ptx80\", O = 3>] {\n";
  const bool pdl = dependentLaunchChip(chip);
  for (const KernelSpec &spec : kernels)
    for (ElemType dt : kAllElemTypes) {
      KernelVariant v = variantOf(spec, dt);
      v.dependentLaunch = pdl;
      switch (spec.family) {
      case Family::RmsNorm:
      case Family::AddRmsNorm:
        text += emitNormKernel(spec, v);
        break;
      case Family::ResidualAdd:
      case Family::Activation:
      case Family::GatedAct:
        text += emitPointwiseKernel(spec, v);
        break;
      case Family::Rotary:
        text += emitRotaryKernel(spec, v);
        break;
      }
    }
  text += "  }\n}\n";
  std::string diag;
  OwningOpRef<ModuleOp> module;
  {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      llvm::raw_string_ostream os(diag);
      os << d.getLocation() << ": " << d.str() << "\n";
      return success();
    });
    module = parseSourceString<ModuleOp>(text, &context, "accel-kernels");
    if (module && failed(verify(*module)))
      module = nullptr;
  }
  if (!module)
    return error("the generated kernel IR does not parse or verify (a bug in lib/Codegen): " +
                 diag + "\n" + text);
  return std::move(module);
}

llvm::Error lowerToNVVM(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  PassManager pm(ctx);
  OpPassManager &g = pm.nest<gpu::GPUModuleOp>();
  g.addPass(createSCFToControlFlowPass());
  g.addPass(createConvertGpuOpsToNVVMOps());
  g.addPass(createCanonicalizerPass());
  g.addPass(createCSEPass());
  g.addPass(createReconcileUnrealizedCastsPass());
  std::string diag;
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
    llvm::raw_string_ostream os(diag);
    os << d.str() << "\n";
    return success();
  });
  if (failed(pm.run(module)))
    return error("lowering the generated kernels to NVVM failed: " + diag);
  return llvm::Error::success();
}

} // namespace accel::codegen
