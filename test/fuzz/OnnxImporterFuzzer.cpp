//===- OnnxImporterFuzzer.cpp - libFuzzer target for the ONNX importer ----===//
//
// Feeds arbitrary bytes to accel::importOnnxBuffer. The importer must reject
// any input with a diagnostic: it must never crash, abort, or hang. Built by
// -DACCEL_BUILD_FUZZERS=ON with Clang (docs/building.md, "Fuzzing").
//
//===----------------------------------------------------------------------===//
#include "accel/Import/OnnxImporter.h"

#include "accel/dialects/Onnx/OnnxDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A context of its own for every input, made and destroyed here. A context
  // kept across inputs holds every uniqued attribute and dense_resource blob
  // it ever saw; then almost every input ends with more allocations than
  // frees, and libFuzzer answers each such input with a LeakSanitizer scan of
  // the whole heap (5x slower than the import itself). Freed here, a clean
  // input is balanced and only a real leak is scanned for.
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.loadDialect<accel::onnx::OnnxDialect, mlir::func::FuncDialect>();
  // Errors are the expected outcome for almost every input: swallow them.
  mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &) { return mlir::success(); });
  mlir::OwningOpRef<mlir::ModuleOp> module = accel::importOnnxBuffer(
      context, llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.onnx");
  (void)module;
  return 0;
}
