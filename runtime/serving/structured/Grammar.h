//===- Grammar.h - token masks of a constrained output ----------*- C++ -*-===//
//
// A Grammar is a compiled constraint (Automaton) over one vocabulary: for
// an automaton state it gives the tokens whose bytes keep the output a
// prefix of a text the constraint matches, cached per state, and steers a
// generation to finish within its token budget (a token is allowed only if
// a match stays reachable in the tokens that remain, a single-byte token
// per byte). Stop tokens are allowed exactly where the output so far is a
// match.
//
// One Grammar may serve many sequences at once (requests with the same
// constraint share it through GrammarCache); its methods are thread-safe.
// A sequence holds only its state (an int).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_STRUCTURED_GRAMMAR_H
#define ACCEL_RUNTIME_SERVING_STRUCTURED_GRAMMAR_H

#include "core/Status.h"
#include "runtime/serving/structured/Automaton.h"

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace accel::rt::tok {
class Tokenizer;
}

namespace accel::rt::structured {

/// The tokens of a vocabulary as bytes, sorted so that tokens with a common
/// prefix are adjacent (a flattened trie).
class Vocabulary {
public:
  /// `rows` is the number of logits per step (may exceed the tokenizer's
  /// ids: such rows are never allowed).
  static std::shared_ptr<const Vocabulary> build(const tok::Tokenizer &tokenizer, int64_t rows);

  int64_t rows() const { return rows_; }
  size_t size() const { return ids_.size(); }
  const std::string &bytes(size_t i) const { return bytes_[i]; }
  int32_t id(size_t i) const { return ids_[i]; }
  /// Bytes token i shares with token i-1 (0 for the first).
  uint32_t commonPrefix(size_t i) const { return lcp_[i]; }
  /// The bytes of a token id ("" for special tokens and ids outside).
  const std::string &bytesOf(int64_t id) const;

private:
  int64_t rows_ = 0;
  std::vector<std::string> bytes_;
  std::vector<int32_t> ids_;
  std::vector<uint32_t> lcp_;
  std::vector<int32_t> position_; // id -> index into bytes_, or -1
  std::string none_;
};

class Grammar {
public:
  static constexpr int kDead = Automaton::kDead;

  Grammar(std::unique_ptr<Automaton> automaton, std::shared_ptr<const Vocabulary> vocab,
          std::string description);

  int start() const { return 0; }
  const std::string &description() const { return description_; }

  /// Writes `row` into `out` with every token not allowed in `state` set
  /// to -inf. `remaining`: the tokens this sequence may still generate,
  /// this one included. `stopIds`: the tokens that end it (allowed where
  /// the output is a match). Fails if the automaton outgrew its limit.
  Status maskRow(int state, int64_t remaining, const std::vector<int32_t> &stopIds,
                 const float *row, float *out);
  /// The state after `token` (kDead if its bytes leave the language); with
  /// `complete`, whether that state is complete() (one lock for both).
  int advance(int state, int64_t token, bool *complete = nullptr);
  bool accepting(int state);
  /// A match that no byte continues: the output is done.
  bool complete(int state);

  /// Masks computed so far (each one a walk over the vocabulary).
  size_t masksComputed() const;

private:
  struct Allowed {
    std::vector<uint64_t> bits;
    int32_t maxDistance = 0; // the largest distance after an allowed token
    int64_t count = 0;
  };
  /// Tokens allowed in `state` whose next state is at most `limit` bytes
  /// from a match (limit < 0: only tokens that complete the output);
  /// unlimited with INT32_MAX.
  std::shared_ptr<const Allowed> allowed(int state, int32_t limit);
  Allowed walk(int state, int32_t limit);
  Status resourceExhausted() const;

  mutable std::mutex mu_;
  std::unique_ptr<Automaton> a_;
  std::shared_ptr<const Vocabulary> vocab_;
  std::string description_;
  // Shared: a row is masked after the lock is dropped (sequences of one
  // grammar fill their rows in parallel) while the cache may be cleared.
  std::unordered_map<int, std::shared_ptr<const Allowed>> full_;
  std::map<std::pair<int, int32_t>, std::shared_ptr<const Allowed>> limited_;
  size_t walks_ = 0;
};

/// Compiled grammars by constraint (kind + text), least recently used
/// dropped beyond `capacity`; shared by all requests of a server.
class GrammarCache {
public:
  GrammarCache(std::shared_ptr<const Vocabulary> vocab, size_t capacity = 64)
      : vocab_(std::move(vocab)), capacity_(capacity) {}

  /// `kind`: "regex", "choice", "json_schema", "json_object" or
  /// "sequences"; `text`: the regex, the choices as a JSON array, the schema
  /// as JSON ("" for json_object), or for sequences a JSON array of
  /// alternatives, each an array of {"literal": text} / {"json_schema": S}; `whitespace`: a regex for what may follow ',' and ':'
  /// in JSON ("" for the default). Errors are one sentence.
  StatusOr<std::shared_ptr<Grammar>> get(const std::string &kind, const std::string &text,
                                         const std::string &whitespace = "");
  const Vocabulary &vocabulary() const { return *vocab_; }

private:
  std::mutex mu_;
  std::shared_ptr<const Vocabulary> vocab_;
  size_t capacity_;
  std::list<std::pair<std::string, std::shared_ptr<Grammar>>> lru_;
};

} // namespace accel::rt::structured

#endif // ACCEL_RUNTIME_SERVING_STRUCTURED_GRAMMAR_H
