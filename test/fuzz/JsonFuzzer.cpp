//===- JsonFuzzer.cpp - libFuzzer target for the JSON parser --------------===//
//
// Feeds arbitrary bytes to accel::rt::json::parse (core/Json.h), which reads
// every request body, tokenizer.json and plan metadata JSON. Bad input must
// be an error (one sentence naming the byte), never a crash, a hang or a
// deep recursion. What parses must survive a round trip: written compactly
// and indented, it parses back to an equal value, and writing that again
// gives the same text.
//
//===----------------------------------------------------------------------===//
#include "core/Json.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace accel::rt;

namespace {
[[noreturn]] void die(const char *what, const std::string &detail) {
  std::fprintf(stderr, "json fuzzer: %s: %s\n", what, detail.c_str());
  std::abort();
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  StatusOr<json::Value> v = json::parse(text);
  if (!v) {
    const std::string &m = v.status().message();
    if (m.find(" at byte ") == std::string::npos)
      die("an error that does not name its byte", m);
    return 0;
  }
  for (int indent : {0, 2}) {
    std::string written = json::write(*v, indent);
    StatusOr<json::Value> back = json::parse(written);
    if (!back)
      die("written JSON does not parse", back.status().message() + " in " + written);
    if (*back != *v)
      die("the round trip changed the value", written);
    if (json::write(*back, indent) != written)
      die("writing the value read back gives other text", written);
  }
  // quote() takes any bytes (invalid UTF-8 becomes U+FFFD) and gives a
  // string literal that parses.
  StatusOr<json::Value> s = json::parse(json::quote(text));
  if (!s || !s->isString())
    die("quote() of the input does not parse as a string", json::quote(text));
  return 0;
}
