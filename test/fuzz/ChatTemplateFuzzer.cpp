//===- ChatTemplateFuzzer.cpp - libFuzzer target for chat-template rendering =//
//
// The chat path of the server after validation (OpenAiApi::generate): the
// messages rendered by a ChatTemplate, then the prompt encoded by the
// tokenizer with or without its special tokens as the template says. The
// tokenizer is the demo model's (byte-level BPE) with the chatml and llama3
// special tokens added, so that "auto" picks chatml and the special tokens a
// client writes in its messages are recognised.
//
// Input: byte 0 picks the template (auto, chatml, llama3, plain; bits 0-1),
// add_generation_prompt (bit 2) and continue_final_message (bit 3, only
// without add_generation_prompt, as request validation allows); the rest
// is messages separated by '\0', each "role\x1fcontent" (no '\x1f': role
// "user").
//
// What must hold: rendering never crashes; with continue_final_message the
// prompt ends with the last message's content; a prompt of valid UTF-8 encodes,
// and decoding its ids with the special tokens kept gives the prompt back
// exactly (byte-level BPE without a normalizer loses nothing); a prompt of
// invalid UTF-8 is refused with a Status.
//
//===----------------------------------------------------------------------===//
#include "runtime/serving/http/ChatTemplate.h"
#include "runtime/serving/tokenizer/Tokenizer.h"

#include "core/Json.h"
#include "core/RegularFile.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#ifndef ACCEL_SOURCE_DIR
#error "ACCEL_SOURCE_DIR must name the source tree (test/fuzz/CMakeLists.txt sets it)"
#endif

using namespace accel::rt;
using namespace accel::rt::server;

namespace {
[[noreturn]] void die(const char *what, const std::string &detail) {
  std::fprintf(stderr, "chat template fuzzer: %s: %s\n", what, detail.c_str());
  std::abort();
}

tok::Tokenizer *tokenizer = nullptr;

/// Whether `s` is valid UTF-8 by the JSON library's reckoning (quote()
/// replaces what is not): the server's prompts come from JSON strings.
bool validUtf8(std::string_view s) {
  StatusOr<json::Value> v = json::parse(json::quote(s));
  return v && v->asString() == s;
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const std::string path = std::string(ACCEL_SOURCE_DIR) + "/test/fixtures/demo/tokenizer.json";
  StatusOr<std::string> text = readRegularFile(path, "tokenizer");
  if (!text)
    die("cannot read the demo tokenizer", text.status().message());
  StatusOr<json::Value> doc = json::parse(*text);
  if (!doc)
    die("the demo tokenizer is not JSON", doc.status().message());
  int64_t next = 0;
  if (json::Value *vocab = doc->find("model") ? doc->find("model")->find("vocab") : nullptr)
    for (const json::Member &m : vocab->members())
      next = std::max(next, m.second.asInt() + 1);
  json::Value *added = doc->find("added_tokens");
  if (!added)
    die("the demo tokenizer has no added_tokens", path);
  for (const json::Value &t : added->items())
    next = std::max(next, t.find("id")->asInt() + 1);
  for (const char *special : {"<|im_start|>", "<|im_end|>", "<|begin_of_text|>",
                              "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"}) {
    json::Value t = json::Value::object();
    t.set("id", next++);
    t.set("content", special);
    t.set("single_word", false);
    t.set("lstrip", false);
    t.set("rstrip", false);
    t.set("normalized", false);
    t.set("special", true);
    added->push(std::move(t));
  }
  StatusOr<tok::Tokenizer> t = tok::Tokenizer::fromJson(json::write(*doc), path);
  if (!t)
    die("the chat tokenizer does not load", t.status().message());
  tokenizer = new tok::Tokenizer(std::move(*t));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  static const char *const kNames[] = {"auto", "chatml", "llama3", "plain"};
  StatusOr<ChatTemplate> tmpl = ChatTemplate::choose(kNames[data[0] & 3], tokenizer);
  if (!tmpl)
    die("a template name was refused", kNames[data[0] & 3]);
  if ((data[0] & 3) == 0 && tmpl->format() != ChatTemplate::Format::kChatML)
    die("auto did not pick chatml for a tokenizer with <|im_start|> and <|im_end|>",
        tmpl->name());
  const bool addGenerationPrompt = data[0] & 4;
  const bool continueFinalMessage = !addGenerationPrompt && (data[0] & 8);

  std::vector<ChatMessage> messages;
  std::string_view rest(reinterpret_cast<const char *>(data) + 1, size - 1);
  while (!rest.empty()) {
    size_t end = rest.find('\0');
    std::string_view one = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    ChatMessage m;
    size_t sep = one.find('\x1f');
    m.role = sep == std::string_view::npos ? "user" : std::string(one.substr(0, sep));
    m.content = std::string(sep == std::string_view::npos ? one : one.substr(sep + 1));
    messages.push_back(std::move(m));
  }

  std::string prompt = tmpl->render(messages, addGenerationPrompt, continueFinalMessage);
  if (continueFinalMessage && !messages.empty()) {
    const std::string &last = messages.back().content;
    if (prompt.size() < last.size() ||
        prompt.compare(prompt.size() - last.size(), last.size(), last) != 0)
      die("continue_final_message: the prompt does not end with the last message",
          json::quote(prompt));
  }
  StatusOr<std::vector<int32_t>> ids = tokenizer->encode(prompt, tmpl->addSpecialTokens());
  if (!validUtf8(prompt)) {
    if (ids)
      die("a prompt of invalid UTF-8 was encoded", prompt);
    return 0;
  }
  if (!ids)
    die("a prompt of valid UTF-8 does not encode", ids.status().message());
  std::string back = tokenizer->decode(*ids, /*skipSpecialTokens=*/false);
  if (back != prompt)
    die("decode(encode(prompt)) is not the prompt", json::quote(prompt) + " -> " +
                                                        json::quote(back));
  return 0;
}
