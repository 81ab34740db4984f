//===- GpuGraphs.h - decode steps replayed from CUDA graphs -----*- C++ -*-===//
//
// A decode step (every sequence brings one token) with B sequences runs as
// the replay of a CUDA graph captured for the smallest bucket >= B
// (GraphBuckets.h), its rows padded: token 0 at position 0, seq_len 0 (the
// attention kernel writes zeros for a query with no keys), slot -1 (kv_write
// skips it); their logits are dropped.
//
// What a replay needs to be valid for every step:
//   - inputs at fixed device addresses: one buffer, sized for the largest
//     bucket, holds the token ids, positions (i64 and i32), query_start_loc,
//     seq_lens, slot_mapping, the split size and the block tables
//     ([bucket, tableWidth], tableWidth = ceil(max-model-len / block size));
//     before each replay one stream-ordered copy uploads the small arrays,
//     one the step's block tables as they are ([B, width], contiguous) and
//     a device-side 2D copy puts them into the graph's rows;
//   - activations from a private DevicePool that every graph shares (their
//     replays are ordered on one stream), so no allocation outside a graph
//     reuses their addresses; the logits stay where the capture put them
//     and are downloaded right after the replay;
//   - kernel parameters that do not change between replays: the split-KV
//     chunk count is part of the graph's key (bucket, splits); the split
//     size is read from device memory;
//   - no host copy inside the captured region (GpuContext fails upload and
//     download while capturing): a plan whose decode step needs the host
//     (an ONNX operator on the CPU, a host read of device data) runs eagerly
//     and describe() says why.
//
// A graph is captured lazily, the first time its key is needed, after an
// eager warm-up run of the same padded step (cuBLASLt picks its algorithms
// and the lazily made tables are uploaded outside the capture). The graphs
// are dropped when the device KV pool is re-made (its addresses are baked
// in) or the block size changes.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_GPUGRAPHS_H
#define ACCEL_RUNTIME_CUDA_GPUGRAPHS_H

#include "runtime/cuda/DevicePool.h"
#include "runtime/cuda/GpuSteps.h"

#include <functional>
#include <map>
#include <tuple>

namespace accel::rt::engine {

class DecodeGraphs {
public:
  /// Runs the whole schedule with `st` (the token ids in `tokens`) and
  /// returns the logits value (on the device).
  using Schedule = std::function<StatusOr<DeviceTensor>(GpuRunState &st, const DeviceTensor &tokens)>;

  /// Graphs for decode batches up to `maxBatch`, block tables of
  /// `tableWidth` columns, token ids of `tokenDType` (i32 or i64).
  DecodeGraphs(gpu::GpuContext &gpu, int64_t maxBatch, int64_t tableWidth, DType tokenDType);
  ~DecodeGraphs();
  DecodeGraphs(const DecodeGraphs &) = delete;
  DecodeGraphs &operator=(const DecodeGraphs &) = delete;

  /// The bucket a decode step of `batch` sequences pads to; 0: none (eager).
  int64_t bucketFor(int64_t batch) const { return graphBucketFor(buckets_, batch); }
  int64_t tableWidth() const { return tableWidth_; }
  const std::vector<int64_t> &buckets() const { return buckets_; }

  /// Runs the decode step `meta` (numTokens == numSeqs <= the largest bucket,
  /// every sequence's blocks within tableWidth) by replaying its graph,
  /// capturing it first. `base` carries the executor's state (KV pool,
  /// cuBLASLt, flags); `split` is the step's split-KV geometry. Returns the
  /// logits of the real rows as f32 on the host (meta.greedy: their argmax
  /// tokens, i64, picked on the device after the replay). A failure to capture is
  /// kUnimplemented: the caller runs the step eagerly and graphs stay
  /// off (disabledReason()).
  /// A schedule that returns no value (a pipeline stage before the last)
  /// replays and returns an undefined tensor, its work left on the stream.
  /// `variant` tells apart graphs of one bucket whose captured addresses
  /// differ (a pipeline stage's micro-batch: its staging buffers).
  StatusOr<Tensor> run(const Tensor &tokenIds, const kv::StepMetadata &meta, DecodeSplit split,
                       const GpuRunState &base, const Schedule &schedule, int variant = 0);

  /// Runs the largest bucket's decode step once, eagerly, with its
  /// activations in the graph pool, over contexts of `maxSeqLen` keys (the
  /// most split-KV chunks), then reserves the pool at that peak in one
  /// chunk: the memory the graphs will use, taken before the KV cache is
  /// sized. The KV pool of `base` may be a single block (every table entry
  /// is block 0; no slot is written).
  Status reservePool(int64_t maxSeqLen, const GpuRunState &base, const Schedule &schedule);

  /// Turns graphs off for good (the next run() fails at once).
  void disable(const std::string &why);
  const std::string &disabledReason() const { return disabled_; }
  /// Drops every captured graph (the KV pool moved).
  void clear();

  size_t numGraphs() const { return graphs_.size(); }
  size_t poolBytes() const { return pool_->bytes(); }

private:
  struct Graph {
    gpu::CuGraphExec exec = nullptr;
    gpu::CuDevicePtr logits = 0; // in the pool; valid right after a replay
    bool noOutput = false;       // the schedule returns nothing (a pipeline stage)
    DType logitsType = DType::kF32;
    Shape logitsShape;           // bucket rows
  };
  struct Layout {
    size_t tokens, pos64, pos32, qsl, lens, slots, split, tables, scratch, bytes;
  };

  Status ensureInputs();
  /// Writes the padded step into the host staging area and uploads it.
  Status upload(const Tensor &tokenIds, const kv::StepMetadata &meta, int64_t bucket,
                int64_t splitSize);
  /// The run state of a graph step of `bucket` rows over the input buffer.
  GpuRunState graphState(const GpuRunState &base, int64_t bucket, DecodeSplit split,
                         kv::StepMetadata &meta, DeviceTensor &tokens) const;
  StatusOr<Graph> capture(const GpuRunState &st, const DeviceTensor &tokens,
                          const Schedule &schedule);

  gpu::GpuContext &gpu_;
  std::vector<int64_t> buckets_;
  int64_t maxBatch_ = 0, tableWidth_ = 0;
  DType tokenDType_;
  Layout layout_{};
  gpu::DeviceBuffer inputs_;
  std::vector<unsigned char> staging_;
  std::shared_ptr<gpu::DevicePool> pool_;
  std::map<std::tuple<int64_t, int, int>, Graph> graphs_; // (bucket, splits, variant)
  std::string disabled_;
};

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_CUDA_GPUGRAPHS_H
