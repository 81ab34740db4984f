//===- Tokenizer.h - Hugging Face tokenizer.json in C++ ---------*- C++ -*-===//
//
// Encodes and decodes text exactly like the `tokenizers` Python package does
// for tokenizer.json files: BPE (byte-level like GPT-2, Llama-3, Qwen2, or
// SentencePiece-style like Llama-2, Mistral, Gemma), Unigram (T5, ...),
// WordPiece (BERT, ...) and WordLevel models, with their normalizers,
// pre-tokenizers (any Split regex), post-processors and decoders.
// What is supported, and how everything else fails, is in docs/tokenizer.md.
//
// A Tokenizer is immutable once loaded: copies share it, and encode/decode
// may be called from any number of threads.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_TOKENIZER_TOKENIZER_H
#define ACCEL_RUNTIME_SERVING_TOKENIZER_TOKENIZER_H

#include "core/Status.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel::rt::tok {

class Tokenizer {
public:
  /// An empty tokenizer: encode fails, decode returns "". Use fromJson or
  /// fromFile.
  Tokenizer() = default;

  /// Loads a tokenizer.json. Errors are one sentence, "<name>: <what> at
  /// <where>" with <where> a JSON path such as model.merges[12]:
  /// kInvalidArgument for malformed JSON or a malformed tokenizer,
  /// kUnimplemented for a component accel does not implement (it is named).
  static StatusOr<Tokenizer> fromJson(std::string_view json,
                                      const std::string &name = "tokenizer.json");
  /// Reads and loads a file (kNotFound when it cannot be read); errors are
  /// prefixed with the path.
  static StatusOr<Tokenizer> fromFile(const std::string &path);

  /// The ids of `text` (UTF-8), with the post-processor's special tokens
  /// (BOS, ...) when addSpecialTokens. Special tokens written in the text
  /// are recognised. Fails (kInvalidArgument) on ill-formed UTF-8.
  StatusOr<std::vector<int32_t>> encode(std::string_view text,
                                        bool addSpecialTokens = true) const;
  /// The ids of a pair of sequences (encode(a, b) in `tokenizers`): each
  /// encoded alone, then joined by the post-processor's pair template (a
  /// then b without one, or without addSpecialTokens).
  StatusOr<std::vector<int32_t>> encodePair(std::string_view a, std::string_view b,
                                            bool addSpecialTokens = true) const;

  /// The text of `ids`; ids that are not in the vocabulary are skipped, and
  /// so are special tokens when skipSpecialTokens. Bytes that do not form
  /// UTF-8 become U+FFFD.
  std::string decode(const std::vector<int32_t> &ids, bool skipSpecialTokens = true) const;

  /// The number of distinct tokens, added tokens included (what
  /// `tokenizers`' get_vocab_size() returns).
  int64_t vocabSize() const;
  /// One more than the largest id of any token (the rows an embedding table
  /// needs at least).
  int64_t idLimit() const;
  std::optional<int32_t> tokenToId(std::string_view token) const;
  /// The token string of an id (added tokens first, then the model's).
  std::optional<std::string> idToToken(int32_t id) const;
  /// Whether the id is an added token marked special.
  bool isSpecial(int32_t id) const;
  /// The bytes the token adds to a text it continues (not necessarily
  /// UTF-8: a byte-level token may hold part of a character), or nullopt
  /// for an id outside the vocabulary and for special tokens.
  std::optional<std::string> tokenBytes(int32_t id) const;

  /// The BOS id: the first token the post-processor puts before the text
  /// (TemplateProcessing's first special token, Roberta/Bert's cls), else
  /// the first special added token spelled <|begin_of_text|>, <s>, <bos> or
  /// <|startoftext|>. Best effort: prefer the model's generation config.
  std::optional<int32_t> bosId() const;
  /// The EOS id: the special added token with the lowest id among </s>,
  /// <eos>, <|endoftext|>, <|end_of_text|>, <|im_end|>, <|eot_id|>, <|end|>.
  /// Best effort: chat models often stop on another token; prefer the
  /// model's generation config.
  std::optional<int32_t> eosId() const;

  bool isLoaded() const { return impl_ != nullptr; }

  struct Impl;

private:
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
  friend class DecodeStream;
};

/// Streaming decode for generation, the algorithm of `tokenizers`'
/// DecodeStream: feed ids one at a time; each step returns the text that
/// the new id completes, holding back text while it ends in an incomplete
/// UTF-8 sequence (U+FFFD), so the pieces concatenate to the full decode.
class DecodeStream {
public:
  explicit DecodeStream(Tokenizer tokenizer, bool skipSpecialTokens = true);

  /// The new text, "" while nothing is complete. Fails (kInternal) only if
  /// the decoder rewrote text already returned, which byte-level and
  /// SentencePiece-style decoders do not do.
  StatusOr<std::string> step(int32_t id);

  /// Starts over (a new sequence).
  void reset();

private:
  Tokenizer tok_;
  bool skipSpecial_;
  std::vector<int32_t> ids_;
  std::string prefix_;
  size_t prefixIndex_ = 0;
};

} // namespace accel::rt::tok

#endif // ACCEL_RUNTIME_SERVING_TOKENIZER_TOKENIZER_H
