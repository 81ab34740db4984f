//===- Unigram.h - the Unigram model of tokenizer.json (internal) -*- C++ -*-===//
//
// `tokenizers`' models::unigram::Unigram (encode_optimized): the Viterbi
// path over the pieces' log probabilities, unknown characters scored
// min_score - 10 and fused, then byte fallback (<0xAB> pieces) or unk_id
// for a piece that is not in the vocabulary.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_TOKENIZER_UNIGRAM_H
#define ACCEL_RUNTIME_SERVING_TOKENIZER_UNIGRAM_H

#include "runtime/serving/tokenizer/Models.h"

#include <utility>

namespace accel::rt::tok::detail {

class Unigram final : public Model {
public:
  /// `pieces` in id order with their scores; `unkId` < pieces.size().
  Unigram(std::vector<std::pair<std::string, double>> pieces, std::optional<int32_t> unkId,
          bool byteFallback);

  Status tokenize(std::string_view word, std::vector<int32_t> &out) const override;
  size_t vocabSize() const override { return pieces_.size(); }
  std::optional<int32_t> tokenToId(std::string_view token) const override;
  const std::string *idToToken(int32_t id) const override;
  int64_t idLimit() const override { return static_cast<int64_t>(pieces_.size()); }

private:
  /// The piece strings of the best segmentation (unknown runs fused).
  StatusOr<std::vector<std::string_view>> encode(std::string_view s) const;

  std::vector<std::pair<std::string, double>> pieces_;
  std::unordered_map<std::string, int32_t> ids_; // the last of equal pieces wins
  // A byte trie over the pieces: node -> id (-1: no piece ends here).
  std::vector<int32_t> nodeId_;
  std::unordered_map<uint64_t, uint32_t> edges_; // (node << 8 | byte) -> node
  std::optional<int32_t> unkId_;
  bool byteFallback_;
  double minScore_;
};

} // namespace accel::rt::tok::detail

#endif // ACCEL_RUNTIME_SERVING_TOKENIZER_UNIGRAM_H
