//===- ChatTemplate.h - chat messages to a prompt ---------------*- C++ -*-===//
//
// A chat request's messages become the prompt text through the model's own
// Jinja chat template, or one of three built-in formats (docs/serving.md
// "Chat templates"):
//
//   jinja   the model's template (runtime/serving/chat's interpreter): the
//           plan's (tokenizer_config.json's chat_template, carried by accelc;
//           "tool_use" instead of "default" when the request has tools), or
//           a file given with --chat-template FILE
//   chatml  <|im_start|>{role}\n{content}<|im_end|>\n ... then
//           <|im_start|>assistant\n
//   llama3  <|begin_of_text|> then per message
//           <|start_header_id|>{role}<|end_header_id|>\n\n{content}<|eot_id|>
//           then <|start_header_id|>assistant<|end_header_id|>\n\n
//   plain   {role}: {content}\n per message, then "assistant:" (base models,
//           the demo)
//
// "auto" (the default) takes the plan's template when it has one; otherwise
// chatml when the tokenizer has both <|im_start|> and <|im_end|> tokens,
// llama3 when it has <|start_header_id|>, <|end_header_id|> and <|eot_id|>,
// else plain. Prompts of a template (Jinja, chatml, llama3) are encoded
// without the tokenizer's own special tokens (the template writes them, as
// HF's apply_chat_template does); plain prompts with them (BOS).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_HTTP_CHATTEMPLATE_H
#define ACCEL_RUNTIME_SERVING_HTTP_CHATTEMPLATE_H

#include "core/Json.h"
#include "core/Status.h"
#include "runtime/serving/chat/JinjaTemplate.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace accel::rt::tok {
class Tokenizer;
}

namespace accel::rt::server {

struct ChatMessage {
  std::string role; // system, user, assistant, tool
  std::string content;
  json::Value toolCalls; // assistant: null or its calls, arguments as objects
  std::string toolCallId; // tool: the call it answers
};

/// A model's Jinja templates as the plan carries them.
struct JinjaTemplates {
  std::vector<std::pair<std::string, std::string>> templates; // name -> source
  std::vector<std::pair<std::string, std::string>> specialTokens; // bos_token -> "<s>"
  std::string origin; // for messages: "tokenizer_config.json chat_template"
};

/// What a template renders: the request's messages and what goes with them.
struct ChatInput {
  json::Value messages = json::Value::array(); // message objects
  json::Value tools;     // null or an array of tool schemas
  json::Value documents; // null or an array
  json::Value kwargs;    // null or an object: extra template variables
  bool addGenerationPrompt = true;
  bool continueFinalMessage = false;
};

class ChatTemplate {
public:
  enum class Format { kChatML, kLlama3, kPlain, kJinja };

  ChatTemplate() = default;
  explicit ChatTemplate(Format f) : format_(f) {}

  /// `name` is auto, chatml, llama3, plain, or the path of a Jinja file.
  /// auto takes `fromPlan` when it has templates, else looks at `tokenizer`
  /// (may be null: plain). A file's template reads its special tokens from
  /// `fromPlan`, else the tokenizer's BOS and EOS. Errors are one sentence:
  /// a file that cannot be read, a template that does not parse (naming
  /// its source and line).
  static StatusOr<ChatTemplate> choose(std::string_view name, const tok::Tokenizer *tokenizer,
                                       const JinjaTemplates *fromPlan = nullptr);
  /// The Jinja templates `t` (kInvalidArgument when one does not parse).
  static StatusOr<ChatTemplate> fromJinja(const JinjaTemplates &t);

  Format format() const { return format_; }
  /// chatml, llama3, plain; for a Jinja template, "jinja (<its origin>)".
  std::string name() const;
  /// The Jinja source a request with tools renders ("tool_use", else the
  /// default); "" for the built-in formats.
  std::string toolTemplateSource() const;

  /// The prompt text; with addGenerationPrompt it ends where the assistant's
  /// reply begins. With continueFinalMessage (vLLM's continue_final_message)
  /// the last message is left open: the text ends with its content, so that
  /// the model continues it. A Jinja template's error (raise_exception, a
  /// type error in the template) is kInvalidArgument, its message the
  /// template's own for raise_exception.
  StatusOr<std::string> apply(const ChatInput &input) const;
  /// The built-in formats' render (Jinja templates go through apply()).
  std::string render(const std::vector<ChatMessage> &messages, bool addGenerationPrompt,
                     bool continueFinalMessage = false) const;
  /// Whether to encode the rendered prompt with the tokenizer's special
  /// tokens (BOS ...).
  bool addSpecialTokens() const { return format_ == Format::kPlain; }

private:
  struct Jinja {
    std::vector<std::pair<std::string, jinja::Template>> templates;
    std::string toolSource; // toolTemplateSource()
    jinja::Dict specialTokens;
    std::string origin;
  };
  Format format_ = Format::kPlain;
  std::shared_ptr<const Jinja> jinja_;
};

} // namespace accel::rt::server

#endif // ACCEL_RUNTIME_SERVING_HTTP_CHATTEMPLATE_H
