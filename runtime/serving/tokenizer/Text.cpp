//===- Text.cpp - string helpers of the tokenizer -------------------------===//
#include "runtime/serving/tokenizer/Text.h"

#include "runtime/serving/tokenizer/Unicode.h"

#include <algorithm>
#include <iterator>

namespace accel::rt::tok::detail {

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

ByteAlphabet::ByteAlphabet() {
  std::fill(std::begin(charToByte), std::end(charToByte), static_cast<int16_t>(-1));
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
    char32_t c = printable ? static_cast<char32_t>(b) : next++;
    unicode::appendUtf8(byteToUtf8[b], c);
    charToByte[c] = static_cast<int16_t>(b);
  }
}

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

} // namespace accel::rt::tok::detail
