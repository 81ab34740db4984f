//===- accelc.cpp - the accel compiler driver -----------------------------===//
#include "accel/passes/Passes.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

static cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<model.onnx>"),
                                          cl::Required);
static cl::opt<std::string> outputFilename("o", cl::desc("Output plan"),
                                           cl::value_desc("file"), cl::init("-"));

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "accel compiler\n");
  llvm::WithColor::error(llvm::errs(), "accelc")
      << "importing ONNX is not implemented yet (issue 3); '" << inputFilename
      << "' was not read\n";
  return 3;
}
