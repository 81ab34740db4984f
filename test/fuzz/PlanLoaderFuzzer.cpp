//===- PlanLoaderFuzzer.cpp - libFuzzer target for the plan loader --------===//
//
// Feeds arbitrary bytes to PlanFile::fromBytes and, when they load, prepares
// the CPU executor from them. Both must reject any input with a Status: no
// crash, abort, hang or unbounded allocation.
//
// Random mutations almost never keep the CRCs right, which would stop every
// input at the header. So when the input starts like a plan, the fuzzer
// first repairs the header CRC and (when the header places the metadata
// inside the input) the metadata CRC, and skips the section CRCs: the
// mutations then reach the protobuf parse and the schedule checks.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CpuExecutor.h"
#include "runtime/plan/PlanFile.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

using namespace accel::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  if (size >= plan::kHeaderSize && std::memcmp(data, plan::kMagic, 8) == 0) {
    auto get64 = [&](size_t off) {
      uint64_t v;
      std::memcpy(&v, bytes.data() + off, 8);
      return v;
    };
    uint64_t metaOffset = get64(24), metaSize = get64(32);
    if (metaOffset <= size && metaSize <= size - metaOffset) {
      uint32_t crc = plan::crc32c(bytes.data() + metaOffset, metaSize);
      std::memcpy(bytes.data() + 40, &crc, 4);
    }
    uint32_t headerCrc = plan::crc32c(bytes.data(), 60);
    std::memcpy(bytes.data() + 60, &headerCrc, 4);
  }
  plan::LoadOptions options;
  options.verifyChecksums = false;
  StatusOr<std::shared_ptr<const plan::PlanFile>> p =
      plan::PlanFile::fromBytes(bytes, "fuzz.plan", options);
  if (!p)
    return 0;
  StatusOr<std::unique_ptr<engine::CpuExecutor>> ex = engine::CpuExecutor::create(*p);
  (void)ex;
  return 0;
}
