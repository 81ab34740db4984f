//===- Split.h - pre-tokenizer splitting (internal) -------------*- C++ -*-===//
//
// The pieces of `tokenizers`' splitting that the Tokenizer uses: the known
// pre-tokenizer regexes as hand-written scanners over code points, literal
// patterns, and SplitDelimiterBehavior. Internal to accel_tokenizer; the
// header exists so that the unit tests can reach the scanners.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_TOKENIZER_SPLIT_H
#define ACCEL_RUNTIME_SERVING_TOKENIZER_SPLIT_H

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace accel::rt::tok::detail {

/// The regexes we implement, recognised by their exact pattern string.
enum class KnownRegex {
  /// GPT-2's (also the ByteLevel pre-tokenizer's built-in one):
  /// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  kGpt2,
  /// Llama-3's: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|
  /// \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  kLlama3,
  /// Qwen2's: the same with \p{N} instead of \p{N}{1,3}.
  kQwen2,
};

/// The pattern string of a known regex.
const char *knownRegexPattern(KnownRegex r);
/// The known regex spelled exactly `pattern`, if any.
std::optional<KnownRegex> recognizeRegex(std::string_view pattern);

/// A byte range [start, end) of the text and whether it is a match.
struct Segment {
  size_t start, end;
  bool isMatch;
};

/// Like `tokenizers`' Pattern::find_matches for the regex (Oniguruma
/// find_iter): the segments cover `text` (valid UTF-8) in order; an empty
/// text gives one empty non-match.
std::vector<Segment> findRegexSegments(KnownRegex r, std::string_view text);
/// The same for a literal string pattern (non-overlapping, leftmost).
/// An empty pattern matches nothing.
std::vector<Segment> findLiteralSegments(std::string_view pattern, std::string_view text);
/// The same for "every code point for which `pred` holds is a match".
std::vector<Segment> findCharSegments(const std::function<bool(char32_t)> &pred,
                                      std::string_view text);

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };
std::optional<SplitBehavior> parseSplitBehavior(std::string_view name);

/// Applies a SplitDelimiterBehavior to segments (inverting the match flags
/// first when `invert`): the byte ranges of the resulting pieces, empty ones
/// included (the caller drops them, as `tokenizers` does).
std::vector<std::pair<size_t, size_t>> applyBehavior(std::vector<Segment> segments,
                                                     SplitBehavior behavior, bool invert);

} // namespace accel::rt::tok::detail

#endif // ACCEL_RUNTIME_SERVING_TOKENIZER_SPLIT_H
