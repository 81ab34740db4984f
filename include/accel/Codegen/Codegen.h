//===- Codegen.h - generated GPU kernels: select, build, lower, assemble -*- C++ -*-===//
//
// The compiler's kernel generator (docs/codegen.md). For an exec module and a
// GPU target it
//   1. selects the steps it generates kernels for (selectKernels, which
//      accel-exec-select-kernels runs): exec.rms_norm, add_rms_norm,
//      residual_add, activation, gated_act (and the activation of a
//      gated_mlp with fused gate_up), half_split rotary; one kernel per
//      distinct specialisation (KernelSpec), declared as an exec.kernel;
//   2. builds one gpu.module holding every dtype variant of every kernel
//      (buildKernelModule; `accelc -emit=kernels` prints it);
//   3. lowers it to the NVVM and LLVM dialects (lowerToNVVM: scf → cf,
//      convert-gpu-to-nvvm; `accelc -emit=nvvm`);
//   4. translates it to PTX with LLVM's NVPTX backend (gpu-module-to-binary,
//      format=isa, libdevice linked from the CUDA toolkit; `-emit=ptx`);
//   5. assembles the PTX to a cubin for the target SM with ptxas.
// The plan carries the PTX and the cubin (lib/Plan, docs/plan-format.md).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_CODEGEN_CODEGEN_H
#define ACCEL_CODEGEN_CODEGEN_H

#include "accel/Codegen/KernelSpec.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace accel::plan {
class PlanMetadata;
}

namespace accel::codegen {

struct CodegenOptions {
  /// The target SM: "sm_80", "sm_90".
  std::string chip = "sm_90";
  /// The CUDA toolkit (libdevice, ptxas). Empty: $CUDA_HOME, $CUDA_PATH,
  /// else /usr/local/cuda.
  std::string cudaPath;
  /// Assemble a cubin with ptxas (when it is found).
  bool cubin = true;
};

/// The kernels an exec module's steps can run, and the kernel of each step.
struct KernelSelection {
  std::vector<KernelSpec> kernels; // distinct, sorted by name
  llvm::DenseMap<mlir::Operation *, std::string> kernelOf;
};
/// The kernels of every exec step in `scope` (a schedule, or a module).
KernelSelection selectKernels(mlir::Operation *scope);

/// The `config` of the exec.kernel that declares `spec` (its specialisation).
mlir::DictionaryAttr specConfig(const KernelSpec &spec, mlir::MLIRContext *context);
/// The spec an exec.kernel declares (its `implements` family and config),
/// or nullopt for one this generator does not make.
std::optional<KernelSpec> specFromKernel(mlir::Operation *kernelOp);

/// Registers what building, lowering and serialising kernels needs.
void registerCodegenDialects(mlir::DialectRegistry &registry);

/// Whether kernels for `chip` ("sm_90") are written for programmatic
/// dependent launch (griddepcontrol: sm_90 and later).
bool dependentLaunchChip(llvm::StringRef chip);

/// A builtin module (gpu.container_module) holding one gpu.module
/// @accel_kernels with the NVVM target `chip` and every dtype variant of
/// `kernels` as a gpu.func, parsed and verified; on sm_90+ each starts with
/// griddepcontrol.launch_dependents and .wait (dependentLaunchChip).
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildKernelModule(mlir::MLIRContext &context, llvm::ArrayRef<KernelSpec> kernels,
                  llvm::StringRef chip);

/// Lowers the gpu.module in place to the NVVM and LLVM dialects.
llvm::Error lowerToNVVM(mlir::ModuleOp module);

/// The CUDA toolkit options.cudaPath stands for, and its tools.
std::string cudaToolkitPath(const CodegenOptions &options);
/// libdevice.10.bc of the toolkit, or empty when it has none.
std::string findLibdevice(const CodegenOptions &options);
/// ptxas of the toolkit (else on PATH), or empty.
std::string findPtxas(const CodegenOptions &options);

/// The PTX of a lowered module (LLVM's NVPTX backend, libdevice linked).
llvm::Expected<std::string> translateToPTX(mlir::ModuleOp lowered,
                                           const CodegenOptions &options);
/// A cubin for options.chip from `ptx`, by ptxas at `ptxas`.
llvm::Expected<std::string> assembleCubin(llvm::StringRef ptx, const std::string &ptxas,
                                          const CodegenOptions &options);

/// Everything a GPU plan carries of its generated kernels.
struct GeneratedKernels {
  std::string chip;
  std::string ptx;
  std::string cubin;       // empty: PTX only
  std::string cubinAbsent; // why there is no cubin (one sentence), else empty
  KernelSelection selection;
  bool empty() const { return selection.kernels.empty(); }
};

/// Steps 2-5 for the exec.kernel declarations of `module` (what
/// accel-exec-select-kernels declared), in a context of their own; records
/// the images made in each declaration's `image`. With no kernel declared,
/// returns an empty set (and runs nothing).
llvm::Expected<GeneratedKernels> generateKernels(mlir::ModuleOp module,
                                                 const CodegenOptions &options);

/// What `accelc -emit=kernels|nvvm|ptx` prints of a function's kernels.
enum class KernelLevel {
  Gpu,  // the gpu.module as built (gpu, scf, arith, math, vector, llvm ops)
  Nvvm, // after lowerToNVVM (the LLVM and NVVM dialects)
  Ptx,  // the PTX text
};
/// Prints the generated kernels of the exec module `scope` (its declared
/// kernels, else those its steps could run) at `level` ("// no generated
/// kernels" when it has none).
llvm::Error printKernels(mlir::Operation *scope, const CodegenOptions &options,
                         KernelLevel level, llvm::raw_ostream &os);

/// Records the kernels in the plan's metadata: the module (its PTX and
/// cubin at section indices ptxSection / cubinSection, -1 for none) and
/// one accel.plan.Kernel per kernel.
void recordKernels(const GeneratedKernels &kernels, int ptxSection, int cubinSection,
                   accel::plan::PlanMetadata &meta);

} // namespace accel::codegen

#endif // ACCEL_CODEGEN_CODEGEN_H
