//===- TokenizerConfig.cpp - the chat template a plan carries -------------===//
#include "TokenizerConfig.h"

#include "core/Json.h"
#include "core/RegularFile.h"
#include "runtime/serving/chat/JinjaTemplate.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace accel::driver {

namespace json = rt::json;

rt::Status readChatTemplates(const std::string &configPath, plan::PlanOptions &options,
                             const std::function<void(const std::string &)> &warn) {
  rt::StatusOr<std::string> text = rt::readRegularFile(configPath, "the tokenizer config");
  if (!text)
    return text.status();
  rt::StatusOr<json::Value> config = json::parse(*text);
  if (!config)
    return rt::invalidArgument(configPath + ": " + config.status().message());
  if (!config->isObject())
    return rt::invalidArgument(configPath + ": not a JSON object");

  for (const char *key : {"bos_token", "eos_token", "unk_token", "pad_token"}) {
    const json::Value *t = config->find(key);
    if (t && t->isObject())
      t = t->find("content");
    if (t && t->isString())
      options.specialTokens.emplace_back(key, t->asString());
  }

  const std::string origin = "tokenizer_config.json chat_template";
  if (const json::Value *t = config->find("chat_template"); t && !t->isNull()) {
    if (t->isString()) {
      options.chatTemplates.emplace_back("default", t->asString());
    } else if (t->isArray()) {
      for (size_t i = 0; i < t->items().size(); ++i) {
        const json::Value &e = t->items()[i];
        const json::Value *name = e.isObject() ? e.find("name") : nullptr;
        const json::Value *tpl = e.isObject() ? e.find("template") : nullptr;
        if (!name || !name->isString() || !tpl || !tpl->isString())
          return rt::invalidArgument(configPath + ": chat_template[" + std::to_string(i) +
                                     "] is not an object with string 'name' and 'template'");
        options.chatTemplates.emplace_back(name->asString(), tpl->asString());
      }
    } else {
      return rt::invalidArgument(configPath +
                                 ": chat_template is neither a string nor a list of "
                                 "{name, template} objects");
    }
    options.chatTemplateOrigin = origin;
  } else {
    llvm::SmallString<256> jinja(configPath);
    llvm::sys::path::remove_filename(jinja);
    llvm::sys::path::append(jinja, "chat_template.jinja");
    if (llvm::sys::fs::exists(jinja)) {
      rt::StatusOr<std::string> src = rt::readRegularFile(std::string(jinja), "the chat template");
      if (!src)
        return src.status();
      options.chatTemplates.emplace_back("default", *src);
      options.chatTemplateOrigin = "chat_template.jinja";
    }
  }
  for (const auto &[name, source] : options.chatTemplates) {
    std::string where = options.chatTemplateOrigin == origin && options.chatTemplates.size() > 1
                            ? origin + " '" + name + "'"
                            : options.chatTemplateOrigin;
    rt::StatusOr<rt::jinja::Template> t = rt::jinja::Template::parse(source, where);
    if (!t && warn)
      warn(t.status().message() + "; the plan carries it, and accel-run will refuse it unless "
                                  "given --chat-template");
  }
  return rt::Status::ok();
}

} // namespace accel::driver
