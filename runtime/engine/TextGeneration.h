//===- TextGeneration.h - prompt in, text out -------------------*- C++ -*-===//
//
// Generation as a user asks for it: a text prompt (or token ids), sampling
// parameters, stop conditions; the plan's tokenizer turns text into ids and
// back, the sampler picks each token, the engine runs the steps. Used by
// `accel-run --prompt`, the C API and (with batching) the server.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_ENGINE_TEXTGENERATION_H
#define ACCEL_RUNTIME_ENGINE_TEXTGENERATION_H

#include "runtime/engine/Engine.h"
#include "runtime/engine/Speculative.h"
#include "runtime/serving/sampler/Sampler.h"
#include "runtime/serving/sampler/StopCriteria.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace accel::rt::tok {
class Tokenizer;
}

namespace accel::rt::engine {

struct GenerationRequest {
  /// The prompt as text (needs the plan's tokenizer) ...
  std::string prompt;
  /// ... or as token ids (used when non-empty).
  std::vector<int64_t> promptIds;
  /// Add the tokenizer's BOS/template tokens to a text prompt.
  bool addSpecialTokens = true;
  int64_t maxTokens = 64;
  sampler::SamplingParams sampling;
  std::vector<std::string> stop;
  /// Keep going past the model's end-of-sequence tokens.
  bool ignoreEos = false;
};

struct GenerationResult {
  std::vector<int64_t> promptIds;
  std::vector<int64_t> tokens; // generated, the stop token excluded
  std::string text;            // decoded output (empty without a tokenizer)
  std::string finishReason;    // "stop" or "length"
  /// With a speculator: its counters for this request.
  SpeculativeStats speculative;
};

class TextGenerator {
public:
  /// Wraps `engine`, reading the tokenizer the plan carries (if any).
  static StatusOr<std::unique_ptr<TextGenerator>> create(Engine &engine);
  ~TextGenerator();

  bool hasTokenizer() const { return tokenizer_ != nullptr; }
  /// Generate with speculative decoding (null: without); not owned.
  void setSpeculator(Speculator *speculator) { speculator_ = speculator; }
  StatusOr<std::vector<int64_t>> encode(std::string_view text, bool addSpecialTokens) const;
  StatusOr<std::string> decode(const std::vector<int64_t> &ids) const;

  /// Runs one request. `onText`, when set, receives the output text as it
  /// becomes final (never a partial UTF-8 character or a possible stop
  /// string prefix); its pieces concatenate to result.text.
  StatusOr<GenerationResult> generate(const GenerationRequest &request,
                                      const std::function<void(std::string_view)> &onText = {});

private:
  explicit TextGenerator(Engine &engine);
  Engine &engine_;
  std::unique_ptr<tok::Tokenizer> tokenizer_;
  Speculator *speculator_ = nullptr;
};

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_ENGINE_TEXTGENERATION_H
