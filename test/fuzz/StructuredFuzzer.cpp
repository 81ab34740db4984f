//===- StructuredFuzzer.cpp - libFuzzer target for structured output -----===//
//
// A constraint from a request (runtime/serving/structured): byte 0 picks a
// regex (even) or a JSON schema (odd); the bytes up to the first '\0' are
// its text, the bytes after it are walked through the automaton.
//
// What must hold: compiling never crashes and stays within the automaton's
// limits (or fails with a Status); walking any bytes never crashes; a state
// is accepting exactly when its distance to a match is 0; one byte brings a
// state at most one byte closer to a match.
//
//===----------------------------------------------------------------------===//
#include "runtime/serving/structured/Automaton.h"
#include "runtime/serving/structured/JsonSchema.h"
#include "runtime/serving/structured/Regex.h"

#include "core/Json.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace accel::rt;
using namespace accel::rt::structured;

namespace {
[[noreturn]] void die(const char *what) {
  std::fprintf(stderr, "structured fuzzer: %s\n", what);
  std::abort();
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  const bool schema = data[0] & 1;
  std::string rest(reinterpret_cast<const char *>(data + 1), size - 1);
  const size_t nul = rest.find('\0');
  const std::string text = rest.substr(0, nul);
  const std::string walk = nul == std::string::npos ? "" : rest.substr(nul + 1);
  StatusOr<PatternPtr> p = [&]() -> StatusOr<PatternPtr> {
    if (!schema)
      return parseRegex(text);
    StatusOr<json::Value> v = json::parse(text);
    if (!v)
      return v.status();
    return jsonSchemaPattern(*v);
  }();
  if (!p)
    return 0;
  StatusOr<std::unique_ptr<Automaton>> a = Automaton::compile(*p, 20000, 2000);
  if (!a)
    return 0;
  Automaton &m = **a;
  if (m.numNfaStates() > 20000 || m.numDfaStates() > 2000)
    die("the automaton outgrew its limits");
  int s = m.start();
  for (char c : walk) {
    if (m.accepting(s) != (m.distance(s) == 0))
      die("accepting is not distance 0");
    int t = m.step(s, static_cast<uint8_t>(c));
    if (t == Automaton::kDead)
      break;
    if (m.distance(t) < m.distance(s) - 1)
      die("one byte brought a state more than one byte closer to a match");
    s = t;
  }
  return 0;
}
