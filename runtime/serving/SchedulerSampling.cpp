//===- SchedulerSampling.cpp - a sequence's next token --------------------===//
//
// The scheduler's part that turns a step's logits into tokens: the masks of
// structured output, allowed_token_ids, logit_bias, bad_words and
// min_tokens; sampling (on the ParallelFor threads, one sequence each);
// prompt logprobs; speculative verification; then the token's text, stop
// conditions and events (docs/serving.md, "Scheduling").
//
//===----------------------------------------------------------------------===//
#include "runtime/serving/SchedulerImpl.h"

#include "runtime/engine/Speculative.h"
#include "runtime/serving/sampler/SpeculativeAcceptance.h"
#include "runtime/serving/structured/Grammar.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace accel::rt::serve::detail {

/// The logprob, rank and top alternatives of `token` in `row`.
PromptLogprob promptLogprob(const float *row, int64_t vocab, int64_t token, int64_t top) {
  float mx = -std::numeric_limits<float>::infinity();
  for (int64_t k = 0; k < vocab; ++k)
    mx = std::max(mx, row[k]);
  double sum = 0;
  for (int64_t k = 0; k < vocab; ++k)
    sum += std::exp(double(row[k]) - double(mx));
  const double lse = double(mx) + std::log(sum);
  PromptLogprob lp;
  lp.token = token;
  lp.logprob = float(double(row[token]) - lse);
  for (int64_t k = 0; k < vocab; ++k)
    lp.rank += row[k] > row[token];
  if (top > 0) {
    // The best `top` ids (higher logit first, then the lower id) in a heap
    // of that size: one pass, no vocabulary-sized buffer per position.
    const size_t m = size_t(std::min(top, vocab));
    auto better = [&](int64_t a, int64_t b) {
      return row[a] > row[b] || (row[a] == row[b] && a < b);
    };
    std::vector<int64_t> heap; // the worst kept at the front
    heap.reserve(m);
    for (int64_t k = 0; k < vocab; ++k) {
      if (heap.size() < m) {
        heap.push_back(k);
        std::push_heap(heap.begin(), heap.end(), better);
      } else if (better(k, heap.front())) {
        std::pop_heap(heap.begin(), heap.end(), better);
        heap.back() = k;
        std::push_heap(heap.begin(), heap.end(), better);
      }
    }
    std::sort(heap.begin(), heap.end(), better);
    for (int64_t id : heap)
      lp.top.emplace_back(id, float(double(row[id]) - lse));
  }
  return lp;
}

const float *SchedulerImpl::maskedRow(const Sequence &s, const float *row,
                                      std::vector<float> &mask_, std::string &err) const {
  if (!masksTokens(s))
    return row;
  const int64_t vocab = engine_.vocabSize();
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  // A NaN or +inf must still fail the request as the sampler would, even
  // where the mask would cover it: copy such a row unmasked.
  for (int64_t i = 0; i < vocab; ++i)
    if (!(row[i] < std::numeric_limits<float>::infinity()))
      return row;
  if (s.req.grammar) {
    // The constraint first; the other masks narrow it further.
    mask_.resize(size_t(vocab));
    const int64_t remaining = std::min(s.req.maxTokens - s.numGenerated,
                                       engine_.maxModelLen() - int64_t(s.tokens.size()));
    Status st = s.req.grammar->maskRow(s.grammarState, remaining, s.criteria.stopTokenIds, row,
                                       mask_.data());
    if (!st.isOk()) {
      err = st.message();
      return nullptr;
    }
    if (!s.req.allowedTokenIds.empty()) {
      std::vector<float> keep(size_t(vocab), kNegInf);
      for (int64_t t : s.req.allowedTokenIds)
        keep[size_t(t)] = mask_[size_t(t)];
      mask_.swap(keep);
    }
  } else if (s.req.allowedTokenIds.empty()) {
    mask_.assign(row, row + vocab);
  } else {
    mask_.assign(size_t(vocab), kNegInf);
    for (int64_t t : s.req.allowedTokenIds)
      mask_[size_t(t)] = row[t];
  }
  for (const auto &[t, bias] : s.req.logitBias)
    mask_[size_t(t)] += bias; // a -inf (not allowed) stays -inf
  if (s.numGenerated < s.req.minTokens)
    for (int32_t t : s.criteria.stopTokenIds)
      mask_[size_t(t)] = kNegInf;
  // bad_words: a one-token word always; a longer one's last token where
  // the output so far ends with the word's other tokens.
  const int64_t *out = s.tokens.data() + s.promptLen;
  for (const std::vector<int64_t> &w : s.badWordIds) {
    const int64_t k = int64_t(w.size());
    if (k - 1 > s.numGenerated)
      continue;
    if (w.back() >= 0 && w.back() < vocab &&
        std::equal(w.begin(), w.end() - 1, out + s.numGenerated - (k - 1)))
      mask_[size_t(w.back())] = kNegInf;
  }
  return mask_.data();
}

SampleOutcome SchedulerImpl::sampleToken(const Sequence &s, const float *row,
                                         std::vector<float> &buf) const {
  const int64_t vocab = engine_.vocabSize();
  SampleOutcome o;
  std::string err;
  const float *masked = maskedRow(s, row, buf, err);
  if (!masked) {
    o.error = "structured output failed: " + err;
    return o;
  }
  if (s.req.logprobs >= 0) {
    // Logprobs of the row before the mask, as vLLM's raw logprobs.
    StatusOr<sampler::SampleResult> r = s.sampler->sampleWithLogprobs(
        masked, vocab, s.context, size_t(s.promptLen), s.req.logprobs, row);
    if (!r) {
      o.error = "sampling failed: " + r.status().message();
      return o;
    }
    o.token = r->token;
    o.logprob = r->logprob;
    for (const sampler::TokenLogprob &t : r->topLogprobs)
      o.topLogprobs.emplace_back(int64_t(t.token), t.logprob);
    return o;
  }
  StatusOr<int32_t> r = s.sampler->sample(masked, vocab, s.context, size_t(s.promptLen));
  if (!r) {
    o.error = "sampling failed: " + r.status().message();
    return o;
  }
  o.token = *r;
  return o;
}

void SchedulerImpl::processToken(const SeqPtr &s, const float *row, std::vector<Event> &events,
                                 std::optional<int64_t> chosen, SampleOutcome *pre) {
  const int64_t vocab = engine_.vocabSize();
  Event ev;
  ev.seq = s;
  int32_t token = -1;
  if (chosen) {
    if (*chosen < 0 || *chosen >= vocab) {
      finish(s, FinishReason::kError,
             "sampling failed: the logits hold a NaN or +inf, or every logit is -inf", events);
      return;
    }
    token = int32_t(*chosen);
  } else {
    SampleOutcome o = pre ? std::move(*pre) : sampleToken(*s, row, mask_);
    if (!o.error.empty()) {
      finish(s, FinishReason::kError, o.error, events);
      return;
    }
    token = o.token;
    ev.token.logprob = o.logprob;
    ev.token.topLogprobs = std::move(o.topLogprobs);
  }
  ev.token.token = token;
  if (s->numGenerated == 0 && s->req.promptLogprobs >= 0)
    ev.token.promptLogprobs = std::move(s->promptLps);
  s->tokens.push_back(token);
  s->context.push_back(token);
  ++s->numGenerated;
  ++stats_.generationTokensTotal;

  const bool isStopToken = s->numGenerated > s->req.minTokens &&
                           std::find(s->criteria.stopTokenIds.begin(),
                                     s->criteria.stopTokenIds.end(),
                                     token) != s->criteria.stopTokenIds.end();
  // Structured output: the token's bytes advance the automaton; a stop
  // token (allowed only on a match) ends the request as usual.
  bool grammarDone = false;
  if (s->req.grammar && !isStopToken) {
    const int next = s->req.grammar->advance(s->grammarState, token, &grammarDone);
    if (next < 0) {
      events.push_back(std::move(ev));
      finish(s, FinishReason::kError,
             "structured output failed: token " + std::to_string(token) +
                 " leaves the constraint's language",
             events);
      return;
    }
    s->grammarState = next;
  }
  sampler::StopDecision d;
  if (isStopToken && !s->req.includeStopStrInOutput) {
    d.reason = sampler::FinishReason::kStop;
    d.stopTokenId = token;
    d.outputBytes = s->text.size();
  } else {
    size_t newBytes = 0;
    if (s->decoder) {
      StatusOr<std::string> piece = s->decoder->step(token);
      if (!piece) {
        events.push_back(std::move(ev));
        finish(s, FinishReason::kError, "detokenization failed: " + piece.status().message(),
               events);
        return;
      }
      newBytes = piece->size();
      s->text += *piece;
    }
    d = sampler::checkStop(s->criteria, s->text, newBytes, token, s->numGenerated);
    if (!d.finished() && grammarDone) { // nothing may follow: done, as at a stop token
      d.reason = sampler::FinishReason::kStop;
      d.outputBytes = s->text.size();
    }
    if (!d.finished() && int64_t(s->tokens.size()) >= engine_.maxModelLen()) {
      d.reason = sampler::FinishReason::kLength;
      d.outputBytes = s->text.size();
    }
  }

  if (!d.finished()) {
    const size_t n = tokenizer_ ? sampler::streamableBytes(s->criteria, s->text, false) : 0;
    if (n > s->emitted) {
      ev.token.textDelta = s->text.substr(s->emitted, n - s->emitted);
      s->emitted = n;
    }
    events.push_back(std::move(ev));
    return;
  }
  // Finished: the final text. A stop string cuts it; otherwise it is the
  // full decode of the output (which adds what the decode stream still held
  // back, an incomplete UTF-8 character as U+FFFD, like a one-shot decode).
  if (d.stopStringIndex >= 0) {
    s->text.resize(std::min(s->text.size(), d.outputBytes));
  } else if (tokenizer_) {
    std::vector<int32_t> out(s->tokens.begin() + s->promptLen, s->tokens.end());
    if (isStopToken && !s->req.includeStopStrInOutput)
      out.pop_back();
    std::string full = tokenizer_->decode(out, s->req.skipSpecialTokens);
    if (full.size() >= s->text.size() && full.compare(0, s->text.size(), s->text) == 0)
      s->text = std::move(full);
  }
  if (s->emitted > s->text.size()) // cannot happen: stop prefixes are held back
    s->emitted = s->text.size();
  events.push_back(std::move(ev));
  finish(s, d.reason == sampler::FinishReason::kLength ? FinishReason::kLength
                                                       : FinishReason::kStop,
         "", events);
}

void SchedulerImpl::verifyDraft(const SeqPtr &s, const int64_t *ids, const float *rows,
                                std::vector<Event> &events) {
  const std::vector<int64_t> draft = std::move(s->draft);
  s->draft.clear();
  const int64_t m = int64_t(draft.size()), before = int64_t(s->tokens.size());
  std::vector<int64_t> got;
  if (ids) {
    got = sampler::acceptGreedy(draft, std::vector<int64_t>(ids, ids + m + 1));
  } else {
    StatusOr<std::vector<int64_t>> r =
        engine::acceptSampled(*s->sampler, rows, engine_.vocabSize(), draft, s->context,
                              size_t(s->promptLen));
    if (!r) {
      finish(s, FinishReason::kError, "sampling failed: " + r.status().message(), events);
      return;
    }
    got = std::move(*r);
  }
  const int64_t kept = int64_t(got.size()) - 1;
  ++stats_.specVerifySteps;
  stats_.specDraftTokens += m;
  stats_.specAcceptedTokens += kept;
  // The rejected guesses' slots (and blocks only they used) go back.
  (void)s->kv.truncate(pool(), before + kept);
  s->numComputed = before + kept;
  spec_->rollback(s->draftKv, before + kept);
  // In order, as plain decoding would have given them: a stop token,
  // stop string or max_tokens ends the run where it happens.
  for (int64_t t : got) {
    processToken(s, nullptr, events, t);
    if (s->state == SeqState::kDone)
      return;
  }
  registerBlocks(*s);
}

} // namespace accel::rt::serve::detail
