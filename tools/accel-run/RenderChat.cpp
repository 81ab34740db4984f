//===- RenderChat.cpp - accel-run --render-chat ---------------------------===//
#include "RenderChat.h"

#include "core/Json.h"
#include "core/RegularFile.h"
#include "runtime/serving/http/Serve.h"
#include "runtime/serving/tokenizer/Tokenizer.h"

#include <cstdio>

namespace accel::rt {

Status renderChat(const std::string &planPath, const plan::LoadOptions &load,
                  const std::string &chatJsonPath, const std::string &chatTemplate,
                  bool printIds) {
  StatusOr<std::shared_ptr<const plan::PlanFile>> p = plan::PlanFile::open(planPath, load);
  if (!p)
    return p.status();
  std::shared_ptr<const tok::Tokenizer> tokenizer;
  if (std::optional<std::string_view> j = (*p)->tokenizerJson()) {
    StatusOr<tok::Tokenizer> t = tok::Tokenizer::fromJson(*j);
    if (!t)
      return Status(t.status().code(), planPath + ": the tokenizer the plan carries does not load: " +
                                           t.status().message());
    tokenizer = std::make_shared<const tok::Tokenizer>(std::move(*t));
  }
  StatusOr<server::ChatTemplate> tpl =
      server::chooseChatTemplate(chatTemplate, **p, tokenizer.get());
  if (!tpl)
    return tpl.status();

  StatusOr<std::string> text = readRegularFile(chatJsonPath, "the --render-chat file");
  if (!text)
    return text.status();
  StatusOr<json::Value> doc = json::parse(*text);
  if (!doc)
    return invalidArgument(chatJsonPath + ": " + doc.status().message());
  server::ChatInput in;
  if (doc->isArray()) {
    in.messages = *doc;
  } else if (doc->isObject()) {
    for (const json::Member &m : doc->members()) {
      const json::Value &v = m.second;
      if (m.first == "messages" && v.isArray())
        in.messages = v;
      else if (m.first == "tools" && (v.isArray() || v.isNull()))
        in.tools = v;
      else if (m.first == "documents" && (v.isArray() || v.isNull()))
        in.documents = v;
      else if (m.first == "chat_template_kwargs" && (v.isObject() || v.isNull()))
        in.kwargs = v;
      else if (m.first == "add_generation_prompt" && v.isBool())
        in.addGenerationPrompt = v.asBool();
      else if (m.first == "continue_final_message" && v.isBool())
        in.continueFinalMessage = v.asBool();
      else
        return invalidArgument(chatJsonPath + ": '" + m.first +
                               "' is not one of messages (an array), tools, documents (arrays), "
                               "chat_template_kwargs (an object), add_generation_prompt, "
                               "continue_final_message (booleans)");
    }
  } else {
    return invalidArgument(chatJsonPath + ": neither a list of messages nor an object");
  }
  StatusOr<std::string> prompt = tpl->apply(in);
  if (!prompt)
    return prompt.status();
  std::fwrite(prompt->data(), 1, prompt->size(), stdout);
  std::fflush(stdout);
  if (printIds) {
    if (!tokenizer || !tokenizer->isLoaded())
      return invalidArgument(planPath + ": --print-ids needs the tokenizer, which the plan lacks");
    StatusOr<std::vector<int32_t>> ids = tokenizer->encode(*prompt, tpl->addSpecialTokens());
    if (!ids)
      return ids.status();
    for (size_t i = 0; i < ids->size(); ++i)
      std::fprintf(stderr, "%s%d", i ? " " : "", (*ids)[i]);
    std::fputc('\n', stderr);
  }
  return Status::ok();
}

} // namespace accel::rt
