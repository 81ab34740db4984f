//===- Automaton.h - a Pattern as a byte-level automaton --------*- C++ -*-===//
//
// Compiles a Pattern to an NFA over UTF-8 bytes (Thompson's construction;
// code-point ranges become byte-range sequences, surrogates excluded) and
// runs it as a DFA built lazily, one state's 256 transitions at a time.
// Each state knows the fewest bytes that lead from it to a match, so a
// generation can always be steered to end within its token budget.
//
// Not thread-safe: the owner (Grammar) serialises access.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_STRUCTURED_AUTOMATON_H
#define ACCEL_RUNTIME_SERVING_STRUCTURED_AUTOMATON_H

#include "core/Status.h"
#include "runtime/serving/structured/Pattern.h"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

namespace accel::rt::structured {

class Automaton {
public:
  static constexpr int kDead = -1;

  /// Fails (kInvalidArgument) when the NFA would need more than maxNfaStates
  /// states, or when the pattern matches nothing.
  /// The limits bound what one request can make the server hold (an NFA
  /// state is ~50 bytes, a DFA state ~1.1 KB).
  static StatusOr<std::unique_ptr<Automaton>> compile(const PatternPtr &pattern,
                                                      size_t maxNfaStates = 200000,
                                                      size_t maxDfaStates = 16384);

  int start() const { return 0; }
  /// The state after `byte`, or kDead. kDead also once the DFA would exceed
  /// its state limit (then overflowed() is true).
  int step(int state, uint8_t byte);
  /// The state after `bytes` (kDead if any byte leads nowhere).
  int walk(int state, std::string_view bytes);
  bool accepting(int state) const { return dfa_[size_t(state)].accepting; }
  /// The fewest bytes from `state` to a match (0 when accepting).
  int32_t distance(int state) const { return dfa_[size_t(state)].distance; }
  /// Accepting, and no byte continues it: the output is finished.
  bool complete(int state);
  bool overflowed() const { return overflowed_; }
  size_t numNfaStates() const { return nfa_.size(); }
  size_t numDfaStates() const { return dfa_.size(); }

private:
  struct Edge {
    uint8_t lo, hi;
    int32_t to;
  };
  struct NfaNode {
    std::vector<Edge> edges;
    std::vector<int32_t> eps;
  };
  struct DfaState {
    std::vector<int32_t> nodes; // important NFA nodes (byte edges, or the accept node)
    bool accepting = false;
    int32_t distance = 0;
    bool expanded = false;
    std::array<int32_t, 256> next;
  };

  friend class NfaBuilder;
  int intern(std::vector<int32_t> closureOf);
  void expand(int state);

  std::vector<NfaNode> nfa_;
  int32_t accept_ = 0;
  std::vector<int32_t> nfaDistance_;
  std::vector<DfaState> dfa_;
  std::map<std::vector<int32_t>, int> ids_;
  size_t maxDfaStates_ = 0;
  bool overflowed_ = false;
};

} // namespace accel::rt::structured

#endif // ACCEL_RUNTIME_SERVING_STRUCTURED_AUTOMATON_H
