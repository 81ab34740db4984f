//===- GenerateKernels.cpp - a plan's kernels, from selection to cubin -----===//
#include "accel/Codegen/Codegen.h"

#include "accel/dialects/Exec/ExecOps.h"
#include "runtime/plan/Plan.pb.h"

#include "mlir/IR/MLIRContext.h"

namespace accel::codegen {

namespace {
/// The kernels `module` declares, or (none declared) those its steps could run.
llvm::Expected<std::vector<KernelSpec>> kernelsOf(mlir::ModuleOp module, bool declaredOnly) {
  std::vector<KernelSpec> specs;
  bool any = false;
  for (auto k : module.getOps<exec::KernelOp>()) {
    any = true;
    std::optional<KernelSpec> s = specFromKernel(k);
    if (!s)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "exec.kernel @" + k.getSymName().str() +
                                         " is not a kernel this compiler generates");
    specs.push_back(*s);
  }
  if (!any && !declaredOnly)
    specs = selectKernels(module).kernels;
  return specs;
}
} // namespace

llvm::Expected<GeneratedKernels> generateKernels(mlir::ModuleOp execModule,
                                                 const CodegenOptions &options) {
  GeneratedKernels out;
  out.chip = options.chip;
  llvm::Expected<std::vector<KernelSpec>> specs = kernelsOf(execModule, /*declaredOnly=*/true);
  if (!specs)
    return specs.takeError();
  out.selection.kernels = std::move(*specs);
  if (out.selection.kernels.empty())
    return std::move(out);
  mlir::DialectRegistry registry;
  registerCodegenDialects(registry);
  mlir::MLIRContext context(registry);
  context.disableMultithreading(); // one small module: threads buy nothing
  llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> module =
      buildKernelModule(context, out.selection.kernels, options.chip);
  if (!module)
    return module.takeError();
  if (llvm::Error e = lowerToNVVM(**module))
    return std::move(e);
  llvm::Expected<std::string> ptx = translateToPTX(**module, options);
  if (!ptx)
    return ptx.takeError();
  out.ptx = std::move(*ptx);
  if (!options.cubin) {
    out.cubinAbsent = "cubin generation was turned off";
    return std::move(out);
  }
  std::string ptxas = findPtxas(options);
  for (auto k : execModule.getOps<exec::KernelOp>())
    k.setImage(exec::KernelImage::ptx);
  if (ptxas.empty()) {
    out.cubinAbsent = "ptxas was not found (looked in '" + cudaToolkitPath(options) +
                      "/bin' and on PATH); the plan carries PTX only, which the driver "
                      "compiles when the plan is loaded";
    return std::move(out);
  }
  llvm::Expected<std::string> cubin = assembleCubin(out.ptx, ptxas, options);
  if (!cubin)
    return cubin.takeError();
  out.cubin = std::move(*cubin);
  for (auto k : execModule.getOps<exec::KernelOp>())
    k.setImage(exec::KernelImage::ptx | exec::KernelImage::cubin);
  return std::move(out);
}

llvm::Error printKernels(mlir::Operation *scope, const CodegenOptions &options,
                         KernelLevel level, llvm::raw_ostream &os) {
  auto module = llvm::dyn_cast<mlir::ModuleOp>(scope);
  if (!module)
    module = scope->getParentOfType<mlir::ModuleOp>();
  llvm::Expected<std::vector<KernelSpec>> specs = kernelsOf(module, /*declaredOnly=*/false);
  if (!specs)
    return specs.takeError();
  KernelSelection sel;
  sel.kernels = std::move(*specs);
  if (sel.kernels.empty()) {
    os << "// no generated kernels: no op that lib/Codegen generates a kernel for\n";
    return llvm::Error::success();
  }
  mlir::DialectRegistry registry;
  registerCodegenDialects(registry);
  mlir::MLIRContext context(registry);
  context.disableMultithreading();
  llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> kernelModule =
      buildKernelModule(context, sel.kernels, options.chip);
  if (!kernelModule)
    return kernelModule.takeError();
  if (level != KernelLevel::Gpu)
    if (llvm::Error e = lowerToNVVM(**kernelModule))
      return e;
  if (level != KernelLevel::Ptx) {
    (*kernelModule)->print(os);
    return llvm::Error::success();
  }
  llvm::Expected<std::string> ptx = translateToPTX(**kernelModule, options);
  if (!ptx)
    return ptx.takeError();
  os << *ptx;
  return llvm::Error::success();
}

namespace {
void spec(accel::plan::Kernel &k, const std::string &name, int64_t v) {
  accel::plan::Attribute *a = k.add_specialization();
  a->set_name(name);
  a->set_i(v);
}
} // namespace

void recordKernels(const GeneratedKernels &kernels, int ptxSection, int cubinSection,
                   accel::plan::PlanMetadata &meta) {
  accel::plan::KernelModule *m = meta.mutable_kernel_module();
  m->set_sm(kernels.chip);
  m->set_ptx_section(ptxSection);
  m->set_cubin_section(cubinSection);
  m->set_dependent_launch(dependentLaunchChip(kernels.chip));
  for (const KernelSpec &s : kernels.selection.kernels) {
    accel::plan::Kernel *k = meta.add_kernels();
    k->set_name(s.name());
    k->set_family(familyName(s.family));
    for (ElemType dt : kAllElemTypes) {
      KernelVariant v = variantOf(s, dt);
      accel::plan::KernelVariant *pv = k->add_variants();
      pv->set_dtype(elemTypeName(dt));
      pv->set_symbol(v.symbol);
      pv->set_vector_width(int32_t(v.vectorWidth));
      pv->set_block_size(int32_t(v.blockSize));
    }
    k->set_grid(gridRule(s.family) == GridRule::Rows ? accel::plan::Kernel::ROWS
                                                     : accel::plan::Kernel::ELEMENTS);
    for (const std::string &p : kernelParams(s))
      k->add_params(p);
    switch (s.family) {
    case Family::RmsNorm:
    case Family::AddRmsNorm:
    case Family::ResidualAdd:
      spec(*k, "hidden", s.hidden);
      break;
    case Family::Activation:
    case Family::GatedAct: {
      spec(*k, s.family == Family::GatedAct ? "intermediate" : "hidden", s.hidden);
      accel::plan::Attribute *a = k->add_specialization();
      a->set_name("activation");
      a->set_s(s.activation);
      break;
    }
    case Family::Rotary:
      spec(*k, "heads", s.heads);
      spec(*k, "head_dim", s.headDim);
      spec(*k, "rotary_dim", s.rotaryDim);
      spec(*k, "tables", s.tables ? 1 : 0);
      spec(*k, "positions_i64", s.positions64 ? 1 : 0);
      break;
    }
  }
}

} // namespace accel::codegen
