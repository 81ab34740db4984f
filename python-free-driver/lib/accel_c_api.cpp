//===- accel_c_api.cpp - the C API over the compiler and the runtime ------===//
//
// Every entry point: resets this thread's last error, checks its arguments
// (naming the function and the argument in the message), runs the C++ call
// behind it, and turns a Status / llvm::Error into an accel_status and a
// message. No C++ exception crosses the boundary: each entry point catches
// them (std::bad_alloc becomes ACCEL_ERROR_RESOURCE_EXHAUSTED).
//
//===----------------------------------------------------------------------===//
#define ACCEL_BUILDING_LIBRARY 1
#include "accel.h"

#include "accel/Driver/Compile.h"

#include "runtime/Env.h"
#include "core/Status.h"
#include "runtime/cuda/GpuExecutor.h"
#include "runtime/engine/Engine.h"
#include "runtime/engine/TextGeneration.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

using accel::rt::Status;
using accel::rt::StatusCode;
namespace engine = accel::rt::engine;

#define ACCEL_STR_(x) #x
#define ACCEL_STR(x) ACCEL_STR_(x)

struct accel_model {
  std::string path;
  std::unique_ptr<engine::Engine> engine;
  /// After engine: it refers to it, and is destroyed first.
  std::unique_ptr<engine::TextGenerator> generator;
  std::mutex mutex;
  /// The thread inside a call on this model (to refuse re-entrant calls
  /// from callbacks instead of deadlocking).
  std::atomic<std::thread::id> owner{};
};

namespace {

thread_local std::string lastError;

accel_status toStatus(StatusCode code) {
  switch (code) {
  case StatusCode::kOk:
    return ACCEL_OK;
  case StatusCode::kInvalidArgument:
    return ACCEL_ERROR_INVALID_ARGUMENT;
  case StatusCode::kNotFound:
    return ACCEL_ERROR_NOT_FOUND;
  case StatusCode::kDataLoss:
    return ACCEL_ERROR_DATA_LOSS;
  case StatusCode::kUnavailable:
    return ACCEL_ERROR_UNAVAILABLE;
  case StatusCode::kResourceExhausted:
    return ACCEL_ERROR_RESOURCE_EXHAUSTED;
  case StatusCode::kUnimplemented:
    return ACCEL_ERROR_UNIMPLEMENTED;
  case StatusCode::kInternal:
    break;
  }
  return ACCEL_ERROR_INTERNAL;
}

accel_status fail(accel_status code, std::string message) {
  lastError = std::move(message);
  return code;
}
accel_status fail(const Status &s) { return fail(toStatus(s.code()), s.message()); }

accel_status invalid(const char *fn, const std::string &what) {
  return fail(ACCEL_ERROR_INVALID_ARGUMENT, std::string(fn) + ": " + what);
}

/// Runs `body` with the last error reset and every exception caught.
template <typename F> accel_status guarded(const char *fn, F &&body) {
  lastError.clear();
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(ACCEL_ERROR_RESOURCE_EXHAUSTED, std::string(fn) + ": out of memory");
  } catch (const std::exception &e) {
    return fail(ACCEL_ERROR_INTERNAL,
                std::string(fn) + ": internal error (uncaught exception: " + e.what() + ")");
  } catch (...) {
    return fail(ACCEL_ERROR_INTERNAL, std::string(fn) + ": internal error (uncaught exception)");
  }
}

/// Holds a model's lock for one call; refuses a call made from a callback
/// of a call already running on this thread.
class ModelCall {
public:
  explicit ModelCall(accel_model *m) : m_(m) {
    if (m_->owner.load() == std::this_thread::get_id()) {
      reentrant_ = true;
      return;
    }
    m_->mutex.lock();
    m_->owner.store(std::this_thread::get_id());
  }
  ~ModelCall() {
    if (reentrant_)
      return;
    m_->owner.store(std::thread::id());
    m_->mutex.unlock();
  }
  bool reentrant() const { return reentrant_; }

private:
  accel_model *m_;
  bool reentrant_ = false;
};

accel_status reentrantCall(const char *fn) {
  return invalid(fn, "called from a callback of a call running on the same model; "
                     "callbacks must not call back into the model");
}

/// Copies the caller's options over `out` (which holds the defaults),
/// checking struct_size: it must cover at least this version's struct (the
/// first); a larger one (a newer header) is read up to what we know.
template <typename T>
bool readOptions(const T *in, T &out, const char *fn, const char *what, const char *init,
                 accel_status &status) {
  if (!in)
    return true;
  if (in->struct_size < sizeof(T)) {
    status = invalid(fn, std::string(what) + "->struct_size is " +
                             std::to_string(in->struct_size) + ", smaller than " +
                             std::to_string(sizeof(T)) + ": initialise the options with " +
                             init + "()");
    return false;
  }
  std::memcpy(&out, in, sizeof(T));
  out.struct_size = sizeof(T);
  return true;
}

char *copyString(const std::string &s) {
  char *p = static_cast<char *>(std::malloc(s.size() + 1));
  if (!p)
    throw std::bad_alloc();
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

int64_t *copyIds(const std::vector<int64_t> &ids) {
  // At least one element, so that a successful call never returns NULL.
  auto *p = static_cast<int64_t *>(std::malloc(std::max<size_t>(ids.size(), 1) * sizeof(int64_t)));
  if (!p)
    throw std::bad_alloc();
  if (!ids.empty())
    std::memcpy(p, ids.data(), ids.size() * sizeof(int64_t));
  return p;
}

accel_status noTokenizer(const char *fn, const accel_model *m, const char *instead) {
  return invalid(fn, "the plan '" + m->path + "' carries no tokenizer" + instead +
                         " (compile it with a tokenizer.json beside the model, or "
                         "give accel_compile_options.tokenizer_path)");
}

/// The request behind accel_generate / accel_generate_tokens.
accel_status buildRequest(const char *fn, const accel_model *m,
                          const accel_generate_options *options,
                          engine::GenerationRequest &req) {
  accel_generate_options o;
  accel_generate_options_init(&o);
  accel_status status = ACCEL_OK;
  if (!readOptions(options, o, fn, "options", "accel_generate_options_init", status))
    return status;
  if (o.max_tokens < 1)
    return invalid(fn, "options->max_tokens must be at least 1, got " +
                           std::to_string(o.max_tokens));
  if (o.num_stop && !o.stop)
    return invalid(fn, "options->stop is NULL but options->num_stop is " +
                           std::to_string(o.num_stop));
  for (size_t i = 0; i < o.num_stop; ++i) {
    if (!o.stop[i])
      return invalid(fn, "options->stop[" + std::to_string(i) + "] is NULL");
    if (!*o.stop[i])
      return invalid(fn, "options->stop[" + std::to_string(i) + "] is empty");
    req.stop.emplace_back(o.stop[i]);
  }
  if (o.num_stop && !m->generator->hasTokenizer())
    return noTokenizer(fn, m, ", so it cannot match stop strings");
  req.maxTokens = o.max_tokens;
  req.addSpecialTokens = o.add_special_tokens != 0;
  req.ignoreEos = o.ignore_eos != 0;
  accel::rt::sampler::SamplingParams &p = req.sampling;
  p.temperature = o.temperature;
  p.topP = o.top_p;
  p.topK = o.top_k;
  p.minP = o.min_p;
  p.repetitionPenalty = o.repetition_penalty;
  if (o.has_seed)
    p.seed = o.seed;
  if (Status s = p.validate(); !s.isOk())
    return fail(ACCEL_ERROR_INVALID_ARGUMENT, std::string(fn) + ": " + s.message());
  return ACCEL_OK;
}

/// Runs a request; `onText` streams to the caller's callback.
accel_status runGeneration(accel_model *m, const engine::GenerationRequest &req,
                           accel_text_callback onText, void *userData,
                           engine::GenerationResult &result) {
  std::function<void(std::string_view)> stream;
  if (onText)
    stream = [&](std::string_view piece) {
      std::string text(piece); // NUL-terminated for C
      onText(text.c_str(), text.size(), userData);
    };
  accel::rt::StatusOr<engine::GenerationResult> r = m->generator->generate(req, stream);
  if (!r)
    return fail(r.status());
  result = std::move(*r);
  return ACCEL_OK;
}

} // namespace

//===----------------------------------------------------------------------===//
// Versions and errors
//===----------------------------------------------------------------------===//

extern "C" unsigned accel_version(void) { return ACCEL_API_VERSION; }

extern "C" const char *accel_version_string(void) {
  return ACCEL_STR(ACCEL_VERSION_MAJOR) "." ACCEL_STR(ACCEL_VERSION_MINOR) "." ACCEL_STR(
      ACCEL_VERSION_PATCH);
}

extern "C" const char *accel_last_error(void) { return lastError.c_str(); }

extern "C" const char *accel_status_name(accel_status status) {
  switch (status) {
  case ACCEL_OK:
    return "ok";
  case ACCEL_ERROR_INVALID_ARGUMENT:
    return "invalid argument";
  case ACCEL_ERROR_NOT_FOUND:
    return "not found";
  case ACCEL_ERROR_DATA_LOSS:
    return "data loss";
  case ACCEL_ERROR_UNAVAILABLE:
    return "unavailable";
  case ACCEL_ERROR_RESOURCE_EXHAUSTED:
    return "resource exhausted";
  case ACCEL_ERROR_UNIMPLEMENTED:
    return "unimplemented";
  case ACCEL_ERROR_INTERNAL:
    return "internal";
  case ACCEL_ERROR_INVALID_MODEL:
    return "invalid model";
  }
  return "unknown";
}

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

extern "C" void accel_compile_options_init(accel_compile_options *options) {
  if (!options)
    return;
  std::memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
}

extern "C" accel_status accel_compile(const accel_compile_options *options) {
  static const char *fn = "accel_compile";
  return guarded(fn, [&]() -> accel_status {
    if (!options)
      return invalid(fn, "options is NULL");
    accel_compile_options o;
    accel_compile_options_init(&o);
    accel_status status = ACCEL_OK;
    if (!readOptions(options, o, fn, "options", "accel_compile_options_init", status))
      return status;
    if (!o.onnx_path || !*o.onnx_path)
      return invalid(fn, std::string("options->onnx_path is ") + (o.onnx_path ? "empty" : "NULL"));
    if (!o.output_path || !*o.output_path)
      return invalid(fn,
                     std::string("options->output_path is ") + (o.output_path ? "empty" : "NULL"));

    accel::CompileOptions c;
    c.onnxPath = o.onnx_path;
    c.outputPath = o.output_path;
    if (o.target)
      c.target = o.target;
    if (o.tokenizer_path)
      c.tokenizerPath = o.tokenizer_path;
    c.noTokenizer = o.no_tokenizer != 0;
    if (o.model_config_path)
      c.modelConfigPath = o.model_config_path;
    if (o.tp_size < 0)
      return invalid(fn, "options->tp_size must not be negative, got " + std::to_string(o.tp_size));
    c.tpSize = o.tp_size ? o.tp_size : 1;
    if (o.pp_size < 0)
      return invalid(fn, "options->pp_size must not be negative, got " + std::to_string(o.pp_size));
    c.ppSize = o.pp_size ? o.pp_size : 1;
    c.compilerVersion = std::string("libaccel ") + accel_version_string();
    if (o.on_diagnostic) {
      accel_diagnostic_callback cb = o.on_diagnostic;
      void *userData = o.user_data;
      c.onDiagnostic = [cb, userData](const std::string &line) { cb(line.c_str(), userData); };
    }
    llvm::Error err = accel::compileToPlan(c);
    if (!err)
      return ACCEL_OK;
    accel_status result = ACCEL_ERROR_INTERNAL;
    llvm::handleAllErrors(
        std::move(err),
        [&](const accel::CompileError &ce) {
          switch (ce.kind()) {
          case accel::CompileErrorKind::InvalidArgument:
            result = ACCEL_ERROR_INVALID_ARGUMENT;
            break;
          case accel::CompileErrorKind::NotFound:
            result = ACCEL_ERROR_NOT_FOUND;
            break;
          case accel::CompileErrorKind::Unimplemented:
            result = ACCEL_ERROR_UNIMPLEMENTED;
            break;
          case accel::CompileErrorKind::InvalidModel:
            result = ACCEL_ERROR_INVALID_MODEL;
            break;
          case accel::CompileErrorKind::Internal:
            result = ACCEL_ERROR_INTERNAL;
            break;
          }
          lastError = ce.message();
        },
        [&](const llvm::ErrorInfoBase &e) {
          result = ACCEL_ERROR_INTERNAL;
          lastError = e.message();
        });
    return result;
  });
}

//===----------------------------------------------------------------------===//
// Models
//===----------------------------------------------------------------------===//

extern "C" void accel_load_options_init(accel_load_options *options) {
  if (!options)
    return;
  std::memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->max_model_len = 0;
  options->verify_checksums = 1;
}

extern "C" accel_status accel_model_load(const char *plan_path, const accel_load_options *options,
                                         accel_model **model_out) {
  static const char *fn = "accel_model_load";
  if (model_out)
    *model_out = nullptr;
  return guarded(fn, [&]() -> accel_status {
    if (!model_out)
      return invalid(fn, "model_out is NULL");
    if (!plan_path)
      return invalid(fn, "plan_path is NULL");
    if (!*plan_path)
      return invalid(fn, "plan_path is empty");
    // The process's ACCEL_* variables (docs/env.md), read once: a malformed
    // value or a removed switch is refused here.
    if (Status s = accel::rt::envStatus(); !s.isOk())
      return fail(s);
    accel_load_options o;
    accel_load_options_init(&o);
    accel_status status = ACCEL_OK;
    if (!readOptions(options, o, fn, "options", "accel_load_options_init", status))
      return status;
    if (o.max_model_len < 0)
      return invalid(fn, "options->max_model_len must be 0 (the model's) or positive, got " +
                             std::to_string(o.max_model_len));
    engine::EngineOptions eo;
    eo.maxModelLen = o.max_model_len;
    eo.load.verifyChecksums = o.verify_checksums != 0;
    engine::GpuExecutorOptions gpu;
    if (o.gpu_dtype) {
      std::optional<accel::rt::DType> d = accel::rt::dtypeFromName(o.gpu_dtype);
      if (!d || (*d != accel::rt::DType::kF32 && *d != accel::rt::DType::kBF16 &&
                 *d != accel::rt::DType::kF16))
        return invalid(fn, std::string("options->gpu_dtype must be \"f32\", \"bf16\" or "
                                       "\"f16\", got \"") + o.gpu_dtype + "\"");
      gpu.dtype = *d;
    }
    if (o.gpu_device < 0)
      return invalid(fn, "options->gpu_device must not be negative, got " +
                             std::to_string(o.gpu_device));
    gpu.device = o.gpu_device;
    if (o.gpu_memory_utilization != 0.0) {
      if (!(o.gpu_memory_utilization > 0.0 && o.gpu_memory_utilization <= 1.0))
        return invalid(fn, "options->gpu_memory_utilization must be in (0, 1], got " +
                               std::to_string(o.gpu_memory_utilization));
      gpu.gpuMemoryUtilization = o.gpu_memory_utilization;
    }
    gpu.cudaGraphs = o.gpu_enforce_eager == 0;
    gpu.maxModelLen = o.max_model_len;
    gpu.graphMaxBatch = 1; // the C API runs one sequence at a time
    eo.gpuBackend = engine::makeGpuBackend(gpu);
    auto model = std::make_unique<accel_model>();
    model->path = plan_path;
    accel::rt::StatusOr<std::unique_ptr<engine::Engine>> e = engine::Engine::open(plan_path, eo);
    if (!e)
      return fail(e.status());
    model->engine = std::move(*e);
    accel::rt::StatusOr<std::unique_ptr<engine::TextGenerator>> g =
        engine::TextGenerator::create(*model->engine);
    if (!g)
      return fail(g.status());
    model->generator = std::move(*g);
    *model_out = model.release();
    return ACCEL_OK;
  });
}

extern "C" void accel_model_free(accel_model *model) {
  if (!model)
    return;
  // Waits for a call still running on another thread (a caller's bug, but
  // not one to crash on).
  { std::lock_guard<std::mutex> lock(model->mutex); }
  delete model;
}

extern "C" int64_t accel_model_vocab_size(const accel_model *model) {
  return model ? model->engine->vocabSize() : -1;
}

extern "C" int64_t accel_model_max_model_len(const accel_model *model) {
  return model ? model->engine->maxModelLen() : -1;
}

extern "C" int accel_model_has_tokenizer(const accel_model *model) {
  return model && model->generator->hasTokenizer() ? 1 : 0;
}

//===----------------------------------------------------------------------===//
// Scoring
//===----------------------------------------------------------------------===//

extern "C" accel_status accel_score(accel_model *model, const int64_t *ids, size_t n,
                                    int64_t chunk, float *logits_out) {
  static const char *fn = "accel_score";
  return guarded(fn, [&]() -> accel_status {
    if (!model)
      return invalid(fn, "model is NULL");
    if (!ids)
      return invalid(fn, "ids is NULL");
    if (!logits_out)
      return invalid(fn, "logits_out is NULL");
    if (n == 0)
      return invalid(fn, "the token sequence is empty (n is 0)");
    const int64_t vocab = model->engine->vocabSize();
    if (n > std::numeric_limits<size_t>::max() / sizeof(float) / size_t(vocab))
      return invalid(fn, "n (" + std::to_string(n) + ") times the vocabulary (" +
                             std::to_string(vocab) + ") overflows");
    ModelCall call(model);
    if (call.reentrant())
      return reentrantCall(fn);
    std::vector<int64_t> seq(ids, ids + n);
    accel::rt::StatusOr<accel::rt::Tensor> logits = model->engine->score(seq, chunk);
    if (!logits)
      return fail(logits.status());
    if (logits->numElements() != int64_t(n) * vocab)
      return fail(ACCEL_ERROR_INTERNAL, std::string(fn) + ": the engine returned logits " +
                                            logits->describe() + " for " + std::to_string(n) +
                                            " tokens");
    std::memcpy(logits_out, logits->data<float>(), n * size_t(vocab) * sizeof(float));
    return ACCEL_OK;
  });
}

//===----------------------------------------------------------------------===//
// Tokenizer
//===----------------------------------------------------------------------===//

extern "C" accel_status accel_tokenize(accel_model *model, const char *text,
                                       int add_special_tokens, int64_t **ids_out,
                                       size_t *num_ids_out) {
  static const char *fn = "accel_tokenize";
  if (ids_out)
    *ids_out = nullptr;
  if (num_ids_out)
    *num_ids_out = 0;
  return guarded(fn, [&]() -> accel_status {
    if (!model)
      return invalid(fn, "model is NULL");
    if (!text)
      return invalid(fn, "text is NULL");
    if (!ids_out)
      return invalid(fn, "ids_out is NULL");
    if (!num_ids_out)
      return invalid(fn, "num_ids_out is NULL");
    ModelCall call(model);
    if (call.reentrant())
      return reentrantCall(fn);
    if (!model->generator->hasTokenizer())
      return noTokenizer(fn, model, "");
    accel::rt::StatusOr<std::vector<int64_t>> ids =
        model->generator->encode(text, add_special_tokens != 0);
    if (!ids)
      return fail(ids.status());
    *ids_out = copyIds(*ids);
    *num_ids_out = ids->size();
    return ACCEL_OK;
  });
}

extern "C" accel_status accel_detokenize(accel_model *model, const int64_t *ids, size_t n,
                                         char **text_out) {
  static const char *fn = "accel_detokenize";
  if (text_out)
    *text_out = nullptr;
  return guarded(fn, [&]() -> accel_status {
    if (!model)
      return invalid(fn, "model is NULL");
    if (!ids && n)
      return invalid(fn, "ids is NULL");
    if (!text_out)
      return invalid(fn, "text_out is NULL");
    ModelCall call(model);
    if (call.reentrant())
      return reentrantCall(fn);
    if (!model->generator->hasTokenizer())
      return noTokenizer(fn, model, "");
    const int64_t vocab = model->engine->vocabSize();
    for (size_t i = 0; i < n; ++i)
      if (ids[i] < 0 || ids[i] >= vocab)
        return invalid(fn, "token " + std::to_string(i) + " is " + std::to_string(ids[i]) +
                               ", outside the vocabulary [0, " + std::to_string(vocab) + ")");
    accel::rt::StatusOr<std::string> text =
        model->generator->decode(std::vector<int64_t>(ids, ids + n));
    if (!text)
      return fail(text.status());
    *text_out = copyString(*text);
    return ACCEL_OK;
  });
}

//===----------------------------------------------------------------------===//
// Generation
//===----------------------------------------------------------------------===//

extern "C" void accel_generate_options_init(accel_generate_options *options) {
  if (!options)
    return;
  std::memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->max_tokens = 64;
  options->temperature = 0.0f;
  options->top_p = 1.0f;
  options->top_k = 0;
  options->min_p = 0.0f;
  options->repetition_penalty = 1.0f;
  options->add_special_tokens = 1;
}

extern "C" accel_status accel_generate(accel_model *model, const char *prompt,
                                       const accel_generate_options *options,
                                       accel_text_callback on_text, void *user_data,
                                       char **text_out) {
  static const char *fn = "accel_generate";
  if (text_out)
    *text_out = nullptr;
  return guarded(fn, [&]() -> accel_status {
    if (!model)
      return invalid(fn, "model is NULL");
    if (!prompt)
      return invalid(fn, "prompt is NULL");
    ModelCall call(model);
    if (call.reentrant())
      return reentrantCall(fn);
    if (!model->generator->hasTokenizer())
      return noTokenizer(fn, model, ", so it cannot take a text prompt; give token ids to "
                                    "accel_generate_tokens() instead");
    engine::GenerationRequest req;
    if (accel_status s = buildRequest(fn, model, options, req); s != ACCEL_OK)
      return s;
    req.prompt = prompt;
    engine::GenerationResult result;
    if (accel_status s = runGeneration(model, req, on_text, user_data, result); s != ACCEL_OK)
      return s;
    if (text_out)
      *text_out = copyString(result.text);
    return ACCEL_OK;
  });
}

extern "C" accel_status accel_generate_tokens(accel_model *model, const int64_t *prompt_ids,
                                              size_t num_prompt_ids,
                                              const accel_generate_options *options,
                                              accel_text_callback on_text, void *user_data,
                                              int64_t **tokens_out, size_t *num_tokens_out) {
  static const char *fn = "accel_generate_tokens";
  if (tokens_out)
    *tokens_out = nullptr;
  if (num_tokens_out)
    *num_tokens_out = 0;
  return guarded(fn, [&]() -> accel_status {
    if (!model)
      return invalid(fn, "model is NULL");
    if (!prompt_ids)
      return invalid(fn, "prompt_ids is NULL");
    if (num_prompt_ids == 0)
      return invalid(fn, "the prompt is empty (num_prompt_ids is 0)");
    if (tokens_out && !num_tokens_out)
      return invalid(fn, "num_tokens_out is NULL but tokens_out is not");
    ModelCall call(model);
    if (call.reentrant())
      return reentrantCall(fn);
    engine::GenerationRequest req;
    if (accel_status s = buildRequest(fn, model, options, req); s != ACCEL_OK)
      return s;
    req.promptIds.assign(prompt_ids, prompt_ids + num_prompt_ids);
    engine::GenerationResult result;
    if (accel_status s = runGeneration(model, req, on_text, user_data, result); s != ACCEL_OK)
      return s;
    if (num_tokens_out)
      *num_tokens_out = result.tokens.size();
    if (tokens_out)
      *tokens_out = copyIds(result.tokens);
    return ACCEL_OK;
  });
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

extern "C" void accel_string_free(char *text) { std::free(text); }

extern "C" void accel_tokens_free(int64_t *ids) { std::free(ids); }
