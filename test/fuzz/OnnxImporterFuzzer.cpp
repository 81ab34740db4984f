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
#include <memory>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // One context for many inputs (creating one and loading the onnx dialect
  // costs more than most imports), replaced now and then: a context keeps
  // every uniqued attribute and every dense_resource blob (with the parsed
  // model it points into) for its whole life, so memory would grow without
  // bound over a long run.
  static std::unique_ptr<mlir::MLIRContext> context;
  static unsigned uses = 0;
  if (!context || ++uses % 64 == 0) {
    context = std::make_unique<mlir::MLIRContext>(mlir::MLIRContext::Threading::DISABLED);
    context->loadDialect<accel::onnx::OnnxDialect, mlir::func::FuncDialect>();
  }
  // Errors are the expected outcome for almost every input: swallow them.
  mlir::ScopedDiagnosticHandler quiet(context.get(),
                                      [](mlir::Diagnostic &) { return mlir::success(); });
  mlir::OwningOpRef<mlir::ModuleOp> module = accel::importOnnxBuffer(
      *context, llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.onnx");
  (void)module;
  return 0;
}
