//===- Unigram.cpp - the Unigram model of tokenizer.json ------------------===//
#include "runtime/serving/tokenizer/Unigram.h"

#include "core/Json.h"
#include "runtime/serving/tokenizer/Unicode.h"

#include <cstdio>
#include <limits>

namespace accel::rt::tok::detail {

namespace {
constexpr double kUnkPenalty = 10.0;
} // namespace

Unigram::Unigram(std::vector<std::pair<std::string, double>> pieces,
                 std::optional<int32_t> unkId, bool byteFallback)
    : pieces_(std::move(pieces)), unkId_(unkId), byteFallback_(byteFallback) {
  minScore_ = std::numeric_limits<double>::infinity();
  nodeId_.push_back(-1);
  for (size_t id = 0; id < pieces_.size(); ++id) {
    const auto &[piece, score] = pieces_[id];
    ids_[piece] = static_cast<int32_t>(id);
    minScore_ = std::min(minScore_, score);
    uint32_t n = 0;
    for (unsigned char b : piece) {
      uint64_t key = (static_cast<uint64_t>(n) << 8) | b;
      auto it = edges_.find(key);
      if (it == edges_.end()) {
        nodeId_.push_back(-1);
        it = edges_.emplace(key, static_cast<uint32_t>(nodeId_.size() - 1)).first;
      }
      n = it->second;
    }
    if (n != 0)
      nodeId_[n] = 0; // marked; the id is set below (the last equal piece wins)
  }
  for (const auto &[piece, id] : ids_) {
    uint32_t n = 0;
    for (unsigned char b : piece)
      n = edges_.at((static_cast<uint64_t>(n) << 8) | b);
    if (n != 0)
      nodeId_[n] = id;
  }
}

std::optional<int32_t> Unigram::tokenToId(std::string_view token) const {
  auto it = ids_.find(std::string(token));
  if (it == ids_.end())
    return std::nullopt;
  return it->second;
}

const std::string *Unigram::idToToken(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= pieces_.size())
    return nullptr;
  return &pieces_[static_cast<size_t>(id)].first;
}

StatusOr<std::vector<std::string_view>> Unigram::encode(std::string_view s) const {
  struct Node {
    int32_t id = 0;
    double score = 0;
    long startsAt = -1; // -1: not reached yet
  };
  const size_t size = s.size();
  const double unkScore = minScore_ - kUnkPenalty;
  std::vector<Node> best(size + 1);
  size_t start = 0;
  while (start < size) {
    double here = best[start].score;
    size_t mblen = std::min(unicode::utf8SequenceLength(static_cast<unsigned char>(s[start])), size - start);
    bool single = false;
    uint32_t n = 0;
    for (size_t k = start; k < size; ++k) {
      auto it = edges_.find((static_cast<uint64_t>(n) << 8) | static_cast<unsigned char>(s[k]));
      if (it == edges_.end())
        break;
      n = it->second;
      if (nodeId_[n] < 0)
        continue;
      size_t end = k + 1;
      Node &target = best[end];
      double candidate = pieces_[static_cast<size_t>(nodeId_[n])].second + here;
      if (target.startsAt < 0 || candidate > target.score) {
        target.score = candidate;
        target.startsAt = static_cast<long>(start);
        target.id = nodeId_[n];
      }
      if (end - start == mblen)
        single = true;
    }
    if (!single) {
      Node &target = best[start + mblen];
      double candidate = unkScore + here;
      if (target.startsAt < 0 || candidate > target.score) {
        if (!unkId_)
          return invalidArgument("encode: the Unigram model has no unk_id, and " +
                                 json::quote(std::string(s.substr(start, mblen))) +
                                 " is not in its vocabulary");
        target.score = candidate;
        target.startsAt = static_cast<long>(start);
        target.id = *unkId_;
      }
    }
    start += mblen;
  }
  // Back from the end; consecutive unknown pieces fuse into one.
  std::vector<std::string_view> out;
  size_t end = size, unkEnd = 0;
  bool inUnk = false;
  while (end > 0) {
    const Node &node = best[end];
    size_t from = static_cast<size_t>(node.startsAt);
    if (unkId_ && node.id == *unkId_) {
      if (!inUnk) {
        inUnk = true;
        unkEnd = end;
      }
    } else {
      if (inUnk) {
        out.push_back(s.substr(end, unkEnd - end));
        inUnk = false;
      }
      out.push_back(s.substr(from, end - from));
    }
    end = from;
  }
  if (inUnk)
    out.push_back(s.substr(0, unkEnd));
  return std::vector<std::string_view>(out.rbegin(), out.rend());
}

Status Unigram::tokenize(std::string_view word, std::vector<int32_t> &out) const {
  if (word.empty())
    return Status::ok();
  ACCEL_RT_ASSIGN_OR_RETURN(std::vector<std::string_view> pieces, encode(word));
  for (std::string_view piece : pieces) {
    auto it = ids_.find(std::string(piece));
    if (it != ids_.end()) {
      out.push_back(it->second);
      continue;
    }
    if (byteFallback_) {
      std::vector<int32_t> bytes;
      for (unsigned char b : piece) {
        char code[8];
        std::snprintf(code, sizeof code, "<0x%02X>", b);
        auto bt = ids_.find(code);
        if (bt == ids_.end())
          break;
        bytes.push_back(bt->second);
      }
      if (bytes.size() == piece.size()) {
        out.insert(out.end(), bytes.begin(), bytes.end());
        continue;
      }
    }
    if (!unkId_)
      return invalidArgument("encode: the Unigram model has no unk_id, and " +
                             json::quote(std::string(piece)) + " is not in its vocabulary");
    out.push_back(*unkId_);
  }
  return Status::ok();
}

} // namespace accel::rt::tok::detail
