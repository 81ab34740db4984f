//===- PreTokenizers.cpp - the pre-tokenizers of tokenizer.json -----------===//
#include "runtime/serving/tokenizer/PreTokenizers.h"

#include "runtime/serving/tokenizer/Text.h"
#include "runtime/serving/tokenizer/Unicode.h"

namespace accel::rt::tok::detail {

namespace {

/// The Whitespace pre-tokenizer: `\w+|[^\w\s]+` (Rust's regex crate),
/// inverted and removed -- maximal runs of word characters and of other
/// non-space characters; whitespace goes.
std::vector<std::pair<size_t, size_t>> whitespaceWords(std::string_view text) {
  std::vector<std::pair<size_t, size_t>> out;
  int runKind = 0; // 0: none (space), 1: word, 2: other
  size_t runStart = 0, i = 0;
  while (i < text.size()) {
    size_t len;
    char32_t c = unicode::decodeAt(text, i, len);
    int kind = unicode::isRustWordChar(c) ? 1 : unicode::isWhitespace(c) ? 0 : 2;
    if (kind != runKind) {
      if (runKind != 0)
        out.emplace_back(runStart, i);
      runKind = kind;
      runStart = i;
    }
    i += len;
  }
  if (runKind != 0)
    out.emplace_back(runStart, text.size());
  return out;
}

Status loadSplit(const Loader &loader, const json::Value &v, const std::string &path,
                 PreTokenizer &step) {
  bool isRegex;
  std::string pattern;
  ACCEL_RT_RETURN_IF_ERROR(loader.getPattern(v, path, isRegex, pattern));
  if (isRegex) {
    if (std::optional<KnownRegex> r = recognizeRegex(pattern)) {
      step.kind = PreTokenizer::Kind::kSplitKnown; // the fast path
      step.known = *r;
    } else {
      step.kind = PreTokenizer::Kind::kSplitRegex;
      ACCEL_RT_ASSIGN_OR_RETURN(Regex re, loader.compileRegex(pattern, path + ".pattern"));
      step.regex = std::move(re);
    }
  } else {
    if (pattern.empty())
      return loader.unsupported("a Split with an empty pattern", path);
    step.kind = PreTokenizer::Kind::kSplitLiteral;
    step.literal = pattern;
  }
  if (!v.find("behavior"))
    return loader.bad("missing field 'behavior'", path);
  ACCEL_RT_RETURN_IF_ERROR(loader.getBehavior(v, path, SplitBehavior::kIsolated, step.behavior));
  return loader.getBool(v, "invert", path, step.invert);
}

Status loadMetaspace(const Loader &loader, const json::Value &v, const std::string &path,
                     PreTokenizer &step) {
  step.kind = PreTokenizer::Kind::kMetaspace;
  ACCEL_RT_RETURN_IF_ERROR(loader.getChar(v, "replacement", path, step.ch, step.replacement));
  std::optional<std::string> scheme;
  ACCEL_RT_RETURN_IF_ERROR(loader.getString(v, "prepend_scheme", path, scheme));
  step.prepend = PrependScheme::kAlways;
  if (scheme) {
    if (*scheme == "always")
      step.prepend = PrependScheme::kAlways;
    else if (*scheme == "first")
      step.prepend = PrependScheme::kFirst;
    else if (*scheme == "never")
      step.prepend = PrependScheme::kNever;
    else
      return loader.bad("unknown prepend_scheme " + json::quote(*scheme),
                        Loader::field(path, "prepend_scheme"));
  }
  const json::Value *aps = v.find("add_prefix_space");
  if (aps && aps->isBool() && !aps->asBool()) {
    if (step.prepend != PrependScheme::kNever && scheme)
      return loader.bad("add_prefix_space false does not match prepend_scheme " +
                            json::quote(*scheme),
                        path);
    step.prepend = PrependScheme::kNever;
  }
  return loader.getBool(v, "split", path, step.split);
}

} // namespace

Status loadPreTokenizer(const Loader &loader, const json::Value &v, const std::string &path,
                        std::vector<PreTokenizer> &out) {
  std::string type;
  ACCEL_RT_RETURN_IF_ERROR(loader.getType(v, path, type));
  if (type == "Sequence") {
    const json::Value *list = v.find("pretokenizers");
    if (!list || !list->isArray())
      return loader.bad("expected an array 'pretokenizers'", path);
    for (size_t i = 0; i < list->size(); ++i)
      ACCEL_RT_RETURN_IF_ERROR(loadPreTokenizer(
          loader, list->items()[i], path + ".pretokenizers[" + std::to_string(i) + "]", out));
    return Status::ok();
  }
  using Kind = PreTokenizer::Kind;
  PreTokenizer step;
  if (type == "ByteLevel") {
    step.kind = Kind::kByteLevel;
    step.addPrefixSpace = true; // the serde defaults
    step.useRegex = true;
    ACCEL_RT_RETURN_IF_ERROR(loader.getBool(v, "add_prefix_space", path, step.addPrefixSpace));
    ACCEL_RT_RETURN_IF_ERROR(loader.getBool(v, "use_regex", path, step.useRegex));
  } else if (type == "Split") {
    ACCEL_RT_RETURN_IF_ERROR(loadSplit(loader, v, path, step));
  } else if (type == "Metaspace") {
    ACCEL_RT_RETURN_IF_ERROR(loadMetaspace(loader, v, path, step));
  } else if (type == "Digits") {
    step.kind = Kind::kDigits;
    ACCEL_RT_RETURN_IF_ERROR(
        loader.getBool(v, "individual_digits", path, step.individualDigits));
  } else if (type == "Whitespace") {
    step.kind = Kind::kWhitespace;
  } else if (type == "WhitespaceSplit") {
    step.kind = Kind::kWhitespaceSplit;
  } else if (type == "BertPreTokenizer") {
    step.kind = Kind::kBert;
  } else if (type == "Punctuation") {
    step.kind = Kind::kPunctuation;
    ACCEL_RT_RETURN_IF_ERROR(
        loader.getBehavior(v, path, SplitBehavior::kIsolated, step.behavior));
  } else if (type == "CharDelimiterSplit") {
    step.kind = Kind::kCharDelimiter;
    std::string utf8;
    ACCEL_RT_RETURN_IF_ERROR(loader.getChar(v, "delimiter", path, step.ch, utf8));
  } else {
    return loader.unsupported("pre_tokenizer type '" + type + "'", path);
  }
  out.push_back(std::move(step));
  return Status::ok();
}

std::vector<Piece> preTokenize(const std::vector<PreTokenizer> &steps, Piece piece) {
  using Kind = PreTokenizer::Kind;
  std::vector<Piece> pieces;
  pieces.push_back(std::move(piece));
  std::vector<Piece> next;
  auto emit = [&](const Piece &parent, const std::string &text,
                  const std::vector<std::pair<size_t, size_t>> &ranges) {
    for (auto [s, e] : ranges)
      if (e > s)
        next.push_back({text.substr(s, e - s), parent.atOrigin && s == 0});
  };
  auto splitChars = [&](const Piece &p, bool (*pred)(char32_t), SplitBehavior behavior) {
    emit(p, p.text, applyBehavior(findCharSegments(pred, p.text), behavior, false));
  };
  for (const PreTokenizer &step : steps) {
    next.clear();
    for (Piece &p : pieces) {
      switch (step.kind) {
      case Kind::kByteLevel:
        if (step.addPrefixSpace && (p.text.empty() || p.text[0] != ' '))
          p.text.insert(p.text.begin(), ' ');
        if (step.useRegex)
          emit(p, p.text,
               applyBehavior(findRegexSegments(KnownRegex::kGpt2, p.text),
                             SplitBehavior::kIsolated, false));
        else if (!p.text.empty())
          next.push_back(p);
        break;
      case Kind::kSplitKnown:
        emit(p, p.text,
             applyBehavior(findRegexSegments(step.known, p.text), step.behavior, step.invert));
        break;
      case Kind::kSplitRegex:
        emit(p, p.text,
             applyBehavior(step.regex->findSegments(p.text), step.behavior, step.invert));
        break;
      case Kind::kSplitLiteral:
        emit(p, p.text,
             applyBehavior(findLiteralSegments(step.literal, p.text), step.behavior,
                           step.invert));
        break;
      case Kind::kMetaspace: {
        std::string t = replaceAll(p.text, " ", step.replacement);
        bool startsWith = t.compare(0, step.replacement.size(), step.replacement) == 0;
        if ((step.prepend == PrependScheme::kAlways && !startsWith) ||
            (step.prepend == PrependScheme::kFirst && !startsWith && p.atOrigin))
          t = step.replacement + t;
        Piece q{t, p.atOrigin};
        if (step.split) {
          char32_t r = step.ch;
          emit(q, t,
               applyBehavior(findCharSegments([r](char32_t c) { return c == r; }, t),
                             SplitBehavior::kMergedWithNext, false));
        } else if (!t.empty()) {
          next.push_back(std::move(q));
        }
        break;
      }
      case Kind::kDigits:
        splitChars(p, unicode::isNumber,
                   step.individualDigits ? SplitBehavior::kIsolated : SplitBehavior::kContiguous);
        break;
      case Kind::kWhitespace:
        emit(p, p.text, whitespaceWords(p.text));
        break;
      case Kind::kWhitespaceSplit:
        splitChars(p, unicode::isWhitespace, SplitBehavior::kRemoved);
        break;
      case Kind::kPunctuation:
        splitChars(p, unicode::isPunctuation, step.behavior);
        break;
      case Kind::kBert: {
        // Whitespace removed, then punctuation isolated.
        std::vector<Piece> words;
        std::swap(words, next);
        splitChars(p, unicode::isWhitespace, SplitBehavior::kRemoved);
        std::swap(words, next);
        for (const Piece &w : words)
          splitChars(w, unicode::isPunctuation, SplitBehavior::kIsolated);
        break;
      }
      case Kind::kCharDelimiter: {
        char32_t d = step.ch;
        emit(p, p.text,
             applyBehavior(findCharSegments([d](char32_t c) { return c == d; }, p.text),
                           SplitBehavior::kRemoved, false));
        break;
      }
      }
    }
    pieces.swap(next);
    // ByteLevel maps every piece (of this step's output) to its alphabet.
    if (step.kind == Kind::kByteLevel)
      for (Piece &p : pieces)
        p.text = byteLevelEncode(p.text);
  }
  return pieces;
}

} // namespace accel::rt::tok::detail
