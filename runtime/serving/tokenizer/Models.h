//===- Models.h - the models of tokenizer.json (internal) -------*- C++ -*-===//
//
// The interface of the four models (BPE, Unigram, WordPiece, WordLevel) and
// the loader that picks one from tokenizer.json's "model".
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_TOKENIZER_MODELS_H
#define ACCEL_RUNTIME_SERVING_TOKENIZER_MODELS_H

#include "core/Status.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace accel::rt::json {
class Value;
} // namespace accel::rt::json

namespace accel::rt::tok::detail {

class Loader;

class Model {
public:
  virtual ~Model() = default;
  /// Appends the ids of one pre-tokenized word. Fails only when an unknown
  /// token is needed and the model has none.
  virtual Status tokenize(std::string_view word, std::vector<int32_t> &out) const = 0;
  /// get_vocab_size().
  virtual size_t vocabSize() const = 0;
  virtual std::optional<int32_t> tokenToId(std::string_view token) const = 0;
  /// nullptr when the id is not the model's.
  virtual const std::string *idToToken(int32_t id) const = 0;
  /// One more than the largest id.
  virtual int64_t idLimit() const = 0;
};

/// A token -> id vocabulary and its inverse, shared by the models that read
/// "vocab" as an object.
struct Vocab {
  std::unordered_map<std::string, int32_t> byToken;
  std::unordered_map<int32_t, std::string> byId;
  std::optional<int32_t> find(std::string_view token) const {
    auto it = byToken.find(std::string(token));
    if (it == byToken.end())
      return std::nullopt;
    return it->second;
  }
  const std::string *token(int32_t id) const {
    auto it = byId.find(id);
    return it == byId.end() ? nullptr : &it->second;
  }
  int64_t idLimit() const;
};

/// The model at "model": BPE (also without "type" when it has merges),
/// Unigram, WordPiece or WordLevel.
Status loadModel(const Loader &loader, const json::Value &v, std::unique_ptr<Model> &out);

} // namespace accel::rt::tok::detail

#endif // ACCEL_RUNTIME_SERVING_TOKENIZER_MODELS_H
