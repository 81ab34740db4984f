//===- PlanFormat.cpp - header coding and CRC-32C --------------------------===//
#include "runtime/plan/PlanFormat.h"

#include <array>
#include <cstring>

namespace accel::rt::plan {

namespace {

// Slicing-by-8 tables for the reflected Castagnoli polynomial.
struct CrcTables {
  std::array<std::array<uint32_t, 256>, 8> t;
  CrcTables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int s = 1; s < 8; ++s)
        t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  }
};

const CrcTables &tables() {
  static const CrcTables tables;
  return tables;
}

void put32(char *p, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = char((v >> (8 * i)) & 0xFF);
}
void put64(char *p, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = char((v >> (8 * i)) & 0xFF);
}
uint32_t get32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}
uint64_t get64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

// Byte layout of the header.
constexpr size_t kOffMajor = 8, kOffMinor = 12, kOffFileSize = 16, kOffMetaOffset = 24,
                 kOffMetaSize = 32, kOffMetaCrc = 40, kOffTp = 44, kOffTarget = 48,
                 kTargetBytes = 12, kOffHeaderCrc = 60;

} // namespace

namespace {
uint32_t crc32cTable(const unsigned char *p, size_t size, uint32_t crc) {
  const auto &t = tables().t;
  while (size >= 8) {
    uint32_t lo = crc ^ (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
                         uint32_t(p[3]) << 24);
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^
          t[4][lo >> 24] ^ t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
    p += 8;
    size -= 8;
  }
  while (size--)
    crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xFF];
  return crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ACCEL_CRC32C_SSE42 1
/// The SSE4.2 crc32 instruction, 8 bytes at a time (three streams
/// interleaved would be faster still; one is ~8 GB/s).
__attribute__((target("sse4.2"))) uint32_t crc32cSse42(const unsigned char *p, size_t size,
                                                       uint32_t crc) {
  uint64_t c = crc;
  while (size && (reinterpret_cast<uintptr_t>(p) & 7)) {
    c = __builtin_ia32_crc32qi(uint32_t(c), *p++);
    --size;
  }
  while (size >= 32) {
    uint64_t a, b, d, e;
    std::memcpy(&a, p, 8);
    std::memcpy(&b, p + 8, 8);
    std::memcpy(&d, p + 16, 8);
    std::memcpy(&e, p + 24, 8);
    c = __builtin_ia32_crc32di(c, a);
    c = __builtin_ia32_crc32di(c, b);
    c = __builtin_ia32_crc32di(c, d);
    c = __builtin_ia32_crc32di(c, e);
    p += 32;
    size -= 32;
  }
  while (size >= 8) {
    uint64_t a;
    std::memcpy(&a, p, 8);
    c = __builtin_ia32_crc32di(c, a);
    p += 8;
    size -= 8;
  }
  while (size--)
    c = __builtin_ia32_crc32qi(uint32_t(c), *p++);
  return uint32_t(c);
}
bool haveSse42() {
  static const bool have = __builtin_cpu_supports("sse4.2");
  return have;
}
#endif

/// GF(2) 32x32 matrix times vector, and square (zlib's crc32_combine).
uint32_t gf2Times(const uint32_t *mat, uint32_t vec) {
  uint32_t sum = 0;
  for (; vec; vec >>= 1, ++mat)
    if (vec & 1)
      sum ^= *mat;
  return sum;
}
void gf2Square(uint32_t *square, const uint32_t *mat) {
  for (int n = 0; n < 32; ++n)
    square[n] = gf2Times(mat, mat[n]);
}
} // namespace

uint32_t crc32c(const void *data, size_t size, uint32_t crc) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
#ifdef ACCEL_CRC32C_SSE42
  if (haveSse42())
    return ~crc32cSse42(p, size, ~crc);
#endif
  return ~crc32cTable(p, size, ~crc);
}

uint32_t crc32cCombine(uint32_t crcA, uint32_t crcB, uint64_t lenB) {
  if (lenB == 0)
    return crcA;
  uint32_t even[32], odd[32];
  odd[0] = 0x82F63B78u; // the operator for one zero bit
  uint32_t row = 1;
  for (int n = 1; n < 32; ++n) {
    odd[n] = row;
    row <<= 1;
  }
  gf2Square(even, odd); // two zero bits
  gf2Square(odd, even); // four
  do {
    gf2Square(even, odd);
    if (lenB & 1)
      crcA = gf2Times(even, crcA);
    lenB >>= 1;
    if (!lenB)
      break;
    gf2Square(odd, even);
    if (lenB & 1)
      crcA = gf2Times(odd, crcA);
    lenB >>= 1;
  } while (lenB);
  return crcA ^ crcB;
}

std::string encodeHeader(const Header &h) {
  std::string out(kHeaderSize, '\0');
  char *p = out.data();
  std::memcpy(p, kMagic, sizeof(kMagic));
  put32(p + kOffMajor, h.major);
  put32(p + kOffMinor, h.minor);
  put64(p + kOffFileSize, h.fileSize);
  put64(p + kOffMetaOffset, h.metadataOffset);
  put64(p + kOffMetaSize, h.metadataSize);
  put32(p + kOffMetaCrc, h.metadataCrc);
  put32(p + kOffTp, h.tpSize);
  std::memcpy(p + kOffTarget, h.target.data(), std::min(h.target.size(), kTargetBytes - 1));
  put32(p + kOffHeaderCrc, crc32c(p, kOffHeaderCrc));
  return out;
}

StatusOr<Header> decodeHeader(const void *data, size_t size, uint64_t fileSize,
                              const std::string &path) {
  auto dataLoss = [&](const std::string &msg) {
    return Status(StatusCode::kDataLoss, path + ": " + msg);
  };
  const auto *p = static_cast<const unsigned char *>(data);
  if (size < sizeof(kMagic) || std::memcmp(p, kMagic, sizeof(kMagic)) != 0)
    return Status(StatusCode::kInvalidArgument,
                  path + ": not an accel plan (the file does not start with 'ACCELPLN')");
  if (size < kHeaderSize)
    return dataLoss("the plan is truncated: " + std::to_string(size) +
                    " bytes, shorter than its 64-byte header");
  Header h;
  h.major = get32(p + kOffMajor);
  h.minor = get32(p + kOffMinor);
  if (h.major != kFormatMajor)
    return Status(StatusCode::kInvalidArgument,
                  path + ": plan format version " + std::to_string(h.major) + "." +
                      std::to_string(h.minor) + " is not supported (this accel-run reads " +
                      std::to_string(kFormatMajor) + ".x; recompile the model with this accelc)");
  if (get32(p + kOffHeaderCrc) != crc32c(p, kOffHeaderCrc))
    return dataLoss("the plan header is corrupt (checksum mismatch)");
  h.fileSize = get64(p + kOffFileSize);
  h.metadataOffset = get64(p + kOffMetaOffset);
  h.metadataSize = get64(p + kOffMetaSize);
  h.metadataCrc = get32(p + kOffMetaCrc);
  h.tpSize = get32(p + kOffTp);
  const char *target = reinterpret_cast<const char *>(p + kOffTarget);
  h.target.assign(target, strnlen(target, kTargetBytes));
  if (fileSize < h.fileSize)
    return dataLoss("the plan is truncated: the header says " + std::to_string(h.fileSize) +
                    " bytes, the file has " + std::to_string(fileSize));
  if (fileSize > h.fileSize)
    return dataLoss("the plan has " + std::to_string(fileSize - h.fileSize) +
                    " unexpected trailing bytes (the header says " +
                    std::to_string(h.fileSize) + " bytes)");
  if (h.metadataOffset < kHeaderSize || h.metadataOffset > h.fileSize ||
      h.metadataSize > h.fileSize - h.metadataOffset)
    return dataLoss("the plan header places its metadata outside the file");
  if (h.tpSize == 0)
    return dataLoss("the plan header says tensor-parallel size 0");
  return h;
}

} // namespace accel::rt::plan
