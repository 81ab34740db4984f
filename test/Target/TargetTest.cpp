//===- TargetTest.cpp - the target descriptions ---------------------------===//
#include "accel/Target/Target.h"

#include <gtest/gtest.h>

using namespace accel::target;

TEST(Target, LookupByName) {
  for (const char *name : {"cpu", "a100", "h100", "h200"}) {
    const TargetDesc *t = lookup(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->name, name);
  }
  EXPECT_EQ(lookup("H100"), nullptr);
  EXPECT_EQ(lookup("sm_90"), nullptr);
  EXPECT_EQ(lookup(""), nullptr);
  EXPECT_EQ(lookup("v100"), nullptr);
  EXPECT_EQ(all().size(), 4u);
  EXPECT_EQ(describeNames(), "cpu, a100, h100 or h200");
}

TEST(Target, LookupBySm) {
  EXPECT_EQ(lookupBySm("sm_80"), lookup("a100"));
  EXPECT_EQ(lookupBySm("80"), lookup("a100"));
  EXPECT_EQ(lookupBySm("sm90"), lookup("h100"));
  EXPECT_EQ(lookupBySm("sm_90"), lookup("h100"));
  EXPECT_EQ(lookupBySm("cpu"), lookup("cpu"));
  EXPECT_EQ(lookupBySm("sm_86"), nullptr);
  EXPECT_EQ(lookupBySm("sm_"), nullptr);
  EXPECT_EQ(lookup("h200")->arch, "sm_90");
}

TEST(Target, A100) {
  const TargetDesc &t = *lookup("a100");
  EXPECT_TRUE(t.isGpu);
  EXPECT_EQ(t.arch, "sm_80");
  EXPECT_EQ(t.computeCapability, 80);
  EXPECT_EQ(t.smCount, 108);
  EXPECT_EQ(t.sharedMemoryPerSm, 164 * 1024);
  EXPECT_EQ(t.sharedMemoryPerBlock, 48 * 1024);
  EXPECT_EQ(t.sharedMemoryPerBlockOptIn, 163 * 1024);
  EXPECT_EQ(t.l2Bytes, 40ll << 20);
  EXPECT_EQ(t.memoryBytes, 80ll << 30);
  EXPECT_DOUBLE_EQ(t.memoryBandwidth, 2039e9);
  EXPECT_DOUBLE_EQ(t.peakTflops(ElementKind::kBF16), 312);
  EXPECT_DOUBLE_EQ(t.peakTflops(ElementKind::kTF32), 156);
  EXPECT_DOUBLE_EQ(t.peakTflops(ElementKind::kF32), 19.5);
  EXPECT_DOUBLE_EQ(t.peakTflops(ElementKind::kInt8), 624);
  // No FP8 Tensor Cores on Ampere.
  EXPECT_EQ(t.peakTflops(ElementKind::kFP8), 0);
  EXPECT_FALSE(t.supports(ElementKind::kFP8));
  EXPECT_TRUE(t.supports(ElementKind::kBF16));
  EXPECT_EQ(t.registersPerSm, 65536);
  EXPECT_EQ(t.maxThreadsPerSm, 2048);
  EXPECT_EQ(t.warpSize, 32);
  EXPECT_EQ(t.gemmDimMultiple, 64);
}

TEST(Target, HopperShareTheChip) {
  const TargetDesc &h100 = *lookup("h100"), &h200 = *lookup("h200");
  for (const TargetDesc *t : {&h100, &h200}) {
    EXPECT_EQ(t->arch, "sm_90");
    EXPECT_EQ(t->smCount, 132);
    EXPECT_EQ(t->sharedMemoryPerSm, 228 * 1024);
    EXPECT_EQ(t->sharedMemoryPerBlockOptIn, 227 * 1024);
    EXPECT_EQ(t->l2Bytes, 50ll << 20);
    EXPECT_TRUE(t->supports(ElementKind::kFP8));
    EXPECT_EQ(t->gemmDimMultiple, 64);
    // Dense: half the datasheets' sparsity figures.
    EXPECT_NEAR(t->peakTflops(ElementKind::kBF16), 989.5, 0.1);
    EXPECT_NEAR(t->peakTflops(ElementKind::kFP8), 1979, 0.1);
    EXPECT_DOUBLE_EQ(t->peakTflops(ElementKind::kF16),
                     t->peakTflops(ElementKind::kBF16));
  }
  EXPECT_EQ(h100.memoryBytes, 80ll << 30);
  EXPECT_EQ(h200.memoryBytes, 141ll << 30);
  EXPECT_DOUBLE_EQ(h100.memoryBandwidth, 3.35e12);
  EXPECT_DOUBLE_EQ(h200.memoryBandwidth, 4.8e12);
  // Same compute, more bandwidth: a lower ridge point.
  EXPECT_GT(h100.ridgePoint(ElementKind::kBF16), h200.ridgePoint(ElementKind::kBF16));
  EXPECT_NEAR(h200.ridgePoint(ElementKind::kBF16), 989.5e12 / 4.8e12, 1e-9);
}

TEST(Target, Cpu) {
  const TargetDesc &t = *lookup("cpu");
  EXPECT_FALSE(t.isGpu);
  EXPECT_EQ(t.arch, "cpu");
  EXPECT_EQ(t.smCount, 0);
  EXPECT_TRUE(t.supports(ElementKind::kFP8));
  EXPECT_EQ(t.ridgePoint(ElementKind::kF32), 0);
  EXPECT_EQ(t.gemmDimMultiple, 0); // no layout padding by default
}

TEST(Target, ElementKindNames) {
  EXPECT_EQ(elementKindName(ElementKind::kF32), "fp32");
  EXPECT_EQ(elementKindName(ElementKind::kTF32), "tf32");
  EXPECT_EQ(elementKindName(ElementKind::kBF16), "bf16");
  EXPECT_EQ(elementKindName(ElementKind::kF16), "fp16");
  EXPECT_EQ(elementKindName(ElementKind::kFP8), "fp8");
  EXPECT_EQ(elementKindName(ElementKind::kInt8), "int8");
}
