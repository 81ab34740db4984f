#include "core/Status.h"

#include <gtest/gtest.h>

using namespace accel::rt;

TEST(Status, OkHasNoMessage) {
  Status s;
  EXPECT_TRUE(s.isOk());
  EXPECT_EQ(s.toString(), "ok");
}

TEST(Status, ErrorCarriesCodeAndSentence) {
  Status s = dataLoss("plan 'm.plan': section 'weights.0' checksum mismatch");
  EXPECT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.toString(),
            "data loss: plan 'm.plan': section 'weights.0' checksum mismatch");
}

TEST(StatusOr, HoldsValueOrError) {
  StatusOr<int> v = 42;
  ASSERT_TRUE(v.isOk());
  EXPECT_EQ(*v, 42);
  StatusOr<int> e = notFound("no such file");
  ASSERT_FALSE(e.isOk());
  EXPECT_EQ(e.status().code(), StatusCode::kNotFound);
}

TEST(StatusOr, OkStatusWithoutValueIsAnInternalError) {
  StatusOr<int> e = Status::ok();
  ASSERT_FALSE(e.isOk());
  EXPECT_EQ(e.status().code(), StatusCode::kInternal);
}
