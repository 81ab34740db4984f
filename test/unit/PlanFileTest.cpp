//===- PlanFileTest.cpp - plan header, CRC-32C and loader checks -----------===//
#include "runtime/plan/PlanFile.h"

#include "PlanTestUtil.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace accel::rt;
using namespace accel::rt::plan;
namespace pb = accel::plan;

namespace {

// The CRC-32C check value of the standard test string (RFC 3720 B.4 and
// every CRC catalogue).
TEST(Crc32c, CheckValue) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c("", 0), 0u);
  // 32 bytes of zeros, RFC 3720 B.4.
  char zeros[32] = {};
  EXPECT_EQ(crc32c(zeros, sizeof(zeros)), 0x8A9136AAu);
}

TEST(Crc32c, IncrementalEqualsOneShot) {
  std::string s;
  for (int i = 0; i < 1000; ++i)
    s.push_back(char(i * 7 + 3));
  uint32_t whole = crc32c(s.data(), s.size());
  for (size_t cut : {size_t(0), size_t(1), size_t(7), size_t(8), size_t(500), s.size()})
    EXPECT_EQ(crc32c(s.data() + cut, s.size() - cut, crc32c(s.data(), cut)), whole) << cut;
}

TEST(Header, RoundTrip) {
  Header h;
  h.fileSize = 123456;
  h.metadataOffset = 8192;
  h.metadataSize = 1000;
  h.metadataCrc = 0xDEADBEEF;
  h.tpSize = 4;
  h.target = "sm_90";
  std::string bytes = encodeHeader(h);
  ASSERT_EQ(bytes.size(), kHeaderSize);
  EXPECT_EQ(bytes.substr(0, 8), "ACCELPLN");
  StatusOr<Header> back = decodeHeader(bytes.data(), bytes.size(), 123456, "x.plan");
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(back->major, kFormatMajor);
  EXPECT_EQ(back->fileSize, 123456u);
  EXPECT_EQ(back->metadataOffset, 8192u);
  EXPECT_EQ(back->metadataSize, 1000u);
  EXPECT_EQ(back->metadataCrc, 0xDEADBEEFu);
  EXPECT_EQ(back->tpSize, 4u);
  EXPECT_EQ(back->target, "sm_90");
}

TEST(Header, Rejects) {
  Header h;
  h.fileSize = 10000;
  h.metadataOffset = 9000;
  h.metadataSize = 2000; // past the end
  h.target = "cpu";
  std::string bytes = encodeHeader(h);
  StatusOr<Header> r = decodeHeader(bytes.data(), bytes.size(), 10000, "x.plan");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().message(), "x.plan: the plan header places its metadata outside the file");
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);

  h.metadataSize = 10;
  bytes = encodeHeader(h);
  bytes[20] ^= 1; // file size, CRC now stale
  r = decodeHeader(bytes.data(), bytes.size(), 10000, "x.plan");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().message(), "x.plan: the plan header is corrupt (checksum mismatch)");
}

std::string assemble(const pb::PlanMetadata &meta, const std::string &weights) {
  return accel::test::assemblePlan(meta, weights);
}

/// token ids %0, constant %1 (f32[4] at offset 0), %2 = residual_add(%1, %1)
pb::PlanMetadata tinyPlan() {
  pb::PlanMetadata meta;
  meta.set_target("cpu");
  meta.set_tp_size(1);
  pb::Schedule *s = meta.mutable_schedule();
  pb::Value *ids = s->add_values();
  ids->set_id(0);
  ids->set_dtype("i64");
  ids->add_shape(-1);
  pb::Value *c = s->add_values();
  c->set_id(1);
  c->set_dtype("f32");
  c->add_shape(4);
  c->set_is_constant(true);
  c->set_section(0);
  c->set_offset(0);
  c->set_size(16);
  pb::Value *out = s->add_values();
  out->set_id(2);
  out->set_dtype("f32");
  out->add_shape(4);
  pb::Step *st = s->add_steps();
  st->set_kind("launch");
  st->set_op("residual_add");
  st->add_inputs(1);
  st->add_inputs(1);
  st->add_outputs(2);
  s->set_token_ids(0);
  s->set_logits(2);
  return meta;
}

std::string loadError(const pb::PlanMetadata &meta) {
  StatusOr<std::shared_ptr<const PlanFile>> p =
      PlanFile::fromBytes(assemble(meta, std::string(16, '\x01')), "t.plan");
  return p ? "ok" : p.status().message();
}

TEST(PlanFile, LoadsAndViewsConstants) {
  std::string w(16, '\0');
  float vals[4] = {1, 2, 3, 4};
  std::memcpy(w.data(), vals, 16);
  StatusOr<std::shared_ptr<const PlanFile>> p = PlanFile::fromBytes(assemble(tinyPlan(), w), "t.plan");
  ASSERT_TRUE(p) << p.status().message();
  Tensor t = (*p)->constant(1);
  EXPECT_EQ(t.describe(), "f32[4]");
  EXPECT_EQ(t.data<float>()[3], 4.0f);
  EXPECT_FALSE((*p)->tokenizerJson());
}

TEST(PlanFile, RejectsMalformedSchedules) {
  EXPECT_EQ(loadError(tinyPlan()), "ok");

  pb::PlanMetadata m = tinyPlan();
  m.mutable_schedule()->mutable_steps(0)->set_inputs(0, 2);
  EXPECT_EQ(loadError(m), "t.plan: schedule: step 0 (launch residual_add) reads value 2 "
                          "before it is written");

  m = tinyPlan();
  m.mutable_schedule()->mutable_steps(0)->set_inputs(1, 7);
  EXPECT_EQ(loadError(m), "t.plan: schedule: step 0 (launch residual_add) reads value 7, "
                          "which does not exist");

  m = tinyPlan();
  m.mutable_schedule()->mutable_steps(0)->set_outputs(0, 1);
  EXPECT_EQ(loadError(m), "t.plan: schedule: step 0 (launch residual_add) writes value 1 a "
                          "second time");

  m = tinyPlan();
  m.mutable_schedule()->mutable_values(1)->set_offset(64);
  EXPECT_EQ(loadError(m), "t.plan: schedule: constant value 1 lies outside its section");

  m = tinyPlan();
  m.mutable_schedule()->mutable_values(1)->set_size(12);
  EXPECT_EQ(loadError(m), "t.plan: schedule: constant value 1 has 12 bytes, its type needs 16");

  m = tinyPlan();
  m.mutable_schedule()->mutable_values(2)->set_dtype("f33");
  EXPECT_EQ(loadError(m), "t.plan: schedule: value 2 has unknown element type 'f33'");

  m = tinyPlan();
  m.mutable_schedule()->set_logits(0);
  m.mutable_schedule()->clear_steps();
  m.mutable_schedule()->set_token_ids(1);
  EXPECT_EQ(loadError(m), "t.plan: schedule: the token ids value is missing");
}

TEST(PlanFile, RejectsGarbage) {
  StatusOr<std::shared_ptr<const PlanFile>> p = PlanFile::fromBytes("", "e.plan");
  ASSERT_FALSE(p);
  EXPECT_EQ(p.status().message(),
            "e.plan: not an accel plan (the file does not start with 'ACCELPLN')");
  std::string bytes = assemble(tinyPlan(), std::string(16, '\0'));
  bytes[4096 + 3] ^= 1;
  p = PlanFile::fromBytes(bytes, "w.plan");
  ASSERT_FALSE(p);
  EXPECT_EQ(p.status().message(), "w.plan: section 0 ('weights.rank0') is corrupt (checksum mismatch)");
  LoadOptions noVerify;
  noVerify.verifyChecksums = false;
  EXPECT_TRUE(PlanFile::fromBytes(bytes, "w.plan", noVerify));
}

} // namespace
