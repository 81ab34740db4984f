//===- GpuExecutor.cpp - run a plan's schedule on an NVIDIA GPU ------------===//
#include "runtime/engine/GpuExecutor.h"

#include "runtime/engine/GpuSteps.h"
#include "runtime/kernels/KernelImage.h"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace accel::rt::engine {

namespace pb = accel::plan;

struct GpuExecutorImpl {
  struct Prepared {
    GpuKernel kernel;
    std::vector<int32_t> inputs;
    std::vector<int32_t> outputs;
    std::vector<int32_t> freeAfter; // values whose last reader is this step
    std::string what;               // "step 12 (launch rms_norm at 'node')"
  };

  std::shared_ptr<const plan::PlanFile> plan;
  GpuExecutorOptions options;
  std::unique_ptr<gpu::GpuContext> gpu;
  std::unique_ptr<gpu::CublasLt> blas;
  std::vector<Prepared> steps;
  std::vector<GpuValue> constants; // by value id; undefined for non-constants
  DType tokenDType = DType::kI64;
  // The device KV pool mirroring the host pool's geometry.
  kv::KVCacheConfig kvConfig;
  DeviceTensor kvStorage;
  std::vector<DeviceTensor> keys, values;
  std::set<std::string> fallbacks;

  Status ensureKvPool(const kv::KVCacheConfig &c, GpuRunState &st);
};

Status GpuExecutorImpl::ensureKvPool(const kv::KVCacheConfig &c, GpuRunState &st) {
  const auto &want = plan->metadata().kv_cache();
  if (c.numLayers < want.num_layers() || c.numKvHeads != want.num_kv_heads() ||
      c.headDim != want.head_dim())
    return Status(StatusCode::kInvalidArgument,
                  "the KV pool (" + std::to_string(c.numLayers) + " layers, " +
                      std::to_string(c.numKvHeads) + " KV heads of " + std::to_string(c.headDim) +
                      ") does not match the plan's cache (" + std::to_string(want.num_layers()) +
                      " layers, " + std::to_string(want.num_kv_heads()) + " KV heads of " +
                      std::to_string(want.head_dim()) + ")");
  if (c.dtype == DType::kF8E4M3FN || c.dtype == DType::kF8E5M2)
    return Status(StatusCode::kUnimplemented,
                  "the GPU backend has no FP8 KV cache yet; its cache is in the compute dtype");
  const bool same = kvStorage.defined() && c.numLayers == kvConfig.numLayers &&
                    c.numKvHeads == kvConfig.numKvHeads && c.headDim == kvConfig.headDim &&
                    c.blockSize == kvConfig.blockSize && c.numBlocks == kvConfig.numBlocks;
  if (!same) {
    keys.clear();
    values.clear();
    kvStorage = DeviceTensor();
    const int64_t perLayer = c.numBlocks * c.blockSize * c.numKvHeads * c.headDim;
    ACCEL_RT_ASSIGN_OR_RETURN(kvStorage, st.empty(options.dtype, {2 * c.numLayers * perLayer}));
    ACCEL_RT_RETURN_IF_ERROR(gpu->zero(kvStorage.ptr, kvStorage.byteSize()));
    const size_t layerBytes = size_t(perLayer) * dtypeSize(options.dtype);
    for (int64_t l = 0; l < c.numLayers; ++l)
      for (int which = 0; which < 2; ++which) {
        DeviceTensor t = kvStorage;
        t.ptr = kvStorage.ptr + gpu::CuDevicePtr((2 * l + which) * layerBytes);
        t.shape = {c.numBlocks, c.blockSize, c.numKvHeads, c.headDim};
        (which ? values : keys).push_back(t);
      }
    kvConfig = c;
  }
  st.keys = &keys;
  st.values = &values;
  st.blockSize = c.blockSize;
  st.numKvHeads = c.numKvHeads;
  st.headDim = c.headDim;
  return Status::ok();
}

StatusOr<std::unique_ptr<GpuExecutor>>
GpuExecutor::create(std::shared_ptr<const plan::PlanFile> plan, const GpuExecutorOptions &options) {
  if (options.dtype != DType::kF32 && options.dtype != DType::kBF16 &&
      options.dtype != DType::kF16)
    return Status(StatusCode::kInvalidArgument,
                  std::string("the GPU backend computes in f32, bf16 or f16, not ") +
                      dtypeName(options.dtype));
  const auto &meta = plan->metadata();
  if (meta.tp_size() != 1)
    return Status(StatusCode::kUnimplemented,
                  plan->path() + ": the plan is partitioned for " + std::to_string(meta.tp_size()) +
                      " ranks; the GPU backend runs one");
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

  const pb::Schedule &s = plan->schedule();
  const int32_t n = s.values_size();
  im.tokenDType = *dtypeFromName(s.values(s.token_ids()).dtype());

  // Constants: host views of the mapped plan; those a device step reads are
  // uploaded once, in the dtype that step wants.
  im.constants.resize(size_t(n));
  std::map<int32_t, std::optional<DType>> deviceType; // constant -> dtype to upload
  for (const pb::Step &step : s.steps())
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
  GpuRunState up;
  up.gpu = im.gpu.get();
  up.dtype = options.dtype;
  for (int32_t id = 0; id < n; ++id) {
    if (!s.values(id).is_constant())
      continue;
    im.constants[size_t(id)].host = plan->constant(id);
    auto it = deviceType.find(id);
    if (it == deviceType.end())
      continue;
    std::optional<DType> want = it->second;
    if (!isFloat(im.constants[size_t(id)].host.dtype()))
      want = std::nullopt;
    ACCEL_RT_RETURN_IF_ERROR(up.toDevice(im.constants[size_t(id)], want).status());
  }
  ACCEL_RT_RETURN_IF_ERROR(im.gpu->synchronize());

  std::vector<int> lastUse(size_t(n), -1);
  for (int i = 0; i < s.steps_size(); ++i)
    for (int32_t in : s.steps(i).inputs())
      if (in >= 0)
        lastUse[size_t(in)] = i;

  GpuPrepareContext pctx;
  pctx.gpu = im.gpu.get();
  pctx.dtype = options.dtype;
  pctx.numLayers = meta.kv_cache().num_layers();
  for (int i = 0; i < s.steps_size(); ++i) {
    const pb::Step &step = s.steps(i);
    GpuExecutorImpl::Prepared p;
    p.what = "step " + std::to_string(i) + " (" + step.kind() + " " + step.op() +
             (step.location().empty() ? "" : " at '" + step.location() + "'") + ")";
    StatusOr<GpuKernel> k = prepareGpuStep(*plan, step, pctx);
    if (!k)
      return Status(k.status().code(), plan->path() + ": " + p.what + ": " + k.status().message());
    p.kernel = std::move(*k);
    p.inputs.assign(step.inputs().begin(), step.inputs().end());
    p.outputs.assign(step.outputs().begin(), step.outputs().end());
    im.steps.push_back(std::move(p));
  }
  for (int32_t id = 0; id < n; ++id)
    if (lastUse[size_t(id)] >= 0 && !s.values(id).is_constant() && id != s.logits())
      im.steps[size_t(lastUse[size_t(id)])].freeAfter.push_back(id);
  im.plan = std::move(plan);
  return ex;
}

GpuExecutor::~GpuExecutor() {
  if (impl_ && impl_->gpu) {
    (void)impl_->gpu->makeCurrent();
    (void)impl_->gpu->synchronize();
  }
}

StatusOr<Tensor> GpuExecutor::run(const Tensor &tokenIds, kv::BlockPool &pool,
                                  const kv::StepMetadata &meta) {
  GpuExecutorImpl &im = *impl_;
  const pb::Schedule &s = im.plan->schedule();
  if (tokenIds.rank() != 1 || !isInteger(tokenIds.dtype()))
    return Status(StatusCode::kInvalidArgument,
                  "the token ids must be a rank-1 integer tensor, got " + tokenIds.describe());
  if (tokenIds.dim(0) != meta.numTokens)
    return Status(StatusCode::kInvalidArgument,
                  "the step has " + std::to_string(meta.numTokens) + " tokens but " +
                      std::to_string(tokenIds.dim(0)) + " token ids");
  ACCEL_RT_RETURN_IF_ERROR(im.gpu->makeCurrent());

  GpuRunState st;
  st.gpu = im.gpu.get();
  st.blas = im.blas.get();
  st.dtype = im.options.dtype;
  st.meta = &meta;
  st.fallbacks = &im.fallbacks;
  st.logFallbacks = im.options.logFallbacks;
  if (const char *e = std::getenv("ACCEL_GPU_DECODE_SPLIT"); e && *e)
    st.decodeSplit = std::max<int64_t>(0, std::atoll(e));
  ACCEL_RT_RETURN_IF_ERROR(im.ensureKvPool(pool.config(), st));

  // The step's metadata, i32 on the device.
  struct {
    const Tensor *t;
    DeviceTensor *d;
    const char *name;
  } md[] = {{&meta.queryStartLoc, &st.queryStartLoc, "query_start_loc"},
            {&meta.seqLens, &st.seqLens, "seq_lens"},
            {&meta.blockTables, &st.blockTables, "block_tables"},
            {&meta.slotMapping, &st.slotMapping, "slot_mapping"}};
  for (auto &m : md) {
    if (!m.t->defined() || !isInteger(m.t->dtype()))
      return Status(StatusCode::kInvalidArgument,
                    std::string("the step's ") + m.name + " is missing or not integer");
    GpuValue v;
    v.host = m.t->dtype() == DType::kI32 ? *m.t : m.t->astype(DType::kI32);
    ACCEL_RT_ASSIGN_OR_RETURN(*m.d, st.toDevice(v));
  }
  if (st.queryStartLoc.numElements() != meta.numSeqs + 1 ||
      st.seqLens.numElements() != meta.numSeqs || st.blockTables.rank() != 2 ||
      st.blockTables.dim(0) != meta.numSeqs || st.slotMapping.numElements() != meta.numTokens)
    return Status(StatusCode::kInvalidArgument, "the step's metadata does not hold together");
  for (int64_t len : meta.seqLens.toInt64s())
    st.maxSeqLen = std::max(st.maxSeqLen, len);
  // The block tables must stay inside the device pool (the kernels do not
  // check): every listed block of every sequence.
  {
    const std::vector<int64_t> table = meta.blockTables.toInt64s();
    const std::vector<int64_t> lens = meta.seqLens.toInt64s();
    const int64_t width = meta.blockTables.dim(1), bs = pool.config().blockSize;
    for (int64_t i = 0; i < meta.numSeqs; ++i) {
      const int64_t blocks = (lens[size_t(i)] + bs - 1) / bs;
      if (blocks > width)
        return Status(StatusCode::kInvalidArgument,
                      "sequence " + std::to_string(i) + " needs " + std::to_string(blocks) +
                          " blocks; the block table has " + std::to_string(width) + " columns");
      for (int64_t b = 0; b < blocks; ++b) {
        const int64_t id = table[size_t(i * width + b)];
        if (id < 0 || id >= pool.config().numBlocks)
          return Status(StatusCode::kInvalidArgument,
                        "sequence " + std::to_string(i) + " lists block " + std::to_string(id) +
                            " outside the pool of " + std::to_string(pool.config().numBlocks));
      }
    }
    for (int64_t slot : meta.slotMapping.toInt64s())
      if (slot >= pool.numSlots())
        return Status(StatusCode::kInvalidArgument,
                      "slot " + std::to_string(slot) + " is outside the KV pool");
  }

  std::vector<GpuValue> values = im.constants;
  values[size_t(s.token_ids())].host =
      tokenIds.dtype() == im.tokenDType ? tokenIds : tokenIds.astype(im.tokenDType);

  std::vector<GpuValue *> inputs;
  std::vector<GpuValue> outputs;
  for (GpuExecutorImpl::Prepared &p : im.steps) {
    inputs.clear();
    for (int32_t in : p.inputs)
      inputs.push_back(in < 0 ? nullptr : &values[size_t(in)]);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i] && !inputs[i]->defined())
        inputs[i] = nullptr;
    outputs.clear();
    Status stt = p.kernel(st, inputs, outputs);
    if (!stt.isOk())
      return Status(stt.code(), p.what + ": " + stt.message());
    if (outputs.size() != p.outputs.size())
      return Status(StatusCode::kInternal, p.what + ": the kernel returned " +
                                               std::to_string(outputs.size()) +
                                               " results, the plan expects " +
                                               std::to_string(p.outputs.size()));
    for (size_t i = 0; i < outputs.size(); ++i)
      if (p.outputs[i] >= 0)
        values[size_t(p.outputs[i])] = std::move(outputs[i]);
    for (int32_t id : p.freeAfter)
      values[size_t(id)] = GpuValue();
  }
  GpuValue &logits = values[size_t(s.logits())];
  ACCEL_RT_ASSIGN_OR_RETURN(Tensor out, st.toHost(logits));
  if (out.dtype() != DType::kF32)
    out = out.toF32();
  // Any error of an asynchronous launch surfaces here at the latest.
  ACCEL_RT_RETURN_IF_ERROR(im.gpu->synchronize());
  return out;
}

std::set<std::string> GpuExecutor::fallbacks() const { return impl_->fallbacks; }

std::string GpuExecutor::describe() const {
  const GpuInfo &g = impl_->gpu->info();
  return g.name + " (sm_" + std::to_string(g.smMajor) + std::to_string(g.smMinor) + ", " +
         std::to_string(g.multiprocessors) + " SMs), " + dtypeName(impl_->options.dtype) +
         ", cuBLASLt from " + impl_->blas->path();
}

std::size_t GpuExecutor::deviceBytes() const { return impl_->gpu->bytesReserved(); }

GpuBackend makeGpuBackend(const GpuExecutorOptions &options) {
  return [options](std::shared_ptr<const plan::PlanFile> plan) -> StatusOr<StepRunner> {
    ACCEL_RT_ASSIGN_OR_RETURN(std::unique_ptr<GpuExecutor> ex,
                              GpuExecutor::create(std::move(plan), options));
    std::shared_ptr<GpuExecutor> shared = std::move(ex);
    return StepRunner([shared](const Tensor &ids, kv::BlockPool &pool,
                               const kv::StepMetadata &meta) { return shared->run(ids, pool, meta); });
  };
}

} // namespace accel::rt::engine
