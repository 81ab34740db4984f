//===- PreTokenizers.h - the pre-tokenizers of tokenizer.json (internal) -*- C++ -*-===//
//
// ByteLevel, Split (a string, a known regex run by a hand-written scanner,
// or any other regex run by Oniguruma), Metaspace, Digits, Whitespace,
// WhitespaceSplit, Punctuation, BertPreTokenizer, CharDelimiterSplit and
// Sequence, splitting plain strings as `tokenizers`' PreTokenizedString
// does.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_TOKENIZER_PRETOKENIZERS_H
#define ACCEL_RUNTIME_SERVING_TOKENIZER_PRETOKENIZERS_H

#include "runtime/serving/tokenizer/Loader.h"
#include "runtime/serving/tokenizer/Split.h"

#include <optional>
#include <string>
#include <vector>

namespace accel::rt::tok::detail {

enum class PrependScheme { kAlways, kFirst, kNever };

struct PreTokenizer {
  enum class Kind {
    kByteLevel, kSplitKnown, kSplitRegex, kSplitLiteral, kMetaspace, kDigits, kWhitespace,
    kWhitespaceSplit, kPunctuation, kBert, kCharDelimiter,
  };
  Kind kind = Kind::kByteLevel;
  bool addPrefixSpace = false, useRegex = true;            // ByteLevel
  KnownRegex known = KnownRegex::kGpt2;                     // Split
  std::optional<Regex> regex;                               // Split
  std::string literal;                                      // Split
  SplitBehavior behavior = SplitBehavior::kIsolated;        // Split, Punctuation
  bool invert = false;                                      // Split
  std::string replacement;                                  // Metaspace
  char32_t ch = 0;                                          // Metaspace, CharDelimiterSplit
  PrependScheme prepend = PrependScheme::kAlways;           // Metaspace
  bool split = true;                                        // Metaspace
  bool individualDigits = false;                            // Digits
};

/// A piece of the text; `atOrigin`: it starts at byte 0 of the original
/// text (Metaspace's prepend_scheme "first").
struct Piece {
  std::string text;
  bool atOrigin;
};

/// Appends the pre-tokenizer at `path` (a Sequence flattened) to `out`.
Status loadPreTokenizer(const Loader &loader, const json::Value &v, const std::string &path,
                        std::vector<PreTokenizer> &out);

/// The words of `piece`, after every pre-tokenizer in turn.
std::vector<Piece> preTokenize(const std::vector<PreTokenizer> &steps, Piece piece);

} // namespace accel::rt::tok::detail

#endif // ACCEL_RUNTIME_SERVING_TOKENIZER_PRETOKENIZERS_H
