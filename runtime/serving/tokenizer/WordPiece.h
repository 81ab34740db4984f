//===- WordPiece.h - the WordPiece and WordLevel models (internal) -*- C++ -*-===//
//
// `tokenizers`' models::wordpiece::WordPiece (greedy longest match first,
// continuing pieces spelled with continuing_subword_prefix, a word longer
// than max_input_chars_per_word or with an unknown part becoming unk_token)
// and models::wordlevel::WordLevel (a word is a token or unk_token).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_TOKENIZER_WORDPIECE_H
#define ACCEL_RUNTIME_SERVING_TOKENIZER_WORDPIECE_H

#include "runtime/serving/tokenizer/Models.h"

namespace accel::rt::tok::detail {

/// What WordPiece and WordLevel share: a Vocab and an unk_token.
class VocabModel : public Model {
public:
  size_t vocabSize() const override { return vocab_.byToken.size(); }
  std::optional<int32_t> tokenToId(std::string_view t) const override { return vocab_.find(t); }
  const std::string *idToToken(int32_t id) const override { return vocab_.token(id); }
  int64_t idLimit() const override { return vocab_.idLimit(); }

protected:
  VocabModel(Vocab vocab, std::string unkToken)
      : vocab_(std::move(vocab)), unk_(std::move(unkToken)) {}

  Vocab vocab_;
  std::string unk_;
};

class WordPiece final : public VocabModel {
public:
  WordPiece(Vocab vocab, std::string unkToken, std::string prefix, size_t maxChars)
      : VocabModel(std::move(vocab), std::move(unkToken)), prefix_(std::move(prefix)),
        maxChars_(maxChars) {}

  Status tokenize(std::string_view word, std::vector<int32_t> &out) const override;

private:
  std::string prefix_;
  size_t maxChars_;
};

class WordLevel final : public VocabModel {
public:
  WordLevel(Vocab vocab, std::string unkToken)
      : VocabModel(std::move(vocab), std::move(unkToken)) {}

  Status tokenize(std::string_view word, std::vector<int32_t> &out) const override;
};

} // namespace accel::rt::tok::detail

#endif // ACCEL_RUNTIME_SERVING_TOKENIZER_WORDPIECE_H
