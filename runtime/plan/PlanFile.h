//===- PlanFile.h - open, check and map a plan file -------------*- C++ -*-===//
//
// The loader half of docs/plan-format.md. open() maps the file read-only,
// checks the header, the metadata and every section's CRC-32C, and checks
// that the schedule is well formed (values defined once, before use; every
// constant inside its section), so that nothing later trips over a corrupt
// file. Weights are never copied: constant() returns tensors that view the
// mapping and keep it alive.
//
// Every failure is one sentence that starts with the plan's path.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_PLAN_PLANFILE_H
#define ACCEL_RUNTIME_PLAN_PLANFILE_H

#include "core/Status.h"
#include "core/Tensor.h"
#include "runtime/plan/Plan.pb.h"
#include "runtime/plan/PlanFormat.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace accel::rt::plan {

struct LoadOptions {
  /// Verify every section's CRC-32C at load (reads every weight byte once).
  bool verifyChecksums = true;
};

class PlanFile : public std::enable_shared_from_this<PlanFile> {
public:
  /// Maps and checks the plan at `path`.
  static StatusOr<std::shared_ptr<const PlanFile>> open(const std::string &path,
                                                        const LoadOptions &options = {});
  /// The same checks on bytes in memory (copied); `name` stands for the path
  /// in messages.
  static StatusOr<std::shared_ptr<const PlanFile>>
  fromBytes(std::string_view bytes, const std::string &name, const LoadOptions &options = {});

  const std::string &path() const { return path_; }
  /// The file's size in bytes.
  uint64_t fileSize() const { return size_; }
  const Header &header() const { return header_; }
  const accel::plan::PlanMetadata &metadata() const { return metadata_; }
  const accel::plan::Schedule &schedule() const { return metadata_.schedule(); }

  /// The bytes of section `index`.
  std::string_view section(int index) const;
  /// The tokenizer.json the plan carries, if any.
  std::optional<std::string_view> tokenizerJson() const;
  /// A view of constant value `id` (checked at load to be a constant) in
  /// the weights of tensor-parallel rank `rank` (0 <= rank < tp_size).
  Tensor constant(int32_t id, int rank = 0) const;
  /// The plan's tensor-parallel ranks (metadata tp_size, checked to be the
  /// header's and to have one weights section per rank).
  int tpSize() const { return int(weightSections_.size()); }
  /// The plan's pipeline stages (metadata pp_size; 1 when unset). Stage s
  /// runs the steps whose `stage` is s and its side of every pp_transfer
  /// (checked at load: a stage reads only what it writes, constants and the
  /// token ids, and the last stage writes the logits).
  int ppSize() const { return std::max(1, int(metadata_.pp_size())); }
  /// The value whose bytes value `id` shares: itself, or (a VIEW) the root
  /// of the value it views (checked at load: views come after their source).
  int32_t rootOf(int32_t id) const { return roots_[size_t(id)]; }
  /// Value `id`'s shape for `elements` elements: its declared shape, with
  /// its dynamic dimension (at most one) given the extent that makes the
  /// count match; nullopt when no extent does.
  std::optional<Shape> shapeFor(int32_t id, int64_t elements) const;

  /// The KV cache layers of stage `stage` (all of them in a plan of one stage).
  int64_t stageLayers(int stage) const {
    return ppSize() == 1 ? metadata_.kv_cache().num_layers()
                         : metadata_.kv_cache().stage_layers(stage);
  }

private:
  PlanFile() = default;
  std::vector<int32_t> roots_; // by value id (checkSchedule)
  static StatusOr<std::shared_ptr<const PlanFile>> finish(std::shared_ptr<PlanFile> plan,
                                                          const LoadOptions &options);
  Status check(const LoadOptions &options);
  Status checkSchedule();
  Status checkRanks();

  std::string path_;
  std::shared_ptr<const void> mapping_; // keeps the bytes alive
  const char *data_ = nullptr;
  uint64_t size_ = 0;
  Header header_;
  accel::plan::PlanMetadata metadata_;
  std::vector<int> weightSections_; // by rank: the index of its weights section
};

/// "rms_norm", "qkv_rotary_kv_write": a step kind as messages name it.
std::string stepKindName(accel::plan::StepKind kind);

/// The `collective` attribute of a COLLECTIVE step (the exec dialect's
/// CollectiveKind).
inline constexpr int64_t kAllReduce = 0, kAllGather = 1, kReduceScatter = 2;

} // namespace accel::rt::plan

#endif // ACCEL_RUNTIME_PLAN_PLANFILE_H
