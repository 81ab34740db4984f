//===- Tokenizer.cpp - Hugging Face tokenizer.json in C++ -----------------===//
//
// The pipeline of `tokenizers`' TokenizerImpl::encode, step by step:
//   1. split the raw text on the added tokens that are not `normalized`
//      (leftmost-longest, honouring single_word / lstrip / rstrip);
//   2. normalize every other piece, then split it on the `normalized` added
//      tokens;
//   3. pre-tokenize every remaining piece (ByteLevel, Split, Metaspace,
//      Digits, in a Sequence);
//   4. run the BPE model on every pre-token;
//   5. post-process (TemplateProcessing / Roberta / Bert add their special
//      tokens when asked).
// Decoding maps ids back to token strings (added tokens first) and runs the
// decoder chain.
//
//===----------------------------------------------------------------------===//
#include "runtime/serving/tokenizer/Tokenizer.h"

#include "core/Json.h"
#include "core/RegularFile.h"
#include "runtime/serving/tokenizer/Bpe.h"
#include "runtime/serving/tokenizer/Split.h"
#include "runtime/serving/tokenizer/Unicode.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace accel::rt::tok {

namespace {

using detail::KnownRegex;
using detail::SplitBehavior;

//===----------------------------------------------------------------------===//
// The byte-level alphabet (GPT-2's bytes_to_unicode)
//===----------------------------------------------------------------------===//

struct ByteAlphabet {
  std::string byteToUtf8[256];
  int16_t charToByte[0x144]; // code points up to U+0143; -1: none

  ByteAlphabet() {
    std::fill(std::begin(charToByte), std::end(charToByte), static_cast<int16_t>(-1));
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      char32_t c = printable ? static_cast<char32_t>(b) : next++;
      unicode::appendUtf8(byteToUtf8[b], c);
      charToByte[c] = static_cast<int16_t>(b);
    }
  }
};

const ByteAlphabet &byteAlphabet() {
  static const ByteAlphabet kAlphabet;
  return kAlphabet;
}

std::string byteLevelEncode(std::string_view s) {
  const ByteAlphabet &a = byteAlphabet();
  std::string out;
  out.reserve(s.size() * 2);
  for (unsigned char b : s)
    out += a.byteToUtf8[b];
  return out;
}

//===----------------------------------------------------------------------===//
// Components
//===----------------------------------------------------------------------===//

struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool singleWord = false, lstrip = false, rstrip = false, normalized = true, special = false;
  bool operator==(const AddedToken &o) const {
    return content == o.content && singleWord == o.singleWord && lstrip == o.lstrip &&
           rstrip == o.rstrip && normalized == o.normalized && special == o.special;
  }
};

/// A byte trie of the added tokens, for leftmost-longest matching.
class Trie {
public:
  Trie() { nodes_.push_back(-1); }
  void insert(std::string_view s, int32_t value) {
    size_t n = 0;
    for (unsigned char b : s) {
      uint64_t key = (static_cast<uint64_t>(n) << 8) | b;
      auto it = edges_.find(key);
      if (it == edges_.end()) {
        nodes_.push_back(-1);
        it = edges_.emplace(key, nodes_.size() - 1).first;
      }
      n = it->second;
    }
    nodes_[n] = value;
  }
  bool empty() const { return nodes_.size() == 1; }
  /// The longest entry starting at s[pos]: its length (0: none) and value.
  size_t longestAt(std::string_view s, size_t pos, int32_t &value) const {
    size_t n = 0, best = 0;
    for (size_t i = pos; i < s.size(); ++i) {
      auto it = edges_.find((static_cast<uint64_t>(n) << 8) | static_cast<unsigned char>(s[i]));
      if (it == edges_.end())
        break;
      n = it->second;
      if (nodes_[n] >= 0) {
        best = i + 1 - pos;
        value = nodes_[n];
      }
    }
    return best;
  }

private:
  std::vector<int32_t> nodes_; // value per node, -1: not an entry
  std::unordered_map<uint64_t, size_t> edges_;
};

struct NormStep {
  enum class Kind { kNFC, kNFD, kPrepend, kReplace, kStrip, kByteLevel } kind;
  std::string a, b; // Prepend: a; Replace: a -> b
  bool left = false, right = false;
};

enum class PrependScheme { kAlways, kFirst, kNever };

struct PreStep {
  enum class Kind { kByteLevel, kSplitRegex, kSplitLiteral, kMetaspace, kDigits };
  Kind kind = Kind::kByteLevel;
  bool addPrefixSpace = false, useRegex = true;             // ByteLevel
  KnownRegex regex = KnownRegex::kGpt2;                      // Split
  std::string literal;                                       // Split
  SplitBehavior behavior = SplitBehavior::kIsolated;         // Split
  bool invert = false;                                       // Split
  std::string replacement;                                   // Metaspace
  char32_t replacementChar = 0;                              // Metaspace
  PrependScheme prepend = PrependScheme::kAlways;            // Metaspace
  bool split = true;                                         // Metaspace
  bool individualDigits = false;                             // Digits
};

/// One post-processor that adds ids around the sequence: `items` in order,
/// nullopt standing for the sequence itself.
struct PostStep {
  std::vector<std::optional<std::vector<int32_t>>> items;
};

struct DecStep {
  enum class Kind { kByteLevel, kMetaspace, kReplace, kByteFallback, kFuse, kStrip };
  Kind kind = Kind::kByteLevel;
  std::string a, b;          // Replace: a -> b
  char32_t ch = 0;           // Metaspace replacement, Strip content
  bool prependNever = false; // Metaspace
  size_t start = 0, stop = 0;
};

struct Piece {
  std::string text;
  bool atOrigin; // starts at byte 0 of the original text
};

} // namespace

struct Tokenizer::Impl {
  detail::Bpe bpe;
  std::vector<NormStep> normalizers;
  std::vector<PreStep> preTokenizers;
  std::vector<PostStep> post;
  bool hasDecoder = false;
  std::vector<DecStep> decoders;

  std::unordered_map<int32_t, AddedToken> addedById;
  std::unordered_map<std::string, int32_t> addedByContent;
  std::unordered_map<int32_t, std::string> normalizedContent; // for normalized tokens
  std::unordered_set<std::string> specialSet;
  Trie rawTrie, normTrie;

  std::optional<int32_t> bos, eos;

  std::string normalize(std::string s) const;
  void findAdded(std::string_view s, const Trie &trie,
                 std::vector<std::pair<std::pair<size_t, size_t>, int32_t>> &out) const;
  std::vector<Piece> preTokenize(Piece piece) const;
  std::vector<std::string> decodeChain(std::vector<std::string> tokens) const;
};

namespace {

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

class Loader {
public:
  explicit Loader(std::string name) : name_(std::move(name)) {}

  Status bad(const std::string &what, const std::string &where) const {
    return invalidArgument(name_ + ": " + what + " at " + where);
  }
  Status unsupported(const std::string &what, const std::string &where) const {
    return unimplemented(name_ + ": " + what + " at " + where +
                         " is not supported by accel's tokenizer (see docs/tokenizer.md)");
  }

  static std::string field(const std::string &path, const char *key) {
    return path.empty() ? std::string(key) : path + "." + key;
  }

  Status expectObject(const json::Value &v, const std::string &path) const {
    if (!v.isObject())
      return bad(std::string("expected an object but found ") + json::typeName(v.type()), path);
    return Status::ok();
  }

  /// A string field; missing or null leaves `out` alone unless required.
  Status getString(const json::Value &obj, const char *key, const std::string &path,
                   std::optional<std::string> &out, bool required = false) const {
    const json::Value *v = obj.find(key);
    if (!v || v->isNull()) {
      if (required)
        return bad(std::string("missing field '") + key + "'", path);
      return Status::ok();
    }
    if (!v->isString())
      return bad(std::string("expected a string but found ") + json::typeName(v->type()),
                 field(path, key));
    out = v->asString();
    return Status::ok();
  }

  Status getBool(const json::Value &obj, const char *key, const std::string &path,
                 bool &out) const {
    const json::Value *v = obj.find(key);
    if (!v || v->isNull())
      return Status::ok();
    if (!v->isBool())
      return bad(std::string("expected true or false but found ") + json::typeName(v->type()),
                 field(path, key));
    out = v->asBool();
    return Status::ok();
  }

  Status getId(const json::Value &v, const std::string &path, int32_t &out) const {
    if (!v.isInteger() || v.asInt() < 0 ||
        v.asInt() > std::numeric_limits<int32_t>::max())
      return bad("expected a token id (an integer from 0 to 2147483647)", path);
    out = static_cast<int32_t>(v.asInt());
    return Status::ok();
  }

  Status getSize(const json::Value &obj, const char *key, const std::string &path,
                 size_t &out) const {
    const json::Value *v = obj.find(key);
    if (!v || v->isNull())
      return Status::ok();
    if (!v->isInteger() || v->asInt() < 0)
      return bad("expected a non-negative integer", field(path, key));
    out = static_cast<size_t>(v->asInt());
    return Status::ok();
  }

  /// The "type" of a component.
  Status getType(const json::Value &obj, const std::string &path, std::string &out) const {
    ACCEL_RT_RETURN_IF_ERROR(expectObject(obj, path));
    std::optional<std::string> t;
    ACCEL_RT_RETURN_IF_ERROR(getString(obj, "type", path, t, /*required=*/true));
    out = *t;
    return Status::ok();
  }

  /// A {"String": s} or {"Regex": r} pattern.
  Status getPattern(const json::Value &obj, const std::string &path, bool &isRegex,
                    std::string &pattern) const {
    const json::Value *p = obj.find("pattern");
    std::string where = field(path, "pattern");
    if (!p)
      return bad("missing field 'pattern'", path);
    if (!p->isObject() || p->size() != 1 ||
        !(p->find("String") || p->find("Regex")))
      return bad("expected {\"String\": ...} or {\"Regex\": ...}", where);
    const auto &m = p->members().front();
    if (!m.second.isString())
      return bad("expected a string", where + "." + m.first);
    isRegex = m.first == "Regex";
    pattern = m.second.asString();
    return Status::ok();
  }

  /// A one-character string.
  Status getChar(const json::Value &obj, const char *key, const std::string &path,
                 char32_t &out, std::string &utf8) const {
    std::optional<std::string> s;
    ACCEL_RT_RETURN_IF_ERROR(getString(obj, key, path, s, /*required=*/true));
    if (s->empty())
      return bad("expected one character but found an empty string", field(path, key));
    size_t len;
    char32_t c = unicode::decodeAt(*s, 0, len);
    if (len != s->size())
      return bad("expected one character but found " + json::quote(*s), field(path, key));
    out = c;
    utf8 = *s;
    return Status::ok();
  }

  Status loadNormalizer(const json::Value &v, const std::string &path,
                        std::vector<NormStep> &out) const {
    std::string type;
    ACCEL_RT_RETURN_IF_ERROR(getType(v, path, type));
    if (type == "Sequence") {
      const json::Value *list = v.find("normalizers");
      if (!list || !list->isArray())
        return bad("expected an array 'normalizers'", path);
      for (size_t i = 0; i < list->size(); ++i)
        ACCEL_RT_RETURN_IF_ERROR(loadNormalizer(list->items()[i],
                                                path + ".normalizers[" + std::to_string(i) + "]",
                                                out));
      return Status::ok();
    }
    NormStep step{NormStep::Kind::kNFC, {}, {}};
    if (type == "NFC") {
      step.kind = NormStep::Kind::kNFC;
    } else if (type == "NFD") {
      step.kind = NormStep::Kind::kNFD;
    } else if (type == "Prepend") {
      step.kind = NormStep::Kind::kPrepend;
      std::optional<std::string> p;
      ACCEL_RT_RETURN_IF_ERROR(getString(v, "prepend", path, p, /*required=*/true));
      step.a = *p;
    } else if (type == "Replace") {
      step.kind = NormStep::Kind::kReplace;
      bool isRegex;
      ACCEL_RT_RETURN_IF_ERROR(getPattern(v, path, isRegex, step.a));
      if (isRegex)
        return unsupported("normalizer Replace with the regex " + json::quote(step.a), path);
      if (step.a.empty())
        return unsupported("normalizer Replace with an empty pattern", path);
      std::optional<std::string> c;
      ACCEL_RT_RETURN_IF_ERROR(getString(v, "content", path, c, /*required=*/true));
      step.b = *c;
    } else if (type == "Strip") {
      step.kind = NormStep::Kind::kStrip;
      ACCEL_RT_RETURN_IF_ERROR(getBool(v, "strip_left", path, step.left));
      ACCEL_RT_RETURN_IF_ERROR(getBool(v, "strip_right", path, step.right));
    } else if (type == "ByteLevel") {
      step.kind = NormStep::Kind::kByteLevel;
    } else {
      return unsupported("normalizer type '" + type + "'", path);
    }
    out.push_back(std::move(step));
    return Status::ok();
  }

  Status loadPreTokenizer(const json::Value &v, const std::string &path,
                          std::vector<PreStep> &out) const {
    std::string type;
    ACCEL_RT_RETURN_IF_ERROR(getType(v, path, type));
    if (type == "Sequence") {
      const json::Value *list = v.find("pretokenizers");
      if (!list || !list->isArray())
        return bad("expected an array 'pretokenizers'", path);
      for (size_t i = 0; i < list->size(); ++i)
        ACCEL_RT_RETURN_IF_ERROR(loadPreTokenizer(
            list->items()[i], path + ".pretokenizers[" + std::to_string(i) + "]", out));
      return Status::ok();
    }
    PreStep step;
    step.kind = PreStep::Kind::kByteLevel;
    if (type == "ByteLevel") {
      step.kind = PreStep::Kind::kByteLevel;
      step.addPrefixSpace = true; // the serde defaults
      step.useRegex = true;
      ACCEL_RT_RETURN_IF_ERROR(getBool(v, "add_prefix_space", path, step.addPrefixSpace));
      ACCEL_RT_RETURN_IF_ERROR(getBool(v, "use_regex", path, step.useRegex));
    } else if (type == "Split") {
      bool isRegex;
      std::string pattern;
      ACCEL_RT_RETURN_IF_ERROR(getPattern(v, path, isRegex, pattern));
      if (isRegex) {
        std::optional<KnownRegex> r = detail::recognizeRegex(pattern);
        if (!r)
          return unsupported("the Split regex " + json::quote(pattern) +
                                 " (only the GPT-2, Llama-3 and Qwen2 patterns are implemented)",
                             path + ".pattern");
        step.kind = PreStep::Kind::kSplitRegex;
        step.regex = *r;
      } else {
        if (pattern.empty())
          return unsupported("a Split with an empty pattern", path);
        step.kind = PreStep::Kind::kSplitLiteral;
        step.literal = pattern;
      }
      std::optional<std::string> behavior;
      ACCEL_RT_RETURN_IF_ERROR(getString(v, "behavior", path, behavior, /*required=*/true));
      std::optional<SplitBehavior> b = detail::parseSplitBehavior(*behavior);
      if (!b)
        return bad("unknown split behavior " + json::quote(*behavior), field(path, "behavior"));
      step.behavior = *b;
      ACCEL_RT_RETURN_IF_ERROR(getBool(v, "invert", path, step.invert));
    } else if (type == "Metaspace") {
      step.kind = PreStep::Kind::kMetaspace;
      ACCEL_RT_RETURN_IF_ERROR(
          getChar(v, "replacement", path, step.replacementChar, step.replacement));
      std::optional<std::string> scheme;
      ACCEL_RT_RETURN_IF_ERROR(getString(v, "prepend_scheme", path, scheme));
      step.prepend = PrependScheme::kAlways;
      if (scheme) {
        if (*scheme == "always")
          step.prepend = PrependScheme::kAlways;
        else if (*scheme == "first")
          step.prepend = PrependScheme::kFirst;
        else if (*scheme == "never")
          step.prepend = PrependScheme::kNever;
        else
          return bad("unknown prepend_scheme " + json::quote(*scheme),
                     field(path, "prepend_scheme"));
      }
      const json::Value *aps = v.find("add_prefix_space");
      if (aps && aps->isBool() && !aps->asBool()) {
        if (step.prepend != PrependScheme::kNever && scheme)
          return bad("add_prefix_space false does not match prepend_scheme " +
                         json::quote(*scheme),
                     path);
        step.prepend = PrependScheme::kNever;
      }
      ACCEL_RT_RETURN_IF_ERROR(getBool(v, "split", path, step.split));
    } else if (type == "Digits") {
      step.kind = PreStep::Kind::kDigits;
      ACCEL_RT_RETURN_IF_ERROR(getBool(v, "individual_digits", path, step.individualDigits));
    } else {
      return unsupported("pre_tokenizer type '" + type + "'", path);
    }
    out.push_back(std::move(step));
    return Status::ok();
  }

  /// [token, id] of Roberta/Bert processing.
  Status getTokenPair(const json::Value &obj, const char *key, const std::string &path,
                      int32_t &id) const {
    const json::Value *v = obj.find(key);
    std::string where = field(path, key);
    if (!v || !v->isArray() || v->size() != 2 || !v->items()[0].isString())
      return bad("expected [\"token\", id]", where);
    return getId(v->items()[1], where + "[1]", id);
  }

  Status loadPostProcessor(const json::Value &v, const std::string &path,
                           std::vector<PostStep> &out) const {
    std::string type;
    ACCEL_RT_RETURN_IF_ERROR(getType(v, path, type));
    if (type == "Sequence") {
      const json::Value *list = v.find("processors");
      if (!list || !list->isArray())
        return bad("expected an array 'processors'", path);
      for (size_t i = 0; i < list->size(); ++i)
        ACCEL_RT_RETURN_IF_ERROR(loadPostProcessor(
            list->items()[i], path + ".processors[" + std::to_string(i) + "]", out));
      return Status::ok();
    }
    if (type == "ByteLevel")
      return Status::ok(); // it only trims offsets
    if (type == "RobertaProcessing" || type == "BertProcessing") {
      int32_t cls, sep;
      ACCEL_RT_RETURN_IF_ERROR(getTokenPair(v, "cls", path, cls));
      ACCEL_RT_RETURN_IF_ERROR(getTokenPair(v, "sep", path, sep));
      PostStep step;
      step.items.push_back(std::vector<int32_t>{cls});
      step.items.push_back(std::nullopt);
      step.items.push_back(std::vector<int32_t>{sep});
      out.push_back(std::move(step));
      return Status::ok();
    }
    if (type == "TemplateProcessing") {
      // special_tokens: {name: {"id": name, "ids": [...], "tokens": [...]}}
      std::unordered_map<std::string, std::vector<int32_t>> specials;
      const json::Value *st = v.find("special_tokens");
      std::string stPath = field(path, "special_tokens");
      if (st && !st->isNull()) {
        if (!st->isObject())
          return bad("expected an object", stPath);
        for (const auto &[name, tokv] : st->members()) {
          std::string tp = stPath + "." + name;
          ACCEL_RT_RETURN_IF_ERROR(expectObject(tokv, tp));
          const json::Value *ids = tokv.find("ids");
          if (!ids || !ids->isArray())
            return bad("expected an array 'ids'", tp);
          std::vector<int32_t> list;
          for (size_t i = 0; i < ids->size(); ++i) {
            int32_t id;
            ACCEL_RT_RETURN_IF_ERROR(getId(ids->items()[i], tp + ".ids[" + std::to_string(i) + "]",
                                           id));
            list.push_back(id);
          }
          const json::Value *toks = tokv.find("tokens");
          if (toks && toks->isArray() && toks->size() != list.size())
            return bad("'ids' and 'tokens' differ in length", tp);
          specials[name] = std::move(list);
        }
      }
      const json::Value *single = v.find("single");
      std::string sp = field(path, "single");
      if (!single || !single->isArray())
        return bad("expected an array 'single'", path);
      PostStep step;
      for (size_t i = 0; i < single->size(); ++i) {
        const json::Value &piece = single->items()[i];
        std::string pp = sp + "[" + std::to_string(i) + "]";
        if (!piece.isObject() || piece.size() != 1)
          return bad("expected {\"SpecialToken\": ...} or {\"Sequence\": ...}", pp);
        const auto &[kind, body] = piece.members().front();
        if (!body.isObject())
          return bad("expected an object", pp + "." + kind);
        const json::Value *id = body.find("id");
        if (!id || !id->isString())
          return bad("expected a string 'id'", pp + "." + kind);
        if (kind == "Sequence") {
          if (id->asString() != "A")
            return bad("the single template can only hold sequence A, not " +
                           json::quote(id->asString()),
                       pp);
          step.items.push_back(std::nullopt);
        } else if (kind == "SpecialToken") {
          auto it = specials.find(id->asString());
          if (it == specials.end())
            return bad("special token " + json::quote(id->asString()) +
                           " is not in special_tokens",
                       pp);
          step.items.push_back(it->second);
        } else {
          return bad("unknown template piece " + json::quote(kind), pp);
        }
      }
      out.push_back(std::move(step));
      return Status::ok();
    }
    return unsupported("post_processor type '" + type + "'", path);
  }

  Status loadDecoder(const json::Value &v, const std::string &path,
                     std::vector<DecStep> &out) const {
    std::string type;
    ACCEL_RT_RETURN_IF_ERROR(getType(v, path, type));
    if (type == "Sequence") {
      const json::Value *list = v.find("decoders");
      if (!list || !list->isArray())
        return bad("expected an array 'decoders'", path);
      for (size_t i = 0; i < list->size(); ++i)
        ACCEL_RT_RETURN_IF_ERROR(
            loadDecoder(list->items()[i], path + ".decoders[" + std::to_string(i) + "]", out));
      return Status::ok();
    }
    DecStep step;
    step.kind = DecStep::Kind::kByteLevel;
    if (type == "ByteLevel") {
      step.kind = DecStep::Kind::kByteLevel;
    } else if (type == "Metaspace") {
      step.kind = DecStep::Kind::kMetaspace;
      std::string utf8;
      ACCEL_RT_RETURN_IF_ERROR(getChar(v, "replacement", path, step.ch, utf8));
      std::optional<std::string> scheme;
      ACCEL_RT_RETURN_IF_ERROR(getString(v, "prepend_scheme", path, scheme));
      step.prependNever = scheme && *scheme == "never";
      const json::Value *aps = v.find("add_prefix_space");
      if (aps && aps->isBool() && !aps->asBool())
        step.prependNever = true;
    } else if (type == "Replace") {
      step.kind = DecStep::Kind::kReplace;
      bool isRegex;
      ACCEL_RT_RETURN_IF_ERROR(getPattern(v, path, isRegex, step.a));
      if (isRegex)
        return unsupported("decoder Replace with the regex " + json::quote(step.a), path);
      if (step.a.empty())
        return unsupported("decoder Replace with an empty pattern", path);
      std::optional<std::string> c;
      ACCEL_RT_RETURN_IF_ERROR(getString(v, "content", path, c, /*required=*/true));
      step.b = *c;
    } else if (type == "ByteFallback") {
      step.kind = DecStep::Kind::kByteFallback;
    } else if (type == "Fuse") {
      step.kind = DecStep::Kind::kFuse;
    } else if (type == "Strip") {
      step.kind = DecStep::Kind::kStrip;
      std::string utf8;
      ACCEL_RT_RETURN_IF_ERROR(getChar(v, "content", path, step.ch, utf8));
      ACCEL_RT_RETURN_IF_ERROR(getSize(v, "start", path, step.start));
      ACCEL_RT_RETURN_IF_ERROR(getSize(v, "stop", path, step.stop));
    } else {
      return unsupported("decoder type '" + type + "'", path);
    }
    out.push_back(std::move(step));
    return Status::ok();
  }

  Status loadModel(const json::Value &v, detail::Bpe &bpe) const {
    const std::string path = "model";
    ACCEL_RT_RETURN_IF_ERROR(expectObject(v, path));
    std::optional<std::string> type;
    ACCEL_RT_RETURN_IF_ERROR(getString(v, "type", path, type));
    if (!type && !v.find("merges"))
      return unsupported("a model without \"type\" and without merges", path);
    if (type && *type != "BPE")
      return unsupported("model type '" + *type + "' (only BPE is implemented)", path);

    const json::Value *dropout = v.find("dropout");
    if (dropout && !dropout->isNull()) {
      if (!dropout->isNumber() || dropout->asDouble() < 0 || dropout->asDouble() > 1)
        return bad("dropout must be null or a number in [0, 1]", "model.dropout");
      if (dropout->asDouble() != 0.0)
        return unsupported("BPE dropout (it makes encoding random)", "model.dropout");
    }

    detail::Bpe::Options opts;
    ACCEL_RT_RETURN_IF_ERROR(getString(v, "unk_token", path, opts.unkToken));
    ACCEL_RT_RETURN_IF_ERROR(
        getString(v, "continuing_subword_prefix", path, opts.continuingSubwordPrefix));
    ACCEL_RT_RETURN_IF_ERROR(getString(v, "end_of_word_suffix", path, opts.endOfWordSuffix));
    ACCEL_RT_RETURN_IF_ERROR(getBool(v, "fuse_unk", path, opts.fuseUnk));
    ACCEL_RT_RETURN_IF_ERROR(getBool(v, "byte_fallback", path, opts.byteFallback));
    ACCEL_RT_RETURN_IF_ERROR(getBool(v, "ignore_merges", path, opts.ignoreMerges));

    const json::Value *vocabV = v.find("vocab");
    if (!vocabV)
      return bad("missing field 'vocab'", path);
    if (!vocabV->isObject())
      return bad(std::string("expected an object of token: id but found ") +
                     json::typeName(vocabV->type()),
                 "model.vocab");
    std::unordered_map<std::string, int32_t> vocab;
    vocab.reserve(vocabV->size());
    for (const auto &[tok, idv] : vocabV->members()) {
      int32_t id;
      ACCEL_RT_RETURN_IF_ERROR(getId(idv, "model.vocab." + json::quote(tok), id));
      vocab[tok] = id;
    }

    const json::Value *mergesV = v.find("merges");
    if (!mergesV)
      return bad("missing field 'merges'", path);
    if (!mergesV->isArray())
      return bad(std::string("expected an array but found ") + json::typeName(mergesV->type()),
                 "model.merges");
    std::vector<std::pair<std::string, std::string>> merges;
    merges.reserve(mergesV->size());
    // Either all "a b" strings (the legacy form, where lines starting with
    // "#version" are skipped) or all ["a", "b"] pairs.
    bool legacy = mergesV->size() > 0 && mergesV->items()[0].isString();
    for (size_t i = 0; i < mergesV->size(); ++i) {
      const json::Value &m = mergesV->items()[i];
      std::string where = "model.merges[" + std::to_string(i) + "]";
      if (legacy) {
        if (!m.isString())
          return bad("expected a string \"a b\" like the first merge", where);
        const std::string &line = m.asString();
        if (line.rfind("#version", 0) == 0)
          continue;
        size_t sp = line.find(' ');
        if (sp == std::string::npos || line.find(' ', sp + 1) != std::string::npos)
          return bad("merge " + json::quote(line) + " is not two tokens separated by one space",
                     where);
        merges.emplace_back(line.substr(0, sp), line.substr(sp + 1));
      } else {
        if (!m.isArray() || m.size() != 2 || !m.items()[0].isString() ||
            !m.items()[1].isString())
          return bad("expected a pair [\"a\", \"b\"]", where);
        merges.emplace_back(m.items()[0].asString(), m.items()[1].asString());
      }
    }
    StatusOr<detail::Bpe> built =
        detail::Bpe::build(std::move(vocab), merges, std::move(opts), "model.merges");
    if (!built.isOk())
      return invalidArgument(name_ + ": " + built.status().message());
    bpe = std::move(built).value();
    return Status::ok();
  }

  Status loadAddedTokens(const json::Value *list, Tokenizer::Impl &impl) const {
    if (!list || list->isNull())
      return Status::ok();
    if (!list->isArray())
      return bad("expected an array", "added_tokens");
    std::vector<AddedToken> tokens;
    for (size_t i = 0; i < list->size(); ++i) {
      const json::Value &t = list->items()[i];
      std::string path = "added_tokens[" + std::to_string(i) + "]";
      ACCEL_RT_RETURN_IF_ERROR(expectObject(t, path));
      AddedToken tok;
      std::optional<std::string> content;
      ACCEL_RT_RETURN_IF_ERROR(getString(t, "content", path, content, /*required=*/true));
      tok.content = *content;
      const json::Value *id = t.find("id");
      if (!id)
        return bad("missing field 'id'", path);
      ACCEL_RT_RETURN_IF_ERROR(getId(*id, path + ".id", tok.id));
      ACCEL_RT_RETURN_IF_ERROR(getBool(t, "special", path, tok.special));
      tok.normalized = !tok.special;
      ACCEL_RT_RETURN_IF_ERROR(getBool(t, "single_word", path, tok.singleWord));
      ACCEL_RT_RETURN_IF_ERROR(getBool(t, "lstrip", path, tok.lstrip));
      ACCEL_RT_RETURN_IF_ERROR(getBool(t, "rstrip", path, tok.rstrip));
      ACCEL_RT_RETURN_IF_ERROR(getBool(t, "normalized", path, tok.normalized));
      tokens.push_back(std::move(tok));
    }
    // AddedVocabulary::add_tokens: a token the model (or an earlier added
    // token) knows keeps that id; the others are numbered from the model's
    // vocabulary size on, in order. The "id" in the file is not used, as
    // in tokenizers (which only warns when they differ).
    int64_t modelSize = static_cast<int64_t>(impl.bpe.vocabSize());
    int64_t nextId = modelSize;
    for (AddedToken &tok : tokens) {
      if (tok.content.empty())
        continue;
      auto known = impl.addedByContent.find(tok.content);
      if (known != impl.addedByContent.end()) {
        auto same = impl.addedById.find(known->second);
        if (same != impl.addedById.end() && same->second == tok)
          continue;
      }
      int32_t id;
      if (known != impl.addedByContent.end()) {
        id = known->second;
      } else if (std::optional<int32_t> m = impl.bpe.tokenToId(tok.content)) {
        id = *m;
      } else {
        if (nextId > std::numeric_limits<int32_t>::max())
          return bad("too many added tokens", "added_tokens");
        id = static_cast<int32_t>(nextId++);
      }
      tok.id = id;
      if (tok.normalized && !impl.normalizers.empty()) {
        std::string n = impl.normalize(tok.content);
        if (n != tok.content)
          impl.normalizedContent[id] = n;
      }
      impl.addedByContent[tok.content] = id;
      if (tok.special)
        impl.specialSet.insert(tok.content);
      impl.addedById[id] = tok;
    }
    // The two tries, from the final id -> token map.
    std::vector<int32_t> ids;
    for (const auto &[id, tok] : impl.addedById)
      ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    for (int32_t id : ids) {
      const AddedToken &tok = impl.addedById[id];
      if (tok.normalized) {
        auto n = impl.normalizedContent.find(id);
        const std::string &pattern = n != impl.normalizedContent.end() ? n->second : tok.content;
        if (!pattern.empty())
          impl.normTrie.insert(pattern, id);
      } else {
        impl.rawTrie.insert(tok.content, id);
      }
    }
    return Status::ok();
  }

  Status load(const json::Value &root, Tokenizer::Impl &impl) const {
    ACCEL_RT_RETURN_IF_ERROR(expectObject(root, "the top level"));
    std::optional<std::string> version;
    ACCEL_RT_RETURN_IF_ERROR(getString(root, "version", "", version));
    if (version && *version != "1.0")
      return bad("unknown tokenizer version " + json::quote(*version), "version");

    const json::Value *model = root.find("model");
    if (!model)
      return bad("missing field 'model'", "the top level");
    ACCEL_RT_RETURN_IF_ERROR(loadModel(*model, impl.bpe));

    if (const json::Value *n = root.find("normalizer"); n && !n->isNull())
      ACCEL_RT_RETURN_IF_ERROR(loadNormalizer(*n, "normalizer", impl.normalizers));
    if (const json::Value *p = root.find("pre_tokenizer"); p && !p->isNull())
      ACCEL_RT_RETURN_IF_ERROR(loadPreTokenizer(*p, "pre_tokenizer", impl.preTokenizers));
    if (const json::Value *p = root.find("post_processor"); p && !p->isNull())
      ACCEL_RT_RETURN_IF_ERROR(loadPostProcessor(*p, "post_processor", impl.post));
    if (const json::Value *d = root.find("decoder"); d && !d->isNull()) {
      impl.hasDecoder = true;
      ACCEL_RT_RETURN_IF_ERROR(loadDecoder(*d, "decoder", impl.decoders));
    }
    ACCEL_RT_RETURN_IF_ERROR(loadAddedTokens(root.find("added_tokens"), impl));
    // "truncation" and "padding" are ignored: the runtime never truncates or
    // pads a prompt behind the caller's back.
    return Status::ok();
  }

private:
  std::string name_;
};

//===----------------------------------------------------------------------===//
// Small string helpers
//===----------------------------------------------------------------------===//

std::string replaceAll(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t hit = s.find(from, pos);
    if (hit == std::string_view::npos)
      break;
    out.append(s.data() + pos, hit - pos);
    out.append(to);
    pos = hit + from.size();
  }
  out.append(s.data() + pos, s.size() - pos);
  return out;
}

/// The byte length of the leading (or trailing) White_Space of s.
size_t leadingWhitespace(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t len;
    if (!unicode::isWhitespace(unicode::decodeAt(s, i, len)))
      break;
    i += len;
  }
  return i;
}

size_t trailingWhitespaceStart(std::string_view s) {
  // Walk forward, remembering where the current whitespace run began.
  size_t i = 0, runStart = 0;
  bool inRun = false;
  while (i < s.size()) {
    size_t len;
    bool ws = unicode::isWhitespace(unicode::decodeAt(s, i, len));
    if (ws && !inRun) {
      runStart = i;
      inRun = true;
    } else if (!ws) {
      inRun = false;
    }
    i += len;
  }
  return inRun ? runStart : s.size();
}

char32_t lastCodePoint(std::string_view s) {
  if (s.empty())
    return 0;
  size_t i = s.size() - 1;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80)
    --i;
  size_t len;
  return unicode::decodeAt(s, i, len);
}

std::vector<std::string> splitChars(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t len;
    unicode::decodeAt(s, i, len);
    out.emplace_back(s.substr(i, len));
    i += len;
  }
  return out;
}

} // namespace

//===----------------------------------------------------------------------===//
// Encoding
//===----------------------------------------------------------------------===//

std::string Tokenizer::Impl::normalize(std::string s) const {
  for (const NormStep &n : normalizers) {
    switch (n.kind) {
    case NormStep::Kind::kNFC:
      s = unicode::nfc(s);
      break;
    case NormStep::Kind::kNFD:
      s = unicode::nfd(s);
      break;
    case NormStep::Kind::kPrepend:
      if (!s.empty())
        s = n.a + s;
      break;
    case NormStep::Kind::kReplace:
      s = replaceAll(s, n.a, n.b);
      break;
    case NormStep::Kind::kStrip: {
      size_t start = n.left ? leadingWhitespace(s) : 0;
      size_t end = n.right ? trailingWhitespaceStart(s) : s.size();
      s = end > start ? s.substr(start, end - start) : std::string();
      break;
    }
    case NormStep::Kind::kByteLevel:
      s = byteLevelEncode(s);
      break;
    }
  }
  return s;
}

void Tokenizer::Impl::findAdded(
    std::string_view s, const Trie &trie,
    std::vector<std::pair<std::pair<size_t, size_t>, int32_t>> &out) const {
  // AddedVocabulary::find_matches; pieces that are not tokens carry -1.
  out.clear();
  if (s.empty())
    return;
  if (trie.empty()) {
    out.push_back({{0, s.size()}, -1});
    return;
  }
  size_t startOffset = 0;
  size_t pos = 0;
  while (pos < s.size()) {
    int32_t id = -1;
    size_t len = trie.longestAt(s, pos, id);
    if (len == 0) {
      ++pos;
      continue;
    }
    size_t start = pos, stop = pos + len;
    pos = stop; // the matcher resumes after the match, whatever happens to it
    const AddedToken &tok = addedById.at(id);
    if (tok.singleWord) {
      bool startSpace = start == 0 || !unicode::isWordChar(lastCodePoint(s.substr(0, start)));
      bool stopSpace = stop == s.size() || [&] {
        size_t l;
        return !unicode::isWordChar(unicode::decodeAt(s, stop, l));
      }();
      if (!startSpace || !stopSpace)
        continue;
    }
    if (tok.lstrip)
      start = std::max(trailingWhitespaceStart(s.substr(0, start)), startOffset);
    if (tok.rstrip)
      stop += leadingWhitespace(s.substr(stop));
    if (startOffset < start)
      out.push_back({{startOffset, start}, -1});
    out.push_back({{start, stop}, id});
    startOffset = stop;
  }
  if (startOffset < s.size())
    out.push_back({{startOffset, s.size()}, -1});
}

std::vector<Piece> Tokenizer::Impl::preTokenize(Piece piece) const {
  std::vector<Piece> pieces;
  pieces.push_back(std::move(piece));
  std::vector<Piece> next;
  auto emit = [&](const Piece &parent, const std::string &text,
                  const std::vector<std::pair<size_t, size_t>> &ranges) {
    for (auto [s, e] : ranges)
      if (e > s)
        next.push_back({text.substr(s, e - s), parent.atOrigin && s == 0});
  };
  for (const PreStep &step : preTokenizers) {
    next.clear();
    for (Piece &p : pieces) {
      switch (step.kind) {
      case PreStep::Kind::kByteLevel: {
        if (step.addPrefixSpace && (p.text.empty() || p.text[0] != ' '))
          p.text.insert(p.text.begin(), ' ');
        if (step.useRegex)
          emit(p, p.text,
               detail::applyBehavior(detail::findRegexSegments(KnownRegex::kGpt2, p.text),
                                     SplitBehavior::kIsolated, false));
        else if (!p.text.empty())
          next.push_back(p);
        break;
      }
      case PreStep::Kind::kSplitRegex:
        emit(p, p.text,
             detail::applyBehavior(detail::findRegexSegments(step.regex, p.text), step.behavior,
                                   step.invert));
        break;
      case PreStep::Kind::kSplitLiteral:
        emit(p, p.text,
             detail::applyBehavior(detail::findLiteralSegments(step.literal, p.text),
                                   step.behavior, step.invert));
        break;
      case PreStep::Kind::kMetaspace: {
        std::string t = replaceAll(p.text, " ", step.replacement);
        bool startsWith = t.compare(0, step.replacement.size(), step.replacement) == 0;
        if ((step.prepend == PrependScheme::kAlways && !startsWith) ||
            (step.prepend == PrependScheme::kFirst && !startsWith && p.atOrigin))
          t = step.replacement + t;
        Piece q{t, p.atOrigin};
        if (step.split) {
          char32_t r = step.replacementChar;
          emit(q, t,
               detail::applyBehavior(
                   detail::findCharSegments([r](char32_t c) { return c == r; }, t),
                   SplitBehavior::kMergedWithNext, false));
        } else if (!t.empty()) {
          next.push_back(std::move(q));
        }
        break;
      }
      case PreStep::Kind::kDigits:
        emit(p, p.text,
             detail::applyBehavior(detail::findCharSegments(unicode::isNumber, p.text),
                                   step.individualDigits ? SplitBehavior::kIsolated
                                                         : SplitBehavior::kContiguous,
                                   false));
        break;
      }
    }
    pieces.swap(next);
    // ByteLevel maps every piece (of this step's output) to its alphabet.
    if (step.kind == PreStep::Kind::kByteLevel)
      for (Piece &p : pieces)
        p.text = byteLevelEncode(p.text);
  }
  return pieces;
}

StatusOr<Tokenizer> Tokenizer::fromJson(std::string_view text, const std::string &name) {
  json::ParseOptions opts;
  opts.maxDepth = 128;
  StatusOr<json::Value> root = json::parse(text, opts);
  if (!root.isOk())
    return invalidArgument(name + ": " + root.status().message());
  auto impl = std::make_shared<Impl>();
  Loader loader(name);
  ACCEL_RT_RETURN_IF_ERROR(loader.load(*root, *impl));

  // BOS / EOS (see the header for the rule).
  for (const PostStep &p : impl->post) {
    if (!p.items.empty() && p.items.front() && !p.items.front()->empty()) {
      impl->bos = p.items.front()->front();
      break;
    }
  }
  auto findSpecial = [&](std::initializer_list<const char *> names) -> std::optional<int32_t> {
    std::optional<int32_t> best;
    for (const char *n : names) {
      auto it = impl->addedByContent.find(n);
      if (it == impl->addedByContent.end() || !impl->specialSet.count(n))
        continue;
      if (!best || it->second < *best)
        best = it->second;
    }
    return best;
  };
  if (!impl->bos)
    impl->bos = findSpecial({"<|begin_of_text|>", "<s>", "<bos>", "<|startoftext|>"});
  impl->eos = findSpecial(
      {"</s>", "<eos>", "<|endoftext|>", "<|end_of_text|>", "<|im_end|>", "<|eot_id|>", "<|end|>"});
  return Tokenizer(std::move(impl));
}

StatusOr<Tokenizer> Tokenizer::fromFile(const std::string &path) {
  // Only a regular file (a FIFO would block), read up to its size.
  StatusOr<std::string> json = readRegularFile(path, "tokenizer");
  if (!json)
    return json.status();
  return fromJson(*json, path);
}

StatusOr<std::vector<int32_t>> Tokenizer::encode(std::string_view text,
                                                 bool addSpecialTokens) const {
  if (!impl_)
    return invalidArgument("encode: the tokenizer is not loaded");
  size_t bad = unicode::findInvalidUtf8(text);
  if (bad != std::string_view::npos)
    return invalidArgument("encode: the text is not valid UTF-8 (at byte " +
                           std::to_string(bad) + ")");
  const Impl &m = *impl_;
  std::vector<int32_t> ids;
  std::vector<std::pair<std::pair<size_t, size_t>, int32_t>> raw, norm;
  m.findAdded(text, m.rawTrie, raw);
  for (const auto &[range, id] : raw) {
    if (id >= 0) {
      ids.push_back(id);
      continue;
    }
    auto [start, end] = range;
    if (end <= start)
      continue;
    std::string normalized = m.normalize(std::string(text.substr(start, end - start)));
    m.findAdded(normalized, m.normTrie, norm);
    for (const auto &[r2, id2] : norm) {
      if (id2 >= 0) {
        ids.push_back(id2);
        continue;
      }
      if (r2.second <= r2.first)
        continue;
      Piece piece{normalized.substr(r2.first, r2.second - r2.first),
                  start == 0 && r2.first == 0};
      for (const Piece &word : m.preTokenize(std::move(piece)))
        ACCEL_RT_RETURN_IF_ERROR(m.bpe.tokenize(word.text, ids));
    }
  }
  if (addSpecialTokens) {
    for (const PostStep &p : m.post) {
      std::vector<int32_t> out;
      for (const auto &item : p.items) {
        if (item)
          out.insert(out.end(), item->begin(), item->end());
        else
          out.insert(out.end(), ids.begin(), ids.end());
      }
      ids.swap(out);
    }
  }
  return ids;
}

//===----------------------------------------------------------------------===//
// Decoding
//===----------------------------------------------------------------------===//

std::vector<std::string> Tokenizer::Impl::decodeChain(std::vector<std::string> tokens) const {
  for (const DecStep &d : decoders) {
    switch (d.kind) {
    case DecStep::Kind::kByteLevel: {
      const ByteAlphabet &a = byteAlphabet();
      std::string bytes;
      for (const std::string &t : tokens) {
        // A token made only of alphabet characters becomes its bytes; any
        // other token (an added token, say) is kept as it is.
        std::string mapped;
        bool all = true;
        size_t i = 0;
        while (i < t.size()) {
          size_t len;
          char32_t c = unicode::decodeAt(t, i, len);
          if (c >= 0x144 || a.charToByte[c] < 0) {
            all = false;
            break;
          }
          mapped += static_cast<char>(a.charToByte[c]);
          i += len;
        }
        bytes += all ? mapped : t;
      }
      tokens.assign(1, unicode::utf8Lossy(bytes));
      break;
    }
    case DecStep::Kind::kMetaspace: {
      for (size_t i = 0; i < tokens.size(); ++i) {
        std::string out;
        for (const std::string &c : splitChars(tokens[i])) {
          size_t len;
          if (unicode::decodeAt(c, 0, len) == d.ch) {
            if (i == 0 && !d.prependNever)
              continue;
            out += ' ';
          } else {
            out += c;
          }
        }
        tokens[i] = std::move(out);
      }
      break;
    }
    case DecStep::Kind::kReplace:
      for (std::string &t : tokens)
        t = replaceAll(t, d.a, d.b);
      break;
    case DecStep::Kind::kByteFallback: {
      std::vector<std::string> out;
      std::string pending;
      size_t pendingCount = 0;
      auto flush = [&] {
        if (pendingCount == 0)
          return;
        if (unicode::findInvalidUtf8(pending) == std::string_view::npos) {
          out.push_back(pending);
        } else {
          for (size_t k = 0; k < pendingCount; ++k)
            out.push_back("\xEF\xBF\xBD");
        }
        pending.clear();
        pendingCount = 0;
      };
      for (std::string &t : tokens) {
        // "<0xAB>": u8::from_str_radix on the two characters after "<0x"
        // (which accepts a leading '+').
        int value = -1;
        if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>') {
          auto hex = [](char c) {
            if (c >= '0' && c <= '9')
              return c - '0';
            if (c >= 'a' && c <= 'f')
              return c - 'a' + 10;
            if (c >= 'A' && c <= 'F')
              return c - 'A' + 10;
            return -1;
          };
          int h = hex(t[3]), l = hex(t[4]);
          if (h >= 0 && l >= 0)
            value = h * 16 + l;
          else if (t[3] == '+' && l >= 0)
            value = l;
        }
        if (value >= 0) {
          pending += static_cast<char>(value);
          ++pendingCount;
        } else {
          flush();
          out.push_back(std::move(t));
        }
      }
      flush();
      tokens.swap(out);
      break;
    }
    case DecStep::Kind::kFuse: {
      std::string all;
      for (const std::string &t : tokens)
        all += t;
      tokens.assign(1, std::move(all));
      break;
    }
    case DecStep::Kind::kStrip:
      for (std::string &t : tokens) {
        std::vector<std::string> chars = splitChars(t);
        auto is = [&](const std::string &c) {
          size_t len;
          return unicode::decodeAt(c, 0, len) == d.ch;
        };
        size_t startCut = 0;
        for (size_t i = 0; i < d.start && i < chars.size() && is(chars[i]); ++i)
          startCut = i + 1;
        size_t stopCut = chars.size();
        for (size_t i = 0; i < d.stop && i < chars.size() && is(chars[chars.size() - i - 1]);
             ++i)
          stopCut = chars.size() - i - 1;
        std::string out;
        for (size_t i = startCut; i < stopCut; ++i)
          out += chars[i];
        t = std::move(out);
      }
      break;
    }
  }
  return tokens;
}

std::string Tokenizer::decode(const std::vector<int32_t> &ids, bool skipSpecialTokens) const {
  if (!impl_)
    return std::string();
  const Impl &m = *impl_;
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    const std::string *tok = nullptr;
    auto added = m.addedById.find(id);
    if (added != m.addedById.end()) {
      auto n = m.normalizedContent.find(id);
      tok = n != m.normalizedContent.end() ? &n->second : &added->second.content;
    } else {
      tok = m.bpe.idToToken(id);
    }
    if (!tok)
      continue;
    if (skipSpecialTokens && m.specialSet.count(*tok))
      continue;
    tokens.push_back(*tok);
  }
  if (!m.hasDecoder) {
    std::string out;
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i)
        out += ' ';
      out += tokens[i];
    }
    return out;
  }
  std::string out;
  for (const std::string &t : m.decodeChain(std::move(tokens)))
    out += t;
  return out;
}

//===----------------------------------------------------------------------===//
// Vocabulary
//===----------------------------------------------------------------------===//

int64_t Tokenizer::vocabSize() const {
  if (!impl_)
    return 0;
  int64_t n = static_cast<int64_t>(impl_->bpe.vocabSize());
  for (const auto &[content, id] : impl_->addedByContent)
    if (!impl_->bpe.tokenToId(content))
      ++n;
  return n;
}

int64_t Tokenizer::idLimit() const {
  if (!impl_)
    return 0;
  int64_t limit = 0;
  for (const auto &[tok, id] : impl_->bpe.vocab())
    limit = std::max<int64_t>(limit, int64_t(id) + 1);
  for (const auto &[id, tok] : impl_->addedById)
    limit = std::max<int64_t>(limit, int64_t(id) + 1);
  return limit;
}

std::optional<int32_t> Tokenizer::tokenToId(std::string_view token) const {
  if (!impl_)
    return std::nullopt;
  auto it = impl_->addedByContent.find(std::string(token));
  if (it != impl_->addedByContent.end())
    return it->second;
  return impl_->bpe.tokenToId(token);
}

std::optional<std::string> Tokenizer::idToToken(int32_t id) const {
  if (!impl_)
    return std::nullopt;
  auto it = impl_->addedById.find(id);
  if (it != impl_->addedById.end()) {
    auto n = impl_->normalizedContent.find(id);
    return n != impl_->normalizedContent.end() ? n->second : it->second.content;
  }
  if (const std::string *t = impl_->bpe.idToToken(id))
    return *t;
  return std::nullopt;
}

bool Tokenizer::isSpecial(int32_t id) const {
  if (!impl_)
    return false;
  auto it = impl_->addedById.find(id);
  return it != impl_->addedById.end() && it->second.special;
}

std::optional<int32_t> Tokenizer::bosId() const {
  return impl_ ? impl_->bos : std::nullopt;
}

std::optional<int32_t> Tokenizer::eosId() const {
  return impl_ ? impl_->eos : std::nullopt;
}

//===----------------------------------------------------------------------===//
// DecodeStream
//===----------------------------------------------------------------------===//

DecodeStream::DecodeStream(Tokenizer tokenizer, bool skipSpecialTokens)
    : tok_(std::move(tokenizer)), skipSpecial_(skipSpecialTokens) {}

void DecodeStream::reset() {
  ids_.clear();
  prefix_.clear();
  prefixIndex_ = 0;
}

namespace {
bool endsWithReplacement(const std::string &s) {
  return s.size() >= 3 && s.compare(s.size() - 3, 3, "\xEF\xBF\xBD") == 0;
}
} // namespace

StatusOr<std::string> DecodeStream::step(int32_t id) {
  // tokenizers' step_decode_stream.
  if (prefix_.empty() && !ids_.empty()) {
    std::string newPrefix = tok_.decode(ids_, skipSpecial_);
    if (!endsWithReplacement(newPrefix)) {
      prefix_ = std::move(newPrefix);
      prefixIndex_ = ids_.size();
    }
  }
  ids_.push_back(id);
  std::string text = tok_.decode(ids_, skipSpecial_);
  if (text.size() > prefix_.size() && !endsWithReplacement(text)) {
    if (text.compare(0, prefix_.size(), prefix_) != 0)
      return internalError("decode stream: the decoder rewrote text already returned (" +
                           json::quote(prefix_) + " is no longer a prefix of " +
                           json::quote(text) + ")");
    std::string newText = text.substr(prefix_.size());
    size_t newPrefixIndex = ids_.size() - prefixIndex_;
    ids_.erase(ids_.begin(), ids_.begin() + static_cast<long>(prefixIndex_));
    prefix_ = tok_.decode(ids_, skipSpecial_);
    prefixIndex_ = newPrefixIndex;
    return newText;
  }
  return std::string();
}

} // namespace accel::rt::tok
