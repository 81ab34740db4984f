//===- SpeculativeAcceptance.h - which draft tokens a target keeps -*- C++ -*-===//
//
// The verification rule of speculative decoding (Leviathan et al. 2023,
// Chen et al. 2023; vLLM's rejection sampler). A draft proposes tokens
// d_1..d_k; the target scores them in one step and gives k+1 rows, row i
// the distribution of the token after d_1..d_i.
//
//  - Greedy: the longest prefix where the target's argmax equals the draft,
//    then the target's own token at the first mismatch (or after the last
//    draft): 1..k+1 tokens, exactly the tokens plain greedy decoding gives.
//  - Sampling: draft token x is kept with probability min(1, p(x) / q(x)),
//    p the target's final distribution (after temperature, top-k/p, min-p,
//    penalty) and q the draft's; the first one refused is replaced by a draw
//    from norm(max(0, p - q)); when all k are kept, one more token is drawn
//    from the last row's p. Every emitted token is then distributed as p.
//    Drafts that are a point mass (greedy draft plans, n-gram lookup) have
//    q(x) = 1: keep x with probability p(x), else draw from p without x.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_SAMPLER_SPECULATIVEACCEPTANCE_H
#define ACCEL_RUNTIME_SERVING_SAMPLER_SPECULATIVEACCEPTANCE_H

#include "runtime/serving/sampler/Sampler.h"

#include <cstdint>
#include <vector>

namespace accel::rt::sampler {

/// Greedy verification: `draft` [k], `target` [k + 1] the target's argmax of
/// each row. The kept drafts, then the target's next token (1..k+1 tokens).
std::vector<int64_t> acceptGreedy(const std::vector<int64_t> &draft,
                                  const std::vector<int64_t> &target);

/// One draft position of the sampling rule.
struct DraftDecision {
  bool accepted = false;
  int32_t token = -1; // the draft token, or the one drawn in its place
};

/// Keeps `draftToken` when u1 < p(x) / q(x), else draws from
/// norm(max(0, p - q)) with u2. `p`, `q`: sparse distributions (TokenProb
/// lists, as Sampler::distribution gives); `q` null: the point mass at
/// draftToken. u1, u2 uniform in [0, 1). When p - q leaves no mass (p == q),
/// a refusal cannot happen, so u2 is unused.
DraftDecision acceptOrResample(const std::vector<TokenProb> &p,
                               const std::vector<TokenProb> *q, int32_t draftToken,
                               double u1, double u2);

/// A draw from the sparse distribution `p` with the uniform u (the inverse
/// CDF in list order; -1 when p is empty).
int32_t drawFrom(const std::vector<TokenProb> &p, double u);

} // namespace accel::rt::sampler

#endif // ACCEL_RUNTIME_SERVING_SAMPLER_SPECULATIVEACCEPTANCE_H
