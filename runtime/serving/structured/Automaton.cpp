//===- Automaton.cpp - a Pattern as a byte-level automaton ----------------===//

#include "runtime/serving/structured/Automaton.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <string>

namespace accel::rt::structured {

namespace {

struct ByteRange {
  uint8_t lo, hi;
};

void encode(char32_t c, uint8_t *out, int n) {
  for (int i = n - 1; i > 0; --i) {
    out[i] = uint8_t(0x80 | (c & 0x3F));
    c >>= 6;
  }
  static const uint8_t lead[5] = {0, 0, 0xC0, 0xE0, 0xF0};
  out[0] = uint8_t(lead[n] | c);
}

int encodedLength(char32_t c) { return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }

/// The UTF-8 byte-range sequences that together encode exactly [lo, hi]
/// (the split of Russ Cox's / regex-syntax's Utf8Sequences).
void utf8Sequences(char32_t lo, char32_t hi, std::vector<std::vector<ByteRange>> &out) {
  if (lo > hi)
    return;
  if (lo <= 0xDFFF && hi >= 0xD800) { // no surrogates
    if (lo < 0xD800)
      utf8Sequences(lo, 0xD7FF, out);
    if (hi > 0xDFFF)
      utf8Sequences(0xE000, hi, out);
    return;
  }
  static const char32_t maxOfLength[] = {0x7F, 0x7FF, 0xFFFF, 0x10FFFF};
  for (char32_t m : maxOfLength)
    if (lo <= m && hi > m) {
      utf8Sequences(lo, m, out);
      utf8Sequences(m + 1, hi, out);
      return;
    }
  int n = encodedLength(lo);
  for (int i = 1; i < n; ++i) {
    char32_t mask = (char32_t(1) << (6 * i)) - 1;
    if ((lo & ~mask) != (hi & ~mask)) {
      if ((lo & mask) != 0) {
        utf8Sequences(lo, lo | mask, out);
        utf8Sequences((lo | mask) + 1, hi, out);
        return;
      }
      if ((hi & mask) != mask) {
        utf8Sequences(lo, (hi & ~mask) - 1, out);
        utf8Sequences(hi & ~mask, hi, out);
        return;
      }
    }
  }
  uint8_t a[4], b[4];
  encode(lo, a, n);
  encode(hi, b, n);
  std::vector<ByteRange> seq;
  for (int i = 0; i < n; ++i)
    seq.push_back({a[i], b[i]});
  out.push_back(std::move(seq));
}

} // namespace

class NfaBuilder {
public:
  NfaBuilder(Automaton &a, size_t limit) : a_(a), limit_(limit) {}

  struct Frag {
    int32_t in, out;
  };

  int32_t node() {
    if (a_.nfa_.size() >= limit_) {
      tooBig_ = true;
      return 0;
    }
    a_.nfa_.emplace_back();
    return int32_t(a_.nfa_.size() - 1);
  }
  void eps(int32_t from, int32_t to) {
    if (!tooBig_)
      a_.nfa_[size_t(from)].eps.push_back(to);
  }
  void edge(int32_t from, uint8_t lo, uint8_t hi, int32_t to) {
    if (!tooBig_)
      a_.nfa_[size_t(from)].edges.push_back({lo, hi, to});
  }
  bool tooBig() const { return tooBig_; }

  Frag build(const Pattern &p) {
    if (tooBig_)
      return {0, 0};
    switch (p.kind) {
    case Pattern::Kind::kEmpty: {
      int32_t s = node();
      return {s, s};
    }
    case Pattern::Kind::kNothing:
      return {node(), node()};
    case Pattern::Kind::kChars: {
      int32_t s = node(), e = node();
      std::vector<std::vector<ByteRange>> seqs;
      for (auto [lo, hi] : p.chars.ranges)
        utf8Sequences(lo, std::min<char32_t>(hi, 0x10FFFF), seqs);
      // Share the path of a common first byte range (e.g. the many
      // sequences of a large class that start with the same lead bytes).
      std::map<std::pair<int, int>, int32_t> firstHop;
      for (const std::vector<ByteRange> &seq : seqs) {
        int32_t at = s;
        for (size_t i = 0; i < seq.size(); ++i) {
          int32_t to;
          if (i + 1 == seq.size()) {
            to = e;
          } else if (i == 0) {
            auto key = std::make_pair(int(seq[0].lo), int(seq[0].hi));
            auto it = firstHop.find(key);
            if (it != firstHop.end()) {
              at = it->second;
              continue;
            }
            to = node();
            firstHop[key] = to;
          } else {
            to = node();
          }
          edge(at, seq[i].lo, seq[i].hi, to);
          at = to;
        }
      }
      return {s, e};
    }
    case Pattern::Kind::kConcat: {
      Frag f = build(*p.parts[0]);
      for (size_t i = 1; i < p.parts.size(); ++i) {
        Frag g = build(*p.parts[i]);
        eps(f.out, g.in);
        f.out = g.out;
      }
      return f;
    }
    case Pattern::Kind::kAlt: {
      int32_t s = node(), e = node();
      for (const PatternPtr &part : p.parts) {
        Frag g = build(*part);
        eps(s, g.in);
        eps(g.out, e);
      }
      return {s, e};
    }
    case Pattern::Kind::kRepeat: {
      const Pattern &x = *p.parts[0];
      int32_t s = node();
      int32_t at = s;
      for (int64_t i = 0; i < p.min; ++i) {
        Frag g = build(x);
        eps(at, g.in);
        at = g.out;
      }
      int32_t e = node();
      eps(at, e);
      if (p.max < 0) {
        Frag g = build(x);
        eps(at, g.in);
        eps(g.out, at);
      } else {
        for (int64_t i = p.min; i < p.max && !tooBig_; ++i) {
          Frag g = build(x);
          eps(at, g.in);
          eps(g.out, e);
          at = g.out;
        }
      }
      return {s, e};
    }
    case Pattern::Kind::kList: {
      const Pattern &elem = *p.parts[0], &sep = *p.parts[1];
      int32_t s = node(), e = node();
      int32_t at = s;
      for (int64_t i = 1; i < p.min; ++i) { // min - 1 leading "elem sep"
        Frag g = build(elem);
        eps(at, g.in);
        Frag h = build(sep);
        eps(g.out, h.in);
        at = h.out;
      }
      Frag g = build(elem);
      eps(at, g.in);
      eps(g.out, e);
      Frag h = build(sep);
      eps(g.out, h.in);
      eps(h.out, g.in);
      if (p.min == 0)
        eps(s, e);
      return {s, e};
    }
    }
    return {node(), node()};
  }

private:
  Automaton &a_;
  size_t limit_;
  bool tooBig_ = false;
};

StatusOr<std::unique_ptr<Automaton>> Automaton::compile(const PatternPtr &pattern,
                                                         size_t maxNfaStates,
                                                         size_t maxDfaStates) {
  auto a = std::unique_ptr<Automaton>(new Automaton());
  a->maxDfaStates_ = maxDfaStates;
  NfaBuilder b(*a, maxNfaStates);
  NfaBuilder::Frag f = b.build(*pattern);
  if (b.tooBig())
    return invalidArgument("the constraint is too large: its automaton needs more than " +
                           std::to_string(maxNfaStates) + " states");
  a->accept_ = f.out;

  // Fewest bytes to the accept node: 0-1 BFS over reversed edges.
  const size_t n = a->nfa_.size();
  std::vector<std::vector<std::pair<int32_t, int>>> rev(n);
  for (size_t u = 0; u < n; ++u) {
    for (int32_t v : a->nfa_[u].eps)
      rev[size_t(v)].emplace_back(int32_t(u), 0);
    for (const Edge &ed : a->nfa_[u].edges)
      rev[size_t(ed.to)].emplace_back(int32_t(u), 1);
  }
  constexpr int32_t kInf = std::numeric_limits<int32_t>::max();
  a->nfaDistance_.assign(n, kInf);
  std::deque<int32_t> q;
  a->nfaDistance_[size_t(f.out)] = 0;
  q.push_back(f.out);
  while (!q.empty()) {
    int32_t v = q.front();
    q.pop_front();
    for (auto [u, w] : rev[size_t(v)]) {
      int32_t d = a->nfaDistance_[size_t(v)] + w;
      if (d < a->nfaDistance_[size_t(u)]) {
        a->nfaDistance_[size_t(u)] = d;
        if (w == 0)
          q.push_front(u);
        else
          q.push_back(u);
      }
    }
  }
  if (a->nfaDistance_[size_t(f.in)] == kInf)
    return invalidArgument("the constraint matches no text at all");
  a->intern({f.in});
  return a;
}

int Automaton::intern(std::vector<int32_t> from) {
  // Epsilon closure, keeping the nodes that matter: those with byte edges,
  // and the accept node. Nodes that cannot reach a match are dropped.
  std::vector<char> seen(nfa_.size(), 0);
  std::vector<int32_t> stack = from, kept;
  for (int32_t s : from)
    seen[size_t(s)] = 1;
  constexpr int32_t kInf = std::numeric_limits<int32_t>::max();
  while (!stack.empty()) {
    int32_t u = stack.back();
    stack.pop_back();
    if (nfaDistance_[size_t(u)] == kInf)
      continue;
    if (!nfa_[size_t(u)].edges.empty() || u == accept_)
      kept.push_back(u);
    for (int32_t v : nfa_[size_t(u)].eps)
      if (!seen[size_t(v)]) {
        seen[size_t(v)] = 1;
        stack.push_back(v);
      }
  }
  if (kept.empty())
    return kDead;
  std::sort(kept.begin(), kept.end());
  auto it = ids_.find(kept);
  if (it != ids_.end())
    return it->second;
  if (dfa_.size() >= maxDfaStates_) {
    overflowed_ = true;
    return kDead;
  }
  DfaState st;
  st.distance = kInf;
  for (int32_t u : kept) {
    st.accepting |= u == accept_;
    st.distance = std::min(st.distance, nfaDistance_[size_t(u)]);
  }
  st.nodes = kept;
  int id = int(dfa_.size());
  dfa_.push_back(std::move(st));
  ids_.emplace(std::move(kept), id);
  return id;
}

void Automaton::expand(int state) {
  std::array<std::vector<int32_t>, 256> targets;
  for (int32_t u : dfa_[size_t(state)].nodes)
    for (const Edge &e : nfa_[size_t(u)].edges)
      for (int b = e.lo; b <= e.hi; ++b)
        targets[size_t(b)].push_back(e.to);
  std::map<std::vector<int32_t>, int> local;
  std::array<int32_t, 256> next;
  for (int b = 0; b < 256; ++b) {
    std::vector<int32_t> &t = targets[size_t(b)];
    if (t.empty()) {
      next[size_t(b)] = kDead;
      continue;
    }
    std::sort(t.begin(), t.end());
    t.erase(std::unique(t.begin(), t.end()), t.end());
    auto it = local.find(t);
    if (it == local.end())
      it = local.emplace(t, intern(t)).first; // may grow dfa_
    next[size_t(b)] = it->second;
  }
  DfaState &st = dfa_[size_t(state)];
  st.next = next;
  st.expanded = true;
}

int Automaton::step(int state, uint8_t byte) {
  if (!dfa_[size_t(state)].expanded)
    expand(state);
  return dfa_[size_t(state)].next[byte];
}

int Automaton::walk(int state, std::string_view bytes) {
  for (char c : bytes) {
    state = step(state, static_cast<uint8_t>(c));
    if (state == kDead)
      return kDead;
  }
  return state;
}

bool Automaton::complete(int state) {
  if (!accepting(state))
    return false;
  if (!dfa_[size_t(state)].expanded)
    expand(state);
  for (int32_t t : dfa_[size_t(state)].next)
    if (t != kDead)
      return false;
  return true;
}

} // namespace accel::rt::structured
