//===- GeneratedKernelsTest.cpp - lib/Codegen's kernels on the GPU vs the CPU ===//
//
// Hand-built plans whose norm, pointwise and rotary steps name kernels that
// lib/Codegen generates here (PTX through LLVM's NVPTX backend, cubin
// through ptxas when it is found), at shapes the fixtures do not reach:
// rows of 24 (f32 vectors, bf16/f16 scalar), 1024 (a block of 8 warps that
// reduce through shared memory) and 4098 (scalar, several elements per
// thread), gated widths that are and are not a multiple of 8, partial rotary
// with pass-through channels, cos/sin tables with i32 positions, every
// activation kind, and gated_mlp's fused activation. Each plan runs one
// ragged batch (prefill chunks and decode tokens) through CpuExecutor and
// GpuExecutor; the logits must agree, for plans built for sm_90 (their cubin
// runs on an sm_90 GPU) and for sm_80 (their PTX, compiled by the driver).
//
// Label `gpu`: without a GPU every test reports SKIPPED. Two builds of this
// file: with the compiler (accel-gpu-codegen-tests, ACCEL_GPU_TEST_CODEGEN)
// it generates the plans, and writes them to $ACCEL_GPU_CODEGEN_PLANS_OUT
// when that is set; without it (accel-gpu-codegen-plan-tests, a runtime-only
// build for a GPU machine without LLVM) it reads them from
// $ACCEL_GPU_CODEGEN_PLANS and skips when that is unset.
//
//===----------------------------------------------------------------------===//
#ifdef ACCEL_GPU_TEST_CODEGEN
#include "accel/Codegen/Codegen.h"
#include "mlir/IR/MLIRContext.h"
#endif
#include "ExecutorComparison.h"
#include "GpuTestContext.h"
#include "runtime/cpu/CpuExecutor.h"
#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/GpuExecutor.h"

#include "../unit/PlanTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>

using namespace accel::rt;
using accel::test::PlanBuilder;
namespace pb = accel::plan;

namespace {

constexpr int64_t kVocab = 13;

#ifdef ACCEL_GPU_TEST_CODEGEN
namespace cg = accel::codegen;

std::vector<float> wave(size_t n, float freq, float phase, float amp = 1.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = amp * std::sin(float(i) * freq + phase);
  return v;
}

/// Deterministic uniform noise in [-amp, amp]: weights like a trained
/// layer's, which keep activations of order one through the plan (a smooth
/// pattern would make the products cancel, and the logits would measure
/// rounding noise rather than the kernels).
std::vector<float> noise(size_t n, uint32_t seed, float amp) {
  std::vector<float> v(n);
  uint64_t state = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (size_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v[i] = amp * (float(uint32_t(state >> 40)) / float(1u << 24) * 2.0f - 1.0f);
  }
  return v;
}

/// A plan under construction and the kernels its steps name.
struct KernelPlan {
  PlanBuilder b;
  std::vector<cg::KernelSpec> specs;
  bool generate = true; // false: the same plan on the hand-written kernels

  /// Names the kernel of `spec` on step `s` (once per distinct kernel).
  void use(pb::Step &s, const cg::KernelSpec &spec) {
    if (!generate)
      return;
    PlanBuilder::attr(s, "kernel", spec.name().c_str());
    for (const cg::KernelSpec &k : specs)
      if (k.name() == spec.name())
        return;
    specs.push_back(spec);
  }
};

/// The file: weights, then the kernels' PTX and cubin as KERNEL_IMAGE
/// sections (as lib/Plan/PlanWriter.cpp lays them out).
std::string assemble(pb::PlanMetadata meta, const std::string &weights, const std::string &ptx,
                     const std::string &cubin) {
  std::string file(plan::kSectionAlignment, '\0');
  auto add = [&](const std::string &name, pb::Section::Kind kind, const std::string &bytes) {
    pb::Section *s = meta.add_sections();
    s->set_name(name);
    s->set_kind(kind);
    s->set_offset(file.size());
    s->set_size(bytes.size());
    s->set_crc32c(plan::crc32c(bytes.data(), bytes.size()));
    file += bytes;
    file.resize(plan::alignUp(file.size(), plan::kSectionAlignment), '\0');
    return meta.sections_size() - 1;
  };
  add("weights.rank0", pb::Section::WEIGHTS, weights);
  const int ptxSection = add("kernels.ptx", pb::Section::KERNEL_IMAGE, ptx);
  const int cubinSection =
      cubin.empty() ? -1 : add("kernels.cubin", pb::Section::KERNEL_IMAGE, cubin);
  meta.mutable_kernel_module()->set_ptx_section(ptxSection);
  meta.mutable_kernel_module()->set_cubin_section(cubinSection);
  std::string mb;
  meta.SerializeToString(&mb);
  plan::Header h;
  h.metadataOffset = file.size();
  h.metadataSize = mb.size();
  h.metadataCrc = plan::crc32c(mb.data(), mb.size());
  h.target = meta.target();
  file += mb;
  h.fileSize = file.size();
  std::string head = plan::encodeHeader(h);
  std::memcpy(file.data(), head.data(), head.size());
  return file;
}

/// Generates the kernels for `chip` and writes the plan.
std::string finish(KernelPlan &p, int32_t ids, int32_t logits, const std::string &chip) {
  PlanBuilder &b = p.b;
  b.setModel(ids, logits, kVocab, 64, 1, 1, 4);
  b.meta.set_target(chip);
  b.place();
  if (!p.generate)
    return accel::test::assemblePlan(b.meta, b.weights);

  cg::CodegenOptions options;
  options.chip = chip;
  mlir::DialectRegistry registry;
  cg::registerCodegenDialects(registry);
  mlir::MLIRContext context(registry);
  auto module = cg::buildKernelModule(context, p.specs, chip);
  EXPECT_TRUE(bool(module)) << llvm::toString(module.takeError());
  if (!module)
    return "";
  llvm::Error lowered = cg::lowerToNVVM(**module);
  EXPECT_FALSE(bool(lowered)) << llvm::toString(std::move(lowered));
  llvm::Expected<std::string> ptx = cg::translateToPTX(**module, options);
  EXPECT_TRUE(bool(ptx)) << llvm::toString(ptx.takeError());
  if (!ptx)
    return "";
  std::string cubin;
  if (std::string ptxas = cg::findPtxas(options); !ptxas.empty()) {
    llvm::Expected<std::string> c = cg::assembleCubin(*ptx, ptxas, options);
    EXPECT_TRUE(bool(c)) << llvm::toString(c.takeError());
    if (c)
      cubin = std::move(*c);
  }
  cg::GeneratedKernels gen;
  gen.chip = chip;
  gen.selection.kernels = p.specs;
  cg::recordKernels(gen, -1, -1, b.meta); // the sections are set by assemble()
  return assemble(b.meta, b.weights, *ptx, cubin);
}

int32_t embed(PlanBuilder &b, int32_t ids, int64_t hidden) {
  int32_t table = b.constant({kVocab, hidden}, noise(size_t(kVocab * hidden), 1, 1.0f));
  int32_t x = b.value("f32", {-1, hidden});
  b.step(pb::EMBEDDING, {table, ids}, {x});
  return x;
}

int32_t linear(PlanBuilder &b, int32_t x, int64_t in, int64_t out, float phase) {
  int32_t w = b.constant({out, in}, noise(size_t(out * in), uint32_t(phase * 100), std::sqrt(3.0f / float(in))));
  int32_t y = b.value("f32", {-1, out});
  PlanBuilder::attr(b.step(pb::GEMM, {x, w, -1}, {y}), "out_dtype", "f32");
  return y;
}

int32_t logitsStep(PlanBuilder &b, int32_t x, int64_t hidden) {
  int32_t lm = b.constant({kVocab, hidden},
                          noise(size_t(kVocab * hidden), 2, std::sqrt(3.0f / float(hidden))));
  int32_t out = b.value("f32", {-1, kVocab});
  auto &l = b.step(pb::LOGITS, {x, lm, -1}, {out});
  PlanBuilder::attr(l, "out_dtype", "f32");
  return out;
}

cg::KernelSpec spec(cg::Family f, int64_t hidden, const char *activation = "") {
  cg::KernelSpec s;
  s.family = f;
  s.hidden = hidden;
  s.activation = activation;
  return s;
}

/// rms_norm (Gemma's offset), add_rms_norm, residual_add, every activation,
/// gated_act and a gated_mlp with fused gate_up, over rows of `h`.
std::string blockPlan(int64_t h, int64_t inter, const std::string &chip, bool generate) {
  KernelPlan p;
  p.generate = generate;
  PlanBuilder &b = p.b;
  int32_t ids = b.value("i64", {-1});
  int32_t x = embed(b, ids, h);
  int32_t w1 = b.constant({h}, wave(size_t(h), 0.5f, 0.0f, 0.2f));
  int32_t w2 = b.constant({h}, wave(size_t(h), 0.8f, 1.0f));
  int32_t n1 = b.value("f32", {-1, h}), n2 = b.value("f32", {-1, h}), sum = b.value("f32", {-1, h});
  auto &s1 = b.step(pb::RMS_NORM, {x, w1}, {n1});
  PlanBuilder::attr(s1, "epsilon", 1e-6);
  PlanBuilder::attr(s1, "weight_offset", 1.0);
  p.use(s1, spec(cg::Family::RmsNorm, h));
  auto &s2 = b.step(pb::ADD_RMS_NORM, {n1, x, w2}, {n2, sum});
  PlanBuilder::attr(s2, "epsilon", 1e-5);
  p.use(s2, spec(cg::Family::AddRmsNorm, h));
  int32_t acc = n2;
  for (const char *kind : {"silu", "gelu", "gelu_tanh", "quick_gelu", "relu", "relu_squared",
                           "sigmoid", "tanh"}) {
    int32_t a = b.value("f32", {-1, h}), s = b.value("f32", {-1, h});
    auto &as = b.step(pb::ACTIVATION, {acc}, {a});
    PlanBuilder::attr(as, "kind", kind);
    p.use(as, spec(cg::Family::Activation, h, kind));
    auto &rs = b.step(pb::RESIDUAL_ADD, {sum, a}, {s});
    p.use(rs, spec(cg::Family::ResidualAdd, h));
    acc = s;
  }
  // gated_act on a [T, 2I] projection, then gated_mlp with fused gate_up.
  int32_t gu = linear(b, acc, h, 2 * inter, 0.4f);
  int32_t g = b.value("f32", {-1, inter});
  auto &ga = b.step(pb::GATED_ACT, {gu}, {g});
  PlanBuilder::attr(ga, "kind", "gelu_tanh");
  p.use(ga, spec(cg::Family::GatedAct, inter, "gelu_tanh"));
  int32_t back = linear(b, g, inter, h, 0.9f);
  int32_t wgu = b.constant({2 * inter, h},
                           noise(size_t(2 * inter * h), 3, std::sqrt(3.0f / float(h))));
  int32_t wd = b.constant({h, inter},
                          noise(size_t(h * inter), 4, std::sqrt(3.0f / float(inter))));
  int32_t m = b.value("f32", {-1, h});
  auto &mlp = b.step(pb::GATED_MLP, {back, wgu, -1, -1, wd}, {m});
  PlanBuilder::attr(mlp, "kind", "silu");
  p.use(mlp, spec(cg::Family::GatedAct, inter, "silu"));
  return finish(p, ids, logitsStep(b, m, h), chip);
}

/// half_split rotary: full (i64 positions, inverse frequencies), partial
/// with pass-through channels, and cos/sin tables with i32 positions.
std::string rotaryPlan(int64_t heads, int64_t d, int64_t partial, const std::string &chip,
                       bool generate, bool positions64 = true) {
  KernelPlan p;
  p.generate = generate;
  PlanBuilder &b = p.b;
  const int64_t h = heads * d;
  int32_t ids = b.value("i64", {-1});
  int32_t x = embed(b, ids, h);
  int32_t pos = b.value(positions64 ? "i64" : "i32", {-1});
  b.stepInput(pos, pb::Value::POSITIONS);
  int32_t xh = b.value("f32", {-1, heads, d}), r1 = b.value("f32", {-1, heads, d}),
          r2 = b.value("f32", {-1, heads, d}), r3 = b.value("f32", {-1, heads, d}),
          merged = b.value("f32", {-1, h});
  b.viewOf(xh, x);
  auto rotary = [&](pb::Step &s, int64_t rot, bool tables, bool p64) {
    PlanBuilder::attr(s, "style", "half_split");
    PlanBuilder::attr(s, "rotary_dim", rot);
    PlanBuilder::attr(s, "theta", 10000.0);
    cg::KernelSpec k;
    k.family = cg::Family::Rotary;
    k.heads = heads;
    k.headDim = d;
    k.rotaryDim = rot;
    k.tables = tables;
    k.positions64 = p64;
    p.use(s, k);
  };
  rotary(b.step(pb::ROTARY, {xh, pos}, {r1}), d, false, positions64);
  rotary(b.step(pb::ROTARY, {r1, pos}, {r2}), partial, false, positions64);
  int32_t cosT = b.constant({64, d / 2}, wave(size_t(64 * d / 2), 0.31f, 0.0f));
  int32_t sinT = b.constant({64, d / 2}, wave(size_t(64 * d / 2), 0.31f, 1.57f));
  rotary(b.step(pb::ROTARY, {r2, pos, cosT, sinT}, {r3}), d, true, positions64);
  b.viewOf(merged, r3);
  return finish(p, ids, logitsStep(b, merged, h), chip);
}
#endif // ACCEL_GPU_TEST_CODEGEN

/// The plan `name`: built (and written to $ACCEL_GPU_CODEGEN_PLANS_OUT when
/// set) where the compiler is linked, else read from $ACCEL_GPU_CODEGEN_PLANS.
/// Empty, with *skip set, when there is none to read.
std::string planBytes(const std::string &name, const std::function<std::string()> &build,
                      std::string *skip) {
#ifdef ACCEL_GPU_TEST_CODEGEN
  std::string bytes = build();
  if (const char *dir = std::getenv("ACCEL_GPU_CODEGEN_PLANS_OUT"); dir && *dir)
    std::ofstream(std::string(dir) + "/" + name + ".plan", std::ios::binary) << bytes;
  return bytes;
#else
  (void)build;
  const char *dir = std::getenv("ACCEL_GPU_CODEGEN_PLANS");
  if (!dir || !*dir) {
    *skip = "set ACCEL_GPU_CODEGEN_PLANS to the plans accel-gpu-codegen-tests wrote "
            "(ACCEL_GPU_CODEGEN_PLANS_OUT) on a machine with the compiler";
    return "";
  }
  std::ifstream in(std::string(dir) + "/" + name + ".plan", std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  if (os.str().empty())
    *skip = std::string("no plan ") + dir + "/" + name + ".plan";
  return os.str();
#endif
}

#define SKIP_WITHOUT_GPU()                                                                  \
  do {                                                                                      \
    if (!noGpu.empty())                                                                     \
      GTEST_SKIP() << noGpu;                                                                \
  } while (0)

#ifdef ACCEL_GPU_TEST_CODEGEN
#define PLAN(name, expr) planBytes(name, [&] { return expr; }, &skip)
#else
#define PLAN(name, expr) planBytes(name, nullptr, &skip)
#endif

/// Runs the plan through both executors on one ragged batch (three
/// sequences; prefill chunks, then decode tokens); the largest
/// |gpu - cpu| / max |cpu| over the steps (test::compareExecutors).
double compareBackends(const std::string &bytes, DType dtype, std::string *described) {
  struct Shape {
    int64_t len, first; // tokens, then 1 a step
  };
  const Shape shapes[] = {{9, 4}, {6, 6}, {13, 1}};
  std::vector<test::Seq> seqs;
  for (size_t i = 0; i < std::size(shapes); ++i) {
    test::Seq s{{}, {shapes[i].first, 1}};
    for (int64_t p = 0; p < shapes[i].len; ++p)
      s.ids.push_back((p * 5 % kVocab + int64_t(i)) % kVocab);
    seqs.push_back(std::move(s));
  }
  test::Comparison how;
  how.logFallbacks = true;
  how.numBlocks = 64;
  how.described = described;
  return test::compareExecutors(bytes, dtype, seqs, how);
}

using test::gpuAvailable;

/// Every dtype within its bound, no worse than the hand-written kernels on
/// the same plan (`plain`: no step names a generated kernel) beyond rounding,
/// and the generated kernels were the ones that ran.
void expectMatches(const std::string &plan, const std::string &plain, size_t kernels) {
  struct Bound {
    DType dtype;
    double bound, slack;
  };
  const Bound bounds[] = {{DType::kF32, 1e-5, 1e-6}, {DType::kF16, 3e-2, 3e-3},
                          {DType::kBF16, 0.15, 2e-2}};
  for (const Bound &b : bounds) {
    std::string described, plainDescribed;
    const double gen = compareBackends(plan, b.dtype, &described);
    const double hand = compareBackends(plain, b.dtype, &plainDescribed);
    EXPECT_LE(gen, b.bound) << dtypeName(b.dtype) << " (hand-written kernels: " << hand << ")";
    EXPECT_LE(gen, 2 * hand + b.slack) << dtypeName(b.dtype) << " (hand-written kernels: "
                                       << hand << ")";
    EXPECT_NE(described.find(", " + std::to_string(kernels) + " generated kernels ("),
              std::string::npos)
        << described;
    EXPECT_NE(plainDescribed.find("no generated kernels"), std::string::npos) << plainDescribed;
  }
}

} // namespace

/// expectMatches on a plan from PLAN(). Without a GPU every plan is still
/// built (and written out), and the test skips at its end (SKIP_WITHOUT_GPU);
/// a plan that is not there to read skips at once.
#define EXPECT_MATCHES(name, build, kernels)                                                \
  do {                                                                                      \
    std::string skip;                                                                       \
    const std::string plan = PLAN(name, build(true));                                       \
    const std::string plain = PLAN(name + "_plain", build(false));                          \
    if ((plan.empty() || plain.empty()) && !skip.empty())                                   \
      GTEST_SKIP() << skip;                                                                 \
    if (gpuAvailable(&skip))                                                                \
      expectMatches(plan, plain, kernels);                                                  \
    else                                                                                    \
      noGpu = skip;                                                                         \
  } while (0)

// 24: f32 vectors of 4, bf16/f16 scalar; gated width 20 likewise.
TEST(GeneratedKernels, NarrowRowsMatchCpu) {
  std::string noGpu;
  for (std::string chip : {"sm_90", "sm_80"}) {
    SCOPED_TRACE(chip);
    EXPECT_MATCHES("narrow_" + chip, [&](bool g) { return blockPlan(24, 20, chip, g); }, 13);
  }
  SKIP_WITHOUT_GPU();
}

// 1024: blocks of 256 (f32) and 128 (bf16/f16) threads reducing through
// shared memory; gated width 64 vectorised for every dtype.
TEST(GeneratedKernels, WideRowsMatchCpu) {
  std::string noGpu;
  for (std::string chip : {"sm_90", "sm_80"}) {
    SCOPED_TRACE(chip);
    EXPECT_MATCHES("wide_" + chip, [&](bool g) { return blockPlan(1024, 64, chip, g); }, 13);
  }
  SKIP_WITHOUT_GPU();
}

// 4098: no dtype vectorises; 1024 threads, several elements each.
TEST(GeneratedKernels, ScalarRowsMatchCpu) {
  std::string noGpu;
  EXPECT_MATCHES(std::string("scalar_sm_90"),
                 [&](bool g) { return blockPlan(4098, 40, "sm_90", g); }, 13);
  SKIP_WITHOUT_GPU();
}

// Rotary: 4 heads of 32 (vectorised), partial 12 of 32 (pass-through
// channels; bf16 scalar), tables, with i64 positions; and heads of 12 with
// rotary_dim 4 (scalar everywhere) and i32 positions.
TEST(GeneratedKernels, RotaryMatchesCpu) {
  std::string noGpu;
  for (std::string chip : {"sm_90", "sm_80"}) {
    SCOPED_TRACE(chip);
    EXPECT_MATCHES("rotary_" + chip, [&](bool g) { return rotaryPlan(4, 32, 12, chip, g); }, 3);
  }
  EXPECT_MATCHES(std::string("rotary_small_sm_90"),
                 [&](bool g) { return rotaryPlan(3, 12, 4, "sm_90", g, false); }, 3);
  SKIP_WITHOUT_GPU();
}

#ifdef ACCEL_GPU_TEST_CODEGEN
// The plans themselves (no GPU needed): they load (every CRC checks), list
// their kernels and images, and the CPU backend prepares every step.
TEST(GeneratedKernels, PlansLoadAndPrepareOnCpu) {
  for (const std::string &bytes :
       {blockPlan(24, 20, "sm_90", true), rotaryPlan(4, 32, 12, "sm_80", true)}) {
    StatusOr<std::shared_ptr<const plan::PlanFile>> p = plan::PlanFile::fromBytes(bytes, "t.plan");
    ASSERT_TRUE(p) << p.status().message();
    const pb::PlanMetadata &m = (*p)->metadata();
    EXPECT_GE(m.kernels_size(), 3);
    ASSERT_GE(m.kernel_module().ptx_section(), 0);
    EXPECT_NE((*p)->section(m.kernel_module().ptx_section()).find(".target " + m.target()),
              std::string::npos);
    StatusOr<std::unique_ptr<engine::CpuExecutor>> cpu = engine::CpuExecutor::create(*p);
    ASSERT_TRUE(cpu) << cpu.status().message();
  }
}
#endif
