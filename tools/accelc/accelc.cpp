//===- accelc.cpp - the accel compiler driver -----------------------------===//
//
// accelc model.onnx -emit=onnx [-o out.mlir]
//
// Thin: parses flags and hands over to lib/. Each -emit level stops the
// pipeline after that level and prints it (as iree-compile --compile-to).
//
//===----------------------------------------------------------------------===//
#include "accel/Import/OnnxImporter.h"
#include "accel/passes/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace {
enum class EmitLevel { Onnx, Transformer, Exec, Plan };

cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<model.onnx>"), cl::Required);
cl::opt<std::string> outputFilename("o", cl::desc("Output file ('-' for stdout)"),
                                    cl::value_desc("file"), cl::init("-"));
cl::opt<EmitLevel> emitLevel(
    "emit", cl::desc("Stop after this level and print it"), cl::init(EmitLevel::Plan),
    cl::values(clEnumValN(EmitLevel::Onnx, "onnx", "the onnx dialect, as imported"),
               clEnumValN(EmitLevel::Transformer, "transformer",
                          "the transformer dialect, after raising (not yet)"),
               clEnumValN(EmitLevel::Exec, "exec", "the exec schedule (not yet)"),
               clEnumValN(EmitLevel::Plan, "plan", "a plan file (not yet)")));
cl::opt<std::string> target("target", cl::desc("Target: cpu, a100, h100, h200"),
                            cl::init("cpu"));
cl::opt<bool> printWeights("print-weights",
                           cl::desc("Print weight blobs in full (they are elided "
                                    "by default, which makes the output unparsable)"),
                           cl::init(false));
cl::opt<int64_t> inlineBytes("inline-constant-bytes",
                             cl::desc("Initializers up to this size are printed inline"),
                             cl::init(256));
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  cl::ParseCommandLineOptions(argc, argv,
                              "accelc: compiles ONNX transformer models into plans\n");
  auto fail = [](const llvm::Twine &msg) {
    llvm::WithColor::error(llvm::errs(), "accelc") << msg << "\n";
    return 1;
  };
  static const char *kTargets[] = {"cpu", "a100", "h100", "h200"};
  if (llvm::find(kTargets, target) == std::end(kTargets))
    return fail("unknown target '" + target + "' (expected cpu, a100, h100 or h200)");

  mlir::DialectRegistry registry;
  accel::registerAccelDialects(registry);
  mlir::MLIRContext context(registry);
  // One line per diagnostic: "<file>[: node '<name>']: error: <message>".
  mlir::ScopedDiagnosticHandler diagnostics(&context, [](mlir::Diagnostic &d) {
    std::string where;
    mlir::Location loc = d.getLocation();
    if (auto name = mlir::dyn_cast<mlir::NameLoc>(loc)) {
      if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(name.getChildLoc()))
        where = file.getFilename().str() + ": node '" + name.getName().str() + "'";
    } else if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(loc)) {
      where = file.getFilename().str();
      if (file.getLine())
        where += ":" + std::to_string(file.getLine()) + ":" + std::to_string(file.getColumn());
    }
    if (where.empty()) {
      llvm::raw_string_ostream os(where);
      loc.print(os);
    }
    const char *kind = d.getSeverity() == mlir::DiagnosticSeverity::Error     ? "error"
                       : d.getSeverity() == mlir::DiagnosticSeverity::Warning ? "warning"
                       : d.getSeverity() == mlir::DiagnosticSeverity::Remark  ? "remark"
                                                                              : "note";
    llvm::errs() << where << ": " << kind << ": " << d.str() << "\n";
    for (const mlir::Diagnostic &note : d.getNotes())
      llvm::errs() << where << ": note: " << note.str() << "\n";
    return mlir::success();
  });

  accel::OnnxImportOptions importOptions;
  importOptions.inlineConstantBytes = inlineBytes;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      accel::importOnnxFile(context, inputFilename, importOptions);
  if (!module)
    return 1;

  if (emitLevel != EmitLevel::Onnx)
    return fail("-emit=transformer, -emit=exec and plan output are not implemented "
                "yet (raising arrives with issue 3, plans with issue 4); use -emit=onnx");

  std::string error;
  auto output = mlir::openOutputFile(outputFilename, &error);
  if (!output)
    return fail(error);
  mlir::OpPrintingFlags flags;
  if (!printWeights)
    flags.elideLargeResourceString(64);
  module->print(output->os(), flags);
  output->keep();
  return 0;
}
