//===- Speculative.cpp - speculative decoding: drafts and their check -----===//
#include "runtime/engine/Speculative.h"

#include "runtime/serving/sampler/SpeculativeAcceptance.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace accel::rt::engine {

namespace {
Status invalid(const std::string &m) { return Status(StatusCode::kInvalidArgument, m); }
} // namespace

Status SpeculativeConfig::validate() const {
  if (!enabled())
    return Status::ok();
  if (numTokens < 1 || numTokens > kMaxTokens)
    return invalid("--num-speculative-tokens must be between 1 and " +
                   std::to_string(kMaxTokens) + ", got " + std::to_string(numTokens));
  if (method == SpeculativeMethod::kNgram &&
      (ngramMin < 1 || ngramMax < ngramMin || ngramMax > 1024))
    return invalid("--speculative-ngram-min and --speculative-ngram-max must satisfy 1 <= min <= "
                   "max <= 1024, got " +
                   std::to_string(ngramMin) + " and " + std::to_string(ngramMax));
  if (method == SpeculativeMethod::kDraft && draftPlan.empty())
    return invalid("--speculative-method draft needs --draft PLAN");
  return Status::ok();
}

std::string SpeculativeStats::summary() const {
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "draft tokens %lld, accepted %lld (%.1f%%), %.2f tokens per target step",
                (long long)drafts, (long long)accepted, 100.0 * acceptanceRate(),
                tokensPerStep());
  return buf;
}

std::vector<int64_t> proposeNgram(const int64_t *tokens, int64_t n, int64_t ngramMin,
                                  int64_t ngramMax, int64_t k) {
  std::vector<int64_t> out;
  if (k < 1)
    return out;
  for (int64_t len = std::min(ngramMax, n - 1); len >= ngramMin; --len) {
    const int64_t *suffix = tokens + n - len;
    // The last earlier occurrence: starts before the suffix's own start.
    for (int64_t start = n - len - 1; start >= 0; --start) {
      if (!std::equal(suffix, suffix + len, tokens + start))
        continue;
      const int64_t from = start + len, to = std::min(n, from + k);
      out.assign(tokens + from, tokens + to);
      return out;
    }
  }
  return out;
}

Speculator::~Speculator() = default;

StatusOr<std::unique_ptr<Speculator>> Speculator::create(Engine &target,
                                                         const SpeculativeConfig &config,
                                                         EngineOptions draftOptions) {
  ACCEL_RT_RETURN_IF_ERROR(config.validate());
  std::unique_ptr<Speculator> s(new Speculator());
  s->config_ = config;
  if (config.method != SpeculativeMethod::kDraft)
    return s;
  const std::string &targetPath = target.plan().path();
  // A small pool first (no backend sizing it from the GPU's free memory);
  // sizeDraftCache gives it its size.
  draftOptions.maxModelLen = target.maxModelLen();
  draftOptions.numKvBlocks = 1;
  draftOptions.kvCacheBytes = 0;
  draftOptions.tpRank = -1;
  draftOptions.tpMaster.clear();
  draftOptions.tpServing = false;
  StatusOr<std::unique_ptr<Engine>> d = Engine::open(config.draftPlan, draftOptions);
  if (!d) {
    const StatusCode code = d.status().code() == StatusCode::kNotFound ||
                                    d.status().code() == StatusCode::kDataLoss
                                ? StatusCode::kInvalidArgument
                                : d.status().code();
    return Status(code, "the draft plan " + config.draftPlan + " does not open: " +
                            d.status().message());
  }
  Engine &draft = **d;
  if (draft.vocabSize() != target.vocabSize())
    return invalid("the draft plan " + config.draftPlan + " has a vocabulary of " +
                   std::to_string(draft.vocabSize()) + " tokens and the target plan " +
                   targetPath + " one of " + std::to_string(target.vocabSize()) +
                   ": a draft must share the target's vocabulary");
  if (draft.plan().tokenizerJson() != target.plan().tokenizerJson())
    return invalid("the draft plan " + config.draftPlan + " carries another tokenizer than the " +
                   "target plan " + targetPath + ": a draft must share the target's tokenizer");
  s->draft_ = std::move(*d);
  ACCEL_RT_RETURN_IF_ERROR(s->sizeDraftCache(target.maxModelLen()));
  return s;
}

Status Speculator::sizeDraftCache(int64_t tokens) {
  if (!draft_)
    return Status::ok();
  const int64_t bs = std::max<int64_t>(1, draft_->pool().blockSize());
  // The whole size, else halves of it down to one sequence of the context
  // (a GPU may not hold a second cache as large as the target's): a short
  // draft cache only means fewer guesses when it is full.
  const int64_t least = (draft_->maxModelLen() + bs - 1) / bs + 1;
  int64_t blocks = std::max<int64_t>(1, (tokens + bs - 1) / bs + 1);
  for (;;) {
    Status s = draft_->resizeKvCache(blocks);
    if (s.isOk() || s.code() != StatusCode::kResourceExhausted || blocks <= least)
      return s.isOk() ? s
                      : Status(s.code(), "the draft plan's KV cache of " + std::to_string(blocks) +
                                             " blocks does not fit: " + s.message());
    blocks = std::max(least, blocks / 2);
  }
}

void Speculator::propose(std::vector<DraftRequest *> &requests) {
  for (DraftRequest *r : requests)
    r->proposal.clear();
  if (config_.method == SpeculativeMethod::kNgram) {
    for (DraftRequest *r : requests)
      r->proposal = proposeNgram(r->tokens, r->numTokens, config_.ngramMin, config_.ngramMax,
                                 std::min(r->k, config_.numTokens));
    return;
  }
  if (!draft_)
    return;
  Engine &d = *draft_;
  // Step 1: each sequence's tokens the draft has not seen (its last
  // accepted ones), its first guess from the last row.
  std::vector<DraftRequest *> active;
  std::vector<int64_t> want;
  for (DraftRequest *r : requests) {
    int64_t k = std::min({r->k, config_.numTokens, d.maxModelLen() - r->numTokens + 1});
    if (k < 1 || !r->draftKv || r->numTokens < 1)
      continue;
    if (r->draftKv->numTokens() >= r->numTokens) // never: rollback keeps it behind
      (void)r->draftKv->truncate(d.pool(), r->numTokens - 1);
    active.push_back(r);
    want.push_back(k);
  }
  // Runs one batched draft step; on failure (the draft's cache is full)
  // each sequence alone, and the ones that still fail stop proposing.
  auto run = [&](std::vector<BatchSequence> &batch, std::vector<size_t> &who) {
    StatusOr<Tensor> all = d.stepBatch(batch, LogitsRows::kLastGreedy);
    for (size_t j = 0; j < who.size(); ++j) {
      int64_t token = -1;
      if (all) {
        token = all->data<int64_t>()[j];
      } else {
        StatusOr<Tensor> one = d.stepBatch({batch[j]}, LogitsRows::kLastGreedy);
        if (one)
          token = one->data<int64_t>()[0];
      }
      if (token >= 0)
        active[who[j]]->proposal.push_back(token);
      else
        want[who[j]] = 0; // stop guessing for it
    }
  };
  std::vector<BatchSequence> batch;
  std::vector<size_t> who;
  for (size_t i = 0; i < active.size(); ++i) {
    DraftRequest *r = active[i];
    const int64_t seen = r->draftKv->numTokens();
    batch.push_back({r->draftKv, r->tokens + seen, r->numTokens - seen, 1});
    who.push_back(i);
  }
  if (!batch.empty())
    run(batch, who);
  for (int64_t step = 1; step < config_.numTokens; ++step) {
    batch.clear();
    who.clear();
    for (size_t i = 0; i < active.size(); ++i) {
      DraftRequest *r = active[i];
      if (int64_t(r->proposal.size()) == step && step < want[i]) {
        batch.push_back({r->draftKv, &r->proposal.back(), 1, 1});
        who.push_back(i);
      }
    }
    if (batch.empty())
      break;
    run(batch, who);
  }
}

void Speculator::rollback(kv::SequenceKV &draftKv, int64_t numTokens) {
  if (draft_ && draftKv.numTokens() > numTokens)
    (void)draftKv.truncate(draft_->pool(), numTokens);
}

void Speculator::release(kv::SequenceKV &draftKv) {
  if (draft_)
    (void)draftKv.release(draft_->pool());
}

StatusOr<std::vector<int64_t>> acceptSampled(sampler::Sampler &sampler, const float *rows,
                                             int64_t vocab, const std::vector<int64_t> &draft,
                                             std::vector<int32_t> context, size_t promptLen) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < draft.size(); ++i) {
    const float *row = rows + int64_t(i) * vocab;
    ACCEL_RT_ASSIGN_OR_RETURN(std::vector<sampler::TokenProb> p,
                              sampler.distribution(row, vocab, context, promptLen));
    const double u1 = sampler.uniform(), u2 = sampler.uniform();
    sampler::DraftDecision d =
        sampler::acceptOrResample(p, nullptr, int32_t(draft[i]), u1, u2);
    out.push_back(d.token);
    if (!d.accepted)
      return out;
    context.push_back(d.token);
  }
  // Every draft kept: the target's own next token from the last row.
  ACCEL_RT_ASSIGN_OR_RETURN(int32_t bonus,
                            sampler.sample(rows + int64_t(draft.size()) * vocab, vocab, context,
                                           promptLen));
  out.push_back(bonus);
  return out;
}

StatusOr<std::vector<int64_t>>
generateSpeculative(Engine &target, Speculator &spec, const std::vector<int64_t> &prompt,
                    sampler::Sampler *sampler, std::vector<int32_t> context, int64_t maxNew,
                    const std::function<StatusOr<int64_t>(int64_t)> &accept,
                    SpeculativeStats &stats) {
  if (prompt.empty())
    return invalid("the token sequence is empty");
  const int64_t maxLen = target.maxModelLen(), vocab = target.vocabSize();
  if (int64_t(prompt.size()) >= maxLen)
    return invalid("the sequence has " + std::to_string(prompt.size()) +
                   " tokens and the context holds " + std::to_string(maxLen) +
                   " (--max-model-len)");
  const bool greedy = sampler == nullptr;
  const LogitsRows mode = greedy ? LogitsRows::kLastGreedy : LogitsRows::kLast;
  const Status refused(StatusCode::kInvalidArgument,
                       "sampling failed: the logits hold a NaN or +inf, or every logit is -inf");
  kv::SequenceKV seq, draftKv;
  std::vector<int64_t> tokens = prompt, generated;
  auto body = [&]() -> Status {
    // Prefill: the first token as without speculation.
    ACCEL_RT_ASSIGN_OR_RETURN(Tensor out, target.stepBatch({{&seq, prompt.data(),
                                                             int64_t(prompt.size()), 1}},
                                                           mode));
    std::vector<int64_t> got;
    if (greedy) {
      got.push_back(out.data<int64_t>()[0]);
    } else {
      ACCEL_RT_ASSIGN_OR_RETURN(int32_t t, sampler->sample(out.data<float>(), vocab, context,
                                                           prompt.size()));
      got.push_back(t);
    }
    bool counted = false; // the prefill's token is no decode step's
    while (true) {
      for (int64_t t : got) {
        if (t < 0 || t >= vocab)
          return refused;
        if (counted)
          ++stats.emitted;
        ACCEL_RT_ASSIGN_OR_RETURN(int64_t r, accept(t));
        if (r < 0)
          return Status::ok();
        tokens.push_back(t);
        generated.push_back(t);
        context.push_back(int32_t(t));
        if (int64_t(tokens.size()) >= maxLen)
          return Status::ok();
      }
      counted = true;
      const int64_t n = int64_t(tokens.size());
      // The step writes n + k slots: within the context, and no guess past
      // the tokens still wanted.
      int64_t k = std::min(spec.config().numTokens, maxLen - n);
      if (maxNew > 0)
        k = std::min(k, maxNew - int64_t(generated.size()) - 1);
      DraftRequest req;
      req.tokens = tokens.data();
      req.numTokens = n;
      req.k = k;
      req.draftKv = &draftKv;
      if (k >= 1) {
        std::vector<DraftRequest *> reqs{&req};
        spec.propose(reqs);
      }
      const std::vector<int64_t> &draft = req.proposal;
      const int64_t m = int64_t(draft.size());
      std::vector<int64_t> ids{tokens.back()};
      ids.insert(ids.end(), draft.begin(), draft.end());
      ACCEL_RT_ASSIGN_OR_RETURN(out, target.stepBatch({{&seq, ids.data(), 1 + m, 1 + m}}, mode));
      if (greedy) {
        std::vector<int64_t> rows(out.data<int64_t>(), out.data<int64_t>() + 1 + m);
        got = sampler::acceptGreedy(draft, rows);
      } else {
        ACCEL_RT_ASSIGN_OR_RETURN(got, acceptSampled(*sampler, out.data<float>(), vocab, draft,
                                                     context, prompt.size()));
      }
      const int64_t kept = int64_t(got.size()) - 1;
      ++stats.steps;
      stats.drafts += m;
      stats.accepted += kept;
      // The rejected guesses' slots go back; the draft's KV follows.
      ACCEL_RT_RETURN_IF_ERROR(seq.truncate(target.pool(), n + kept));
      spec.rollback(draftKv, n + kept);
    }
  };
  Status s = body();
  (void)seq.release(target.pool());
  spec.release(draftKv);
  ACCEL_RT_RETURN_IF_ERROR(s);
  return generated;
}

} // namespace accel::rt::engine
