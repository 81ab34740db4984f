//===- PlanTestUtil.h - build small plans in memory for tests ---*- C++ -*-===//
#ifndef ACCEL_TEST_UNIT_PLANTESTUTIL_H
#define ACCEL_TEST_UNIT_PLANTESTUTIL_H

#include "runtime/plan/PlanFile.h"

#include <cstring>
#include <string>
#include <vector>

namespace accel::test {

/// A plan file of `meta` with one weights section holding `weights`, laid
/// out as the writer does (header, 4 KiB-aligned section, metadata).
inline std::string assemblePlan(accel::plan::PlanMetadata meta, const std::string &weights) {
  std::string file(rt::plan::kSectionAlignment, '\0');
  accel::plan::Section *s = meta.add_sections();
  s->set_name("weights.rank0");
  s->set_kind(accel::plan::Section::WEIGHTS);
  s->set_offset(rt::plan::kSectionAlignment);
  s->set_size(weights.size());
  s->set_crc32c(rt::plan::crc32c(weights.data(), weights.size()));
  file += weights;
  file.resize(rt::plan::alignUp(file.size(), rt::plan::kSectionAlignment), '\0');
  std::string mb;
  meta.SerializeToString(&mb);
  rt::plan::Header h;
  h.metadataOffset = file.size();
  h.metadataSize = mb.size();
  h.metadataCrc = rt::plan::crc32c(mb.data(), mb.size());
  h.target = meta.target();
  file += mb;
  h.fileSize = file.size();
  std::string head = rt::plan::encodeHeader(h);
  std::memcpy(file.data(), head.data(), head.size());
  return file;
}

/// A tensor-parallel plan file: rank r's weights in section weights.rank<r>
/// (one layout); `headerTp` is the header's tp size (0: the number of ranks;
/// tests of damaged plans give another).
inline std::string assembleTp(accel::plan::PlanMetadata meta,
                              const std::vector<std::string> &ranks, uint32_t headerTp = 0) {
  using namespace accel::rt::plan;
  std::string file(kSectionAlignment, '\0');
  for (size_t r = 0; r < ranks.size(); ++r) {
    accel::plan::Section *s = meta.add_sections();
    s->set_name("weights.rank" + std::to_string(r));
    s->set_kind(accel::plan::Section::WEIGHTS);
    s->set_rank(int32_t(r));
    s->set_offset(file.size());
    s->set_size(ranks[r].size());
    s->set_crc32c(crc32c(ranks[r].data(), ranks[r].size()));
    file += ranks[r];
    file.resize(alignUp(file.size(), kSectionAlignment), '\0');
  }
  std::string mb;
  meta.SerializeToString(&mb);
  Header h;
  h.metadataOffset = file.size();
  h.metadataSize = mb.size();
  h.metadataCrc = crc32c(mb.data(), mb.size());
  h.target = meta.target();
  h.tpSize = headerTp ? headerTp : uint32_t(ranks.size());
  file += mb;
  h.fileSize = file.size();
  std::string head = encodeHeader(h);
  std::memcpy(file.data(), head.data(), head.size());
  return file;
}

/// Builds a plan's metadata and weights value by value, step by step, as
/// lib/Plan writes them from an exec module: every value is a constant, a
/// step input, a view of another value, or (the default) a buffer of the
/// activations arena, placed by bytes() one after the other.
class PlanBuilder {
public:
  PlanBuilder() {
    meta.set_target("cpu");
    meta.set_tp_size(1);
    meta.mutable_schedule()->set_positions(-1);
  }

  int32_t value(const std::string &dtype, std::vector<int64_t> shape) {
    accel::plan::Value *v = meta.mutable_schedule()->add_values();
    v->set_id(meta.schedule().values_size() - 1);
    v->set_dtype(dtype);
    for (int64_t d : shape)
      v->add_shape(d);
    return v->id();
  }

  int32_t constant(std::vector<int64_t> shape, const std::vector<float> &data) {
    int32_t id = value("f32", shape);
    accel::plan::Value *v = meta.mutable_schedule()->mutable_values(id);
    weights.resize(rt::plan::alignUp(weights.size(), rt::plan::kTensorAlignment), '\0');
    v->set_is_constant(true);
    v->set_placement(accel::plan::Value::CONSTANT);
    v->set_section(0);
    v->set_offset(weights.size());
    v->set_size(data.size() * sizeof(float));
    weights.append(reinterpret_cast<const char *>(data.data()), data.size() * sizeof(float));
    return id;
  }

  /// A constant of any dtype from its raw bytes (e.g. i8 or f8E4M3FN weights).
  int32_t constantBytes(const std::string &dtype, std::vector<int64_t> shape,
                        const std::string &raw) {
    int32_t id = value(dtype, shape);
    accel::plan::Value *v = meta.mutable_schedule()->mutable_values(id);
    weights.resize(rt::plan::alignUp(weights.size(), rt::plan::kTensorAlignment), '\0');
    v->set_is_constant(true);
    v->set_placement(accel::plan::Value::CONSTANT);
    v->set_section(0);
    v->set_offset(weights.size());
    v->set_size(raw.size());
    weights.append(raw);
    return id;
  }

  /// Value `id` is the step's token ids (`kind` TOKEN_IDS) or positions.
  void stepInput(int32_t id, accel::plan::Value::StepInput kind) {
    accel::plan::Value *v = meta.mutable_schedule()->mutable_values(id);
    v->set_placement(accel::plan::Value::STEP_INPUT);
    v->set_step_input(kind);
    if (kind == accel::plan::Value::TOKEN_IDS)
      meta.mutable_schedule()->set_token_ids(id);
    else
      meta.mutable_schedule()->set_positions(id);
  }
  /// Value `id` views the bytes of value `source` (declared before it).
  void viewOf(int32_t id, int32_t source) {
    accel::plan::Value *v = meta.mutable_schedule()->mutable_values(id);
    v->set_placement(accel::plan::Value::VIEW);
    v->set_view_of(source);
  }

  accel::plan::Step &step(accel::plan::StepKind kind, std::vector<int32_t> inputs,
                          std::vector<int32_t> outputs) {
    accel::plan::Step *s = meta.mutable_schedule()->add_steps();
    s->set_kind(kind);
    for (int32_t i : inputs)
      s->add_inputs(i);
    for (int32_t o : outputs)
      s->add_outputs(o);
    return *s;
  }
  /// A COLLECTIVE step over `group` ranks: an all_reduce (sum), or an
  /// all_gather along `axis` when axis >= 0.
  accel::plan::Step &collective(int32_t in, int32_t out, int64_t group, int64_t axis = -1) {
    accel::plan::Step &s = step(accel::plan::COLLECTIVE, {in}, {out});
    attr(s, "collective", int64_t(axis >= 0 ? rt::plan::kAllGather : rt::plan::kAllReduce));
    attr(s, "group_size", group);
    if (axis >= 0)
      attr(s, "axis", axis);
    else
      attr(s, "kind", "sum");
    return s;
  }
  /// An ONNX step.
  accel::plan::Step &onnx(const std::string &op, std::vector<int32_t> inputs,
                          std::vector<int32_t> outputs) {
    accel::plan::Step &s = step(accel::plan::ONNX, std::move(inputs), std::move(outputs));
    s.set_onnx_op(op);
    return s;
  }

  static void attr(accel::plan::Step &s, const std::string &name, int64_t v) {
    auto *a = s.add_attributes();
    a->set_name(name);
    a->set_i(v);
  }
  static void attr(accel::plan::Step &s, const std::string &name, double v) {
    auto *a = s.add_attributes();
    a->set_name(name);
    a->set_f(v);
  }
  static void attr(accel::plan::Step &s, const std::string &name, const char *v) {
    auto *a = s.add_attributes();
    a->set_name(name);
    a->set_s(v);
  }
  static void attr(accel::plan::Step &s, const std::string &name, const std::vector<float> &v) {
    auto *a = s.add_attributes();
    a->set_name(name);
    for (float f : v)
      a->mutable_floats()->add_values(f);
  }

  /// Places every value without a placement in the activations arena: the
  /// token ids (when the schedule names them) are a step input; a value with
  /// one dynamic dimension gets its own bytes per token, a static one its own
  /// fixed bytes (no reuse: the plans of tests are small).
  void place() {
    accel::plan::Schedule &s = *meta.mutable_schedule();
    if (s.token_ids() >= 0 && s.token_ids() < s.values_size() &&
        s.values(s.token_ids()).placement() == accel::plan::Value::PLACEMENT_UNSPECIFIED)
      stepInput(s.token_ids(), accel::plan::Value::TOKEN_IDS);
    uint64_t fixed = 0, perToken = 0;
    for (accel::plan::Value &v : *s.mutable_values()) {
      if (v.placement() != accel::plan::Value::PLACEMENT_UNSPECIFIED)
        continue;
      uint64_t bytes = rt::dtypeSize(*rt::dtypeFromName(v.dtype()));
      int dynamic = 0;
      for (int64_t d : v.shape()) {
        dynamic += d < 0;
        bytes *= uint64_t(d < 0 ? 1 : d);
      }
      v.set_placement(accel::plan::Value::ARENA);
      uint64_t &used = dynamic ? perToken : fixed;
      v.set_region(dynamic ? accel::plan::Value::TOKENS : accel::plan::Value::FIXED);
      v.set_arena_offset(used);
      used = rt::plan::alignUp(used + bytes, 256);
    }
    s.mutable_arena()->set_fixed_bytes(fixed);
    s.mutable_arena()->set_bytes_per_token(perToken);
    s.mutable_arena()->set_alignment(256);
  }

  /// The model around the schedule: its token ids and logits, the
  /// vocabulary, the longest position, and a KV cache of `layers` layers of
  /// `kvHeads` heads of `headDim` in blocks of 4 tokens, in `kvDtype`.
  void setModel(int32_t ids, int32_t logits, int64_t vocab, int64_t maxPosition, int64_t layers,
                int64_t kvHeads, int64_t headDim, const char *kvDtype = "f32") {
    meta.mutable_schedule()->set_token_ids(ids);
    meta.mutable_schedule()->set_logits(logits);
    meta.mutable_model()->set_vocab_size(vocab);
    meta.mutable_model()->set_max_position(maxPosition);
    auto *kv = meta.mutable_kv_cache();
    kv->set_num_layers(layers);
    kv->set_num_kv_heads(kvHeads);
    kv->set_head_dim(headDim);
    kv->set_block_size(4);
    kv->set_dtype(kvDtype);
  }

  /// The file's bytes.
  std::string bytes() {
    place();
    return assemblePlan(meta, weights);
  }

  accel::plan::PlanMetadata meta;
  std::string weights;
};

/// A plan of two pipeline stages (tp 1) over a tied [v, h] table: stage 0
/// looks the ids up, a pp_transfer hands the rows to stage 1, which computes
/// the logits rows · tableᵀ. Its KV cache is 2 layers, one per stage (no
/// attention reads it). Returns the metadata so that a test can damage it
/// before PlanBuilder::bytes().
inline PlanBuilder pipelinePlan(const std::vector<float> &table, int64_t v, int64_t h) {
  PlanBuilder b;
  b.meta.set_pp_size(2);
  auto *kv = b.meta.mutable_kv_cache();
  kv->set_num_layers(2);
  kv->set_num_kv_heads(1);
  kv->set_head_dim(4);
  kv->set_block_size(4);
  kv->set_dtype("f32");
  kv->add_stage_layers(1);
  kv->add_stage_layers(1);
  int32_t ids = b.value("i64", {-1});
  int32_t tbl = b.constant({v, h}, table);
  int32_t x = b.value("f32", {-1, h}), y = b.value("f32", {-1, h}), logits = b.value("f32", {-1, v});
  b.step(accel::plan::EMBEDDING, {tbl, ids}, {x}).set_stage(0);
  auto &t = b.step(accel::plan::PP_TRANSFER, {x}, {y});
  t.set_stage(1);
  PlanBuilder::attr(t, "from_stage", int64_t(0));
  PlanBuilder::attr(t, "to_stage", int64_t(1));
  auto &l = b.step(accel::plan::LOGITS, {y, tbl}, {logits});
  l.set_stage(1);
  PlanBuilder::attr(l, "out_dtype", "f32");
  b.meta.mutable_schedule()->set_token_ids(ids);
  b.meta.mutable_schedule()->set_logits(logits);
  b.meta.mutable_model()->set_vocab_size(v);
  return b;
}

} // namespace accel::test

#endif // ACCEL_TEST_UNIT_PLANTESTUTIL_H
