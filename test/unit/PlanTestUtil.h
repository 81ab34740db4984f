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

/// Builds a plan's metadata and weights value by value, step by step.
class PlanBuilder {
public:
  PlanBuilder() {
    meta.set_target("cpu");
    meta.set_tp_size(1);
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
    v->set_section(0);
    v->set_offset(weights.size());
    v->set_size(data.size() * sizeof(float));
    weights.append(reinterpret_cast<const char *>(data.data()), data.size() * sizeof(float));
    return id;
  }

  accel::plan::Step &step(const std::string &kind, const std::string &op,
                          std::vector<int32_t> inputs, std::vector<int32_t> outputs) {
    accel::plan::Step *s = meta.mutable_schedule()->add_steps();
    s->set_kind(kind);
    s->set_op(op);
    for (int32_t i : inputs)
      s->add_inputs(i);
    for (int32_t o : outputs)
      s->add_outputs(o);
    return *s;
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

  /// The file's bytes.
  std::string bytes() const { return assemblePlan(meta, weights); }

  accel::plan::PlanMetadata meta;
  std::string weights;
};

} // namespace accel::test

#endif // ACCEL_TEST_UNIT_PLANTESTUTIL_H
