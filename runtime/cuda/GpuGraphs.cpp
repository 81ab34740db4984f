//===- GpuGraphs.cpp - decode steps replayed from CUDA graphs --------------===//
#include "runtime/cuda/GpuGraphs.h"

#include <algorithm>
#include <cstring>

namespace accel::rt::engine {

namespace {

Status notCapturable(const std::string &why) {
  return Status(StatusCode::kUnimplemented, why);
}

size_t alignUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

/// Element i of a host integer tensor (i32 or i64; others converted once).
struct IntReader {
  Tensor t;
  explicit IntReader(const Tensor &src)
      : t(src.dtype() == DType::kI32 || src.dtype() == DType::kI64 ? src
                                                                    : src.astype(DType::kI64)) {}
  int64_t operator[](int64_t i) const {
    return t.dtype() == DType::kI32 ? int64_t(t.data<int32_t>()[i]) : t.data<int64_t>()[i];
  }
};

} // namespace

DecodeGraphs::DecodeGraphs(gpu::GpuContext &gpu, int64_t maxBatch, int64_t tableWidth,
                           DType tokenDType)
    : gpu_(gpu), buckets_(graphBatchBuckets(maxBatch)), maxBatch_(maxBatch),
      tableWidth_(std::max<int64_t>(tableWidth, 1)), tokenDType_(tokenDType),
      pool_(std::make_shared<gpu::DevicePool>(&gpu.api())) {
  const size_t m = size_t(std::max<int64_t>(maxBatch, 1));
  size_t off = 0;
  auto put = [&](size_t bytes) {
    const size_t at = off;
    off = alignUp(off + bytes, 16);
    return at;
  };
  layout_.tokens = put(m * 8);
  layout_.pos64 = put(m * 8);
  layout_.pos32 = put(m * 4);
  layout_.qsl = put((m + 1) * 4);
  layout_.lens = put(m * 4);
  layout_.slots = put(m * 4);
  layout_.split = put(4);
  layout_.tables = alignUp(off, 256);
  layout_.scratch = layout_.tables + m * size_t(tableWidth_) * 4;
  layout_.bytes = layout_.scratch + m * size_t(tableWidth_) * 4;
  if (tokenDType != DType::kI64 && tokenDType != DType::kI32)
    disabled_ = std::string("the plan's token ids are ") + dtypeName(tokenDType) +
                ", not i32 or i64";
}

DecodeGraphs::~DecodeGraphs() { clear(); }

void DecodeGraphs::clear() {
  for (auto &[key, g] : graphs_)
    gpu_.destroyGraph(g.exec);
  graphs_.clear();
}

void DecodeGraphs::disable(const std::string &why) {
  if (disabled_.empty())
    disabled_ = why;
  clear();
}

Status DecodeGraphs::ensureInputs() {
  if (inputs_)
    return Status::ok();
  ACCEL_RT_ASSIGN_OR_RETURN(inputs_, gpu_.allocate(layout_.bytes));
  staging_.assign(layout_.tables, 0);
  // Zero block tables: a padded row's table is never read, but keep every
  // entry a valid block id anyway.
  return gpu_.zero(inputs_->ptr, layout_.bytes);
}

Status DecodeGraphs::upload(const Tensor &tokenIds, const kv::StepMetadata &meta, int64_t bucket,
                            int64_t splitSize) {
  const int64_t b = meta.numSeqs;
  unsigned char *h = staging_.data();
  auto at = [h](size_t off) { return h + off; };
  IntReader ids(tokenIds), pos(meta.positions), qsl(meta.queryStartLoc), lens(meta.seqLens),
      slots(meta.slotMapping);
  int64_t *tok64 = reinterpret_cast<int64_t *>(at(layout_.tokens));
  int32_t *tok32 = reinterpret_cast<int32_t *>(at(layout_.tokens));
  int64_t *p64 = reinterpret_cast<int64_t *>(at(layout_.pos64));
  int32_t *p32 = reinterpret_cast<int32_t *>(at(layout_.pos32));
  int32_t *q = reinterpret_cast<int32_t *>(at(layout_.qsl));
  int32_t *l = reinterpret_cast<int32_t *>(at(layout_.lens));
  int32_t *s = reinterpret_cast<int32_t *>(at(layout_.slots));
  for (int64_t i = 0; i < bucket; ++i) {
    const bool real = i < b;
    const int64_t id = real ? ids[i] : 0, p = real ? pos[i] : 0;
    if (tokenDType_ == DType::kI64)
      tok64[i] = id;
    else
      tok32[i] = int32_t(id);
    p64[i] = p;
    p32[i] = int32_t(p);
    q[i] = int32_t(real ? qsl[i] : i);
    l[i] = int32_t(real ? lens[i] : 0);
    s[i] = int32_t(real ? slots[i] : -1);
  }
  q[bucket] = int32_t(bucket);
  *reinterpret_cast<int32_t *>(at(layout_.split)) = int32_t(splitSize);
  ACCEL_RT_RETURN_IF_ERROR(gpu_.upload(inputs_->ptr, h, layout_.tables));
  // The rows of the block tables, as the step has them ([b, width]
  // contiguous: one host copy), then on the device into the graph's
  // [bucket, tableWidth] rows (only the columns the step has).
  Tensor tables = meta.blockTables.dtype() == DType::kI32 ? meta.blockTables
                                                          : meta.blockTables.astype(DType::kI32);
  const int64_t width = tables.rank() == 2 ? tables.dim(1) : 0;
  const int64_t cols = std::min(width, tableWidth_);
  if (width > tableWidth_)
    return gpu_.upload2D(inputs_->ptr + layout_.tables, size_t(tableWidth_) * 4,
                         tables.rawData(), size_t(width) * 4, size_t(cols) * 4, size_t(b));
  ACCEL_RT_RETURN_IF_ERROR(
      gpu_.upload(inputs_->ptr + layout_.scratch, tables.rawData(), size_t(b * width) * 4));
  return gpu_.copy2D(inputs_->ptr + layout_.tables, size_t(tableWidth_) * 4,
                     inputs_->ptr + layout_.scratch, size_t(width) * 4, size_t(cols) * 4,
                     size_t(b));
}

GpuRunState DecodeGraphs::graphState(const GpuRunState &base, int64_t bucket, DecodeSplit split,
                                     kv::StepMetadata &meta, DeviceTensor &tokens) const {
  GpuRunState st = base;
  meta = kv::StepMetadata();
  meta.numSeqs = meta.numTokens = bucket;
  meta.maxBlocksPerSeq = tableWidth_;
  st.meta = &meta;
  auto view = [&](size_t off, DType dt, Shape shape) {
    DeviceTensor t;
    t.mem = inputs_;
    t.ptr = inputs_->ptr + gpu::CuDevicePtr(off);
    t.dtype = dt;
    t.shape = std::move(shape);
    return t;
  };
  st.queryStartLoc = view(layout_.qsl, DType::kI32, {bucket + 1});
  st.seqLens = view(layout_.lens, DType::kI32, {bucket});
  st.slotMapping = view(layout_.slots, DType::kI32, {bucket});
  st.blockTables = view(layout_.tables, DType::kI32, {bucket, tableWidth_});
  st.positionsI64 = view(layout_.pos64, DType::kI64, {bucket});
  st.positionsI32 = view(layout_.pos32, DType::kI32, {bucket});
  st.split = split;
  st.splitSizeDev = split.numSplits > 1 ? inputs_->ptr + gpu::CuDevicePtr(layout_.split) : 0;
  tokens = view(layout_.tokens, tokenDType_, {bucket});
  return st;
}

StatusOr<DecodeGraphs::Graph> DecodeGraphs::capture(const GpuRunState &st,
                                                    const DeviceTensor &tokens,
                                                    const Schedule &schedule) {
  // Warm-up, eagerly and outside the pool: cuBLASLt chooses its algorithms
  // for these shapes and steps upload what they make once.
  {
    GpuRunState wst = st;
    StatusOr<DeviceTensor> warm = schedule(wst, tokens);
    if (!warm)
      return notCapturable("the eager warm-up of a decode step failed: " + warm.status().message());
  }
  Graph g;
  gpu_.setPool(pool_);
  if (Status s = gpu_.beginCapture(); !s.isOk()) {
    gpu_.setPool(nullptr);
    return notCapturable(s.message());
  }
  Status failed = Status::ok();
  {
    GpuRunState cst = st;
    StatusOr<DeviceTensor> out = schedule(cst, tokens);
    if (out && !out->defined()) {
      g.noOutput = true;
    } else if (out) {
      g.logits = out->ptr;
      g.logitsType = out->dtype;
      g.logitsShape = out->shape;
    } else {
      failed = out.status();
    }
  } // every activation of the capture goes back to the pool here
  if (!failed.isOk()) {
    gpu_.abortCapture();
    gpu_.setPool(nullptr);
    return notCapturable("a decode step cannot be captured: " + failed.message());
  }
  StatusOr<gpu::CuGraphExec> exec = gpu_.endCapture();
  gpu_.setPool(nullptr);
  if (!exec)
    return notCapturable("a decode step cannot be captured: " + exec.status().message());
  g.exec = *exec;
  if (pool_->liveBlocks() != 0) {
    gpu_.destroyGraph(g.exec);
    return notCapturable("a step keeps device memory from one decode step to the next");
  }
  return g;
}

StatusOr<Tensor> DecodeGraphs::run(const Tensor &tokenIds, const kv::StepMetadata &meta,
                                   DecodeSplit split, const GpuRunState &base,
                                   const Schedule &schedule, int variant) {
  if (!disabled_.empty())
    return notCapturable(disabled_);
  const int64_t b = meta.numSeqs, bucket = bucketFor(b);
  if (bucket == 0 || meta.numTokens != b)
    return notCapturable("not a decode step within the graph buckets");
  ACCEL_RT_RETURN_IF_ERROR(ensureInputs());
  ACCEL_RT_RETURN_IF_ERROR(upload(tokenIds, meta, bucket, split.splitSize));
  kv::StepMetadata graphMeta;
  DeviceTensor tokens;
  GpuRunState st = graphState(base, bucket, split, graphMeta, tokens);
  const std::tuple<int64_t, int, int> key{bucket, split.numSplits, variant};
  auto it = graphs_.find(key);
  if (it == graphs_.end()) {
    StatusOr<Graph> g = capture(st, tokens, schedule);
    if (!g) {
      disable(g.status().message());
      return g.status();
    }
    it = graphs_.emplace(key, *g).first;
  }
  const Graph &g = it->second;
  if (g.noOutput) {
    ACCEL_RT_RETURN_IF_ERROR(gpu_.launchGraph(g.exec));
    return Tensor();
  }
  const Shape &shape = g.logitsShape;
  const int64_t vocab = shape.empty() ? 0 : shape.back();
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  const bool rank3 = shape.size() == 3 && shape[0] == 1;
  if (vocab <= 0 || n != bucket * vocab || !(shape.size() == 2 || rank3)) {
    disable("the plan's logits " + shapeToString(shape) + " are not one row per sequence");
    return notCapturable(disabled_);
  }
  ACCEL_RT_RETURN_IF_ERROR(gpu_.launchGraph(g.exec));
  if (meta.greedy) // the real rows come first
    return greedyTokensOnDevice(gpu_, g.logits, g.logitsType, b, vocab);
  Shape outShape = rank3 ? Shape{1, b, vocab} : Shape{b, vocab};
  ACCEL_RT_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate(g.logitsType, outShape));
  ACCEL_RT_RETURN_IF_ERROR(gpu_.download(out.rawData(), g.logits, out.byteSize()));
  return out.dtype() == DType::kF32 ? out : out.toF32();
}

Status DecodeGraphs::reservePool(int64_t maxSeqLen, const GpuRunState &base,
                                 const Schedule &schedule) {
  if (!disabled_.empty() || buckets_.empty())
    return Status::ok();
  const int64_t bucket = buckets_.back();
  maxSeqLen = std::max<int64_t>(maxSeqLen, 1);
  ACCEL_RT_RETURN_IF_ERROR(ensureInputs());
  const DecodeSplit split = decodeSplitFor(maxSeqLen, base.decodeSplit,
                                           bucket * base.numKvHeads, base.splitTargetBlocks);
  // Every row: the last token of a context of maxSeqLen keys, all in block
  // 0, written nowhere.
  unsigned char *h = staging_.data();
  for (int64_t i = 0; i < bucket; ++i) {
    if (tokenDType_ == DType::kI64)
      reinterpret_cast<int64_t *>(h + layout_.tokens)[i] = 0;
    else
      reinterpret_cast<int32_t *>(h + layout_.tokens)[i] = 0;
    reinterpret_cast<int64_t *>(h + layout_.pos64)[i] = maxSeqLen - 1;
    reinterpret_cast<int32_t *>(h + layout_.pos32)[i] = int32_t(maxSeqLen - 1);
    reinterpret_cast<int32_t *>(h + layout_.qsl)[i] = int32_t(i);
    reinterpret_cast<int32_t *>(h + layout_.lens)[i] = int32_t(maxSeqLen);
    reinterpret_cast<int32_t *>(h + layout_.slots)[i] = -1;
  }
  reinterpret_cast<int32_t *>(h + layout_.qsl)[bucket] = int32_t(bucket);
  *reinterpret_cast<int32_t *>(h + layout_.split) = int32_t(split.splitSize);
  ACCEL_RT_RETURN_IF_ERROR(gpu_.upload(inputs_->ptr, h, layout_.tables));
  ACCEL_RT_RETURN_IF_ERROR(
      gpu_.zero(inputs_->ptr + layout_.tables, layout_.scratch - layout_.tables));
  kv::StepMetadata graphMeta;
  DeviceTensor tokens;
  GpuRunState st = graphState(base, bucket, split, graphMeta, tokens);
  gpu_.setPool(pool_);
  Status result = Status::ok();
  {
    StatusOr<DeviceTensor> out = schedule(st, tokens);
    if (!out)
      result = out.status();
  }
  gpu_.setPool(nullptr);
  ACCEL_RT_RETURN_IF_ERROR(gpu_.synchronize());
  if (!result.isOk()) {
    disable("the decode step of " + std::to_string(bucket) +
            " sequences failed while sizing the graph pool: " + result.message());
    return Status::ok();
  }
  if (pool_->liveBlocks() != 0) {
    disable("a step keeps device memory from one decode step to the next");
    return Status::ok();
  }
  const size_t peak = pool_->peakInUse();
  return pool_->reserve(peak + peak / 8 + (size_t(4) << 20));
}

} // namespace accel::rt::engine
