//===- Tokenize.h - vLLM's /tokenize and /detokenize bodies ------*- C++ -*-===//
//
// The wire format of vLLM's tokenizer endpoints (docs/serving.md "API"),
// without IO:
//
//   POST /tokenize    {"prompt": "text", "add_special_tokens": true}
//                  or {"messages": [...], "add_generation_prompt": true,
//                      "continue_final_message", "chat_template_kwargs",
//                      "documents", "add_special_tokens": false}
//                     (+ "model", "return_token_strs")
//                     -> {"count": N, "max_model_len": M, "tokens": [...]}
//                        (+ "token_strs" with return_token_strs)
//   POST /detokenize  {"tokens": [ids]} (+ "model") -> {"prompt": "text"}
//
// Messages are validated as /v1/chat/completions validates them; every
// other member is refused by name (400), as the completion routes do.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_HTTP_TOKENIZE_H
#define ACCEL_RUNTIME_SERVING_HTTP_TOKENIZE_H

#include "runtime/serving/http/OpenAiProtocol.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace accel::rt::server {

struct TokenizeRequest {
  /// Endpoint kChat: `messages` (rendered by the chat template); else the
  /// text `prompt`. add_special_tokens is in `req`.
  CompletionRequest req;
  bool returnTokenStrs = false;
};

/// Parses a /tokenize body; false with `err` (400, naming the field).
bool parseTokenizeRequest(std::string_view body, const RequestLimits &limits,
                          TokenizeRequest &out, ApiError &err);
/// Parses a /detokenize body: the token ids, each in [0, vocabSize) when
/// vocabSize > 0; false with `err`.
bool parseDetokenizeRequest(std::string_view body, int64_t vocabSize, std::string &model,
                            std::vector<int32_t> &ids, ApiError &err);

std::string tokenizeResponse(const std::vector<int64_t> &ids, int64_t maxModelLen,
                             const std::vector<std::string> *tokenStrs);
std::string detokenizeResponse(const std::string &text);
std::string versionResponse();

} // namespace accel::rt::server

#endif // ACCEL_RUNTIME_SERVING_HTTP_TOKENIZE_H
