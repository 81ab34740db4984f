//===- Bpe.cpp - the BPE model of tokenizer.json --------------------------===//
#include "runtime/serving/tokenizer/Bpe.h"

#include "core/Json.h"
#include "runtime/serving/tokenizer/Unicode.h"

#include <algorithm>
#include <cstdio>
#include <queue>

namespace accel::rt::tok::detail {

namespace {

uint64_t pairKey(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

struct Symbol {
  int32_t id;
  long prev, next;
  size_t len; // bytes of the word it covers; 0 once merged away
};

struct Merge {
  size_t pos;
  uint32_t rank;
  int32_t newId;
};

/// The top of the queue is the lowest rank, then the leftmost position
/// (Ord for Merge in tokenizers/src/models/bpe/word.rs).
struct MergeLess {
  bool operator()(const Merge &a, const Merge &b) const {
    if (a.rank != b.rank)
      return a.rank > b.rank;
    return a.pos > b.pos;
  }
};

} // namespace

StatusOr<Bpe> Bpe::build(std::unordered_map<std::string, int32_t> vocab,
                         const std::vector<std::pair<std::string, std::string>> &merges,
                         Options options, const std::string &where) {
  Bpe bpe;
  bpe.opts_ = std::move(options);
  bpe.vocab_ = std::move(vocab);
  bpe.vocabR_.reserve(bpe.vocab_.size());
  for (const auto &[tok, id] : bpe.vocab_)
    bpe.vocabR_[id] = tok;
  size_t prefixLen =
      bpe.opts_.continuingSubwordPrefix ? bpe.opts_.continuingSubwordPrefix->size() : 0;
  bpe.merges_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto &[a, b] = merges[rank];
    auto missing = [&](const std::string &tok) {
      return invalidArgument("token " + json::quote(tok) + " of the merge " + json::quote(a) +
                             " + " + json::quote(b) + " is not in model.vocab at " + where +
                             "[" + std::to_string(rank) + "]");
    };
    auto ia = bpe.vocab_.find(a);
    if (ia == bpe.vocab_.end())
      return missing(a);
    auto ib = bpe.vocab_.find(b);
    if (ib == bpe.vocab_.end())
      return missing(b);
    std::string merged = a + (b.size() >= prefixLen ? b.substr(prefixLen) : std::string());
    auto im = bpe.vocab_.find(merged);
    if (im == bpe.vocab_.end())
      return missing(merged);
    // A repeated pair keeps its last rank, as collecting into a HashMap does.
    bpe.merges_[pairKey(ia->second, ib->second)] = {static_cast<uint32_t>(rank), im->second};
  }
  return bpe;
}

std::optional<int32_t> Bpe::tokenToId(std::string_view token) const {
  auto it = vocab_.find(std::string(token));
  if (it == vocab_.end())
    return std::nullopt;
  return it->second;
}

const std::string *Bpe::idToToken(int32_t id) const {
  auto it = vocabR_.find(id);
  return it == vocabR_.end() ? nullptr : &it->second;
}

int64_t Bpe::idLimit() const {
  int64_t limit = 0;
  for (const auto &[tok, id] : vocab_)
    limit = std::max<int64_t>(limit, int64_t(id) + 1);
  return limit;
}

Status Bpe::tokenize(std::string_view word, std::vector<int32_t> &out) const {
  if (word.empty())
    return Status::ok();
  if (opts_.ignoreMerges) {
    auto it = vocab_.find(std::string(word));
    if (it != vocab_.end()) {
      out.push_back(it->second);
      return Status::ok();
    }
  }

  // merge_word: one symbol per character (or per byte with byte_fallback,
  // or an unk symbol).
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  auto add = [&](int32_t id, size_t len) {
    long idx = static_cast<long>(symbols.size());
    symbols.push_back({id, idx - 1, -1, len});
    if (idx > 0)
      symbols[idx - 1].next = idx;
  };
  std::optional<std::pair<int32_t, size_t>> unk;
  auto unkId = [&]() -> StatusOr<int32_t> {
    auto it = vocab_.find(*opts_.unkToken);
    if (it == vocab_.end())
      return invalidArgument("encode: model.unk_token " + json::quote(*opts_.unkToken) +
                             " of the tokenizer is not in model.vocab (it is needed for " +
                             json::quote(word) + ")");
    return it->second;
  };
  std::string s;
  size_t i = 0;
  while (i < word.size()) {
    size_t len = unicode::utf8SequenceLength(static_cast<unsigned char>(word[i]));
    if (i + len > word.size())
      len = word.size() - i;
    bool isFirst = i == 0, isLast = i + len == word.size();
    s.assign(word.substr(i, len));
    if (!isFirst && opts_.continuingSubwordPrefix)
      s = *opts_.continuingSubwordPrefix + s;
    if (isLast && opts_.endOfWordSuffix)
      s += *opts_.endOfWordSuffix;
    i += len;

    auto it = vocab_.find(s);
    if (it != vocab_.end()) {
      if (unk) {
        add(unk->first, unk->second);
        unk.reset();
      }
      add(it->second, len);
      continue;
    }
    if (opts_.byteFallback) {
      std::vector<int32_t> bytes;
      bool all = true;
      for (unsigned char b : s) {
        char code[8];
        std::snprintf(code, sizeof code, "<0x%02X>", b);
        auto bt = vocab_.find(code);
        if (bt == vocab_.end()) {
          all = false;
          break;
        }
        bytes.push_back(bt->second);
      }
      if (all) {
        // As in tokenizers, a pending unk is not flushed here.
        for (int32_t id : bytes)
          add(id, 1);
        continue;
      }
    }
    if (opts_.unkToken) {
      if (unk && opts_.fuseUnk) {
        unk->second += len;
      } else {
        if (unk)
          add(unk->first, unk->second);
        ACCEL_RT_ASSIGN_OR_RETURN(int32_t id, unkId());
        unk = std::make_pair(id, len);
      }
    }
    // Without unk_token an unknown character is dropped, as in tokenizers.
  }
  if (unk)
    add(unk->first, unk->second);

  // merge_all
  std::priority_queue<Merge, std::vector<Merge>, MergeLess> queue;
  for (size_t k = 0; k + 1 < symbols.size(); ++k) {
    auto m = merges_.find(pairKey(symbols[k].id, symbols[k + 1].id));
    if (m != merges_.end())
      queue.push({k, m->second.first, m->second.second});
  }
  while (!queue.empty()) {
    Merge top = queue.top();
    queue.pop();
    Symbol &cur = symbols[top.pos];
    if (cur.len == 0 || cur.next == -1)
      continue;
    size_t nextPos = static_cast<size_t>(cur.next);
    Symbol right = symbols[nextPos];
    auto target = merges_.find(pairKey(cur.id, right.id));
    if (target == merges_.end() || target->second.second != top.newId)
      continue; // an expired entry
    cur.id = top.newId;
    cur.len += right.len;
    cur.next = right.next;
    symbols[nextPos].len = 0;
    if (right.next > -1 && static_cast<size_t>(right.next) < symbols.size())
      symbols[static_cast<size_t>(right.next)].prev = static_cast<long>(top.pos);
    if (cur.prev >= 0) {
      auto m = merges_.find(pairKey(symbols[static_cast<size_t>(cur.prev)].id, cur.id));
      if (m != merges_.end())
        queue.push({static_cast<size_t>(cur.prev), m->second.first, m->second.second});
    }
    if (cur.next >= 0 && static_cast<size_t>(cur.next) < symbols.size()) {
      auto m = merges_.find(pairKey(cur.id, symbols[static_cast<size_t>(cur.next)].id));
      if (m != merges_.end())
        queue.push({top.pos, m->second.first, m->second.second});
    }
  }
  for (const Symbol &sym : symbols)
    if (sym.len != 0)
      out.push_back(sym.id);
  return Status::ok();
}

} // namespace accel::rt::tok::detail
