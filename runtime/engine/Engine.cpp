//===- Engine.cpp - a loaded plan, its KV cache and its executor -----------===//
#include "runtime/engine/Engine.h"

#include "runtime/comm/SocketGroup.h"
#include "runtime/cpu/TpCpuExecutor.h"
#include "runtime/kv/SequenceKV.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace accel::rt::engine {

namespace {

// What a leading rank 0 sends the other ranks (Engine::follow): a header
// i64 [kind, ...], then for a step the token ids, the five metadata tensors,
// the KV block copies i64 [copies, 2] and the logits row ends (empty: none).
constexpr int64_t kStep = 1, kResize = 2, kStop = 3;

Tensor header(std::initializer_list<int64_t> values) {
  Tensor t = *Tensor::allocate(DType::kI64, {int64_t(values.size())});
  std::copy(values.begin(), values.end(), t.data<int64_t>());
  return t;
}

/// An undefined tensor travels as i32 [0].
Tensor orEmpty(const Tensor &t) {
  return t.defined() ? t : *Tensor::allocate(DType::kI32, {0});
}

StatusOr<std::vector<Tensor>> stepMessage(const Tensor &ids, const kv::StepMetadata &m,
                                          const std::vector<kv::BlockCopy> &copies) {
  ACCEL_RT_ASSIGN_OR_RETURN(Tensor pairs, Tensor::allocate(DType::kI64, {int64_t(copies.size()), 2}));
  for (size_t i = 0; i < copies.size(); ++i) {
    pairs.data<int64_t>()[2 * i] = int64_t(copies[i].src);
    pairs.data<int64_t>()[2 * i + 1] = int64_t(copies[i].dst);
  }
  return std::vector<Tensor>{header({kStep, m.numSeqs, m.numTokens, m.maxBlocksPerSeq,
                                     m.lastRowsOnly, m.greedy}),
                             ids,
                             orEmpty(m.queryStartLoc),
                             orEmpty(m.seqLens),
                             orEmpty(m.positions),
                             orEmpty(m.slotMapping),
                             orEmpty(m.blockTables),
                             pairs,
                             orEmpty(m.logitsRowEnds)};
}

/// One tensor-parallel rank of a CPU plan in this process (--tp-rank):
/// its collectives go to the group of processes, which stops everywhere
/// when this rank's step fails.
class CpuRank final : public Backend {
public:
  CpuRank(std::unique_ptr<CpuExecutor> ex, std::shared_ptr<comm::Communicator> group)
      : ex_(std::move(ex)), group_(std::move(group)) {}
  StatusOr<Tensor> run(const Tensor &ids, kv::BlockPool &pool,
                       const kv::StepMetadata &m) override {
    StatusOr<Tensor> out = ex_->run(ids, pool, m, group_.get(), nullptr);
    if (!out)
      group_->abort(out.status()); // the other processes stop too
    return out;
  }

private:
  std::unique_ptr<CpuExecutor> ex_;
  std::shared_ptr<comm::Communicator> group_;
};

/// Rank 0 of a group of serving processes (tpServing): before each step it
/// sends the other ranks the step (Engine::follow), then runs its own.
class LeadingRank final : public Backend {
public:
  LeadingRank(std::unique_ptr<Backend> local, std::shared_ptr<comm::Communicator> group)
      : local_(std::move(local)), group_(std::move(group)) {}
  StatusOr<Tensor> run(const Tensor &ids, kv::BlockPool &pool,
                       const kv::StepMetadata &m) override {
    std::vector<kv::BlockCopy> copies = pool.takePendingCopies();
    // A device pool applies its copies in the step: back in its queue.
    if (pool.storage() == kv::KvStorage::kDevice)
      for (const kv::BlockCopy &c : copies)
        ACCEL_RT_RETURN_IF_ERROR(pool.copyBlock(c.src, c.dst));
    ACCEL_RT_ASSIGN_OR_RETURN(std::vector<Tensor> message, stepMessage(ids, m, copies));
    ACCEL_RT_RETURN_IF_ERROR(comm::broadcastFromRankZero(*group_, message).status());
    return local_->run(ids, pool, m);
  }
  KvCacheHome kvCacheHome() const override { return local_->kvCacheHome(); }
  StatusOr<int64_t> sizeKvCache(const kv::KVCacheConfig &g) override {
    return local_->sizeKvCache(g);
  }
  std::string describe() const override { return local_->describe(); }

private:
  std::unique_ptr<Backend> local_;
  std::shared_ptr<comm::Communicator> group_;
};

} // namespace

StatusOr<std::unique_ptr<Engine>> Engine::open(const std::string &planPath,
                                               const EngineOptions &options) {
  ACCEL_RT_ASSIGN_OR_RETURN(std::shared_ptr<const plan::PlanFile> plan,
                            plan::PlanFile::open(planPath, options.load));
  return create(std::move(plan), options);
}

StatusOr<std::unique_ptr<Engine>> Engine::create(std::shared_ptr<const plan::PlanFile> plan,
                                                 const EngineOptions &options) {
  const auto &meta = plan->metadata();
  const bool cpu = meta.target() == "cpu";
  if (!cpu && !options.gpuBackend)
    return Status(StatusCode::kUnavailable,
                  plan->path() + ": the plan was built for " + meta.target() +
                      " and this build of accel has only the CPU backend (recompile with "
                      "-target=cpu)");
  // Tensor-parallel and pipelined plans run on the CPU as threads
  // (TpCpuExecutor); on GPUs as one executor per rank and stage, through
  // the GPU backend (TpGpuExecutor).
  const bool partitioned = meta.tp_size() != 1 || plan->ppSize() != 1;
  // One rank per process.
  const bool oneRank = options.tpRank >= 0;
  if (oneRank) {
    if (meta.tp_size() < 2 || plan->ppSize() != 1)
      return Status(StatusCode::kInvalidArgument,
                    plan->path() + ": --tp-rank needs a plan partitioned for tensor parallelism "
                                   "(accelc -tp=N, no -pp); this one has tp " +
                        std::to_string(meta.tp_size()) + " and pp " +
                        std::to_string(plan->ppSize()));
    if (options.tpRank >= meta.tp_size())
      return Status(StatusCode::kInvalidArgument,
                    "--tp-rank " + std::to_string(options.tpRank) + " is not a rank of " +
                        plan->path() + ", which has " + std::to_string(meta.tp_size()));
    if (options.tpMaster.empty())
      return Status(StatusCode::kInvalidArgument,
                    "--tp-rank needs --tp-master HOST:PORT (rank 0's address)");
  }
  std::unique_ptr<Engine> e(new Engine());
  e->vocab_ = meta.model().vocab_size();
  if (e->vocab_ <= 0)
    return Status(StatusCode::kDataLoss, plan->path() + ": the plan does not say its vocabulary size");
  int64_t planMax = meta.model().max_position();
  if (options.maxModelLen < 0)
    return Status(StatusCode::kInvalidArgument, "--max-model-len must be positive");
  e->maxModelLen_ = options.maxModelLen ? options.maxModelLen : planMax ? planMax : 2048;
  if (planMax && e->maxModelLen_ > planMax)
    return Status(StatusCode::kInvalidArgument,
                  "--max-model-len " + std::to_string(e->maxModelLen_) +
                      " is longer than the model's " + std::to_string(planMax) + " positions");

  const auto &kvc = meta.kv_cache();
  kv::KVCacheConfig config;
  config.numLayers = std::max<int64_t>(kvc.num_layers(), 1);
  config.numKvHeads = std::max<int64_t>(kvc.num_kv_heads(), 1);
  config.headDim = std::max<int64_t>(kvc.head_dim(), 1);
  config.blockSize = kvc.block_size() > 0 ? kvc.block_size() : 16;
  std::optional<DType> dt = dtypeFromName(kvc.dtype().empty() ? "f32" : kvc.dtype());
  if (!dt)
    return Status(StatusCode::kDataLoss,
                  plan->path() + ": unknown KV cache element type '" + kvc.dtype() + "'");
  config.dtype = *dt;
  if (options.numKvBlocks < 0 || options.kvCacheBytes < 0)
    return Status(StatusCode::kInvalidArgument,
                  "the KV cache size (blocks or bytes) must not be negative");
  if (options.numKvBlocks > 0) {
    config.numBlocks = options.numKvBlocks;
  } else if (options.kvCacheBytes > 0) {
    config.numBlocks = config.blocksForBytes(options.kvCacheBytes);
    if (config.numBlocks < 1)
      return Status(StatusCode::kInvalidArgument,
                    "a KV cache of " + std::to_string(options.kvCacheBytes) +
                        " bytes holds no block of " +
                        std::to_string(config.bytesPerBlock()) + " bytes");
  } else {
    config.numBlocks = (e->maxModelLen_ + config.blockSize - 1) / config.blockSize;
  }
  // One process per rank: the group of processes meets first (its
  // collectives on the CPU; a GPU rank hands out NCCL's id through it).
  std::shared_ptr<comm::Communicator> processGroup;
  if (oneRank) {
    comm::SocketGroupOptions g;
    g.rank = options.tpRank;
    g.size = int(meta.tp_size());
    g.master = options.tpMaster;
    // The plan and what sizes the KV cache: every rank must hand out the
    // same blocks to the same steps.
    g.fingerprint = "a plan of " + std::to_string(plan->fileSize()) + " bytes for " +
                    std::to_string(meta.tp_size()) + " ranks (vocab " +
                    std::to_string(e->vocab_) + ", target " + meta.target() +
                    ") with --max-model-len " + std::to_string(e->maxModelLen_) +
                    (options.numKvBlocks > 0
                         ? ", --num-kv-blocks " + std::to_string(options.numKvBlocks)
                     : options.kvCacheBytes > 0
                         ? ", --kv-cache-memory " + std::to_string(options.kvCacheBytes)
                         : std::string()) +
                    (options.tpServing ? ", serving" : "");
    g.timeoutSeconds = options.tpTimeoutSeconds;
    ACCEL_RT_ASSIGN_OR_RETURN(processGroup, comm::joinSocketGroup(g));
  }
  // The backend: the GPU's (which may keep the KV cache on the device and
  // size it, --gpu-memory-utilization), or a CPU executor.
  std::unique_ptr<Backend> backend;
  if (!cpu) {
    ACCEL_RT_ASSIGN_OR_RETURN(backend, options.gpuBackend(plan, processGroup));
  } else if (oneRank) {
    // This rank's executor over its weights section; the engine's pool
    // holds its KV shard (the plan's kv_cache is one rank's).
    ACCEL_RT_ASSIGN_OR_RETURN(std::unique_ptr<CpuExecutor> ex,
                              CpuExecutor::create(plan, options.tpRank));
    backend = std::make_unique<CpuRank>(std::move(ex), processGroup);
  } else if (partitioned) {
    // Every rank and stage as threads, each with its KV shard: the engine's
    // pool only allocates blocks and queues their copies.
    TpCpuExecutorOptions tpo;
    tpo.microBatches = options.ppMicroBatches;
    ACCEL_RT_ASSIGN_OR_RETURN(backend, TpCpuExecutor::create(plan, tpo));
  } else {
    ACCEL_RT_ASSIGN_OR_RETURN(backend, CpuExecutor::create(plan));
  }
  const Backend::KvCacheHome home = backend->kvCacheHome();
  if (home.ownMemory) {
    e->kvStorage_ = kv::KvStorage::kDevice;
    if (home.dtype)
      config.dtype = *home.dtype;
    if (options.kvCacheBytes > 0 && options.numKvBlocks <= 0)
      config.numBlocks = std::max<int64_t>(1, config.blocksForBytes(options.kvCacheBytes));
  }
  if (options.numKvBlocks <= 0 && options.kvCacheBytes <= 0) {
    ACCEL_RT_ASSIGN_OR_RETURN(int64_t blocks, backend->sizeKvCache(config));
    if (blocks > 0) {
      config.numBlocks = blocks;
      e->kvSizedByBackend_ = true;
    }
  }
  ACCEL_RT_ASSIGN_OR_RETURN(e->pool_, kv::BlockPool::create(config, e->kvStorage_));
  if (oneRank) {
    e->group_ = processGroup;
    e->serving_ = options.tpServing;
    if (options.tpServing && options.tpRank == 0) {
      e->lead_ = true;
      e->pool_->recordHostCopies(e->pool_->storage() == kv::KvStorage::kHost);
      backend = std::make_unique<LeadingRank>(std::move(backend), processGroup);
    }
  }
  e->backend_ = std::move(backend);
  e->plan_ = std::move(plan);
  return e;
}

StatusOr<Tensor> Engine::step(kv::SequenceKV &seq, const int64_t *ids, int64_t n) {
  ACCEL_RT_ASSIGN_OR_RETURN(kv::StepMetadata meta, kv::prepareStep(*pool_, {{&seq, n}}));
  ACCEL_RT_ASSIGN_OR_RETURN(Tensor tokens, Tensor::allocate(DType::kI64, {n}));
  std::memcpy(tokens.rawData(), ids, size_t(n) * sizeof(int64_t));
  ACCEL_RT_ASSIGN_OR_RETURN(Tensor out, backend_->run(tokens, *pool_, meta));
  // [n, vocab], or [1, n, vocab] when the graph kept its batch dimension.
  int64_t rows = out.rank() == 2 ? out.dim(0) : out.rank() == 3 && out.dim(0) == 1 ? out.dim(1) : -1;
  if (rows != n || out.dim(-1) != vocab_)
    return Status(StatusCode::kInternal, "the plan returned logits " + out.describe() +
                                             " for a step of " + std::to_string(n) +
                                             " tokens and a vocabulary of " + std::to_string(vocab_));
  return out.dtype() == DType::kF32 ? out : out.toF32();
}

int64_t Engine::kvBlocksForBytes(int64_t bytes) const {
  return pool_->config().blocksForBytes(bytes);
}

Status Engine::resizeKvCache(int64_t numBlocks) {
  if (lead_) { // the other ranks' shards take the same size first
    ACCEL_RT_RETURN_IF_ERROR(
        comm::broadcastFromRankZero(*group_, {header({kResize, numBlocks})}).status());
    Status s = resizeLocal(numBlocks);
    pool_->recordHostCopies(pool_->storage() == kv::KvStorage::kHost);
    return s;
  }
  return resizeLocal(numBlocks);
}

Status Engine::resizeLocal(int64_t numBlocks) {
  if (numBlocks < 1)
    return Status(StatusCode::kInvalidArgument,
                  "the KV cache needs at least one block, got " + std::to_string(numBlocks));
  if (pool_->allocator().numUsed() != 0)
    return Status(StatusCode::kInvalidArgument,
                  "cannot resize the KV cache while " +
                      std::to_string(pool_->allocator().numUsed()) + " blocks are in use");
  if (numBlocks == pool_->numBlocks())
    return Status::ok();
  kv::KVCacheConfig config = pool_->config();
  const int64_t oldBlocks = config.numBlocks;
  config.numBlocks = numBlocks;
  // Free the old storage first: two large pools may not fit at once.
  pool_.reset();
  StatusOr<std::unique_ptr<kv::BlockPool>> p = kv::BlockPool::create(config, kvStorage_);
  if (p) {
    pool_ = std::move(*p);
    return Status::ok();
  }
  // Keep a usable pool: the old size, else a single block.
  for (int64_t fallback : {oldBlocks, int64_t(1)}) {
    config.numBlocks = fallback;
    StatusOr<std::unique_ptr<kv::BlockPool>> q = kv::BlockPool::create(config, kvStorage_);
    if (q) {
      pool_ = std::move(*q);
      break;
    }
  }
  return p.status();
}

Status Engine::follow() {
  if (!group_ || !serving_ || group_->rank() == 0)
    return Status(StatusCode::kInvalidArgument,
                  "follow() is for the ranks other than 0 of a group that serves");
  const std::string from = "rank " + std::to_string(group_->rank()) + ": ";
  for (;;) {
    ACCEL_RT_ASSIGN_OR_RETURN(std::vector<Tensor> m, comm::broadcastFromRankZero(*group_, {}));
    if (m.empty() || m[0].dtype() != DType::kI64 || m[0].numElements() < 1)
      return Status(StatusCode::kInternal, from + "rank 0 sent a message without a header");
    const int64_t *h = m[0].data<int64_t>();
    const int64_t kind = h[0];
    if (kind == kStop)
      return Status::ok();
    if (kind == kResize && m[0].numElements() == 2) {
      ACCEL_RT_RETURN_IF_ERROR(resizeLocal(h[1]));
      continue;
    }
    if (kind != kStep || m[0].numElements() != 6 || m.size() != 9 ||
        m[7].dtype() != DType::kI64 || m[7].rank() != 2)
      return Status(StatusCode::kInternal, from + "rank 0 sent a message of kind " +
                                               std::to_string(kind) + " this rank cannot read");
    kv::StepMetadata meta;
    meta.numSeqs = h[1];
    meta.numTokens = h[2];
    meta.maxBlocksPerSeq = h[3];
    meta.lastRowsOnly = h[4] != 0;
    meta.greedy = h[5] != 0;
    meta.queryStartLoc = m[2];
    meta.seqLens = m[3];
    meta.positions = m[4];
    meta.slotMapping = m[5];
    meta.blockTables = m[6];
    if (m[8].numElements() > 0)
      meta.logitsRowEnds = m[8];
    const int64_t *pairs = m[7].data<int64_t>();
    for (int64_t i = 0; i < m[7].dim(0); ++i)
      ACCEL_RT_RETURN_IF_ERROR(
          pool_->copyBlock(kv::BlockId(pairs[2 * i]), kv::BlockId(pairs[2 * i + 1])));
    StatusOr<Tensor> out = backend_->run(m[1], *pool_, meta);
    if (!out)
      return Status(out.status().code(), from + out.status().message());
  }
}

Engine::~Engine() {
  if (lead_ && group_)
    (void)comm::broadcastFromRankZero(*group_, {header({kStop})});
}

int64_t greedyToken(const float *row, int64_t vocab) {
  int64_t best = -1;
  float top = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < vocab; ++i) {
    const float x = row[i];
    if (std::isnan(x) || x == std::numeric_limits<float>::infinity())
      return -1;
    if (x > top) {
      top = x;
      best = i;
    }
  }
  return best;
}

StatusOr<Tensor> Engine::stepBatch(const std::vector<BatchSequence> &batch, LogitsRows rows) {
  if (batch.empty())
    return Status(StatusCode::kInvalidArgument, "a step needs at least one sequence");
  std::vector<kv::StepSequence> steps;
  std::vector<int64_t> before;
  int64_t total = 0, wanted = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    const BatchSequence &b = batch[i];
    if (!b.seq || !b.ids || b.numTokens < 1)
      return Status(StatusCode::kInvalidArgument,
                    "batch sequence " + std::to_string(i) + " brings no tokens");
    if (b.seq->numTokens() + b.numTokens > maxModelLen_)
      return Status(StatusCode::kInvalidArgument,
                    "batch sequence " + std::to_string(i) + " would grow to " +
                        std::to_string(b.seq->numTokens() + b.numTokens) +
                        " tokens, more than the context of " + std::to_string(maxModelLen_) +
                        " (--max-model-len)");
    for (int64_t t = 0; t < b.numTokens; ++t)
      if (b.ids[t] < 0 || b.ids[t] >= vocab_)
        return Status(StatusCode::kInvalidArgument,
                      "batch sequence " + std::to_string(i) + ": token " + std::to_string(t) +
                          " is " + std::to_string(b.ids[t]) + ", outside the vocabulary [0, " +
                          std::to_string(vocab_) + ")");
    if (b.logitsRows < 1 || b.logitsRows > b.numTokens)
      return Status(StatusCode::kInvalidArgument,
                    "batch sequence " + std::to_string(i) + " asks for " +
                        std::to_string(b.logitsRows) + " logits rows of its " +
                        std::to_string(b.numTokens) + " tokens");
    steps.push_back({b.seq, b.numTokens});
    before.push_back(b.seq->numTokens());
    total += b.numTokens;
    wanted += b.logitsRows;
  }
  ACCEL_RT_ASSIGN_OR_RETURN(kv::StepMetadata meta, kv::prepareStep(*pool_, steps));
  const bool greedy = rows == LogitsRows::kLastGreedy;
  meta.lastRowsOnly = rows == LogitsRows::kLast || greedy;
  meta.greedy = greedy;
  const int64_t nseq = int64_t(batch.size());
  if (meta.lastRowsOnly && wanted != nseq) {
    // Several rows of some sequence (speculative verification): their ends
    // in query_start_loc's form, which the LM head gathers by.
    StatusOr<Tensor> ends = Tensor::allocate(DType::kI32, {wanted + 1});
    if (!ends) {
      for (size_t i = 0; i < batch.size(); ++i)
        (void)batch[i].seq->truncate(*pool_, before[i]);
      return ends.status();
    }
    int32_t *e = ends->data<int32_t>();
    int64_t end = 0, j = 0;
    e[j++] = 0;
    for (const BatchSequence &b : batch) {
      end += b.numTokens;
      for (int64_t r = b.logitsRows - 1; r >= 0; --r)
        e[j++] = int32_t(end - r);
    }
    meta.logitsRowEnds = std::move(*ends);
  }
  auto rollback = [&](Status s) -> Status {
    for (size_t i = 0; i < batch.size(); ++i)
      (void)batch[i].seq->truncate(*pool_, before[i]);
    return s;
  };
  StatusOr<Tensor> tokens = Tensor::allocate(DType::kI64, {total});
  if (!tokens)
    return rollback(tokens.status());
  int64_t *dst = tokens->data<int64_t>();
  for (const BatchSequence &b : batch) {
    std::memcpy(dst, b.ids, size_t(b.numTokens) * sizeof(int64_t));
    dst += b.numTokens;
  }
  StatusOr<Tensor> out = backend_->run(*tokens, *pool_, meta);
  if (!out)
    return rollback(out.status());
  // The backend picked the greedy tokens itself: i64 [wanted rows].
  if (greedy && isInteger(out->dtype())) {
    if (out->numElements() != wanted)
      return rollback(Status(StatusCode::kInternal,
                             "the backend returned " + out->describe() + " as the greedy tokens of " +
                                 std::to_string(wanted) + " rows"));
    return out->dtype() == DType::kI64 ? std::move(*out) : out->astype(DType::kI64);
  }
  // [tokens, vocab] (or [1, tokens, vocab] when the graph kept its batch
  // dimension), or [seqs, vocab] when the plan selects each last token.
  int64_t got = out->rank() == 2                           ? out->dim(0)
                : out->rank() == 3 && out->dim(0) == 1 ? out->dim(1)
                                                       : -1;
  const bool perToken = got == total;
  if ((!perToken && got != (meta.lastRowsOnly ? wanted : nseq)) || out->dim(-1) != vocab_)
    return rollback(Status(StatusCode::kInternal,
                           "the plan returned logits " + out->describe() + " for a step of " +
                               std::to_string(total) + " tokens in " + std::to_string(nseq) +
                               " sequences and a vocabulary of " + std::to_string(vocab_)));
  if (!perToken && rows == LogitsRows::kAll)
    return rollback(Status(StatusCode::kUnimplemented,
                           "the plan returns only each sequence's last logits, and the step "
                           "asked for every token's"));
  Tensor f32 = out->dtype() == DType::kF32 ? std::move(*out) : out->toF32();
  if (!f32.defined())
    return rollback(Status(StatusCode::kResourceExhausted, "cannot convert the logits to f32"));
  if (greedy) {
    // The host picks: each sequence's last row(s).
    StatusOr<Tensor> ids = Tensor::allocate(DType::kI64, {wanted});
    if (!ids)
      return rollback(ids.status());
    const float *src = f32.data<float>();
    int64_t end = 0, j = 0;
    for (int64_t i = 0; i < nseq; ++i) {
      const BatchSequence &b = batch[size_t(i)];
      end += perToken ? b.numTokens : b.logitsRows;
      for (int64_t r = b.logitsRows; r >= 1; --r)
        ids->data<int64_t>()[j++] = greedyToken(src + (end - r) * vocab_, vocab_);
    }
    return std::move(*ids);
  }
  if (rows == LogitsRows::kAll || !perToken || total == wanted) {
    if (f32.rank() == 3) {
      StatusOr<Tensor> flat = f32.reshaped({got, vocab_});
      if (!flat)
        return rollback(flat.status());
      return std::move(*flat);
    }
    return f32;
  }
  StatusOr<Tensor> last = Tensor::allocate(DType::kF32, {wanted, vocab_});
  if (!last)
    return rollback(last.status());
  const float *src = f32.data<float>();
  int64_t row = 0, j = 0;
  for (int64_t i = 0; i < nseq; ++i) {
    const BatchSequence &b = batch[size_t(i)];
    row += b.numTokens;
    for (int64_t r = b.logitsRows; r >= 1; --r)
      std::memcpy(last->data<float>() + (j++) * vocab_, src + (row - r) * vocab_,
                  size_t(vocab_) * sizeof(float));
  }
  return std::move(*last);
}

namespace {
Status checkIds(const std::vector<int64_t> &ids, int64_t vocab, int64_t maxLen) {
  if (ids.empty())
    return Status(StatusCode::kInvalidArgument, "the token sequence is empty");
  if (int64_t(ids.size()) > maxLen)
    return Status(StatusCode::kInvalidArgument,
                  "the sequence has " + std::to_string(ids.size()) +
                      " tokens, more than the context of " + std::to_string(maxLen) +
                      " (--max-model-len)");
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= vocab)
      return Status(StatusCode::kInvalidArgument,
                    "token " + std::to_string(i) + " is " + std::to_string(ids[i]) +
                        ", outside the vocabulary [0, " + std::to_string(vocab) + ")");
  return Status::ok();
}
} // namespace

StatusOr<Tensor> Engine::score(const std::vector<int64_t> &ids, int64_t chunk) {
  ACCEL_RT_RETURN_IF_ERROR(checkIds(ids, vocab_, maxModelLen_));
  if (chunk < 0)
    return Status(StatusCode::kInvalidArgument,
                  "the chunk size must be 0 (the whole sequence) or positive, got " +
                      std::to_string(chunk));
  const int64_t len = int64_t(ids.size());
  if (chunk == 0)
    chunk = len;
  ACCEL_RT_ASSIGN_OR_RETURN(Tensor logits, Tensor::allocate(DType::kF32, {len, vocab_}));
  kv::SequenceKV seq;
  Status result = Status::ok();
  for (int64_t start = 0; start < len; start += chunk) {
    int64_t n = std::min(chunk, len - start);
    StatusOr<Tensor> out = step(seq, ids.data() + start, n);
    if (!out) {
      result = Status(out.status().code(),
                      "step at token " + std::to_string(start) + ": " + out.status().message());
      break;
    }
    std::memcpy(logits.data<float>() + start * vocab_, out->rawData(), out->byteSize());
  }
  ACCEL_RT_RETURN_IF_ERROR(seq.release(*pool_));
  ACCEL_RT_RETURN_IF_ERROR(result);
  return logits;
}

StatusOr<std::vector<int64_t>>
Engine::generateWith(const std::vector<int64_t> &prompt, LogitsRows rows,
                     const std::function<StatusOr<int64_t>(const Tensor &)> &choose) {
  ACCEL_RT_RETURN_IF_ERROR(checkIds(prompt, vocab_, maxModelLen_));
  kv::SequenceKV seq;
  std::vector<int64_t> generated;
  Status result = Status::ok();
  // Only the last position's row is computed (the LM head of a long prompt
  // would otherwise cost prompt x vocab x hidden).
  StatusOr<Tensor> out = stepBatch({{&seq, prompt.data(), int64_t(prompt.size())}}, rows);
  while (true) {
    if (!out) {
      result = out.status();
      break;
    }
    StatusOr<int64_t> tok = choose(*out);
    if (!tok) {
      result = tok.status();
      break;
    }
    if (*tok < 0)
      break;
    if (*tok >= vocab_) {
      result = Status(StatusCode::kInternal, "the sampler chose token " + std::to_string(*tok) +
                                                 " outside the vocabulary");
      break;
    }
    generated.push_back(*tok);
    if (int64_t(prompt.size() + generated.size()) >= maxModelLen_)
      break;
    out = stepBatch({{&seq, &generated.back(), 1}}, rows);
  }
  ACCEL_RT_RETURN_IF_ERROR(seq.release(*pool_));
  ACCEL_RT_RETURN_IF_ERROR(result);
  return generated;
}

StatusOr<std::vector<int64_t>> Engine::generate(const std::vector<int64_t> &prompt,
                                                const NextToken &next) {
  return generateWith(prompt, LogitsRows::kLast, [&](const Tensor &logits) {
    return next(logits.data<float>() + (logits.numElements() - vocab_), vocab_);
  });
}

StatusOr<std::vector<int64_t>> Engine::generateGreedy(const std::vector<int64_t> &prompt,
                                                      const AcceptToken &accept) {
  return generateWith(prompt, LogitsRows::kLastGreedy,
                      [&](const Tensor &ids) -> StatusOr<int64_t> {
                        const int64_t token = ids.data<int64_t>()[0];
                        if (token < 0)
                          return Status(StatusCode::kInvalidArgument,
                                        "sampling failed: the logits hold a NaN or +inf, or "
                                        "every logit is -inf");
                        return accept(token);
                      });
}

} // namespace accel::rt::engine
