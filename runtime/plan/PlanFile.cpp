//===- PlanFile.cpp - open, check and map a plan file ----------------------===//
#include "runtime/plan/PlanFile.h"

#include "core/RegularFile.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace accel::rt::plan {

namespace pb = accel::plan;

namespace {

Status dataLoss(const std::string &path, const std::string &msg) {
  return Status(StatusCode::kDataLoss, path + ": " + msg);
}

/// A read-only mapping, unmapped when the last tensor viewing it goes away.
struct Mapping {
  void *addr = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (addr && size)
      ::munmap(addr, size);
  }
};

std::string valueName(const pb::Schedule &s, int32_t id) {
  const pb::Value &v = s.values(id);
  return "value " + std::to_string(id) + (v.name().empty() ? "" : " ('" + v.name() + "')");
}

} // namespace

StatusOr<std::shared_ptr<const PlanFile>> PlanFile::open(const std::string &path,
                                                         const LoadOptions &options) {
  // Only a regular file: a FIFO would block, /dev/zero never ends.
  StatusOr<RegularFile> file = openRegularFile(path, "plan");
  if (!file)
    return file.status();
  const int fd = file->fd();
  auto plan = std::shared_ptr<PlanFile>(new PlanFile());
  plan->path_ = path;
  plan->size_ = file->size();
  auto mapping = std::make_shared<Mapping>();
  if (plan->size_ > 0) {
    void *addr = ::mmap(nullptr, plan->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (addr == MAP_FAILED) {
      int err = errno;
      return Status(StatusCode::kResourceExhausted,
                    "cannot map plan '" + path + "': " + std::strerror(err));
    }
    mapping->addr = addr;
    mapping->size = plan->size_;
  }
  plan->data_ = static_cast<const char *>(mapping->addr);
  plan->mapping_ = std::move(mapping);
  return finish(std::move(plan), options);
}

StatusOr<std::shared_ptr<const PlanFile>>
PlanFile::fromBytes(std::string_view bytes, const std::string &name,
                    const LoadOptions &options) {
  auto plan = std::shared_ptr<PlanFile>(new PlanFile());
  plan->path_ = name;
  plan->size_ = bytes.size();
  // 4096-aligned like a mapping, so constants keep their alignment.
  void *buf = std::aligned_alloc(kSectionAlignment, alignUp(bytes.size() + 1, kSectionAlignment));
  if (!buf)
    return Status(StatusCode::kResourceExhausted, name + ": cannot allocate the plan");
  if (!bytes.empty())
    std::memcpy(buf, bytes.data(), bytes.size());
  plan->mapping_ = std::shared_ptr<const void>(buf, [](const void *p) {
    std::free(const_cast<void *>(p));
  });
  plan->data_ = static_cast<const char *>(buf);
  return finish(std::move(plan), options);
}

StatusOr<std::shared_ptr<const PlanFile>>
PlanFile::finish(std::shared_ptr<PlanFile> plan, const LoadOptions &options) {
  ACCEL_RT_RETURN_IF_ERROR(plan->check(options));
  return std::shared_ptr<const PlanFile>(std::move(plan));
}

Status PlanFile::check(const LoadOptions &options) {
  StatusOr<Header> header = decodeHeader(data_, size_, size_, path_);
  if (!header)
    return header.status();
  header_ = std::move(*header);

  const char *meta = data_ + header_.metadataOffset;
  if (crc32c(meta, header_.metadataSize) != header_.metadataCrc)
    return dataLoss(path_, "the plan metadata is corrupt (checksum mismatch)");
  if (!metadata_.ParseFromArray(meta, int(header_.metadataSize)) ||
      header_.metadataSize > uint64_t(INT32_MAX))
    return dataLoss(path_, "the plan metadata does not parse");
  if (metadata_.target() != header_.target)
    return dataLoss(path_, "the header's target '" + header_.target +
                               "' and the metadata's '" + metadata_.target() + "' differ");

  // Sections: aligned, between the header page and the metadata, checksummed.
  uint64_t prevEnd = kSectionAlignment;
  for (int i = 0; i < metadata_.sections_size(); ++i) {
    const pb::Section &s = metadata_.sections(i);
    std::string what = "section " + std::to_string(i) + " ('" + s.name() + "')";
    if (s.offset() % kSectionAlignment != 0)
      return dataLoss(path_, what + " is not 4096-byte aligned");
    if (s.offset() < prevEnd || s.offset() > header_.metadataOffset ||
        s.size() > header_.metadataOffset - s.offset())
      return dataLoss(path_, what + " lies outside the section area of the file");
    prevEnd = s.offset() + s.size();
    if (options.verifyChecksums && crc32c(data_ + s.offset(), s.size()) != s.crc32c())
      return dataLoss(path_, what + " is corrupt (checksum mismatch)");
  }
  ACCEL_RT_RETURN_IF_ERROR(checkRanks());
  return checkSchedule();
}

Status PlanFile::checkRanks() {
  // One weights section per tensor-parallel rank, all of one size (constants
  // have one offset in all of them).
  const int64_t tp = metadata_.tp_size();
  if (tp < 1 || tp > 4096 || uint64_t(tp) != header_.tpSize)
    return dataLoss(path_, "the metadata's tensor-parallel size " + std::to_string(tp) +
                               " and the header's " + std::to_string(header_.tpSize) +
                               " differ or are invalid");
  weightSections_.assign(size_t(tp), -1);
  for (int i = 0; i < metadata_.sections_size(); ++i) {
    const pb::Section &s = metadata_.sections(i);
    if (s.kind() != pb::Section::WEIGHTS)
      continue;
    std::string what = "section " + std::to_string(i) + " ('" + s.name() + "')";
    if (s.rank() < 0 || s.rank() >= tp)
      return dataLoss(path_, what + " holds the weights of rank " + std::to_string(s.rank()) +
                                 " in a plan for " + std::to_string(tp) + " ranks");
    if (weightSections_[size_t(s.rank())] >= 0)
      return dataLoss(path_, what + " holds the weights of rank " + std::to_string(s.rank()) +
                                 " a second time");
    weightSections_[size_t(s.rank())] = i;
  }
  for (int64_t r = 0; r < tp; ++r) {
    if (weightSections_[size_t(r)] < 0)
      return dataLoss(path_, "the plan is partitioned for " + std::to_string(tp) +
                                 " ranks but has no weights section for rank " +
                                 std::to_string(r));
    const pb::Section &s = metadata_.sections(weightSections_[size_t(r)]);
    const pb::Section &s0 = metadata_.sections(weightSections_[0]);
    if (s.size() != s0.size())
      return dataLoss(path_, "the weights of rank " + std::to_string(r) + " are " +
                                 std::to_string(s.size()) + " bytes and rank 0's " +
                                 std::to_string(s0.size()) +
                                 "; every rank's weights have one layout");
  }
  return Status::ok();
}

Status PlanFile::checkSchedule() {
  const pb::Schedule &s = metadata_.schedule();
  const int32_t n = s.values_size();
  std::vector<char> defined(size_t(n), 0);
  auto bad = [&](const std::string &msg) { return dataLoss(path_, "schedule: " + msg); };

  // A view's bytes are its root's (the value it views, through views).
  std::vector<int32_t> root(size_t(n), -1);
  const pb::Arena &arena = s.arena();
  for (int32_t id = 0; id < n; ++id) {
    const pb::Value &v = s.values(id);
    if (v.id() != id)
      return bad("value " + std::to_string(id) + " carries id " + std::to_string(v.id()));
    std::optional<DType> dt = dtypeFromName(v.dtype());
    if (!dt)
      return bad(valueName(s, id) + " has unknown element type '" + v.dtype() + "'");
    int dynamic = 0;
    for (int64_t d : v.shape()) {
      if (d < -1)
        return bad(valueName(s, id) + " has a negative dimension");
      dynamic += d == -1;
    }
    root[size_t(id)] = id;
    if (v.is_constant() != (v.placement() == pb::Value::CONSTANT))
      return bad(valueName(s, id) + " is placed as " + pb::Value::Placement_Name(v.placement()) +
                 (v.is_constant() ? " but is a constant" : ""));
    switch (v.placement()) {
    case pb::Value::STEP_INPUT:
      if (v.step_input() != pb::Value::TOKEN_IDS && v.step_input() != pb::Value::POSITIONS)
        return bad(valueName(s, id) + " is an unknown step input");
      if (v.shape_size() != 1 || dynamic != 1 || !isInteger(*dt))
        return bad(valueName(s, id) + " must be a vector of integers of the step's tokens");
      defined[size_t(id)] = 1;
      continue;
    case pb::Value::VIEW: {
      if (v.view_of() < 0 || v.view_of() >= id)
        return bad(valueName(s, id) + " views value " + std::to_string(v.view_of()) +
                   ", which is not declared before it");
      const pb::Value &source = s.values(v.view_of());
      if (source.dtype() != v.dtype())
        return bad(valueName(s, id) + " views " + valueName(s, v.view_of()) +
                   " with another element type");
      root[size_t(id)] = root[size_t(v.view_of())];
      continue;
    }
    case pb::Value::ARENA: {
      // One dynamic dimension at most (the region's unit); its bytes per
      // unit from the offset must fit the region.
      const bool fixed = v.region() == pb::Value::FIXED;
      uint64_t regionBytes = fixed                              ? arena.fixed_bytes()
                             : v.region() == pb::Value::TOKENS ? arena.bytes_per_token()
                                                               : arena.bytes_per_seq();
      if (dynamic != (fixed ? 0 : 1))
        return bad(valueName(s, id) + " has " + std::to_string(dynamic) +
                   " dynamic dimensions in arena region " + pb::Value::Region_Name(v.region()));
      uint64_t bytes = dtypeSize(*dt);
      for (int64_t d : v.shape())
        bytes *= uint64_t(d == -1 ? 1 : d);
      if (v.arena_offset() > regionBytes || bytes > regionBytes - v.arena_offset())
        return bad(valueName(s, id) + " of " + std::to_string(bytes) + " bytes at offset " +
                   std::to_string(v.arena_offset()) + " overruns arena region " +
                   pb::Value::Region_Name(v.region()) + " of " + std::to_string(regionBytes) +
                   " bytes");
      continue;
    }
    case pb::Value::CONSTANT:
      break;
    default:
      return bad(valueName(s, id) + " has no placement");
    }
    if (v.section() < 0 || v.section() >= metadata_.sections_size() ||
        metadata_.sections(v.section()).kind() != pb::Section::WEIGHTS ||
        metadata_.sections(v.section()).rank() != 0)
      return bad("constant " + valueName(s, id) + " names no weights section of rank 0");
    const pb::Section &sec = metadata_.sections(v.section());
    if (v.offset() % kTensorAlignment != 0 || v.offset() > sec.size() ||
        v.size() > sec.size() - v.offset())
      return bad("constant " + valueName(s, id) + " lies outside its section");
    Shape shape(v.shape().begin(), v.shape().end());
    StatusOr<int64_t> count = checkedNumElements(shape);
    if (!count)
      return bad("constant " + valueName(s, id) + " has a dynamic or invalid shape");
    if (uint64_t(*count) * dtypeSize(*dt) != v.size())
      return bad("constant " + valueName(s, id) + " has " + std::to_string(v.size()) +
                 " bytes, its type needs " + std::to_string(uint64_t(*count) * dtypeSize(*dt)));
    defined[size_t(id)] = 1;
  }

  auto inRange = [&](int32_t id) { return id >= 0 && id < n; };
  if (!inRange(s.token_ids()) || s.values(s.token_ids()).placement() != pb::Value::STEP_INPUT ||
      s.values(s.token_ids()).step_input() != pb::Value::TOKEN_IDS)
    return bad("the token ids value is missing");
  if (s.positions() != -1 &&
      (!inRange(s.positions()) || s.values(s.positions()).placement() != pb::Value::STEP_INPUT ||
       s.values(s.positions()).step_input() != pb::Value::POSITIONS))
    return bad("the positions value is not a step input");
  // A step input is one of the two the schedule names (the runtime binds
  // those two only).
  for (int32_t id = 0; id < n; ++id)
    if (s.values(id).placement() == pb::Value::STEP_INPUT && id != s.token_ids() &&
        id != s.positions())
      return bad(valueName(s, id) + " is a step input that the schedule does not name as its "
                                    "token ids or positions");
  // Every view reads and writes its root's bytes.
  auto isDefined = [&](int32_t id) { return defined[size_t(root[size_t(id)])] != 0; };

  // Pipeline stages (accelc -pp): every step runs in one stage, and a value
  // that a stage reads was written in that stage (or is a constant or the
  // token ids): what another stage computed arrives by pp_transfer.
  const int64_t pp = std::max(1, metadata_.pp_size());
  if (pp > 4096)
    return dataLoss(path_, "the plan's pipeline size " + std::to_string(pp) + " is invalid");
  if (pp > 1) {
    const auto &counts = metadata_.kv_cache().stage_layers();
    int64_t sum = 0;
    bool positive = true;
    for (int64_t c : counts) {
      positive = positive && c > 0 && c <= 1000000;
      sum += positive ? c : 0;
    }
    if (counts.size() != pp || !positive || sum != metadata_.kv_cache().num_layers())
      return dataLoss(path_, "the plan has " + std::to_string(pp) +
                                 " pipeline stages but its KV cache does not give a positive "
                                 "layer count for each that sums to its " +
                                 std::to_string(metadata_.kv_cache().num_layers()) + " layers");
  }
  std::vector<int32_t> stageOf(size_t(n), -1); // the stage that wrote a value; -1: every stage
  for (int i = 0; i < s.steps_size(); ++i) {
    const pb::Step &step = s.steps(i);
    if (!pb::StepKind_IsValid(step.kind()) || step.kind() == pb::STEP_KIND_UNSPECIFIED)
      return bad("step " + std::to_string(i) + " has unknown kind " +
                 std::to_string(int(step.kind())) + " (a plan from a newer accelc?)");
    std::string what = "step " + std::to_string(i) + " (" + stepKindName(step.kind()) +
                       (step.kind() == pb::ONNX ? " " + step.onnx_op() : "") + ")";
    if (step.stage() < 0 || step.stage() >= pp)
      return bad(what + " runs in pipeline stage " + std::to_string(step.stage()) +
                 " of a plan with " + std::to_string(pp));
    const bool transfer = step.kind() == pb::PP_TRANSFER;
    int64_t fromStage = -1, toStage = -1;
    for (const pb::Attribute &a : step.attributes()) {
      if (a.name() == "from_stage" && a.value_case() == pb::Attribute::kI)
        fromStage = a.i();
      if (a.name() == "to_stage" && a.value_case() == pb::Attribute::kI)
        toStage = a.i();
    }
    if (transfer) {
      if (step.inputs_size() != 1 || step.outputs_size() != 1 || step.inputs(0) < 0 ||
          step.outputs(0) < 0)
        return bad(what + " must read one value and write one");
      if (fromStage < 0 || toStage <= fromStage || toStage >= pp || step.stage() != toStage)
        return bad(what + " sends from stage " + std::to_string(fromStage) + " to stage " +
                   std::to_string(toStage) + " (run in stage " + std::to_string(step.stage()) +
                   ") in a plan of " + std::to_string(pp) + " stages");
    }
    const int64_t reader = transfer ? fromStage : step.stage();
    for (int32_t in : step.inputs())
      if (inRange(in) && isDefined(in) && stageOf[size_t(root[size_t(in)])] >= 0 &&
          stageOf[size_t(root[size_t(in)])] != reader)
        return bad(what + " runs in pipeline stage " + std::to_string(reader) + " and reads " +
                   valueName(s, in) + ", which stage " +
                   std::to_string(stageOf[size_t(root[size_t(in)])]) + " writes");
    for (int32_t out : step.outputs())
      if (inRange(out))
        stageOf[size_t(root[size_t(out)])] = step.stage();
    for (int32_t in : step.inputs()) {
      if (in == -1)
        continue;
      if (!inRange(in))
        return bad(what + " reads value " + std::to_string(in) + ", which does not exist");
      if (!isDefined(in))
        return bad(what + " reads " + valueName(s, in) + " before it is written");
    }
    for (int32_t out : step.outputs()) {
      if (out == -1)
        continue; // an optional ONNX output the model does not use
      if (!inRange(out))
        return bad(what + " writes value " + std::to_string(out) + ", which does not exist");
      const pb::Value &o = s.values(root[size_t(out)]);
      if (o.placement() != pb::Value::ARENA)
        return bad(what + " writes " + valueName(s, out) + ", which is not in the arena");
      if (isDefined(out))
        return bad(what + " writes " + valueName(s, out) + " a second time");
      defined[size_t(root[size_t(out)])] = 1;
    }
    for (const pb::Attribute &a : step.attributes())
      if (a.value_case() == pb::Attribute::kTensor &&
          (!inRange(a.tensor()) || !s.values(a.tensor()).is_constant()))
        return bad(what + " attribute '" + a.name() + "' names no constant");
    if (step.kind() == pb::COLLECTIVE) {
      // all_reduce / all_gather of one value over the plan's ranks.
      int64_t group = -1, axis = 0, collective = -1;
      for (const pb::Attribute &a : step.attributes()) {
        if (a.name() == "group_size" && a.value_case() == pb::Attribute::kI)
          group = a.i();
        if (a.name() == "axis" && a.value_case() == pb::Attribute::kI)
          axis = a.i();
        if (a.name() == "collective" && a.value_case() == pb::Attribute::kI)
          collective = a.i();
      }
      const bool gather = collective == kAllGather;
      if (collective != kAllReduce && !gather)
        return bad(what + " is neither an all_reduce nor an all_gather");
      if (step.inputs_size() != 1 || step.outputs_size() != 1 || step.inputs(0) < 0 ||
          step.outputs(0) < 0)
        return bad(what + " must read one value and write one");
      if (group != metadata_.tp_size())
        return bad(what + " has group_size " + std::to_string(group) + " in a plan for " +
                   std::to_string(metadata_.tp_size()) + " ranks");
      const pb::Value &in = s.values(step.inputs(0)), &out = s.values(step.outputs(0));
      if (axis < 0 || (gather && axis >= in.shape_size()))
        return bad(what + " gathers along axis " + std::to_string(axis) + ", outside its " +
                   std::to_string(in.shape_size()) + "-D input");
      if (in.dtype() != out.dtype() || in.shape_size() != out.shape_size())
        return bad(what + " changes the type of its value");
    }
  }
  if (!inRange(s.logits()) || !isDefined(s.logits()))
    return bad("no step writes the logits");
  roots_ = root;
  if (pp > 1 && stageOf[size_t(root[size_t(s.logits())])] != pp - 1)
    return bad("the logits are not written by the last pipeline stage");
  return Status::ok();
}

std::string_view PlanFile::section(int index) const {
  const pb::Section &s = metadata_.sections(index);
  return std::string_view(data_ + s.offset(), size_t(s.size()));
}

std::optional<std::string_view> PlanFile::tokenizerJson() const {
  for (int i = 0; i < metadata_.sections_size(); ++i)
    if (metadata_.sections(i).kind() == pb::Section::TOKENIZER)
      return section(i);
  return std::nullopt;
}

std::optional<Shape> PlanFile::shapeFor(int32_t id, int64_t elements) const {
  const pb::Value &v = metadata_.schedule().values(id);
  Shape shape(v.shape().begin(), v.shape().end());
  int64_t known = 1, dynamic = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (dynamic >= 0)
        return std::nullopt;
      dynamic = int64_t(i);
    } else {
      known *= shape[i];
    }
  }
  if (dynamic < 0)
    return known == elements ? std::optional<Shape>(shape) : std::nullopt;
  if (known == 0 ? elements != 0 : elements % known != 0)
    return std::nullopt;
  shape[size_t(dynamic)] = known == 0 ? 0 : elements / known;
  return shape;
}

std::string stepKindName(accel::plan::StepKind kind) {
  std::string name = accel::plan::StepKind_Name(kind);
  for (char &c : name)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  return name.empty() ? "step kind " + std::to_string(int(kind)) : name;
}

Tensor PlanFile::constant(int32_t id, int rank) const {
  const pb::Value &v = metadata_.schedule().values(id);
  const pb::Section &sec =
      metadata_.sections(rank == 0 ? v.section() : weightSections_[size_t(rank)]);
  return Tensor::view(*dtypeFromName(v.dtype()), Shape(v.shape().begin(), v.shape().end()),
                      data_ + sec.offset() + v.offset(), mapping_);
}

} // namespace accel::rt::plan
