//===- TokenizerTest.cpp - runtime/serving/tokenizer ----------------------===//
//
// Unit tests with expectations worked out by hand from the definitions (the
// Unicode standard, the regexes, the BPE merge rule). The comparison with
// the `tokenizers` package itself is test/tokenizer/check_tokenizer.py.
//
//===----------------------------------------------------------------------===//
#include "ByteLevelChars.h"
#include "runtime/serving/tokenizer/Regex.h"
#include "runtime/serving/tokenizer/Split.h"
#include "runtime/serving/tokenizer/Tokenizer.h"
#include "runtime/serving/tokenizer/Unicode.h"

#include "core/Json.h"

#include <gtest/gtest.h>

#include <fstream>

#include <string>
#include <tuple>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

using namespace accel::rt;
using namespace accel::rt::tok;

namespace {

const std::string kFFFD = "\xEF\xBF\xBD";

//===----------------------------------------------------------------------===//
// UTF-8 and Unicode
//===----------------------------------------------------------------------===//

TEST(TokenizerUnicode, LossyReplacesMaximalSubparts) {
  // Unicode 15, section 3.9 ("U+FFFD Substitution of Maximal Subparts").
  EXPECT_EQ(unicode::utf8Lossy("abc"), "abc");
  EXPECT_EQ(unicode::utf8Lossy("\xE2\x82"), kFFFD);              // truncated 3-byte
  EXPECT_EQ(unicode::utf8Lossy("\xF0\x9F\x98" "A"), kFFFD + "A"); // truncated 4-byte
  EXPECT_EQ(unicode::utf8Lossy("\xC0\xAF"), kFFFD + kFFFD);       // C0 is never a lead
  EXPECT_EQ(unicode::utf8Lossy("\xED\xA0\x80"), kFFFD + kFFFD + kFFFD); // surrogate
  EXPECT_EQ(unicode::utf8Lossy("\xF4\x90\x80\x80"), kFFFD + kFFFD + kFFFD + kFFFD);
  EXPECT_EQ(unicode::utf8Lossy("\x80\x80"), kFFFD + kFFFD);
  EXPECT_EQ(unicode::utf8Lossy("\xE1\x80\xE2\xF0\x91\x92\xF1\xBF\x41"),
            kFFFD + kFFFD + kFFFD + kFFFD + "A"); // Table 3-11
  EXPECT_EQ(unicode::utf8Lossy("\xC3\xA9\xC3"), "\xC3\xA9" + kFFFD);
}

TEST(TokenizerUnicode, FindInvalidUtf8) {
  EXPECT_EQ(unicode::findInvalidUtf8("h\xC3\xA9llo \xF0\x9F\x98\x80"), std::string_view::npos);
  EXPECT_EQ(unicode::findInvalidUtf8("ab\xFF"), 2u);
  EXPECT_EQ(unicode::findInvalidUtf8("\xE0\x80\x80"), 0u); // overlong
  EXPECT_EQ(unicode::findInvalidUtf8("x\xF0\x9F\x98"), 1u);
}

TEST(TokenizerUnicode, Classes) {
  EXPECT_TRUE(unicode::isLetter('a'));
  EXPECT_TRUE(unicode::isLetter(0xE9));    // é
  EXPECT_TRUE(unicode::isLetter(0x4E2D));  // 中
  EXPECT_TRUE(unicode::isLetter(0x05D0));  // א
  EXPECT_TRUE(unicode::isLetter(0x02B0));  // modifier letter (Lm)
  EXPECT_FALSE(unicode::isLetter(0x0301)); // combining mark
  EXPECT_FALSE(unicode::isLetter('1'));
  EXPECT_FALSE(unicode::isLetter(0x1F600));
  EXPECT_TRUE(unicode::isNumber('7'));
  EXPECT_TRUE(unicode::isNumber(0x0663)); // Arabic-Indic 3 (Nd)
  EXPECT_TRUE(unicode::isNumber(0x2163)); // Ⅳ (Nl)
  EXPECT_TRUE(unicode::isNumber(0x00BD)); // ½ (No)
  EXPECT_FALSE(unicode::isNumber('x'));
  for (char32_t c : {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000, 0x200A,
                     0x2028, 0x2029, 0x202F, 0x205F, 0x3000})
    EXPECT_TRUE(unicode::isWhitespace(c)) << std::hex << c;
  for (char32_t c : {0x1C, 0x1F, 0x200B, 0x180E, 0xFEFF, 0x41})
    EXPECT_FALSE(unicode::isWhitespace(c)) << std::hex << c;
  EXPECT_TRUE(unicode::isWordChar('_'));
  EXPECT_TRUE(unicode::isWordChar(0x0301));
  EXPECT_FALSE(unicode::isWordChar('-'));
  EXPECT_EQ(unicode::combiningClass(0x0301), 230);
  EXPECT_EQ(unicode::combiningClass(0x0323), 220);
  EXPECT_EQ(unicode::combiningClass('a'), 0);
}

TEST(TokenizerUnicode, NormalizationForms) {
  EXPECT_EQ(unicode::nfc("e\xCC\x81"), "\xC3\xA9");          // e + U+0301 -> é
  EXPECT_EQ(unicode::nfd("\xC3\xA9"), "e\xCC\x81");
  EXPECT_EQ(unicode::nfc("\xE2\x84\xAB"), "\xC3\x85");       // Å sign -> Å (singleton)
  EXPECT_EQ(unicode::nfc("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8"), "\xEA\xB0\x81"); // 각
  EXPECT_EQ(unicode::nfd("\xEA\xB0\x81"), "\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8");
  // Canonical order: U+0323 (220) before U+0301 (230); then a+0323 composes.
  EXPECT_EQ(unicode::nfd("a\xCC\x81\xCC\xA3"), "a\xCC\xA3\xCC\x81");
  EXPECT_EQ(unicode::nfc("a\xCC\x81\xCC\xA3"), "\xE1\xBA\xA1\xCC\x81");
  // U+0958 is a composition exclusion: NFC keeps it decomposed.
  EXPECT_EQ(unicode::nfc("\xE0\xA5\x98"), "\xE0\xA4\x95\xE0\xA4\xBC");
  // U+0305 (class 230, composes with nothing) blocks U+0301 from the a;
  // U+0316 (class 220) does not.
  EXPECT_EQ(unicode::nfc("a\xCC\x85\xCC\x81"), "a\xCC\x85\xCC\x81");
  EXPECT_EQ(unicode::nfc("a\xCC\x96\xCC\x81"), "\xC3\xA1\xCC\x96");
  EXPECT_EQ(unicode::nfc("Hello"), "Hello");
}

TEST(TokenizerUnicode, CompatibilityFormsAndLowercase) {
  EXPECT_EQ(unicode::nfkd("\xEF\xAC\x81"), "fi");                   // U+FB01 ligature
  EXPECT_EQ(unicode::nfkc("\xE2\x91\xA0\xEF\xBC\xA1"), "1A");    // circled 1, fullwidth A
  EXPECT_EQ(unicode::nfkc("\xC2\xBD"), "1\xE2\x81\x84" "2");       // ½ -> 1 U+2044 2
  EXPECT_EQ(unicode::nfkd("\xE1\xBA\x9B\xCC\xA3"), "s\xCC\xA3\xCC\x87"); // UAX #15 ẛ̣
  EXPECT_EQ(unicode::nfkc("\xE1\xBA\x9B\xCC\xA3"), "\xE1\xB9\xA9");       // -> ṩ
  EXPECT_EQ(unicode::lowercase("HeLLo \xC3\x89T\xC3\x89"), "hello \xC3\xA9t\xC3\xA9");
  // U+0130 (İ) lowercases to i + U+0307; Σ is σ without context.
  EXPECT_EQ(unicode::lowercase("\xC4\xB0"), "i\xCC\x87");
  EXPECT_EQ(unicode::lowercase("\xCE\xA3\xCE\xA3"), "\xCF\x83\xCF\x83");
  EXPECT_TRUE(unicode::isMark(0x301));
  EXPECT_TRUE(unicode::isMark(0x903)); // Mc: StripAccents removes it, BERT's Mn filter does not
  EXPECT_FALSE(unicode::isNonspacingMark(0x903));
  EXPECT_TRUE(unicode::isPunctuation('!'));
  EXPECT_TRUE(unicode::isPunctuation(0x3002)); // 。
  EXPECT_FALSE(unicode::isPunctuation('a'));
}

//===----------------------------------------------------------------------===//
// The pre-tokenizer regexes
//===----------------------------------------------------------------------===//

std::vector<std::string> split(detail::KnownRegex r, const std::string &text) {
  std::vector<std::string> out;
  for (auto [s, e] : detail::applyBehavior(detail::findRegexSegments(r, text),
                                           detail::SplitBehavior::kIsolated, false))
    if (e > s)
      out.push_back(text.substr(s, e - s));
  return out;
}

using Pieces = std::vector<std::string>;
using Ids = std::vector<int32_t>;

TEST(TokenizerSplit, RecognizesTheKnownPatterns) {
  using detail::KnownRegex;
  for (KnownRegex r : {KnownRegex::kGpt2, KnownRegex::kLlama3, KnownRegex::kQwen2})
    EXPECT_EQ(detail::recognizeRegex(detail::knownRegexPattern(r)), r);
  EXPECT_FALSE(detail::recognizeRegex("\\p{L}+"));
}

TEST(TokenizerSplit, Gpt2) {
  using detail::KnownRegex;
  EXPECT_EQ(split(KnownRegex::kGpt2, "I'm  fine\n"), (Pieces{"I", "'m", " ", " fine", "\n"}));
  EXPECT_EQ(split(KnownRegex::kGpt2, "Hello world's  test 123\t\tx  "),
            (Pieces{"Hello", " world", "'s", " ", " test", " 123", "\t", "\t", "x", "  "}));
  // Case-sensitive contractions: 'S is punctuation then a letter.
  EXPECT_EQ(split(KnownRegex::kGpt2, "IT'S ok!?"), (Pieces{"IT", "'", "S", " ok", "!?"}));
  EXPECT_EQ(split(KnownRegex::kGpt2, "caf\xC3\xA9 \xE4\xBD\xA0\xE5\xA5\xBD"),
            (Pieces{"caf\xC3\xA9", " \xE4\xBD\xA0\xE5\xA5\xBD"}));
  EXPECT_EQ(split(KnownRegex::kGpt2, ""), Pieces{});
}

TEST(TokenizerSplit, Llama3) {
  using detail::KnownRegex;
  EXPECT_EQ(split(KnownRegex::kLlama3, "Hello 12345 world!!\n\n  x"),
            (Pieces{"Hello", " ", "123", "45", " world", "!!\n\n", " ", " x"}));
  EXPECT_EQ(split(KnownRegex::kLlama3, "I'M (ok) \r\n \tx'LL"),
            (Pieces{"I", "'M", " (", "ok", ")", " \r\n", " ", "\tx", "'LL"}));
  // U+017F (long s) folds to 's' under (?i).
  EXPECT_EQ(split(KnownRegex::kLlama3, "x'\xC5\xBFt"), (Pieces{"x", "'\xC5\xBF", "t"}));
}

TEST(TokenizerSplit, Qwen2DigitsOneByOne) {
  using detail::KnownRegex;
  EXPECT_EQ(split(KnownRegex::kQwen2, "ab 123"), (Pieces{"ab", " ", "1", "2", "3"}));
}

TEST(TokenizerSplit, Behaviors) {
  using detail::SplitBehavior;
  std::string t = "a--b-c";
  auto pieces = [&](SplitBehavior b, bool invert) {
    Pieces out;
    for (auto [s, e] : detail::applyBehavior(detail::findLiteralSegments("-", t), b, invert))
      out.push_back(t.substr(s, e - s));
    return out;
  };
  EXPECT_EQ(pieces(SplitBehavior::kRemoved, false), (Pieces{"a", "b", "c"}));
  EXPECT_EQ(pieces(SplitBehavior::kIsolated, false), (Pieces{"a", "-", "-", "b", "-", "c"}));
  EXPECT_EQ(pieces(SplitBehavior::kMergedWithPrevious, false), (Pieces{"a-", "-", "b-", "c"}));
  EXPECT_EQ(pieces(SplitBehavior::kMergedWithNext, false), (Pieces{"a", "-", "-b", "-c"}));
  EXPECT_EQ(pieces(SplitBehavior::kContiguous, false), (Pieces{"a", "--", "b", "-", "c"}));
  EXPECT_EQ(pieces(SplitBehavior::kRemoved, true), (Pieces{"-", "-", "-"}));
}

//===----------------------------------------------------------------------===//
// Tokenizers built from hand-written tokenizer.json
//===----------------------------------------------------------------------===//

using accel::test::byteChars;

/// A byte-level BPE: the 256 byte characters (ids 0..255), extra tokens
/// (ids from 256) and merges, plus the given extra top-level members.
std::string byteLevelJson(const std::vector<std::string> &extra,
                          const std::vector<std::string> &merges,
                          const std::string &preTokenizer, const std::string &rest) {
  std::vector<std::string> chars = byteChars();
  json::Value vocab = json::Value::object();
  for (int b = 0; b < 256; ++b)
    vocab.set(chars[b], json::Value(b));
  for (size_t i = 0; i < extra.size(); ++i)
    vocab.set(extra[i], json::Value(int(256 + i)));
  json::Value m = json::Value::array();
  for (const std::string &s : merges)
    m.push(json::Value(s));
  return "{\"version\":\"1.0\",\"pre_tokenizer\":" + preTokenizer +
         ",\"decoder\":{\"type\":\"ByteLevel\"},\"model\":{\"type\":\"BPE\",\"vocab\":" +
         json::write(vocab) + ",\"merges\":" + json::write(m) + "}" + rest + "}";
}

const char *kByteLevelPre = R"({"type":"ByteLevel","add_prefix_space":false,"use_regex":true})";

Tokenizer load(const std::string &text) {
  StatusOr<Tokenizer> t = Tokenizer::fromJson(text);
  EXPECT_TRUE(t.isOk()) << t.status().toString();
  return t.isOk() ? *t : Tokenizer();
}

std::vector<int32_t> encode(const Tokenizer &t, const std::string &s, bool special = true) {
  StatusOr<std::vector<int32_t>> ids = t.encode(s, special);
  EXPECT_TRUE(ids.isOk()) << ids.status().toString();
  return ids.isOk() ? *ids : std::vector<int32_t>{};
}

TEST(Tokenizer, ByteLevelBpeMergesByRank) {
  // "h e" (rank 0) then "he l"... : "hello" -> he + l + l + o -> "hell" + "o"
  // with merges he, ll, hell; the space maps to U+0120 (Ġ).
  Tokenizer t = load(byteLevelJson({"he", "ll", "hell", "\xC4\xA0w"},
                                   {"h e", "l l", "he ll", "\xC4\xA0 w"}, kByteLevelPre, ""));
  EXPECT_EQ(encode(t, "hello"), (Ids{258, 'o'}));
  EXPECT_EQ(encode(t, "hello w"), (Ids{258, 'o', 259}));
  EXPECT_EQ(t.decode({258, 'o', 259}), "hello w");
  EXPECT_EQ(t.vocabSize(), 260);
  EXPECT_EQ(t.tokenToId("hell"), 258);
  EXPECT_EQ(t.idToToken(256), "he");
  EXPECT_FALSE(t.tokenToId("nope"));
}

TEST(Tokenizer, EqualRanksGoLeftmostFirst) {
  // "aaa" with the one merge "a a": the leftmost pair merges -> "aa" + "a".
  Tokenizer t = load(byteLevelJson({"aa"}, {"a a"}, kByteLevelPre, ""));
  EXPECT_EQ(encode(t, "aaa"), (Ids{256, 'a'}));
  EXPECT_EQ(encode(t, "aaaa"), (Ids{256, 256}));
  // "aba": merge a b (rank 0) beats b a (rank 1), and vice versa.
  Tokenizer ab = load(byteLevelJson({"ab", "ba"}, {"a b", "b a"}, kByteLevelPre, ""));
  EXPECT_EQ(encode(ab, "aba"), (Ids{256, 'a'}));
  Tokenizer ba = load(byteLevelJson({"ab", "ba"}, {"b a", "a b"}, kByteLevelPre, ""));
  EXPECT_EQ(encode(ba, "aba"), (Ids{'a', 257}));
}

TEST(Tokenizer, MergesAsPairs) {
  std::string s = byteLevelJson({"he"}, {"h e"}, kByteLevelPre, "");
  std::string p = s;
  p.replace(p.find("\"h e\""), 5, "[\"h\",\"e\"]");
  EXPECT_EQ(encode(load(s), "hehe"), (Ids{256, 256}));
  EXPECT_EQ(encode(load(p), "hehe"), (Ids{256, 256}));
}

TEST(Tokenizer, MultiByteCharactersAndLossyDecode) {
  Tokenizer t = load(byteLevelJson({}, {}, kByteLevelPre, ""));
  // é is C3 A9: two byte tokens.
  EXPECT_EQ(encode(t, "\xC3\xA9"), (Ids{0xC3, 0xA9}));
  EXPECT_EQ(t.decode({0xC3, 0xA9}), "\xC3\xA9");
  EXPECT_EQ(t.decode({0xC3}), kFFFD);
  EXPECT_EQ(t.decode({0xC3, 'a'}), kFFFD + "a");
  // Unknown ids are skipped.
  EXPECT_EQ(t.decode({'a', 9999, -1, 'b'}), "ab");
  StatusOr<std::vector<int32_t>> bad = t.encode("a\xFF");
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("not valid UTF-8 (at byte 1)"), std::string::npos);
}

TEST(Tokenizer, DecodeStreamHoldsBackIncompleteCharacters) {
  Tokenizer t = load(byteLevelJson({}, {}, kByteLevelPre, ""));
  DecodeStream s(t);
  // "a", then 😀 (F0 9F 98 80) one byte at a time, then "b".
  std::vector<std::string> got;
  for (int32_t id : Ids{'a', 0xF0, 0x9F, 0x98, 0x80, 'b'}) {
    StatusOr<std::string> piece = s.step(id);
    ASSERT_TRUE(piece.isOk());
    got.push_back(*piece);
  }
  EXPECT_EQ(got, (std::vector<std::string>{"a", "", "", "", "\xF0\x9F\x98\x80", "b"}));
}

const char *kSpecials = R"(,"added_tokens":[
  {"id":300,"content":"<|begin_of_text|>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},
  {"id":301,"content":"<|end_of_text|>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}],
 "post_processor":{"type":"TemplateProcessing",
   "single":[{"SpecialToken":{"id":"<|begin_of_text|>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],
   "pair":[],
   "special_tokens":{"<|begin_of_text|>":{"id":"<|begin_of_text|>","ids":[256],"tokens":["<|begin_of_text|>"]}}})";

TEST(Tokenizer, SpecialTokensAndTemplate) {
  Tokenizer t = load(byteLevelJson({}, {}, kByteLevelPre, kSpecials));
  // The added tokens are numbered from the vocabulary size (256), in order,
  // whatever ids the file gives them (as tokenizers does).
  EXPECT_EQ(t.tokenToId("<|begin_of_text|>"), 256);
  EXPECT_EQ(t.tokenToId("<|end_of_text|>"), 257);
  EXPECT_EQ(t.vocabSize(), 258);
  EXPECT_EQ(t.idLimit(), 258);
  EXPECT_EQ(t.bosId(), 256);
  EXPECT_EQ(t.eosId(), 257);
  EXPECT_TRUE(t.isSpecial(257));
  EXPECT_FALSE(t.isSpecial('a'));
  EXPECT_EQ(encode(t, "ab"), (Ids{256, 'a', 'b'}));
  EXPECT_EQ(encode(t, "ab", false), (Ids{'a', 'b'}));
  EXPECT_EQ(encode(t, "", true), (Ids{256}));
  // Special tokens in the text are matched before pre-tokenization.
  EXPECT_EQ(encode(t, "a<|end_of_text|>b", false), (Ids{'a', 257, 'b'}));
  EXPECT_EQ(encode(t, "<|end_of_text|", false).size(), 14u);
  EXPECT_EQ(t.decode({256, 'a', 257}), "a");
  EXPECT_EQ(t.decode({256, 'a', 257}, false), "<|begin_of_text|>a<|end_of_text|>");
}

TEST(Tokenizer, AddedTokenStripAndSingleWord) {
  const char *added = R"(,"added_tokens":[
    {"id":256,"content":"<mask>","single_word":false,"lstrip":true,"rstrip":true,"normalized":false,"special":true},
    {"id":257,"content":"cat","single_word":true,"lstrip":false,"rstrip":false,"normalized":true,"special":false}])";
  Tokenizer t = load(byteLevelJson({}, {}, kByteLevelPre, added));
  // lstrip/rstrip swallow the spaces around <mask>.
  EXPECT_EQ(encode(t, "a  <mask>  b"), (Ids{'a', 256, 'b'}));
  // single_word: "cat" only as a whole word.
  EXPECT_EQ(encode(t, "cat"), (Ids{257}));
  EXPECT_EQ(encode(t, "a cat."), (Ids{'a', ' ', 257, '.'}));
  EXPECT_EQ(encode(t, "cats"), (Ids{'c', 'a', 't', 's'}));
  EXPECT_EQ(t.decode({257}), "cat"); // not special: kept
}

TEST(Tokenizer, SentencePieceStyle) {
  // Llama-2 style: Prepend + Replace normalizer, byte fallback, decoder chain.
  const char *text = R"({"version":"1.0",
    "added_tokens":[
      {"id":0,"content":"<unk>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},
      {"id":1,"content":"<s>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}],
    "normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},
                  {"type":"Replace","pattern":{"String":" "},"content":"▁"}]},
    "pre_tokenizer":null,
    "post_processor":{"type":"TemplateProcessing",
       "single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],
       "pair":[],"special_tokens":{"<s>":{"id":"<s>","ids":[1],"tokens":["<s>"]}}},
    "decoder":{"type":"Sequence","decoders":[
       {"type":"Replace","pattern":{"String":"▁"},"content":" "},{"type":"ByteFallback"},
       {"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]},
    "model":{"type":"BPE","unk_token":"<unk>","fuse_unk":true,"byte_fallback":true,
      "vocab":{"<unk>":0,"<s>":1,"<0xC3>":2,"<0xA9>":3,"▁":4,"h":5,"i":6,"▁h":7,"▁hi":8},
      "merges":["▁ h","▁h i"]}})";
  Tokenizer t = load(text);
  EXPECT_EQ(encode(t, "hi hi"), (Ids{1, 8, 8}));
  // é is not in the vocabulary: its two bytes.
  EXPECT_EQ(encode(t, "hi \xC3\xA9", false), (Ids{8, 4, 2, 3}));
  EXPECT_EQ(t.decode({1, 8, 4, 2, 3}), "hi \xC3\xA9");
  EXPECT_EQ(t.decode({8, 2}), "hi" + kFFFD); // a lone byte token
  EXPECT_EQ(t.bosId(), 1);
}

TEST(Tokenizer, UnknownCharactersFuseIntoOneUnk) {
  const char *text = R"({"version":"1.0","added_tokens":[],
    "model":{"type":"BPE","unk_token":"<unk>","fuse_unk":true,
      "vocab":{"<unk>":0,"a":1},"merges":[]}})";
  Tokenizer t = load(text);
  EXPECT_EQ(encode(t, "axyza"), (Ids{1, 0, 1}));
  // No decoder: tokens joined with spaces.
  EXPECT_EQ(t.decode({1, 0, 1}), "a <unk> a");
}

// Oniguruma's find_iter: an empty match right after the previous match is
// skipped; elsewhere it is a (zero-width) match.
TEST(TokenizerRegex, EmptyMatchesFollowOnig) {
  StatusOr<detail::Regex> r = detail::Regex::compile("a*");
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  std::vector<std::tuple<size_t, size_t, bool>> segs;
  for (const detail::Segment &s : r->findSegments("baab"))
    segs.emplace_back(s.start, s.end, s.isMatch);
  EXPECT_EQ(segs, (std::vector<std::tuple<size_t, size_t, bool>>{
                      {0, 0, true}, {0, 1, false}, {1, 3, true}, {3, 4, false}, {4, 4, true}}));
  StatusOr<detail::Regex> p = detail::Regex::compile("\\p{Lu}+");
  ASSERT_TRUE(p.isOk());
  EXPECT_EQ(p->replaceAll("aBC d\xC3\x89", "_"), "a_ d_");
}

TEST(Tokenizer, UnigramViterbi) {
  // "ab" (-1) beats "a" + "b" (-4); on "aba", "ab" + "a" (-3) beats
  // "a" + "ba" (-5.5); "c" is unknown: unk, scored min_score - 10, and two
  // unknowns in a row fuse into one <unk>.
  const char *text = R"({"version":"1.0","model":{"type":"Unigram","unk_id":0,
    "vocab":[["<unk>",0],["a",-2],["b",-2],["ab",-1],["ba",-3.5]]}})";
  Tokenizer t = load(text);
  EXPECT_EQ(encode(t, "ab"), (Ids{3}));
  EXPECT_EQ(encode(t, "aba"), (Ids{3, 1}));
  EXPECT_EQ(encode(t, "abccb"), (Ids{3, 0, 2}));
  EXPECT_EQ(t.vocabSize(), 5);
  EXPECT_EQ(t.idToToken(3), "ab");
}

TEST(Tokenizer, WordPieceGreedyLongestMatch) {
  const char *text = R"({"version":"1.0","pre_tokenizer":{"type":"Whitespace"},
    "decoder":{"type":"WordPiece","prefix":"##","cleanup":true},
    "model":{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##",
      "max_input_chars_per_word":8,
      "vocab":{"[UNK]":0,"un":1,"##aff":2,"##able":3,"unaff":4,"a":5,"##ff":6,"!":7}}})";
  Tokenizer t = load(text);
  EXPECT_EQ(encode(t, "unaffable"), (Ids{0}));          // 9 characters > 8
  EXPECT_EQ(encode(t, "unaffab"), (Ids{0}));            // "##ab" is not a piece
  EXPECT_EQ(encode(t, "unaff aff!"), (Ids{4, 5, 6, 7})); // longest first: unaff; a ##ff
  EXPECT_EQ(t.decode({4, 5, 6, 7}), "unaff aff!");
}

TEST(Tokenizer, PairTemplates) {
  const char *text = R"({"version":"1.0","model":{"type":"WordLevel","unk_token":"?",
      "vocab":{"?":0,"a":1,"b":2,"[CLS]":3,"[SEP]":4}},
    "pre_tokenizer":{"type":"WhitespaceSplit"},
    "post_processor":{"type":"BertProcessing","sep":["[SEP]",4],"cls":["[CLS]",3]}})";
  Tokenizer t = load(text);
  StatusOr<std::vector<int32_t>> ids = t.encodePair("a b", "b");
  ASSERT_TRUE(ids.isOk());
  EXPECT_EQ(*ids, (Ids{3, 1, 2, 4, 2, 4}));
  ids = t.encodePair("a", "b", /*addSpecialTokens=*/false);
  ASSERT_TRUE(ids.isOk());
  EXPECT_EQ(*ids, (Ids{1, 2}));
}

TEST(Tokenizer, EmptyTokenizer) {
  Tokenizer t;
  EXPECT_FALSE(t.isLoaded());
  EXPECT_FALSE(t.encode("x").isOk());
  EXPECT_EQ(t.decode({1, 2}), "");
  EXPECT_EQ(t.vocabSize(), 0);
}

//===----------------------------------------------------------------------===//
// Malformed and unsupported tokenizer.json
//===----------------------------------------------------------------------===//

Status loadError(const std::string &text) {
  StatusOr<Tokenizer> t = Tokenizer::fromJson(text);
  EXPECT_FALSE(t.isOk());
  return t.isOk() ? Status::ok() : t.status();
}

std::string minimal(const std::string &model, const std::string &rest = "") {
  return "{\"version\":\"1.0\",\"model\":" + model + rest + "}";
}

TEST(TokenizerErrors, MalformedJsonNamesTheByte) {
  Status s = loadError("{\"model\": {\"vocab\": {\"a\": 0,}}}");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "tokenizer.json: invalid JSON: trailing comma in object at byte 28 "
                         "(line 1, column 29)");
}

TEST(TokenizerErrors, StructureProblemsNameThePath) {
  const std::string vocab = "\"vocab\":{\"a\":0,\"b\":1,\"ab\":2}";
  EXPECT_EQ(loadError("[]").message(),
            "tokenizer.json: expected an object but found array at the top level");
  EXPECT_EQ(loadError("{\"version\":\"1.0\"}").message(),
            "tokenizer.json: missing field 'model' at the top level");
  EXPECT_EQ(loadError(minimal("{\"type\":\"BPE\",\"vocab\":{}}")).message(),
            "tokenizer.json: missing field 'merges' at model");
  EXPECT_EQ(loadError(minimal("{\"type\":\"BPE\"," + vocab + ",\"merges\":[\"a b\",\"a c\"]}"))
                .message(),
            "tokenizer.json: token \"c\" of the merge \"a\" + \"c\" is not in model.vocab at "
            "model.merges[1]");
  EXPECT_EQ(loadError(minimal("{\"type\":\"BPE\"," + vocab + ",\"merges\":[\"a b c\"]}"))
                .message(),
            "tokenizer.json: merge \"a b c\" is not two tokens separated by one space at "
            "model.merges[0]");
  EXPECT_EQ(loadError(minimal("{\"type\":\"BPE\",\"vocab\":{\"a\":-1},\"merges\":[]}")).message(),
            "tokenizer.json: expected a token id (an integer from 0 to 2147483647) at "
            "model.vocab.\"a\"");
  EXPECT_EQ(loadError(minimal("{\"type\":\"BPE\",\"vocab\":{},\"merges\":[]}",
                              ",\"added_tokens\":[{\"content\":\"x\"}]"))
                .message(),
            "tokenizer.json: missing field 'id' at added_tokens[0]");
  EXPECT_EQ(loadError("{\"version\":\"2.0\",\"model\":{}}").message(),
            "tokenizer.json: unknown tokenizer version \"2.0\" at version");
  EXPECT_EQ(loadError(minimal("{\"type\":\"BPE\",\"vocab\":{},\"merges\":[],\"fuse_unk\":1}"))
                .message(),
            "tokenizer.json: expected true or false but found number at model.fuse_unk");
}

TEST(TokenizerErrors, UnsupportedComponentsAreNamed) {
  const std::string bpe = "{\"type\":\"BPE\",\"vocab\":{},\"merges\":[]}";
  const std::string tail = " is not supported by accel's tokenizer (see docs/tokenizer.md)";
  Status s = loadError(minimal(bpe, ",\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":["
                                    "{\"type\":\"NFKC\"},{\"type\":\"Precompiled\","
                                    "\"precompiled_charsmap\":\"AAAA\"}]}"));
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(s.message(),
            "tokenizer.json: normalizer type 'Precompiled' at normalizer.normalizers[1]" + tail);
  s = loadError(minimal(bpe, ",\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":["
                             "{\"type\":\"Whitespace\"},{\"type\":\"UnicodeScripts\"}]}"));
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(s.message(), "tokenizer.json: pre_tokenizer type 'UnicodeScripts' at "
                         "pre_tokenizer.pretokenizers[1]" + tail);
  s = loadError(minimal("{\"type\":\"Charformer\",\"vocab\":{}}"));
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(s.message(), "tokenizer.json: model type 'Charformer' at model" + tail);
  s = loadError(minimal(bpe, ",\"post_processor\":{\"type\":\"Fancy\"}"));
  EXPECT_EQ(s.message(), "tokenizer.json: post_processor type 'Fancy' at post_processor" + tail);
  s = loadError(minimal(bpe, ",\"decoder\":{\"type\":\"Sequence\",\"decoders\":["
                             "{\"type\":\"WordPiece\"},{\"type\":\"Fancy\"}]}"));
  EXPECT_EQ(s.message(), "tokenizer.json: decoder type 'Fancy' at decoder.decoders[1]" + tail);
  s = loadError(minimal("{\"type\":\"BPE\",\"vocab\":{},\"merges\":[],\"dropout\":0.1}"));
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("BPE dropout"), std::string::npos);
}

// A regex Oniguruma does not compile is named with its place; the message
// is Oniguruma's own.
TEST(TokenizerErrors, BadRegexIsNamed) {
  const std::string bpe = "{\"type\":\"BPE\",\"vocab\":{},\"merges\":[]}";
  Status s = loadError(minimal(bpe, ",\"pre_tokenizer\":{\"type\":\"Split\",\"pattern\":"
                                    "{\"Regex\":\"(a\"},\"behavior\":\"Isolated\"}"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "tokenizer.json: the regex \"(a\" does not compile (end pattern with "
                         "unmatched parenthesis) at pre_tokenizer.pattern");
  s = loadError(minimal(bpe, ",\"normalizer\":{\"type\":\"Replace\",\"pattern\":"
                             "{\"Regex\":\"\\\\p{Nope}\"},\"content\":\"\"}"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "tokenizer.json: the regex \"\\\\p{Nope}\" does not compile (invalid "
                         "character property name {Nope}) at normalizer.pattern");
}

// fromFile names the file in the sentence.
TEST(TokenizerErrors, UnsupportedNamesTheFile) {
  std::string path = ::testing::TempDir() + "tokenizer-precompiled-" +
                     std::to_string(::getpid()) + ".json";
  {
    std::ofstream f(path);
    f << minimal("{\"type\":\"Unigram\",\"unk_id\":0,\"vocab\":[[\"<unk>\",0]]}",
                 ",\"normalizer\":{\"type\":\"Precompiled\",\"precompiled_charsmap\":\"\"}");
  }
  StatusOr<Tokenizer> t = Tokenizer::fromFile(path);
  ::unlink(path.c_str());
  ASSERT_FALSE(t.isOk());
  EXPECT_EQ(t.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(t.status().message(), path + ": normalizer type 'Precompiled' at normalizer is not "
                                         "supported by accel's tokenizer (see docs/tokenizer.md)");
}

TEST(TokenizerErrors, MissingFile) {
  StatusOr<Tokenizer> t = Tokenizer::fromFile("/nonexistent/dir/tokenizer.json");
  ASSERT_FALSE(t.isOk());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(t.status().message(),
            "cannot open tokenizer '/nonexistent/dir/tokenizer.json': No such file or directory");
}

// A FIFO would block open() and read() until a writer comes; /dev/zero never
// ends. Both are refused at once, in one sentence.
TEST(TokenizerErrors, NotARegularFile) {
  std::string fifo = ::testing::TempDir() + "tokenizer-fifo-" + std::to_string(::getpid());
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  StatusOr<Tokenizer> t = Tokenizer::fromFile(fifo);
  ::unlink(fifo.c_str());
  ASSERT_FALSE(t.isOk());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(t.status().message(), "tokenizer '" + fifo + "' is a FIFO, not a regular file");
  StatusOr<Tokenizer> z = Tokenizer::fromFile("/dev/zero");
  ASSERT_FALSE(z.isOk());
  EXPECT_EQ(z.status().message(),
            "tokenizer '/dev/zero' is a character device, not a regular file");
}

} // namespace
