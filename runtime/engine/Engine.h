//===- Engine.h - a loaded plan, its KV cache and its executor --*- C++ -*-===//
//
// What accel-run and the C API drive: open a plan, then score token
// sequences (logits at every position, fed through the paged KV cache a
// chunk at a time) or generate from a prompt, one sequence at a time; or
// run one step over a ragged batch of sequences (stepBatch), which is what
// the continuous-batching scheduler (runtime/serving/Scheduler.h) drives.
//
// Not thread-safe: one caller at a time (the scheduler serialises its steps).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_ENGINE_ENGINE_H
#define ACCEL_RUNTIME_ENGINE_ENGINE_H

#include "runtime/cpu/CpuExecutor.h"
#include "runtime/engine/Backend.h"

#include <functional>
#include <optional>
#include <memory>
#include <vector>

namespace accel::rt::engine {

struct EngineOptions {
  /// Longest sequence (prompt + generated) the engine accepts; 0: the
  /// plan's max_position, or 2048 when the plan does not know it.
  int64_t maxModelLen = 0;
  /// The paged KV pool: numKvBlocks blocks when positive, else as many as
  /// kvCacheBytes hold when positive, else what the backend sizes (GPU
  /// plans: --gpu-memory-utilization, GpuExecutorOptions), else enough for
  /// one sequence of maxModelLen tokens (what score() and generate() need).
  int64_t numKvBlocks = 0;
  int64_t kvCacheBytes = 0;
  plan::LoadOptions load;
  /// The GPU backend (accel-run passes runtime/cuda/GpuExecutor's
  /// makeGpuBackend); without one, plans for GPU targets are refused in one
  /// sentence.
  BackendFactory gpuBackend;
  /// A tensor-parallel plan run as one process per rank (accel-run
  /// --tp-rank, docs/gpu-backend.md "Several processes"; a GPU plan's rank
  /// runs on GpuExecutorOptions::device and NCCL carries its collectives):
  /// this process is
  /// rank `tpRank` (>= 0; -1: every rank, as threads of this process) of a
  /// group that meets at `tpMaster` ("host:port", rank 0 listens there;
  /// runtime/comm/SocketGroup.h), waiting up to tpTimeoutSeconds for it.
  /// Every rank runs the same steps: the same requests, and greedy or
  /// seeded sampling on the all-gathered logits.
  int tpRank = -1;
  std::string tpMaster;
  double tpTimeoutSeconds = 120.0;
  /// Serving with one process per rank: rank 0 alone takes requests and
  /// leads the other ranks step by step: before each step it sends them the
  /// step (token ids, metadata, KV block copies; KV resizes too), and they
  /// run Engine::follow() instead of requests of their own. Every rank of
  /// the group must say so (the group refuses a mix).
  bool tpServing = false;
  /// A pipelined (-pp) CPU plan: the micro-batches each step is split into
  /// (TpCpuExecutorOptions::microBatches; 0: $ACCEL_PP_MICRO_BATCHES, else
  /// one per stage; 1: no overlap of the stages).
  int ppMicroBatches = 0;
};

/// One sequence of a batched step: `numTokens` new tokens `ids` (a prefill
/// chunk, or one decode token) appended to `seq`.
struct BatchSequence {
  kv::SequenceKV *seq = nullptr;
  const int64_t *ids = nullptr;
  int64_t numTokens = 0;
  /// With LogitsRows::kLast / kLastGreedy: how many of the sequence's last
  /// new tokens' rows come back (1..numTokens). A speculative verification
  /// step (runtime/engine/Speculative.h) reads all K+1 of its rows.
  int64_t logitsRows = 1;
};

/// Which logits rows stepBatch returns.
enum class LogitsRows {
  kAll,  // [total tokens, vocab]: every new token's row, in batch order
  kLast, // [sequences, vocab]: each sequence's last new token (its last
         // BatchSequence::logitsRows tokens: [sum of those, vocab])
  kLastGreedy, // i64 [sequences]: the argmax of each sequence's last row
               // (greedyToken's rule; again logitsRows rows a sequence),
               // picked on the device when the backend can: no logits
               // come back to the host
};

/// The greedy token of one logits row: the argmax, the lowest index on
/// ties; -1 when the row holds a NaN or +inf or every logit is -inf (rows
/// the sampler refuses). The rule of argmax_rows_* on the GPU.
int64_t greedyToken(const float *row, int64_t vocab);

class Engine {
public:
  static StatusOr<std::unique_ptr<Engine>> open(const std::string &planPath,
                                                const EngineOptions &options = {});
  static StatusOr<std::unique_ptr<Engine>> create(std::shared_ptr<const plan::PlanFile> plan,
                                                  const EngineOptions &options = {});

  const plan::PlanFile &plan() const { return *plan_; }
  int64_t maxModelLen() const { return maxModelLen_; }
  int64_t vocabSize() const { return vocab_; }

  /// f32 logits [ids.size(), vocab] of every position of one sequence, fed
  /// `chunk` tokens per step (0: the whole sequence in one step; 1: decode
  /// one token at a time).
  StatusOr<Tensor> score(const std::vector<int64_t> &ids, int64_t chunk = 0);

  /// Generation, one sequence: prefill `prompt`, then call `next` with the
  /// f32 logits row of the last position; it returns the next token, or -1
  /// to stop. Stops by itself at maxModelLen. Returns the generated tokens.
  using NextToken = std::function<StatusOr<int64_t>(const float *logits, int64_t vocab)>;
  StatusOr<std::vector<int64_t>> generate(const std::vector<int64_t> &prompt,
                                          const NextToken &next);
  /// Greedy generation: as generate(), but the engine picks each token
  /// (greedyToken's rule, on the device for GPU plans: no logits reach the
  /// host) and `accept` gets it; it returns the token to continue with, or
  /// -1 to stop. A row greedyToken refuses (NaN, +inf, all -inf) fails with
  /// kInvalidArgument.
  using AcceptToken = std::function<StatusOr<int64_t>(int64_t token)>;
  StatusOr<std::vector<int64_t>> generateGreedy(const std::vector<int64_t> &prompt,
                                                const AcceptToken &accept);

  /// The paged KV cache the steps write (its allocator: free blocks,
  /// reference counts).
  kv::BlockPool &pool() { return *pool_; }
  const kv::BlockPool &pool() const { return *pool_; }
  /// The blocks `bytes` of KV cache hold with this plan's geometry.
  int64_t kvBlocksForBytes(int64_t bytes) const;
  /// The backend sized the KV cache itself (GPU plans without numKvBlocks
  /// or kvCacheBytes): the scheduler keeps that size.
  bool kvCacheSizedByBackend() const { return kvSizedByBackend_; }
  /// One line about the backend (empty for the CPU).
  std::string backendDescription() const { return backend_->describe(); }
  /// A pipelined plan's per-stage busy and idle time so far
  /// (Backend::pipelineStats; any thread); nullopt for other plans.
  std::optional<PipelineStats> pipelineStats() const { return backend_->pipelineStats(); }
  /// Replaces the KV pool by one of `numBlocks` blocks (all free).
  /// kInvalidArgument while any block is in use; kResourceExhausted when
  /// the memory cannot be had (the pool then has its old size again, or a
  /// single block when even that cannot be had).
  Status resizeKvCache(int64_t numBlocks);

  /// One engine step over a ragged batch: reserves KV slots for every
  /// sequence's new tokens (kv::prepareStep: all or nothing,
  /// kResourceExhausted when the pool is short), runs the plan once and
  /// returns f32 logits (see LogitsRows; kLastGreedy: i64 token ids).
  /// Transactional: on any failure no sequence is changed (reserved slots are given back). kInvalidArgument
  /// for ids outside the vocabulary or a sequence growing past
  /// maxModelLen().
  StatusOr<Tensor> stepBatch(const std::vector<BatchSequence> &batch,
                             LogitsRows rows = LogitsRows::kAll);

  /// A rank other than 0 of a group whose rank 0 leads (tpServing): runs every
  /// step rank 0 sends, on this rank's weights and KV shard, until rank 0
  /// says stop (ok) or the group fails (one sentence naming the rank).
  Status follow();

  /// ok, or why the group of processes this engine is a rank of stopped
  /// (a rank left): no step can run any more (the server's /health).
  Status health() const { return group_ ? group_->stopped() : Status::ok(); }

  /// A leading rank 0 tells the others to stop.
  ~Engine();

private:
  Engine() = default;
  /// Runs one step of `n` tokens starting at ids[start] for `seq`; returns
  /// f32 logits of the step's rows.
  StatusOr<Tensor> step(kv::SequenceKV &seq, const int64_t *ids, int64_t n);
  /// The loop of generate() and generateGreedy(): steps `prompt`, then one
  /// token at a time, asking for `rows` (kLast or kLastGreedy); `choose`
  /// turns a step's result into the next token (-1: stop).
  StatusOr<std::vector<int64_t>>
  generateWith(const std::vector<int64_t> &prompt, LogitsRows rows,
               const std::function<StatusOr<int64_t>(const Tensor &)> &choose);
  /// resizeKvCache on this process's pool only.
  Status resizeLocal(int64_t numBlocks);

  std::shared_ptr<const plan::PlanFile> plan_;
  /// The plan's executor(s): every step runs through it.
  std::unique_ptr<Backend> backend_;
  /// One rank per process: the group of processes; lead_: rank 0 sends
  /// every step (tpServing).
  std::shared_ptr<comm::Communicator> group_;
  bool serving_ = false, lead_ = false;
  std::unique_ptr<kv::BlockPool> pool_;
  kv::KvStorage kvStorage_ = kv::KvStorage::kHost;
  bool kvSizedByBackend_ = false;
  int64_t maxModelLen_ = 0;
  int64_t vocab_ = 0;
};

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_ENGINE_ENGINE_H
