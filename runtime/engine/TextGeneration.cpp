//===- TextGeneration.cpp - prompt in, text out ----------------------------===//
#include "runtime/engine/TextGeneration.h"

#include "runtime/serving/tokenizer/Tokenizer.h"

#include <algorithm>
#include <optional>

namespace accel::rt::engine {

TextGenerator::TextGenerator(Engine &engine) : engine_(engine) {}
TextGenerator::~TextGenerator() = default;

StatusOr<std::unique_ptr<TextGenerator>> TextGenerator::create(Engine &engine) {
  std::unique_ptr<TextGenerator> g(new TextGenerator(engine));
  if (std::optional<std::string_view> json = engine.plan().tokenizerJson()) {
    StatusOr<tok::Tokenizer> t = tok::Tokenizer::fromJson(*json);
    if (!t)
      return Status(t.status().code(), engine.plan().path() +
                                           ": the tokenizer the plan carries does not load: " +
                                           t.status().message());
    g->tokenizer_ = std::make_unique<tok::Tokenizer>(std::move(*t));
  }
  return g;
}

namespace {
Status noTokenizer(const std::string &plan) {
  return Status(StatusCode::kInvalidArgument,
                plan + ": the plan carries no tokenizer, so it takes no text (compile it with "
                       "-tokenizer=tokenizer.json, or give token ids)");
}

} // namespace

StatusOr<std::vector<int64_t>> TextGenerator::encode(std::string_view text,
                                                     bool addSpecialTokens) const {
  if (!tokenizer_)
    return noTokenizer(engine_.plan().path());
  ACCEL_RT_ASSIGN_OR_RETURN(std::vector<int32_t> ids, tokenizer_->encode(text, addSpecialTokens));
  return std::vector<int64_t>(ids.begin(), ids.end());
}

StatusOr<std::string> TextGenerator::decode(const std::vector<int64_t> &ids) const {
  if (!tokenizer_)
    return noTokenizer(engine_.plan().path());
  std::vector<int32_t> v(ids.begin(), ids.end());
  return tokenizer_->decode(v, /*skipSpecialTokens=*/true);
}

StatusOr<GenerationResult> TextGenerator::generate(
    const GenerationRequest &request, const std::function<void(std::string_view)> &onText) {
  GenerationResult result;
  if (!request.promptIds.empty()) {
    result.promptIds = request.promptIds;
  } else {
    ACCEL_RT_ASSIGN_OR_RETURN(result.promptIds, encode(request.prompt, request.addSpecialTokens));
    if (result.promptIds.empty())
      return Status(StatusCode::kInvalidArgument, "the prompt is empty");
  }
  const int64_t maxLen = engine_.maxModelLen();
  if (int64_t(result.promptIds.size()) >= maxLen)
    return Status(StatusCode::kInvalidArgument,
                  "the prompt has " + std::to_string(result.promptIds.size()) +
                      " tokens and the context holds " + std::to_string(maxLen) +
                      " (--max-model-len), which leaves no room to generate");

  ACCEL_RT_RETURN_IF_ERROR(request.sampling.validate());
  sampler::StopCriteria criteria;
  criteria.maxTokens = request.maxTokens;
  criteria.stopStrings = request.stop;
  if (!request.ignoreEos) {
    for (int32_t id : engine_.plan().metadata().model().eos_token_ids())
      criteria.stopTokenIds.push_back(id);
    if (criteria.stopTokenIds.empty() && tokenizer_)
      if (std::optional<int32_t> eos = tokenizer_->eosId())
        criteria.stopTokenIds.push_back(*eos);
  }
  ACCEL_RT_RETURN_IF_ERROR(criteria.validate());
  if (!criteria.stopStrings.empty() && !tokenizer_)
    return noTokenizer(engine_.plan().path());

  sampler::Sampler sampler(request.sampling);
  std::vector<int32_t> context(result.promptIds.begin(), result.promptIds.end());
  std::vector<int64_t> generated;
  std::string text;   // decoded generated tokens
  size_t emitted = 0; // bytes of `text` handed to onText
  sampler::StopDecision decision;
  // Incremental detokenization: each token adds the text it completes
  // (DecodeStream holds back an unfinished UTF-8 character), so the loop is
  // linear in the output, not quadratic.
  std::optional<tok::DecodeStream> stream;
  if (tokenizer_)
    stream.emplace(*tokenizer_, /*skipSpecialTokens=*/true);

  // Takes the next token: streams its text, checks the stop conditions.
  auto accept = [&](int64_t chosen) -> StatusOr<int64_t> {
    const int32_t token = int32_t(chosen);
    context.push_back(token);
    generated.push_back(token);
    size_t newBytes = 0;
    if (stream) {
      ACCEL_RT_ASSIGN_OR_RETURN(std::string piece, stream->step(token));
      newBytes = piece.size();
      text += piece;
    }
    decision = sampler::checkStop(criteria, text, newBytes, token, int64_t(generated.size()));
    if (decision.finished() && decision.stopTokenId >= 0) {
      // The stop token's own text is not output.
      generated.pop_back();
      text.resize(text.size() - newBytes);
      decision.outputBytes = text.size();
    }
    if (onText && stream) {
      size_t n = decision.finished() ? decision.outputBytes
                                     : sampler::streamableBytes(criteria, text, false);
      if (n > emitted) {
        onText(std::string_view(text).substr(emitted, n - emitted));
        emitted = n;
      }
    }
    return decision.finished() ? int64_t(-1) : int64_t(token);
  };

  // Plain greedy requests let the engine pick the tokens (on the GPU, where
  // the logits are); the others sample from the logits on the host.
  const sampler::SamplingParams &sp = request.sampling;
  const bool plainGreedy = sp.isGreedy() && !sp.hasPenalties();
  StatusOr<std::vector<int64_t>> out =
      speculator_ ? generateSpeculative(engine_, *speculator_, result.promptIds,
                                        plainGreedy ? nullptr : &sampler, context,
                                        request.maxTokens, accept, result.speculative)
      : plainGreedy
          ? engine_.generateGreedy(result.promptIds, accept)
          : engine_.generate(result.promptIds,
                             [&](const float *logits, int64_t vocab) -> StatusOr<int64_t> {
                               ACCEL_RT_ASSIGN_OR_RETURN(int32_t token,
                                                         sampler.sample(logits, vocab, context,
                                                                        result.promptIds.size()));
                               return accept(token);
                             });
  if (!out)
    return out.status();
  result.tokens = std::move(generated);
  if (decision.finished()) {
    result.finishReason = sampler::finishReasonName(decision.reason);
    text.resize(std::min(text.size(), decision.outputBytes));
  } else {
    result.finishReason = "length"; // the context is full
  }
  if (onText && tokenizer_ && text.size() > emitted)
    onText(std::string_view(text).substr(emitted));
  result.text = std::move(text);
  return result;
}

} // namespace accel::rt::engine
