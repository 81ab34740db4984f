//===- accel-gpu-score.cpp - a plan's logits on the GPU vs a reference ----===//
//
// Loads a plan, runs every position of one token sequence through the GPU
// backend (GpuExecutor) with a paged KV cache, in several schedules, and
// compares the logits with a reference (HF transformers' logits.npy):
//
//   whole   the sequence in one prefill step
//   tokens  token by token (every step after the first is a decode step,
//           replayed from a CUDA graph unless ACCEL_GPU_GRAPHS=0)
//   split   token by token with split-KV decode forced: an executor of its
//           own with GpuTuning::decodeSplit = 4
//   ragged  two copies of the sequence in one ragged batch, fed 5 + 1 + 1 ...
//           and 2 + 3 + 3 ... tokens a step (prefill chunks and decode tokens
//           mixed in one step)
//
//   accel-gpu-score x.plan --ids input_ids.npy --ref logits.npy [--dtype bf16]
//       [--tol 2e-2] [--out logits.npy] [--generated generated_ids.npy
//       --prompt-len 4] [--bench 128]
//   accel-gpu-score --probe        exit 0 when a GPU can run plans, else 77
//
// The error of a schedule is max |logits - ref| / max |ref|; it passes at
// or under --tol (default 1e-4 for f32, 2e-2 for bf16/f16). --generated
// checks greedy argmax agreement teacher-forced on a reference generation.
// Exit status: 0 all passed, 1 a check failed, 2 bad usage or an error,
// 77 no usable GPU (ctest's SKIP_RETURN_CODE).
//
//===----------------------------------------------------------------------===//
#include "core/Npy.h"
#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/GpuExecutor.h"
#include "runtime/kv/SequenceKV.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace accel::rt;
using namespace accel::rt::engine;

namespace {

constexpr int kSkip = 77;

int fail(const std::string &msg, int code = 2) {
  std::fprintf(stderr, "accel-gpu-score: %s\n", msg.c_str());
  return code;
}

/// One sequence of a schedule: its ids and the size of each step's chunk.
struct SeqPlan {
  std::vector<int64_t> ids;
  std::function<int64_t(int64_t step)> chunk;
};

/// Runs the sequences together (each step holds every sequence with tokens
/// left); returns each sequence's f32 logits [len, vocab].
StatusOr<std::vector<Tensor>> runSchedule(GpuExecutor &ex, kv::BlockPool &pool,
                                          std::vector<SeqPlan> &plans, int64_t vocab,
                                          double *seconds = nullptr) {
  const size_t n = plans.size();
  std::vector<kv::SequenceKV> seqs(n);
  std::vector<int64_t> done(n, 0);
  std::vector<Tensor> out(n);
  for (size_t i = 0; i < n; ++i) {
    ACCEL_RT_ASSIGN_OR_RETURN(out[i],
                              Tensor::allocate(DType::kF32, {int64_t(plans[i].ids.size()), vocab}));
  }
  auto start = std::chrono::steady_clock::now();
  Status result = Status::ok();
  for (int64_t step = 0;; ++step) {
    std::vector<kv::StepSequence> batch;
    std::vector<size_t> who;
    std::vector<int64_t> counts, ids;
    for (size_t i = 0; i < n; ++i) {
      const int64_t len = int64_t(plans[i].ids.size());
      if (done[i] >= len)
        continue;
      const int64_t c = std::min(std::max<int64_t>(1, plans[i].chunk(step)), len - done[i]);
      batch.push_back({&seqs[i], c});
      who.push_back(i);
      counts.push_back(c);
      ids.insert(ids.end(), plans[i].ids.begin() + done[i], plans[i].ids.begin() + done[i] + c);
    }
    if (batch.empty())
      break;
    StatusOr<kv::StepMetadata> meta = kv::prepareStep(pool, batch);
    if (!meta) {
      result = meta.status();
      break;
    }
    StatusOr<Tensor> tokens = Tensor::fromVector<int64_t>({int64_t(ids.size())}, ids);
    if (!tokens) {
      result = tokens.status();
      break;
    }
    StatusOr<Tensor> logits = ex.run(*tokens, pool, *meta);
    if (!logits) {
      result = Status(logits.status().code(),
                      "step " + std::to_string(step) + ": " + logits.status().message());
      break;
    }
    const int64_t rows = logits->numElements() / vocab;
    if (rows != int64_t(ids.size()) || logits->dim(-1) != vocab) {
      result = Status(StatusCode::kInternal, "the plan returned logits " + logits->describe() +
                                                 " for a step of " + std::to_string(ids.size()) +
                                                 " tokens");
      break;
    }
    int64_t row = 0;
    for (size_t k = 0; k < who.size(); ++k) {
      const size_t i = who[k];
      std::memcpy(out[i].data<float>() + done[i] * vocab, logits->data<float>() + row * vocab,
                  size_t(counts[k] * vocab) * sizeof(float));
      row += counts[k];
      done[i] += counts[k];
    }
  }
  if (seconds)
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (kv::SequenceKV &s : seqs)
    ACCEL_RT_RETURN_IF_ERROR(s.release(pool));
  ACCEL_RT_RETURN_IF_ERROR(result);
  return out;
}

struct Compare {
  double relErr = 0;   // max |a - ref| / max |ref|
  int64_t argmaxAgree = 0, rows = 0;
  bool finite = true;
};

Compare compare(const Tensor &got, const Tensor &ref, int64_t vocab) {
  Compare c;
  const float *a = got.data<float>(), *r = ref.data<float>();
  const int64_t n = got.numElements();
  double maxRef = 0, maxErr = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(a[i]))
      c.finite = false;
    maxRef = std::max(maxRef, double(std::fabs(r[i])));
    maxErr = std::max(maxErr, double(std::fabs(a[i] - r[i])));
  }
  c.relErr = maxRef > 0 ? maxErr / maxRef : maxErr;
  c.rows = n / vocab;
  for (int64_t row = 0; row < c.rows; ++row) {
    const float *ar = a + row * vocab, *rr = r + row * vocab;
    c.argmaxAgree += (std::max_element(ar, ar + vocab) - ar) == (std::max_element(rr, rr + vocab) - rr);
  }
  return c;
}

std::vector<int64_t> idsOf(const Tensor &t) { return t.toInt64s(); }

} // namespace

int main(int argc, char **argv) {
  std::string planPath, idsPath, refPath, outPath, genPath, dtypeName = "f32";
  double tol = -1;
  int64_t promptLen = 0, bench = 0;
  bool probe = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "accel-gpu-score: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--ids")
      idsPath = next();
    else if (a == "--ref")
      refPath = next();
    else if (a == "--out")
      outPath = next();
    else if (a == "--dtype")
      dtypeName = next();
    else if (a == "--tol")
      tol = std::atof(next().c_str());
    else if (a == "--generated")
      genPath = next();
    else if (a == "--prompt-len")
      promptLen = std::atoll(next().c_str());
    else if (a == "--bench")
      bench = std::atoll(next().c_str());
    else if (a == "--probe")
      probe = true;
    else if (!a.empty() && a[0] == '-')
      return fail("unknown option " + a);
    else
      planPath = a;
  }

  if (probe) {
    StatusOr<CudaDriver *> d = CudaDriver::get();
    if (!d)
      return fail("no GPU: " + d.status().message(), kSkip);
    StatusOr<std::vector<GpuInfo>> gpus = (*d)->listDevices();
    if (!gpus || gpus->empty())
      return fail("no GPU: " + (gpus ? std::string("the driver sees none") : gpus.status().message()),
                  kSkip);
    std::printf("GPU: %s (sm_%d%d)\n", (*gpus)[0].name.c_str(), (*gpus)[0].smMajor,
                (*gpus)[0].smMinor);
    return 0;
  }
  if (planPath.empty() || idsPath.empty())
    return fail("usage: accel-gpu-score PLAN --ids IDS.npy [--ref LOGITS.npy] [--dtype "
                "f32|bf16|f16] [--tol X] [--out OUT.npy] [--generated IDS.npy --prompt-len N] "
                "[--bench N]");
  std::optional<DType> dt = dtypeFromName(dtypeName);
  if (!dt || (*dt != DType::kF32 && *dt != DType::kBF16 && *dt != DType::kF16))
    return fail("--dtype must be f32, bf16 or f16");
  if (tol < 0)
    tol = *dt == DType::kF32 ? 1e-4 : 2e-2;

  StatusOr<std::shared_ptr<const plan::PlanFile>> plan = plan::PlanFile::open(planPath);
  if (!plan)
    return fail(plan.status().message());
  GpuExecutorOptions opts;
  opts.dtype = *dt;
  StatusOr<std::unique_ptr<GpuExecutor>> ex = GpuExecutor::create(*plan, opts);
  if (!ex)
    return fail(ex.status().message(), ex.status().code() == StatusCode::kUnavailable ? kSkip : 2);
  const int64_t vocab = (*plan)->metadata().model().vocab_size();

  StatusOr<Tensor> idsT = readNpy(idsPath);
  if (!idsT)
    return fail(idsT.status().message());
  std::vector<int64_t> ids = idsOf(*idsT);
  Tensor ref;
  if (!refPath.empty()) {
    StatusOr<Tensor> r = readNpy(refPath);
    if (!r)
      return fail(r.status().message());
    ref = r->toF32();
    if (ref.numElements() != int64_t(ids.size()) * vocab)
      return fail("the reference " + ref.describe() + " is not [" + std::to_string(ids.size()) +
                  ", " + std::to_string(vocab) + "]");
  }

  // A pool for two sequences of the longest length used here.
  std::vector<int64_t> genIds;
  if (!genPath.empty()) {
    StatusOr<Tensor> g = readNpy(genPath);
    if (!g)
      return fail(g.status().message());
    genIds = idsOf(*g);
  }
  const auto &kvc = (*plan)->metadata().kv_cache();
  kv::KVCacheConfig cfg;
  cfg.numLayers = std::max<int64_t>(kvc.num_layers(), 1);
  cfg.numKvHeads = std::max<int64_t>(kvc.num_kv_heads(), 1);
  cfg.headDim = std::max<int64_t>(kvc.head_dim(), 1);
  cfg.blockSize = kvc.block_size() > 0 ? kvc.block_size() : 16;
  cfg.dtype = (*ex)->computeDType(); // the device holds the cache: no host storage
  const int64_t maxLen = std::max<int64_t>(
      {int64_t(ids.size()) + bench, int64_t(genIds.size()), promptLen + 1});
  cfg.numBlocks = 2 * ((maxLen + cfg.blockSize - 1) / cfg.blockSize) + 2;
  StatusOr<std::unique_ptr<kv::BlockPool>> pool =
      kv::BlockPool::create(cfg, kv::KvStorage::kDevice);
  if (!pool)
    return fail(pool.status().message());

  std::printf("plan %s on %s\n", planPath.c_str(), (*ex)->describe().c_str());
  bool ok = true;
  struct Mode {
    const char *name;
    int64_t split; // GpuTuning::decodeSplit of an executor for this mode; 0: `ex`'s
    std::vector<std::function<int64_t(int64_t)>> chunks;
  };
  const int64_t len = int64_t(ids.size());
  std::vector<Mode> modes = {
      {"whole", 0, {[len](int64_t) { return len; }}},
      {"tokens", 0, {[](int64_t) { return int64_t(1); }}},
      {"split", 4, {[](int64_t) { return int64_t(1); }}},
      {"ragged",
       0,
       {[](int64_t s) { return s == 0 ? int64_t(5) : int64_t(1); },
        [](int64_t s) { return s == 0 ? int64_t(2) : int64_t(3); }}},
  };
  for (Mode &m : modes) {
    std::vector<SeqPlan> plans;
    for (auto &c : m.chunks)
      plans.push_back({ids, c});
    // The split mode's executor lives for this mode only (its weights are a
    // second copy on the device).
    std::unique_ptr<GpuExecutor> own;
    if (m.split > 0) {
      GpuExecutorOptions splitOpts = opts;
      splitOpts.tuning.decodeSplit = m.split;
      StatusOr<std::unique_ptr<GpuExecutor>> e = GpuExecutor::create(*plan, splitOpts);
      if (!e)
        return fail(std::string(m.name) + ": " + e.status().message());
      own = std::move(*e);
    }
    StatusOr<std::vector<Tensor>> got = runSchedule(own ? *own : **ex, **pool, plans, vocab);
    if (!got)
      return fail(std::string(m.name) + ": " + got.status().message());
    if (!outPath.empty() && std::string(m.name) == "whole") {
      if (Status s = writeNpy(outPath, (*got)[0]); !s.isOk())
        return fail(s.message());
    }
    if (!ref.defined())
      continue;
    for (size_t i = 0; i < got->size(); ++i) {
      Compare c = compare((*got)[i], ref, vocab);
      const bool pass = c.finite && c.relErr <= tol;
      ok &= pass;
      std::printf("  %-7s %-4s seq %zu: max|err|/max|ref| = %.3g (tol %.3g), argmax %lld/%lld  %s\n",
                  m.name, dtypeName.c_str(), i, c.relErr, tol, (long long)c.argmaxAgree,
                  (long long)c.rows, pass ? "ok" : "FAIL");
    }
  }

  if (!genIds.empty()) {
    // Teacher-forced greedy agreement: the argmax after each prefix is the
    // next generated id.
    std::vector<SeqPlan> plans = {{genIds, [](int64_t) { return int64_t(1); }}};
    StatusOr<std::vector<Tensor>> got = runSchedule(**ex, **pool, plans, vocab);
    if (!got)
      return fail("generated: " + got.status().message());
    int64_t agree = 0, total = 0, firstMiss = -1;
    const float *l = (*got)[0].data<float>();
    for (int64_t p = std::max<int64_t>(promptLen, 1); p < int64_t(genIds.size()); ++p) {
      const float *row = l + (p - 1) * vocab;
      const int64_t am = std::max_element(row, row + vocab) - row;
      ++total;
      if (am == genIds[size_t(p)])
        ++agree;
      else if (firstMiss < 0)
        firstMiss = p;
    }
    // f32 must reproduce HF's greedy choices; bf16/f16 may flip a near tie.
    const bool pass = *dt == DType::kF32 ? agree == total : agree * 10 >= total * 9;
    ok &= pass;
    std::printf("  greedy  %-4s: %lld/%lld generated tokens are the argmax%s  %s\n",
                dtypeName.c_str(), (long long)agree, (long long)total,
                firstMiss >= 0 ? (" (first miss at position " + std::to_string(firstMiss) + ")").c_str()
                               : "",
                pass ? "ok" : "FAIL");
  }

  if (bench > 0) {
    // One sequence: a prefill of the ids, then `bench` decode steps (fed
    // the ids again, cyclically; the values do not matter for timing).
    std::vector<int64_t> seq = ids;
    while (int64_t(seq.size()) < len + bench)
      seq.push_back(ids[seq.size() % ids.size()]);
    std::vector<SeqPlan> warm = {{seq, [len](int64_t s) { return s == 0 ? len : int64_t(1); }}};
    double secs = 0;
    if (StatusOr<std::vector<Tensor>> w = runSchedule(**ex, **pool, warm, vocab); !w)
      return fail("bench: " + w.status().message());
    std::vector<SeqPlan> timed = {{seq, [len](int64_t s) { return s == 0 ? len : int64_t(1); }}};
    if (StatusOr<std::vector<Tensor>> t = runSchedule(**ex, **pool, timed, vocab, &secs); !t)
      return fail("bench: " + t.status().message());
    std::printf("  bench   %-4s: prefill %lld + %lld decode steps (batch 1) in %.3f s: %.1f tokens/s\n",
                dtypeName.c_str(), (long long)len, (long long)bench, secs, double(bench) / secs);
  }
  for (const std::string &f : (*ex)->fallbacks())
    std::printf("  fell back to the CPU: %s\n", f.c_str());
  const std::string off = (*ex)->graphsOffReason();
  std::printf("  CUDA graphs: %zu captured%s\n", (*ex)->numGraphs(),
              off.empty() ? "" : (" (decode steps eager: " + off + ")").c_str());
  return ok ? 0 : 1;
}
