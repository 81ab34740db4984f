//===- Decoders.h - the decoders of tokenizer.json (internal) ---*- C++ -*-===//
//
// ByteLevel, Metaspace, Replace (a string or a regex), ByteFallback, Fuse,
// Strip, WordPiece, BPEDecoder, CTC and Sequence: `tokenizers`'
// Decoder::decode_chain over token strings.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_TOKENIZER_DECODERS_H
#define ACCEL_RUNTIME_SERVING_TOKENIZER_DECODERS_H

#include "runtime/serving/tokenizer/Loader.h"

#include <optional>
#include <string>
#include <vector>

namespace accel::rt::tok::detail {

struct Decoder {
  enum class Kind {
    kByteLevel, kMetaspace, kReplace, kByteFallback, kFuse, kStrip, kWordPiece, kBpe, kCtc,
  };
  Kind kind = Kind::kByteLevel;
  // Replace: a -> b; WordPiece: prefix a; BPEDecoder: suffix a;
  // CTC: pad token a, word delimiter b.
  std::string a, b;
  std::optional<Regex> regex; // Replace with a Regex pattern
  char32_t ch = 0;            // Metaspace replacement, Strip content
  bool prependNever = false;  // Metaspace
  bool cleanup = true;        // WordPiece, CTC
  size_t start = 0, stop = 0; // Strip
};

/// Appends the decoder at `path` (a Sequence flattened) to `out`.
Status loadDecoder(const Loader &loader, const json::Value &v, const std::string &path,
                   std::vector<Decoder> &out);

/// The token strings through every decoder in turn (their concatenation is
/// the text). With midText, the tokens are taken as continuing a text
/// (Metaspace and WordPiece treat none as the first, Strip does nothing) and
/// the result is raw bytes (ByteLevel and ByteFallback make no U+FFFD of an
/// incomplete UTF-8 sequence): Tokenizer::tokenBytes.
std::vector<std::string> decodeChain(const std::vector<Decoder> &decoders,
                                     std::vector<std::string> tokens, bool midText = false);

} // namespace accel::rt::tok::detail

#endif // ACCEL_RUNTIME_SERVING_TOKENIZER_DECODERS_H
