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

// Pieces checksummed apart (as the plan writer does on several threads)
// combine into the whole's CRC, at any cut and from any alignment.
TEST(Crc32c, CombineEqualsOneShot) {
  std::string s;
  for (int i = 0; i < 100000; ++i)
    s.push_back(char((i * 131) ^ (i >> 5)));
  for (size_t start : {size_t(0), size_t(1), size_t(3)}) {
    uint32_t whole = crc32c(s.data() + start, s.size() - start);
    for (size_t cut : {size_t(0), size_t(1), size_t(9), size_t(64), size_t(4097), size_t(70000)}) {
      const char *a = s.data() + start;
      size_t lenA = cut, lenB = s.size() - start - cut;
      EXPECT_EQ(crc32cCombine(crc32c(a, lenA), crc32c(a + lenA, lenB), lenB), whole)
          << start << " " << cut;
    }
  }
  EXPECT_EQ(crc32cCombine(0x12345678u, 0, 0), 0x12345678u);
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
/// in the arena's fixed region.
pb::PlanMetadata tinyPlan() {
  accel::test::PlanBuilder b;
  int32_t ids = b.value("i64", {-1});
  int32_t c = b.constant({4}, {0, 0, 0, 0});
  int32_t out = b.value("f32", {4});
  b.step(pb::RESIDUAL_ADD, {c, c}, {out});
  b.meta.mutable_schedule()->set_token_ids(ids);
  b.meta.mutable_schedule()->set_logits(out);
  b.place();
  return b.meta;
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
  EXPECT_EQ(loadError(m), "t.plan: schedule: step 0 (residual_add) reads value 2 "
                          "before it is written");

  m = tinyPlan();
  m.mutable_schedule()->mutable_steps(0)->set_inputs(1, 7);
  EXPECT_EQ(loadError(m), "t.plan: schedule: step 0 (residual_add) reads value 7, "
                          "which does not exist");

  m = tinyPlan();
  m.mutable_schedule()->mutable_steps(0)->set_outputs(0, 1);
  EXPECT_EQ(loadError(m), "t.plan: schedule: step 0 (residual_add) writes value 1, which is "
                          "not in the arena");

  m = tinyPlan();
  *m.mutable_schedule()->add_steps() = m.schedule().steps(0);
  EXPECT_EQ(loadError(m), "t.plan: schedule: step 1 (residual_add) writes value 2 a "
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

TEST(PlanFile, RejectsBadPlacements) {
  pb::PlanMetadata m = tinyPlan();
  m.mutable_schedule()->mutable_values(2)->set_arena_offset(8);
  EXPECT_EQ(loadError(m), "ok") << "the region has 256 bytes";
  m.mutable_schedule()->mutable_arena()->set_fixed_bytes(16);
  EXPECT_EQ(loadError(m), "t.plan: schedule: value 2 of 16 bytes at offset 8 overruns arena "
                          "region FIXED of 16 bytes");

  m = tinyPlan();
  m.mutable_schedule()->mutable_values(2)->set_region(pb::Value::TOKENS);
  EXPECT_EQ(loadError(m), "t.plan: schedule: value 2 has 0 dynamic dimensions in arena region "
                          "TOKENS");

  m = tinyPlan();
  m.mutable_schedule()->mutable_values(2)->set_placement(pb::Value::PLACEMENT_UNSPECIFIED);
  EXPECT_EQ(loadError(m), "t.plan: schedule: value 2 has no placement");

  m = tinyPlan();
  m.mutable_schedule()->mutable_values(2)->set_placement(pb::Value::VIEW);
  m.mutable_schedule()->mutable_values(2)->set_view_of(2);
  EXPECT_EQ(loadError(m), "t.plan: schedule: value 2 views value 2, which is not declared "
                          "before it");

  m = tinyPlan();
  m.mutable_schedule()->mutable_values(1)->set_placement(pb::Value::ARENA);
  EXPECT_EQ(loadError(m), "t.plan: schedule: value 1 is placed as ARENA but is a constant");

  m = tinyPlan();
  m.mutable_schedule()->mutable_values(0)->set_placement(pb::Value::ARENA);
  m.mutable_schedule()->mutable_values(0)->set_region(pb::Value::TOKENS);
  m.mutable_schedule()->mutable_arena()->set_bytes_per_token(8);
  EXPECT_EQ(loadError(m), "t.plan: schedule: the token ids value is missing");

  m = tinyPlan();
  m.mutable_schedule()->mutable_values(0)->set_dtype("f32");
  EXPECT_EQ(loadError(m), "t.plan: schedule: value 0 must be a vector of integers of the "
                          "step's tokens");

  m = tinyPlan(); // a second positions input that the schedule does not bind
  {
    pb::Value *extra = m.mutable_schedule()->add_values();
    *extra = m.schedule().values(0);
    extra->set_id(3);
    extra->set_step_input(pb::Value::POSITIONS);
  }
  EXPECT_EQ(loadError(m), "t.plan: schedule: value 3 is a step input that the schedule does not "
                          "name as its token ids or positions");

  m = tinyPlan();
  m.mutable_schedule()->mutable_steps(0)->set_kind(pb::StepKind(99));
  EXPECT_NE(loadError(m), "ok");
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
