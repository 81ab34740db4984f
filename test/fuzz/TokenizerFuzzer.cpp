//===- TokenizerFuzzer.cpp - libFuzzer target for the tokenizer.json loader ===//
//
// Feeds arbitrary bytes to Tokenizer::fromJson (runtime/serving/tokenizer),
// which loads the tokenizer a plan carries. A malformed or unsupported
// tokenizer must be an error, never a crash or a hang. A tokenizer that
// loads must then work: it encodes a few fixed texts (special tokens and
// all) or fails with a Status, decodes what it encoded and every id up to a
// bound, and streams the decode, all without a crash.
//
//===----------------------------------------------------------------------===//
#include "runtime/serving/tokenizer/Tokenizer.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

using namespace accel::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view json(reinterpret_cast<const char *>(data), size);
  StatusOr<tok::Tokenizer> t = tok::Tokenizer::fromJson(json, "fuzz.json");
  if (!t)
    return 0;
  (void)t->vocabSize();
  (void)t->bosId();
  (void)t->eosId();
  static const char *const kTexts[] = {
      "Hello, world! It's 2026: 12345 tokens.",
      " leading  and   inner spaces\n\nand\r\nlines\t",
      "caf\xc3\xa9 \xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x98\x80 e\xcc\x81",
      "<|endoftext|><s></s><|im_start|>user<|im_end|>[SEP]<mask>",
  };
  for (const char *text : kTexts) {
    for (bool special : {true, false}) {
      StatusOr<std::vector<int32_t>> ids = t->encode(text, special);
      if (!ids)
        continue;
      (void)t->decode(*ids, /*skipSpecialTokens=*/true);
      (void)t->decode(*ids, /*skipSpecialTokens=*/false);
    }
  }
  // Every id below a bound (and a few outside the vocabulary), one at a
  // time and streamed.
  const int32_t limit = int32_t(std::min<int64_t>(t->idLimit(), 512));
  std::vector<int32_t> all;
  for (int32_t id = -2; id < limit + 2; ++id) {
    (void)t->idToToken(id);
    (void)t->isSpecial(id);
    all.push_back(id);
  }
  (void)t->decode(all, false);
  tok::DecodeStream stream(*t, /*skipSpecialTokens=*/true);
  for (int32_t id : all)
    (void)stream.step(id);
  return 0;
}
