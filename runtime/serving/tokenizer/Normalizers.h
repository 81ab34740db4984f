//===- Normalizers.h - the normalizers of tokenizer.json (internal) -*- C++ -*-===//
//
// NFC, NFD, NFKC, NFKD, Lowercase, Strip, StripAccents, Replace (a string or
// a regex), Prepend, BertNormalizer, Nmt, ByteLevel and Sequence, applied
// to plain strings as `tokenizers`' NormalizedString does (offsets are not
// tracked: accel needs ids only).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_TOKENIZER_NORMALIZERS_H
#define ACCEL_RUNTIME_SERVING_TOKENIZER_NORMALIZERS_H

#include "runtime/serving/tokenizer/Loader.h"

#include <optional>
#include <string>
#include <vector>

namespace accel::rt::tok::detail {

struct Normalizer {
  enum class Kind {
    kNFC, kNFD, kNFKC, kNFKD, kLowercase, kStrip, kStripAccents, kReplace, kPrepend,
    kBert, kNmt, kByteLevel,
  };
  Kind kind = Kind::kNFC;
  std::string a, b;                // Prepend: a; Replace: a -> b
  std::optional<Regex> regex;      // Replace with a Regex pattern
  bool left = false, right = false; // Strip
  // BertNormalizer
  bool cleanText = true, chineseChars = true, stripAccents = true, lowercase = true;
};

/// Appends the normalizer at `path` (a Sequence flattened) to `out`.
Status loadNormalizer(const Loader &loader, const json::Value &v, const std::string &path,
                      std::vector<Normalizer> &out);

/// `s` (valid UTF-8) through every normalizer in turn. When `atOrigin` is
/// given, it is cleared if the result's first character no longer stands
/// where `s` began -- a normalizer removed what was in front of it (Strip,
/// a filter, a Replace with ""), as `tokenizers`' alignments would show;
/// Metaspace's prepend_scheme "first" looks at that.
std::string normalize(const std::vector<Normalizer> &normalizers, std::string s,
                      bool *atOrigin = nullptr);

} // namespace accel::rt::tok::detail

#endif // ACCEL_RUNTIME_SERVING_TOKENIZER_NORMALIZERS_H
