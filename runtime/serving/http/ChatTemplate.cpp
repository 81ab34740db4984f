//===- ChatTemplate.cpp - chat messages to a prompt -----------------------===//
#include "runtime/serving/http/ChatTemplate.h"

#include "runtime/serving/tokenizer/Tokenizer.h"

namespace accel::rt::server {

StatusOr<ChatTemplate> ChatTemplate::choose(std::string_view name,
                                            const tok::Tokenizer *tokenizer) {
  if (name == "chatml")
    return ChatTemplate(Format::kChatML);
  if (name == "llama3")
    return ChatTemplate(Format::kLlama3);
  if (name == "plain")
    return ChatTemplate(Format::kPlain);
  if (name != "auto")
    return invalidArgument("--chat-template '" + std::string(name) +
                           "' is not one of auto, chatml, llama3, plain (Jinja templates are "
                           "not supported)");
  if (tokenizer && tokenizer->isLoaded()) {
    auto has = [&](const char *t) { return tokenizer->tokenToId(t).has_value(); };
    if (has("<|im_start|>") && has("<|im_end|>"))
      return ChatTemplate(Format::kChatML);
    if (has("<|start_header_id|>") && has("<|end_header_id|>") && has("<|eot_id|>"))
      return ChatTemplate(Format::kLlama3);
  }
  return ChatTemplate(Format::kPlain);
}

const char *ChatTemplate::name() const {
  switch (format_) {
  case Format::kChatML:
    return "chatml";
  case Format::kLlama3:
    return "llama3";
  case Format::kPlain:
    return "plain";
  }
  return "plain";
}

std::string ChatTemplate::render(const std::vector<ChatMessage> &messages,
                                 bool addGenerationPrompt) const {
  std::string out;
  switch (format_) {
  case Format::kChatML:
    for (const ChatMessage &m : messages)
      out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
    if (addGenerationPrompt)
      out += "<|im_start|>assistant\n";
    break;
  case Format::kLlama3:
    out += "<|begin_of_text|>";
    for (const ChatMessage &m : messages)
      out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + m.content + "<|eot_id|>";
    if (addGenerationPrompt)
      out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
    break;
  case Format::kPlain:
    for (const ChatMessage &m : messages)
      out += m.role + ": " + m.content + "\n";
    if (addGenerationPrompt)
      out += "assistant:";
    break;
  }
  return out;
}

} // namespace accel::rt::server
