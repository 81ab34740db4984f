//===- MoeTest.cpp - the moe step on the GPU against the CPU kernel -------===//
//
// accel-gpu-moe-tests (label `gpu`): runtime/cuda/ops/Moe.cpp against
// runtime/cpu/transformer/Moe (the reference numerics).
//
// Step tests: the moe step of a one-step plan, prepared by prepareGpuStep
// and run on random inputs of every size below, through every expert path
// (the expert-batched GEMV of decode steps and CUDA graphs, cuBLASLt per
// expert, and in bf16 / f16 the GEMV path's tensor-core form, moe_mma_*), against tk::moe on the same inputs and the same (rounded)
// weights: f32 within 1e-4 of max |out|, bf16 and f16 within 2e-2. Tokens
// 1, 3, 16, 64, 300, 2048; (experts, top_k) (4, 1), (8, 2), (60, 8); both
// routings; with and without a shared expert (with its sigmoid gate or
// without); fused gate_up and separate gate / up; a router bias; sizes
// that are not multiples of 8 (the kernels' element-by-element path); a
// wide layer (hidden 1280, intermediate 1536); routings built to reach
// every expert; quantised experts (i8 and f8E4M3FN with f32 scales per
// expert and row, the CPU reading the same bytes) in every compute dtype,
// fused and separate, 8-aligned and odd sizes. Each case prints one line:
// the error, the worst element,
// how many experts the routing reached and how many token rows were
// redrawn. Token rows whose k-th and (k+1)-th router probabilities are
// within 1e-3 (relative) are redrawn first, so that f32 summation order
// cannot change which experts a token reaches.
//
// Plan tests: a plan (embedding, moe, logits) through GpuExecutor against
// CpuExecutor: a ragged batch (a 300-token prefill, shorter prompts, decode
// steps) in f32 and bf16 and with every eager step on cuBLASLt, and decode
// steps replayed from CUDA graphs against eager runs (batch 1, 4, 16 and 3
// padded to 4); the same with i8 and f8E4M3FN experts. Without a GPU these
// report SKIPPED; the refusals of malformed quantised experts and the
// routing claims run everywhere.
//
//===----------------------------------------------------------------------===//
#include "ExecutorComparison.h"
#include "GpuTestContext.h"
#include "runtime/cpu/CpuExecutor.h"
#include "runtime/cpu/transformer/Moe.h"
#include "runtime/cuda/GpuExecutor.h"
#include "runtime/cuda/GpuSteps.h"

#include "../unit/PlanTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

using namespace accel::rt;
using accel::test::PlanBuilder;
namespace pb = accel::plan;
namespace tk = accel::rt::cpu::transformer;

namespace {

//===----------------------------------------------------------------------===//
// Random inputs (splitmix64: the same numbers on every machine)
//===----------------------------------------------------------------------===//

struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [-1, 1).
  float uniform() { return float(double(next() >> 11) * 0x1.0p-53 * 2.0 - 1.0); }
  std::vector<float> fill(size_t n, float scale) {
    std::vector<float> v(n);
    for (float &x : v)
      x = uniform() * scale;
    return v;
  }
};

const char *dtypeText(DType t) { return dtypeName(t); }

/// `v` rounded to `dt` and back (what a `dt` tensor of these values holds).
std::vector<float> roundTo(const std::vector<float> &v, DType dt) {
  Tensor t = *Tensor::fromVector<float>({int64_t(v.size())}, v);
  Tensor r = t.astype(dt).toF32();
  return std::vector<float>(r.data<float>(), r.data<float>() + v.size());
}

/// A constant of dtype `dt` (f32, bf16, f16) holding `data` rounded to it.
int32_t constantOf(PlanBuilder &b, DType dt, std::vector<int64_t> shape,
                   const std::vector<float> &data) {
  if (dt == DType::kF32)
    return b.constant(std::move(shape), data);
  Tensor t = Tensor::fromVector<float>({int64_t(data.size())}, data)->astype(dt);
  return b.constantBytes(dtypeName(dt), std::move(shape),
                         std::string(static_cast<const char *>(t.rawData()), t.byteSize()));
}

/// Stacked experts `data` [E, R, C] quantised per expert and row as
/// accel-quantize-weights does (scale = max |row| / qmax; i8 rounded to
/// nearest, f8E4M3FN saturating): the weight constant of `q`'s dtype and
/// its f32 scale [E, R].
std::pair<int32_t, int32_t> quantisedExperts(PlanBuilder &b, DType q, int64_t e, int64_t r,
                                             int64_t c, const std::vector<float> &data) {
  const bool i8 = q == DType::kI8;
  std::string bytes(size_t(e * r * c), '\0');
  std::vector<float> scales(size_t(e * r));
  for (int64_t row = 0; row < e * r; ++row) {
    float mx = 0.0f;
    for (int64_t i = 0; i < c; ++i)
      mx = std::max(mx, std::fabs(data[size_t(row * c + i)]));
    const float s = mx > 0.0f ? mx / (i8 ? 127.0f : 448.0f) : 1.0f;
    scales[size_t(row)] = s;
    for (int64_t i = 0; i < c; ++i) {
      const float v = data[size_t(row * c + i)] / s;
      bytes[size_t(row * c + i)] =
          char(i8 ? uint8_t(int8_t(std::max(-127.0f, std::min(127.0f, std::nearbyint(v)))))
                  : f32ToF8E4M3FN(v, /*saturate=*/true));
    }
  }
  return {b.constantBytes(dtypeName(q), {e, r, c}, bytes), b.constant({e, r}, scales)};
}

//===----------------------------------------------------------------------===//
// One moe layer: its weights and inputs
//===----------------------------------------------------------------------===//

struct Case {
  int64_t tokens = 1, experts = 8, topK = 2, hidden = 64, inter = 96;
  int64_t shared = 0;       // the shared expert's intermediate size (0: none)
  bool sharedGate = true;   // ... scaled by sigmoid(x . gate)
  bool renormalize = true;  // else "softmax"
  bool fused = true;        // gate_up, else gate and up
  bool routerBias = false;
  bool hitAll = false;      // token t prefers expert t % E
  DType dtype = DType::kF32; // compute dtype and the experts' weights
  // kI8 / kF8E4M3FN: the experts quantised per expert and row (their
  // scales f32); kF32: experts in `dtype`.
  DType quant = DType::kF32;
  uint64_t seed = 1;

  std::string name() const {
    std::ostringstream o;
    o << dtypeText(dtype) << " tokens=" << tokens << " experts=" << experts << " top_k=" << topK
      << " hidden=" << hidden << " inter=" << inter << " "
      << (renormalize ? "renormalize" : "softmax") << (fused ? " gate_up" : " gate+up");
    if (shared)
      o << " shared=" << shared << (sharedGate ? "+gate" : "");
    if (routerBias)
      o << " router_bias";
    if (hitAll)
      o << " hit-all";
    if (quant != DType::kF32)
      o << " quantised=" << dtypeText(quant);
    return o.str();
  }
};

struct Layer {
  std::vector<float> router, bias, gateUp, gate, up, down, sharedGateUp, sharedDown, sharedGate;
};

Layer makeLayer(const Case &c) {
  Rng r(c.seed * 7919 + 17);
  const int64_t e = c.experts, h = c.hidden, i = c.inter, s = c.shared;
  Layer l;
  // Router logits of order 1 (x ~ U(-1, 1)).
  l.router = r.fill(size_t(e * h), 2.0f / std::sqrt(float(h)));
  if (c.hitAll)
    for (int64_t ex = 0; ex < e; ++ex)
      l.router[size_t(ex * h + ex % h)] += 3.0f;
  if (c.routerBias)
    l.bias = r.fill(size_t(e), 0.5f);
  const float wIn = 1.7f / std::sqrt(float(h)), wMid = 1.7f / std::sqrt(float(std::max<int64_t>(i, 1)));
  if (c.fused) {
    l.gateUp = r.fill(size_t(e * 2 * i * h), wIn);
  } else {
    l.gate = r.fill(size_t(e * i * h), wIn);
    l.up = r.fill(size_t(e * i * h), wIn);
  }
  l.down = r.fill(size_t(e * h * i), wMid);
  if (s) {
    l.sharedGateUp = r.fill(size_t(2 * s * h), wIn);
    l.sharedDown = r.fill(size_t(h * s), 1.7f / std::sqrt(float(s)));
    if (c.sharedGate)
      l.sharedGate = r.fill(size_t(h), 2.0f / std::sqrt(float(h)));
  }
  return l;
}

/// The routing of one token row (in double): the experts in descending
/// probability and the relative gap between the k-th and (k+1)-th.
struct RowRoute {
  std::vector<int64_t> order;
  double gap = 1.0;
};
RowRoute routeRow(const float *x, const Layer &l, const Case &c) {
  const int64_t e = c.experts, h = c.hidden;
  std::vector<double> logit(static_cast<size_t>(e));
  for (int64_t ex = 0; ex < e; ++ex) {
    double s = c.routerBias ? double(l.bias[size_t(ex)]) : 0.0;
    for (int64_t j = 0; j < h; ++j)
      s += double(x[j]) * double(l.router[size_t(ex * h + j)]);
    logit[size_t(ex)] = s;
  }
  const double mx = *std::max_element(logit.begin(), logit.end());
  double sum = 0;
  for (double &v : logit)
    sum += v = std::exp(v - mx);
  for (double &v : logit)
    v /= sum;
  RowRoute rr;
  rr.order.resize(size_t(e));
  std::iota(rr.order.begin(), rr.order.end(), int64_t(0));
  std::stable_sort(rr.order.begin(), rr.order.end(),
                   [&](int64_t a, int64_t b) { return logit[size_t(a)] > logit[size_t(b)]; });
  if (c.topK < e) {
    const double pk = logit[size_t(rr.order[size_t(c.topK - 1)])],
                 pn = logit[size_t(rr.order[size_t(c.topK)])];
    rr.gap = (pk - pn) / pk;
  }
  return rr;
}

/// x [tokens, hidden] in the compute dtype's values, rows redrawn until the
/// routing of each has a gap of at least `margin`; `hits` the experts the
/// routing reaches, `redrawn` the rows drawn again.
std::vector<float> makeInputs(const Case &c, const Layer &l, double margin, int64_t *hits,
                              int64_t *redrawn) {
  Rng r(c.seed * 104729 + 3);
  const int64_t h = c.hidden;
  std::vector<float> x(size_t(c.tokens * h));
  std::set<int64_t> reached;
  *redrawn = 0;
  for (int64_t t = 0; t < c.tokens; ++t) {
    for (int attempt = 0;; ++attempt) {
      std::vector<float> row = r.fill(size_t(h), 1.0f);
      if (c.hitAll)
        row[size_t(t % c.experts % h)] += 3.0f;
      row = roundTo(row, c.dtype);
      RowRoute rr = routeRow(row.data(), l, c);
      if (rr.gap >= margin || attempt == 1000) {
        std::copy(row.begin(), row.end(), x.begin() + t * h);
        for (int64_t i = 0; i < c.topK; ++i)
          reached.insert(rr.order[size_t(i)]);
        break;
      }
      ++*redrawn;
    }
  }
  *hits = int64_t(reached.size());
  return x;
}

//===----------------------------------------------------------------------===//
// The step on the GPU and the CPU
//===----------------------------------------------------------------------===//

/// The plan: ids -> embedding -> moe -> logits, the moe's weights as plan
/// constants of the case's dtype (router, bias and shared gate f32).
struct MoePlan {
  std::string bytes;
  std::vector<int32_t> moeInputs; // the moe step's operands (-1: absent)
};

MoePlan buildPlan(const Case &c, const Layer &l, const std::vector<float> &table, int64_t vocab,
                  const std::vector<float> &lm) {
  PlanBuilder b;
  const int64_t e = c.experts, h = c.hidden, i = c.inter, s = c.shared;
  const DType wd = c.dtype;
  int32_t ids = b.value("i64", {-1});
  int32_t tbl = b.constant({vocab, h}, table);
  int32_t wr = b.constant({e, h}, l.router);
  int32_t wb = c.routerBias ? b.constant({e}, l.bias) : -1;
  int32_t wgu = -1, wg = -1, wu = -1, wdn = -1, sgu = -1, sg = -1, su = -1, sdn = -1;
  if (c.quant != DType::kF32) {
    if (c.fused) {
      std::tie(wgu, sgu) = quantisedExperts(b, c.quant, e, 2 * i, h, l.gateUp);
    } else {
      std::tie(wg, sg) = quantisedExperts(b, c.quant, e, i, h, l.gate);
      std::tie(wu, su) = quantisedExperts(b, c.quant, e, i, h, l.up);
    }
    std::tie(wdn, sdn) = quantisedExperts(b, c.quant, e, h, i, l.down);
  } else {
    wgu = c.fused ? constantOf(b, wd, {e, 2 * i, h}, l.gateUp) : -1;
    wg = c.fused ? -1 : constantOf(b, wd, {e, i, h}, l.gate);
    wu = c.fused ? -1 : constantOf(b, wd, {e, i, h}, l.up);
    wdn = constantOf(b, wd, {e, h, i}, l.down);
  }
  int32_t wsgu = s ? constantOf(b, wd, {2 * s, h}, l.sharedGateUp) : -1;
  int32_t wsd = s ? constantOf(b, wd, {h, s}, l.sharedDown) : -1;
  int32_t wsg = s && c.sharedGate ? b.constant({1, h}, l.sharedGate) : -1;
  int32_t wl = b.constant({vocab, h}, lm);
  int32_t x = b.value("f32", {-1, h}), y = b.value("f32", {-1, h}),
          logits = b.value("f32", {-1, vocab});
  b.step(pb::EMBEDDING, {tbl, ids}, {x});
  MoePlan p;
  p.moeInputs = {x, wr, wb, wgu, wg, wu, wdn, wsgu, wsd, wsg};
  if (c.quant != DType::kF32)
    p.moeInputs.insert(p.moeInputs.end(), {sgu, sg, su, sdn});
  auto &m = b.step(pb::MOE, p.moeInputs, {y});
  PlanBuilder::attr(m, "kind", "silu");
  PlanBuilder::attr(m, "routing", c.renormalize ? "renormalize" : "softmax");
  PlanBuilder::attr(m, "num_experts", e);
  PlanBuilder::attr(m, "top_k", c.topK);
  PlanBuilder::attr(b.step(pb::LOGITS, {y, wl}, {logits}), "out_dtype", "f32");
  b.setModel(ids, logits, vocab, 4096, 1, 1, 4);
  b.meta.set_target("sm_80");
  p.bytes = b.bytes();
  return p;
}

/// cuBLASLt for the step tests (one per process).
gpu::CublasLt *testBlas(gpu::GpuContext &g, std::string *why) {
  static std::unique_ptr<gpu::CublasLt> blas;
  static std::string error;
  static bool tried = false;
  if (!tried) {
    tried = true;
    StatusOr<std::unique_ptr<gpu::CublasLt>> b = gpu::CublasLt::create(g);
    if (b)
      blas = std::move(*b);
    else
      error = b.status().message();
  }
  if (!blas)
    *why = error;
  return blas.get();
}

/// The expert paths: the expert-batched GEMV, cuBLASLt per expert, and the
/// GEMV path's tensor-core form (GpuTuning::moeMma; bf16 and f16 only).
enum class Path { kGemv, kCublas, kMma };
const char *pathName(Path p) {
  return p == Path::kGemv ? "gemv" : p == Path::kCublas ? "cublas" : "mma";
}

struct CaseResult {
  bool ran = false;
  double rel = 1e9;
  std::string line;
};

/// tk::moe of x over the moe step's operands `consts` (index as the step's
/// inputs; undefined: absent), the scales of quantised experts included.
StatusOr<Tensor> cpuMoe(const std::vector<Tensor> &consts, const Tensor &x, const Case &c) {
  tk::MoeWeights w;
  auto ptr = [&](size_t i) {
    return i < consts.size() && consts[i].defined() ? &consts[i] : nullptr;
  };
  w.router = ptr(1);
  w.routerBias = ptr(2);
  w.gateUp = ptr(3);
  w.gate = ptr(4);
  w.up = ptr(5);
  w.down = ptr(6);
  w.sharedGateUp = ptr(7);
  w.sharedDown = ptr(8);
  w.sharedExpertGate = ptr(9);
  w.gateUpScale = ptr(10);
  w.gateScale = ptr(11);
  w.upScale = ptr(12);
  w.downScale = ptr(13);
  tk::MoeParams p;
  p.numExperts = c.experts;
  p.topK = c.topK;
  p.routing = c.renormalize ? tk::MoeRouting::kRenormalize : tk::MoeRouting::kSoftmax;
  return tk::moe(x, w, p);
}

/// The moe step's constant operands of a plan built by buildPlan.
std::vector<Tensor> stepConstants(const plan::PlanFile &plan, const MoePlan &mp) {
  std::vector<Tensor> consts(mp.moeInputs.size());
  for (size_t i = 1; i < mp.moeInputs.size(); ++i)
    if (mp.moeInputs[i] >= 0)
      consts[i] = plan.constant(mp.moeInputs[i], 0);
  return consts;
}

/// The moe step of case `c` on the GPU along `path` against tk::moe.
/// `cpuOut` caches the CPU's result between the two paths of one case.
CaseResult runCase(gpu::GpuContext &g, gpu::CublasLt &blas, const Case &c, Path path,
                   Tensor *cpuOut) {
  CaseResult res;
  const Layer l = makeLayer(c);
  int64_t hits = 0, redrawn = 0;
  const std::vector<float> xv = makeInputs(c, l, 1e-3, &hits, &redrawn);
  const std::vector<float> table(size_t(4 * c.hidden), 0.25f), lm(size_t(4 * c.hidden), 0.5f);
  const MoePlan mp = buildPlan(c, l, table, 4, lm);
  StatusOr<std::shared_ptr<const plan::PlanFile>> plan =
      plan::PlanFile::fromBytes(mp.bytes, "moe.plan");
  EXPECT_TRUE(plan) << plan.status().message();
  if (!plan)
    return res;
  const pb::Step &step = (*plan)->schedule().steps(1);
  EXPECT_EQ(step.kind(), pb::MOE);

  // The inputs: x in the compute dtype, the weights as the plan holds them.
  Tensor x = Tensor::fromVector<float>({c.tokens, c.hidden}, xv)->astype(c.dtype);
  const std::vector<Tensor> consts = stepConstants(**plan, mp);

  if (!cpuOut->defined()) {
    StatusOr<Tensor> want = cpuMoe(consts, x, c);
    EXPECT_TRUE(want) << want.status().message();
    if (!want)
      return res;
    *cpuOut = want->toF32();
  }

  engine::GpuPrepareContext ctx;
  ctx.gpu = &g;
  ctx.dtype = c.dtype;
  ctx.moeGemvMaxTokens = path == Path::kCublas ? 0 : INT64_MAX;
  ctx.moeMma = path == Path::kMma;
  StatusOr<engine::GpuKernel> kernel = engine::prepareGpuStep(**plan, step, ctx);
  EXPECT_TRUE(kernel) << kernel.status().message();
  if (!kernel)
    return res;
  engine::GpuRunState st;
  st.gpu = &g;
  st.blas = &blas;
  st.dtype = c.dtype;
  std::vector<engine::GpuValue> vals(mp.moeInputs.size());
  std::vector<engine::GpuValue *> in(mp.moeInputs.size(), nullptr);
  vals[0].host = x;
  in[0] = &vals[0];
  for (size_t i = 1; i < vals.size(); ++i)
    if (consts[i].defined()) {
      vals[i].host = consts[i];
      in[i] = &vals[i];
    }
  std::vector<engine::GpuValue> out;
  Status s = (*kernel)(st, in, out);
  EXPECT_TRUE(s.isOk()) << c.name() << " " << pathName(path) << ": " << s.message();
  if (!s.isOk() || out.size() != 1)
    return res;
  StatusOr<Tensor> got = st.toHost(out[0]);
  Status sync = g.synchronize();
  EXPECT_TRUE(got && sync.isOk()) << c.name() << " " << pathName(path) << ": "
                                  << (got ? sync.message() : got.status().message());
  if (!got || !sync.isOk())
    return res;
  const Tensor &want = *cpuOut;
  EXPECT_EQ(got->shape(), want.shape()) << c.name();
  if (got->shape() != want.shape())
    return res;
  double maxRef = 0, maxErr = 0;
  int64_t worst = 0, bad = -1;
  for (int64_t i = 0; i < want.numElements(); ++i) {
    const float a = got->data<float>()[i], r = want.data<float>()[i];
    if (!std::isfinite(a) && bad < 0)
      bad = i;
    maxRef = std::max(maxRef, double(std::fabs(r)));
    const double err = std::fabs(double(a) - double(r));
    if (err > maxErr || std::isnan(err)) {
      maxErr = std::isnan(err) ? 1e30 : err;
      worst = i;
    }
  }
  res.ran = true;
  res.rel = bad >= 0 ? 1e9 : maxRef > 0 ? maxErr / maxRef : maxErr;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "[moe] %-78s path=%-6s err/max|ref| %.3g (worst token %lld col %lld: gpu %.6g "
                "cpu %.6g; max|ref| %.4g)%s, experts hit %lld/%lld, rows redrawn %lld",
                c.name().c_str(), pathName(path), res.rel, (long long)(worst / c.hidden),
                (long long)(worst % c.hidden), double(got->data<float>()[worst]),
                double(want.data<float>()[worst]), maxRef,
                bad >= 0 ? " NON-FINITE OUTPUT" : "", (long long)hits, (long long)c.experts,
                (long long)redrawn);
  res.line = buf;
  std::printf("%s\n", buf);
  return res;
}

double tolerance(DType t) { return t == DType::kF32 ? 1e-4 : 2e-2; }

/// Runs each case along both paths; every one must pass its dtype's bound.
void runCases(const std::vector<Case> &cases) {
  ACCEL_REQUIRE_GPU_CONTEXT(g);
  std::string why;
  gpu::CublasLt *blas = testBlas(*g, &why);
  if (!blas)
    GTEST_SKIP() << "cuBLASLt: " << why;
  int failed = 0;
  for (const Case &c : cases) {
    Tensor cpu;
    for (Path p : {Path::kGemv, Path::kCublas, Path::kMma}) {
      if (p == Path::kMma && c.dtype == DType::kF32)
        continue; // bf16 / f16 only: f32 steps keep the GEMV
      CaseResult r = runCase(*g, *blas, c, p, &cpu);
      EXPECT_TRUE(r.ran) << c.name() << " " << pathName(p);
      EXPECT_LE(r.rel, tolerance(c.dtype)) << r.line;
      failed += !r.ran || !(r.rel <= tolerance(c.dtype));
    }
  }
  std::printf("[moe] %zu cases x 2-3 paths, %d failed\n", cases.size(), failed);
}

/// The size matrix for one dtype: tokens x (experts, top_k), both routings,
/// shared expert or not, alternating fused / separate gate and up, some with
/// a router bias.
std::vector<Case> matrix(DType dt) {
  std::vector<Case> out;
  uint64_t seed = dt == DType::kF32 ? 100 : dt == DType::kBF16 ? 200 : 300;
  int n = 0;
  for (int64_t tokens : {1, 3, 16, 64, 300, 2048})
    for (auto [experts, topK] : {std::pair<int64_t, int64_t>{4, 1}, {8, 2}, {60, 8}})
      for (int variant = 0; variant < 4; ++variant) {
        Case c;
        c.dtype = dt;
        c.tokens = tokens;
        c.experts = experts;
        c.topK = topK;
        c.renormalize = variant % 2 == 0;
        c.shared = variant >= 2 ? 48 : 0;
        c.sharedGate = variant == 2;
        c.fused = n % 3 != 2;
        c.routerBias = n % 5 == 4;
        c.seed = seed + uint64_t(n++);
        out.push_back(c);
      }
  return out;
}

TEST(MoeGpuStep, F32MatchesCpu) { runCases(matrix(DType::kF32)); }
TEST(MoeGpuStep, Bf16MatchesCpu) { runCases(matrix(DType::kBF16)); }
TEST(MoeGpuStep, F16MatchesCpu) { runCases(matrix(DType::kF16)); }

// Hidden and intermediate sizes that are not multiples of 8: the kernels'
// element-by-element loads.
TEST(MoeGpuStep, OddSizesMatchCpu) {
  std::vector<Case> cases;
  int n = 0;
  for (DType dt : {DType::kF32, DType::kBF16, DType::kF16})
    for (int64_t tokens : {1, 16, 300}) {
      Case c;
      c.dtype = dt;
      c.tokens = tokens;
      c.hidden = 36;
      c.inter = 44;
      c.shared = n % 2 ? 20 : 0;
      c.fused = n % 2 == 0;
      c.seed = 400 + uint64_t(n++);
      cases.push_back(c);
    }
  runCases(cases);
}

// A wider layer: K loops of several rounds (hidden 1280, intermediate 1536),
// Mixtral's 8 experts, top-2.
TEST(MoeGpuStep, WideLayerMatchesCpu) {
  std::vector<Case> cases;
  int n = 0;
  for (DType dt : {DType::kBF16, DType::kF32})
    for (int64_t tokens : {1, 16, 64, 2048}) {
      if (dt == DType::kF32 && tokens == 2048)
        continue;
      Case c;
      c.dtype = dt;
      c.tokens = tokens;
      c.hidden = 1280;
      c.inter = 1536;
      c.shared = tokens == 16 ? 512 : 0;
      c.seed = 500 + uint64_t(n++);
      cases.push_back(c);
    }
  runCases(cases);
}

/// Cases whose routing reaches every expert: token t's largest router
/// logit is expert t % E's (tokens >= E).
std::vector<Case> hitAllCases() {
  std::vector<Case> cases;
  int n = 0;
  for (DType dt : {DType::kF32, DType::kBF16})
    for (auto [tokens, experts, topK] :
         {std::tuple<int64_t, int64_t, int64_t>{8, 8, 2}, {64, 60, 8}, {300, 60, 2}, {16, 4, 1}}) {
      Case c;
      c.dtype = dt;
      c.tokens = tokens;
      c.experts = experts;
      c.topK = topK;
      c.hitAll = true;
      c.shared = n % 2 ? 32 : 0;
      c.renormalize = n % 3 != 1;
      c.seed = 600 + uint64_t(n++);
      cases.push_back(c);
    }
  return cases;
}

// The routing claims of hitAllCases(), checked on the CPU (no GPU needed):
// tk::moeRoute reaches every expert.
TEST(MoeGpuStep, HitAllCasesReachEveryExpertOnTheCpu) {
  for (const Case &c : hitAllCases()) {
    const Layer l = makeLayer(c);
    int64_t hits = 0, redrawn = 0;
    const std::vector<float> xv = makeInputs(c, l, 1e-3, &hits, &redrawn);
    EXPECT_EQ(hits, c.experts) << c.name();
    Tensor x = *Tensor::fromVector<float>({c.tokens, c.hidden}, xv);
    Tensor router = *Tensor::fromVector<float>({c.experts, c.hidden}, l.router);
    tk::MoeParams p;
    p.numExperts = c.experts;
    p.topK = c.topK;
    StatusOr<tk::MoeRoute> r = tk::moeRoute(x, router, nullptr, p);
    ASSERT_TRUE(r) << r.status().message();
    std::set<int64_t> reached(r->experts.begin(), r->experts.end());
    EXPECT_EQ(int64_t(reached.size()), c.experts) << c.name();
  }
}

TEST(MoeGpuStep, RoutingThatHitsEveryExpertMatchesCpu) { runCases(hitAllCases()); }

/// Quantised experts in every compute dtype, both expert paths: the
/// bytes-reading GEMVs (_q) and dequantize_rows before cuBLASLt.
std::vector<Case> quantisedCases() {
  std::vector<Case> cases;
  int n = 0;
  for (DType q : {DType::kI8, DType::kF8E4M3FN})
    for (DType dt : {DType::kF32, DType::kBF16, DType::kF16})
      for (int64_t tokens : {1, 16, 300}) {
        Case c;
        c.dtype = dt;
        c.quant = q;
        c.tokens = tokens;
        c.experts = n % 2 ? 8 : 60;
        c.topK = n % 2 ? 2 : 8;
        c.fused = n % 3 != 1;
        c.shared = n % 4 == 3 ? 48 : 0;
        c.renormalize = n % 5 != 2;
        c.routerBias = n % 7 == 3;
        if (n % 6 == 5) { // element-by-element loads
          c.hidden = 36;
          c.inter = 44;
        }
        c.seed = 800 + uint64_t(n++);
        cases.push_back(c);
      }
  // Mixtral-like widths: several rounds of the K loop.
  for (DType q : {DType::kI8, DType::kF8E4M3FN})
    for (int64_t tokens : {1, 64}) {
      Case c;
      c.dtype = DType::kBF16;
      c.quant = q;
      c.tokens = tokens;
      c.hidden = 1280;
      c.inter = 1536;
      c.seed = 900 + uint64_t(n++);
      cases.push_back(c);
    }
  return cases;
}

TEST(MoeGpuStep, QuantisedExpertsMatchCpu) { runCases(quantisedCases()); }

// The quantised cases' plans hold what they claim (no GPU needed): the
// CPU kernel over their i8 / f8E4M3FN experts and scales lands near the
// same layer's f32 experts -- within 3% of max |out| for i8 and 10% for
// f8E4M3FN (3 mantissa bits), and not equal to it.
TEST(MoeGpuStep, QuantisedCasesAreNearTheirFloatLayerOnTheCpu) {
  for (Case c : quantisedCases()) {
    if (c.dtype != DType::kF32 || c.tokens > 16)
      continue;
    const Layer l = makeLayer(c);
    int64_t hits = 0, redrawn = 0;
    const std::vector<float> xv = makeInputs(c, l, 1e-3, &hits, &redrawn);
    Tensor x = *Tensor::fromVector<float>({c.tokens, c.hidden}, xv);
    const std::vector<float> table(size_t(4 * c.hidden), 0.25f), lm(size_t(4 * c.hidden), 0.5f);
    Case f = c;
    f.quant = DType::kF32;
    Tensor out[2];
    for (int i = 0; i < 2; ++i) {
      const MoePlan mp = buildPlan(i ? f : c, l, table, 4, lm);
      StatusOr<std::shared_ptr<const plan::PlanFile>> plan =
          plan::PlanFile::fromBytes(mp.bytes, "moe.plan");
      ASSERT_TRUE(plan) << plan.status().message();
      StatusOr<Tensor> y = cpuMoe(stepConstants(**plan, mp), x, i ? f : c);
      ASSERT_TRUE(y) << c.name() << ": " << y.status().message();
      out[i] = y->toF32();
    }
    double maxRef = 0, maxErr = 0;
    for (int64_t i = 0; i < out[1].numElements(); ++i) {
      maxRef = std::max(maxRef, double(std::fabs(out[1].data<float>()[i])));
      maxErr = std::max(maxErr,
                        std::fabs(double(out[0].data<float>()[i]) - out[1].data<float>()[i]));
    }
    const double rel = maxErr / maxRef;
    std::printf("[moe] %s: quantised vs f32 experts on the CPU %.3g\n", c.name().c_str(), rel);
    EXPECT_GT(rel, 0.0) << c.name();
    EXPECT_LE(rel, c.quant == DType::kI8 ? 3e-2 : 1e-1) << c.name();
  }
}

/// prepareGpuStep of a moe step whose operands have the given dtypes
/// ("": absent; router f32 [4, 8], experts [4, 12, 8] gate_up or [4, 6, 8]
/// gate and up, down [4, 8, 6], scales [4, rows]); no GPU: a refusal comes
/// before any kernel is looked up.
Status prepareWith(const std::string &routerDt, const std::string &gateUpDt,
                   const std::string &gateDt, const std::string &upDt, const std::string &downDt,
                   const std::vector<std::string> &scaleDts) {
  PlanBuilder b;
  const int64_t e = 4, h = 8, i = 6, vocab = 4;
  auto weight = [&](const std::string &dt, std::vector<int64_t> shape) -> int32_t {
    if (dt.empty())
      return -1;
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    if (dt == "f32")
      return b.constant(std::move(shape), std::vector<float>(size_t(n), 0.1f));
    const size_t width = dt == "f16" || dt == "bf16" ? 2 : 1;
    return b.constantBytes(dt, std::move(shape), std::string(size_t(n) * width, '\1'));
  };
  int32_t ids = b.value("i64", {-1});
  int32_t tbl = b.constant({vocab, h}, std::vector<float>(size_t(vocab * h), 0.1f));
  int32_t wr = weight(routerDt, {e, h});
  int32_t wgu = weight(gateUpDt, {e, 2 * i, h});
  int32_t wg = weight(gateDt, {e, i, h});
  int32_t wu = weight(upDt, {e, i, h});
  int32_t wd = weight(downDt, {e, h, i});
  std::vector<int32_t> scales;
  const int64_t rows[] = {2 * i, i, i, h};
  for (size_t k = 0; k < scaleDts.size(); ++k)
    scales.push_back(weight(scaleDts[k], {e, rows[k]}));
  int32_t wl = b.constant({vocab, h}, std::vector<float>(size_t(vocab * h), 0.1f));
  int32_t x = b.value("f32", {-1, h}), y = b.value("f32", {-1, h}),
          logits = b.value("f32", {-1, vocab});
  b.step(pb::EMBEDDING, {tbl, ids}, {x});
  std::vector<int32_t> inputs = {x, wr, -1, wgu, wg, wu, wd, -1, -1, -1};
  inputs.insert(inputs.end(), scales.begin(), scales.end());
  auto &m = b.step(pb::MOE, inputs, {y});
  PlanBuilder::attr(m, "kind", "silu");
  PlanBuilder::attr(m, "routing", "renormalize");
  PlanBuilder::attr(m, "num_experts", e);
  PlanBuilder::attr(m, "top_k", int64_t(2));
  PlanBuilder::attr(b.step(pb::LOGITS, {y, wl}, {logits}), "out_dtype", "f32");
  b.meta.mutable_schedule()->set_token_ids(ids);
  b.meta.mutable_schedule()->set_logits(logits);
  b.meta.mutable_model()->set_vocab_size(vocab);
  StatusOr<std::shared_ptr<const plan::PlanFile>> p = plan::PlanFile::fromBytes(b.bytes(), "q.plan");
  if (!p)
    return p.status();
  engine::GpuPrepareContext ctx; // no GPU
  ctx.dtype = DType::kBF16;
  return engine::prepareGpuStep(**p, (*p)->schedule().steps(1), ctx).status();
}

// Malformed quantised experts: one sentence each, before any kernel is
// looked up (so this runs without a GPU).
TEST(MoeGpuStep, MalformedQuantisedExpertsAreRefused) {
  struct Bad {
    Status s;
    StatusCode code;
    std::string message;
  };
  const Bad cases[] = {
      {prepareWith("f32", "i8", "", "", "f32", {}), StatusCode::kInvalidArgument,
       "moe: gate_up is i8 and needs gate_up_scale (f32 per expert and row)"},
      {prepareWith("f32", "", "f8E4M3FN", "f8E4M3FN", "f8E4M3FN", {"", "f32", "f32"}),
       StatusCode::kInvalidArgument,
       "moe: down is f8E4M3FN and needs down_scale (f32 per expert and row)"},
      {prepareWith("f32", "f32", "", "", "f32", {"", "", "", "f32"}),
       StatusCode::kInvalidArgument, "moe: down_scale scales quantised experts, but down is f32"},
      {prepareWith("f32", "i8", "", "", "i8", {"f32", "f32"}), StatusCode::kInvalidArgument,
       "moe: gate_scale scales quantised experts, but gate is absent"},
      {prepareWith("f32", "i8", "", "", "i8", {"f16", "", "", "f32"}),
       StatusCode::kInvalidArgument, "moe: gate_up_scale is f16; it must be f32"},
      {prepareWith("f32", "", "i8", "f8E4M3FN", "i8", {"", "f32", "f32", "f32"}),
       StatusCode::kInvalidArgument,
       "moe: gate is i8 and up is f8E4M3FN; the GPU needs both of one dtype"},
      {prepareWith("f32", "f8E5M2", "", "", "f32", {"f32"}), StatusCode::kUnimplemented,
       "the moe step's gate_up is f8E5M2; the GPU reads experts of f32, bf16 or f16, or "
       "quantised to i8 or f8E4M3FN with f32 scales per expert and row"},
      {prepareWith("i8", "f32", "", "", "f32", {}), StatusCode::kUnimplemented,
       "the moe step's router is i8; the GPU reads it in f32, bf16 or f16 only"},
  };
  for (const Bad &b : cases) {
    ASSERT_FALSE(b.s.isOk()) << b.message;
    EXPECT_EQ(b.s.code(), b.code) << b.s.message();
    EXPECT_EQ(b.s.message(), b.message);
  }
}

//===----------------------------------------------------------------------===//
// The plan through GpuExecutor
//===----------------------------------------------------------------------===//

constexpr int64_t kVocab = 64;

/// Embedding rows whose routing keeps a wide margin (5%): bf16 rounding of
/// x cannot change it, so the bf16 executor routes as the f32 CPU does.
std::string executorPlan(const Case &c) {
  const Layer l = makeLayer(c);
  Rng r(c.seed + 99);
  std::vector<float> table;
  for (int64_t v = 0; v < kVocab; ++v)
    for (int attempt = 0;; ++attempt) {
      const std::vector<float> row = r.fill(size_t(c.hidden), 1.0f);
      const std::vector<float> rounded = roundTo(row, DType::kBF16);
      const RowRoute a = routeRow(row.data(), l, c), b = routeRow(rounded.data(), l, c);
      const bool sameTopK = std::equal(a.order.begin(), a.order.begin() + c.topK, b.order.begin());
      if ((a.gap >= 0.05 && b.gap >= 0.05 && sameTopK) || attempt == 1000) {
        table.insert(table.end(), row.begin(), row.end());
        break;
      }
    }
  const std::vector<float> lm = r.fill(size_t(kVocab * c.hidden), 1.0f);
  Case planCase = c;
  planCase.dtype = DType::kF32; // the plan's weights; the executor rounds them
  return buildPlan(planCase, l, table, kVocab, lm).bytes;
}

Case executorCase() {
  Case c;
  c.experts = 8;
  c.topK = 2;
  c.hidden = 64;
  c.inter = 96;
  c.shared = 32;
  c.sharedGate = true;
  c.seed = 700;
  return c;
}

struct Seq {
  int64_t len;
  std::vector<int64_t> chunks; // tokens per step; the last repeats
};

/// Both executors step by step on the same metadata
/// (test::compareExecutors): the largest |gpu - cpu| / max |cpu| over all
/// steps (printed per step).
double compareBackends(const std::string &bytes, DType dtype, const std::vector<Seq> &seqs,
                       const engine::GpuTuning &tune, const char *label) {
  std::vector<test::Seq> batch;
  for (size_t i = 0; i < seqs.size(); ++i) {
    test::Seq s{{}, seqs[i].chunks};
    for (int64_t p = 0; p < seqs[i].len; ++p)
      s.ids.push_back((int64_t(i) * 13 + p * 7 + p * p % 11) % kVocab);
    batch.push_back(std::move(s));
  }
  SCOPED_TRACE(label);
  test::Comparison how;
  how.tune = tune;
  how.numBlocks = 512;
  how.onStep = [&](int step, size_t tokens, double err) {
    std::printf("[moe-plan] %s %s step %d: %zu tokens, err/max|ref| %.3g\n", label,
                dtypeName(dtype), step, tokens, err);
  };
  return test::compareExecutors(bytes, dtype, batch, how);
}

#define REQUIRE_GPU() ACCEL_REQUIRE_GPU()

// A ragged batch through the executor: a 300-token prompt in one step (the
// cuBLASLt path), short prompts in chunks and decode tokens mixed (the
// GEMV path), with the step's output in the activations arena; then every
// eager step on cuBLASLt (moeGemvMaxTokens 0) and on the GEMV kernel.
TEST(MoeGpuPlan, RaggedBatchMatchesCpu) {
  REQUIRE_GPU();
  const std::string plan = executorPlan(executorCase());
  const std::vector<Seq> seqs = {{300, {300, 1}}, {9, {4, 1}}, {13, {1, 3}}, {6, {6, 1}}};
  engine::GpuTuning t;
  EXPECT_LE(compareBackends(plan, DType::kF32, seqs, t, "default"), 1e-4);
  EXPECT_LE(compareBackends(plan, DType::kBF16, seqs, t, "default"), 2e-2);
  EXPECT_LE(compareBackends(plan, DType::kF16, seqs, t, "default"), 2e-2);
  t.moeGemvMaxTokens = 0;
  EXPECT_LE(compareBackends(plan, DType::kF32, seqs, t, "all-cublas"), 1e-4);
  t.moeGemvMaxTokens = INT64_MAX;
  EXPECT_LE(compareBackends(plan, DType::kF32, seqs, t, "all-gemv"), 1e-4);
}

/// `batch` sequences prefill prompts of 3 + i % 5 tokens (eager), then
/// `decodeSteps` decode steps, each through an executor with CUDA graphs,
/// one without and the CPU (test::compareGraphDecode); prints the result.
test::GraphRun compareGraphDecode(const std::string &bytes, DType dtype, int64_t batch,
                                  int64_t decodeSteps) {
  test::GraphRun r = test::compareGraphDecode(
      bytes, dtype, batch, [](int64_t i) { return 3 + i % 5; }, decodeSteps);
  std::printf("[moe-graph] %s batch %lld: %zu graphs%s, graph vs eager %.3g, graph vs cpu %.3g\n",
              dtypeName(dtype), (long long)batch, r.graphs,
              r.off.empty() ? "" : (" (off: " + r.off + ")").c_str(), r.graphVsEager,
              r.graphVsCpu);
  return r;
}

// Decode steps replayed from CUDA graphs (the moe step captured: no host
// round trip) give the eager run's logits bit for bit at bucket sizes, the
// CPU's within the dtype's bound; 3 sequences pad to the bucket of 4.
TEST(MoeGpuPlan, DecodeGraphsMatchEagerAndCpu) {
  REQUIRE_GPU();
  const std::string plan = executorPlan(executorCase());
  for (DType dt : {DType::kF32, DType::kBF16})
    for (int64_t batch : {1, 4, 16, 3}) {
      test::GraphRun r = compareGraphDecode(plan, dt, batch, 5);
      EXPECT_EQ(r.off, "") << dtypeName(dt) << " batch " << batch;
      EXPECT_GE(r.graphs, 1u) << dtypeName(dt) << " batch " << batch;
      if (batch == 3) // the LM head's GEMM runs 4 rows in the graph, 3 eager
        EXPECT_LE(r.graphVsEager, 1e-5) << dtypeName(dt) << " batch " << batch;
      else
        EXPECT_EQ(r.graphVsEager, 0.0) << dtypeName(dt) << " batch " << batch;
      EXPECT_LE(r.graphVsCpu, tolerance(dt)) << dtypeName(dt) << " batch " << batch;
    }
}

// The tensor-core GEMV path (GpuTuning::moeMma) through the executor: the
// ragged batch in bf16 and f16 (every eager step on it), and bf16 decode
// steps replayed from CUDA graphs against eager runs and the CPU.
TEST(MoeGpuPlan, TensorCorePathMatchesCpu) {
  REQUIRE_GPU();
  const std::string plan = executorPlan(executorCase());
  const std::vector<Seq> seqs = {{300, {300, 1}}, {9, {4, 1}}, {13, {1, 3}}, {6, {6, 1}}};
  engine::GpuTuning t;
  t.moeMma = true;
  t.moeGemvMaxTokens = INT64_MAX;
  EXPECT_LE(compareBackends(plan, DType::kBF16, seqs, t, "mma"), 2e-2);
  EXPECT_LE(compareBackends(plan, DType::kF16, seqs, t, "mma"), 2e-2);
  for (int64_t batch : {1, 4, 16}) {
    test::GraphRun r = test::compareGraphDecode(
        plan, DType::kBF16, batch, [](int64_t i) { return 3 + i % 5; }, 5, 64, t);
    EXPECT_EQ(r.off, "") << "batch " << batch;
    EXPECT_GE(r.graphs, 1u) << "batch " << batch;
    EXPECT_EQ(r.graphVsEager, 0.0) << "batch " << batch;
    EXPECT_LE(r.graphVsCpu, tolerance(DType::kBF16)) << "batch " << batch;
  }
}

// Quantised experts through the executor: the ragged batch (cuBLASLt over
// dequantised slices for the 300-token prefill, the _q GEMVs elsewhere) and
// decode steps replayed from CUDA graphs, against the CPU reading the same
// bytes.
TEST(MoeGpuPlan, QuantisedExpertsMatchCpu) {
  REQUIRE_GPU();
  const std::vector<Seq> seqs = {{300, {300, 1}}, {9, {4, 1}}, {13, {1, 3}}, {6, {6, 1}}};
  for (DType q : {DType::kI8, DType::kF8E4M3FN}) {
    Case c = executorCase();
    c.quant = q;
    const std::string plan = executorPlan(c);
    SCOPED_TRACE(dtypeName(q));
    engine::GpuTuning t;
    EXPECT_LE(compareBackends(plan, DType::kF32, seqs, t, dtypeName(q)), 1e-4);
    EXPECT_LE(compareBackends(plan, DType::kBF16, seqs, t, dtypeName(q)), 2e-2);
    t.moeGemvMaxTokens = INT64_MAX;
    EXPECT_LE(compareBackends(plan, DType::kF32, seqs, t, "all-gemv"), 1e-4);
    for (int64_t batch : {1, 4}) {
      test::GraphRun r = compareGraphDecode(plan, DType::kBF16, batch, 4);
      EXPECT_EQ(r.off, "") << "batch " << batch;
      EXPECT_GE(r.graphs, 1u) << "batch " << batch;
      EXPECT_EQ(r.graphVsEager, 0.0) << "batch " << batch;
      EXPECT_LE(r.graphVsCpu, tolerance(DType::kBF16)) << "batch " << batch;
    }
  }
}

} // namespace
