//===- accelc.cpp - the accel compiler driver -----------------------------===//
//
// accelc model.onnx -emit=onnx [-o out.mlir]
// accelc model.onnx -o model.plan          (lib/Driver/Compile.cpp)
//
// Thin: parses flags and hands over to lib/. Each -emit level stops the
// pipeline after that level and prints it (as iree-compile --compile-to).
//
//===----------------------------------------------------------------------===//
#include "accel/Codegen/Codegen.h"
#include "AccuracyReport.h"
#include "accel/Driver/Compile.h"
#include "accel/Driver/Diagnostics.h"
#include "accel/Driver/Pipeline.h"
#include "accel/Eval/Evaluator.h"
#include "accel/Eval/Stepper.h"
#include "accel/Import/CheckpointImporter.h"
#include "accel/Import/OnnxImporter.h"
#include "accel/Plan/PlanWriter.h"
#include "accel/Target/Target.h"
#include "accel/Weights/Weights.h"
#include "accel/dialects/Exec/ExecOps.h"
#include "accel/dialects/Exec/ExecUtils.h"
#include "accel/passes/Passes.h"

#include "core/Json.h"
#include "core/Npy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <chrono>
#include <unistd.h>
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace {
enum class EmitLevel { Onnx, Transformer, Fused, Partitioned, Exec, Kernels, Nvvm, Ptx, Plan };

cl::OptionCategory accelcCategory("accelc options");
cl::opt<std::string> inputFilename(cl::cat(accelcCategory), cl::Positional,
                                   cl::desc("<model.onnx>"), cl::Required);
cl::opt<std::string> outputFilename(cl::cat(accelcCategory), "o",
                                    cl::desc("Output file ('-' for stdout)"),
                                    cl::value_desc("file"), cl::init("-"));
cl::opt<EmitLevel> emitLevel(
    cl::cat(accelcCategory), "emit", cl::desc("Stop after this level and print it"),
    cl::init(EmitLevel::Plan),
    cl::values(clEnumValN(EmitLevel::Onnx, "onnx", "the onnx dialect, as imported"),
               clEnumValN(EmitLevel::Transformer, "transformer",
                          "the transformer dialect, after raising"),
               clEnumValN(EmitLevel::Fused, "fused",
                          "the transformer dialect after raising, precision and fusion"),
               clEnumValN(EmitLevel::Partitioned, "partitioned",
                          "the fused transformer dialect split over -tp ranks and -pp stages"),
               clEnumValN(EmitLevel::Exec, "exec",
                          "the exec schedule: steps over views, the memory plan, the kernels"),
               clEnumValN(EmitLevel::Kernels, "kernels",
                          "the generated GPU kernels as a gpu.module (-target=a100|h100|h200)"),
               clEnumValN(EmitLevel::Nvvm, "nvvm",
                          "the generated GPU kernels lowered to the NVVM/LLVM dialects"),
               clEnumValN(EmitLevel::Ptx, "ptx", "the generated GPU kernels' PTX"),
               clEnumValN(EmitLevel::Plan, "plan", "a plan file (the default; needs -o)")));
cl::opt<std::string> target(cl::cat(accelcCategory), "target",
                            cl::desc("Target: cpu, a100, h100, h200"), cl::init("cpu"));
cl::opt<bool> printWeights(cl::cat(accelcCategory), "print-weights",
                           cl::desc("Print weight blobs in full (they are elided "
                                    "by default, which makes the output unparsable)"),
                           cl::init(false));
cl::opt<bool> interpret(cl::cat(accelcCategory), "interpret",
                        cl::desc("Run the emitted level on the CPU reference kernels "
                                 "instead of printing it (inputs from -input, "
                                 "outputs written to -output-dir)"),
                        cl::init(false));
cl::list<std::string> interpretInputs(cl::cat(accelcCategory), "input",
                                      cl::desc("A graph input for -interpret: "
                                               "<name>=<file.npy>"),
                                      cl::value_desc("name=file.npy"));
cl::opt<std::string> outputDir(cl::cat(accelcCategory), "output-dir",
                               cl::desc("Where -interpret writes <output name>.npy"),
                               cl::init("."));
cl::opt<int64_t>
    interpretChunk(cl::cat(accelcCategory), "interpret-chunk",
                   cl::desc("-interpret of a token-major function: tokens per step (0: the whole "
                            "prompt in one step; 1: token by token through the KV cache)"),
                   cl::init(0));
cl::opt<std::string>
    tokenizerPath(cl::cat(accelcCategory), "tokenizer",
                  cl::desc("The HF tokenizer.json the plan carries (default: tokenizer.json beside "
                           "the model, when there is one)"),
                  cl::value_desc("file"));
cl::opt<std::string>
    precision(cl::cat(accelcCategory), "precision",
              cl::desc("Plans: the precision weights are stored and computed in: f32 (default), "
                       "bf16, fp16, int8-weight, int4-weight, fp8, w8a8, w8a8-fp8 (docs/precision.md)"),
              cl::init("f32"));
cl::opt<std::string> calibration(
    cl::cat(accelcCategory), "calibration",
    cl::desc("token ids (.npy, [S] or [N, S]) the model runs on to calibrate: each linear's "
             "activation range (-precision=w8a8, w8a8-fp8) and per-KV-head cache scales "
             "(-kv-cache-dtype=fp8)"),
    cl::value_desc("tokens.npy"));
cl::opt<double> smoothQuantAlpha(
    cl::cat(accelcCategory), "smoothquant-alpha",
    cl::desc("-precision=w8a8: SmoothQuant's migration strength in [0, 1] (default 0.5)"),
    cl::init(0.5));
cl::opt<bool> smoothQuant(
    cl::cat(accelcCategory), "smoothquant",
    cl::desc("-precision=w8a8: migrate activation outliers into the weights before quantising "
             "(default true; -smoothquant=false quantises as calibrated)"),
    cl::init(true));
cl::opt<bool> int4ZeroPoints(
    cl::cat(accelcCategory), "int4-zero-points",
    cl::desc("-precision=int4-weight: asymmetric groups, each with an i4 zero point (default "
             "false: symmetric, +-7)"),
    cl::init(false));
cl::opt<double> gpuMemoryUtilization(
    cl::cat(accelcCategory), "gpu-memory-utilization",
    cl::desc("GPU targets: the fraction of the target's HBM each GPU of the plan may use "
             "(default 0.9, as accel-run's); a -tp/-pp split whose weights and activations do "
             "not fit it is refused"),
    cl::init(0.9));
cl::opt<bool> smoothQuantOnly(
    cl::cat(accelcCategory), "smoothquant-only", cl::Hidden,
    cl::desc("-precision=w8a8 with -emit=fused: calibrate and migrate, quantise nothing (the "
             "IR then computes what the f32 IR does; a check of the migration)"),
    cl::init(false));
cl::opt<int64_t> tpSize(cl::cat(accelcCategory), "tp",
                        cl::desc("Tensor-parallel ranks to partition the model for "
                                 "(docs/passes/partition.md; default 1)"),
                        cl::init(1));
cl::opt<int64_t> ppSize(cl::cat(accelcCategory), "pp",
                        cl::desc("Pipeline stages to split the model into by decoder layers "
                                 "(docs/passes/partition.md; default 1; combines with -tp)"),
                        cl::init(1));
cl::opt<int64_t> padGemmDims(
    cl::cat(accelcCategory), "pad-gemm-dims",
    cl::desc("Pad each MLP's intermediate size to a multiple of N elements with zero weights "
             "(docs/passes/layout.md; default: the target's rule, 64 on GPUs and none on the "
             "CPU; 0: no padding; times -tp)"),
    cl::init(-1));
cl::opt<bool> noCodegen(cl::cat(accelcCategory), "no-codegen",
                        cl::desc("GPU plans: carry no generated kernels (every step runs the "
                                 "runtime's hand-written kernels; docs/codegen.md)"),
                        cl::init(false));
cl::opt<std::string>
    cudaPath(cl::cat(accelcCategory), "cuda-path",
             cl::desc("The CUDA toolkit kernel generation takes libdevice and ptxas from (default: "
                      "$CUDA_HOME, $CUDA_PATH, else /usr/local/cuda)"),
             cl::value_desc("dir"));
cl::opt<std::string> kvCacheDtype(
    cl::cat(accelcCategory), "kv-cache-dtype",
    cl::desc("Plans: the paged KV cache's element type: auto (the model's, default) or fp8 "
             "(f8E4M3FN; scales 1.0 per layer, or per KV head from -calibration)"),
    cl::init("auto"));
cl::opt<std::string> reportAccuracyTokens(
    cl::cat(accelcCategory), "report-accuracy",
    cl::desc("With -precision: compile f32 and the mode, score both on the CPU over these token "
             "ids (.npy, [S] or [N, S]) and print top-1 agreement, KL and perplexity"),
    cl::value_desc("tokens.npy"));
cl::opt<bool> verbose(cl::cat(accelcCategory), "v",
                      cl::desc("Print each phase of the compile (the import, each pass, kernel "
                               "generation, writing the plan) with its time and memory"),
                      cl::init(false));
cl::opt<bool> noTokenizer(cl::cat(accelcCategory), "no-tokenizer",
                          cl::desc("Write a plan without a tokenizer"), cl::init(false));
cl::opt<std::string>
    configPath(cl::cat(accelcCategory), "model-config",
               cl::desc("The HF config.json giving max positions and BOS/EOS ids (default: "
                        "config.json beside the model, when there is one)"),
               cl::value_desc("file"));
cl::opt<bool> printMemoryPlan(
    cl::cat(accelcCategory), "print-memory-plan",
    cl::desc("Print the activations arena the exec level plans (accel-exec-assign-buffers, "
             "docs/passes/layout.md): one row per buffer, then the region sizes"),
    cl::init(false));
cl::opt<int64_t> maxTokens(cl::cat(accelcCategory), "max-tokens",
                           cl::desc("-print-memory-plan: a step's tokens (and sequences), to "
                                    "give the arena in bytes (default 2048)"),
                           cl::init(2048));
cl::opt<bool> allowHostSteps(
    cl::cat(accelcCategory), "allow-host-steps",
    cl::desc("GPU plans: keep ONNX operators raising left (the GPU runtime runs them on the "
             "host every step, without CUDA graphs) instead of refusing the model"),
    cl::init(false));
cl::opt<int64_t> inlineBytes(cl::cat(accelcCategory), "inline-constant-bytes",
                             cl::desc("Initializers up to this size are printed inline"),
                             cl::init(256));
} // namespace

/// -interpret: binds each function argument to the .npy given for its ONNX
/// name, evaluates, and writes each result as <name>.npy in -output-dir. A
/// token-major function (after raising) takes only the token ids; it runs
/// step by step through a paged KV cache (eval::runSequence), and its
/// per-step logits are written as one [1, S, vocab] logits.npy.
static bool runInterpreter(mlir::ModuleOp module) {
  auto fail = [](const llvm::Twine &msg) {
    llvm::WithColor::error(llvm::errs(), "accelc") << msg << "\n";
    return false;
  };
  mlir::func::FuncOp func;
  for (auto f : module.getOps<mlir::func::FuncOp>())
    if (!f.isDeclaration())
      func = f;
  if (!func)
    return fail("-interpret: the module has no function to run");
  const bool tokenMajor = accel::eval::isTokenMajor(func);
  if (interpretChunk.getNumOccurrences() && !tokenMajor)
    return fail("-interpret-chunk needs a token-major function (-emit=transformer)");
  if (interpretChunk < 0)
    return fail("-interpret-chunk must be 0 (the whole prompt in one step) or positive, got " +
                llvm::Twine(int64_t(interpretChunk)));
  llvm::StringMap<std::string> files;
  for (const std::string &spec : interpretInputs) {
    auto [name, path] = llvm::StringRef(spec).split('=');
    if (path.empty())
      return fail("-input '" + spec + "' is not <name>=<file.npy>");
    files[name] = path.str();
  }
  auto nameOf = [](mlir::DictionaryAttr attrs, unsigned i) {
    if (attrs)
      if (auto n = attrs.getAs<mlir::StringAttr>("onnx.name"))
        return n.getValue().str();
    return "arg" + std::to_string(i);
  };
  std::vector<accel::rt::Tensor> args;
  auto readInput = [&](const std::string &name) {
    auto it = files.find(name);
    if (it == files.end())
      return fail("-interpret: no -input given for graph input '" + name + "'");
    accel::rt::StatusOr<accel::rt::Tensor> t = accel::rt::readNpy(it->second);
    if (!t)
      return fail("-input " + name + ": " + t.status().message());
    files.erase(it);
    args.push_back(std::move(*t));
    return true;
  };
  auto writeOutput = [&](const std::string &name, const accel::rt::Tensor &t) {
    llvm::SmallString<256> path(outputDir);
    llvm::sys::path::append(path, name + ".npy");
    accel::rt::Status s = accel::rt::writeNpy(std::string(path), t);
    return s.isOk() || fail(s.message());
  };

  if (tokenMajor) {
    std::optional<unsigned> idsArg = accel::eval::tokenIdsArgument(func);
    if (!idsArg)
      return fail("-interpret: @" + func.getSymName() +
                  " must take exactly one tensor argument, the token ids");
    // Raising may drop the argument's ONNX name; the ids are input_ids.
    mlir::DictionaryAttr attrs = func.getArgAttrDict(*idsArg);
    std::string name = attrs && attrs.get("onnx.name") ? nameOf(attrs, *idsArg) : "input_ids";
    if (!readInput(name))
      return false;
  } else {
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (!readInput(nameOf(func.getArgAttrDict(i), i)))
        return false;
  }
  if (!files.empty())
    return fail("-interpret: the graph has no input named '" + files.begin()->first() + "'");
  if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
    return fail("cannot create '" + outputDir + "': " + ec.message());

  if (tokenMajor) {
    llvm::Expected<accel::rt::Tensor> logits =
        accel::eval::runSequence(func, args[0], interpretChunk);
    if (!logits)
      return fail("-interpret: " + llvm::toString(logits.takeError()));
    return writeOutput("logits", *logits);
  }
  llvm::Expected<std::vector<accel::rt::Tensor>> results =
      accel::eval::evaluateFunction(func, args);
  if (!results)
    return fail("-interpret: " + llvm::toString(results.takeError()));
  for (auto [i, t] : llvm::enumerate(*results))
    if (!writeOutput(nameOf(func.getResultAttrDict(i), i), t))
      return false;
  return true;
}

static int fail(const llvm::Twine &msg) {
  llvm::WithColor::error(llvm::errs(), "accelc") << msg << "\n";
  return 1;
}

/// Where a row of -print-memory-plan comes from.
static std::string describeRow(mlir::Location loc) {
  // A fused op (QKV, add + norm) carries the nodes it came from: name them all.
  auto fused = mlir::dyn_cast<mlir::FusedLoc>(loc);
  if (!fused)
    return accel::describeLocation(loc);
  std::string file, nodes;
  for (mlir::Location part : fused.getLocations()) {
    auto name = mlir::dyn_cast<mlir::NameLoc>(part);
    auto where = name ? mlir::dyn_cast<mlir::FileLineColLoc>(name.getChildLoc()) : nullptr;
    if (!where || (!file.empty() && file != where.getFilename().str()))
      return accel::describeLocation(loc);
    file = where.getFilename().str();
    nodes += (nodes.empty() ? "'" : ", '") + name.getName().str() + "'";
  }
  return file.empty() ? accel::describeLocation(loc) : file + ": nodes " + nodes;
}

/// -print-memory-plan: the exec level's activations arena. One row per
/// buffer (a slice of @act: its region, offset, bytes per unit and live
/// steps; the first step that writes it and its node), then the regions'
/// sizes, what one buffer per value would take, and both at -max-tokens.
static accel::CompileOptions flagCompileOptions();

/// A failed compileToPlan: its diagnostic lines as they are (they name their
/// node and say "error"), anything else as accelc's one error; returns 1.
static int printCompileError(llvm::Error e) {
  llvm::handleAllErrors(std::move(e), [](const accel::CompileError &ce) {
    if (ce.fromDiagnostics())
      llvm::errs() << ce.message() << "\n";
    else
      fail(ce.message());
  });
  return 1;
}

static int emitMemoryPlan(mlir::ModuleOp module) {
  std::string error;
  auto output = mlir::openOutputFile(outputFilename, &error);
  if (!output)
    return fail(error);
  llvm::raw_ostream &os = output->os();
  mlir::AsmState state(module);
  auto name = [&](mlir::Value v) {
    std::string s;
    llvm::raw_string_ostream vs(s);
    v.printAsOperand(vs, state);
    return s;
  };
  accel::exec::ArenaOp arena;
  for (auto a : module.getOps<accel::exec::ArenaOp>())
    if (a.getKind() == accel::exec::ArenaKind::activations)
      arena = a;
  for (auto schedule : module.getOps<accel::exec::ScheduleOp>()) {
    // Steps in order; each slice's first writer and live interval.
    llvm::DenseMap<mlir::Operation *, int64_t> stepIndex;
    int64_t n = 0;
    for (mlir::Operation &op : schedule.getBody().front())
      if (accel::exec::isStep(&op))
        stepIndex[&op] = n++;
    os << "activations arena of @" << schedule.getSymName()
       << " (bytes; per token or per sequence outside the fixed region; live: first..last "
          "step)\n";
    os << llvm::formatv("{0,-8} {1,-7} {2,10} {3,10} {4,-11} {5,-24} {6}\n", "buffer", "region",
                        "offset", "bytes", "live", "written by", "location");
    int64_t naive[3] = {0, 0, 0};
    for (auto slice : schedule.getOps<accel::exec::SliceOp>()) {
      int64_t first = -1, last = -1;
      mlir::Operation *writer = nullptr;
      llvm::SmallVector<mlir::Value> worklist{slice.getResult()};
      while (!worklist.empty()) {
        mlir::Value v = worklist.pop_back_val();
        for (mlir::Operation *user : v.getUsers()) {
          if (auto view = llvm::dyn_cast<accel::exec::ViewOp>(user)) {
            worklist.push_back(view.getResult());
            continue;
          }
          auto it = stepIndex.find(user);
          if (it == stepIndex.end())
            continue;
          first = first < 0 ? it->second : std::min(first, it->second);
          last = std::max(last, it->second);
          if (llvm::is_contained(accel::exec::getStepOutputs(user), v) &&
              (!writer || it->second < stepIndex[writer]))
            writer = user;
        }
      }
      auto type = llvm::cast<accel::exec::ViewType>(slice.getType());
      int64_t bytes = accel::exec::getBytesPerUnit(type).value_or(0);
      const int64_t align = arena ? std::max<int64_t>(1, arena.getAlignment()) : 1;
      naive[int(slice.getRegion())] += (bytes + align - 1) / align * align;
      os << llvm::formatv("{0,-8} {1,-7} {2,10} {3,10} {4,-11} {5,-24} {6}\n", name(slice),
                          accel::exec::stringifyArenaRegion(slice.getRegion()),
                          slice.getOffset(), bytes,
                          std::to_string(first) + ".." + std::to_string(last),
                          writer ? writer->getName().getStringRef() : llvm::StringRef("-"),
                          writer ? describeRow(writer->getLoc()) : std::string());
    }
    if (!arena)
      return fail("internal error: the exec module has no activations arena");
    const int64_t T = maxTokens;
    auto at = [&](int64_t fixed, int64_t perToken, int64_t perSeq) {
      return fixed + (perToken + perSeq) * T;
    };
    const int64_t planned = at(arena.getSize(), arena.getPerToken(), arena.getPerSeq());
    const int64_t unshared = at(naive[0], naive[1], naive[2]);
    os << "arena: fixed " << arena.getSize() << ", per token " << arena.getPerToken()
       << ", per sequence " << arena.getPerSeq() << ", aligned to " << arena.getAlignment()
       << "; one buffer per value: fixed " << naive[0]
       << ", per token " << naive[1] << ", per sequence " << naive[2] << "\n";
    os << "at " << T << " tokens and sequences: " << planned << " bytes, one buffer per value "
       << unshared << " bytes ("
       << llvm::formatv("{0:F2}", planned ? double(unshared) / double(planned) : 1.0) << "x)\n";
  }
  // A GPU target: what each GPU of the plan would hold. The plan is compiled
  // to a temporary file for its per-rank weights (runtime/engine/PlanMemory.h;
  // the same table accelc -v prints, and the same check).
  const accel::target::TargetDesc *t = accel::target::lookup(target);
  if (t && t->isGpu && !llvm::StringRef(inputFilename).ends_with(".mlir")) {
    llvm::SmallString<128> tmp;
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile("accelc-memory", "plan", tmp))
      return fail("cannot create a temporary plan for the per-GPU table: " + ec.message());
    accel::CompileOptions options = flagCompileOptions();
    options.outputPath = std::string(tmp);
    options.gpuCheckTokens = maxTokens;
    std::vector<std::string> table;
    options.onPhase = [&](const std::string &line) {
      llvm::StringRef l(line);
      if (l.starts_with("memory per GPU") || l.starts_with("  stage "))
        table.push_back(line);
    };
    options.onDiagnostic = [](const std::string &line) { llvm::errs() << line << "\n"; };
    llvm::Error compiled = accel::compileToPlan(options);
    llvm::sys::fs::remove(tmp);
    if (llvm::Error e = std::move(compiled))
      return printCompileError(std::move(e));
    for (const std::string &line : table)
      os << line << "\n";
  }
  output->keep();
  return 0;
}

/// -emit=kernels|nvvm|ptx: the kernels a GPU plan of the model would carry.
static int emitKernels(mlir::ModuleOp module) {
  const accel::target::TargetDesc *t = accel::target::lookup(target);
  if (!t || !t->isGpu)
    return fail("-emit=kernels, nvvm and ptx need a GPU target (-target=a100, h100 or h200)");
  accel::codegen::CodegenOptions options;
  options.chip = std::string(t->arch);
  options.cudaPath = cudaPath;
  std::string error;
  auto output = mlir::openOutputFile(outputFilename, &error);
  if (!output)
    return fail(error);
  const accel::codegen::KernelLevel level = emitLevel == EmitLevel::Kernels
                                                ? accel::codegen::KernelLevel::Gpu
                                            : emitLevel == EmitLevel::Nvvm
                                                ? accel::codegen::KernelLevel::Nvvm
                                                : accel::codegen::KernelLevel::Ptx;
  if (llvm::Error e = accel::codegen::printKernels(module, options, level, output->os()))
    return fail(llvm::toString(std::move(e)));
  output->keep();
  return 0;
}

/// -emit=plan of an `.mlir` file of exec-level IR (what `accel-opt
/// --pass-pipeline='builtin.module(accel-lower-to-exec,accel-exec-assign-buffers)'`
/// prints, partitioned or not): the plan writer alone, for models no
/// importer makes yet (test/Plan/moe-plans.test). A CPU plan, without a
/// tokenizer or model config.
static int emitPlanFromExecMlir() {
  if (outputFilename == "-")
    return fail("a plan is a binary file: give its path with -o (e.g. -o model.plan)");
  if (tpSize.getNumOccurrences() || ppSize.getNumOccurrences() || precision.getNumOccurrences())
    return fail("'" + inputFilename + "' is exec-level MLIR, compiled already: -tp, -pp and "
                "-precision apply to the passes before it (run them with accel-opt)");
  if (target != "cpu")
    return fail("a plan written from exec-level MLIR is a CPU plan (GPU plans need the "
                "kernels compiled with the pipeline): drop -target or compile an ONNX model");
  mlir::DialectRegistry registry;
  accel::registerAccelDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(inputFilename, &context);
  if (!module)
    return 1;
  if (module->getOps<accel::exec::ScheduleOp>().empty())
    return fail("'" + inputFilename + "' holds no exec.schedule: a plan is written from "
                "exec-level MLIR (lower transformer-dialect IR with accel-opt "
                "--pass-pipeline='builtin.module(accel-lower-to-exec,accel-exec-assign-buffers)')");
  accel::plan::PlanOptions opts;
  opts.source = inputFilename;
  if (llvm::Error e = accel::plan::writePlan(*module, opts, outputFilename))
    return fail("cannot build a plan from '" + inputFilename + "': " + llvm::toString(std::move(e)));
  return 0;
}

/// One line on stderr, rewritten in place, while a plan compiles: the phase,
/// then while weights are written the tensors written of the total and the
/// rate. Only when stderr is a terminal; nothing otherwise (docs/cli.md).
class ProgressLine {
public:
  ProgressLine() : enabled_(::isatty(2) == 1) {}
  bool enabled() const { return enabled_; }
  void update(const std::string &phase, uint64_t done, uint64_t total, uint64_t bytes) {
    auto now = std::chrono::steady_clock::now();
    if (phase != phase_) {
      phase_ = phase;
      start_ = now;
    } else if (done != total && now - last_ < std::chrono::milliseconds(100)) {
      return; // at most ten updates a second
    }
    last_ = now;
    std::string line = "accelc: " + phase;
    if (total) {
      double s = std::chrono::duration<double>(now - start_).count();
      line += llvm::formatv(": {0} / {1} tensors, {2:F2} GB, {3:F2} GB/s", done, total,
                            double(bytes) / 1e9, s > 0 ? double(bytes) / 1e9 / s : 0.0)
                  .str();
    }
    if (line.size() > 100)
      line.resize(100);
    llvm::errs() << "\r" << line << "\x1b[K";
    llvm::errs().flush();
    shown_ = true;
  }
  /// Erases the line (before other output, and at the end).
  void clear() {
    if (!shown_)
      return;
    llvm::errs() << "\r\x1b[K";
    llvm::errs().flush();
    shown_ = false;
  }

private:
  bool enabled_;
  bool shown_ = false;
  std::string phase_;
  std::chrono::steady_clock::time_point start_, last_;
};

/// The CompileOptions the flags give (what emitPlan and the per-GPU table
/// of -print-memory-plan compile with).
static accel::CompileOptions flagCompileOptions() {
  accel::CompileOptions options;
  options.onnxPath = inputFilename;
  options.outputPath = outputFilename;
  options.target = target;
  options.tokenizerPath = tokenizerPath;
  options.noTokenizer = noTokenizer;
  options.modelConfigPath = configPath;
  options.inlineConstantBytes = inlineBytes;
  options.precision = precision;
  options.calibrationPath = calibration;
  options.smoothQuantAlpha = smoothQuantAlpha;
  options.smoothQuant = smoothQuant;
  options.int4ZeroPoints = int4ZeroPoints;
  options.gpuMemoryUtilization = gpuMemoryUtilization;
  options.kvCacheDtype = kvCacheDtype;
  options.codegen = !noCodegen;
  options.allowHostSteps = allowHostSteps;
  options.cudaPath = cudaPath;
  options.tpSize = tpSize;
  options.ppSize = ppSize;
  options.padGemmDims = padGemmDims;
  return options;
}

/// The note for a GPU plan of a bf16 / fp16 checkpoint compiled without
/// -precision: the default (f32) doubles its weights. "" when it does not
/// apply (the config's "dtype" / "torch_dtype" is read; one that cannot be
/// read says nothing here: the importer reports a bad config).
static std::string halfCheckpointNote() {
  if (precision.getNumOccurrences() || target == "cpu" || !accel::isCheckpointDir(inputFilename))
    return "";
  llvm::SmallString<256> path(inputFilename);
  llvm::sys::path::append(path, "config.json");
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return "";
  auto config = accel::rt::json::parse((*buf)->getBuffer().str());
  if (!config || !config->isObject())
    return "";
  const accel::rt::json::Value *dt = config->find("dtype");
  if (!dt || !dt->isString())
    dt = config->find("torch_dtype");
  if (!dt || !dt->isString())
    return "";
  const std::string &d = dt->asString();
  if (d != "bfloat16" && d != "float16")
    return "";
  const char *mode = d == "bfloat16" ? "bf16" : "fp16";
  return std::string("accelc: note: '") + inputFilename + "' stores " + mode +
         " weights; without -precision the plan keeps them in f32, twice the bytes to store "
         "and to read per token; -precision=" + mode + " keeps them as stored";
}

/// -emit=plan: the whole compile, in lib/Driver (shared with the C API).
/// Warnings print as they come; errors are printed as compileToPlan says
/// them (diagnostic lines name their node and say "error" themselves).
static int emitPlan() {
  if (llvm::StringRef(inputFilename).ends_with(".mlir"))
    return emitPlanFromExecMlir();
  if (interpret)
    return fail("-interpret runs an IR level: add -emit=onnx or -emit=transformer");
  if (smoothQuantOnly)
    return fail("-smoothquant-only leaves the weights in f32 and writes no plan: use it with "
                "-emit=fused");
  if (!reportAccuracyTokens.empty()) {
    accel::CompileOptions options = flagCompileOptions();
    options.target = "cpu"; // reportAccuracy compiles both plans for the CPU
    options.codegen = true;
    options.allowHostSteps = false;
    options.cudaPath.clear();
    options.tpSize = 1;
    options.ppSize = 1;
    options.padGemmDims = -1;
    options.onDiagnostic = [](const std::string &line) { llvm::errs() << line << "\n"; };
    return accel::reportAccuracy(options, reportAccuracyTokens);
  }
  if (outputFilename == "-")
    return fail("a plan is a binary file: give its path with -o (e.g. -o model.plan)");
  accel::CompileOptions options = flagCompileOptions();
  options.applyPassManagerCLOptions = true;
  if (std::string note = halfCheckpointNote(); !note.empty())
    llvm::errs() << note << "\n";
  ProgressLine progress;
  options.onDiagnostic = [&](const std::string &line) {
    progress.clear();
    llvm::errs() << line << "\n";
  };
  if (verbose)
    options.onPhase = [&](const std::string &line) {
      progress.clear();
      llvm::errs() << line << "\n";
    };
  if (progress.enabled())
    options.onProgress = [&](const std::string &phase, uint64_t done, uint64_t total,
                             uint64_t bytes) { progress.update(phase, done, total, bytes); };
  llvm::Error compiled = accel::compileToPlan(options);
  progress.clear();
  if (llvm::Error e = std::move(compiled))
    return printCompileError(std::move(e));
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerPassManagerCLOptions();
  accel::registerAccelPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerMLIRContextCLOptions();
  // --help lists accelc's options, not every LLVM backend flag linked in.
  cl::HideUnrelatedOptions(accelcCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "accelc: compiles ONNX transformer models and Hugging Face checkpoints into plans\n");
  if (std::string bad = accel::checkTargetName(target); !bad.empty())
    return fail(bad);
  if (printMemoryPlan) {
    if (emitLevel.getNumOccurrences() && emitLevel != EmitLevel::Exec)
      return fail("-print-memory-plan prints the exec level's arena: drop -emit or give "
                  "-emit=exec");
    if (interpret)
      return fail("-print-memory-plan prints a table; it cannot be combined with -interpret");
    if (maxTokens < 1)
      return fail("-max-tokens must be at least 1, got " + llvm::Twine(int64_t(maxTokens)));
    emitLevel = EmitLevel::Exec;
  } else if (maxTokens.getNumOccurrences()) {
    return fail("-max-tokens is the token bound of -print-memory-plan; add -print-memory-plan");
  }
  if (emitLevel == EmitLevel::Plan)
    return emitPlan();

  mlir::DialectRegistry registry;
  accel::registerAccelDialects(registry);
  mlir::MLIRContext context(registry);
  // Diagnostics name the node; the op's IR is noise for a model's user.
  context.printOpOnDiagnostic(false);
  // One line per diagnostic: "<file>[: node '<name>']: error: <message>".
  mlir::ScopedDiagnosticHandler diagnostics(&context, [](mlir::Diagnostic &d) {
    std::string where = accel::describeLocation(d.getLocation());
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
  // The kernel levels also read transformer-dialect IR (what lit tests of
  // lib/Codegen feed them); everything else starts from ONNX.
  const bool mlirInput = llvm::StringRef(inputFilename).ends_with(".mlir");
  if (mlirInput && emitLevel < EmitLevel::Kernels)
    return fail("'" + inputFilename + "' is MLIR; only -emit=kernels, nvvm and ptx read MLIR "
                "(the transformer or exec dialect), and the plan (exec-level MLIR); every other "
                "level starts from an ONNX model or a checkpoint folder");
  // A folder is a Hugging Face checkpoint (lib/Import/Checkpoint): imported
  // straight into the transformer dialect, which the raise passes leave as is.
  const bool checkpointInput = accel::isCheckpointDir(inputFilename);
  if (checkpointInput && emitLevel == EmitLevel::Onnx)
    return fail("'" + inputFilename + "' is a checkpoint folder, which imports into the "
                "transformer dialect: -emit=onnx needs an ONNX model");
  accel::CheckpointImportOptions checkpointOptions;
  checkpointOptions.inlineConstantBytes = inlineBytes;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlirInput         ? mlir::parseSourceFile<mlir::ModuleOp>(inputFilename, &context)
      : checkpointInput ? accel::importCheckpointDir(context, inputFilename, checkpointOptions)
                        : accel::importOnnxFile(context, inputFilename, importOptions);
  if (!module)
    return 1;

  if (emitLevel != EmitLevel::Onnx && !mlirInput) {
    mlir::PassManager pm(&context);
    if (mlir::failed(mlir::applyPassManagerCLOptions(pm)))
      return 1;
    // One pipeline, stopped after the level asked for (lib/Driver/Pipeline.cpp,
    // the same the plan is compiled with). The kernel levels print the
    // kernels of the exec level.
    accel::PipelineOptions pipeline;
    pipeline.target = target;
    pipeline.precision = precision;
    pipeline.precisionOptions.calibration = calibration;
    pipeline.precisionOptions.smoothQuantAlpha = smoothQuantAlpha;
    pipeline.precisionOptions.smoothQuant = smoothQuant;
    pipeline.precisionOptions.smoothQuantOnly = smoothQuantOnly;
    pipeline.precisionOptions.int4ZeroPoints = int4ZeroPoints;
    pipeline.kvCacheDtype = kvCacheDtype;
    pipeline.padGemmDims = padGemmDims;
    pipeline.tpSize = tpSize;
    pipeline.ppSize = ppSize;
    pipeline.codegen = !noCodegen;
    pipeline.allowHostSteps = allowHostSteps;
    const accel::Phase phase = emitLevel == EmitLevel::Transformer ? accel::Phase::Transformer
                               : emitLevel == EmitLevel::Fused     ? accel::Phase::Fused
                               : emitLevel == EmitLevel::Partitioned
                                   ? accel::Phase::Partitioned
                                   : accel::Phase::Exec;
    if (phase == accel::Phase::Fused)
      pipeline.tpSize = pipeline.ppSize = 1; // -emit=fused: before partitioning
    std::string error;
    if (mlir::failed(accel::buildCompilePipeline(pm, pipeline, phase, error)))
      return fail(error);
    if (mlir::failed(pm.run(*module)))
      return 1;
  } else if (mlirInput && emitLevel >= EmitLevel::Kernels &&
             module->getOps<accel::exec::ScheduleOp>().empty()) {
    // Transformer-dialect IR: lowered to exec, then its kernels.
    mlir::PassManager pm(&context);
    std::string error;
    const accel::target::TargetDesc *t = accel::target::lookup(target);
    if (mlir::failed(accel::buildExecPipeline(pm, target, /*codegen=*/t && t->isGpu,
                                              /*allowHostSteps=*/true, error)))
      return fail(error);
    if (mlir::failed(pm.run(*module)))
      return 1;
  }
  if (printMemoryPlan)
    return emitMemoryPlan(*module);
  if (interpret && emitLevel == EmitLevel::Exec)
    return fail("-interpret runs the transformer or onnx level; run an exec-level schedule by "
                "compiling a plan (accel-run)");
  if (interpret && emitLevel == EmitLevel::Partitioned && ppSize > 1)
    return fail("-interpret runs one rank and a function split into pipeline stages needs "
                "every stage's own KV cache; compile a plan with -pp and run it with accel-run");
  if (interpret && emitLevel == EmitLevel::Partitioned && tpSize > 1)
    return fail("-interpret runs one rank and a partitioned function needs all of them; "
                "compile a plan with -tp and run it with accel-run");
  if (interpret && emitLevel >= EmitLevel::Kernels)
    return fail("-interpret runs an IR level of the model, not its generated kernels");
  if (interpret)
    return runInterpreter(*module) ? 0 : 1;
  if (emitLevel >= EmitLevel::Kernels)
    return emitKernels(*module);

  std::string error;
  auto output = mlir::openOutputFile(outputFilename, &error);
  if (!output)
    return fail(error);
  mlir::OpPrintingFlags flags;
  // Lazy weights (accel/Weights/Weights.h) have no bytes until computed:
  // computed to be printed, elided otherwise as large blobs are.
  if (!printWeights) {
    flags.elideLargeResourceString(64);
    accel::weights::elideAll(*module);
  } else {
    accel::weights::materializeAll(*module);
  }
  module->print(output->os(), flags);
  output->keep();
  return 0;
}
