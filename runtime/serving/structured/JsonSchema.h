//===- JsonSchema.h - JSON schemas as Patterns ------------------*- C++ -*-===//
//
// The language of the JSON texts that validate against a JSON schema, as a
// Pattern (docs/structured-output.md lists the keywords and what they do).
// Texts are compact: no whitespace except what `whitespace` allows after
// each ',' and ':' (one optional space by default), object members in the
// schema's `properties` order. Keywords that cannot be enforced are
// refused, so every text the Pattern matches validates.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_STRUCTURED_JSONSCHEMA_H
#define ACCEL_RUNTIME_SERVING_STRUCTURED_JSONSCHEMA_H

#include "core/Json.h"
#include "core/Status.h"
#include "runtime/serving/structured/Pattern.h"

namespace accel::rt::structured {

struct JsonPatternOptions {
  /// What may follow each ',' and ':' (nullptr: one optional space).
  PatternPtr whitespace;
  /// How deeply arrays and objects nest inside a value whose schema leaves
  /// it open (`{}`, `true`, a missing `items`, `json_object`).
  int anyValueDepth = 4;
  /// How many times one `$ref` may be entered within itself.
  int maxRefDepth = 3;
};

/// The texts valid under `schema`; errors are one sentence naming the
/// keyword and its JSON path ("... at schema.properties.age").
StatusOr<PatternPtr> jsonSchemaPattern(const json::Value &schema,
                                       const JsonPatternOptions &options = {});

/// Any JSON object (OpenAI's `response_format: {"type": "json_object"}`).
PatternPtr anyJsonObject(const JsonPatternOptions &options = {});

} // namespace accel::rt::structured

#endif // ACCEL_RUNTIME_SERVING_STRUCTURED_JSONSCHEMA_H
