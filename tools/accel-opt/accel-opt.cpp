//===- accel-opt.cpp - the pass developer's driver ------------------------===//
//
// Parses MLIR in any accel dialect (plus func and arith), runs the passes
// named on the command line and prints the result: what lit tests use.
//
//===----------------------------------------------------------------------===//
#include "accel/passes/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  accel::registerAccelPasses();
  // The generic cleanups every pipeline uses.
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  mlir::DialectRegistry registry;
  accel::registerAccelDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "accel optimizer driver\n", registry));
}
