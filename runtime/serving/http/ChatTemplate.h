//===- ChatTemplate.h - chat messages to a prompt ---------------*- C++ -*-===//
//
// HF models keep a Jinja chat template in tokenizer_config.json; plans do not
// carry it (yet), and accel has no Jinja interpreter. Instead the server
// knows three formats, chosen by --chat-template (docs/serving.md):
//
//   chatml  <|im_start|>{role}\n{content}<|im_end|>\n ... then
//           <|im_start|>assistant\n                (Qwen2, many fine-tunes)
//   llama3  <|begin_of_text|> then per message
//           <|start_header_id|>{role}<|end_header_id|>\n\n{content}<|eot_id|>
//           then <|start_header_id|>assistant<|end_header_id|>\n\n
//           (Llama-3.0 Instruct; 3.1+ also add a dated system header, which
//           this does not)
//   plain   {role}: {content}\n per message, then "assistant:" (base models,
//           the demo)
//
// "auto" (the default) picks chatml when the tokenizer has both <|im_start|>
// and <|im_end|> tokens, llama3 when it has <|start_header_id|>,
// <|end_header_id|> and <|eot_id|>, else plain. chatml and llama3 prompts are
// encoded without the tokenizer's own special tokens (the template has
// them, as HF's apply_chat_template does); plain prompts with them (BOS).
// The model's EOS ids (generation_config.json, carried by the plan) end the
// reply: for chat models they include <|im_end|> / <|eot_id|>.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_HTTP_CHATTEMPLATE_H
#define ACCEL_RUNTIME_SERVING_HTTP_CHATTEMPLATE_H

#include "core/Status.h"

#include <string>
#include <string_view>
#include <vector>

namespace accel::rt::tok {
class Tokenizer;
}

namespace accel::rt::server {

struct ChatMessage {
  std::string role; // system, user, assistant
  std::string content;
};

class ChatTemplate {
public:
  enum class Format { kChatML, kLlama3, kPlain };

  ChatTemplate() = default;
  explicit ChatTemplate(Format f) : format_(f) {}

  /// `name` is auto, chatml, llama3 or plain (kInvalidArgument otherwise);
  /// auto looks at `tokenizer` (may be null: plain).
  static StatusOr<ChatTemplate> choose(std::string_view name, const tok::Tokenizer *tokenizer);

  Format format() const { return format_; }
  const char *name() const;
  /// The prompt text; with addGenerationPrompt it ends where the
  /// assistant's reply begins. With continueFinalMessage (vLLM's
  /// continue_final_message) the last message is left open: the text ends
  /// with its content, so that the model continues it.
  std::string render(const std::vector<ChatMessage> &messages, bool addGenerationPrompt,
                     bool continueFinalMessage = false) const;
  /// Whether to encode the rendered prompt with the tokenizer's special
  /// tokens (BOS ...).
  bool addSpecialTokens() const { return format_ == Format::kPlain; }

private:
  Format format_ = Format::kPlain;
};

} // namespace accel::rt::server

#endif // ACCEL_RUNTIME_SERVING_HTTP_CHATTEMPLATE_H
