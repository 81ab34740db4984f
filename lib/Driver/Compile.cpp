//===- Compile.cpp - an ONNX file in, a plan file out ---------------------===//
//
// import → raise pipeline → plan writer, with the model facts the graph does
// not hold (tokenizer, max positions, BOS/EOS) read from HF's files beside
// the model. The options are checked and the side files read before the
// import, so that a typo costs nothing.
//
//===----------------------------------------------------------------------===//
#include "accel/Driver/Compile.h"
#include "TokenizerConfig.h"

#include "accel/Codegen/Codegen.h"
#include "accel/Driver/Diagnostics.h"
#include "accel/Driver/Phases.h"

#include "accel/Driver/Pipeline.h"
#include "accel/Import/CheckpointImporter.h"
#include "accel/Import/OnnxImporter.h"
#include "accel/Plan/PlanWriter.h"
#include "accel/Target/Target.h"
#include "accel/passes/Passes.h"
#include "core/RegularFile.h"
#include "runtime/engine/PlanMemory.h"
#include "runtime/plan/PlanFile.h"
#include "runtime/serving/tokenizer/Tokenizer.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>
#include <vector>

using namespace accel;

char CompileError::ID = 0;

void CompileError::log(llvm::raw_ostream &os) const { os << message_; }

std::error_code CompileError::convertToErrorCode() const {
  switch (kind_) {
  case CompileErrorKind::InvalidArgument:
    return std::make_error_code(std::errc::invalid_argument);
  case CompileErrorKind::NotFound:
    return std::make_error_code(std::errc::no_such_file_or_directory);
  case CompileErrorKind::Unimplemented:
    return std::make_error_code(std::errc::function_not_supported);
  case CompileErrorKind::InvalidModel:
    return std::make_error_code(std::errc::illegal_byte_sequence);
  case CompileErrorKind::Internal:
    break;
  }
  return llvm::inconvertibleErrorCode();
}

std::string accel::checkPrecisionForTarget(const std::string &precision,
                                           const std::string &target) {
  const accel::target::TargetDesc *t = accel::target::lookup(target);
  if ((precision != "fp8" && precision != "w8a8-fp8") || !t || t->arch.rfind("sm_", 0) != 0)
    return "";
  const int sm = std::atoi(std::string(t->arch).c_str() + 3);
  if (sm >= 89)
    return "";
  return "-precision=" + precision +
         " needs an sm_89 or newer GPU (Ada, Hopper: h100, h200), and -target=" + target +
         " is " + std::string(t->arch) + "; use -precision=bf16" +
         (precision == "fp8" ? " or int8-weight" : ", int8-weight or w8a8") + " there";
}

std::string accel::checkTargetName(const std::string &target) {
  if (accel::target::lookup(target))
    return "";
  return "unknown target '" + target + "' (expected " + accel::target::describeNames() + ")";
}

namespace {

llvm::Error compileError(CompileErrorKind kind, const llvm::Twine &msg) {
  return llvm::make_error<CompileError>(kind, msg.str(), /*fromDiagnostics=*/false);
}


const char *severityName(mlir::DiagnosticSeverity s) {
  switch (s) {
  case mlir::DiagnosticSeverity::Error:
    return "error";
  case mlir::DiagnosticSeverity::Warning:
    return "warning";
  case mlir::DiagnosticSeverity::Remark:
    return "remark";
  case mlir::DiagnosticSeverity::Note:
    break;
  }
  return "note";
}

/// Collects the errors a compile emits; passes the rest on.
class DiagnosticCapture {
public:
  DiagnosticCapture(mlir::MLIRContext &context,
                    const std::function<void(const std::string &)> &onDiagnostic)
      : onDiagnostic_(onDiagnostic),
        handler_(&context, [this](mlir::Diagnostic &d) { return handle(d); }) {}

  bool hasErrors() const { return !errors_.empty(); }
  /// The errors so far, one line each (notes on their own lines), and forgets
  /// them.
  std::string takeErrors() {
    std::string joined = llvm::join(errors_, "\n");
    errors_.clear();
    return joined;
  }

private:
  mlir::LogicalResult handle(mlir::Diagnostic &d) {
    std::string where = describeLocation(d.getLocation());
    bool isError = d.getSeverity() == mlir::DiagnosticSeverity::Error;
    auto emit = [&](std::string line) {
      if (isError)
        errors_.push_back(std::move(line));
      else if (onDiagnostic_)
        onDiagnostic_(line);
    };
    emit(where + ": " + severityName(d.getSeverity()) + ": " + d.str());
    for (const mlir::Diagnostic &note : d.getNotes())
      emit(where + ": note: " + note.str());
    return mlir::success();
  }

  const std::function<void(const std::string &)> &onDiagnostic_;
  std::vector<std::string> errors_;
  mlir::ScopedDiagnosticHandler handler_;
};

/// The file `name` beside the model (inside it, for a checkpoint folder), if
/// it exists.
std::string besideModel(const std::string &modelPath, llvm::StringRef name) {
  llvm::SmallString<256> p(modelPath);
  if (!accel::isCheckpointDir(modelPath))
    llvm::sys::path::remove_filename(p);
  llvm::sys::path::append(p, name);
  return llvm::sys::fs::exists(p) ? std::string(p) : std::string();
}

/// The bytes of `path`, a regular file (a FIFO or a device is refused, not
/// read: core/RegularFile.h); `what` names the file in the message.
llvm::Expected<std::string> readFile(const std::string &path, const char *what) {
  accel::rt::StatusOr<std::string> bytes =
      accel::rt::readRegularFile(path, "the " + std::string(what));
  if (!bytes)
    return compileError(CompileErrorKind::NotFound, bytes.status().message());
  return std::move(*bytes);
}

/// Model facts from HF's config.json (and generation_config.json beside the
/// model): max positions, BOS and EOS ids.
llvm::Error readModelConfig(const CompileOptions &options, plan::PlanOptions &opts) {
  std::string path = options.modelConfigPath.empty()
                         ? besideModel(options.onnxPath, "config.json")
                         : options.modelConfigPath;
  if (path.empty())
    return llvm::Error::success();
  auto addIds = [](const llvm::json::Value *v, std::vector<int32_t> &ids) {
    if (!v)
      return;
    if (std::optional<int64_t> i = v->getAsInteger()) {
      if (llvm::find(ids, int32_t(*i)) == ids.end())
        ids.push_back(int32_t(*i));
    } else if (const llvm::json::Array *a = v->getAsArray()) {
      for (const llvm::json::Value &e : *a)
        if (std::optional<int64_t> i = e.getAsInteger())
          if (llvm::find(ids, int32_t(*i)) == ids.end())
            ids.push_back(int32_t(*i));
    }
  };
  for (const std::string &file :
       {path, besideModel(options.onnxPath, "generation_config.json")}) {
    if (file.empty())
      continue;
    llvm::Expected<std::string> text = readFile(file, "model config");
    if (!text)
      return text.takeError();
    llvm::Expected<llvm::json::Value> json = llvm::json::parse(*text);
    if (!json)
      return compileError(CompileErrorKind::InvalidModel,
                          file + ": not valid JSON: " + llvm::toString(json.takeError()));
    const llvm::json::Object *obj = json->getAsObject();
    if (!obj)
      continue;
    for (const char *key : {"max_position_embeddings", "n_positions", "n_ctx"})
      if (std::optional<int64_t> n = obj->getInteger(key); n && !opts.maxPosition)
        opts.maxPosition = *n;
    addIds(obj->get("eos_token_id"), opts.eosTokenIds);
    if (std::optional<int64_t> b = obj->getInteger("bos_token_id"))
      opts.bosTokenId = int32_t(*b);
  }
  return llvm::Error::success();
}

/// The passes the textual raise pipeline names, registered once per process.
void registerPipelinePasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    accel::registerAccelPasses();
    mlir::registerCanonicalizerPass();
    mlir::registerCSEPass();
  });
}

} // namespace

llvm::Error accel::compileToPlan(const CompileOptions &options) {
  // Options first: they cost nothing to check.
  if (options.onnxPath.empty())
    return compileError(CompileErrorKind::InvalidArgument, "no ONNX model given");
  if (options.outputPath.empty())
    return compileError(CompileErrorKind::InvalidArgument,
                        "no output path given for the plan");
  if (std::string bad = checkTargetName(options.target); !bad.empty())
    return compileError(CompileErrorKind::InvalidArgument, bad);
  if (std::string bad = checkPrecisionMode(options.precision); !bad.empty())
    return compileError(CompileErrorKind::InvalidArgument, bad);
  if (std::string bad = checkPrecisionForTarget(options.precision, options.target); !bad.empty())
    return compileError(CompileErrorKind::InvalidArgument, bad);
  if (!(options.gpuMemoryUtilization > 0.0 && options.gpuMemoryUtilization <= 1.0))
    return compileError(CompileErrorKind::InvalidArgument,
                        "-gpu-memory-utilization must be in (0, 1], got " +
                            std::to_string(options.gpuMemoryUtilization));
  PrecisionOptions precisionOptions;
  precisionOptions.calibration = options.calibrationPath;
  precisionOptions.smoothQuantAlpha = options.smoothQuantAlpha;
  precisionOptions.smoothQuant = options.smoothQuant;
  precisionOptions.int4ZeroPoints = options.int4ZeroPoints;
  if (std::string bad = checkPrecisionOptions(options.precision, precisionOptions); !bad.empty())
    return compileError(CompileErrorKind::InvalidArgument, bad);
  const bool w8a8 = options.precision == "w8a8" || options.precision == "w8a8-fp8";
  const bool kvCalibrated = options.kvCacheDtype == "fp8" && !options.calibrationPath.empty();
  if ((w8a8 || kvCalibrated) && !options.calibrationPath.empty() &&
      !llvm::sys::fs::exists(options.calibrationPath))
    return compileError(CompileErrorKind::NotFound,
                        "cannot read the calibration tokens '" + options.calibrationPath + "'");
  // GPU targets share the CPU schedule (issue 5: the GPU backend runs the same
  // steps); the plan names the SM they are for.
  plan::PlanOptions opts;
  opts.target = std::string(accel::target::lookup(options.target)->arch);
  opts.accelcVersion = options.compilerVersion;
  opts.source = options.onnxPath;
  opts.precision = options.precision;
  opts.computeDType = options.precision == "fp16"  ? "f16"
                      : options.precision == "f32" ? ""
                                                   : "bf16";
  std::string tok = options.noTokenizer             ? ""
                    : options.tokenizerPath.empty() ? besideModel(options.onnxPath,
                                                                  "tokenizer.json")
                                                    : options.tokenizerPath;
  if (!tok.empty()) {
    llvm::Expected<std::string> json = readFile(tok, "tokenizer");
    if (!json)
      return json.takeError();
    // The runtime refuses a plan whose tokenizer does not load; refuse it
    // here, in the same words, rather than write a plan that takes no text.
    rt::StatusOr<rt::tok::Tokenizer> loaded = rt::tok::Tokenizer::fromJson(*json, tok);
    if (!loaded)
      return compileError(loaded.status().code() == rt::StatusCode::kUnimplemented
                              ? CompileErrorKind::Unimplemented
                              : CompileErrorKind::InvalidArgument,
                          "the tokenizer does not load: " + loaded.status().message() +
                              " (-no-tokenizer writes a plan that takes token ids)");
    opts.tokenizerJson = std::move(*json);
  }
  if (llvm::Error e = readModelConfig(options, opts))
    return e;
  // The chat template(s): tokenizer_config.json beside the tokenizer the plan
  // carries (or beside the model).
  if (!tok.empty()) {
    llvm::SmallString<256> config(tok);
    llvm::sys::path::remove_filename(config);
    llvm::sys::path::append(config, "tokenizer_config.json");
    if (llvm::sys::fs::exists(config)) {
      accel::rt::Status s = accel::driver::readChatTemplates(
          std::string(config), opts, [&](const std::string &msg) {
            if (options.onDiagnostic)
              options.onDiagnostic(options.onnxPath + ": warning: " + msg);
          });
      if (!s.isOk())
        return compileError(s.code() == accel::rt::StatusCode::kNotFound ? CompileErrorKind::NotFound
                                                                   : CompileErrorKind::InvalidModel,
                            s.message());
    }
  }

  std::function<void(const std::string &)> started;
  if (options.onProgress)
    started = [&](const std::string &name) { options.onProgress(name, 0, 0, 0); };
  PhaseTimer phases(options.onPhase, started);
  registerPipelinePasses();
  mlir::DialectRegistry registry;
  accel::registerAccelDialects(registry);
  mlir::MLIRContext context(registry);
  // Diagnostics name the node; the op's IR is noise for a model's user.
  context.printOpOnDiagnostic(false);
  DiagnosticCapture diagnostics(context, options.onDiagnostic);
  auto diagnosticError = [&](CompileErrorKind kind, const llvm::Twine &fallback) {
    if (!diagnostics.hasErrors())
      return compileError(kind, fallback);
    return llvm::Error(
        llvm::make_error<CompileError>(kind, diagnostics.takeErrors(), /*fromDiagnostics=*/true));
  };

  OnnxImportOptions importOptions;
  importOptions.inlineConstantBytes = options.inlineConstantBytes;
  const bool modelExists = llvm::sys::fs::exists(options.onnxPath);
  CheckpointImportOptions checkpointOptions;
  checkpointOptions.inlineConstantBytes = options.inlineConstantBytes;
  phases.begin("import");
  mlir::OwningOpRef<mlir::ModuleOp> module =
      accel::isCheckpointDir(options.onnxPath)
          ? accel::importCheckpointDir(context, options.onnxPath, checkpointOptions)
          : accel::importOnnxFile(context, options.onnxPath, importOptions);
  phases.end();
  if (!module)
    return diagnosticError(modelExists ? CompileErrorKind::InvalidModel
                                       : CompileErrorKind::NotFound,
                           "cannot import '" + options.onnxPath + "'");

  // Generated kernels need the CUDA toolkit's libdevice (docs/codegen.md).
  codegen::CodegenOptions cg;
  cg.chip = opts.target;
  cg.cudaPath = options.cudaPath;
  const bool gpu = llvm::StringRef(opts.target).starts_with("sm_");
  bool codegen = options.codegen && gpu;
  auto warn = [&](const std::string &msg) {
    if (options.onDiagnostic)
      options.onDiagnostic(options.onnxPath + ": warning: " + msg);
  };
  if (codegen && codegen::findLibdevice(cg).empty()) {
    warn("no generated kernels: the CUDA toolkit's libdevice was not found under '" +
         codegen::cudaToolkitPath(cg) +
         "' (set -cuda-path); the plan runs on the runtime's hand-written kernels");
    codegen = false;
  }

  mlir::PassManager pm(&context);
  if (options.applyPassManagerCLOptions && mlir::failed(mlir::applyPassManagerCLOptions(pm)))
    return diagnosticError(CompileErrorKind::InvalidArgument,
                           "the -mlir pass manager options do not apply");
  PipelineOptions pipeline;
  pipeline.target = options.target;
  pipeline.precision = options.precision;
  pipeline.precisionOptions = precisionOptions;
  pipeline.kvCacheDtype = options.kvCacheDtype;
  pipeline.padGemmDims = options.padGemmDims;
  pipeline.tpSize = options.tpSize;
  pipeline.ppSize = options.ppSize;
  pipeline.codegen = codegen;
  pipeline.allowHostSteps = options.allowHostSteps;
  std::string pipelineError;
  if (mlir::failed(accel::buildCompilePipeline(pm, pipeline, Phase::Exec, pipelineError)))
    return compileError(CompileErrorKind::InvalidArgument, pipelineError);
  phases.instrument(pm);
  if (mlir::failed(pm.run(*module)))
    return diagnosticError(CompileErrorKind::InvalidModel,
                           "compiling '" + options.onnxPath + "' failed");

  // The kernels accel-exec-select-kernels declared, built for the target.
  codegen::GeneratedKernels kernels;
  if (codegen) {
    phases.begin("generate kernels");
    llvm::Expected<codegen::GeneratedKernels> k = codegen::generateKernels(*module, cg);
    phases.end();
    if (!k)
      return compileError(CompileErrorKind::Internal,
                          "kernel generation failed: " + llvm::toString(k.takeError()));
    kernels = std::move(*k);
    if (!kernels.empty() && kernels.cubin.empty())
      warn(kernels.cubinAbsent);
    opts.kernels = &kernels;
  }

  opts.onProgress = options.onProgress;
  // A GPU plan must fit its target: weights, activations and the runtime's
  // reserve of every stage and rank within -gpu-memory-utilization of HBM.
  if (const accel::target::TargetDesc *t = accel::target::lookup(options.target);
      t && t->memoryBytes > 0 && t->arch.rfind("sm_", 0) == 0) {
    opts.checkWritten = [&](const std::string &tmp) -> std::string {
      rt::plan::LoadOptions lo;
      lo.verifyChecksums = false;
      rt::StatusOr<std::shared_ptr<const rt::plan::PlanFile>> p = rt::plan::PlanFile::open(tmp, lo);
      if (!p)
        return "the plan just written does not load: " + p.status().message();
      rt::engine::PlanMemoryOptions mo;
      mo.deviceBytes = t->memoryBytes;
      mo.utilization = options.gpuMemoryUtilization;
      mo.maxTokens = options.gpuCheckTokens;
      std::vector<rt::engine::GpuShare> shares = rt::engine::planMemoryByGpu(**p, mo);
      if (options.onPhase) {
        std::string table = rt::engine::formatPlanMemory(shares, mo, options.target);
        for (size_t b = 0, e; b < table.size(); b = e + 1) {
          e = table.find('\n', b);
          if (e == std::string::npos)
            e = table.size();
          options.onPhase(table.substr(b, e - b));
        }
      }
      return rt::engine::checkPlanFits(shares, mo, options.target, options.tpSize,
                                       options.ppSize);
    };
  }
  phases.begin("write plan");
  llvm::Error written = plan::writePlan(*module, opts, options.outputPath);
  phases.end();
  if (llvm::Error e = std::move(written)) {
    std::string msg =
        "cannot build a plan from '" + options.onnxPath + "': " + llvm::toString(std::move(e));
    if (diagnostics.hasErrors())
      msg = diagnostics.takeErrors() + "\n" + msg;
    return compileError(CompileErrorKind::InvalidModel, msg);
  }
  return llvm::Error::success();
}

/// "<file>[: node '<name>']" for a location the importer made, else the
/// printed location.
std::string accel::describeLocation(mlir::Location loc) {
  std::string where;
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
  return where;
}
