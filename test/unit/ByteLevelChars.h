//===- ByteLevelChars.h - GPT-2's byte table for unit tests -----*- C++ -*-===//
//
// The byte -> character table of byte-level BPE vocabularies, written out
// independently of the tokenizer's own (TokenizerTest, StructuredTest build
// tokenizer.json files with it).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_TEST_UNIT_BYTELEVELCHARS_H
#define ACCEL_TEST_UNIT_BYTELEVELCHARS_H

#include "runtime/serving/tokenizer/Unicode.h"

#include <cstdint>
#include <string>
#include <vector>

namespace accel::test {

/// GPT-2's byte -> character table: printable bytes map to themselves, the
/// others to U+0100 onwards in order.
inline std::vector<std::string> byteChars() {
  std::vector<std::string> out(256);
  int n = 0;
  for (int b = 0; b < 256; ++b) {
    bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    uint32_t cp = printable ? b : 256 + n++;
    std::string s;
    rt::tok::unicode::appendUtf8(s, cp);
    out[b] = s;
  }
  return out;
}

} // namespace accel::test

#endif // ACCEL_TEST_UNIT_BYTELEVELCHARS_H
