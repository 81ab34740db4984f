//===- AccuracyReport.cpp - accelc -report-accuracy -----------------------===//
#include "AccuracyReport.h"

#include "core/Npy.h"
#include "runtime/engine/Engine.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <vector>

using namespace accel;

namespace {

int fail(const llvm::Twine &msg) {
  llvm::WithColor::error(llvm::errs(), "accelc") << msg << "\n";
  return 1;
}

/// Removes a temporary file when it goes out of scope.
struct TempFile {
  std::string path;
  ~TempFile() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
};

/// log-softmax of one row, in f64.
void logSoftmax(const float *row, int64_t v, std::vector<double> &out) {
  out.resize(size_t(v));
  double mx = -INFINITY;
  for (int64_t i = 0; i < v; ++i)
    mx = std::max(mx, double(row[i]));
  double sum = 0.0;
  for (int64_t i = 0; i < v; ++i)
    sum += std::exp(double(row[i]) - mx);
  const double lse = mx + std::log(sum);
  for (int64_t i = 0; i < v; ++i)
    out[size_t(i)] = double(row[i]) - lse;
}

int64_t argmax(const float *row, int64_t v) {
  int64_t best = 0;
  for (int64_t i = 1; i < v; ++i)
    if (row[i] > row[best])
      best = i;
  return best;
}

} // namespace

int accel::reportAccuracy(const CompileOptions &options, const std::string &tokensPath) {
  // What the report calls the mode: "bf16", "fp8-kv", "int8-weight+fp8-kv".
  const std::string name =
      options.kvCacheDtype != "fp8"
          ? options.precision
          : (options.precision == "f32" ? std::string("fp8-kv") : options.precision + "+fp8-kv");
  // The tokens first: a bad file costs no compile.
  rt::StatusOr<rt::Tensor> ids = rt::readNpy(tokensPath);
  if (!ids)
    return fail(ids.status().message());
  if (!rt::isInteger(ids->dtype()) || ids->rank() < 1 || ids->rank() > 2 ||
      ids->dim(-1) < 2 || ids->dim(0) < 1)
    return fail(tokensPath + ": the tokens must be integers of shape [S] or [N, S] with N >= 1 "
                "and S >= 2, got " + ids->describe());
  const std::vector<int64_t> all = ids->toInt64s();
  const int64_t seqLen = ids->dim(-1), numSeqs = ids->rank() == 2 ? ids->dim(0) : 1;
  const bool kvFp8 = options.kvCacheDtype == "fp8";
  if (options.precision == "f32" && !kvFp8)
    return fail("-report-accuracy compares a -precision mode with f32: give -precision=bf16, "
                "fp16, int8-weight, int4-weight, fp8, w8a8 or w8a8-fp8 (or -kv-cache-dtype=fp8)");

  // Both plans, for the CPU reference backend.
  auto compile = [&](const std::string &precision, const std::string &out, bool ref) -> bool {
    CompileOptions o = options;
    o.precision = precision;
    if (ref) {
      o.kvCacheDtype = "auto";
      o.int4ZeroPoints = false; // the f32 reference quantises nothing
    }
    o.target = "cpu";
    o.outputPath = out;
    if (llvm::Error e = compileToPlan(o)) {
      llvm::handleAllErrors(std::move(e), [](const CompileError &ce) {
        if (ce.fromDiagnostics())
          llvm::errs() << ce.message() << "\n";
        else
          fail(ce.message());
      });
      return false;
    }
    return true;
  };
  auto tempPath = [](const char *tag, TempFile &t) -> bool {
    llvm::SmallString<128> p;
    if (llvm::sys::fs::createTemporaryFile(tag, "plan", p))
      return false;
    t.path = std::string(p);
    return true;
  };
  TempFile refTemp, modeTemp;
  if (!tempPath("accelc-f32", refTemp))
    return fail("cannot create a temporary file for the f32 plan");
  std::string modePath = options.outputPath;
  if (modePath.empty() || modePath == "-") {
    if (!tempPath("accelc-mode", modeTemp))
      return fail("cannot create a temporary file for the " + options.precision + " plan");
    modePath = modeTemp.path;
  }
  if (!compile("f32", refTemp.path, true) || !compile(options.precision, modePath, false))
    return 1;

  rt::engine::EngineOptions eo;
  eo.maxModelLen = seqLen;
  auto ref = rt::engine::Engine::open(refTemp.path, eo);
  if (!ref)
    return fail(ref.status().message());
  auto mode = rt::engine::Engine::open(modePath, eo);
  if (!mode)
    return fail(mode.status().message());

  int64_t positions = 0, agree = 0;
  double klSum = 0.0, klMax = 0.0, nllRef = 0.0, nllMode = 0.0;
  std::vector<double> lp, lq;
  for (int64_t s = 0; s < numSeqs; ++s) {
    std::vector<int64_t> seq(all.begin() + s * seqLen, all.begin() + (s + 1) * seqLen);
    auto a = (*ref)->score(seq);
    if (!a)
      return fail("the f32 plan: " + a.status().message());
    auto b = (*mode)->score(seq);
    if (!b)
      return fail("the " + name + " plan: " + b.status().message());
    const int64_t v = a->dim(1);
    const float *pa = a->data<float>(), *pb = b->data<float>();
    // Position t predicts token t + 1 (held back from position t's input).
    for (int64_t t = 0; t + 1 < seqLen; ++t) {
      const float *ra = pa + t * v, *rb = pb + t * v;
      logSoftmax(ra, v, lp);
      logSoftmax(rb, v, lq);
      double kl = 0.0;
      for (int64_t i = 0; i < v; ++i)
        kl += std::exp(lp[size_t(i)]) * (lp[size_t(i)] - lq[size_t(i)]);
      kl = std::max(kl, 0.0);
      klSum += kl;
      klMax = std::max(klMax, kl);
      agree += argmax(ra, v) == argmax(rb, v);
      const int64_t next = seq[size_t(t + 1)];
      if (next >= 0 && next < v) {
        nllRef -= lp[size_t(next)];
        nllMode -= lq[size_t(next)];
      }
      ++positions;
    }
  }
  llvm::outs() << "accuracy of -precision=" << options.precision
               << (options.kvCacheDtype == "fp8" ? " -kv-cache-dtype=fp8" : "")
               << " against the f32 plan (CPU, teacher-forced): " << tokensPath << ", "
               << numSeqs << (numSeqs == 1 ? " sequence" : " sequences") << ", " << positions
               << " predicted positions\n";
  llvm::outs() << "  top-1 agreement      " << llvm::format("%.4f", double(agree) / positions)
               << " (" << agree << "/" << positions << ")\n";
  llvm::outs() << "  KL(f32 || " << name << ")  mean "
               << llvm::format("%.3e", klSum / positions) << " nats, max "
               << llvm::format("%.3e", klMax) << "\n";
  llvm::outs() << "  perplexity           f32 " << llvm::format("%.4f", std::exp(nllRef / positions))
               << ", " << name << " "
               << llvm::format("%.4f", std::exp(nllMode / positions))
               << " (of the held-back tokens)\n";
  return 0;
}
