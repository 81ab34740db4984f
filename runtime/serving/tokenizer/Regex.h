//===- Regex.h - Oniguruma regexes for tokenizer.json (internal) -*- C++ -*-===//
//
// The regexes of tokenizer.json (Split pre-tokenizers, Replace normalizers
// and decoders) that the hand-written scanners of Split.h do not know, run
// by Oniguruma -- the engine `tokenizers` itself uses (its onig crate), with
// the same syntax (ONIG_SYNTAX_DEFAULT, UTF-8, no options) and the same
// iteration over matches (onig's FindMatches). libonig.so.5 is opened with
// dlopen on first use, so nothing that links the tokenizer needs it to start.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_TOKENIZER_REGEX_H
#define ACCEL_RUNTIME_SERVING_TOKENIZER_REGEX_H

#include "core/Status.h"
#include "runtime/serving/tokenizer/Split.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace accel::rt::tok::detail {

class Regex {
public:
  /// Compiles `pattern`; the error is Oniguruma's message ("invalid
  /// character property name {Foo}", ...), without any location, or
  /// (kUnimplemented) why libonig.so.5 cannot be loaded.
  static StatusOr<Regex> compile(std::string_view pattern);

  /// Like `tokenizers`' Pattern::find_matches for a SysRegex: the segments
  /// cover `text` (valid UTF-8) in order, an empty text gives one empty
  /// non-match; an empty match right after the previous match is skipped.
  std::vector<Segment> findSegments(std::string_view text) const;

  /// Every match of `text` replaced by `content` (NormalizedString::replace
  /// and the Replace decoder).
  std::string replaceAll(std::string_view text, std::string_view content) const;

  /// The Oniguruma version loaded, e.g. "6.9.8" ("" when none can be).
  static const char *engineVersion();

private:
  struct Compiled;
  std::shared_ptr<const Compiled> re_;
};

} // namespace accel::rt::tok::detail

#endif // ACCEL_RUNTIME_SERVING_TOKENIZER_REGEX_H
