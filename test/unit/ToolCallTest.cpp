//===- ToolCallTest.cpp - tool calls out of a model's reply ---------------===//
//
// runtime/serving/http/ToolParsers on strings: each family's format (one
// call, several, content before them), what stays content (malformed JSON,
// unknown functions, text after the calls), Unicode and nested arguments,
// the streaming rule (settledContent), forced tool_choice prefixes, ids and
// the detection of a template's family on the real templates.
//
//===----------------------------------------------------------------------===//
#include "core/Json.h"
#include "core/RegularFile.h"
#include "runtime/serving/http/ToolParsers.h"
#include "runtime/serving/tokenizer/Tokenizer.h"

#include <gtest/gtest.h>

#include <regex>

using namespace accel::rt;
using namespace accel::rt::server;

namespace {

const std::vector<std::string> kFunctions = {"get_weather", "add", "noop"};

ToolCallReply parse(ToolParser p, const std::string &text) {
  return parseToolCalls(p, text, kFunctions);
}

/// The reply has no call and all of `text` as its content.
void expectPlain(ToolParser p, const std::string &text) {
  SCOPED_TRACE(std::string(toolParserName(p)) + ": " + text);
  ToolCallReply r = parse(p, text);
  EXPECT_TRUE(r.calls.empty());
  ASSERT_TRUE(r.content.has_value());
  EXPECT_EQ(*r.content, text);
}

TEST(ToolParsers, HermesOneCall) {
  ToolCallReply r = parse(ToolParser::kHermes,
                          "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
                          "\"Paris\", \"unit\": \"celsius\"}}\n</tool_call>");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "get_weather");
  EXPECT_EQ(r.calls[0].arguments, "{\"city\": \"Paris\", \"unit\": \"celsius\"}");
  EXPECT_TRUE(r.calls[0].id.empty()); // the server gives ids
  EXPECT_FALSE(r.content.has_value());
}

TEST(ToolParsers, HermesSeveralCallsAndContentBefore) {
  ToolCallReply r = parse(ToolParser::kHermes,
                          "Let me look that up.\n\n<tool_call>\n{\"name\":\"get_weather\","
                          "\"arguments\":{\"city\":\"Paris\"}}\n</tool_call>\n<tool_call>\n"
                          "{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2.5}}\n"
                          "</tool_call>\n");
  ASSERT_EQ(r.calls.size(), 2u);
  // Compact JSON comes back as Python's json.dumps writes it (vLLM's arguments).
  EXPECT_EQ(r.calls[0].arguments, "{\"city\": \"Paris\"}");
  EXPECT_EQ(r.calls[1].name, "add");
  EXPECT_EQ(r.calls[1].arguments, "{\"a\": 1, \"b\": 2.5}");
  ASSERT_TRUE(r.content.has_value());
  EXPECT_EQ(*r.content, "Let me look that up.");
}

TEST(ToolParsers, HermesLastCallCutBeforeItsEndTag) {
  ToolCallReply r =
      parse(ToolParser::kHermes, "<tool_call>\n{\"name\": \"noop\", \"arguments\": {}}");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, "{}");
  // No arguments at all: {}.
  r = parse(ToolParser::kHermes, "<tool_call>{\"name\": \"noop\"}</tool_call>");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, "{}");
}

TEST(ToolParsers, HermesWhatStaysContent) {
  // Malformed JSON, cut JSON, an unknown function, arguments that are not
  // an object, text after the calls, no marker: all plain content.
  expectPlain(ToolParser::kHermes,
              "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": }\n</tool_call>");
  expectPlain(ToolParser::kHermes, "<tool_call>\n{\"name\": \"get_weather\", \"argum");
  expectPlain(ToolParser::kHermes,
              "<tool_call>\n{\"name\": \"rm_rf\", \"arguments\": {}}\n</tool_call>");
  expectPlain(ToolParser::kHermes,
              "<tool_call>\n{\"name\": \"add\", \"arguments\": \"{\\\"a\\\": 1}\"}\n</tool_call>");
  expectPlain(ToolParser::kHermes,
              "<tool_call>\n{\"name\": \"noop\", \"arguments\": {}}\n</tool_call>\nDone, it is "
              "sunny.");
  expectPlain(ToolParser::kHermes, "<tool_call>\n[1, 2]\n</tool_call>");
  expectPlain(ToolParser::kHermes, "The weather in Paris is {\"temp\": 21}.");
  expectPlain(ToolParser::kHermes, "");
  // One good call and one bad one: no call at all (the reply is not calls only).
  expectPlain(ToolParser::kHermes,
              "<tool_call>{\"name\": \"noop\", \"arguments\": {}}</tool_call>\n"
              "<tool_call>{\"name\": \"noop\", \"arguments\": {</tool_call>");
}

TEST(ToolParsers, UnicodeAndNestedArguments) {
  // Non-ASCII stays UTF-8 (json.dumps(ensure_ascii=False)); \u escapes are
  // read; nesting, floats, null, booleans and escapes come back as Python
  // writes them.
  ToolCallReply r = parse(
      ToolParser::kHermes,
      "Voilà 🎉\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Z\\u00fcrich\", \"note\": \"日本語 \\\"quoted\\\" \\\\ 🎉\", \"days\": [1, 2.50, "
      "{\"deep\": {\"deeper\": [null, true, false, -0.0001]}}], \"empty\": {}}}\n</tool_call>");
  ASSERT_EQ(r.calls.size(), 1u) << r.content.value_or("");
  EXPECT_EQ(r.calls[0].arguments,
            "{\"city\": \"Zürich\", \"note\": \"日本語 \\\"quoted\\\" \\\\ 🎉\", \"days\": [1, "
            "2.5, {\"deep\": {\"deeper\": [null, true, false, -0.0001]}}], \"empty\": {}}");
  StatusOr<json::Value> back = json::parse(r.calls[0].arguments);
  ASSERT_TRUE(back.isOk());
  EXPECT_EQ(back->find("city")->asString(), "Zürich");
  EXPECT_EQ(*r.content, "Voilà 🎉");
}

TEST(ToolParsers, Llama3Json) {
  ToolCallReply r = parse(ToolParser::kLlama3Json,
                          "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "get_weather");
  EXPECT_EQ(r.calls[0].arguments, "{\"city\": \"Paris\"}");
  EXPECT_FALSE(r.content.has_value());
  // After <|python_tag|>, several separated by ';' (a ';' inside a string
  // is not a separator), "arguments" as well as "parameters".
  r = parse(ToolParser::kLlama3Json,
            "<|python_tag|>{\"name\": \"add\", \"parameters\": {\"a\": \"1;2\"}}; "
            "{\"name\": \"noop\", \"arguments\": {}};{\"name\":\"get_weather\",\"parameters\":"
            "{\"city\":\"Köln\"}}\n");
  ASSERT_EQ(r.calls.size(), 3u);
  EXPECT_EQ(r.calls[0].arguments, "{\"a\": \"1;2\"}");
  EXPECT_EQ(r.calls[1].name, "noop");
  EXPECT_EQ(r.calls[2].arguments, "{\"city\": \"Köln\"}");
  // Text before <|python_tag|> is the content; blanks before the JSON are none.
  r = parse(ToolParser::kLlama3Json,
            "Checking.<|python_tag|>{\"name\": \"noop\", \"parameters\": {}}");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.content.value_or("<null>"), "Checking.");
  r = parse(ToolParser::kLlama3Json, "\n  {\"name\": \"noop\", \"parameters\": {}}");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_FALSE(r.content.has_value());

  expectPlain(ToolParser::kLlama3Json, "Sure: {\"name\": \"noop\", \"parameters\": {}}");
  expectPlain(ToolParser::kLlama3Json, "{\"name\": \"noop\", \"parameters\": {}");
  expectPlain(ToolParser::kLlama3Json, "{\"name\": \"noop\", \"parameters\": {}} and more");
  expectPlain(ToolParser::kLlama3Json,
              "{\"name\": \"noop\", \"parameters\": {}, \"arguments\": {}}");
  expectPlain(ToolParser::kLlama3Json, "{\"answer\": 42}");
  expectPlain(ToolParser::kLlama3Json, "{\"name\": \"noop\", \"parameters\": {}};");
  expectPlain(ToolParser::kLlama3Json, "<|python_tag|>brave_search.call(query=\"x\")");
  expectPlain(ToolParser::kLlama3Json, "Hello there");
}

TEST(ToolParsers, Mistral) {
  ToolCallReply r = parse(ToolParser::kMistral,
                          "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": "
                          "\"Paris\"}}, {\"name\": \"add\", \"arguments\": {\"a\": [1, {\"b\": "
                          "2}]}}]");
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].arguments, "{\"city\": \"Paris\"}");
  EXPECT_EQ(r.calls[1].arguments, "{\"a\": [1, {\"b\": 2}]}");
  EXPECT_FALSE(r.content.has_value());
  r = parse(ToolParser::kMistral,
            "I will add them. [TOOL_CALLS][{\"name\": \"add\", \"arguments\": {}}]");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.content.value_or("<null>"), "I will add them.");
  expectPlain(ToolParser::kMistral, "[TOOL_CALLS] [{\"name\": \"add\", \"arguments\": {]");
  expectPlain(ToolParser::kMistral, "[TOOL_CALLS] []");
  expectPlain(ToolParser::kMistral, "[TOOL_CALLS] [{\"name\": \"add\", \"arguments\": {}}] ok");
  expectPlain(ToolParser::kMistral, "No tools needed.");
}

TEST(ToolParsers, NoneParsesNothing) {
  expectPlain(ToolParser::kNone, "<tool_call>{\"name\": \"noop\", \"arguments\": {}}</tool_call>");
  EXPECT_EQ(settledContent(ToolParser::kNone, "abc <tool"), 9u);
}

TEST(ToolParsers, SettledContent) {
  EXPECT_EQ(settledContent(ToolParser::kHermes, "Hello"), 5u);
  EXPECT_EQ(settledContent(ToolParser::kHermes, "Hello \n"), 5u); // blanks wait
  EXPECT_EQ(settledContent(ToolParser::kHermes, "Hello <tool"), 5u);
  EXPECT_EQ(settledContent(ToolParser::kHermes, "Hello <b>"), 9u);
  EXPECT_EQ(settledContent(ToolParser::kHermes, "Hi <tool_call>{\"name\""), 2u);
  EXPECT_EQ(settledContent(ToolParser::kHermes, "<"), 0u);
  EXPECT_EQ(settledContent(ToolParser::kLlama3Json, "  "), 0u);
  EXPECT_EQ(settledContent(ToolParser::kLlama3Json, " {\"name\""), 0u);
  EXPECT_EQ(settledContent(ToolParser::kLlama3Json, "Hi there <|py"), 8u);
  EXPECT_EQ(settledContent(ToolParser::kLlama3Json, "Hi {x}"), 6u);
  EXPECT_EQ(settledContent(ToolParser::kMistral, "[TOOL"), 0u);
  EXPECT_EQ(settledContent(ToolParser::kMistral, "[1, 2]"), 6u);

  // For every reply here, growing it a byte at a time: the settled part
  // never shrinks, and never goes past the content of the final parse when
  // that has calls (so a stream never sends what becomes a call).
  const std::pair<ToolParser, std::string> replies[] = {
      {ToolParser::kHermes, "Let me check. \n<tool_call>\n{\"name\": \"noop\", \"arguments\": "
                            "{}}\n</tool_call>"},
      {ToolParser::kHermes, "a <tool_c <b> <tool_call>{\"name\": \"noop\"}</tool_call>"},
      {ToolParser::kHermes, "no call < here <tool_call>{bad json</tool_call>"},
      {ToolParser::kLlama3Json, "  {\"name\": \"noop\", \"parameters\": {}}"},
      {ToolParser::kLlama3Json, "Calling.\n<|python_tag|>{\"name\": \"noop\", \"parameters\": {}}"},
      {ToolParser::kMistral, "Sure [TOOL_CALLS] [{\"name\": \"add\", \"arguments\": {}}]"},
      {ToolParser::kMistral, "[TOOL [1]"},
  };
  for (const auto &[p, text] : replies) {
    SCOPED_TRACE(text);
    const ToolCallReply final = parse(p, text);
    size_t last = 0;
    for (size_t n = 0; n <= text.size(); ++n) {
      const size_t s = settledContent(p, std::string_view(text).substr(0, n));
      EXPECT_GE(s, last) << "at " << n;
      EXPECT_LE(s, n);
      if (!final.calls.empty())
        EXPECT_LE(s, final.content.value_or("").size()) << "at " << n;
      last = s;
    }
    if (final.calls.empty())
      EXPECT_EQ(text.substr(0, last), final.content.value_or("").substr(0, last));
  }
}

TEST(ToolParsers, ForcedPrefixesParseWithTheModelsArguments) {
  const std::string name = "get_weather";
  struct Case {
    ToolParser p;
    std::string named, required; // what a model would write after each prefix
  };
  const Case cases[] = {
      {ToolParser::kHermes, "{\"city\": \"Paris\"}}\n</tool_call>",
       "get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"},
      {ToolParser::kLlama3Json, "{\"city\": \"Paris\"}}",
       "get_weather\", \"parameters\": {\"city\": \"Paris\"}}"},
      {ToolParser::kMistral, "{\"city\": \"Paris\"}}]",
       "get_weather\", \"arguments\": {\"city\": \"Paris\"}}]"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(toolParserName(c.p));
    EXPECT_EQ(settledContent(c.p, forcedCallPrefix(c.p, &name)), 0u);
    ToolCallReply r = parse(c.p, forcedCallPrefix(c.p, &name) + c.named);
    ASSERT_EQ(r.calls.size(), 1u);
    EXPECT_EQ(r.calls[0].name, name);
    EXPECT_EQ(r.calls[0].arguments, "{\"city\": \"Paris\"}");
    r = parse(c.p, forcedCallPrefix(c.p, nullptr) + c.required);
    ASSERT_EQ(r.calls.size(), 1u);
    EXPECT_EQ(r.calls[0].name, name);
  }
  EXPECT_EQ(forcedCallPrefix(ToolParser::kHermes, &name),
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": ");
  EXPECT_EQ(forcedCallPrefix(ToolParser::kLlama3Json, nullptr), "{\"name\": \"");
  EXPECT_EQ(forcedCallPrefix(ToolParser::kNone, &name), "");
}

TEST(ToolParsers, IdsAndNames) {
  const std::string a = newToolCallId(ToolParser::kHermes), b = newToolCallId(ToolParser::kHermes);
  EXPECT_TRUE(std::regex_match(a, std::regex("call_[A-Za-z0-9]{24}"))) << a;
  EXPECT_NE(a, b);
  const std::string m = newToolCallId(ToolParser::kMistral);
  EXPECT_TRUE(std::regex_match(m, std::regex("[A-Za-z0-9]{9}"))) << m;
  for (ToolParser p :
       {ToolParser::kNone, ToolParser::kHermes, ToolParser::kLlama3Json, ToolParser::kMistral})
    EXPECT_EQ(toolParserFromName(toolParserName(p)), p);
  EXPECT_FALSE(toolParserFromName("llama3").has_value());
  EXPECT_FALSE(toolParserFromName("auto").has_value());
}

TEST(ToolParsers, DetectsTheFamilyOfTheRealTemplates) {
  const std::pair<const char *, ToolParser> cases[] = {
      {"llama-3.1-8b-instruct", ToolParser::kLlama3Json},
      {"qwen2.5-instruct", ToolParser::kHermes},
      {"qwen3", ToolParser::kHermes},
      {"mistral-7b-instruct-v0.3", ToolParser::kMistral},
      {"gemma-2-it", ToolParser::kNone},
      {"gemma-3-it", ToolParser::kNone},
      {"phi-3-mini-4k-instruct", ToolParser::kNone},
  };
  for (const auto &[name, want] : cases) {
    StatusOr<std::string> source = readRegularFile(
        std::string(ACCEL_TEST_FIXTURES "/chat_templates/") + name + ".jinja", "a fixture");
    ASSERT_TRUE(source.isOk()) << source.status().message();
    EXPECT_EQ(detectToolParser(*source, nullptr), want) << name;
  }
  // A template that does not tell: the tokenizer's tokens do.
  StatusOr<tok::Tokenizer> t = tok::Tokenizer::fromJson(R"({"version":"1.0",
    "added_tokens":[{"id":3,"content":"<tool_call>","single_word":false,"lstrip":false,
                     "rstrip":false,"normalized":false,"special":false}],
    "normalizer":null,"pre_tokenizer":null,"post_processor":null,"decoder":null,
    "model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]}})");
  ASSERT_TRUE(t.isOk()) << t.status().message();
  EXPECT_EQ(detectToolParser("{{ messages }}", &*t), ToolParser::kHermes);
  EXPECT_EQ(detectToolParser("{{ messages }}", nullptr), ToolParser::kNone);
}

} // namespace
