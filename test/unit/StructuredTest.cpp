//===- StructuredTest.cpp - runtime/serving/structured --------------------===//
//
// Regexes, JSON schemas, the byte-level automaton and token masks. The
// expected memberships are worked out by hand from the definitions (the
// regex, the JSON grammar of RFC 8259, the schema's keywords) or by plain
// arithmetic; the end-to-end check against Python's `json` and `jsonschema`
// is test/Serve/structured-output.test.
//
//===----------------------------------------------------------------------===//
#include "ByteLevelChars.h"
#include "runtime/serving/structured/Automaton.h"
#include "runtime/serving/structured/Grammar.h"
#include "runtime/serving/structured/JsonSchema.h"
#include "runtime/serving/structured/Regex.h"
#include "runtime/serving/tokenizer/Tokenizer.h"
#include "runtime/serving/tokenizer/Unicode.h"

#include "core/Json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace accel::rt;
using namespace accel::rt::structured;

namespace {

/// Whether the whole of `text` is in the pattern's language.
bool matches(const PatternPtr &p, const std::string &text) {
  StatusOr<std::unique_ptr<Automaton>> a = Automaton::compile(p);
  EXPECT_TRUE(a.isOk()) << a.status().toString();
  if (!a.isOk())
    return false;
  int s = (*a)->walk((*a)->start(), text);
  return s != Automaton::kDead && (*a)->accepting(s);
}

PatternPtr re(const std::string &pattern) {
  StatusOr<PatternPtr> p = parseRegex(pattern);
  EXPECT_TRUE(p.isOk()) << pattern << ": " << p.status().toString();
  return p.isOk() ? *p : nothing();
}

PatternPtr schema(const std::string &text) {
  StatusOr<json::Value> v = json::parse(text);
  EXPECT_TRUE(v.isOk()) << text;
  StatusOr<PatternPtr> p = jsonSchemaPattern(*v);
  EXPECT_TRUE(p.isOk()) << text << ": " << p.status().toString();
  return p.isOk() ? *p : nothing();
}

std::string schemaError(const std::string &text) {
  StatusOr<json::Value> v = json::parse(text);
  EXPECT_TRUE(v.isOk()) << text;
  StatusOr<PatternPtr> p = jsonSchemaPattern(*v);
  EXPECT_FALSE(p.isOk()) << text;
  return p.isOk() ? "" : p.status().message();
}

//===----------------------------------------------------------------------===//
// Regex
//===----------------------------------------------------------------------===//

TEST(StructuredRegex, LiteralsClassesAndQuantifiers) {
  EXPECT_TRUE(matches(re("abc"), "abc"));
  EXPECT_FALSE(matches(re("abc"), "ab"));
  EXPECT_FALSE(matches(re("abc"), "abcd"));
  EXPECT_TRUE(matches(re("^a(b|cd)*e$"), "acdbbe"));
  EXPECT_FALSE(matches(re("a(b|cd)*e"), "ace"));
  EXPECT_TRUE(matches(re("[a-c]+x?"), "abcabc"));
  EXPECT_TRUE(matches(re("[a-c]+x?"), "ax"));
  EXPECT_FALSE(matches(re("[a-c]+x?"), "x"));
  EXPECT_TRUE(matches(re("[^0-9]{2,3}"), "ab"));
  EXPECT_TRUE(matches(re("[^0-9]{2,3}"), "abc"));
  EXPECT_FALSE(matches(re("[^0-9]{2,3}"), "abcd"));
  EXPECT_FALSE(matches(re("[^0-9]{2,3}"), "a1"));
  EXPECT_TRUE(matches(re("\\d{3}-\\d{4}"), "555-1234"));
  EXPECT_FALSE(matches(re("\\d{3}-\\d{4}"), "555-123"));
  EXPECT_TRUE(matches(re("x{2,}"), "xxxxx"));
  EXPECT_FALSE(matches(re("x{2,}"), "x"));
  EXPECT_TRUE(matches(re("a{,2}"), "a{,2}")); // not a quantifier: literal (Python)
  EXPECT_TRUE(matches(re("(?:ab)+?"), "abab")); // lazy: same language
  EXPECT_TRUE(matches(re("(?P<year>\\d{4})"), "2026"));
  EXPECT_TRUE(matches(re("\\w+\\s\\W"), "a_1 !"));
  EXPECT_TRUE(matches(re("[\\]\\-a]+"), "]-a"));
  EXPECT_TRUE(matches(re("[-a]"), "-"));
  EXPECT_TRUE(matches(re("\\.\\*\\\\"), ".*\\"));
  EXPECT_TRUE(matches(re("a|"), ""));
  EXPECT_TRUE(matches(re("\\x41\\u00e9"), "A\xC3\xA9"));
}

TEST(StructuredRegex, DotAndNegatedClassesMatchWholeUtf8Characters) {
  // é (2 bytes), € (3), 😀 (4): one character each.
  for (const char *s : {"\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"}) {
    EXPECT_TRUE(matches(re("."), s)) << s;
    EXPECT_TRUE(matches(re("[^a]"), s)) << s;
    EXPECT_FALSE(matches(re(".."), s)) << s;
  }
  EXPECT_FALSE(matches(re("."), "\n"));
  EXPECT_FALSE(matches(re("."), "\xC3"));              // a lone lead byte
  EXPECT_FALSE(matches(re("."), "\xED\xA0\x80"));      // a surrogate
  EXPECT_TRUE(matches(re("[é-ë]"), "\xC3\xAA"));       // ê
  EXPECT_FALSE(matches(re("[é-ë]"), "\xC3\xAC"));      // ì
  EXPECT_TRUE(matches(re("[\\u0100-\\uFFFF]"), "\xE2\x82\xAC"));
  EXPECT_FALSE(matches(re("[\\u0100-\\uFFFF]"), "\xC3\xA9"));
}

TEST(StructuredRegex, UnsupportedAndMalformedAreOneSentence) {
  struct Case {
    const char *pattern, *message;
  };
  for (const Case &c : std::vector<Case>{
           {"(a", "regex has an unclosed '(' at offset 0"},
           {"a)", "regex has an unmatched ')' at offset 1"},
           {"[ab", "regex has an unclosed '[' at offset 0"},
           {"*a", "regex has nothing to repeat at offset 0"},
           {"a{3,2}", "regex has a repetition {3,2} whose maximum is below its minimum at offset 1"},
           {"[z-a]", "regex has a range whose end is below its start at offset 1"},
           {"a\\", "regex ends with a lone backslash at offset 1"},
           {"\\q", "regex has an unknown escape \\q at offset 0"},
           {"(a)\\1", "regex back-reference \\1 at offset 3 is not supported"},
           {"(?=a)", "regex look-ahead at offset 0 is not supported"},
           {"(?<!a)b", "regex look-behind at offset 0 is not supported"},
           {"\\bword", "regex word boundary \\b at offset 0 is not supported"},
           {"a++", "regex possessive quantifier at offset 2 is not supported"},
           {"a^b", "regex '^' after the start at offset 1 is not supported"},
           {"x{1001}", "regex repeats more than 1000 times at offset 1"},
       }) {
    StatusOr<PatternPtr> p = parseRegex(c.pattern);
    ASSERT_FALSE(p.isOk()) << c.pattern;
    EXPECT_EQ(p.status().message(), c.message) << c.pattern;
  }
}

TEST(StructuredAutomaton, DistanceIsTheShortestCompletion) {
  StatusOr<std::unique_ptr<Automaton>> a = Automaton::compile(re("abc(de)*|x{5}"));
  ASSERT_TRUE(a.isOk());
  Automaton &m = **a;
  EXPECT_EQ(m.distance(m.start()), 3);
  int s = m.walk(m.start(), "ab");
  EXPECT_EQ(m.distance(s), 1);
  s = m.walk(s, "cd");
  EXPECT_EQ(m.distance(s), 1);
  EXPECT_FALSE(m.accepting(s));
  s = m.walk(s, "e");
  EXPECT_TRUE(m.accepting(s));
  EXPECT_FALSE(m.complete(s)); // "de" may follow
  int x = m.walk(m.start(), "xxxxx");
  EXPECT_TRUE(m.complete(x));
  EXPECT_EQ(m.walk(m.start(), "abd"), Automaton::kDead);
}

TEST(StructuredAutomaton, TooLargeIsRefused) {
  StatusOr<std::unique_ptr<Automaton>> a =
      Automaton::compile(re("((((a{1000}){1000})))"), /*maxNfaStates=*/100000);
  ASSERT_FALSE(a.isOk());
  EXPECT_EQ(a.status().message(),
            "the constraint is too large: its automaton needs more than 100000 states");
}

//===----------------------------------------------------------------------===//
// JSON schema
//===----------------------------------------------------------------------===//

TEST(StructuredJson, ScalarsFollowRfc8259) {
  PatternPtr n = schema(R"({"type":"number"})");
  for (const char *s : {"0", "-0", "12", "-3.25", "1e5", "2.5E-3", "7e+1"})
    EXPECT_TRUE(matches(n, s)) << s;
  for (const char *s : {"01", "+1", "1.", ".5", "1e", "--1", "NaN", "Infinity", ""})
    EXPECT_FALSE(matches(n, s)) << s;
  PatternPtr str = schema(R"({"type":"string"})");
  for (const char *s : {R"("")", R"("a b")", R"("\"\\\/\b\f\n\r\t")", R"("\u00e9\uFFFF")",
                        "\"\xC3\xA9\""})
    EXPECT_TRUE(matches(str, s)) << s;
  for (const char *s : {R"(")", R"("a)", "\"\n\"", R"("\x")", R"("\u12")", R"("\ud800")",
                        R"("a"b")"})
    EXPECT_FALSE(matches(str, s)) << s;
  EXPECT_TRUE(matches(schema(R"({"type":"boolean"})"), "false"));
  EXPECT_FALSE(matches(schema(R"({"type":"boolean"})"), "False"));
  EXPECT_TRUE(matches(schema(R"({"type":["integer","null"]})"), "null"));
  EXPECT_TRUE(matches(schema(R"({"type":["integer","null"]})"), "-7"));
  EXPECT_FALSE(matches(schema(R"({"type":["integer","null"]})"), "1.5"));
}

TEST(StructuredJson, IntegerBoundsAreExact) {
  struct Case {
    const char *schema;
    int64_t lo, hi;
  };
  for (const Case &c : std::vector<Case>{
           {R"({"type":"integer","minimum":-37,"maximum":1234})", -37, 1234},
           {R"({"type":"integer","minimum":0})", 0, INT64_MAX},
           {R"({"type":"integer","exclusiveMinimum":9,"exclusiveMaximum":101})", 10, 100},
           {R"({"type":"integer","maximum":-5})", INT64_MIN, -5},
           {R"({"type":"integer","minimum":-120,"maximum":-99})", -120, -99},
           {R"({"type":"integer","minimum":1.5,"maximum":7})", 2, 7},
       }) {
    PatternPtr p = schema(c.schema);
    StatusOr<std::unique_ptr<Automaton>> a = Automaton::compile(p);
    ASSERT_TRUE(a.isOk());
    for (int64_t x = -3000; x <= 3000; ++x) {
      int s = (*a)->walk(0, std::to_string(x));
      bool in = s != Automaton::kDead && (*a)->accepting(s);
      ASSERT_EQ(in, x >= c.lo && x <= c.hi) << c.schema << " x=" << x;
    }
    int s = (*a)->walk(0, "007");
    EXPECT_FALSE(s != Automaton::kDead && (*a)->accepting(s)) << c.schema; // leading zeros
  }
  EXPECT_EQ(schemaError(R"({"type":"integer","minimum":5,"maximum":4})"),
            "the JSON schema allows no integer (its bounds are empty) at schema");
}

TEST(StructuredJson, ObjectsInPropertyOrderWithRequiredAndOptional) {
  PatternPtr p = schema(R"({"type":"object","properties":{
      "a":{"type":"integer"},"b":{"type":"string"},"c":{"type":"boolean"}},
      "required":["b"],"additionalProperties":false})");
  for (const char *s : {R"({"b":"x"})", R"({"a":1,"b":"x"})", R"({"a": 1, "b": "x", "c": true})",
                        R"({"b":"x","c":false})"})
    EXPECT_TRUE(matches(p, s)) << s;
  for (const char *s : {R"({})", R"({"a":1})", R"({"b":"x","a":1})", R"({"b":"x","d":1})",
                        R"({ "b":"x"})", R"({"b":"x",})", R"({"b":  "x"})"})
    EXPECT_FALSE(matches(p, s)) << s;
  PatternPtr none = schema(R"({"properties":{"a":{"type":"null"},"b":{"const":[1,"x"]}}})");
  for (const char *s : {"{}", R"({"a":null})", R"({"b":[1,"x"]})", R"({"a":null,"b":[1,"x"]})"})
    EXPECT_TRUE(matches(none, s)) << s;
  EXPECT_FALSE(matches(none, R"({"b":[1,"x"],"a":null})"));
}

TEST(StructuredJson, ArraysEnumsRefsAndFormats) {
  PatternPtr arr = schema(R"({"type":"array","items":{"enum":["x",2,null]},"minItems":1,"maxItems":3})");
  for (const char *s : {R"(["x"])", R"([2, null])", R"(["x","x",2])"})
    EXPECT_TRUE(matches(arr, s)) << s;
  for (const char *s : {"[]", R"(["x","x",2,2])", R"(["y"])"})
    EXPECT_FALSE(matches(arr, s)) << s;
  PatternPtr tree = schema(R"({"$defs":{"node":{"type":"object","properties":{
      "v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},
      "required":["v"]}},"$ref":"#/$defs/node"})");
  EXPECT_TRUE(matches(tree, R"({"v":1,"kids":[{"v":2},{"v":3,"kids":[]}]})"));
  EXPECT_FALSE(matches(tree, R"({"kids":[]})"));
  PatternPtr date = schema(R"({"type":"string","format":"date-time"})");
  EXPECT_TRUE(matches(date, R"("2026-12-07T16:05:00Z")"));
  EXPECT_TRUE(matches(date, R"("2026-12-07T16:05:00.25+01:00")"));
  EXPECT_FALSE(matches(date, R"("2026-13-07T16:05:00Z")"));
  PatternPtr pat = schema(R"({"type":"string","pattern":"^[A-Z]{2}\\d{3}$"})");
  EXPECT_TRUE(matches(pat, R"("AB123")"));
  EXPECT_FALSE(matches(pat, R"("AB12")"));
  PatternPtr len = schema(R"({"type":"string","minLength":2,"maxLength":3})");
  EXPECT_TRUE(matches(len, "\"\\n\xC3\xA9\"")); // 2 characters, 3 bytes of text
  EXPECT_FALSE(matches(len, R"("abcd")"));
  PatternPtr any = anyJsonObject();
  EXPECT_TRUE(matches(any, R"({"k": [1, {"x": null}], "s": "t"})"));
  EXPECT_FALSE(matches(any, R"([1])"));
  EXPECT_FALSE(matches(any, R"({"k":1)"));
}

TEST(StructuredJson, UnsupportedKeywordsAreNamedWithTheirPath) {
  EXPECT_EQ(schemaError(R"({"type":"object","properties":{"a":{"type":"string","contentEncoding":"base64"}}})"),
            "the JSON schema keyword 'contentEncoding' at schema.properties.a is not supported");
  EXPECT_EQ(schemaError(R"({"type":"array","uniqueItems":true})"),
            "the JSON schema 'uniqueItems': true at schema is not supported");
  EXPECT_EQ(schemaError(R"({"type":"number","maximum":3})"),
            "the JSON schema bound on a 'number' other than \"minimum\": 0 (use \"integer\", or "
            "drop the bound) at schema is not supported");
  EXPECT_EQ(schemaError(R"({"type":"string","pattern":"[^x]+"})"),
            "the JSON schema 'pattern' that can match '\"', '\\' or a control character (which "
            "a JSON string must escape) at schema is not supported");
  EXPECT_EQ(schemaError(R"({"type":"strin"})"), "the JSON schema has an unknown type 'strin' at schema");
  EXPECT_EQ(schemaError(R"({"$ref":"#/$defs/x"})"),
            "the JSON schema has a '$ref' to \"#/$defs/x\", which does not exist at schema");
  EXPECT_EQ(schemaError(R"({"$defs":{"x":{"$ref":"#/$defs/x"}},"$ref":"#/$defs/x"})"),
            "the JSON schema allows no value at all (a '$ref' that only recurses, or empty "
            "bounds)");
  EXPECT_EQ(schemaError(R"({"type":"string","pattern":"(a"})"),
            "the JSON schema 'pattern' at schema: regex has an unclosed '(' at offset 0");
}

//===----------------------------------------------------------------------===//
// Token masks
//===----------------------------------------------------------------------===//

using accel::test::byteChars;

/// A byte-level vocabulary: the 256 bytes (ids 0..255), `extra` (ids from
/// 256, written as byte characters) and "</s>" (special) last.
tok::Tokenizer byteLevel(const std::vector<std::string> &extra) {
  std::vector<std::string> chars = byteChars();
  json::Value vocab = json::Value::object();
  for (int b = 0; b < 256; ++b)
    vocab.set(chars[b], json::Value(b));
  for (size_t i = 0; i < extra.size(); ++i) {
    std::string t;
    for (unsigned char c : extra[i])
      t += chars[c];
    vocab.set(t, json::Value(int(256 + i)));
  }
  const int eos = 256 + int(extra.size());
  std::string text =
      "{\"version\":\"1.0\",\"decoder\":{\"type\":\"ByteLevel\"},\"model\":{\"type\":\"BPE\","
      "\"vocab\":" + json::write(vocab) + ",\"merges\":[]},\"added_tokens\":[{\"id\":" +
      std::to_string(eos) +
      ",\"content\":\"</s>\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,"
      "\"normalized\":false,\"special\":true}]}";
  StatusOr<tok::Tokenizer> t = tok::Tokenizer::fromJson(text);
  EXPECT_TRUE(t.isOk()) << t.status().toString();
  return t.isOk() ? *t : tok::Tokenizer();
}

TEST(StructuredMask, TokenBytesAreRawBytes) {
  tok::Tokenizer t = byteLevel({"\xE2\x82", " x", "\xC3\xA9"});
  EXPECT_EQ(*t.tokenBytes(256), "\xE2\x82"); // part of a character: no U+FFFD
  EXPECT_EQ(*t.tokenBytes(257), " x");
  EXPECT_EQ(*t.tokenBytes(258), "\xC3\xA9");
  EXPECT_EQ(*t.tokenBytes('a'), "a");
  EXPECT_FALSE(t.tokenBytes(259).has_value()); // </s>: special
  EXPECT_FALSE(t.tokenBytes(100000).has_value());
}

struct Masked {
  std::vector<int64_t> allowed;
};

std::vector<int64_t> allowedIds(Grammar &g, int state, int64_t remaining, int64_t rows,
                                const std::vector<int32_t> &stops) {
  std::vector<float> row(size_t(rows), 0.5f), out(size_t(rows), 0.0f);
  Status s = g.maskRow(state, remaining, stops, row.data(), out.data());
  EXPECT_TRUE(s.isOk()) << s.toString();
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < rows; ++i)
    if (out[size_t(i)] == 0.5f)
      ids.push_back(i);
    else
      EXPECT_EQ(out[size_t(i)], -std::numeric_limits<float>::infinity());
  return ids;
}

TEST(StructuredMask, AllowsTokensThatStayInTheLanguage) {
  // 256 "yes", 257 "no", 258 "ye", 259 "yesno", 260 "\xC3\xA9" (é), 261 </s>
  tok::Tokenizer t = byteLevel({"yes", "no", "ye", "yesno", "\xC3\xA9"});
  const int64_t rows = 270; // more rows than ids: padding is never allowed
  GrammarCache cache(Vocabulary::build(t, rows));
  StatusOr<std::shared_ptr<Grammar>> g = cache.get("choice", R"(["yes","no","\u00e9!"])");
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  Grammar &gr = **g;
  const std::vector<int32_t> stops = {261};
  EXPECT_EQ(allowedIds(gr, gr.start(), 100, rows, stops),
            (std::vector<int64_t>{'n', 'y', 0xC3, 256, 257, 258, 260}));
  int s = gr.advance(gr.start(), 258); // "ye"
  EXPECT_FALSE(gr.accepting(s));
  EXPECT_EQ(allowedIds(gr, s, 100, rows, stops), (std::vector<int64_t>{'s'}));
  s = gr.advance(s, 's');
  EXPECT_TRUE(gr.accepting(s));
  EXPECT_TRUE(gr.complete(s));
  EXPECT_EQ(allowedIds(gr, s, 100, rows, stops), (std::vector<int64_t>{261})); // only </s>
  int e = gr.advance(gr.start(), 0xC3); // half of é
  EXPECT_EQ(allowedIds(gr, e, 100, rows, stops), (std::vector<int64_t>{0xA9}));
  EXPECT_EQ(allowedIds(gr, gr.advance(gr.start(), 260), 100, rows, stops),
            (std::vector<int64_t>{'!'}));
  EXPECT_EQ(gr.advance(gr.start(), 259), Grammar::kDead); // "yesno"
  EXPECT_EQ(gr.advance(gr.start(), 261), Grammar::kDead); // </s> has no bytes
  // The same constraint again is the same compiled grammar.
  StatusOr<std::shared_ptr<Grammar>> again = cache.get("choice", R"(["yes","no","\u00e9!"])");
  ASSERT_TRUE(again.isOk());
  EXPECT_EQ(again->get(), g->get());
}

TEST(StructuredMask, TheBudgetSteersToAMatch) {
  // Digits then "!" (1 byte) ends it: with 2 tokens left (this one and the
  // stop token) only "!" may come; with 3, a digit too but not "12".
  tok::Tokenizer t = byteLevel({"12", "1!"});
  const int64_t rows = 259;
  GrammarCache cache(Vocabulary::build(t, rows));
  StatusOr<std::shared_ptr<Grammar>> g = cache.get("regex", "a[0-9]*!?");
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  Grammar &gr = **g;
  int s = gr.advance(gr.start(), 'a');
  const std::vector<int32_t> stops = {258};
  std::vector<int64_t> all = allowedIds(gr, s, 100, rows, stops);
  EXPECT_EQ(all, (std::vector<int64_t>{'!', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9',
                                       256, 257, 258}));
  // One token left: it must end the output (stop, or "!"/"1!" that complete it).
  EXPECT_EQ(allowedIds(gr, s, 1, rows, stops), (std::vector<int64_t>{'!', 257, 258}));
  // Regex a(b{3})+c: after "a", 5 tokens are needed at least ("bbb", "c", stop).
  StatusOr<std::shared_ptr<Grammar>> h = cache.get("regex", "a(bbb)+c");
  ASSERT_TRUE(h.isOk());
  int q = (*h)->advance((*h)->start(), 'a');
  EXPECT_EQ(allowedIds(**h, q, 100, rows, stops), (std::vector<int64_t>{'b'}));
  // Too few tokens left to finish: still stay in the language.
  EXPECT_EQ(allowedIds(**h, q, 2, rows, stops), (std::vector<int64_t>{'b'}));
}

TEST(StructuredMask, WhenTheBudgetCannotBeMetTheClosestTokensWin) {
  // "a" then five '!' end it; 256 "!!", 257 "!!!!", 258 </s>. With 2 tokens
  // left no token brings a match within 0 bytes: the ones that come
  // closest do ("!!!!": 1 byte left), not every token of the language.
  tok::Tokenizer t = byteLevel({"!!", "!!!!"});
  const int64_t rows = 259;
  GrammarCache cache(Vocabulary::build(t, rows));
  StatusOr<std::shared_ptr<Grammar>> g = cache.get("regex", "a[a-z]*!!!!!");
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  Grammar &gr = **g;
  const int s = gr.advance(gr.start(), 'a');
  const std::vector<int32_t> stops = {258};
  std::vector<int64_t> all = allowedIds(gr, s, 100, rows, stops);
  EXPECT_EQ(all.size(), size_t(26 + 3)); // a-z, "!", "!!", "!!!!"
  EXPECT_EQ(allowedIds(gr, s, 2, rows, stops), (std::vector<int64_t>{257}));
  // After "!!!!" one '!' completes it: with 1 token left, exactly that.
  EXPECT_EQ(allowedIds(gr, gr.advance(s, 257), 1, rows, stops), (std::vector<int64_t>{'!'}));
}

TEST(StructuredMask, BadConstraintsAreOneSentence) {
  tok::Tokenizer t = byteLevel({});
  GrammarCache cache(Vocabulary::build(t, 257));
  EXPECT_EQ(cache.get("choice", "[]").status().message(),
            "the choices must be a non-empty array of strings");
  EXPECT_EQ(cache.get("json_schema", "{").status().message().rfind("the JSON schema is not JSON", 0),
            0u);
  EXPECT_EQ(cache.get("regex", "(").status().message(), "regex has an unclosed '(' at offset 0");
  EXPECT_EQ(cache.get("regex", "a", "(").status().message(),
            "the whitespace pattern: regex has an unclosed '(' at offset 0");
}

} // namespace
