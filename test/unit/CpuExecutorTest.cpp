//===- CpuExecutorTest.cpp - every exec step kind on the CPU ---------------===//
//
// A hand-built plan that uses every step kind (launch, copy, collective,
// kv_write, attention_decode, attention_prefill, gemm linear and logits) is
// run through the Engine, token by token and whole, and compared with a
// plain reference computed here from the same numbers. Then the executor's
// refusals: unknown kinds and ops, collectives over several ranks.
//
//===----------------------------------------------------------------------===//
#include "runtime/engine/Engine.h"

#include "PlanTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace accel::rt;
using accel::test::PlanBuilder;
namespace pb = accel::plan;

namespace {

constexpr int64_t kV = 5, kH = 4;

std::vector<float> ramp(size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = std::sin(float(i) * scale + offset);
  return v;
}

struct Model {
  std::vector<float> table = ramp(kV * kH, 0.7f, 0.1f);
  std::vector<float> w = ramp(kH * kH, 0.3f, 0.5f);
  std::vector<float> lm = ramp(kV * kH, 0.9f, 0.2f);
  float scale = 0.5f;
};

/// ids -> embedding -> copy -> all_reduce(1) -> a [T, 1, H] view -> kv_write
/// -> attention -> a [T, H] view -> linear -> logits.
std::string buildPlan(const Model &m) {
  PlanBuilder b;
  int32_t ids = b.value("i64", {-1});
  int32_t table = b.constant({kV, kH}, m.table);
  int32_t w = b.constant({kH, kH}, m.w);
  int32_t lm = b.constant({kV, kH}, m.lm);
  int32_t x = b.value("f32", {-1, kH}), y = b.value("f32", {-1, kH}),
          z = b.value("f32", {-1, kH}), heads = b.value("f32", {-1, 1, kH}),
          att = b.value("f32", {-1, 1, kH}), merged = b.value("f32", {-1, kH}),
          lin = b.value("f32", {-1, kH}), logits = b.value("f32", {-1, kV});
  b.step(pb::EMBEDDING, {table, ids}, {x});
  b.step(pb::COPY, {x}, {y});
  b.collective(y, z, 1);
  b.viewOf(heads, z);
  PlanBuilder::attr(b.step(pb::KV_WRITE, {heads, heads}, {}), "layer", int64_t(0));
  auto &a = b.step(pb::ATTENTION, {heads}, {att});
  PlanBuilder::attr(a, "layer", int64_t(0));
  PlanBuilder::attr(a, "scale", double(m.scale));
  PlanBuilder::attr(a, "causal", int64_t(1));
  b.viewOf(merged, att);
  PlanBuilder::attr(b.step(pb::GEMM, {merged, w, -1}, {lin}), "out_dtype", "f32");
  auto &l = b.step(pb::LOGITS, {lin, lm}, {logits});
  PlanBuilder::attr(l, "out_dtype", "f32");
  b.setModel(ids, logits, kV, 64, 1, 1, kH);
  return b.bytes();
}

/// The same computation in plain loops: causal single-head attention where
/// K = V = Q = the embedding row.
std::vector<float> reference(const Model &m, const std::vector<int64_t> &ids) {
  const size_t n = ids.size();
  std::vector<float> out(n * kV);
  for (size_t t = 0; t < n; ++t) {
    const float *q = &m.table[size_t(ids[t]) * kH];
    std::vector<double> s(t + 1);
    double mx = -1e30, sum = 0;
    for (size_t j = 0; j <= t; ++j) {
      const float *k = &m.table[size_t(ids[j]) * kH];
      double d = 0;
      for (int64_t c = 0; c < kH; ++c)
        d += double(q[c]) * k[c];
      s[j] = d * m.scale;
      mx = std::max(mx, s[j]);
    }
    for (double &v : s)
      sum += (v = std::exp(v - mx));
    double att[kH] = {};
    for (size_t j = 0; j <= t; ++j)
      for (int64_t c = 0; c < kH; ++c)
        att[c] += s[j] / sum * m.table[size_t(ids[j]) * kH + c];
    double lin[kH];
    for (int64_t r = 0; r < kH; ++r) {
      lin[r] = 0;
      for (int64_t c = 0; c < kH; ++c)
        lin[r] += att[c] * m.w[size_t(r * kH + c)];
    }
    for (int64_t v = 0; v < kV; ++v) {
      double d = 0;
      for (int64_t c = 0; c < kH; ++c)
        d += lin[c] * m.lm[size_t(v * kH + c)];
      out[t * kV + size_t(v)] = float(d);
    }
  }
  return out;
}

std::unique_ptr<engine::Engine> engineFor(const std::string &bytes) {
  StatusOr<std::shared_ptr<const plan::PlanFile>> p = plan::PlanFile::fromBytes(bytes, "t.plan");
  EXPECT_TRUE(p) << p.status().message();
  if (!p)
    return nullptr;
  StatusOr<std::unique_ptr<engine::Engine>> e = engine::Engine::create(*p);
  EXPECT_TRUE(e) << e.status().message();
  return e ? std::move(*e) : nullptr;
}

void expectNear(const Tensor &got, const std::vector<float> &want) {
  ASSERT_EQ(got.numElements(), int64_t(want.size()));
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got.data<float>()[i], want[i], 1e-5) << "element " << i;
}

TEST(CpuExecutor, EveryStepKindMatchesReference) {
  Model m;
  const std::vector<int64_t> ids = {3, 1, 4, 1, 0, 2, 4, 3, 2};
  std::vector<float> want = reference(m, ids);

  // Whole, token by token (decode steps), and in chunks that cross the
  // 4-token blocks.
  std::unique_ptr<engine::Engine> e = engineFor(buildPlan(m));
  ASSERT_TRUE(e);
  for (int64_t chunk : {0, 1, 3}) {
    StatusOr<Tensor> got = e->score(ids, chunk);
    ASSERT_TRUE(got) << got.status().message();
    expectNear(*got, want);
  }
}

TEST(CpuExecutor, GeneratesGreedily) {
  Model m;
  std::unique_ptr<engine::Engine> e = engineFor(buildPlan(m));
  ASSERT_TRUE(e);
  std::vector<int64_t> seq = {2, 0};
  int left = 4;
  StatusOr<std::vector<int64_t>> out =
      e->generate(seq, [&](const float *logits, int64_t vocab) -> StatusOr<int64_t> {
        if (left-- == 0)
          return int64_t(-1);
        return int64_t(std::max_element(logits, logits + vocab) - logits);
      });
  ASSERT_TRUE(out) << out.status().message();
  ASSERT_EQ(out->size(), 4u);
  // Each generated token is the argmax of the reference at its position.
  std::vector<int64_t> all = seq;
  for (int64_t t : *out) {
    std::vector<float> ref = reference(m, all);
    const float *last = &ref[(all.size() - 1) * kV];
    EXPECT_EQ(t, std::max_element(last, last + kV) - last);
    all.push_back(t);
  }
}

// generateGreedy: the engine picks each token (kLastGreedy) and `accept`
// sees it; the tokens are the reference's argmax at every position, as
// generate() with a host argmax gives.
TEST(CpuExecutor, GenerateGreedyPicksTheArgmax) {
  Model m;
  std::unique_ptr<engine::Engine> e = engineFor(buildPlan(m));
  ASSERT_TRUE(e);
  std::vector<int64_t> seq = {2, 0, 3};
  int left = 5;
  std::vector<int64_t> seen;
  StatusOr<std::vector<int64_t>> out =
      e->generateGreedy(seq, [&](int64_t token) -> StatusOr<int64_t> {
        if (left-- == 0)
          return int64_t(-1);
        seen.push_back(token);
        return token;
      });
  ASSERT_TRUE(out) << out.status().message();
  ASSERT_EQ(out->size(), 5u);
  EXPECT_EQ(*out, seen);
  std::vector<int64_t> all = seq;
  for (int64_t t : *out) {
    std::vector<float> ref = reference(m, all);
    const float *last = &ref[(all.size() - 1) * kV];
    EXPECT_EQ(t, std::max_element(last, last + kV) - last);
    all.push_back(t);
  }
  EXPECT_EQ(e->pool().allocator().numUsed(), 0);
}

std::string prepareError(void (*edit)(PlanBuilder &)) {
  PlanBuilder b;
  int32_t ids = b.value("i64", {-1});
  int32_t out = b.value("i64", {-1});
  b.meta.mutable_schedule()->set_token_ids(ids);
  b.meta.mutable_schedule()->set_logits(out);
  b.meta.mutable_model()->set_vocab_size(4);
  edit(b);
  StatusOr<std::shared_ptr<const plan::PlanFile>> p = plan::PlanFile::fromBytes(b.bytes(), "e.plan");
  if (!p)
    return p.status().message();
  StatusOr<std::unique_ptr<engine::CpuExecutor>> ex = engine::CpuExecutor::create(*p);
  return ex ? "ok" : ex.status().message();
}

TEST(CpuExecutor, RefusesWhatItCannotRun) {
  EXPECT_EQ(prepareError([](PlanBuilder &b) {
              b.step(pb::RMS_NORM, {0, 0}, {1}).set_location("n1");
            }),
            "e.plan: step 0 (rms_norm at 'n1'): attribute 'epsilon' is missing");
  EXPECT_EQ(prepareError([](PlanBuilder &b) { b.step(pb::StepKind(77), {0}, {1}); }),
            "e.plan: schedule: step 0 has unknown kind 77 (a plan from a newer accelc?)");
  EXPECT_EQ(prepareError([](PlanBuilder &b) { b.step(pb::LAUNCH, {0}, {1}); }),
            "e.plan: step 0 (launch): the CPU backend has no kernel for step kind launch");
  EXPECT_EQ(prepareError([](PlanBuilder &b) { b.onnx("Frobnicate", {0}, {1}); }),
            "e.plan: step 0 (onnx Frobnicate): the CPU backend has no kernel for ONNX "
            "operator 'Frobnicate'");
  EXPECT_EQ(prepareError([](PlanBuilder &b) { b.collective(0, 1, 2); }),
            "e.plan: schedule: step 0 (collective) has group_size 2 in a plan for 1 ranks");
  EXPECT_EQ(prepareError([](PlanBuilder &b) { b.step(pb::RESIDUAL_ADD, {0}, {1}); }),
            "e.plan: step 0 (residual_add): it has 1 operands, 2 expected");
  EXPECT_EQ(prepareError([](PlanBuilder &b) {
              PlanBuilder::attr(b.step(pb::KV_WRITE, {0, 0}, {}), "layer", int64_t(3));
              b.step(pb::COPY, {0}, {1});
            }),
            "e.plan: step 0 (kv_write): layer 3 is not in the plan's KV cache");
  EXPECT_EQ(prepareError([](PlanBuilder &b) {
              auto &s = b.step(pb::GEMM, {0, 0}, {1});
              PlanBuilder::attr(s, "out_dtype", "f32");
              PlanBuilder::attr(s, "activation", "swish");
            }),
            "e.plan: step 0 (gemm): gemm activation 'swish' has no CPU kernel");
}

} // namespace
