//===- PlanMemory.cpp - what one GPU of a TP x PP plan holds ---------------===//
#include "runtime/engine/PlanMemory.h"

#include "core/DType.h"
#include "runtime/engine/MemoryBudget.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace accel::rt::engine {

namespace pb = accel::plan;

namespace {

/// The bytes a constant of `v` takes on the GPU: f32 weights in a bf16/f16
/// plan are uploaded narrowed, 4-bit ones packed.
int64_t deviceBytes(const pb::Value &v, DType compute) {
  const int64_t stored = int64_t(v.size());
  if (v.dtype() == "i4" || v.dtype() == "ui4")
    return (stored + 1) / 2;
  if (v.dtype() == "f32" && dtypeSize(compute) == 2)
    return stored / 2;
  return stored;
}

} // namespace

std::vector<GpuShare> planMemoryByGpu(const plan::PlanFile &plan,
                                      const PlanMemoryOptions &options) {
  const pb::PlanMetadata &meta = plan.metadata();
  const pb::Schedule &s = plan.schedule();
  std::optional<DType> cd = dtypeFromName(meta.compute_dtype());
  const DType compute = meta.compute_dtype().empty() || !cd ? DType::kF32 : *cd;
  const int stages = plan.ppSize(), ranks = plan.tpSize();
  // The constants each stage's steps read (a pp_transfer belongs to both).
  std::vector<std::set<int32_t>> read(static_cast<size_t>(stages));
  for (const pb::Step &step : s.steps()) {
    const int st = std::clamp(int(step.stage()), 0, stages - 1);
    for (int32_t in : step.inputs()) {
      if (in < 0)
        continue;
      const int32_t root = plan.rootOf(in);
      if (s.values(root).is_constant())
        read[size_t(st)].insert(root);
    }
  }
  const pb::Arena &arena = s.arena();
  const int64_t activations = int64_t(arena.fixed_bytes()) +
                              int64_t(arena.bytes_per_token()) * options.maxTokens +
                              int64_t(arena.bytes_per_seq()) * options.maxSeqs;
  const pb::KVCache &kv = meta.kv_cache();
  const int64_t kvElem = kv.dtype() == "f8E4M3FN" ? 1 : int64_t(dtypeSize(compute));
  const int64_t allowed = int64_t(options.utilization * double(options.deviceBytes));
  std::vector<GpuShare> out;
  for (int st = 0; st < stages; ++st)
    for (int r = 0; r < ranks; ++r) {
      GpuShare g;
      g.stage = st;
      g.rank = r;
      for (int32_t id : read[size_t(st)])
        g.weightBytes += deviceBytes(s.values(id), compute);
      g.activationBytes = activations;
      g.kvBytesPerToken = 2 * plan.stageLayers(st) * kv.num_kv_heads() * kv.head_dim() * kvElem;
      g.leftBytes = allowed - g.weightBytes - g.activationBytes - kGpuRuntimeReserveBytes;
      g.kvTokens = g.leftBytes > 0 && g.kvBytesPerToken > 0 ? g.leftBytes / g.kvBytesPerToken : 0;
      out.push_back(g);
    }
  return out;
}

std::string formatPlanMemory(const std::vector<GpuShare> &shares, const PlanMemoryOptions &options,
                             const std::string &deviceName) {
  char head[256];
  std::snprintf(head, sizeof(head),
                "memory per GPU (%s: %g of %s; steps of %lld tokens, %lld sequences; %s for "
                "the CUDA context, workspaces and graphs):\n",
                deviceName.c_str(), options.utilization, formatBytes(options.deviceBytes).c_str(),
                (long long)options.maxTokens, (long long)options.maxSeqs,
                formatBytes(kGpuRuntimeReserveBytes).c_str());
  std::string out = head;
  for (const GpuShare &g : shares) {
    char line[320];
    std::snprintf(line, sizeof(line),
                  "  stage %d rank %d: weights %s, activations %s, KV cache %s (%lld tokens at %s "
                  "per token)\n",
                  g.stage, g.rank, formatBytes(g.weightBytes).c_str(),
                  formatBytes(g.activationBytes).c_str(),
                  formatBytes(std::max<int64_t>(g.leftBytes, 0)).c_str(), (long long)g.kvTokens,
                  formatBytes(g.kvBytesPerToken).c_str());
    out += line;
  }
  return out;
}

std::string checkPlanFits(const std::vector<GpuShare> &shares, const PlanMemoryOptions &options,
                          const std::string &deviceName, int64_t tp, int64_t pp) {
  const GpuShare *worst = nullptr;
  for (const GpuShare &g : shares)
    if (!worst || g.leftBytes < worst->leftBytes)
      worst = &g;
  if (!worst || worst->leftBytes > 0)
    return "";
  const int64_t allowed = int64_t(options.utilization * double(options.deviceBytes));
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "-tp=%lld -pp=%lld does not fit the %s: stage %d rank %d needs %s of weights, "
                "%s of activations (steps of %lld tokens) and %s for the runtime, more than the "
                "%s that %g of its %s allows, with nothing left for the KV cache; split the "
                "model further with -tp or -pp, or quantise it (-precision)",
                (long long)tp, (long long)pp, deviceName.c_str(), worst->stage, worst->rank,
                formatBytes(worst->weightBytes).c_str(),
                formatBytes(worst->activationBytes).c_str(), (long long)options.maxTokens,
                formatBytes(kGpuRuntimeReserveBytes).c_str(), formatBytes(allowed).c_str(),
                options.utilization, formatBytes(options.deviceBytes).c_str());
  return buf;
}

} // namespace accel::rt::engine
