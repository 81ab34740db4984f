//===- ChatTemplate.cpp - chat messages to a prompt -----------------------===//
#include "runtime/serving/http/ChatTemplate.h"

#include "core/RegularFile.h"
#include "runtime/serving/chat/JinjaJson.h"
#include "runtime/serving/tokenizer/Tokenizer.h"

namespace accel::rt::server {

namespace {

/// transformers' continue_final_message marker: appended to the last
/// message, found in the rendered text, and everything from it cut.
constexpr const char *kContinueTag = "CONTINUE_FINAL_MESSAGE_TAG ";

std::string fileName(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

} // namespace

StatusOr<ChatTemplate> ChatTemplate::fromJinja(const JinjaTemplates &t) {
  auto j = std::make_shared<Jinja>();
  j->origin = t.origin;
  for (const auto &[name, source] : t.templates) {
    std::string where = t.templates.size() > 1 ? t.origin + " '" + name + "'" : t.origin;
    StatusOr<jinja::Template> parsed = jinja::Template::parse(source, where);
    if (!parsed)
      return parsed.status();
    j->templates.emplace_back(name, std::move(*parsed));
  }
  if (j->templates.empty())
    return invalidArgument("the chat templates of " + t.origin + " are empty");
  // The one apply() renders for a request with tools.
  j->toolSource = t.templates.front().second;
  for (const char *preferred : {"default", "tool_use"})
    for (const auto &[name, source] : t.templates)
      if (name == preferred)
        j->toolSource = source;
  for (const auto &[name, text] : t.specialTokens)
    j->specialTokens.emplace_back(name, jinja::Value(text));
  ChatTemplate c(Format::kJinja);
  c.jinja_ = std::move(j);
  return c;
}

StatusOr<ChatTemplate> ChatTemplate::choose(std::string_view name,
                                            const tok::Tokenizer *tokenizer,
                                            const JinjaTemplates *fromPlan) {
  if (name == "chatml")
    return ChatTemplate(Format::kChatML);
  if (name == "llama3")
    return ChatTemplate(Format::kLlama3);
  if (name == "plain")
    return ChatTemplate(Format::kPlain);
  if (name != "auto") {
    StatusOr<std::string> source =
        readRegularFile(std::string(name), "the --chat-template file");
    if (!source)
      return invalidArgument("--chat-template '" + std::string(name) +
                             "' is not one of auto, chatml, llama3, plain, nor a Jinja file "
                             "that can be read: " + source.status().message());
    JinjaTemplates t;
    t.templates.emplace_back("default", std::move(*source));
    t.origin = fileName(name);
    if (fromPlan && !fromPlan->specialTokens.empty()) {
      t.specialTokens = fromPlan->specialTokens;
    } else if (tokenizer && tokenizer->isLoaded()) {
      if (std::optional<int32_t> b = tokenizer->bosId())
        if (std::optional<std::string> s = tokenizer->idToToken(*b))
          t.specialTokens.emplace_back("bos_token", *s);
      if (std::optional<int32_t> e = tokenizer->eosId())
        if (std::optional<std::string> s = tokenizer->idToToken(*e))
          t.specialTokens.emplace_back("eos_token", *s);
    }
    return fromJinja(t);
  }
  if (fromPlan && !fromPlan->templates.empty())
    return fromJinja(*fromPlan);
  if (tokenizer && tokenizer->isLoaded()) {
    auto has = [&](const char *t) { return tokenizer->tokenToId(t).has_value(); };
    if (has("<|im_start|>") && has("<|im_end|>"))
      return ChatTemplate(Format::kChatML);
    if (has("<|start_header_id|>") && has("<|end_header_id|>") && has("<|eot_id|>"))
      return ChatTemplate(Format::kLlama3);
  }
  return ChatTemplate(Format::kPlain);
}

std::string ChatTemplate::name() const {
  switch (format_) {
  case Format::kChatML:
    return "chatml";
  case Format::kLlama3:
    return "llama3";
  case Format::kPlain:
    return "plain";
  case Format::kJinja:
    return "jinja (" + jinja_->origin + ")";
  }
  return "plain";
}

std::string ChatTemplate::toolTemplateSource() const {
  return format_ == Format::kJinja ? jinja_->toolSource : std::string();
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
  case Format::kJinja: // not reached: apply() renders Jinja templates
    for (size_t i = 0; i < messages.size(); ++i)
      out += messages[i].role + ": " + messages[i].content + end(i, "\n");
    if (addGenerationPrompt)
      out += "assistant:";
    break;
  }
  return out;
}

StatusOr<std::string> ChatTemplate::apply(const ChatInput &in) const {
  if (format_ != Format::kJinja) {
    std::vector<ChatMessage> messages;
    for (const json::Value &m : in.messages.items()) {
      ChatMessage c;
      if (const json::Value *r = m.find("role"); r && r->isString())
        c.role = r->asString();
      if (const json::Value *t = m.find("content"); t && t->isString())
        c.content = t->asString();
      messages.push_back(std::move(c));
    }
    return render(messages, in.addGenerationPrompt, in.continueFinalMessage);
  }
  const bool hasTools = in.tools.isArray() && in.tools.size() > 0;
  const jinja::Template *t = &jinja_->templates.front().second;
  for (const auto &[name, tpl] : jinja_->templates)
    if (name == "default")
      t = &tpl;
  if (hasTools)
    for (const auto &[name, tpl] : jinja_->templates)
      if (name == "tool_use")
        t = &tpl;

  jinja::Value messages = jinja::fromJson(in.messages);
  std::string finalContent;
  if (in.continueFinalMessage) {
    // transformers' way: tag the last message's content, cut the text at the tag.
    jinja::List list = messages.list();
    const jinja::Value *content = list.empty() ? nullptr : list.back().find("content");
    if (!content || !content->isString())
      return invalidArgument("continue_final_message needs a last message whose content is text");
    finalContent = content->asString();
    jinja::Dict last = list.back().dict();
    for (auto &m : last)
      if (m.first == "content")
        m.second = jinja::Value(finalContent + kContinueTag);
    list.back() = jinja::Value(std::move(last));
    messages = jinja::Value(std::move(list));
  }
  jinja::Dict vars = jinja_->specialTokens;
  vars.emplace_back("messages", messages);
  vars.emplace_back("tools", in.tools.isNull() ? jinja::Value::none() : jinja::fromJson(in.tools));
  vars.emplace_back("documents",
                    in.documents.isNull() ? jinja::Value::none() : jinja::fromJson(in.documents));
  vars.emplace_back("add_generation_prompt", jinja::Value(in.addGenerationPrompt));
  if (in.kwargs.isObject())
    for (const json::Member &m : in.kwargs.members())
      vars.emplace_back(m.first, jinja::fromJson(m.second));
  StatusOr<std::string> text = t->render(vars);
  if (!text || !in.continueFinalMessage)
    return text;
  const std::string tag = kContinueTag;
  const std::string bare = tag.substr(0, tag.size() - 1);
  size_t at = text->rfind(bare);
  if (at == std::string::npos)
    return invalidArgument("continue_final_message: the chat template " + t->sourceName() +
                           " does not render the final message's content");
  if (text->compare(at, tag.size(), tag) == 0)
    return text->substr(0, at);
  std::string cut = text->substr(0, at);
  while (!cut.empty() && (cut.back() == ' ' || cut.back() == '\n' || cut.back() == '\t' ||
                          cut.back() == '\r'))
    cut.pop_back();
  return cut;
}

} // namespace accel::rt::server
