//===- PlanFormat.h - the fixed binary frame of a plan file -----*- C++ -*-===//
//
// What the plan writer (lib/Plan) and the loader (PlanFile) agree on: the
// 64-byte header at offset 0, the 4 KiB section alignment, and CRC-32C.
// docs/plan-format.md describes the whole file.
//
//   offset 0     header (64 bytes, little-endian), zero-padded to 4096
//   4096         sections, each at a multiple of 4096, zero-padded between
//   after them   metadata: a serialized accel.plan.PlanMetadata (Plan.proto)
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_PLAN_PLANFORMAT_H
#define ACCEL_RUNTIME_PLAN_PLANFORMAT_H

#include "core/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace accel::rt::plan {

/// "ACCELPLN".
inline constexpr char kMagic[8] = {'A', 'C', 'C', 'E', 'L', 'P', 'L', 'N'};
/// A reader accepts every minor version of its major version; a new major
/// version means an old reader cannot run the plan.
inline constexpr uint32_t kFormatMajor = 2;
inline constexpr uint32_t kFormatMinor = 0;
inline constexpr size_t kHeaderSize = 64;
inline constexpr uint64_t kSectionAlignment = 4096;
/// Offsets of constant tensors inside a weights section.
inline constexpr uint64_t kTensorAlignment = 64;

struct Header {
  uint32_t major = kFormatMajor;
  uint32_t minor = kFormatMinor;
  uint64_t fileSize = 0;
  uint64_t metadataOffset = 0;
  uint64_t metadataSize = 0;
  uint32_t metadataCrc = 0;
  uint32_t tpSize = 1;
  std::string target; // at most 11 bytes: "cpu", "sm_90"
};

/// The 64 header bytes of `h` (with its own CRC in the last 4).
std::string encodeHeader(const Header &h);

/// Parses and checks the first `size` bytes of a file of `fileSize` bytes:
/// magic, version, header CRC, and that the metadata lies inside the file.
/// Messages name `path` and say what is wrong in one sentence.
StatusOr<Header> decodeHeader(const void *data, size_t size, uint64_t fileSize,
                              const std::string &path);

/// CRC-32C (Castagnoli, as iSCSI and ext4 use), continuing from `crc`
/// (0 for a fresh checksum).
/// Uses the SSE4.2 crc32 instruction where the CPU has it.
uint32_t crc32c(const void *data, size_t size, uint32_t crc = 0);

/// The CRC-32C of A followed by B, from A's, B's and B's length (so that
/// pieces of a section checksummed on several threads combine in order).
uint32_t crc32cCombine(uint32_t crcA, uint32_t crcB, uint64_t lenB);

inline uint64_t alignUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

} // namespace accel::rt::plan

#endif // ACCEL_RUNTIME_PLAN_PLANFORMAT_H
