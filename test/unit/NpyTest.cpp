// .npy read/write: round trips per dtype, headers numpy writes, and clear
// errors for corrupt files.
#include "core/Npy.h"

#include "KernelTestUtil.h"

#include <cstdio>
#include <fstream>
#include <unistd.h>

using namespace kt;

namespace {

std::string tempPath(const char *name) {
  return std::string(::testing::TempDir()) + "accel_npy_" + std::to_string(getpid()) + "_" + name;
}

/// A .npy file as numpy writes it: format 1.0, header padded to 64.
std::string npyBytes(const std::string &dict, const std::string &data, int major = 1) {
  std::string h = dict;
  const size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + h.size() + 1) % 64)
    h += ' ';
  h += '\n';
  std::string out("\x93NUMPY", 6);
  out += char(major);
  out += char(0);
  out += char(h.size() & 0xff);
  out += char(h.size() >> 8);
  if (major != 1)
    out += std::string(2, '\0');
  return out + h + data;
}

} // namespace

TEST(Npy, RoundTripsEveryNumpyDtype) {
  const std::vector<Tensor> ts = {
      rnd({2, 3}, 1),
      rnd({4}, 2).astype(DType::kF16),
      D(DType::kF64, {2, 2}, {1.5, -2.25, 1e300, 0}),
      I64({3}, {-1, int64_t(1) << 50, 7}),
      I32({1, 1, 2}, {-5, 6}),
      D(DType::kI16, {2}, {-300, 300}),
      D(DType::kU16, {1}, {65535}),
      D(DType::kU32, {1}, {4000000000.0}),
      D(DType::kU64, {1}, {1e19}),
      B({3}, {true, false, true}),
      D(DType::kU8, {2}, {0, 255}),
      D(DType::kI8, {2}, {-128, 127}),
      F({}, {3.5f}),
      Tensor::zeros(DType::kF32, {0, 5}),
  };
  for (const Tensor &t : ts) {
    const std::string path = tempPath("rt.npy");
    ASSERT_TRUE(writeNpy(path, t).isOk()) << t.describe();
    StatusOr<Tensor> r = readNpy(path);
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    EXPECT_EQ(r->dtype(), t.dtype());
    EXPECT_EQ(r->shape(), t.shape());
    ASSERT_EQ(r->byteSize(), t.byteSize());
    EXPECT_EQ(std::memcmp(r->rawData(), t.rawData(), t.byteSize()), 0) << t.describe();
    std::remove(path.c_str());
  }
  // The data starts 64-byte aligned and the header is numpy's.
  std::string bytes = encodeNpy(F({2}, {1, 2})).value();
  EXPECT_EQ((bytes.size() - 8) % 64, 0u);
  EXPECT_NE(bytes.find("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"),
            std::string::npos);
  EXPECT_NE(encodeNpy(F({}, {1})).value().find("'shape': ()"), std::string::npos);
  EXPECT_NE(encodeNpy(iota({2, 3})).value().find("'shape': (2, 3)"), std::string::npos);
}

TEST(Npy, ParsesVersionTwoHeadersAndOtherSpellings) {
  std::string data(8, '\0');
  int64_t v = 42;
  std::memcpy(&data[0], &v, 8);
  StatusOr<Tensor> t =
      parseNpy(npyBytes("{\"descr\": \"<i8\", \"fortran_order\": False, \"shape\": (1, )}", data, 2).data(),
               npyBytes("{\"descr\": \"<i8\", \"fortran_order\": False, \"shape\": (1, )}", data, 2).size());
  ASSERT_TRUE(t.isOk()) << t.status().toString();
  EXPECT_EQ(t->toInt64s(), (std::vector<int64_t>{42}));
  std::string b = npyBytes("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", std::string("\x01\x00", 2));
  StatusOr<Tensor> bt = parseNpy(b.data(), b.size());
  ASSERT_TRUE(bt.isOk());
  EXPECT_EQ(bt->dtype(), DType::kI1);
}

TEST(Npy, CorruptFilesFailClearly) {
  auto err = [](const std::string &bytes) {
    StatusOr<Tensor> t = parseNpy(bytes.data(), bytes.size(), "x.npy");
    EXPECT_FALSE(t.isOk());
    return t.isOk() ? Status() : t.status();
  };
  Status s = err("PK\x03\x04 this is a zip");
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("not an npy file"), std::string::npos);
  EXPECT_NE(s.message().find("x.npy"), std::string::npos);
  std::string good = npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
                              std::string(16, '\0'));
  s = err(good.substr(0, 30));
  EXPECT_NE(s.message().find("truncated header"), std::string::npos);
  s = err(good.substr(0, good.size() - 1));
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("truncated data"), std::string::npos);
  s = err(npyBytes("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", "abcd"));
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("'>f4'"), std::string::npos);
  s = err(npyBytes("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", "abcdefgh"));
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  s = err(npyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
                   std::string(16, '\0')));
  EXPECT_NE(s.message().find("Fortran"), std::string::npos);
  s = err(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", ""));
  EXPECT_NE(s.message().find("shape"), std::string::npos);
  s = err(npyBytes("{'fortran_order': False, 'shape': (2,), }", ""));
  EXPECT_NE(s.message().find("descr"), std::string::npos);
  StatusOr<Tensor> missing = readNpy(tempPath("does-not-exist.npy"));
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  Status w = writeNpy(tempPath("bf16.npy"), rnd({2}, 1).astype(DType::kBF16));
  EXPECT_EQ(w.code(), StatusCode::kUnimplemented);
  EXPECT_NE(w.message().find("bf16"), std::string::npos);
}
