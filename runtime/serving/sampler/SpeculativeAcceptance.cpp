//===- SpeculativeAcceptance.cpp - which draft tokens a target keeps ------===//
#include "runtime/serving/sampler/SpeculativeAcceptance.h"

#include <algorithm>
#include <unordered_map>

namespace accel::rt::sampler {

std::vector<int64_t> acceptGreedy(const std::vector<int64_t> &draft,
                                  const std::vector<int64_t> &target) {
  std::vector<int64_t> out;
  size_t i = 0;
  for (; i < draft.size() && i + 1 < target.size() && draft[i] == target[i]; ++i)
    out.push_back(draft[i]);
  if (i < target.size())
    out.push_back(target[i]);
  return out;
}

int32_t drawFrom(const std::vector<TokenProb> &p, double u) {
  double total = 0;
  for (const TokenProb &t : p)
    total += t.prob;
  const double target = u * total;
  double cum = 0;
  int32_t last = -1;
  for (const TokenProb &t : p) {
    if (t.prob <= 0)
      continue;
    cum += t.prob;
    last = t.token;
    if (cum > target)
      return t.token;
  }
  return last;
}

DraftDecision acceptOrResample(const std::vector<TokenProb> &p,
                               const std::vector<TokenProb> *q, int32_t draftToken,
                               double u1, double u2) {
  auto probOf = [](const std::vector<TokenProb> &d, int32_t token) {
    for (const TokenProb &t : d)
      if (t.token == token)
        return t.prob;
    return 0.0;
  };
  const double px = probOf(p, draftToken);
  const double qx = q ? probOf(*q, draftToken) : 1.0;
  // min(1, p/q) > u1, written without the division (q(x) > 0 for a token
  // the draft proposed; a zero q is kept as p > 0 would be).
  if (px > 0 && (qx <= 0 || u1 * qx < px))
    return {true, draftToken};
  // norm(max(0, p - q)), in p's order.
  std::vector<TokenProb> residual;
  residual.reserve(p.size());
  if (!q) {
    for (const TokenProb &t : p)
      if (t.token != draftToken && t.prob > 0)
        residual.push_back(t);
  } else {
    std::unordered_map<int32_t, double> qm;
    for (const TokenProb &t : *q)
      qm[t.token] = t.prob;
    for (const TokenProb &t : p) {
      auto it = qm.find(t.token);
      const double r = t.prob - (it == qm.end() ? 0.0 : it->second);
      if (r > 0)
        residual.push_back({t.token, r});
    }
  }
  if (residual.empty()) // p == q on p's support: the draft is always kept
    return {true, draftToken};
  return {false, drawFrom(residual, u2)};
}

} // namespace accel::rt::sampler
