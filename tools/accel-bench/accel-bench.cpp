//===- accel-bench.cpp - decode and prefill latency of a plan -------------===//
//
//   accel-bench model.plan [--batch-sizes 1,16,64] [--input-len 128]
//       [--output-len 64] [--prefill-len 2048] [--warmup 1] [--dtype bf16]
//       [--device N] [--json out.json] [--enforce-eager]
//
// runtime/engine/LatencyBench.h says what is measured; bench/llama8b/run.sh
// runs it beside HF transformers; docs/performance.md records the numbers.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/GpuExecutor.h"
#include "runtime/engine/LatencyBench.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

using namespace accel::rt;

namespace {

void usage(FILE *to) {
  std::fputs(
      "usage: accel-bench <model.plan> [options]\n"
      "  --batch-sizes <list>   decode batch sizes, comma-separated (default 1,16,64)\n"
      "  --input-len <n>        prompt tokens of each decode sequence (default 128)\n"
      "  --output-len <n>       generated tokens per sequence (default 64)\n"
      "  --prefill-len <n>      tokens of the timed single prefill; 0 skips it (default 2048)\n"
      "  --warmup <n>           untimed runs of each configuration first (default 1)\n"
      "  --verify-tokens <k>    also time a speculative verification step of k guesses\n"
      "                         (k+1 tokens a sequence) after each decode step (default 0)\n"
      "  --seed <n>             random prompt tokens (default 1)\n"
      "  --dtype f32|bf16|f16   GPU compute dtype (default: the plan's)\n"
      "  --device <n>           CUDA device (default 0)\n"
      "  --max-model-len <n>    context length (default: the plan's)\n"
      "  --num-kv-blocks <n>    KV-cache blocks (default: what the runs need)\n"
      "  --enforce-eager        GPU: no CUDA graphs for the decode steps\n"
      "  --json <file>          write the report as JSON there too\n",
      to);
}

int fail(const std::string &msg) {
  std::fprintf(stderr, "accel-bench: error: %s\n", msg.c_str());
  return 1;
}

bool parseInt(const std::string &s, int64_t &out) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno || s.empty() || *end)
    return false;
  out = v;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  engine::LatencyBenchOptions o;
  engine::GpuExecutorOptions gpu;
  gpu.dtype = DType::kBF16;
  gpu.dtypeFromPlan = true; // the plan's compute dtype (-precision) unless --dtype says
  std::string planPath, jsonPath;
  int64_t maxModelLen = 0, numKvBlocks = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      usage(stdout);
      return 0;
    }
    if (arg.empty() || arg[0] != '-') {
      if (!planPath.empty())
        return fail("more than one plan given ('" + planPath + "' and '" + arg + "')");
      planPath = arg;
      continue;
    }
    if (arg == "--enforce-eager") {
      gpu.cudaGraphs = false;
      continue;
    }
    if (i + 1 >= argc)
      return fail("option '" + arg + "' needs a value");
    std::string v = argv[++i];
    int64_t n = 0;
    const bool isNumber = parseInt(v, n) && n >= 0;
    auto number = [&]() { return n; };
    if (arg != "--batch-sizes" && arg != "--json" && arg != "--dtype" && !isNumber)
      return fail("option '" + arg + "' got '" + v + "', not a non-negative integer");
    {
      if (arg == "--batch-sizes") {
        o.batchSizes.clear();
        size_t at = 0;
        while (at <= v.size()) {
          size_t comma = v.find(',', at);
          std::string part = v.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
          if (!parseInt(part, n) || n < 1)
            return fail("option '--batch-sizes' got '" + v + "', not a list of positive integers");
          o.batchSizes.push_back(n);
          if (comma == std::string::npos)
            break;
          at = comma + 1;
        }
      } else if (arg == "--input-len") {
        o.inputLen = number();
      } else if (arg == "--output-len") {
        o.outputLen = number();
      } else if (arg == "--prefill-len") {
        o.prefillLen = number();
      } else if (arg == "--warmup") {
        o.warmup = int(number());
      } else if (arg == "--verify-tokens") {
        o.verifyTokens = number();
      } else if (arg == "--seed") {
        o.seed = uint64_t(number());
      } else if (arg == "--max-model-len") {
        maxModelLen = number();
      } else if (arg == "--num-kv-blocks") {
        numKvBlocks = number();
      } else if (arg == "--device") {
        gpu.device = int(number());
      } else if (arg == "--json") {
        jsonPath = v;
      } else if (arg == "--dtype") {
        std::optional<DType> d = dtypeFromName(v);
        if (!d || (*d != DType::kF32 && *d != DType::kBF16 && *d != DType::kF16))
          return fail("option '--dtype' takes f32, bf16 or f16, not '" + v + "'");
        gpu.dtype = *d;
        gpu.dtypeFromPlan = false;
      } else {
        return fail("unknown option '" + arg + "'");
      }
    }
  }
  if (planPath.empty()) {
    usage(stderr);
    return fail("no plan given");
  }
  // A malformed ACCEL_* variable or a removed switch (docs/env.md) would
  // change what is measured without a word: refuse it.
  if (Status s = envStatus(); !s.isOk())
    return fail(s.message());

  StatusOr<std::shared_ptr<const plan::PlanFile>> plan = plan::PlanFile::open(planPath);
  if (!plan)
    return fail(plan.status().message());
  engine::EngineOptions eo;
  eo.maxModelLen = maxModelLen;
  gpu.maxModelLen = maxModelLen;
  gpu.graphMaxBatch = 1;
  for (int64_t b : o.batchSizes)
    gpu.graphMaxBatch = std::max(gpu.graphMaxBatch, b);
  eo.gpuBackend = engine::makeGpuBackend(gpu);
  const int64_t blockSize = std::max<int64_t>(1, (*plan)->metadata().kv_cache().block_size());
  eo.numKvBlocks = numKvBlocks > 0 ? numKvBlocks : engine::latencyBenchKvBlocks(o, blockSize) + 4;
  StatusOr<std::unique_ptr<engine::Engine>> e = engine::Engine::create(*plan, eo);
  if (!e)
    return fail(e.status().message());
  std::fprintf(stderr, "accel-bench: %s (%s), %lld KV blocks of %lld tokens\n", planPath.c_str(),
               (*plan)->metadata().target().c_str(), (long long)eo.numKvBlocks,
               (long long)blockSize);
  StatusOr<engine::LatencyReport> r = engine::runLatencyBench(
      **e, o, [](const std::string &line) { std::fprintf(stderr, "accel-bench: %s\n", line.c_str()); });
  if (!r)
    return fail(r.status().message());
  const std::string json = engine::latencyReportJson(*r, o);
  std::printf("%s\n", json.c_str());
  if (!jsonPath.empty()) {
    std::ofstream out(jsonPath);
    out << json << "\n";
    if (!out)
      return fail("cannot write '" + jsonPath + "'");
  }
  return 0;
}
