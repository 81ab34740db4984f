//===- QkvRotaryStepTest.cpp - the fused qkv_rotary steps on the CPU ------===//
//
// `kv_write qkv_rotary` (split, head views, q/k rotary and the KV-cache
// write in one step) and `qkv_rotary` against the steps they replace
// (a split, views of heads, two `rotary`, a `kv_write`),
// on random data: GQA, partial rotary, the interleaved style and cos/sin
// tables. The unfused steps write layer 0 of the cache, the fused one layer
// 1; both layers and every result must agree bit for bit (the fused step
// runs the same kernels). Then the one-sentence errors.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CpuSteps.h"
#include "runtime/kv/BlockPool.h"
#include "runtime/kv/StepMetadata.h"

#include "PlanTestUtil.h"

#include <gtest/gtest.h>

#include <cstring>
#include <ostream>
#include <random>

using namespace accel::rt;
using accel::test::PlanBuilder;

namespace {

struct Config {
  int64_t heads, kvHeads, headDim, rotaryDim;
  const char *style;
  bool tables = false;
};

void PrintTo(const Config &c, std::ostream *os) {
  *os << c.heads << "/" << c.kvHeads << " heads of " << c.headDim << ", rotary_dim "
      << c.rotaryDim << ", " << c.style << (c.tables ? ", tables" : "");
}

constexpr int64_t kTokens = 6, kMaxPosition = 32;

std::vector<float> randomFloats(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

void rotaryAttrs(accel::plan::Step &s, const Config &c) {
  PlanBuilder::attr(s, "style", c.style);
  PlanBuilder::attr(s, "rotary_dim", c.rotaryDim);
  if (!c.tables)
    PlanBuilder::attr(s, "theta", 10000.0);
}

void headAttrs(accel::plan::Step &s, const Config &c) {
  PlanBuilder::attr(s, "num_heads", c.heads);
  PlanBuilder::attr(s, "num_kv_heads", c.kvHeads);
  PlanBuilder::attr(s, "head_dim", c.headDim);
}

/// The values every step reads: positions, qkv and the optional tables.
struct Plan {
  PlanBuilder b;
  int32_t pos = -1, qkv = -1, cos = -1, sin = -1;
};

Plan basePlan(const Config &c, int64_t columns) {
  Plan p;
  const int64_t d = c.headDim;
  p.pos = p.b.value("i64", {-1});
  p.b.stepInput(p.pos, accel::plan::Value::POSITIONS);
  p.qkv = p.b.constant({kTokens, columns}, randomFloats(size_t(kTokens * columns), 7));
  if (c.tables) {
    p.cos = p.b.constant({kMaxPosition, c.rotaryDim / 2},
                         randomFloats(size_t(kMaxPosition * c.rotaryDim / 2), 11));
    p.sin = p.b.constant({kMaxPosition, c.rotaryDim / 2},
                         randomFloats(size_t(kMaxPosition * c.rotaryDim / 2), 13));
  }
  auto *kv = p.b.meta.mutable_kv_cache();
  kv->set_num_layers(2);
  kv->set_num_kv_heads(c.kvHeads);
  kv->set_head_dim(d);
  kv->set_block_size(4);
  kv->set_dtype("f32");
  p.b.meta.mutable_schedule()->set_token_ids(p.b.value("i64", {-1}));
  p.b.meta.mutable_model()->set_vocab_size(1);
  return p;
}

/// Runs every step of `plan` in order on `pool` and `meta`; the values by id.
std::vector<Tensor> run(const plan::PlanFile &plan, kv::BlockPool &pool,
                        const kv::StepMetadata &meta) {
  const accel::plan::Schedule &sc = plan.schedule();
  std::vector<Tensor> values(size_t(sc.values_size()));
  for (int32_t id = 0; id < sc.values_size(); ++id)
    if (sc.values(id).is_constant())
      values[size_t(id)] = plan.constant(id);
  values[size_t(sc.positions())] = meta.positions.astype(DType::kI64);
  // A view's tensor: its root's, with the view's shape.
  auto read = [&](int32_t id) {
    const Tensor &t = values[size_t(plan.rootOf(id))];
    if (id == plan.rootOf(id) || !t.defined())
      return t;
    StatusOr<Tensor> v = t.reshaped(*plan.shapeFor(id, t.numElements()));
    return v ? *v : Tensor();
  };
  engine::StepContext ctx;
  ctx.pool = &pool;
  ctx.meta = &meta;
  for (const accel::plan::Step &step : sc.steps()) {
    const std::string kind = plan::stepKindName(step.kind());
    StatusOr<engine::CpuExecutor::Kernel> k = engine::prepareCpuStep(plan, step);
    EXPECT_TRUE(k) << kind << ": " << k.status().message();
    if (!k)
      return {};
    std::vector<Tensor> read_;
    read_.reserve(size_t(step.inputs_size()));
    std::vector<const Tensor *> in;
    for (int32_t i : step.inputs()) {
      if (i < 0) {
        in.push_back(nullptr);
        continue;
      }
      read_.push_back(read(i));
      in.push_back(&read_.back());
    }
    std::vector<Tensor> out;
    Status s = (*k)(ctx, in, out);
    EXPECT_TRUE(s.isOk()) << kind << ": " << s.message();
    if (!s.isOk())
      return {};
    EXPECT_EQ(out.size(), size_t(step.outputs_size())) << kind;
    for (size_t i = 0; i < out.size() && i < size_t(step.outputs_size()); ++i)
      values[size_t(plan.rootOf(step.outputs(int(i))))] = std::move(out[i]);
  }
  for (int32_t id = 0; id < sc.values_size(); ++id)
    if (plan.rootOf(id) != id)
      values[size_t(id)] = read(id);
  return values;
}

/// Step metadata for one sequence of kTokens tokens at positions 9.., its
/// K/V at slots 1.. of the pool.
kv::StepMetadata stepMeta() {
  kv::StepMetadata m;
  m.numSeqs = 1;
  m.numTokens = kTokens;
  std::vector<int32_t> pos, slots;
  for (int32_t t = 0; t < kTokens; ++t) {
    pos.push_back(9 + t);
    slots.push_back(1 + t);
  }
  m.positions = *Tensor::fromVector<int32_t>({kTokens}, pos);
  m.slotMapping = *Tensor::fromVector<int32_t>({kTokens}, slots);
  return m;
}

std::unique_ptr<kv::BlockPool> makePool(const Config &c) {
  kv::KVCacheConfig kc;
  kc.numLayers = 2;
  kc.numKvHeads = c.kvHeads;
  kc.headDim = c.headDim;
  kc.blockSize = 4;
  kc.numBlocks = 4;
  kc.dtype = DType::kF32;
  StatusOr<std::unique_ptr<kv::BlockPool>> p = kv::BlockPool::create(kc);
  EXPECT_TRUE(p) << p.status().message();
  return p ? std::move(*p) : nullptr;
}

bool sameBytes(const Tensor &a, const Tensor &b) {
  return a.defined() && b.defined() && a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.rawData(), b.rawData(), a.byteSize()) == 0;
}

class QkvRotaryStep : public ::testing::TestWithParam<Config> {};

TEST_P(QkvRotaryStep, MatchesTheStepsItReplaces) {
  const Config c = GetParam();
  const int64_t h = c.heads, hkv = c.kvHeads, d = c.headDim;
  Plan p = basePlan(c, (h + 2 * hkv) * d);
  PlanBuilder &b = p.b;
  // Unfused: split, split_heads x3, rotary x2, kv_write into layer 0.
  int32_t q2 = b.value("f32", {-1, h * d}), k2 = b.value("f32", {-1, hkv * d}),
          v2 = b.value("f32", {-1, hkv * d});
  auto &split = b.step(accel::plan::SPLIT, {p.qkv}, {q2, k2, v2});
  auto *sizes = split.add_attributes();
  sizes->set_name("sizes");
  for (int64_t n : {h * d, hkv * d, hkv * d})
    sizes->mutable_ints()->add_values(n);
  int32_t q0 = b.value("f32", {-1, h, d}), k0 = b.value("f32", {-1, hkv, d}),
          v = b.value("f32", {-1, hkv, d});
  b.viewOf(q0, q2);
  b.viewOf(k0, k2);
  b.viewOf(v, v2);
  int32_t q = b.value("f32", {-1, h, d}), k = b.value("f32", {-1, hkv, d});
  rotaryAttrs(b.step(accel::plan::ROTARY, {q0, p.pos, p.cos, p.sin}, {q}), c);
  rotaryAttrs(b.step(accel::plan::ROTARY, {k0, p.pos, p.cos, p.sin}, {k}), c);
  PlanBuilder::attr(b.step(accel::plan::KV_WRITE, {k, v}, {}), "layer", int64_t(0));
  // Fused: one qkv_rotary_kv_write into layer 1, and the form without the write.
  int32_t fq = b.value("f32", {-1, h, d});
  auto &fused = b.step(accel::plan::QKV_ROTARY_KV_WRITE, {p.qkv, p.pos, p.cos, p.sin}, {fq});
  PlanBuilder::attr(fused, "layer", int64_t(1));
  headAttrs(fused, c);
  rotaryAttrs(fused, c);
  int32_t lq = b.value("f32", {-1, h, d}), lk = b.value("f32", {-1, hkv, d}),
          lv = b.value("f32", {-1, hkv, d});
  auto &launch = b.step(accel::plan::QKV_ROTARY, {p.qkv, p.pos, p.cos, p.sin}, {lq, lk, lv});
  headAttrs(launch, c);
  rotaryAttrs(launch, c);
  b.meta.mutable_schedule()->set_logits(fq);

  StatusOr<std::shared_ptr<const plan::PlanFile>> plan =
      plan::PlanFile::fromBytes(b.bytes(), "q.plan");
  ASSERT_TRUE(plan) << plan.status().message();
  std::unique_ptr<kv::BlockPool> pool = makePool(c);
  ASSERT_TRUE(pool);
  kv::StepMetadata meta = stepMeta();
  std::vector<Tensor> values = run(**plan, *pool, meta);
  ASSERT_FALSE(values.empty());

  // The rotation did something (the test would pass vacuously otherwise).
  EXPECT_FALSE(sameBytes(values[size_t(q)], values[size_t(q0)]));
  EXPECT_TRUE(sameBytes(values[size_t(fq)], values[size_t(q)]));
  EXPECT_TRUE(sameBytes(values[size_t(lq)], values[size_t(q)]));
  EXPECT_TRUE(sameBytes(values[size_t(lk)], values[size_t(k)]));
  EXPECT_TRUE(sameBytes(values[size_t(lv)], values[size_t(v)]));
  EXPECT_TRUE(sameBytes(pool->keys(1), pool->keys(0)));
  EXPECT_TRUE(sameBytes(pool->values(1), pool->values(0)));
  // And the write reached the slots (slot 0 stays empty).
  const int64_t row = hkv * d;
  EXPECT_EQ(std::memcmp(pool->keyRow(1, 1), values[size_t(k)].rawData(),
                        size_t(row) * sizeof(float)),
            0);
}

INSTANTIATE_TEST_SUITE_P(
    Forms, QkvRotaryStep,
    ::testing::Values(Config{4, 2, 8, 8, "half_split"},          // GQA, full rotary
                      Config{2, 2, 8, 4, "interleaved"},         // MHA, partial, GPT-J
                      Config{4, 1, 16, 6, "half_split"},         // MQA, partial (Phi-2)
                      Config{4, 2, 8, 8, "half_split", true},    // cos/sin tables
                      Config{2, 1, 8, 4, "interleaved", true}),  // tables, partial
    [](const ::testing::TestParamInfo<Config> &i) {
      return "h" + std::to_string(i.param.heads) + "kv" + std::to_string(i.param.kvHeads) +
             "d" + std::to_string(i.param.headDim) + "r" + std::to_string(i.param.rotaryDim) +
             "_" + i.param.style + (i.param.tables ? "_tables" : "");
    });

/// The message of running a one-step `kv_write qkv_rotary` over a qkv of
/// `columns` columns with `c`'s heads (or of preparing it).
std::string fusedError(const Config &c, int64_t columns, bool dropNumHeads = false) {
  Plan p = basePlan(c, columns);
  int32_t fq = p.b.value("f32", {-1, c.heads, c.headDim});
  auto &fused = p.b.step(accel::plan::QKV_ROTARY_KV_WRITE, {p.qkv, p.pos, -1, -1}, {fq});
  PlanBuilder::attr(fused, "layer", int64_t(0));
  if (!dropNumHeads)
    PlanBuilder::attr(fused, "num_heads", c.heads);
  PlanBuilder::attr(fused, "num_kv_heads", c.kvHeads);
  PlanBuilder::attr(fused, "head_dim", c.headDim);
  rotaryAttrs(fused, c);
  p.b.meta.mutable_schedule()->set_logits(fq);
  StatusOr<std::shared_ptr<const plan::PlanFile>> plan =
      plan::PlanFile::fromBytes(p.b.bytes(), "e.plan");
  if (!plan)
    return plan.status().message();
  const accel::plan::Step &step = (*plan)->schedule().steps(0);
  StatusOr<engine::CpuExecutor::Kernel> k = engine::prepareCpuStep(**plan, step);
  if (!k)
    return k.status().message();
  std::unique_ptr<kv::BlockPool> pool = makePool(c);
  kv::StepMetadata meta = stepMeta();
  engine::StepContext ctx;
  ctx.pool = pool.get();
  ctx.meta = &meta;
  Tensor qkv = (*plan)->constant(p.qkv), pos = meta.positions.astype(DType::kI64);
  std::vector<Tensor> out;
  Status s = (*k)(ctx, {&qkv, &pos, nullptr, nullptr}, out);
  return s.isOk() ? "ok" : s.message();
}

TEST(QkvRotaryStep, RefusesInOneSentence) {
  const Config c{4, 2, 8, 8, "half_split"};
  EXPECT_EQ(fusedError(c, 64), "ok");
  EXPECT_EQ(fusedError(c, 60),
            "qkv_rotary: qkv f32[6, 60] must have (num_heads + 2 * num_kv_heads) * head_dim = "
            "64 columns");
  EXPECT_EQ(fusedError(c, 64, /*dropNumHeads=*/true), "attribute 'num_heads' is missing");
}

} // namespace
