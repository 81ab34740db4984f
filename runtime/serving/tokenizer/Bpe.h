//===- Bpe.h - the BPE model of tokenizer.json (internal) -------*- C++ -*-===//
//
// `tokenizers`' models::bpe::BPE without dropout: vocab, merge ranks,
// unk_token / fuse_unk, byte_fallback, continuing_subword_prefix,
// end_of_word_suffix and ignore_merges, merging exactly as Word::merge_all
// does (lowest rank first, ties to the leftmost pair).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_TOKENIZER_BPE_H
#define ACCEL_RUNTIME_SERVING_TOKENIZER_BPE_H

#include "core/Status.h"
#include "runtime/serving/tokenizer/Models.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace accel::rt::tok::detail {

class Bpe final : public Model {
public:
  struct Options {
    std::optional<std::string> unkToken;
    std::optional<std::string> continuingSubwordPrefix;
    std::optional<std::string> endOfWordSuffix;
    bool fuseUnk = false;
    bool byteFallback = false;
    bool ignoreMerges = false;
  };

  Bpe() = default;
  /// `merges` in rank order. Errors name the merge that refers to a token
  /// missing from the vocabulary: "... at <where>[rank]".
  static StatusOr<Bpe> build(std::unordered_map<std::string, int32_t> vocab,
                             const std::vector<std::pair<std::string, std::string>> &merges,
                             Options options, const std::string &where);

  /// Appends the ids of one pre-tokenized word. Fails only when unk_token
  /// is needed and is not in the vocabulary.
  Status tokenize(std::string_view word, std::vector<int32_t> &out) const override;

  size_t vocabSize() const override { return vocab_.size(); }
  std::optional<int32_t> tokenToId(std::string_view token) const override;
  const std::string *idToToken(int32_t id) const override;
  int64_t idLimit() const override;

private:
  std::unordered_map<std::string, int32_t> vocab_;
  std::unordered_map<int32_t, std::string> vocabR_;
  // (left id, right id) -> (rank, merged id)
  std::unordered_map<uint64_t, std::pair<uint32_t, int32_t>> merges_;
  Options opts_;
};

} // namespace accel::rt::tok::detail

#endif // ACCEL_RUNTIME_SERVING_TOKENIZER_BPE_H
