//===- NcclTest.cpp - NCCL opened at run time (no GPU needed) -------------===//
//
// The loader's sentences when NCCL is missing or is not NCCL, nccl.h's data
// type values, and, where an NCCL library is found on this machine
// ($ACCEL_TEST_LIBNCCL, the CUDA toolkit's, pip's), that every entry point
// resolves and its version is read (ncclGetVersion needs no GPU).
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/Nccl.h"

#include <gtest/gtest.h>

#include <cstring>

#include <cstdlib>
#include <fstream>

using namespace accel::rt;

namespace {

TEST(Nccl, AMissingLibraryIsOneSentenceSayingWhereToPointAccelLibnccl) {
  StatusOr<std::unique_ptr<comm::Nccl>> n = comm::Nccl::open("/nonexistent/libnccl.so.2");
  ASSERT_FALSE(n.isOk());
  EXPECT_EQ(n.status().code(), StatusCode::kUnavailable);
  const std::string &m = n.status().message();
  EXPECT_EQ(m.rfind("tensor-parallel plans on the GPU need NCCL, and /nonexistent/libnccl.so.2 "
                    "cannot be opened (",
                    0),
            0u)
      << m;
  EXPECT_NE(m.find("set ACCEL_LIBNCCL to the path of libnccl.so.2"), std::string::npos) << m;
  EXPECT_NE(m.find("nvidia-nccl-cu13"), std::string::npos) << m;
  EXPECT_NE(m.find("import nvidia.nccl"), std::string::npos) << m;
}

TEST(Nccl, ALibraryThatIsNotNcclIsRefused) {
  StatusOr<std::unique_ptr<comm::Nccl>> n = comm::Nccl::open("libm.so.6");
  ASSERT_FALSE(n.isOk());
  EXPECT_EQ(n.status().message(), "libm.so.6 is not a usable NCCL library: it lacks "
                                  "ncclGetVersion; set ACCEL_LIBNCCL to the path of NCCL's "
                                  "libnccl.so.2");
}

TEST(Nccl, DataTypesAreNcclHsValues) {
  EXPECT_EQ(*comm::ncclDataType(DType::kF32), 7);  // ncclFloat32
  EXPECT_EQ(*comm::ncclDataType(DType::kF16), 6);  // ncclFloat16
  EXPECT_EQ(*comm::ncclDataType(DType::kBF16), 9); // ncclBfloat16
  EXPECT_EQ(*comm::ncclDataType(DType::kI64), 4);  // ncclInt64
  StatusOr<int> i4 = comm::ncclDataType(DType::kI4);
  ASSERT_FALSE(i4.isOk());
  EXPECT_EQ(i4.status().message(), "NCCL has no collectives of i4");
}

TEST(Nccl, ARealLibraryResolvesEveryEntryPoint) {
  std::vector<std::string> candidates;
  if (const char *e = std::getenv("ACCEL_TEST_LIBNCCL"); e && *e)
    candidates.push_back(e);
  candidates.push_back("/usr/local/cuda/lib64/libnccl.so.2");
  candidates.push_back("/usr/local/cuda/lib/libnccl.so.2");
  candidates.push_back("/usr/local/cuda-13.0/lib/libnccl.so.2");
  candidates.push_back("/usr/lib/x86_64-linux-gnu/libnccl.so.2");
  std::string found;
  for (const std::string &c : candidates)
    if (std::ifstream(c).good()) {
      found = c;
      break;
    }
  if (found.empty())
    GTEST_SKIP() << "no NCCL library on this machine (set ACCEL_TEST_LIBNCCL)";
  StatusOr<std::unique_ptr<comm::Nccl>> n = comm::Nccl::open(found);
  ASSERT_TRUE(n.isOk()) << n.status().message();
  EXPECT_GE((*n)->version(), 21000);
  EXPECT_EQ((*n)->versionString().rfind("2.", 0), 0u) << (*n)->versionString();
  EXPECT_EQ((*n)->path(), found);
  EXPECT_TRUE((*n)->check(0, "ncclAllReduce").isOk());
  Status bad = (*n)->check(4, "ncclAllReduce");
  EXPECT_EQ(bad.message().rfind("ncclAllReduce failed with NCCL error 4 (", 0), 0u)
      << bad.message();
  // What rank 0 of a group of processes hands out (no GPU needed): a new
  // id each time.
  StatusOr<comm::NcclUniqueId> a = (*n)->uniqueId(), b = (*n)->uniqueId();
  ASSERT_TRUE(a.isOk()) << a.status().message();
  ASSERT_TRUE(b.isOk()) << b.status().message();
  EXPECT_NE(std::memcmp(a->internal, b->internal, sizeof(a->internal)), 0);
}

} // namespace
