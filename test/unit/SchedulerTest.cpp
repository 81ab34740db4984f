//===- SchedulerTest.cpp - the serving engine loop on real plans ----------===//
//
// Compiles two fixtures with the built accelc once (the demo model: a small
// trained Llama with its tokenizer, HF's greedy output in
// generated_ids.npy; and llama_op18, random weights, no tokenizer), then
// drives runtime/serving/Scheduler step by step: batched, chunked, preempted
// and prefix-cached generation must give exactly the tokens single-sequence
// Engine::generate gives, and every KV block must come back.
//
//===----------------------------------------------------------------------===//
#include "runtime/serving/ParallelFor.h"
#include "runtime/serving/Scheduler.h"

#include "core/Npy.h"
#include "runtime/serving/PrefixCache.h"
#include "runtime/serving/tokenizer/Tokenizer.h"

#include <gtest/gtest.h>

#include <atomic>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace {

using namespace accel::rt;
using serve::FinishReason;

const std::string kSource = ACCEL_SOURCE_DIR;

std::string makeTempDir() {
  std::string tmpl = ::testing::TempDir() + "accel-sched-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  const char *dir = mkdtemp(buf.data());
  return dir ? std::string(dir) : std::string();
}

std::string shellQuote(const std::string &s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// The plans, compiled once for the whole program.
struct Plans {
  std::string demo, llama, error;
};
const Plans &plans() {
  static Plans p = [] {
    Plans r;
    std::string accelc = ACCEL_ACCELC;
    if (const char *env = std::getenv("ACCEL_ACCELC"))
      accelc = env;
    if (accelc.empty()) {
      r.error = "no accelc (configure with ACCEL_BUILD_COMPILER=ON)";
      return r;
    }
    std::string dir = makeTempDir();
    auto compile = [&](const std::string &onnx, const std::string &out) {
      std::string cmd = shellQuote(accelc) + " " + shellQuote(onnx) + " -o " + shellQuote(out) +
                        " > " + shellQuote(out + ".log") + " 2>&1";
      return std::system(cmd.c_str()) == 0;
    };
    r.demo = dir + "/demo.plan";
    r.llama = dir + "/llama.plan";
    if (!compile(kSource + "/test/fixtures/demo/model.onnx", r.demo))
      r.error = "accelc failed on the demo model (see " + r.demo + ".log)";
    else if (!compile(kSource + "/test/fixtures/models/llama_op18/model.onnx", r.llama))
      r.error = "accelc failed on llama_op18 (see " + r.llama + ".log)";
    return r;
  }();
  return p;
}

/// What one request produced.
struct Outcome {
  std::vector<int64_t> tokens;
  std::string text;
  std::vector<std::string> deltas;
  std::vector<serve::TokenEvent> events;
  int finishes = 0;
  serve::FinishEvent finish;
};

struct Collector {
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::string, Outcome> out;
  int finished = 0;

  serve::RequestCallbacks callbacks(const std::string &id) {
    serve::RequestCallbacks cb;
    cb.onToken = [this, id](const serve::TokenEvent &e) {
      std::lock_guard<std::mutex> l(mu);
      Outcome &o = out[id];
      EXPECT_EQ(o.finishes, 0) << id << ": a token after the finish";
      o.tokens.push_back(e.token);
      o.text += e.textDelta;
      o.deltas.push_back(e.textDelta);
      o.events.push_back(e);
    };
    cb.onFinish = [this, id](const serve::FinishEvent &e) {
      std::lock_guard<std::mutex> l(mu);
      Outcome &o = out[id];
      o.text += e.textDelta;
      o.deltas.push_back(e.textDelta);
      o.finish = e;
      ++o.finishes;
      ++finished;
      cv.notify_all();
    };
    return cb;
  }
};

class SchedulerTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!plans().error.empty()) {
      if (std::string(ACCEL_ACCELC).empty())
        GTEST_SKIP() << plans().error;
      FAIL() << plans().error;
    }
  }

  /// The demo plan's engine and tokenizer: a test begins with
  /// ASSERT_NO_FATAL_FAILURE(openDemo()).
  std::unique_ptr<engine::Engine> e;
  std::shared_ptr<const tok::Tokenizer> tok;
  void openDemo() {
    e = openEngine(plans().demo);
    ASSERT_TRUE(e);
    tok = tokenizerOf(*e);
    ASSERT_TRUE(tok);
  }

  static std::unique_ptr<engine::Engine> openEngine(const std::string &path) {
    StatusOr<std::unique_ptr<engine::Engine>> e = engine::Engine::open(path);
    EXPECT_TRUE(e.isOk()) << e.status().toString();
    return e ? std::move(*e) : nullptr;
  }

  static std::shared_ptr<const tok::Tokenizer> tokenizerOf(const engine::Engine &e) {
    std::optional<std::string_view> json = e.plan().tokenizerJson();
    if (!json)
      return nullptr;
    StatusOr<tok::Tokenizer> t = tok::Tokenizer::fromJson(*json);
    EXPECT_TRUE(t.isOk()) << t.status().toString();
    return t ? std::make_shared<const tok::Tokenizer>(std::move(*t)) : nullptr;
  }

  static std::vector<int64_t> encode(const tok::Tokenizer &t, const std::string &text) {
    StatusOr<std::vector<int32_t>> ids = t.encode(text, false);
    EXPECT_TRUE(ids.isOk()) << ids.status().toString();
    return ids ? std::vector<int64_t>(ids->begin(), ids->end()) : std::vector<int64_t>();
  }

  /// Single-sequence reference: Engine::generate with a Sampler, exactly
  /// `n` tokens (no EOS stop).
  static std::vector<int64_t> reference(engine::Engine &e, const std::vector<int64_t> &prompt,
                                        int64_t n) {
    return reference(e, prompt, n, greedy());
  }
  static std::vector<int64_t> reference(engine::Engine &e, const std::vector<int64_t> &prompt,
                                        int64_t n, const sampler::SamplingParams &params) {
    sampler::Sampler s(params);
    std::vector<int32_t> ctx(prompt.begin(), prompt.end());
    int64_t count = 0;
    StatusOr<std::vector<int64_t>> out =
        e.generate(prompt, [&](const float *logits, int64_t vocab) -> StatusOr<int64_t> {
          if (count == n)
            return int64_t(-1);
          ACCEL_RT_ASSIGN_OR_RETURN(int32_t t, s.sample(logits, vocab, ctx, prompt.size()));
          ctx.push_back(t);
          ++count;
          return int64_t(t);
        });
    EXPECT_TRUE(out.isOk()) << out.status().toString();
    EXPECT_EQ(e.pool().allocator().numUsed(), 0);
    return out ? *out : std::vector<int64_t>();
  }

  /// Greedy single-sequence reference in which `ban(generated, row)` may
  /// set logits to -inf before each argmax: what the masking request
  /// parameters (allowed_token_ids, bad_words, min_tokens) must give.
  static std::vector<int64_t>
  referenceMasked(engine::Engine &e, const std::vector<int64_t> &prompt, int64_t n,
                  const std::function<void(const std::vector<int64_t> &, std::vector<float> &)>
                      &ban) {
    sampler::Sampler s(greedy());
    std::vector<int64_t> out;
    StatusOr<std::vector<int64_t>> r =
        e.generate(prompt, [&](const float *logits, int64_t vocab) -> StatusOr<int64_t> {
          if (int64_t(out.size()) == n)
            return int64_t(-1);
          std::vector<float> row(logits, logits + vocab);
          ban(out, row);
          ACCEL_RT_ASSIGN_OR_RETURN(int32_t t, s.sample(row.data(), vocab));
          out.push_back(t);
          return int64_t(t);
        });
    EXPECT_TRUE(r.isOk()) << r.status().toString();
    return out;
  }

  static sampler::SamplingParams greedy() {
    sampler::SamplingParams p;
    p.temperature = 0.0f;
    return p;
  }

  static serve::Request request(const std::string &id, std::vector<int64_t> prompt,
                                int64_t maxTokens) {
    serve::Request r;
    r.id = id;
    r.promptIds = std::move(prompt);
    r.maxTokens = maxTokens;
    r.sampling = greedy();
    r.ignoreEos = true;
    return r;
  }

  /// Steps until nothing is left; fails the test after `limit` steps.
  static void drain(serve::Scheduler &s, int limit = 100000) {
    for (int i = 0; i < limit; ++i) {
      StatusOr<bool> r = s.step();
      ASSERT_TRUE(r.isOk()) << r.status().toString();
      if (!*r)
        return;
    }
    FAIL() << "the scheduler did not finish within " << limit << " steps";
  }

  static void expectAllFree(const engine::Engine &e, const serve::Scheduler &s) {
    EXPECT_EQ(e.pool().allocator().numUsed(), 0) << "KV blocks leaked";
    EXPECT_EQ(e.pool().numFreeBlocks(), e.pool().numBlocks());
    serve::SchedulerStats st = s.stats();
    EXPECT_EQ(st.kvBlocksUsed, 0);
    EXPECT_EQ(st.running, 0);
    EXPECT_EQ(st.waiting, 0);
  }

  /// Prompts of the demo model, of different lengths.
  static std::vector<std::string> demoPrompts() {
    return {"In the beginning",
            "And the LORD spake unto Moses, saying, Speak unto the children of Israel",
            "Blessed are the poor in spirit",
            "And it came to pass, when the king heard these words, that he rent his clothes",
            "The LORD is my shepherd; I shall not want.",
            "For God so loved the world",
            "And he said"};
  }

  struct Case {
    std::vector<int64_t> prompt;
    int64_t n = 0;
    std::vector<int64_t> expected;
  };

  /// Runs `cases` concurrently through a scheduler made with `opts` and
  /// checks each against its expected tokens (and text when a tokenizer is
  /// given).
  static void runAndCompare(engine::Engine &e, std::shared_ptr<const tok::Tokenizer> tok,
                            const serve::SchedulerOptions &opts, const std::vector<Case> &cases,
                            serve::SchedulerStats *statsOut = nullptr) {
    StatusOr<std::unique_ptr<serve::Scheduler>> sch = serve::Scheduler::create(e, tok, opts);
    ASSERT_TRUE(sch.isOk()) << sch.status().toString();
    Collector c;
    for (size_t i = 0; i < cases.size(); ++i) {
      std::string id = "r" + std::to_string(i);
      Status st = (*sch)->submit(request(id, cases[i].prompt, cases[i].n), c.callbacks(id));
      ASSERT_TRUE(st.isOk()) << st.toString();
    }
    drain(**sch);
    for (size_t i = 0; i < cases.size(); ++i) {
      const Outcome &o = c.out["r" + std::to_string(i)];
      EXPECT_EQ(o.finishes, 1);
      EXPECT_EQ(o.finish.reason, FinishReason::kLength) << o.finish.error;
      EXPECT_EQ(o.tokens, cases[i].expected) << "request " << i;
      EXPECT_EQ(o.finish.promptTokens, int64_t(cases[i].prompt.size()));
      EXPECT_EQ(o.finish.completionTokens, cases[i].n);
      if (tok) {
        std::vector<int32_t> ids(cases[i].expected.begin(), cases[i].expected.end());
        EXPECT_EQ(o.text, tok->decode(ids, true)) << "request " << i;
      }
    }
    expectAllFree(e, **sch);
    if (statsOut)
      *statsOut = (*sch)->stats();
  }

  /// The demo prompt as HF transformers' generate() continued it: its
  /// first 4 ids, then 48 (test/fixtures/demo/generated_ids.npy). Empty
  /// when the file does not read.
  static Case hfDemoCase() {
    Case h;
    StatusOr<Tensor> hf = readNpy(kSource + "/test/fixtures/demo/generated_ids.npy");
    EXPECT_TRUE(hf.isOk()) << hf.status().toString();
    if (!hf)
      return h;
    std::vector<int64_t> hfIds(hf->data<int64_t>(), hf->data<int64_t>() + hf->numElements());
    EXPECT_EQ(hfIds.size(), 52u);
    if (hfIds.size() != 52u)
      return h;
    h.prompt.assign(hfIds.begin(), hfIds.begin() + 4);
    h.n = 48;
    h.expected.assign(hfIds.begin() + 4, hfIds.end());
    return h;
  }

  /// The last verse of the Psalms and the demo model's 20 tokens after it:
  /// " the LORD." and then its EOS (id 0), which it writes between chapters.
  static Case psalmsEndCase(engine::Engine &e, const tok::Tokenizer &t) {
    Case c;
    c.prompt = encode(t, "Let every thing that hath breath praise the LORD. Praise ye");
    c.n = 20;
    c.expected = reference(e, c.prompt, c.n);
    return c;
  }

  std::vector<Case> demoCases(engine::Engine &e, const tok::Tokenizer &t, int64_t n) {
    std::vector<Case> cases;
    for (const std::string &p : demoPrompts()) {
      Case c;
      c.prompt = encode(t, p);
      c.n = n + int64_t(cases.size()) * 3; // different lengths finish at different steps
      c.expected = reference(e, c.prompt, c.n);
      EXPECT_EQ(int64_t(c.expected.size()), c.n);
      cases.push_back(std::move(c));
    }
    return cases;
  }
};

// N different prompts at once give exactly the single-sequence greedy
// tokens; the demo prompt also matches HF transformers' generate().
TEST_F(SchedulerTest, BatchedGreedyMatchesSingleSequenceAndHF) {
  ASSERT_NO_FATAL_FAILURE(openDemo());
  std::vector<Case> cases = demoCases(*e, *tok, 20);

  Case h = hfDemoCase();
  ASSERT_EQ(h.expected.size(), 48u);
  EXPECT_EQ(reference(*e, h.prompt, 48), h.expected) << "single-sequence generate differs from HF";
  cases.push_back(h);

  serve::SchedulerOptions opts;
  opts.numKvBlocks = 256;
  serve::SchedulerStats st;
  runAndCompare(*e, tok, opts, cases, &st);
  EXPECT_EQ(st.preemptionsTotal, 0);
  EXPECT_EQ(st.requestsFinished, int64_t(cases.size()));
  // Batched: far fewer steps than the tokens generated.
  int64_t generated = 0;
  for (const Case &c : cases)
    generated += c.n;
  EXPECT_EQ(st.generationTokensTotal, generated);
  EXPECT_LT(st.stepsTotal, generated / 2);
  // The step-time split: the engine's part is inside the step's, both
  // positive, and the recent window holds at most 256 steps' worth.
  EXPECT_GT(st.engineSecondsTotal, 0.0);
  EXPECT_GE(st.stepSecondsTotal, st.engineSecondsTotal);
  EXPECT_GT(st.recentEngineSeconds, 0.0);
  EXPECT_LE(st.recentEngineSeconds, st.engineSecondsTotal * (1 + 1e-9));
  EXPECT_GE(st.recentStepSeconds, st.recentEngineSeconds);
  EXPECT_GE(st.hostOverhead(), 0.0);
}

// The same on llama_op18 (random weights, token ids only, no tokenizer).
TEST_F(SchedulerTest, BatchedGreedyOnLlamaFixture) {
  auto e = openEngine(plans().llama);
  ASSERT_TRUE(e);
  std::vector<Case> cases;
  for (int i = 0; i < 5; ++i) {
    Case c;
    for (int j = 0; j < 5 + 7 * i; ++j)
      c.prompt.push_back((17 * i + 31 * j + 3) % e->vocabSize());
    c.n = 12 + i;
    c.expected = reference(*e, c.prompt, c.n);
    cases.push_back(std::move(c));
  }
  serve::SchedulerOptions opts;
  opts.numKvBlocks = 64;
  runAndCompare(*e, nullptr, opts, cases);
}

// Chunked prefill: a token budget smaller than the prompts.
TEST_F(SchedulerTest, ChunkedPrefillGivesTheSameTokens) {
  ASSERT_NO_FATAL_FAILURE(openDemo());
  std::vector<Case> cases = demoCases(*e, *tok, 10);
  for (int64_t budget : {5, 16}) {
    serve::SchedulerOptions opts;
    opts.numKvBlocks = 256;
    opts.maxNumBatchedTokens = budget;
    serve::SchedulerStats st;
    runAndCompare(*e, tok, opts, cases, &st);
    int64_t promptTokens = 0;
    for (const Case &c : cases)
      promptTokens += int64_t(c.prompt.size());
    EXPECT_EQ(st.promptTokensTotal, promptTokens);
    // Every step stays within the budget: at least tokens / budget steps.
    EXPECT_GE(st.stepsTotal * budget, st.batchedTokensTotal);
  }
  // maxNumSeqs = 2: the others wait their turn.
  serve::SchedulerOptions opts;
  opts.numKvBlocks = 256;
  opts.maxNumSeqs = 2;
  runAndCompare(*e, tok, opts, cases);
}

// A pool too small for every sequence at once: the newest is preempted and
// recomputed later, and the output does not change.
TEST_F(SchedulerTest, PreemptionUnderATinyPoolKeepsTheTokens) {
  ASSERT_NO_FATAL_FAILURE(openDemo());
  std::vector<Case> cases = demoCases(*e, *tok, 24);
  int64_t largest = 0;
  for (const Case &c : cases)
    largest = std::max<int64_t>(largest, (int64_t(c.prompt.size()) + c.n + 15) / 16);
  serve::SchedulerOptions opts;
  opts.numKvBlocks = largest + 2;
  serve::SchedulerStats st;
  runAndCompare(*e, tok, opts, cases, &st);
  EXPECT_GT(st.preemptionsTotal, 0);
  EXPECT_EQ(st.kvBlocksTotal, largest + 2);

  // Again with prefix caching and chunking: recomputation hits the blocks the
  // preempted sequence left in the cache.
  opts.enablePrefixCaching = true;
  opts.maxNumBatchedTokens = 8;
  runAndCompare(*e, tok, opts, cases, &st);
  EXPECT_GT(st.preemptionsTotal, 0);
}

// A second request sharing a long prefix reuses the first one's blocks.
TEST_F(SchedulerTest, PrefixCachingSharesFullBlocks) {
  ASSERT_NO_FATAL_FAILURE(openDemo());
  std::vector<int64_t> shared = encode(
      *tok, "And the LORD spake unto Moses, saying, Speak unto the children of Israel, and say "
            "unto them, When ye be come into the land which I give unto you");
  ASSERT_GE(shared.size(), 33u);
  std::vector<int64_t> a = shared, b = shared, c = shared;
  for (int64_t t : encode(*tok, " and ye shall eat"))
    a.push_back(t);
  for (int64_t t : encode(*tok, " then shall the land keep"))
    b.push_back(t);
  c.resize(32); // exactly two blocks: the last one is recomputed
  const int64_t n = 12;
  std::vector<int64_t> refA = reference(*e, a, n), refB = reference(*e, b, n),
                       refC = reference(*e, c, n);
  const int64_t sharedBlocks = int64_t(shared.size()) / 16;

  serve::SchedulerOptions opts;
  opts.numKvBlocks = 64;
  opts.enablePrefixCaching = true;
  StatusOr<std::unique_ptr<serve::Scheduler>> sch = serve::Scheduler::create(*e, tok, opts);
  ASSERT_TRUE(sch.isOk()) << sch.status().toString();
  serve::Scheduler &s = **sch;
  Collector col;
  ASSERT_TRUE(s.submit(request("a", a, n), col.callbacks("a")).isOk());
  drain(s);
  EXPECT_EQ(col.out["a"].tokens, refA);
  EXPECT_EQ(col.out["a"].finish.cachedPromptTokens, 0);
  EXPECT_EQ(e->pool().allocator().numUsed(), 0);
  serve::SchedulerStats st = s.stats();
  EXPECT_EQ(st.prefixCacheHits, 0);
  EXPECT_EQ(st.prefixCacheQueries, int64_t(a.size()));
  EXPECT_GT(st.kvBlocksCached, sharedBlocks - 1); // kept while free

  ASSERT_TRUE(s.submit(request("b", b, n), col.callbacks("b")).isOk());
  drain(s);
  EXPECT_EQ(col.out["b"].tokens, refB);
  EXPECT_EQ(col.out["b"].finish.cachedPromptTokens, sharedBlocks * 16);
  st = s.stats();
  EXPECT_EQ(st.prefixCacheHits, sharedBlocks * 16);
  EXPECT_EQ(st.prefixCacheQueries, int64_t(a.size() + b.size()));

  // Two at once sharing the blocks of a running one; and a prompt that is
  // exactly cached: its last block is computed again for the logits.
  ASSERT_TRUE(s.submit(request("a2", a, n), col.callbacks("a2")).isOk());
  ASSERT_TRUE(s.submit(request("c", c, n), col.callbacks("c")).isOk());
  drain(s);
  EXPECT_EQ(col.out["a2"].tokens, refA);
  EXPECT_EQ(col.out["c"].tokens, refC);
  EXPECT_GE(col.out["a2"].finish.cachedPromptTokens, sharedBlocks * 16);
  EXPECT_EQ(col.out["c"].finish.cachedPromptTokens, 16);
  EXPECT_EQ(col.out["a2"].text, col.out["a"].text);
  expectAllFree(*e, s);

  // Without prefix caching nothing is counted as cached.
  serve::SchedulerOptions off = opts;
  off.enablePrefixCaching = false;
  sch = serve::Scheduler::create(*e, tok, off);
  ASSERT_TRUE(sch.isOk());
  Collector col2;
  ASSERT_TRUE((*sch)->submit(request("a", a, n), col2.callbacks("a")).isOk());
  ASSERT_TRUE((*sch)->submit(request("b", b, n), col2.callbacks("b")).isOk());
  drain(**sch);
  EXPECT_EQ(col2.out["b"].tokens, refB);
  EXPECT_EQ(col2.out["b"].finish.cachedPromptTokens, 0);
  EXPECT_EQ((*sch)->stats().prefixCacheHits, 0);
}

// A block hash that depends on the depth in the chain only, never on the
// tokens: the i-th block of every prompt collides with the i-th block of
// every other prompt. Hits must be verified by the token ids, so the cache
// may get slower with it but never wrong.
serve::BlockHash depthOnlyHash(const serve::BlockHash &parent, const int64_t *, int64_t) {
  return {parent.a * 31 + 1, parent.b * 37 + 1};
}

TEST_F(SchedulerTest, PrefixCacheHitsAreVerifiedNotTrusted) {
  ASSERT_NO_FATAL_FAILURE(openDemo());
  std::vector<int64_t> a = encode(
      *tok, "And the LORD spake unto Moses, saying, Speak unto the children of Israel, and say "
            "unto them, When ye be come into the land which I give unto you, then shall the "
            "land keep a sabbath unto the LORD");
  std::vector<int64_t> b = encode(
      *tok, "And it came to pass, when the king heard these words, that he rent his clothes, "
            "and put sackcloth upon his flesh, and fasted, and lay in sackcloth");
  ASSERT_GE(a.size(), 40u);
  ASSERT_GE(b.size(), 40u);
  a.resize(40); // two full blocks of 16 and 8 more tokens
  b.resize(40);
  const int64_t n = 12;
  std::vector<int64_t> refA = reference(*e, a, n), refB = reference(*e, b, n);
  ASSERT_NE(refA, refB);

  serve::SchedulerOptions opts;
  opts.numKvBlocks = 64;
  opts.enablePrefixCaching = true;
  opts.prefixCacheHashForTesting = depthOnlyHash;
  StatusOr<std::unique_ptr<serve::Scheduler>> sch = serve::Scheduler::create(*e, tok, opts);
  ASSERT_TRUE(sch.isOk()) << sch.status().toString();
  serve::Scheduler &s = **sch;
  Collector col;
  ASSERT_TRUE(s.submit(request("a", a, n), col.callbacks("a")).isOk());
  drain(s);
  EXPECT_EQ(col.out["a"].tokens, refA);
  // b's blocks have a's hashes but not a's tokens: no hit, b's own tokens.
  ASSERT_TRUE(s.submit(request("b", b, n), col.callbacks("b")).isOk());
  drain(s);
  EXPECT_EQ(col.out["b"].finish.cachedPromptTokens, 0) << "a colliding hash was trusted";
  EXPECT_EQ(col.out["b"].tokens, refB);
  EXPECT_EQ(s.stats().prefixCacheHits, 0);
  // Real hits still hit: a again gets both of its full blocks.
  ASSERT_TRUE(s.submit(request("a2", a, n), col.callbacks("a2")).isOk());
  drain(s);
  EXPECT_EQ(col.out["a2"].finish.cachedPromptTokens, 32);
  EXPECT_EQ(col.out["a2"].tokens, refA);
  EXPECT_EQ(s.stats().prefixCacheHits, 32);
  expectAllFree(*e, s);
}

// vLLM's request extensions, greedy on the demo model, against references
// computed from the logits directly.
TEST_F(SchedulerTest, StopTokenIdsMinTokensAllowedAndBadWords) {
  ASSERT_NO_FATAL_FAILURE(openDemo());
  const std::vector<int64_t> prompt = encode(*tok, "And God said, Let there be");
  const int64_t n = 16;
  const std::vector<int64_t> ref = reference(*e, prompt, n);
  auto decode = [&](std::vector<int64_t>::const_iterator b, std::vector<int64_t>::const_iterator
                                                               end) {
    return tok->decode(std::vector<int32_t>(b, end), true);
  };
  const float kNegInf = -std::numeric_limits<float>::infinity();

  serve::SchedulerOptions opts;
  opts.numKvBlocks = 64;
  auto sch = serve::Scheduler::create(*e, tok, opts);
  ASSERT_TRUE(sch.isOk());
  serve::Scheduler &s = **sch;
  Collector c;

  // stop_token_ids end the request even with ignore_eos; the stop token is
  // reported, its text kept only with include_stop_str_in_output.
  const int64_t stopTok = ref[5];
  const size_t first = size_t(std::find(ref.begin(), ref.end(), stopTok) - ref.begin());
  serve::Request st = request("stop_token_ids", prompt, n);
  st.stopTokenIds = {stopTok};
  serve::Request inc = st;
  inc.id = "include";
  inc.includeStopStrInOutput = true;
  // include_stop_str_in_output keeps a stop string too.
  const std::string refText = decode(ref.begin(), ref.end());
  const std::string word = refText.substr(refText.size() / 2, 3);
  serve::Request strInc = request("stop_string_kept", prompt, n);
  strInc.stop = {word};
  strInc.includeStopStrInOutput = true;

  // min_tokens: the first token would be ref[0]; as a stop token it is
  // banned from the first 3 tokens.
  serve::Request minT = request("min_tokens", prompt, n);
  minT.stopTokenIds = {ref[0]};
  minT.minTokens = 3;
  std::vector<int64_t> minRef = referenceMasked(
      *e, prompt, n, [&](const std::vector<int64_t> &out, std::vector<float> &row) {
        if (out.size() < 3)
          row[size_t(ref[0])] = kNegInf;
      });
  auto minStop = std::find(minRef.begin() + 3, minRef.end(), ref[0]);
  if (minStop != minRef.end())
    minRef.erase(minStop + 1, minRef.end());

  // allowed_token_ids: the argmax over the allowed ids only.
  const std::vector<int64_t> allowed = {ref[1], ref[3], 100, 200, 300};
  serve::Request allow = request("allowed_token_ids", prompt, n);
  allow.allowedTokenIds = allowed;
  const std::vector<int64_t> allowRef = referenceMasked(
      *e, prompt, n, [&](const std::vector<int64_t> &, std::vector<float> &row) {
        for (size_t i = 0; i < row.size(); ++i)
          if (std::find(allowed.begin(), allowed.end(), int64_t(i)) == allowed.end())
            row[i] = kNegInf;
      });

  // bad_words: a word of the greedy output, banned as vLLM does (the word
  // and " word" tokenized; a one-token form is banned outright, a longer
  // one's last token after the rest).
  std::string bad = tok->decode({int32_t(ref[2])}, true);
  bad.erase(0, bad.find_first_not_of(' '));
  ASSERT_FALSE(bad.empty());
  std::vector<std::vector<int64_t>> badIds;
  std::vector<int32_t> plainIds = *tok->encode(bad, false), spaced = *tok->encode(" " + bad, false);
  badIds.emplace_back(plainIds.begin(), plainIds.end());
  if (spaced.size() == plainIds.size() && spaced[0] != plainIds[0])
    badIds.emplace_back(spaced.begin(), spaced.end());
  serve::Request bw = request("bad_words", prompt, n);
  bw.badWords = {"  " + bad};
  const std::vector<int64_t> badRef = referenceMasked(
      *e, prompt, n, [&](const std::vector<int64_t> &out, std::vector<float> &row) {
        for (const std::vector<int64_t> &w : badIds)
          if (w.size() - 1 <= out.size() &&
              std::equal(w.begin(), w.end() - 1, out.end() - int64_t(w.size() - 1)))
            row[size_t(w.back())] = kNegInf;
      });

  // logit_bias: added to the logits before the argmax; logprobs stay those
  // of the row without it (vLLM's raw logprobs).
  serve::Request lb = request("logit_bias", prompt, n);
  lb.logitBias = {{ref[0], -100.0f}, {ref[2], 3.5f}};
  lb.logprobs = 1;
  const std::vector<int64_t> biasRef = referenceMasked(
      *e, prompt, n, [&](const std::vector<int64_t> &, std::vector<float> &row) {
        row[size_t(ref[0])] += -100.0f;
        row[size_t(ref[2])] += 3.5f;
      });

  for (serve::Request *r : {&st, &inc, &strInc, &minT, &allow, &bw, &lb}) {
    Status ok = s.submit(*r, c.callbacks(r->id));
    ASSERT_TRUE(ok.isOk()) << r->id << ": " << ok.toString();
  }
  drain(s);

  const Outcome &o = c.out["stop_token_ids"];
  EXPECT_EQ(o.finish.reason, FinishReason::kStop);
  EXPECT_EQ(o.tokens, std::vector<int64_t>(ref.begin(), ref.begin() + first + 1));
  EXPECT_EQ(o.text, decode(ref.begin(), ref.begin() + first));
  EXPECT_EQ(c.out["include"].tokens, o.tokens);
  EXPECT_EQ(c.out["include"].text, decode(ref.begin(), ref.begin() + first + 1));
  const Outcome &si = c.out["stop_string_kept"];
  EXPECT_EQ(si.finish.reason, FinishReason::kStop);
  EXPECT_EQ(si.text, refText.substr(0, refText.find(word) + word.size()));

  const Outcome &m = c.out["min_tokens"];
  EXPECT_NE(m.tokens[0], ref[0]);
  EXPECT_EQ(m.tokens, minRef);
  EXPECT_EQ(m.finish.reason, int64_t(minRef.size()) < n ? FinishReason::kStop
                                                        : FinishReason::kLength);

  const Outcome &a = c.out["allowed_token_ids"];
  EXPECT_EQ(a.tokens, allowRef);
  for (int64_t t : a.tokens)
    EXPECT_TRUE(std::find(allowed.begin(), allowed.end(), t) != allowed.end()) << t;

  const Outcome &l = c.out["logit_bias"];
  EXPECT_EQ(l.tokens, biasRef);
  EXPECT_NE(l.tokens[0], ref[0]);
  ASSERT_FALSE(l.events.empty());
  EXPECT_EQ(l.events[0].topLogprobs.at(0).first, ref[0]); // the unbiased row's best

  const Outcome &b = c.out["bad_words"];
  EXPECT_EQ(b.tokens, badRef);
  EXPECT_NE(b.tokens, ref);
  for (const std::vector<int64_t> &w : badIds)
    EXPECT_EQ(std::search(b.tokens.begin(), b.tokens.end(), w.begin(), w.end()), b.tokens.end());
  expectAllFree(*e, s);

  // Refusals name the parameter.
  serve::Request badRange = request("x1", prompt, n);
  badRange.stopTokenIds = {e->vocabSize()};
  EXPECT_EQ(s.submit(badRange, c.callbacks("x1")).message().rfind("stop_token_ids[0] = ", 0), 0u);
  serve::Request badMin = request("x2", prompt, 4);
  badMin.minTokens = 5;
  EXPECT_EQ(s.submit(badMin, c.callbacks("x2")).message().rfind("min_tokens must be", 0), 0u);
  serve::Request emptyWord = request("x3", prompt, 4);
  emptyWord.badWords = {"  "};
  EXPECT_EQ(s.submit(emptyWord, c.callbacks("x3")).message(), "bad_words[0] is empty");
  serve::Request nothing = request("x4", prompt, 4);
  nothing.allowedTokenIds = {ref[0]};
  nothing.stopTokenIds = {ref[0]};
  nothing.minTokens = 1;
  EXPECT_EQ(s.submit(nothing, c.callbacks("x4")).message().rfind("allowed_token_ids leaves", 0),
            0u);
}

// skip_special_tokens: false keeps the text of special tokens (the EOS).
TEST_F(SchedulerTest, SpecialTokensKeptOnRequest) {
  ASSERT_NO_FATAL_FAILURE(openDemo());
  const auto &[prompt, n, ref] = psalmsEndCase(*e, *tok);
  ASSERT_NE(std::find(ref.begin(), ref.end(), 0), ref.end());
  const std::string eosText = tok->decode({0}, false);
  ASSERT_FALSE(eosText.empty());
  serve::SchedulerOptions opts;
  opts.numKvBlocks = 64;
  auto sch = serve::Scheduler::create(*e, tok, opts);
  ASSERT_TRUE(sch.isOk());
  Collector c;
  serve::Request keep = request("keep", prompt, n);
  keep.skipSpecialTokens = false;
  ASSERT_TRUE((*sch)->submit(keep, c.callbacks("keep")).isOk());
  ASSERT_TRUE((*sch)->submit(request("skip", prompt, n), c.callbacks("skip")).isOk());
  drain(**sch);
  EXPECT_EQ(c.out["keep"].tokens, ref);
  EXPECT_EQ(c.out["keep"].text, tok->decode(std::vector<int32_t>(ref.begin(), ref.end()), false));
  EXPECT_NE(c.out["keep"].text.find(eosText), std::string::npos);
  EXPECT_EQ(c.out["skip"].text.find(eosText), std::string::npos);
  expectAllFree(*e, **sch);
}

// Cancel frees a running request's blocks at once; onFinish comes once.
TEST_F(SchedulerTest, CancelFreesBlocksAtOnce) {
  auto e = openEngine(plans().demo);
  ASSERT_TRUE(e);
  auto tok = tokenizerOf(*e);
  serve::SchedulerOptions opts;
  opts.numKvBlocks = 64;
  opts.enablePrefixCaching = true;
  StatusOr<std::unique_ptr<serve::Scheduler>> sch = serve::Scheduler::create(*e, tok, opts);
  ASSERT_TRUE(sch.isOk()) << sch.status().toString();
  serve::Scheduler &s = **sch;
  Collector c;
  std::vector<int64_t> p = encode(*tok, "And the LORD spake unto Moses, saying, Speak unto the "
                                        "children of Israel");
  ASSERT_TRUE(s.submit(request("run", p, 100), c.callbacks("run")).isOk());
  ASSERT_TRUE(s.submit(request("run2", p, 100), c.callbacks("run2")).isOk());
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(s.step().isOk());
  EXPECT_EQ(c.out["run"].tokens.size(), 5u);
  EXPECT_GT(e->pool().allocator().numUsed(), 0);
  EXPECT_EQ(s.stats().running, 2);
  s.cancel("run");
  s.cancel("run2");
  EXPECT_EQ(e->pool().allocator().numUsed(), 0) << "cancel did not free the blocks";
  EXPECT_EQ(s.stats().kvBlocksUsed, 0);
  EXPECT_EQ(s.stats().running, 0);
  EXPECT_EQ(c.finished, 0) << "onFinish belongs to the scheduler's thread";
  StatusOr<bool> r = s.step();
  ASSERT_TRUE(r.isOk());
  EXPECT_TRUE(*r);
  EXPECT_EQ(c.out["run"].finishes, 1);
  EXPECT_EQ(c.out["run"].finish.reason, FinishReason::kCancelled);
  EXPECT_EQ(c.out["run"].finish.completionTokens, 5);
  s.cancel("run");     // already finished: ignored
  s.cancel("unknown"); // ignored
  // A waiting request, cancelled before it ran.
  ASSERT_TRUE(s.submit(request("wait", p, 4), c.callbacks("wait")).isOk());
  s.cancel("wait");
  drain(s);
  EXPECT_EQ(c.out["wait"].finishes, 1);
  EXPECT_EQ(c.out["wait"].finish.reason, FinishReason::kCancelled);
  EXPECT_TRUE(c.out["wait"].tokens.empty());
  EXPECT_EQ(s.stats().requestsCancelled, 3);
  expectAllFree(*e, s);
  // The id can be used again once finished.
  ASSERT_TRUE(s.submit(request("run", p, 3), c.callbacks("run-again")).isOk());
  drain(s);
  EXPECT_EQ(c.out["run-again"].finish.reason, FinishReason::kLength);
  expectAllFree(*e, s);
}

// Admission control: a full queue, and requests that can never run.
TEST_F(SchedulerTest, AdmissionErrors) {
  auto e = openEngine(plans().demo);
  ASSERT_TRUE(e);
  auto tok = tokenizerOf(*e);
  serve::SchedulerOptions opts;
  opts.numKvBlocks = 8;
  opts.maxWaiting = 2;
  StatusOr<std::unique_ptr<serve::Scheduler>> sch = serve::Scheduler::create(*e, tok, opts);
  ASSERT_TRUE(sch.isOk()) << sch.status().toString();
  serve::Scheduler &s = **sch;
  Collector c;
  std::vector<int64_t> p = encode(*tok, "In the beginning");
  ASSERT_TRUE(s.submit(request("a", p, 4), c.callbacks("a")).isOk());
  ASSERT_TRUE(s.submit(request("b", p, 4), c.callbacks("b")).isOk());
  Status full = s.submit(request("c", p, 4), c.callbacks("c"));
  EXPECT_EQ(full.code(), StatusCode::kResourceExhausted) << full.toString();
  Status dup = s.submit(request("a", p, 4), c.callbacks("a"));
  EXPECT_EQ(dup.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dup.message().find("'a'"), std::string::npos) << dup.message();

  auto expectInvalid = [&](serve::Request r, const std::string &part) {
    Status st = s.submit(std::move(r), {});
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.toString();
    EXPECT_NE(st.message().find(part), std::string::npos) << st.message();
  };
  const int64_t maxLen = e->maxModelLen(); // 512
  expectInvalid(request("long", std::vector<int64_t>(600, 5), 4), "the prompt has 600 tokens");
  expectInvalid(request("long2", std::vector<int64_t>(500, 5), 20),
                "more than the context of " + std::to_string(maxLen));
  expectInvalid(request("kv", std::vector<int64_t>(120, 5), 20), "KV cache blocks");
  expectInvalid(request("empty", {}, 4), "empty");
  expectInvalid(request("vocab", {1, 2, 99999}, 4), "prompt token 2 is 99999");
  expectInvalid(request("zero", p, 0), "max_tokens");
  serve::Request bad = request("temp", p, 4);
  bad.sampling.temperature = -1;
  expectInvalid(bad, "temperature");
  serve::Request lp = request("lp", p, 4);
  lp.logprobs = 50;
  expectInvalid(lp, "logprobs");
  drain(s);
  EXPECT_EQ(c.finished, 2);
  expectAllFree(*e, s);

  // Without a tokenizer, stop strings are refused.
  auto nt = serve::Scheduler::create(*e, nullptr, opts);
  ASSERT_TRUE(nt.isOk());
  serve::Request st = request("s", p, 4);
  st.stop = {"LORD"};
  Status r = (*nt)->submit(st, {});
  EXPECT_EQ(r.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.message().find("tokenizer"), std::string::npos) << r.message();
}

// Stop strings end the text just before them and never leak a prefix of
// one; deltas never split a UTF-8 character; EOS ends a request.
TEST_F(SchedulerTest, StopStringsEosAndLogprobs) {
  ASSERT_NO_FATAL_FAILURE(openDemo());
  StatusOr<Tensor> hf = readNpy(kSource + "/test/fixtures/demo/generated_ids.npy");
  ASSERT_TRUE(hf.isOk());
  std::vector<int64_t> ids(hf->data<int64_t>(), hf->data<int64_t>() + hf->numElements());
  std::vector<int64_t> prompt(ids.begin(), ids.begin() + 4);
  std::string full = tok->decode(std::vector<int32_t>(ids.begin() + 4, ids.end()), true);
  size_t at = full.find("LORD");
  ASSERT_NE(at, std::string::npos);

  serve::SchedulerOptions opts;
  opts.numKvBlocks = 64;
  StatusOr<std::unique_ptr<serve::Scheduler>> sch = serve::Scheduler::create(*e, tok, opts);
  ASSERT_TRUE(sch.isOk());
  serve::Scheduler &s = **sch;
  Collector c;
  serve::Request r = request("stop", prompt, 48);
  r.stop = {"LORD", "never appears"};
  ASSERT_TRUE(s.submit(r, c.callbacks("stop")).isOk());
  serve::Request lp = request("lp", prompt, 8);
  lp.logprobs = 3;
  ASSERT_TRUE(s.submit(lp, c.callbacks("lp")).isOk());
  drain(s);
  const Outcome &o = c.out["stop"];
  EXPECT_EQ(o.finish.reason, FinishReason::kStop);
  EXPECT_EQ(o.text, full.substr(0, at));
  for (size_t i = 0; i + 1 < o.deltas.size(); ++i) {
    EXPECT_EQ(o.deltas[i].find("LO"), std::string::npos) << "delta " << i << " leaks the stop string";
  }
  EXPECT_LT(o.tokens.size(), 48u);
  // The tokens up to the stop are HF's.
  EXPECT_TRUE(std::equal(o.tokens.begin(), o.tokens.end(), ids.begin() + 4));

  const Outcome &l = c.out["lp"];
  ASSERT_EQ(l.events.size(), 8u);
  for (const serve::TokenEvent &ev : l.events) {
    ASSERT_EQ(ev.topLogprobs.size(), 3u);
    EXPECT_EQ(ev.topLogprobs[0].first, ev.token); // greedy picks the most likely
    EXPECT_FLOAT_EQ(ev.topLogprobs[0].second, ev.logprob);
    EXPECT_LE(ev.logprob, 0.0f);
    EXPECT_GE(ev.topLogprobs[0].second, ev.topLogprobs[1].second);
  }
  expectAllFree(*e, s);
}

// Steps whose every sequence is plain greedy take Engine::stepBatch's
// kLastGreedy tokens; a batch mixing in a repetition penalty (or logprobs)
// must keep the logits path. Both requests run in one batch: the plain one
// matches HF's greedy tokens, the penalised one the single-sequence
// Sampler reference with the penalty (which differs from plain greedy here,
// so a step that dropped the penalty would fail).
TEST_F(SchedulerTest, GreedyStepsAndPenalisedNeighbours) {
  auto e = openEngine(plans().demo);
  ASSERT_TRUE(e);
  StatusOr<Tensor> hf = readNpy(kSource + "/test/fixtures/demo/generated_ids.npy");
  ASSERT_TRUE(hf.isOk());
  std::vector<int64_t> ids(hf->data<int64_t>(), hf->data<int64_t>() + hf->numElements());
  std::vector<int64_t> prompt(ids.begin(), ids.begin() + 4);
  sampler::SamplingParams pen = greedy();
  pen.repetitionPenalty = 1.8f;
  const std::vector<int64_t> penalised = reference(*e, prompt, 24, pen);
  const std::vector<int64_t> plain(ids.begin() + 4, ids.begin() + 28);
  ASSERT_NE(penalised, plain) << "the penalty must change the tokens for this test to mean anything";

  serve::SchedulerOptions opts;
  opts.numKvBlocks = 64;
  StatusOr<std::unique_ptr<serve::Scheduler>> sch = serve::Scheduler::create(*e, nullptr, opts);
  ASSERT_TRUE(sch.isOk());
  Collector c;
  serve::Request a = request("plain", prompt, 24);
  serve::Request b = request("pen", prompt, 24);
  b.sampling = pen;
  ASSERT_TRUE((*sch)->submit(a, c.callbacks("plain")).isOk());
  ASSERT_TRUE((*sch)->submit(b, c.callbacks("pen")).isOk());
  drain(**sch);
  EXPECT_EQ(c.out["plain"].tokens, plain);
  EXPECT_EQ(c.out["pen"].tokens, penalised);
  // Alone, the plain request runs greedy steps only: still HF's tokens.
  Collector alone;
  ASSERT_TRUE((*sch)->submit(request("alone", prompt, 24), alone.callbacks("alone")).isOk());
  drain(**sch);
  EXPECT_EQ(alone.out["alone"].tokens, plain);
  expectAllFree(*e, **sch);
}

// Frequency and presence penalties (issue 24): a greedy request with them
// gets the argmax of OpenAI's formula applied to the engine's logits,
// counting the sequence's own generated tokens and never the prompt (the
// reference below is the formula written here, not the Sampler). Alone (a
// greedy-only step must not take the engine's argmax, which knows no
// penalty), batched with a plain greedy request, twice side by side (as the
// choices of n = 2: each its own counts), and with speculative decoding
// (the demo plan as its own draft, and n-gram lookup).
TEST_F(SchedulerTest, OccurrencePenaltiesFollowTheFormulaOnTheEnginesLogits) {
  auto e = openEngine(plans().demo);
  ASSERT_TRUE(e);
  StatusOr<Tensor> hf = readNpy(kSource + "/test/fixtures/demo/generated_ids.npy");
  ASSERT_TRUE(hf.isOk());
  std::vector<int64_t> ids(hf->data<int64_t>(), hf->data<int64_t>() + hf->numElements());
  const std::vector<int64_t> prompt(ids.begin(), ids.begin() + 12);
  const int64_t n = 24;
  // logit -= f * c; logit -= p (c > 0), in float, c counted over `counted`.
  auto formula = [](float f, float p, const std::vector<int64_t> &before) {
    return [f, p, before](const std::vector<int64_t> &out, std::vector<float> &row) {
      std::map<int64_t, int> count;
      for (const std::vector<int64_t> *v : {&before, &out})
        for (int64_t t : *v)
          ++count[t];
      for (const auto &[t, c] : count) {
        volatile float fc = f * float(c);
        volatile float a = row[size_t(t)] - fc;
        row[size_t(t)] = a - p;
      }
    };
  };
  const std::vector<int64_t> plain(ids.begin() + 12, ids.begin() + 12 + n);
  struct Pen {
    float f, p;
  };
  for (const Pen &pen : {Pen{0.7f, 0.4f}, Pen{2.0f, 0.0f}, Pen{-0.6f, 0.3f}}) {
    SCOPED_TRACE("frequency " + std::to_string(pen.f) + " presence " + std::to_string(pen.p));
    const std::vector<int64_t> want = referenceMasked(*e, prompt, n, formula(pen.f, pen.p, {}));
    ASSERT_NE(want, plain) << "the penalty must change the tokens for this test to mean anything";
    ASSERT_NE(want, referenceMasked(*e, prompt, n, formula(pen.f, pen.p, prompt)))
        << "counting the prompt must change the tokens for this test to mean anything";
    sampler::SamplingParams sp = greedy();
    sp.frequencyPenalty = pen.f;
    sp.presencePenalty = pen.p;

    using M = engine::SpeculativeMethod;
    for (std::optional<M> spec : {std::optional<M>(), std::optional<M>(M::kDraft),
                                  std::optional<M>(M::kNgram)}) {
      SCOPED_TRACE(spec ? "speculative " + std::to_string(int(*spec)) : "plain decoding");
      serve::SchedulerOptions opts;
      opts.numKvBlocks = 64;
      if (spec) {
        opts.speculative.method = *spec;
        opts.speculative.numTokens = 4;
        if (*spec == M::kDraft)
          opts.speculative.draftPlan = plans().demo;
      }
      StatusOr<std::unique_ptr<serve::Scheduler>> sch = serve::Scheduler::create(*e, nullptr, opts);
      ASSERT_TRUE(sch.isOk()) << sch.status().toString();
      Collector alone;
      serve::Request r = request("alone", prompt, n);
      r.sampling = sp;
      ASSERT_TRUE((*sch)->submit(r, alone.callbacks("alone")).isOk());
      drain(**sch);
      EXPECT_EQ(alone.out["alone"].tokens, want);

      Collector c;
      ASSERT_TRUE((*sch)->submit(request("plain", prompt, n), c.callbacks("plain")).isOk());
      for (const char *id : {"pen-0", "pen-1"}) {
        serve::Request q = request(id, prompt, n);
        q.sampling = sp;
        ASSERT_TRUE((*sch)->submit(q, c.callbacks(id)).isOk());
      }
      drain(**sch);
      EXPECT_EQ(c.out["plain"].tokens, plain);
      EXPECT_EQ(c.out["pen-0"].tokens, want);
      EXPECT_EQ(c.out["pen-1"].tokens, want);
      expectAllFree(*e, **sch);
    }
  }
}

// A stop string spanning several tokens: its prefix is held back while it
// may still match, and never reaches a token event.
TEST_F(SchedulerTest, StopStringPrefixIsHeldBack) {
  ASSERT_NO_FATAL_FAILURE(openDemo());
  StatusOr<Tensor> hf = readNpy(kSource + "/test/fixtures/demo/generated_ids.npy");
  ASSERT_TRUE(hf.isOk());
  std::vector<int64_t> ids(hf->data<int64_t>(), hf->data<int64_t>() + hf->numElements());
  std::vector<int64_t> prompt(ids.begin(), ids.begin() + 4);
  // " of the week.\nAnd the angel of the LORD said unto him, ..."
  std::string full = tok->decode(std::vector<int32_t>(ids.begin() + 4, ids.end()), true);
  const std::string stop = "angel of the LORD said";
  size_t at = full.find(stop);
  ASSERT_NE(at, std::string::npos) << full;
  ASSERT_NE(full.find(" of the week."), std::string::npos) << full;

  serve::SchedulerOptions opts;
  opts.numKvBlocks = 64;
  auto sch = serve::Scheduler::create(*e, tok, opts);
  ASSERT_TRUE(sch.isOk());
  Collector c;
  serve::Request r = request("stop", prompt, 48);
  // "of the week!" never matches, but " of the week" is held until the "."
  r.stop = {stop, "of the week!"};
  ASSERT_TRUE((*sch)->submit(r, c.callbacks("stop")).isOk());
  drain(**sch);
  const Outcome &o = c.out["stop"];
  EXPECT_EQ(o.finish.reason, FinishReason::kStop);
  EXPECT_EQ(o.text, full.substr(0, at));
  std::string streamed, heldAfterWeek;
  for (size_t i = 0; i < o.events.size(); ++i) {
    streamed += o.events[i].textDelta;
    EXPECT_EQ(o.text.compare(0, streamed.size(), streamed), 0)
        << "token event " << i << " sent text beyond the output: " << streamed;
    EXPECT_EQ(streamed.find("angel"), std::string::npos) << "a stop-string prefix leaked";
    // The text " of the week" is never streamed without what follows it.
    if (streamed.size() >= 12 && streamed.compare(streamed.size() - 12, 12, " of the week") == 0)
      ADD_FAILURE() << "a possible stop string was streamed: " << streamed;
  }
  EXPECT_LT(streamed.size(), o.text.size() + 1);
  expectAllFree(*e, **sch);
}

// Byte-level tokens that end inside a UTF-8 character: every delta is
// well-formed UTF-8 and the deltas add up to the one-shot decode. A random
// model (llama_op18, vocabulary 256) with the demo's byte-level tokenizer
// writes arbitrary bytes.
TEST_F(SchedulerTest, TextDeltasNeverSplitUtf8) {
  auto e = openEngine(plans().llama);
  ASSERT_TRUE(e);
  auto demo = openEngine(plans().demo);
  ASSERT_TRUE(demo);
  auto tok = tokenizerOf(*demo);
  ASSERT_TRUE(tok);
  auto wellFormed = [](const std::string &s) {
    for (size_t i = 0; i < s.size();) {
      unsigned char c = static_cast<unsigned char>(s[i]);
      size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
      if (n == 0 || i + n > s.size())
        return false;
      for (size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80)
          return false;
      i += n;
    }
    return true;
  };
  serve::SchedulerOptions opts;
  opts.numKvBlocks = 64;
  auto sch = serve::Scheduler::create(*e, tok, opts);
  ASSERT_TRUE(sch.isOk());
  Collector c;
  for (int i = 0; i < 4; ++i) {
    serve::Request r = request("u" + std::to_string(i), {1, 2, 3, int64_t(100 + i)}, 64);
    r.sampling.temperature = 1.0f;
    r.sampling.seed = 7 + i;
    ASSERT_TRUE((*sch)->submit(r, c.callbacks(r.id)).isOk());
  }
  drain(**sch);
  int nonAscii = 0;
  for (int i = 0; i < 4; ++i) {
    const Outcome &o = c.out["u" + std::to_string(i)];
    ASSERT_EQ(o.tokens.size(), 64u);
    for (const std::string &d : o.deltas)
      EXPECT_TRUE(wellFormed(d)) << "a delta splits a UTF-8 character";
    EXPECT_EQ(o.text, tok->decode(std::vector<int32_t>(o.tokens.begin(), o.tokens.end()), true));
    for (char ch : o.text)
      nonAscii += static_cast<unsigned char>(ch) >= 0x80;
  }
  EXPECT_GT(nonAscii, 0) << "the test wrote no multi-byte text";
  expectAllFree(*e, **sch);
}

// EOS: a request stops at an end-of-sequence token unless ignoreEos. The
// demo's EOS is <|endoftext|> (id 0), which the model writes between
// chapters: after the last verse of the Psalms it writes " the LORD." and
// then 0.
TEST_F(SchedulerTest, EosEndsTheRequest) {
  ASSERT_NO_FATAL_FAILURE(openDemo());
  const auto &[prompt, n, ref] = psalmsEndCase(*e, *tok);
  auto eos = std::find(ref.begin(), ref.end(), 0);
  ASSERT_NE(eos, ref.end()) << "the demo model no longer ends the chapter here";
  serve::SchedulerOptions opts;
  opts.numKvBlocks = 64;
  auto sch = serve::Scheduler::create(*e, tok, opts);
  ASSERT_TRUE(sch.isOk());
  Collector c;
  serve::Request r = request("eos", prompt, n);
  r.ignoreEos = false;
  ASSERT_TRUE((*sch)->submit(r, c.callbacks("eos")).isOk());
  ASSERT_TRUE((*sch)->submit(request("ignore", prompt, n), c.callbacks("ignore")).isOk());
  drain(**sch);
  const Outcome &o = c.out["eos"];
  EXPECT_EQ(o.finish.reason, FinishReason::kStop);
  // The EOS token is reported (and counted) but adds no text.
  EXPECT_EQ(o.tokens, std::vector<int64_t>(ref.begin(), eos + 1));
  EXPECT_EQ(o.text, tok->decode(std::vector<int32_t>(ref.begin(), eos), true));
  EXPECT_EQ(o.text, " the LORD.");
  EXPECT_EQ(o.finish.completionTokens, int64_t(eos - ref.begin()) + 1);
  EXPECT_TRUE(o.events.back().textDelta.empty());
  const Outcome &g = c.out["ignore"];
  EXPECT_EQ(g.finish.reason, FinishReason::kLength);
  EXPECT_EQ(g.tokens, ref);
  expectAllFree(*e, **sch);
}

// Speculative decoding (issue 23): decoding sequences guess K tokens (prompt
// lookup, or the demo plan as its own draft) and verify them in their step;
// batched, chunked, preempted and prefix-cached, greedy output is exactly
// plain decoding's (and HF's for the demo prompt), every KV block comes back,
// and the counters add up (the plan as its own draft: every guess kept).
TEST_F(SchedulerTest, SpeculativeGreedyMatchesPlainDecoding) {
  ASSERT_NO_FATAL_FAILURE(openDemo());
  std::vector<Case> cases = demoCases(*e, *tok, 20);
  Case h = hfDemoCase();
  ASSERT_EQ(h.expected.size(), 48u);
  cases.push_back(h);
  int64_t generated = 0, largest = 0;
  for (const Case &c : cases) {
    generated += c.n;
    largest = std::max<int64_t>(largest, (int64_t(c.prompt.size()) + c.n + 15) / 16);
  }
  serve::SchedulerOptions plain;
  plain.numKvBlocks = 256;
  serve::SchedulerStats base;
  runAndCompare(*e, tok, plain, cases, &base);
  EXPECT_EQ(base.specDraftTokens, 0);

  struct Mode {
    engine::SpeculativeMethod method;
    int64_t k;
    int64_t budget, blocks;
    bool prefixCaching;
  };
  using M = engine::SpeculativeMethod;
  for (const Mode &m : {Mode{M::kNgram, 4, 2048, 256, false}, Mode{M::kDraft, 3, 2048, 256, false},
                        Mode{M::kNgram, 8, 6, 256, true}, Mode{M::kDraft, 4, 2048, largest + 2, false},
                        Mode{M::kDraft, 16, 2048, largest + 2, true}}) {
    SCOPED_TRACE("method " + std::to_string(int(m.method)) + " K " + std::to_string(m.k) +
                 " budget " + std::to_string(m.budget) + " blocks " + std::to_string(m.blocks));
    serve::SchedulerOptions opts;
    opts.numKvBlocks = m.blocks;
    opts.maxNumBatchedTokens = m.budget;
    opts.enablePrefixCaching = m.prefixCaching;
    opts.speculative.method = m.method;
    opts.speculative.numTokens = m.k;
    if (m.method == M::kDraft)
      opts.speculative.draftPlan = plans().demo;
    serve::SchedulerStats st;
    runAndCompare(*e, tok, opts, cases, &st);
    EXPECT_EQ(st.generationTokensTotal, generated);
    EXPECT_GT(st.specDraftTokens, 0);
    EXPECT_GT(st.specVerifySteps, 0);
    EXPECT_LE(st.specAcceptedTokens, st.specDraftTokens);
    if (m.method == M::kDraft) {
      EXPECT_EQ(st.specAcceptedTokens, st.specDraftTokens) << "the plan disagrees with itself";
      if (m.blocks == 256)
        EXPECT_LT(st.stepsTotal, base.stepsTotal); // several tokens a step
    }
    if (m.blocks != 256)
      EXPECT_GT(st.preemptionsTotal, 0);
  }
}

// EOS inside an accepted run ends the request there, as without speculation;
// a stop string cuts the text the same way; seeded sampling with the
// rejection rule is reproducible.
TEST_F(SchedulerTest, SpeculativeStopsAndSampling) {
  ASSERT_NO_FATAL_FAILURE(openDemo());
  const auto &[prompt, n, ref] = psalmsEndCase(*e, *tok);
  auto eos = std::find(ref.begin(), ref.end(), 0);
  ASSERT_NE(eos, ref.end());
  serve::SchedulerOptions opts;
  opts.numKvBlocks = 64;
  opts.speculative.method = engine::SpeculativeMethod::kDraft;
  opts.speculative.numTokens = 8;
  opts.speculative.draftPlan = plans().demo;
  auto sch = serve::Scheduler::create(*e, tok, opts);
  ASSERT_TRUE(sch.isOk()) << sch.status().toString();
  Collector c;
  serve::Request r = request("eos", prompt, n);
  r.ignoreEos = false;
  ASSERT_TRUE((*sch)->submit(r, c.callbacks("eos")).isOk());
  serve::Request st = request("stop", prompt, n);
  st.stop = {"LORD"};
  ASSERT_TRUE((*sch)->submit(st, c.callbacks("stop")).isOk());
  for (const char *id : {"s1", "s2"}) {
    serve::Request q = request(id, prompt, n);
    q.sampling.temperature = 0.8f;
    q.sampling.seed = 11;
    ASSERT_TRUE((*sch)->submit(q, c.callbacks(id)).isOk());
  }
  drain(**sch);
  const Outcome &o = c.out["eos"];
  EXPECT_EQ(o.finish.reason, FinishReason::kStop);
  EXPECT_EQ(o.tokens, std::vector<int64_t>(ref.begin(), eos + 1));
  EXPECT_EQ(o.text, " the LORD.");
  EXPECT_EQ(o.finish.completionTokens, int64_t(eos - ref.begin()) + 1);
  const std::string full = tok->decode(std::vector<int32_t>(ref.begin(), ref.end()), true);
  const Outcome &so = c.out["stop"];
  ASSERT_NE(full.find("LORD"), std::string::npos);
  EXPECT_EQ(so.finish.reason, FinishReason::kStop);
  EXPECT_EQ(so.text, full.substr(0, full.find("LORD")));
  EXPECT_EQ(c.out["s1"].tokens, c.out["s2"].tokens);
  EXPECT_EQ(int64_t(c.out["s1"].tokens.size()), n);
  EXPECT_GT((*sch)->stats().specDraftTokens, 0);
  expectAllFree(*e, **sch);
}

// Seeded sampling per request: batched equals single-sequence.
TEST_F(SchedulerTest, SeededSamplingMatchesSingleSequence) {
  ASSERT_NO_FATAL_FAILURE(openDemo());
  std::vector<std::vector<int64_t>> expected;
  std::vector<serve::Request> reqs;
  int i = 0;
  for (const std::string &p : demoPrompts()) {
    serve::Request r = request("s" + std::to_string(i), encode(*tok, p), 16);
    r.sampling.temperature = 0.8f;
    r.sampling.topP = 0.95f;
    r.sampling.topK = 50;
    r.sampling.seed = 100 + i;
    expected.push_back(reference(*e, r.promptIds, 16, r.sampling));
    reqs.push_back(r);
    ++i;
  }
  // The step thread alone, and 3 sampling threads besides it: the same tokens.
  for (int threads : {0, 3}) {
    SCOPED_TRACE("samplerThreads " + std::to_string(threads));
    serve::SchedulerOptions opts;
    opts.numKvBlocks = 128;
    opts.maxNumBatchedTokens = 32;
    opts.samplerThreads = threads;
    auto sch = serve::Scheduler::create(*e, tok, opts);
    ASSERT_TRUE(sch.isOk());
    Collector c;
    for (serve::Request &r : reqs)
      ASSERT_TRUE((*sch)->submit(r, c.callbacks(r.id)).isOk());
    drain(**sch);
    for (size_t k = 0; k < reqs.size(); ++k)
      EXPECT_EQ(c.out[reqs[k].id].tokens, expected[k]) << reqs[k].id;
    expectAllFree(*e, **sch);
  }
  serve::SchedulerOptions bad;
  bad.samplerThreads = -2;
  auto refused = serve::Scheduler::create(*e, tok, bad);
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().message(),
            "--sampler-threads must be in [0, 256] (or -1: automatic), got -2");
}

// ParallelFor: every index exactly once per run, run after run.
TEST(ParallelFor, EveryIndexOnceRunAfterRun) {
  for (int threads : {0, 1, 4}) {
    serve::ParallelFor pool(threads);
    for (size_t n : {size_t(0), size_t(1), size_t(2), size_t(7), size_t(64), size_t(1000)}) {
      for (int rep = 0; rep < 20; ++rep) {
        std::vector<std::atomic<int>> hits(n);
        pool.run(n, [&](size_t i) { hits[i].fetch_add(1); });
        for (size_t i = 0; i < n; ++i)
          ASSERT_EQ(hits[i].load(), 1) << "threads " << threads << " n " << n << " i " << i;
      }
    }
  }
}

// n > 1 with a seed (the server's choices): sequence i samples from stream
// i of the seed; stream 0 is the plain seeded request, and the same stream
// repeats. With prefix caching, a choice submitted after the first one's
// prefill takes the prompt's full blocks from the cache.
TEST_F(SchedulerTest, SamplerStreamsOfOneSeed) {
  ASSERT_NO_FATAL_FAILURE(openDemo());
  std::vector<int64_t> prompt = encode(*tok, demoPrompts()[0]);
  while (prompt.size() < 40)
    prompt.insert(prompt.end(), prompt.begin(), prompt.end());
  auto make = [&](const std::string &id, uint64_t stream) {
    serve::Request r = request(id, prompt, 16);
    r.sampling.temperature = 1.0f;
    r.sampling.seed = 42;
    r.samplerStream = stream;
    return r;
  };
  const std::vector<int64_t> stream0 = reference(*e, prompt, 16, make("ref", 0).sampling);
  serve::SchedulerOptions opts;
  opts.numKvBlocks = 64;
  opts.enablePrefixCaching = true;
  auto sch = serve::Scheduler::create(*e, tok, opts);
  ASSERT_TRUE(sch.isOk());
  Collector c;
  ASSERT_TRUE((*sch)->submit(make("c0", 0), c.callbacks("c0")).isOk());
  ASSERT_TRUE((*sch)->step().isOk()); // c0's prefill: its full blocks enter the cache
  for (auto [id, stream] : {std::pair{"c1", 1}, std::pair{"c2", 2}, std::pair{"c1b", 1}})
    ASSERT_TRUE((*sch)->submit(make(id, uint64_t(stream)), c.callbacks(id)).isOk());
  drain(**sch);
  EXPECT_EQ(c.out["c0"].tokens, stream0);
  EXPECT_EQ(c.out["c1"].tokens, c.out["c1b"].tokens);
  EXPECT_NE(c.out["c1"].tokens, c.out["c0"].tokens);
  EXPECT_NE(c.out["c2"].tokens, c.out["c1"].tokens);
  const int64_t bs = e->pool().blockSize();
  const int64_t full = (int64_t(prompt.size()) - 1) / bs * bs; // a token is always computed
  ASSERT_GT(full, 0);
  EXPECT_EQ(c.out["c1"].finish.cachedPromptTokens, full);
  EXPECT_EQ((*sch)->stats().prefixCacheHits, 3 * full);
  expectAllFree(*e, **sch);
}

// The background thread: requests submitted from other threads finish.
TEST_F(SchedulerTest, BackgroundThread) {
  ASSERT_NO_FATAL_FAILURE(openDemo());
  std::vector<Case> cases = demoCases(*e, *tok, 8);
  serve::SchedulerOptions opts;
  opts.numKvBlocks = 32;
  opts.enablePrefixCaching = true;
  auto sch = serve::Scheduler::create(*e, tok, opts);
  ASSERT_TRUE(sch.isOk());
  Collector c;
  (*sch)->start();
  std::vector<std::thread> clients;
  for (size_t k = 0; k < cases.size(); ++k)
    clients.emplace_back([&, k] {
      std::string id = "t" + std::to_string(k);
      Status st = (*sch)->submit(request(id, cases[k].prompt, cases[k].n), c.callbacks(id));
      EXPECT_TRUE(st.isOk()) << st.toString();
    });
  for (std::thread &t : clients)
    t.join();
  {
    std::unique_lock<std::mutex> l(c.mu);
    ASSERT_TRUE(c.cv.wait_for(l, std::chrono::seconds(120),
                              [&] { return c.finished == int(cases.size()); }));
  }
  (*sch)->stop();
  for (size_t k = 0; k < cases.size(); ++k)
    EXPECT_EQ(c.out["t" + std::to_string(k)].tokens, cases[k].expected);
  expectAllFree(*e, **sch);

  // Destroying a scheduler with work left cancels it and frees the blocks.
  Collector c2;
  {
    auto s2 = serve::Scheduler::create(*e, tok, opts);
    ASSERT_TRUE(s2.isOk());
    ASSERT_TRUE((*s2)->submit(request("x", cases[0].prompt, 50), c2.callbacks("x")).isOk());
    ASSERT_TRUE((*s2)->step().isOk());
  }
  EXPECT_EQ(c2.out["x"].finishes, 1);
  EXPECT_EQ(c2.out["x"].finish.reason, FinishReason::kCancelled);
  EXPECT_EQ(e->pool().allocator().numUsed(), 0);
}

} // namespace

// The KV-cache pieces prefix caching and rollback rest on (no plan needed).
namespace {
using accel::rt::kv::BlockAllocator;
using accel::rt::kv::BlockId;

TEST(PrefixCacheKV, ReclaimKeepsGenerationAllocateBumpsIt) {
  BlockAllocator a(3);
  BlockId b0 = a.allocate().value(), b1 = a.allocate().value();
  EXPECT_EQ(a.generation(b0), 1u);
  ASSERT_TRUE(a.release(b0).isOk());
  ASSERT_TRUE(a.release(b1).isOk()); // free queue: 2, 0, 1
  ASSERT_TRUE(a.reclaim(b0).isOk()); // out of the middle
  EXPECT_EQ(a.refCount(b0), 1);
  EXPECT_EQ(a.generation(b0), 1u);
  EXPECT_EQ(a.numFree(), 2);
  EXPECT_FALSE(a.reclaim(b0).isOk()); // in use
  EXPECT_FALSE(a.reclaim(7).isOk());
  EXPECT_EQ(a.allocate().value(), 2);
  EXPECT_EQ(a.allocate().value(), b1);
  EXPECT_EQ(a.generation(b1), 2u);
  EXPECT_FALSE(a.allocate().isOk());
}

TEST(PrefixCacheKV, CacheMatchesUntilEvicted) {
  BlockAllocator a(2);
  serve::PrefixCache cache(a);
  std::vector<int64_t> t(32);
  for (int i = 0; i < 32; ++i)
    t[size_t(i)] = i;
  serve::BlockHash h0 = serve::hashBlock({}, t.data(), 16);
  serve::BlockHash h1 = serve::hashBlock(h0, t.data() + 16, 16);
  serve::BlockHash other = serve::hashBlock({}, t.data() + 16, 16);
  EXPECT_FALSE(h1 == other) << "the hash must depend on the prefix";
  BlockId b0 = a.allocate().value(), b1 = a.allocate().value();
  cache.insert(h0, b0, -1, t.data(), 16);
  cache.insert(h1, b1, b0, t.data() + 16, 16);
  EXPECT_EQ(cache.match({h0, h1}, t.data(), 16, 2), (std::vector<BlockId>{b0, b1}));
  EXPECT_EQ(cache.match({h0, h1}, t.data(), 16, 1), (std::vector<BlockId>{b0}));
  EXPECT_TRUE(cache.match({other}, t.data() + 16, 16, 1).empty());
  ASSERT_TRUE(a.release(std::vector<BlockId>{b0, b1}).isOk()); // b1 freed first: LRU
  EXPECT_EQ(cache.numCachedBlocks(), 2);
  EXPECT_EQ(cache.countFree({b0, b1}), 2);
  ASSERT_TRUE(cache.acquire({b0}).isOk()); // a hit on a free block
  EXPECT_EQ(a.refCount(b0), 1);
  EXPECT_EQ(a.allocate().value(), b1); // evicts b1
  EXPECT_EQ(cache.match({h0, h1}, t.data(), 16, 2), (std::vector<BlockId>{b0}));
  EXPECT_EQ(cache.numCachedBlocks(), 1);
}

// Equal hashes are a candidate, not a hit: the entry's token ids and its
// parent block are compared (the hashes below collide by construction).
TEST(PrefixCacheKV, CollidingHashesDoNotHit) {
  BlockAllocator a(4);
  serve::PrefixCache cache(a);
  const serve::BlockHash h0{1, 1}, h1{2, 2};
  std::vector<int64_t> p(16, 7), q(16, 9), pOther(16, 8);
  BlockId victim0 = a.allocate().value();
  cache.insert(h0, victim0, -1, p.data(), 16);
  // Same hash, other tokens: no hit.
  EXPECT_TRUE(cache.match({h0}, pOther.data(), 16, 1).empty());
  EXPECT_EQ(cache.match({h0}, p.data(), 16, 1), (std::vector<BlockId>{victim0}));

  // A prompt pOther + q whose first block collided with p was computed in
  // its own blocks; its second block (tokens q) got cached under h1. A
  // prompt p + q matches the first block and q's tokens, but q's K/V were
  // computed after pOther, not p: the parent check refuses them.
  BlockId other0 = a.allocate().value(), other1 = a.allocate().value();
  cache.insert(h0, other0, -1, pOther.data(), 16); // h0 is taken: not cached
  cache.insert(h1, other1, other0, q.data(), 16);
  std::vector<int64_t> pq = p;
  pq.insert(pq.end(), q.begin(), q.end());
  EXPECT_EQ(cache.match({h0, h1}, pq.data(), 16, 2), (std::vector<BlockId>{victim0}));
  std::vector<int64_t> otherQ = pOther;
  otherQ.insert(otherQ.end(), q.begin(), q.end());
  EXPECT_TRUE(cache.match({h0, h1}, otherQ.data(), 16, 2).empty());

  // The parent's generation counts too: q's K/V computed after block x
  // held pOther are no hit after x was handed out again and now holds p.
  BlockAllocator a2(2);
  serve::PrefixCache cache2(a2);
  BlockId x = a2.allocate().value(), child = a2.allocate().value();
  cache2.insert({5, 5}, x, -1, pOther.data(), 16);
  cache2.insert(h1, child, x, q.data(), 16);
  ASSERT_TRUE(a2.release(x).isOk());
  ASSERT_EQ(a2.allocate().value(), x); // evicted, handed out again
  cache2.insert(h0, x, -1, p.data(), 16);
  EXPECT_EQ(cache2.match({h0, h1}, pq.data(), 16, 2), (std::vector<BlockId>{x}));
  cache2.insert(h1, child, x, q.data(), 16); // recomputed after p: a hit again
  EXPECT_EQ(cache2.match({h0, h1}, pq.data(), 16, 2), (std::vector<BlockId>{x, child}));
}

TEST(PrefixCacheKV, SequenceTruncateAndAdopt) {
  accel::rt::kv::KVCacheConfig cfg;
  cfg.blockSize = 4;
  cfg.numBlocks = 6;
  auto pool = accel::rt::kv::BlockPool::create(cfg);
  ASSERT_TRUE(pool.isOk());
  accel::rt::kv::SequenceKV s;
  ASSERT_TRUE(s.appendSlots(**pool, 10).isOk()); // 3 blocks
  EXPECT_EQ((*pool)->numFreeBlocks(), 3);
  ASSERT_TRUE(s.truncate(**pool, 5).isOk());
  EXPECT_EQ(s.numTokens(), 5);
  EXPECT_EQ(s.numBlocks(), 2);
  EXPECT_EQ((*pool)->numFreeBlocks(), 4);
  EXPECT_FALSE(s.truncate(**pool, 6).isOk());
  // Adopting needs a block boundary.
  BlockId shared = (*pool)->allocator().allocate().value();
  EXPECT_FALSE(s.adoptFullBlocks(**pool, {shared}).isOk());
  accel::rt::kv::SequenceKV t;
  ASSERT_TRUE(t.adoptFullBlocks(**pool, {shared}).isOk());
  EXPECT_EQ(t.numTokens(), 4);
  ASSERT_TRUE(t.appendSlots(**pool, 1).isOk());
  EXPECT_EQ(t.numBlocks(), 2);
  ASSERT_TRUE(t.release(**pool).isOk());
  ASSERT_TRUE(s.release(**pool).isOk());
  EXPECT_EQ((*pool)->numFreeBlocks(), 6);
}
} // namespace
