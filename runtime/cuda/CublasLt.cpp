//===- CublasLt.cpp - cuBLASLt GEMMs, opened at run time ------------------===//
//
// Row-major y[T, N] = x[T, K] w[N, K]^T is, in cuBLAS's column-major terms,
// y^T (N x T, ld N) = op(A) B with A = w viewed as K x N (ld K) transposed,
// and B = x viewed as K x T (ld K): m = N, n = T, k = K, transa = T.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CublasLt.h"

#include "runtime/Env.h"

#include <chrono>
#include <mutex>
#include <dlfcn.h>
#include <type_traits>
#include <vector>

namespace accel::rt::gpu {

namespace {
// cublas_api.h / library_types.h / cublasLt.h values.
constexpr int kComputeF32 = 68;   // CUBLAS_COMPUTE_32F (no TF32)
constexpr int kR32F = 0;          // CUDA_R_32F
constexpr int kR16F = 2;          // CUDA_R_16F
constexpr int kR16BF = 14;        // CUDA_R_16BF
constexpr int kComputeI32 = 72;   // CUBLAS_COMPUTE_32I
constexpr int kR8I = 3;           // CUDA_R_8I
constexpr int kR32I = 10;         // CUDA_R_32I
constexpr int kR8E4M3 = 28;       // CUDA_R_8F_E4M3
constexpr int kDescAScale = 17;   // CUBLASLT_MATMUL_DESC_A_SCALE_POINTER
constexpr int kDescBScale = 18;   // CUBLASLT_MATMUL_DESC_B_SCALE_POINTER
constexpr int kDescAScaleMode = 31; // CUBLASLT_MATMUL_DESC_A_SCALE_MODE
constexpr int kDescBScaleMode = 32; // CUBLASLT_MATMUL_DESC_B_SCALE_MODE
constexpr int kScaleOuterVec = 3;   // CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F
constexpr int kDescTransA = 3;    // CUBLASLT_MATMUL_DESC_TRANSA
constexpr int kDescTransB = 4;    // CUBLASLT_MATMUL_DESC_TRANSB
constexpr int kPrefWorkspace = 1; // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES
// CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_{A,B,C,D}_BYTES (uint32_t; default 256).
constexpr int kPrefAlignA = 5, kPrefAlignB = 6, kPrefAlignC = 7, kPrefAlignD = 8;
constexpr int kOpN = 0, kOpT = 1;
constexpr std::size_t kWorkspaceBytes = 32u << 20;
// Skinny GEMMs (decode steps: up to this many tokens) time the heuristic's
// first kCandidates algorithms once per shape and keep the fastest (the
// heuristic's first pick is a model's guess; timing costs milliseconds once
// per shape, during the warm-up step that precedes a graph capture).
constexpr int kCandidates = 8;
constexpr int64_t kAutotuneMaxTokens = 512;

/// The largest power of two up to 256 that divides `p`: the heuristic only
/// offers algorithms that work at the operands' real alignment (it assumes
/// 256 bytes unless told; the moe step's per-expert slices of stacked
/// weights and gathered rows are less aligned than the allocator's blocks).
uint32_t alignmentOf(CuDevicePtr p) {
  uint32_t a = 1;
  while (a < 256 && p % (2 * a) == 0)
    a *= 2;
  return a;
}
/// The three alignments in one int of the plan's key.
int alignmentKey(uint32_t a, uint32_t b, uint32_t c) { return int(a | (b << 9) | (c << 18)); }

int cudaType(DType t) {
  switch (t) {
  case DType::kBF16: return kR16BF;
  case DType::kF16: return kR16F;
  case DType::kI8: return kR8I;
  case DType::kI32: return kR32I;
  case DType::kF8E4M3FN: return kR8E4M3;
  default: return kR32F;
  }
}
} // namespace

// cublasLt.h's cublasLtMatmulAlgo_t and cublasLtMatmulHeuristicResult_t.
struct Algo {
  uint64_t data[8];
};
struct HeuristicResult {
  Algo algo;
  std::size_t workspaceSize;
  int state;
  float wavesCount;
  int reserved[4];
};

struct CublasLt::Plan {
  CublasLt *lt = nullptr;
  void *desc = nullptr, *a = nullptr, *b = nullptr, *c = nullptr;
  HeuristicResult heur{};
  // alpha = 1, beta = 0 in the scale type: f32, or i32 for i8 GEMMs.
  float alphaF = 1.0f, betaF = 0.0f;
  int32_t alphaI = 1, betaI = 0;
  bool intScale = false;
  const void *alpha() const { return intScale ? static_cast<const void *>(&alphaI) : &alphaF; }
  const void *beta() const { return intScale ? static_cast<const void *>(&betaI) : &betaF; }
  ~Plan() {
    if (desc)
      lt->descDestroy_(desc);
    for (void *l : {a, b, c})
      if (l)
        lt->layoutDestroy_(l);
  }
};

CublasLt::CublasLt(GpuContext &gpu) : gpu_(gpu) {}

StatusOr<std::unique_ptr<CublasLt>> CublasLt::create(GpuContext &gpu) {
  std::unique_ptr<CublasLt> lt(new CublasLt(gpu));
  ACCEL_RT_RETURN_IF_ERROR(lt->load());
  ACCEL_RT_RETURN_IF_ERROR(lt->check(lt->create_(&lt->handle_), "cublasLtCreate"));
  ACCEL_RT_ASSIGN_OR_RETURN(lt->workspace_, gpu.allocate(kWorkspaceBytes));
  return lt;
}

CublasLt::~CublasLt() {
  plans_.clear();
  if (handle_)
    destroy_(handle_);
  // The library stays loaded: cuBLASLt keeps process-wide state.
}

Status CublasLt::load() {
  std::vector<std::string> tried;
  std::vector<std::string> candidates;
  if (!env().libcublasLt.empty()) {
    candidates.push_back(env().libcublasLt);
  } else {
    candidates = {"libcublasLt.so.13", "libcublasLt.so.12",
                  "/usr/local/cuda/lib64/libcublasLt.so.13",
                  "/usr/local/cuda/lib64/libcublasLt.so.12"};
    // Python's nvidia-cublas wheel (what PyTorch uses).
    for (const char *py : {"/usr/local/lib/python3.12/dist-packages",
                           "/usr/lib/python3/dist-packages",
                           "/opt/torch/.venv/lib/python3.12/site-packages",
                           "/usr/local/lib/python3.12/site-packages"})
      for (const char *sub : {"/nvidia/cu13/lib/libcublasLt.so.13",
                              "/nvidia/cublas/lib/libcublasLt.so.13",
                              "/nvidia/cublas/lib/libcublasLt.so.12"})
        candidates.push_back(std::string(py) + sub);
  }
  std::string why;
  for (const std::string &c : candidates) {
    lib_ = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib_) {
      path_ = c;
      break;
    }
    if (why.empty()) {
      const char *e = dlerror();
      why = e ? e : "";
    }
  }
  if (!lib_)
    return unavailable("cannot open cuBLASLt (" + why +
                       "); set ACCEL_LIBCUBLASLT to the path of libcublasLt.so.13");
  auto sym = [&](auto &fn, const char *name) -> bool {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib_, name));
    return fn != nullptr;
  };
  if (!sym(create_, "cublasLtCreate") || !sym(destroy_, "cublasLtDestroy") ||
      !sym(descCreate_, "cublasLtMatmulDescCreate") ||
      !sym(descDestroy_, "cublasLtMatmulDescDestroy") ||
      !sym(descSetAttr_, "cublasLtMatmulDescSetAttribute") ||
      !sym(layoutCreate_, "cublasLtMatrixLayoutCreate") ||
      !sym(layoutDestroy_, "cublasLtMatrixLayoutDestroy") ||
      !sym(prefCreate_, "cublasLtMatmulPreferenceCreate") ||
      !sym(prefDestroy_, "cublasLtMatmulPreferenceDestroy") ||
      !sym(prefSetAttr_, "cublasLtMatmulPreferenceSetAttribute") ||
      !sym(heuristic_, "cublasLtMatmulAlgoGetHeuristic") || !sym(matmul_, "cublasLtMatmul"))
    return unavailable(path_ + " is not a usable cuBLASLt: it lacks entry points accel needs");
  sym(statusString_, "cublasLtGetStatusString");
  return Status::ok();
}

Status CublasLt::check(int status, const char *call) const {
  if (status == 0)
    return Status::ok();
  const char *text = statusString_ ? statusString_(status) : nullptr;
  return Status(StatusCode::kInternal, std::string(call) + " failed with cuBLAS status " +
                                           std::to_string(status) +
                                           (text ? std::string(" (") + text + ")" : ""));
}

namespace {

/// $ACCEL_GEMM_AUTOTUNE=0 keeps cuBLASLt's first choice.
bool autotuneWanted() { return env().gemmAutotune; }

/// The algorithm each shape settled on, for the whole process: every
/// executor (and every cuBLASLt handle) of one process then computes a shape
/// the same way, so that, say, a CUDA graph's logits equal an eager run's.
std::mutex tunedMu;
std::map<std::tuple<int64_t, int64_t, int64_t, int, int, int, int>, HeuristicResult> &tuned() {
  static auto *m =
      new std::map<std::tuple<int64_t, int64_t, int64_t, int, int, int, int>, HeuristicResult>;
  return *m;
}

} // namespace

StatusOr<HeuristicResult> CublasLt::autotune(Plan &p, const HeuristicResult *candidates,
                                             int found, CuDevicePtr x, CuDevicePtr w,
                                             CuDevicePtr y, const Key &key) {
  {
    std::lock_guard<std::mutex> l(tunedMu);
    auto it = tuned().find(key);
    if (it != tuned().end())
      return it->second;
  }
  using Clock = std::chrono::steady_clock;
  auto run = [&](const HeuristicResult &h) {
    return matmul_(handle_, p.desc, p.alpha(), reinterpret_cast<const void *>(w), p.a,
                   reinterpret_cast<const void *>(x), p.b, p.beta(),
                   reinterpret_cast<const void *>(y), p.c, reinterpret_cast<void *>(y), p.c,
                   &h.algo,
                   reinterpret_cast<void *>(workspace_->ptr), workspace_->bytes, gpu_.stream());
  };
  constexpr int kReps = 10;
  int best = 0;
  double bestSeconds = 0;
  for (int i = 0; i < found; ++i) {
    if (candidates[i].workspaceSize > workspace_->bytes || run(candidates[i]) != 0)
      continue; // warm-up; an algorithm that fails is skipped
    ACCEL_RT_RETURN_IF_ERROR(gpu_.synchronize());
    const Clock::time_point t0 = Clock::now();
    bool ok = true;
    for (int r = 0; r < kReps && ok; ++r)
      ok = run(candidates[i]) == 0;
    ACCEL_RT_RETURN_IF_ERROR(gpu_.synchronize());
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (ok && (bestSeconds == 0 || seconds < bestSeconds)) {
      best = i;
      bestSeconds = seconds;
    }
  }
  std::lock_guard<std::mutex> l(tunedMu);
  return tuned().emplace(key, candidates[best]).first->second;
}

StatusOr<CublasLt::Plan *> CublasLt::planFor(Mode mode, int64_t tokens, int64_t n, int64_t k,
                                               DType inType, DType outType, CuDevicePtr x,
                                               CuDevicePtr w, CuDevicePtr y, CuDevicePtr aScale,
                                               CuDevicePtr bScale, bool tune) {
  // A is w, B is x, C and D are y.
  const uint32_t alignA = alignmentOf(w), alignB = alignmentOf(x), alignC = alignmentOf(y);
  const Key key = std::make_tuple(tokens, n, k, int(inType), int(outType), int(mode),
                                  alignmentKey(alignA, alignB, alignC));
  auto it = plans_.find(key);
  if (it != plans_.end())
    return it->second.get();
  auto p = std::make_unique<Plan>();
  p->lt = this;
  p->intScale = mode == Mode::kInt8;
  auto setAttr = [&](int attr, const void *v, std::size_t size) {
    return check(descSetAttr_(p->desc, attr, v, size), "cublasLtMatmulDescSetAttribute");
  };
  ACCEL_RT_RETURN_IF_ERROR(check(descCreate_(&p->desc, p->intScale ? kComputeI32 : kComputeF32,
                                             p->intScale ? kR32I : kR32F),
                                 "cublasLtMatmulDescCreate"));
  const int ta = kOpT, tb = kOpN;
  ACCEL_RT_RETURN_IF_ERROR(setAttr(kDescTransA, &ta, sizeof(ta)));
  ACCEL_RT_RETURN_IF_ERROR(setAttr(kDescTransB, &tb, sizeof(tb)));
  if (mode == Mode::kFp8OuterScales) {
    // A (w, m = N rows of op(A)) scaled per output channel, B (x, n = T) per
    // token.
    const int vec = kScaleOuterVec;
    ACCEL_RT_RETURN_IF_ERROR(setAttr(kDescAScaleMode, &vec, sizeof(vec)));
    ACCEL_RT_RETURN_IF_ERROR(setAttr(kDescBScaleMode, &vec, sizeof(vec)));
    ACCEL_RT_RETURN_IF_ERROR(setAttr(kDescAScale, &aScale, sizeof(aScale)));
    ACCEL_RT_RETURN_IF_ERROR(setAttr(kDescBScale, &bScale, sizeof(bScale)));
  }
  // A: w as K x N col-major (ld K); B: x as K x T (ld K); C: N x T (ld N).
  ACCEL_RT_RETURN_IF_ERROR(check(layoutCreate_(&p->a, cudaType(inType), uint64_t(k), uint64_t(n), k),
                                 "cublasLtMatrixLayoutCreate"));
  ACCEL_RT_RETURN_IF_ERROR(check(
      layoutCreate_(&p->b, cudaType(inType), uint64_t(k), uint64_t(tokens), k),
      "cublasLtMatrixLayoutCreate"));
  ACCEL_RT_RETURN_IF_ERROR(check(
      layoutCreate_(&p->c, cudaType(outType), uint64_t(n), uint64_t(tokens), n),
      "cublasLtMatrixLayoutCreate"));
  void *pref = nullptr;
  ACCEL_RT_RETURN_IF_ERROR(check(prefCreate_(&pref), "cublasLtMatmulPreferenceCreate"));
  uint64_t ws = kWorkspaceBytes;
  prefSetAttr_(pref, kPrefWorkspace, &ws, sizeof(ws));
  if (alignA < 256 || alignB < 256 || alignC < 256) {
    prefSetAttr_(pref, kPrefAlignA, &alignA, sizeof(alignA));
    prefSetAttr_(pref, kPrefAlignB, &alignB, sizeof(alignB));
    prefSetAttr_(pref, kPrefAlignC, &alignC, sizeof(alignC));
    prefSetAttr_(pref, kPrefAlignD, &alignC, sizeof(alignC));
  }
  int found = 0;
  HeuristicResult candidates[kCandidates];
  int st = heuristic_(handle_, p->desc, p->a, p->b, p->c, p->c, pref, kCandidates, candidates,
                      &found);
  prefDestroy_(pref);
  // No algorithm for an 8-bit mode is an answer (the caller says what
  // cannot run, or takes another path), not an error.
  if (mode != Mode::kFloat && (st != 0 || found == 0)) {
    plans_.emplace(key, nullptr); // asked once per shape
    return static_cast<Plan *>(nullptr);
  }
  ACCEL_RT_RETURN_IF_ERROR(check(st, "cublasLtMatmulAlgoGetHeuristic"));
  if (found == 0)
    return Status(StatusCode::kUnimplemented,
                  "cuBLASLt has no algorithm for a " + std::string(dtypeName(inType)) + " -> " +
                      dtypeName(outType) + " GEMM of [" + std::to_string(tokens) + ", " +
                      std::to_string(k) + "] x [" + std::to_string(n) + ", " +
                      std::to_string(k) + "]^T");
  p->heur = candidates[0];
  if (found > 1 && tune && tokens <= kAutotuneMaxTokens && !gpu_.capturing() &&
      autotuneWanted()) {
    ACCEL_RT_ASSIGN_OR_RETURN(p->heur, autotune(*p, candidates, found, x, w, y, key));
  }
  return plans_.emplace(key, std::move(p)).first->second.get();
}

Status CublasLt::run(Plan &p, CuDevicePtr x, CuDevicePtr w, CuDevicePtr y) {
  gpu_.noteForeignWork();
  return check(matmul_(handle_, p.desc, p.alpha(), reinterpret_cast<const void *>(w), p.a,
                       reinterpret_cast<const void *>(x), p.b, p.beta(),
                       reinterpret_cast<const void *>(y), p.c, reinterpret_cast<void *>(y), p.c,
                       &p.heur.algo, reinterpret_cast<void *>(workspace_->ptr),
                       workspace_->bytes, gpu_.stream()),
               "cublasLtMatmul");
}

Status CublasLt::linear(CuDevicePtr x, CuDevicePtr w, CuDevicePtr y, int64_t tokens, int64_t n,
                        int64_t k, DType inType, DType outType, bool autotune) {
  if (tokens == 0 || n == 0)
    return Status::ok();
  if (k == 0)
    return gpu_.zero(y, size_t(tokens * n) * dtypeSize(outType));
  ACCEL_RT_ASSIGN_OR_RETURN(Plan * p, planFor(Mode::kFloat, tokens, n, k, inType, outType, x, w,
                                              y, 0, 0, autotune));
  return run(*p, x, w, y);
}

Status CublasLt::linear8(CuDevicePtr xq, CuDevicePtr wq, CuDevicePtr acc, int64_t tokens,
                         int64_t n, int64_t k, DType qType) {
  if (qType != DType::kI8 && qType != DType::kF8E4M3FN)
    return Status(StatusCode::kInternal,
                  std::string("linear8 takes i8 or f8E4M3FN operands, not ") + dtypeName(qType));
  const DType accType = qType == DType::kI8 ? DType::kI32 : DType::kF32;
  if (tokens == 0 || n == 0)
    return Status::ok();
  if (k == 0)
    return gpu_.zero(acc, size_t(tokens * n) * 4);
  const Mode mode = qType == DType::kI8 ? Mode::kInt8 : Mode::kFp8;
  ACCEL_RT_ASSIGN_OR_RETURN(Plan * p, planFor(mode, tokens, n, k, qType, accType, xq, wq, acc,
                                              0, 0));
  if (!p)
    return Status(StatusCode::kUnimplemented,
                  "cuBLASLt has no " + std::string(dtypeName(qType)) +
                      " tensor-core GEMM for [" + std::to_string(tokens) + ", " +
                      std::to_string(k) + "] x [" + std::to_string(n) + ", " + std::to_string(k) +
                      "]^T on this GPU (" + (qType == DType::kI8 ? "IMMA" : "FP8 needs sm_89+") +
                      ")");
  return run(*p, xq, wq, acc);
}

Status CublasLt::scaledLinearFp8(CuDevicePtr xq, CuDevicePtr wq, CuDevicePtr xs, CuDevicePtr ws,
                                 CuDevicePtr y, int64_t tokens, int64_t n, int64_t k,
                                 DType outType) {
  if (tokens == 0 || n == 0 || k == 0)
    return Status(StatusCode::kUnimplemented, "an empty scaled FP8 GEMM");
  ACCEL_RT_ASSIGN_OR_RETURN(Plan * p, planFor(Mode::kFp8OuterScales, tokens, n, k,
                                              DType::kF8E4M3FN, outType, xq, wq, y, ws, xs));
  if (!p)
    return Status(StatusCode::kUnimplemented,
                  "cuBLASLt has no FP8 GEMM with outer-vector scales here");
  // This call's scale vectors (the plan may have been made with others).
  ACCEL_RT_RETURN_IF_ERROR(
      check(descSetAttr_(p->desc, kDescAScale, &ws, sizeof(ws)), "cublasLtMatmulDescSetAttribute"));
  ACCEL_RT_RETURN_IF_ERROR(
      check(descSetAttr_(p->desc, kDescBScale, &xs, sizeof(xs)), "cublasLtMatmulDescSetAttribute"));
  return run(*p, xq, wq, y);
}

} // namespace accel::rt::gpu
