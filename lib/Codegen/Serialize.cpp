//===- Serialize.cpp - lowered kernels → PTX (NVPTX) → cubin (ptxas) -------===//
#include "accel/Codegen/Codegen.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>

using namespace mlir;

namespace accel::codegen {

namespace {
llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// A temporary file removed when this goes.
struct TempFile {
  llvm::SmallString<128> path;
  ~TempFile() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
};
} // namespace

std::string cudaToolkitPath(const CodegenOptions &options) {
  if (!options.cudaPath.empty())
    return options.cudaPath;
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *v = std::getenv(var); v && *v)
      return v;
  return "/usr/local/cuda";
}

std::string findLibdevice(const CodegenOptions &options) {
  llvm::SmallString<256> p(cudaToolkitPath(options));
  llvm::sys::path::append(p, "nvvm", "libdevice", "libdevice.10.bc");
  return llvm::sys::fs::exists(p) ? std::string(p) : std::string();
}

std::string findPtxas(const CodegenOptions &options) {
  llvm::SmallString<256> p(cudaToolkitPath(options));
  llvm::sys::path::append(p, "bin", "ptxas");
  if (llvm::sys::fs::can_execute(p))
    return std::string(p);
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("ptxas"))
    return *found;
  return "";
}

llvm::Expected<std::string> translateToPTX(ModuleOp lowered, const CodegenOptions &options) {
  // Calls of libdevice functions (__nv_expf, ...) need its bitcode linked.
  bool needsLibdevice = false;
  lowered.walk([&](LLVM::LLVMFuncOp f) {
    if (f.isExternal() && f.getName().starts_with("__nv_"))
      needsLibdevice = true;
  });
  if (needsLibdevice && findLibdevice(options).empty())
    return error("the generated kernels call libdevice, which was not found in the CUDA "
                 "toolkit at '" +
                 cudaToolkitPath(options) + "' (nvvm/libdevice/libdevice.10.bc; set -cuda-path)");
  GpuModuleToBinaryPassOptions opts;
  opts.toolkitPath = cudaToolkitPath(options);
  opts.compilationTarget = "isa";
  PassManager pm(lowered.getContext());
  pm.addPass(createGpuModuleToBinaryPass(opts));
  std::string diag;
  ScopedDiagnosticHandler handler(lowered.getContext(), [&](Diagnostic &d) {
    llvm::raw_string_ostream os(diag);
    os << d.str() << "\n";
    return success();
  });
  if (failed(pm.run(lowered)))
    return error("translating the generated kernels to PTX failed: " + diag);
  std::string ptx;
  lowered.walk([&](gpu::BinaryOp bin) {
    for (Attribute a : bin.getObjects())
      if (auto obj = dyn_cast<gpu::ObjectAttr>(a))
        ptx = obj.getObject().getValue().str();
  });
  if (ptx.empty())
    return error("the NVPTX backend produced no PTX for the generated kernels");
  // The object may carry a trailing NUL; the plan's section holds the text.
  while (!ptx.empty() && ptx.back() == '\0')
    ptx.pop_back();
  return ptx;
}

llvm::Expected<std::string> assembleCubin(llvm::StringRef ptx, const std::string &ptxas,
                                          const CodegenOptions &options) {
  TempFile in, out, log;
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("accel-kernels", "ptx", fd, in.path))
    return error("cannot create a temporary file for ptxas: " + ec.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << ptx;
  }
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("accel-kernels", "cubin", out.path))
    return error("cannot create a temporary file for ptxas: " + ec.message());
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("accel-ptxas", "log", log.path))
    return error("cannot create a temporary file for ptxas: " + ec.message());
  std::string arch = "-arch=" + options.chip;
  llvm::SmallVector<llvm::StringRef> args = {ptxas, arch, "-O3", in.path, "-o", out.path};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.path.str(), log.path.str()};
  std::string why;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0, &why);
  if (rc != 0) {
    std::string msg;
    if (auto buf = llvm::MemoryBuffer::getFile(log.path))
      msg = (*buf)->getBuffer().trim().str();
    return error("ptxas (" + ptxas + ") failed on the generated kernels for " + options.chip +
                 ": " + (msg.empty() ? why : msg));
  }
  auto buf = llvm::MemoryBuffer::getFile(out.path, /*IsText=*/false);
  if (!buf)
    return error("cannot read the cubin ptxas wrote: " + buf.getError().message());
  return (*buf)->getBuffer().str();
}

} // namespace accel::codegen
