//===- GpuExecutor.cpp - run a plan's schedule on an NVIDIA GPU ------------===//
#include "runtime/cuda/GpuExecutorImpl.h"

#include "runtime/cuda/GpuProcessRank.h"
#include "runtime/cuda/GpuSteps.h"
#include "runtime/cuda/Int4Pack.h"
#include "runtime/cuda/TpGpuExecutor.h"
#include "runtime/cuda/kernels/KernelImage.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

namespace accel::rt::engine {

namespace pb = accel::plan;

StatusOr<std::unique_ptr<GpuExecutor>>
GpuExecutor::create(std::shared_ptr<const plan::PlanFile> plan, const GpuExecutorOptions &options) {
  if (options.dtypeFromPlan) {
    GpuExecutorOptions fixed = options;
    fixed.dtypeFromPlan = false;
    const std::string &want = plan->metadata().compute_dtype();
    if (!want.empty()) {
      std::optional<DType> d = dtypeFromName(want);
      if (!d)
        return Status(StatusCode::kInvalidArgument,
                      plan->path() + ": unknown compute dtype '" + want + "' in the plan");
      fixed.dtype = *d;
    }
    return create(std::move(plan), fixed);
  }
  if (options.dtype != DType::kF32 && options.dtype != DType::kBF16 &&
      options.dtype != DType::kF16)
    return Status(StatusCode::kInvalidArgument,
                  std::string("the GPU backend computes in f32, bf16 or f16, not ") +
                      dtypeName(options.dtype));
  ACCEL_RT_RETURN_IF_ERROR(envStatus());
  if (options.tuning.decodeSplit < 0 || options.tuning.fp8OuterScalesMinRows < 1)
    return Status(StatusCode::kInvalidArgument,
                  "GpuTuning: decodeSplit must be 0 or more and fp8OuterScalesMinRows 1 or more, "
                  "not " + std::to_string(options.tuning.decodeSplit) + " and " +
                      std::to_string(options.tuning.fp8OuterScalesMinRows));
  if (options.tuning.w4Unroll != 4 && options.tuning.w4Unroll != 8)
    return Status(StatusCode::kInvalidArgument,
                  "GpuTuning: w4Unroll (ACCEL_GPU_W4_UNROLL) must be 4 or 8, not " +
                      std::to_string(options.tuning.w4Unroll));
  const auto &meta = plan->metadata();
  if (options.tpRank < 0 && plan->tpSize() != 1)
    return Status(StatusCode::kUnimplemented,
                  plan->path() + ": the plan is partitioned for " + std::to_string(meta.tp_size()) +
                      " ranks; one GpuExecutor runs one (TpGpuExecutor runs them all)");
  if (options.tpRank >= plan->tpSize())
    return Status(StatusCode::kInvalidArgument,
                  plan->path() + ": rank " + std::to_string(options.tpRank) + " of a plan with " +
                      std::to_string(plan->tpSize()) + " tensor-parallel ranks");
  const int rank = std::max(options.tpRank, 0);
  const int pp = plan->ppSize();
  if (pp != 1 && options.ppStage < 0)
    return Status(StatusCode::kUnimplemented,
                  plan->path() + ": the plan is split into " + std::to_string(pp) +
                      " pipeline stages; one GpuExecutor runs one (TpGpuExecutor runs them all)");
  if (options.ppStage >= pp)
    return Status(StatusCode::kInvalidArgument,
                  plan->path() + ": stage " + std::to_string(options.ppStage) +
                      " of a plan with " + std::to_string(pp) + " pipeline stages");
  const int stage = std::max(options.ppStage, 0);
  // The steps this executor runs: its stage's, and its side of every
  // pp_transfer that leaves it (a transfer is listed in the stage it
  // reaches).
  auto mine = [&](const pb::Step &step) {
    if (pp == 1)
      return true;
    if (step.stage() == stage)
      return true;
    if (step.kind() != pb::PP_TRANSFER)
      return false;
    for (const pb::Attribute &a : step.attributes())
      if (a.name() == "from_stage")
        return a.i() == stage;
    return false;
  };
  // The KV cache: the compute dtype, or f8E4M3FN (-kv-cache-dtype=fp8).
  {
    const std::string &kvd = meta.kv_cache().dtype();
    if (kvd == "f8E5M2" || kvd == "i8")
      return Status(StatusCode::kUnimplemented,
                    plan->path() + ": the plan's KV cache is " + kvd +
                        "; the GPU backend keeps f8E4M3FN or the compute dtype");
  }
  // Quantised linears on the GPU: weight-only ones (accelc
  // -precision=int8-weight|fp8|int4-weight, ONNX QDQ, MatMulNBits) with i8,
  // f8E4M3FN or f8E5M2 weights and per-channel or per-tensor scales, or i4/u4
  // weights (packed at load, GemvInt4.cu) with those or per-group scales of
  // a multiple of 64 columns and optional zero points; W8A8 ones
  // (-precision=w8a8|w8a8-fp8) with i8 or f8E4M3FN (docs/precision.md).
  std::set<int32_t> packedInt4; // the 4-bit weights, packed at upload
  // The steps that read them, in schedule order, with their group size
  // (the prefetcher's order below).
  std::vector<std::pair<const pb::Step *, int64_t>> int4Steps;
  for (const pb::Step &step : plan->schedule().steps()) {
    if (!mine(step))
      continue;
    if (step.kind() != pb::GEMM || step.inputs_size() <= 3 || step.inputs(3) < 0)
      continue;
    bool dynamicX = false;
    int64_t group = 0;
    for (const pb::Attribute &a : step.attributes()) {
      dynamicX |= a.name() == "input_quant" && a.s() != "none";
      if (a.name() == "group_size")
        group = a.i();
    }
    const bool w8a8 = (step.inputs_size() > 5 && step.inputs(5) >= 0) || dynamicX;
    const pb::Value &wv = plan->schedule().values(step.inputs(1));
    const std::string &wt = wv.dtype();
    // W8A8 (-precision=w8a8 / w8a8-fp8): i8 or f8E4M3FN tensor-core GEMMs.
    if (w8a8 && wt != "i8" && wt != "f8E4M3FN")
      return Status(StatusCode::kUnimplemented,
                    plan->path() + ": a linear of the plan quantises its activations to go with " +
                        wt + " weights; the GPU runs W8A8 with i8 or f8E4M3FN weights. Run the "
                             "plan with -target=cpu");
    const bool zeroPoint = step.inputs_size() > 4 && step.inputs(4) >= 0;
    const bool fourBit = wt == "i4" || wt == "ui4";
    if (fourBit && !w8a8) {
      const int64_t k = wv.shape_size() == 2 ? wv.shape(1) : -1;
      if (group > 0 && (group % 64 != 0 || k % group != 0))
        return Status(StatusCode::kUnimplemented,
                      plan->path() + ": a 4-bit linear of the plan has groups of " +
                          std::to_string(group) + " columns (K = " + std::to_string(k) +
                          "); the GPU runs groups of a multiple of 64 that divides K. Run the "
                          "plan with -target=cpu");
      if (k % 2 != 0)
        return Status(StatusCode::kUnimplemented,
                      plan->path() + ": a 4-bit linear of the plan has an odd K (" +
                          std::to_string(k) + "); the GPU needs an even one. Run the plan with "
                                              "-target=cpu");
      if (wv.is_constant()) {
        packedInt4.insert(step.inputs(1));
        int4Steps.emplace_back(&step, group);
      }
      continue;
    }
    if (zeroPoint || group > 0 || (wt != "i8" && wt != "f8E4M3FN" && wt != "f8E5M2"))
      return Status(StatusCode::kUnimplemented,
                    plan->path() + ": a quantised linear of the plan (" + wt + " weight" +
                        (zeroPoint ? ", zero point" : "") + (group > 0 ? ", per-group scales" : "") +
                        ") has no GPU kernel; the GPU runs i8, f8E4M3FN and f8E5M2 weights with "
                        "per-channel or per-tensor scales, and i4/ui4 ones with zero points and "
                        "groups too. Run the plan with -target=cpu");
  }
  std::unique_ptr<GpuExecutor> ex(new GpuExecutor());
  ex->impl_ = std::make_unique<GpuExecutorImpl>();
  GpuExecutorImpl &im = *ex->impl_;
  im.options = options;
  ACCEL_RT_ASSIGN_OR_RETURN(im.gpu, gpu::GpuContext::create(options.device, gpu::kernelImage(),
                                                            gpu::kernelImageBytes()));
  // A plan for sm_80 runs on sm_80 and later; one for sm_90 needs sm_90+.
  const std::string &target = meta.target();
  if (target.rfind("sm_", 0) == 0) {
    const int want = std::atoi(target.c_str() + 3);
    const int have = im.gpu->info().smMajor * 10 + im.gpu->info().smMinor;
    if (want > have)
      return Status(StatusCode::kUnavailable,
                    plan->path() + ": the plan was built for " + target + " and GPU " +
                        std::to_string(options.device) + " (" + im.gpu->info().name + ") is sm_" +
                        std::to_string(have) + "; recompile with a matching -target");
  }
  ACCEL_RT_ASSIGN_OR_RETURN(im.blas, gpu::CublasLt::create(*im.gpu));
  ACCEL_RT_ASSIGN_OR_RETURN(im.planKernels, GpuPlanKernels::load(*plan, *im.gpu, options.dtype));

  const pb::Schedule &s = plan->schedule();
  const int32_t n = s.values_size();
  im.tokenDType = *dtypeFromName(s.values(s.token_ids()).dtype());

  // Constants: host views of the mapped plan; those a device step reads are
  // uploaded once, in the dtype that step wants.
  im.constants.resize(size_t(n));
  std::map<int32_t, std::optional<DType>> deviceType; // constant -> dtype to upload
  for (const pb::Step &step : s.steps()) {
    if (!mine(step)) // another stage's weights stay on the host
      continue;
    for (int i = 0; i < step.inputs_size(); ++i) {
      const int32_t id = step.inputs(i);
      if (id < 0 || !s.values(id).is_constant())
        continue;
      std::optional<DType> want = gpuOperandDType(step, i, options.dtype);
      if (!want)
        continue;
      auto it = deviceType.find(id);
      if (it == deviceType.end() || it->second == DType::kF32)
        deviceType[id] = want; // the compute dtype wins when both are wanted
    }
  }
  GpuRunState up;
  up.gpu = im.gpu.get();
  up.dtype = options.dtype;
  for (int32_t id = 0; id < n; ++id) {
    if (!s.values(id).is_constant())
      continue;
    im.constants[size_t(id)].host = plan->constant(id, rank);
    auto it = deviceType.find(id);
    if (it == deviceType.end())
      continue;
    std::optional<DType> want = it->second;
    // Integer and 8-bit float constants (quantised weights) stay as stored.
    const DType stored = im.constants[size_t(id)].host.dtype();
    if (!isFloat(stored) || stored == DType::kF8E4M3FN || stored == DType::kF8E5M2)
      want = std::nullopt;
    if (packedInt4.count(id)) {
      // A 4-bit weight: packed two values per byte (Int4Layout.h).
      GpuValue &c = im.constants[size_t(id)];
      StatusOr<std::vector<uint8_t>> packed = gpu::packInt4(c.host);
      if (!packed)
        return Status(packed.status().code(), plan->path() + ": value " + std::to_string(id) +
                                                  ": " + packed.status().message());
      ACCEL_RT_ASSIGN_OR_RETURN(c.dev, up.empty(DType::kU8, {int64_t(packed->size())}));
      ACCEL_RT_RETURN_IF_ERROR(im.gpu->upload(c.dev.ptr, packed->data(), packed->size()));
      c.dev.dtype = c.host.dtype();
      c.dev.shape = c.host.shape();
      c.dev.packedInt4 = true;
      c.dev.constant = true;
      continue;
    }
    ACCEL_RT_RETURN_IF_ERROR(up.toDevice(im.constants[size_t(id)], want).status());
    im.constants[size_t(id)].dev.constant = true;
  }
  ACCEL_RT_RETURN_IF_ERROR(im.gpu->synchronize());

  // 4-bit weights in the order the steps read them, for the prefetcher
  // (W4Prefetch.h): each GEMM of more than 64 rows finds its weight
  // dequantised while the GEMM before it ran. Plans with fewer than two, or
  // whose 4-bit weights repeat, dequantise each when its GEMM runs.
  if (options.tuning.w4Prefetch && packedInt4.size() >= 2) {
    std::vector<W4Dequant> order;
    std::set<int32_t> seen;
    bool usable = true;
    for (auto [sp, group] : int4Steps) {
      const pb::Step &step = *sp;
      const int32_t wi = step.inputs(1), si = step.inputs(3);
      const int32_t zi = step.inputs_size() > 4 ? step.inputs(4) : -1;
      if (!seen.insert(wi).second || si < 0 || !s.values(si).is_constant() ||
          (zi >= 0 && !s.values(zi).is_constant())) {
        usable = false;
        break;
      }
      const DeviceTensor &w = im.constants[size_t(wi)].dev;
      const DeviceTensor &scale = im.constants[size_t(si)].dev;
      const DeviceTensor *zp = zi >= 0 ? &im.constants[size_t(zi)].dev : nullptr;
      if (!w.defined() || !scale.defined() || scale.dtype != DType::kF32 ||
          (zp && !zp->defined())) {
        usable = false;
        break;
      }
      StatusOr<W4Dequant> d = w4Dequant(w, scale, zp, group);
      if (!d) // the step's own run says what is wrong
        return Status(d.status().code(), plan->path() + ": " + d.status().message());
      order.push_back(*d);
    }
    if (usable && order.size() >= 2) {
      // Without streams and events (an old driver) each weight is
      // dequantised when its GEMM runs, as with the prefetcher off.
      StatusOr<std::unique_ptr<W4Prefetcher>> w4 =
          W4Prefetcher::create(*im.gpu, options.dtype, std::move(order));
      if (w4)
        im.w4 = std::move(*w4);
      else if (w4.status().code() != StatusCode::kUnavailable)
        return Status(w4.status().code(), plan->path() + ": " + w4.status().message());
    }
  }

  // A view's bytes are its root's: the root lives until its views' last
  // reader (by the index of the executor's own steps).
  std::vector<int> lastUse(size_t(n), -1);
  for (int i = 0, mineIndex = 0; i < s.steps_size(); ++i) {
    if (!mine(s.steps(i)))
      continue;
    for (int32_t in : s.steps(i).inputs())
      if (in >= 0)
        lastUse[size_t(plan->rootOf(in))] = mineIndex;
    ++mineIndex;
  }

  GpuPrepareContext pctx;
  pctx.gpu = im.gpu.get();
  pctx.dtype = options.dtype;
  pctx.numLayers = plan->stageLayers(stage);
  pctx.tpRank = rank;
  pctx.ppStage = stage;
  pctx.planKernels = im.planKernels.get();
  pctx.fp8OuterScalesMinRows = options.tuning.fp8OuterScalesMinRows;
  pctx.decodeKeyParallel = options.tuning.decodeKeyParallel;
  pctx.decodeKpVariant = options.tuning.decodeKpVariant;
  pctx.w4Unroll = options.tuning.w4Unroll;
  pctx.moeMma = options.tuning.moeMma;
  pctx.moeGemvMaxTokens = options.tuning.moeGemvMaxTokens;
  for (int i = 0; i < s.steps_size(); ++i) {
    const pb::Step &step = s.steps(i);
    if (!mine(step))
      continue;
    if (step.kind() == pb::PP_TRANSFER)
      (step.stage() == stage ? im.incoming : im.outgoing).push_back(step.outputs(0));
    GpuExecutorImpl::Prepared p;
    p.op = plan::stepKindName(step.kind()) + (step.kind() == pb::ONNX ? " " + step.onnx_op() : "");
    p.what = "step " + std::to_string(i) + " (" + p.op +
             (step.location().empty() ? "" : " at '" + step.location() + "'") + ")";
    StatusOr<GpuKernel> k = prepareGpuStep(*plan, step, pctx);
    if (!k)
      return Status(k.status().code(), plan->path() + ": " + p.what + ": " + k.status().message());
    p.kernel = std::move(*k);
    p.inputs.assign(step.inputs().begin(), step.inputs().end());
    p.outputs.assign(step.outputs().begin(), step.outputs().end());
    im.steps.push_back(std::move(p));
  }
  const int32_t logitsRoot = plan->rootOf(s.logits());
  for (int32_t id = 0; id < n; ++id)
    if (lastUse[size_t(id)] >= 0 && s.values(id).placement() == pb::Value::ARENA &&
        id != logitsRoot)
      im.steps[size_t(lastUse[size_t(id)])].freeAfter.push_back(id);
  // Where each arena value lives (the arena itself is allocated at the first
  // step, for the executor's largest step).
  im.placement.resize(size_t(n));
  uint64_t planFloat = 4;
  for (int32_t id = 0; id < n; ++id) {
    const pb::Value &v = s.values(id);
    if (v.placement() != pb::Value::ARENA)
      continue;
    const DType dt = *dtypeFromName(v.dtype());
    uint64_t bytes = dtypeSize(dt);
    for (int64_t d : v.shape())
      bytes *= uint64_t(d == -1 ? 1 : d);
    im.placement[size_t(id)] = {int(v.region()), v.arena_offset(), bytes};
    if (isFloat(dt))
      planFloat = std::min<uint64_t>(planFloat, dtypeSize(dt));
  }
  im.arenaScale = std::max<uint64_t>(1, (dtypeSize(options.dtype) + planFloat - 1) / planFloat);
  // Graph steps check token ids on the host against the table of the
  // embedding that reads them (directly or through views; not, say, GPT-2's
  // position table). Without one, the kernel's own guard (zeros) remains.
  for (const pb::Step &step : s.steps()) {
    if (step.kind() != pb::EMBEDDING || step.inputs_size() < 2 || step.inputs(0) < 0 ||
        step.inputs(1) < 0 || plan->rootOf(step.inputs(1)) != s.token_ids() ||
        im.constants[size_t(step.inputs(0))].host.rank() != 2)
      continue;
    int64_t rows = im.constants[size_t(step.inputs(0))].host.dim(0), real = 0;
    for (const pb::Attribute &a : step.attributes()) {
      if (a.name() == "vocab_shards" && a.i() > 1)
        rows *= a.i(); // this rank's block of a vocabulary-parallel table
      if (a.name() == "vocab_size" && a.i() > 0)
        real = a.i(); // a padded vocabulary's real size
    }
    if (real > 0)
      rows = std::min(rows, real);
    im.vocab = im.vocab ? std::min(im.vocab, rows) : rows;
  }
  const int64_t planMax = meta.model().max_position();
  im.maxModelLen = options.maxModelLen > 0 ? options.maxModelLen : planMax > 0 ? planMax : 2048;
  im.weightsBytes = int64_t(im.gpu->bytesReserved());
  im.stage = stage;
  im.rank = rank;
  im.returnsLogits = stage == pp - 1;
  im.plan = std::move(plan);
  im.profile = env().gpuProfile;
  return ex;
}

void GpuExecutorImpl::printProfile() const {
  std::vector<std::pair<std::string, ProfileRow>> rows(profileRows.begin(), profileRows.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto &a, const auto &b) { return a.second.ms > b.second.ms; });
  double total = 0;
  for (const auto &r : rows)
    total += r.second.ms;
  std::fprintf(stderr, "accel: GPU step profile (ACCEL_GPU_PROFILE, synchronised per step): "
                       "%.3f ms in all\n%-36s %10s %12s %10s %6s\n",
               total, "op", "calls", "total ms", "mean us", "share");
  for (const auto &[op, r] : rows)
    std::fprintf(stderr, "%-56s %10lld %12.3f %10.1f %5.1f%%\n", op.c_str(), (long long)r.calls,
                 r.ms, 1e3 * r.ms / double(std::max<int64_t>(r.calls, 1)),
                 total > 0 ? 100 * r.ms / total : 0.0);
}

GpuExecutor::~GpuExecutor() {
  if (impl_ && impl_->gpu) {
    (void)impl_->gpu->makeCurrent();
    (void)impl_->gpu->synchronize();
    for (auto &[first, second] : impl_->partEvents) {
      impl_->gpu->api().cuEventDestroy(first);
      impl_->gpu->api().cuEventDestroy(second);
    }
    if (impl_->profile && !impl_->profileRows.empty())
      impl_->printProfile();
  }
}

namespace {

/// Reads element i of an i32 or i64 host tensor.
int64_t intAt(const Tensor &t, int64_t i) {
  return t.dtype() == DType::kI32 ? int64_t(t.data<int32_t>()[i]) : t.data<int64_t>()[i];
}

} // namespace

GpuRunState GpuExecutorImpl::baseState() {
  GpuRunState st;
  st.gpu = gpu.get();
  st.blas = blas.get();
  st.dtype = options.dtype;
  st.fallbacks = &fallbacks;
  st.logFallbacks = options.logFallbacks;
  st.comm = comm;
  st.p2p = p2p;
  st.p2pRank = rank;
  st.decodeSplit = options.tuning.decodeSplit;
  st.flashPrefill = options.tuning.flashPrefill;
  st.splitTargetBlocks = 2 * int64_t(gpu->info().multiprocessors);
  st.pipeline = pipeline;
  st.w4 = w4.get();
  return st;
}

std::pair<int64_t, int64_t> GpuExecutorImpl::arenaUnits() const {
  // The largest step: a prefill of --max-num-batched-tokens, or a decode
  // batch of as many sequences as CUDA graphs take (--max-num-seqs).
  const int64_t seqs = std::max<int64_t>(1, options.graphMaxBatch);
  return {std::max<int64_t>(options.maxNumBatchedTokens, seqs), seqs};
}

Status GpuExecutorImpl::ensureArena() {
  if (arena)
    return Status::ok();
  const pb::Arena &a = plan->schedule().arena();
  std::tie(arenaTokens, arenaSeqs) = arenaUnits();
  const uint64_t bytes = arenaScale * (a.fixed_bytes() + a.bytes_per_token() * uint64_t(arenaTokens) +
                                       a.bytes_per_seq() * uint64_t(arenaSeqs));
  ACCEL_RT_ASSIGN_OR_RETURN(arena, gpu->allocateExact(std::max<uint64_t>(bytes, 256)));
  return Status::ok();
}

void GpuExecutorImpl::armSlots(GpuRunState &st, const Prepared &p) const {
  st.slots.clear();
  if (!arena || !st.meta || st.meta->numTokens > arenaTokens || st.meta->numSeqs > arenaSeqs)
    return;
  const pb::Arena &a = plan->schedule().arena();
  const uint64_t tokensBase = arenaScale * a.fixed_bytes();
  const uint64_t seqsBase = tokensBase + arenaScale * a.bytes_per_token() * uint64_t(arenaTokens);
  for (int32_t id : p.outputs) {
    GpuRunState::Slot slot;
    if (id >= 0) {
      const Placement &pl = placement[size_t(plan->rootOf(id))];
      uint64_t base = 0, units = 1;
      if (pl.region == pb::Value::FIXED) {
        base = 0;
      } else if (pl.region == pb::Value::TOKENS) {
        base = tokensBase;
        units = uint64_t(arenaTokens);
      } else if (pl.region == pb::Value::SEQS) {
        base = seqsBase;
        units = uint64_t(arenaSeqs);
      }
      if (pl.region >= 0) {
        slot.mem = arena;
        slot.ptr = arena->ptr + gpu::CuDevicePtr(base + arenaScale * pl.offset * units);
        slot.bytes = size_t(arenaScale * pl.bytesPerUnit * units);
      }
    }
    st.slots.push_back(std::move(slot));
  }
}

StatusOr<GpuValue> GpuExecutorImpl::runSchedule(GpuRunState &st, GpuValue tokens) {
  const pb::Schedule &s = plan->schedule();
  ACCEL_RT_RETURN_IF_ERROR(ensureArena());
  // Values by id; a view's bytes are held by its root (PlanFile::rootOf) and
  // read with the view's own shape.
  std::vector<GpuValue> values = constants;
  values[size_t(s.token_ids())] = std::move(tokens);
  if (s.positions() >= 0) {
    // A CUDA-graph step has its positions on the device already.
    const DType d = *dtypeFromName(s.values(s.positions()).dtype());
    GpuValue &pos = values[size_t(s.positions())];
    if (d == DType::kI64 && st.positionsI64.defined()) {
      pos.dev = st.positionsI64;
    } else if (d == DType::kI32 && st.positionsI32.defined()) {
      pos.dev = st.positionsI32;
    } else {
      pos.host = st.meta->positions.astype(d);
      if (!pos.host.defined() && st.meta->numTokens != 0)
        return Status(StatusCode::kResourceExhausted, "cannot allocate the positions");
    }
  }
  std::vector<GpuValue> viewed;
  auto read = [&](int32_t id) -> StatusOr<GpuValue *> {
    const int32_t root = plan->rootOf(id);
    GpuValue &v = values[size_t(root)];
    if (id == root || !v.defined())
      return &v;
    GpuValue w;
    if (v.dev.defined()) {
      std::optional<Shape> shape = plan->shapeFor(id, v.dev.numElements());
      if (!shape)
        return Status(StatusCode::kInternal,
                      "value " + std::to_string(id) + " cannot view " + v.dev.describe());
      w.dev = v.dev;
      w.dev.shape = *shape;
    }
    if (v.host.defined()) {
      std::optional<Shape> shape = plan->shapeFor(id, v.host.numElements());
      if (!shape)
        return Status(StatusCode::kInternal,
                      "value " + std::to_string(id) + " cannot view " + v.host.describe());
      ACCEL_RT_ASSIGN_OR_RETURN(w.host, v.host.reshaped(*shape));
    }
    viewed.push_back(std::move(w));
    return &viewed.back();
  };
  std::vector<GpuValue *> inputs;
  std::vector<GpuValue> outputs;
  using Clock = std::chrono::steady_clock;
  for (Prepared &p : steps) {
    Clock::time_point began;
    if (profile) {
      ACCEL_RT_RETURN_IF_ERROR(gpu->synchronize());
      began = Clock::now();
    }
    inputs.clear();
    viewed.clear();
    viewed.reserve(p.inputs.size());
    for (int32_t in : p.inputs) {
      if (in < 0) {
        inputs.push_back(nullptr);
        continue;
      }
      StatusOr<GpuValue *> v = read(in);
      if (!v)
        return Status(v.status().code(), p.what + ": " + v.status().message());
      inputs.push_back((*v)->defined() ? *v : nullptr);
    }
    outputs.clear();
    armSlots(st, p);
    Status stt = p.kernel(st, inputs, outputs);
    st.slots.clear();
    if (!stt.isOk())
      return Status(stt.code(), p.what + ": " + stt.message());
    if (outputs.size() != p.outputs.size())
      return Status(StatusCode::kInternal, p.what + ": the kernel returned " +
                                               std::to_string(outputs.size()) +
                                               " results, the plan expects " +
                                               std::to_string(p.outputs.size()));
    for (size_t i = 0; i < outputs.size(); ++i)
      if (p.outputs[i] >= 0)
        values[size_t(plan->rootOf(p.outputs[i]))] = std::move(outputs[i]);
    for (int32_t id : p.freeAfter)
      values[size_t(id)] = GpuValue();
    if (profile) {
      ACCEL_RT_RETURN_IF_ERROR(gpu->synchronize());
      std::string key = p.op;
      if (!p.outputs.empty() && p.outputs[0] >= 0) {
        const GpuValue &o = values[size_t(plan->rootOf(p.outputs[0]))];
        key += " " + shapeToString(o.dev.defined() ? o.dev.shape : o.host.shape());
      }
      ProfileRow &row = profileRows[key];
      ++row.calls;
      row.ms += std::chrono::duration<double, std::milli>(Clock::now() - began).count();
    }
  }
  if (!returnsLogits)
    return GpuValue(); // a pipeline stage before the last: its values left by transfer
  ACCEL_RT_ASSIGN_OR_RETURN(GpuValue * logits, read(s.logits()));
  return GpuValue(*logits);
}

StatusOr<Tensor> GpuExecutorImpl::runEager(const Tensor &tokenIds, GpuRunState &st,
                                           const kv::StepMetadata &meta) {
  // The step's metadata, i32 on the device.
  struct {
    const Tensor *t;
    DeviceTensor *d;
  } md[] = {{&meta.queryStartLoc, &st.queryStartLoc},
            {&meta.seqLens, &st.seqLens},
            {&meta.blockTables, &st.blockTables},
            {&meta.slotMapping, &st.slotMapping}};
  for (auto &m : md) {
    GpuValue v;
    v.host = m.t->dtype() == DType::kI32 ? *m.t : m.t->astype(DType::kI32);
    ACCEL_RT_ASSIGN_OR_RETURN(*m.d, st.toDevice(v));
  }
  st.logitsRowEnds = DeviceTensor();
  if (meta.logitsRowEnds.defined()) { // several logits rows per sequence
    GpuValue v;
    v.host = meta.logitsRowEnds.dtype() == DType::kI32 ? meta.logitsRowEnds
                                                       : meta.logitsRowEnds.astype(DType::kI32);
    ACCEL_RT_ASSIGN_OR_RETURN(st.logitsRowEnds, st.toDevice(v));
  }
  GpuValue tokens;
  tokens.host = tokenIds.dtype() == tokenDType ? tokenIds : tokenIds.astype(tokenDType);
  ACCEL_RT_ASSIGN_OR_RETURN(GpuValue logits, runSchedule(st, std::move(tokens)));
  if (!returnsLogits)
    return Tensor(); // its work stays enqueued (TpGpuExecutor synchronises)
  // Greedy steps whose logits are one device row per sequence: pick there.
  const DeviceTensor &d = logits.dev;
  if (meta.greedy && d.defined() && d.rank() >= 2 &&
      d.numElements() == meta.numLogitsRows() * d.dim(-1)) {
    StatusOr<Tensor> ids =
        greedyTokensOnDevice(*gpu, d.ptr, d.dtype, meta.numLogitsRows(), d.dim(-1));
    if (ids)
      ACCEL_RT_RETURN_IF_ERROR(gpu->synchronize());
    return ids;
  }
  ACCEL_RT_ASSIGN_OR_RETURN(Tensor out, st.toHost(logits));
  if (out.dtype() != DType::kF32)
    out = out.toF32();
  // Any error of an asynchronous launch surfaces here at the latest.
  ACCEL_RT_RETURN_IF_ERROR(gpu->synchronize());
  return out;
}

bool GpuExecutorImpl::graphsWanted() const {
  return options.cudaGraphs && options.graphMaxBatch >= 1 && !profile && env().gpuGraphs;
}

DecodeGraphs *GpuExecutorImpl::decodeGraphs() {
  if (!graphsWanted())
    return nullptr;
  const int64_t bs = std::max<int64_t>(kvConfig.blockSize, 1);
  const int64_t width = (maxModelLen + bs - 1) / bs;
  if (!graphs || graphs->tableWidth() != width)
    graphs = std::make_unique<DecodeGraphs>(*gpu, options.graphMaxBatch, width, tokenDType);
  return graphs.get();
}

DecodeGraphs::Schedule GpuExecutorImpl::graphSchedule() {
  return [this](GpuRunState &st, const DeviceTensor &tokens) -> StatusOr<DeviceTensor> {
    GpuValue t;
    t.dev = tokens;
    ACCEL_RT_ASSIGN_OR_RETURN(GpuValue logits, runSchedule(st, std::move(t)));
    if (!returnsLogits)
      return DeviceTensor();
    if (!logits.dev.defined())
      return Status(StatusCode::kUnimplemented,
                    "the logits of a decode step are made on the host");
    return logits.dev;
  };
}

void GpuExecutor::setCommunicator(comm::NcclRank *comm, gpu::P2pAllReduce *p2p) {
  if ((impl_->comm != comm || impl_->p2p != p2p) && impl_->graphs)
    impl_->graphs->clear();
  impl_->comm = comm;
  impl_->p2p = p2p;
}

gpu::GpuContext &GpuExecutor::context() { return *impl_->gpu; }

Status GpuExecutor::makeCurrent() { return impl_->gpu->makeCurrent(); }

StatusOr<Tensor> GpuExecutor::run(const Tensor &tokenIds, kv::BlockPool &pool,
                                  const kv::StepMetadata &meta) {
  return impl_->runStep(tokenIds, pool, meta, nullptr);
}

StatusOr<Tensor> GpuExecutor::run(const Tensor &tokenIds, kv::BlockPool &pool,
                                  const kv::StepMetadata &meta,
                                  const std::vector<kv::BlockCopy> &copies) {
  return impl_->runStep(tokenIds, pool, meta, &copies);
}

StatusOr<Tensor> GpuExecutorImpl::runStep(const Tensor &tokenIds, kv::BlockPool &pool,
                                          const kv::StepMetadata &meta,
                                          const std::vector<kv::BlockCopy> *copies, int part) {
  GpuExecutorImpl &im = *this;
  ACCEL_RT_RETURN_IF_ERROR(kv::checkStepTokenIds(tokenIds, meta));
  for (const Tensor *t : {&meta.queryStartLoc, &meta.seqLens, &meta.blockTables,
                          &meta.slotMapping, &meta.positions})
    if (!t->defined() || (t->dtype() != DType::kI32 && t->dtype() != DType::kI64))
      return Status(StatusCode::kInvalidArgument,
                    "the step's metadata (query_start_loc, seq_lens, block_tables, slot_mapping, "
                    "positions) must be i32 or i64 tensors");
  if (meta.queryStartLoc.numElements() != meta.numSeqs + 1 ||
      meta.seqLens.numElements() != meta.numSeqs || meta.blockTables.rank() != 2 ||
      meta.blockTables.dim(0) != meta.numSeqs ||
      meta.slotMapping.numElements() != meta.numTokens ||
      meta.positions.numElements() != meta.numTokens)
    return Status(StatusCode::kInvalidArgument, "the step's metadata does not hold together");
  ACCEL_RT_RETURN_IF_ERROR(im.gpu->makeCurrent());

  GpuRunState st = im.baseState();
  st.meta = &meta;
  st.ppPart = part;
  ACCEL_RT_RETURN_IF_ERROR(im.ensureKvPool(im.stageGeometry(pool.config()), st));
  ACCEL_RT_RETURN_IF_ERROR(
      im.applyBlockCopies(copies ? *copies : pool.takePendingCopies()));

  // The block tables must stay inside the device pool (the kernels do not
  // check): every block a sequence uses, O(blocks used).
  const int64_t width = meta.blockTables.dim(1), bs = pool.config().blockSize;
  int64_t widest = 0;
  for (int64_t i = 0; i < meta.numSeqs; ++i) {
    const int64_t len = intAt(meta.seqLens, i);
    st.maxSeqLen = std::max(st.maxSeqLen, len);
    const int64_t blocks = (len + bs - 1) / bs;
    widest = std::max(widest, blocks);
    if (blocks > width)
      return Status(StatusCode::kInvalidArgument,
                    "sequence " + std::to_string(i) + " needs " + std::to_string(blocks) +
                        " blocks; the block table has " + std::to_string(width) + " columns");
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t id = intAt(meta.blockTables, i * width + b);
      if (id < 0 || id >= pool.config().numBlocks)
        return Status(StatusCode::kInvalidArgument,
                      "sequence " + std::to_string(i) + " lists block " + std::to_string(id) +
                          " outside the pool of " + std::to_string(pool.config().numBlocks));
    }
  }
  for (int64_t t = 0; t < meta.numTokens; ++t)
    if (intAt(meta.slotMapping, t) >= pool.numSlots())
      return Status(StatusCode::kInvalidArgument,
                    "slot " + std::to_string(intAt(meta.slotMapping, t)) +
                        " is outside the KV pool");

  const bool decode = meta.numSeqs > 0 && meta.numTokens == meta.numSeqs;
  if (decode)
    st.split = decodeSplitFor(st.maxSeqLen, st.decodeSplit, meta.numSeqs * st.numKvHeads,
                              st.splitTargetBlocks);
  // A pipeline stage's part: its stream waits for what it receives first,
  // and what it sends is posted once its steps are enqueued.
  ACCEL_RT_RETURN_IF_ERROR(im.awaitIncoming(part));
  if (im.timeParts)
    ACCEL_RT_RETURN_IF_ERROR(im.recordPart(part, /*end=*/false));
  StatusOr<Tensor> out = im.dispatch(tokenIds, st, meta, decode, widest, part);
  if (out && im.timeParts)
    ACCEL_RT_RETURN_IF_ERROR(im.recordPart(part, /*end=*/true));
  if (out)
    ACCEL_RT_RETURN_IF_ERROR(im.postOutgoing(part));
  return out;
}

StatusOr<Tensor> GpuExecutorImpl::dispatch(const Tensor &tokenIds, GpuRunState &st,
                                           const kv::StepMetadata &meta, bool decode,
                                           int64_t widest, int part) {
  GpuExecutorImpl &im = *this;
  if (decode) {
    DecodeGraphs *graphs = im.decodeGraphs();
    if (graphs && graphs->disabledReason().empty() && graphs->bucketFor(meta.numSeqs) != 0 &&
        widest <= graphs->tableWidth()) {
      // Token ids are range-checked here: the graph's embedding reads them
      // on the device only.
      const Tensor ids = tokenIds.dtype() == DType::kI32 || tokenIds.dtype() == DType::kI64
                             ? tokenIds
                             : tokenIds.astype(DType::kI64);
      if (im.vocab > 0)
        for (int64_t t = 0; t < meta.numTokens; ++t) {
          const int64_t id = intAt(ids, t);
          if (id < 0 || id >= im.vocab)
            return Status(StatusCode::kInvalidArgument,
                          "token " + std::to_string(t) + " has id " + std::to_string(id) +
                              ", outside the vocabulary of " + std::to_string(im.vocab) +
                              " entries");
        }
      StatusOr<Tensor> out =
          graphs->run(tokenIds, meta, st.split, st, im.graphSchedule(), part);
      if (out || out.status().code() != StatusCode::kUnimplemented)
        return out;
      if (im.options.logFallbacks)
        std::fprintf(stderr, "accel: GPU backend: CUDA graphs are off for this plan (%s); decode "
                             "steps run eagerly\n",
                     out.status().message().c_str());
    }
  }
  return im.runEager(tokenIds, st, meta);
}

DType GpuExecutor::computeDType() const { return impl_->options.dtype; }
DType GpuExecutor::kvCacheDType() const { return impl_->cacheDType(); }

size_t GpuExecutor::numGraphs() const {
  return impl_->graphs ? impl_->graphs->numGraphs() : 0;
}

std::string GpuExecutor::graphsOffReason() const {
  if (!impl_->options.cudaGraphs)
    return "--enforce-eager";
  if (!impl_->graphsWanted())
    return "ACCEL_GPU_GRAPHS=0";
  return impl_->graphs ? impl_->graphs->disabledReason() : "";
}

std::set<std::string> GpuExecutor::fallbacks() const { return impl_->fallbacks; }

namespace {
/// The device, dtype, libraries and kernels.
std::string describeDevice(const GpuExecutorImpl *impl_) {
  const GpuInfo &g = impl_->gpu->info();
  return g.name + " (sm_" + std::to_string(g.smMajor) + std::to_string(g.smMinor) + ", " +
         std::to_string(g.multiprocessors) + " SMs), " + dtypeName(impl_->options.dtype) +
         ", cuBLASLt from " + impl_->blas->path() +
         (impl_->planKernels->empty()
              ? std::string(", no generated kernels")
              : ", " + std::to_string(impl_->planKernels->size()) + " generated kernels (" +
                    impl_->planKernels->image() + ")");
}

} // namespace

std::string GpuExecutor::describe() const {
  std::string d = describeDevice(impl_.get());
  const std::string off = graphsOffReason();
  if (!off.empty())
    return d + ", decode steps eager (" + off + ")";
  return d + ", CUDA graphs for decode batches up to " +
         std::to_string(impl_->options.graphMaxBatch);
}

std::size_t GpuExecutor::deviceBytes() const { return impl_->gpu->bytesReserved(); }

BackendFactory makeGpuBackend(const GpuExecutorOptions &options) {
  return [options](std::shared_ptr<const plan::PlanFile> plan,
                   std::shared_ptr<comm::Communicator> processGroup)
             -> StatusOr<std::unique_ptr<Backend>> {
    if (processGroup)
      return makeGpuProcessRank(std::move(plan), options, std::move(processGroup));
    if (plan->tpSize() > 1 || plan->ppSize() > 1) {
      ACCEL_RT_ASSIGN_OR_RETURN(std::unique_ptr<TpGpuExecutor> tp,
                                TpGpuExecutor::create(std::move(plan), options));
      return std::unique_ptr<Backend>(std::move(tp));
    }
    ACCEL_RT_ASSIGN_OR_RETURN(std::unique_ptr<GpuExecutor> ex,
                              GpuExecutor::create(std::move(plan), options));
    return std::unique_ptr<Backend>(std::move(ex));
  };
}

} // namespace accel::rt::engine
