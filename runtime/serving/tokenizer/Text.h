//===- Text.h - string helpers of the tokenizer (internal) ------*- C++ -*-===//
//
// Small string operations the tokenizer's components share: literal
// replacement, White_Space trimming, splitting into characters, and the
// byte-level alphabet (GPT-2's bytes_to_unicode).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_TOKENIZER_TEXT_H
#define ACCEL_RUNTIME_SERVING_TOKENIZER_TEXT_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace accel::rt::tok::detail {

/// Every non-overlapping occurrence of `from` (non-empty) replaced by `to`.
std::string replaceAll(std::string_view s, std::string_view from, std::string_view to);
/// The byte length of the leading White_Space of s.
size_t leadingWhitespace(std::string_view s);
/// Where the trailing White_Space of s starts (s.size() when none).
size_t trailingWhitespaceStart(std::string_view s);
/// The last code point of valid UTF-8 `s` (0 when empty).
char32_t lastCodePoint(std::string_view s);
/// The characters of valid UTF-8 `s`, each as its own string.
std::vector<std::string> splitChars(std::string_view s);

/// GPT-2's bytes_to_unicode: every byte as a printable character.
struct ByteAlphabet {
  std::string byteToUtf8[256];
  int16_t charToByte[0x144]; // code points up to U+0143; -1: none
  ByteAlphabet();
};
const ByteAlphabet &byteAlphabet();
/// Every byte of `s` as its alphabet character.
std::string byteLevelEncode(std::string_view s);

} // namespace accel::rt::tok::detail

#endif // ACCEL_RUNTIME_SERVING_TOKENIZER_TEXT_H
