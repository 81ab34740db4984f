//===- Grammar.cpp - token masks of a constrained output ------------------===//

#include "runtime/serving/structured/Grammar.h"

#include "core/Json.h"
#include "runtime/serving/structured/JsonSchema.h"
#include "runtime/serving/structured/Regex.h"
#include "runtime/serving/tokenizer/Tokenizer.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <limits>
#include <numeric>

namespace accel::rt::structured {

//===----------------------------------------------------------------------===//
// Vocabulary
//===----------------------------------------------------------------------===//

std::shared_ptr<const Vocabulary> Vocabulary::build(const tok::Tokenizer &tokenizer,
                                                    int64_t rows) {
  auto v = std::make_shared<Vocabulary>();
  v->rows_ = rows;
  std::vector<std::pair<std::string, int32_t>> all;
  const int64_t limit = std::min<int64_t>(rows, tokenizer.idLimit());
  for (int64_t id = 0; id < limit; ++id) {
    std::optional<std::string> b = tokenizer.tokenBytes(int32_t(id));
    if (b && !b->empty())
      all.emplace_back(std::move(*b), int32_t(id));
  }
  std::sort(all.begin(), all.end());
  v->position_.assign(size_t(rows), -1);
  for (size_t i = 0; i < all.size(); ++i) {
    uint32_t l = 0;
    if (i > 0) {
      const std::string &a = all[i - 1].first, &b = all[i].first;
      while (l < a.size() && l < b.size() && a[l] == b[l])
        ++l;
    }
    v->lcp_.push_back(l);
    v->position_[size_t(all[i].second)] = int32_t(i);
    v->ids_.push_back(all[i].second);
    v->bytes_.push_back(std::move(all[i].first));
  }
  return v;
}

const std::string &Vocabulary::bytesOf(int64_t id) const {
  if (id < 0 || id >= rows_ || position_[size_t(id)] < 0)
    return none_;
  return bytes_[size_t(position_[size_t(id)])];
}

//===----------------------------------------------------------------------===//
// Grammar
//===----------------------------------------------------------------------===//

Grammar::Grammar(std::unique_ptr<Automaton> automaton, std::shared_ptr<const Vocabulary> vocab,
                 std::string description)
    : a_(std::move(automaton)), vocab_(std::move(vocab)), description_(std::move(description)) {}

Grammar::Allowed Grammar::walk(int state, int32_t limit) {
  ++walks_;
  Allowed out;
  out.bits.assign(size_t((vocab_->rows() + 63) / 64), 0);
  const Vocabulary &v = *vocab_;
  // states[d]: the automaton state after the first d bytes of the current
  // token (states[0] = state); valid up to `depth`.
  std::vector<int> states(1, state);
  std::vector<std::pair<int32_t, int32_t>> candidates; // limited: (token, distance after)
  size_t i = 0;
  while (i < v.size()) {
    const std::string &b = v.bytes(i);
    size_t d = std::min<size_t>(v.commonPrefix(i), states.size() - 1);
    states.resize(d + 1);
    int s = states[d];
    while (d < b.size() && s != kDead) {
      s = a_->step(s, static_cast<uint8_t>(b[d]));
      states.push_back(s);
      ++d;
    }
    if (s == kDead) {
      // Every following token with the same first d bytes is dead too.
      const size_t dead = d; // bytes[0..dead) lead to kDead
      ++i;
      while (i < v.size() && v.commonPrefix(i) >= dead)
        ++i;
      states.resize(dead); // states[dead - 1] is the last live one
      continue;
    }
    const int32_t dist = a_->distance(s);
    const bool finishes = limit != INT32_MAX && a_->complete(s);
    const bool ok = limit == INT32_MAX || (limit >= 0 && dist <= limit) || finishes;
    if (ok) {
      const int32_t id = v.id(i);
      out.bits[size_t(id) >> 6] |= uint64_t(1) << (id & 63);
      ++out.count;
      out.maxDistance = std::max(out.maxDistance, dist);
    }
    if (limit != INT32_MAX)
      candidates.push_back({v.id(i), finishes ? -1 : dist});
    ++i;
  }
  if (limit != INT32_MAX && out.count == 0 && !candidates.empty()) {
    // No token keeps a match within `limit` bytes (the budget counts a
    // byte a token, and tokens are longer): take those that come closest,
    // so that the output closes as fast as the vocabulary allows.
    int32_t best = INT32_MAX;
    for (auto [id, dist] : candidates)
      best = std::min(best, dist);
    for (auto [id, dist] : candidates)
      if (dist == best) {
        out.bits[size_t(id) >> 6] |= uint64_t(1) << (id & 63);
        ++out.count;
        out.maxDistance = std::max(out.maxDistance, dist);
      }
  }
  return out;
}

std::shared_ptr<const Grammar::Allowed> Grammar::allowed(int state, int32_t limit) {
  // A bound on the memory of one grammar's masks (vocabulary/8 bytes each):
  // beyond it they are computed again as needed.
  constexpr size_t kMaxMasks = 2048;
  if (full_.size() + limited_.size() >= kMaxMasks) {
    full_.clear();
    limited_.clear();
  }
  auto it = full_.find(state);
  if (it == full_.end())
    it = full_.emplace(state, std::make_shared<const Allowed>(walk(state, INT32_MAX))).first;
  if (limit >= it->second->maxDistance)
    return it->second;
  auto key = std::make_pair(state, std::max<int32_t>(limit, -1));
  auto jt = limited_.find(key);
  if (jt == limited_.end())
    jt = limited_.emplace(key, std::make_shared<const Allowed>(walk(state, key.second))).first;
  return jt->second;
}

Status Grammar::maskRow(int state, int64_t remaining, const std::vector<int32_t> &stopIds,
                        const float *row, float *out) {
  std::shared_ptr<const Allowed> allowedHere;
  bool match = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state < 0)
      return internalError("the constrained output left its language");
    // After this token remaining - 1 tokens are left; a match must be at
    // most that many bytes away, less one for the stop token that ends it
    // (unless the token completes the output).
    const int64_t lim = remaining - 2;
    const int32_t limit = int32_t(std::clamp<int64_t>(lim, -1, INT32_MAX - 1));
    allowedHere = allowed(state, limit);
    if (a_->overflowed())
      return resourceExhausted();
    match = a_->accepting(state);
  }
  const Allowed &a = *allowedHere;
  const int64_t rows = vocab_->rows();
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  for (int64_t w = 0; w < (rows + 63) / 64; ++w) {
    const uint64_t bits = a.bits[size_t(w)];
    const int64_t base = w * 64, end = std::min<int64_t>(base + 64, rows);
    if (bits == 0) {
      std::fill(out + base, out + end, kNegInf);
    } else if (bits == ~uint64_t(0)) {
      std::copy(row + base, row + end, out + base);
    } else {
      // Branch-free (the bits of a mixed word are unpredictable).
      const uint32_t inf = 0xFF800000u; // -inf
      for (int64_t k = 0; k < end - base; ++k) {
        uint32_t r;
        std::memcpy(&r, row + base + k, 4);
        const uint32_t keep = 0u - uint32_t((bits >> k) & 1);
        r = (r & keep) | (inf & ~keep);
        std::memcpy(out + base + k, &r, 4);
      }
    }
  }
  for (int32_t t : stopIds)
    if (t >= 0 && t < rows)
      out[t] = match ? row[t] : kNegInf;
  return Status::ok();
}

Status Grammar::resourceExhausted() const {
  return invalidArgument("the constraint's automaton outgrew its limit of states (" +
                         description_ + ")");
}

int Grammar::advance(int state, int64_t token, bool *complete) {
  std::lock_guard<std::mutex> lock(mu_);
  if (complete)
    *complete = false;
  if (state < 0)
    return kDead;
  const std::string &b = vocab_->bytesOf(token);
  if (b.empty())
    return kDead;
  const int next = a_->walk(state, b);
  if (complete && next >= 0)
    *complete = a_->complete(next);
  return next;
}

bool Grammar::accepting(int state) {
  std::lock_guard<std::mutex> lock(mu_);
  return state >= 0 && a_->accepting(state);
}

bool Grammar::complete(int state) {
  std::lock_guard<std::mutex> lock(mu_);
  return state >= 0 && a_->complete(state);
}

size_t Grammar::masksComputed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return walks_;
}

//===----------------------------------------------------------------------===//
// GrammarCache
//===----------------------------------------------------------------------===//

StatusOr<std::shared_ptr<Grammar>> GrammarCache::get(const std::string &kind,
                                                     const std::string &text,
                                                     const std::string &whitespace) {
  const std::string key = kind + '\0' + whitespace + '\0' + text;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = lru_.begin(); it != lru_.end(); ++it)
      if (it->first == key) {
        lru_.splice(lru_.begin(), lru_, it);
        return it->second;
      }
  }
  JsonPatternOptions options;
  if (!whitespace.empty()) {
    StatusOr<PatternPtr> ws = parseRegex(whitespace);
    if (!ws)
      return Status(ws.status().code(), "the whitespace pattern: " + ws.status().message());
    options.whitespace = *ws;
  }
  PatternPtr pattern;
  if (kind == "regex") {
    StatusOr<PatternPtr> p = parseRegex(text);
    if (!p)
      return p.status();
    pattern = *p;
  } else if (kind == "choice") {
    StatusOr<json::Value> v = json::parse(text);
    if (!v || !v->isArray() || v->items().empty())
      return invalidArgument("the choices must be a non-empty array of strings");
    std::vector<PatternPtr> options2;
    for (const json::Value &c : v->items()) {
      if (!c.isString())
        return invalidArgument("the choices must be a non-empty array of strings");
      options2.push_back(literal(c.asString()));
    }
    pattern = alt(std::move(options2));
  } else if (kind == "json_schema") {
    StatusOr<json::Value> v = json::parse(text);
    if (!v)
      return invalidArgument("the JSON schema is not JSON: " + v.status().message());
    StatusOr<PatternPtr> p = jsonSchemaPattern(*v, options);
    if (!p)
      return p.status();
    pattern = *p;
  } else if (kind == "json_object") {
    pattern = anyJsonObject(options);
  } else if (kind == "sequences") {
    // Alternatives, each a sequence of {"literal": text} and
    // {"json_schema": schema} parts (a forced tool call: its name, its
    // arguments' schema, what closes it).
    StatusOr<json::Value> v = json::parse(text);
    if (!v || !v->isArray() || v->items().empty())
      return invalidArgument("the sequences must be a non-empty array of arrays");
    std::vector<PatternPtr> alternatives;
    for (const json::Value &seq : v->items()) {
      if (!seq.isArray())
        return invalidArgument("the sequences must be a non-empty array of arrays");
      std::vector<PatternPtr> parts;
      for (const json::Value &part : seq.items()) {
        const json::Value *lit = part.find("literal");
        const json::Value *schema = part.find("json_schema");
        if (lit && lit->isString()) {
          parts.push_back(literal(lit->asString()));
        } else if (schema) {
          StatusOr<PatternPtr> p = jsonSchemaPattern(*schema, options);
          if (!p)
            return p.status();
          parts.push_back(*p);
        } else {
          return invalidArgument("a sequence part must be {\"literal\": text} or "
                                 "{\"json_schema\": schema}");
        }
      }
      alternatives.push_back(concat(std::move(parts)));
    }
    pattern = alt(std::move(alternatives));
  } else {
    return invalidArgument("unknown constraint kind '" + kind + "'");
  }
  StatusOr<std::unique_ptr<Automaton>> a = Automaton::compile(pattern);
  if (!a)
    return a.status();
  auto g = std::make_shared<Grammar>(std::move(*a), vocab_, kind);
  std::lock_guard<std::mutex> lock(mu_);
  lru_.emplace_front(key, g);
  while (lru_.size() > capacity_)
    lru_.pop_back();
  return g;
}

} // namespace accel::rt::structured
