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
                                 bool addGenerationPrompt, bool continueFinalMessage) const {
  std::string out;
  // The last message without its end marker when it is to be continued.
  auto end = [&](size_t i, const char *marker) {
    return continueFinalMessage && i + 1 == messages.size() ? "" : marker;
  };
  switch (format_) {
  case Format::kChatML:
    for (size_t i = 0; i < messages.size(); ++i)
      out += "<|im_start|>" + messages[i].role + "\n" + messages[i].content +
             end(i, "<|im_end|>\n");
    if (addGenerationPrompt)
      out += "<|im_start|>assistant\n";
    break;
  case Format::kLlama3:
    out += "<|begin_of_text|>";
    for (size_t i = 0; i < messages.size(); ++i)
      out += "<|start_header_id|>" + messages[i].role + "<|end_header_id|>\n\n" +
             messages[i].content + end(i, "<|eot_id|>");
    if (addGenerationPrompt)
      out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
    break;
  case Format::kPlain:
    for (size_t i = 0; i < messages.size(); ++i)
      out += messages[i].role + ": " + messages[i].content + end(i, "\n");
    if (addGenerationPrompt)
      out += "assistant:";
    break;
  }
  return out;
}

} // namespace accel::rt::server
