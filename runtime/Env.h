//===- Env.h - every environment variable the runtime reads -----*- C++ -*-===//
//
// One table (envTable(), Env.cpp) names each ACCEL_* variable the runtime
// reads: its type, its default and what it does. The values are parsed once,
// at the first call of env(), into an Env; no other runtime code calls
// getenv for them. A value that does not parse leaves the default in place
// and makes envStatus() say so in one sentence; accel-run, accel-bench, the
// C API's accel_model_load and GpuExecutor::create refuse to run with it.
// Experiment switches that were removed (their measurements are in
// docs/performance.md) are refused the same way while they are set, so an
// A/B run cannot silently measure the default twice. docs/env.md is the
// table as `accel-run --help-env` prints it (checked by ctest docs-match-env).
//
// Tuning knobs that tests flip live in option structs
// (engine::GpuExecutorOptions::tuning); an environment variable at most
// gives such a field its default.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_ENV_H
#define ACCEL_RUNTIME_ENV_H

#include "core/Status.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace accel::rt {

/// Keys per split-KV chunk of a decode step when nothing else says
/// (GraphBuckets.h decodeSplitFor).
constexpr int64_t kDefaultDecodeSplit = 256;

/// The parsed values; each member's initialiser is the variable's default.
struct Env {
  std::string libcuda = "libcuda.so.1"; // ACCEL_LIBCUDA
  std::string libcublasLt;              // ACCEL_LIBCUBLASLT ("": CublasLt.cpp's search)
  std::string libnccl = "libnccl.so.2"; // ACCEL_LIBNCCL
  bool gpuGraphs = true;                // ACCEL_GPU_GRAPHS
  bool gpuProfile = false;              // ACCEL_GPU_PROFILE
  bool gpuForcePtx = false;             // ACCEL_GPU_FORCE_PTX
  bool gpuDecodeKeyParallel = true;     // ACCEL_GPU_DECODE_KEY_PARALLEL
  bool gemmAutotune = true;             // ACCEL_GEMM_AUTOTUNE
  int64_t gpuDecodeKpVariant = 0;        // ACCEL_GPU_DECODE_KP_VARIANT
  int64_t gpuDecodeSplit = kDefaultDecodeSplit; // ACCEL_GPU_DECODE_SPLIT
  int64_t gpuW4Unroll = 4;              // ACCEL_GPU_W4_UNROLL
  bool gpuW4Prefetch = true;            // ACCEL_GPU_W4_PREFETCH
  bool gpuMoeMma = false;               // ACCEL_GPU_MOE_MMA
  std::string apiKey;                   // ACCEL_API_KEY ("": none)
  int64_t ppMicroBatches = 0;           // ACCEL_PP_MICRO_BATCHES (0: the stage count)
  std::string ppTrace;                  // ACCEL_PP_TRACE ("": none)
};

/// kText is any text, like kPath, and is held in a string member too.
enum class EnvType { kPath, kBool, kCount, kText };

/// One row of the table: `member` is the Env field the variable sets (the
/// one matching `type`; `path` for kPath and kText).
struct EnvVar {
  const char *name;
  EnvType type;
  const char *defaultText; // as --help-env prints it
  const char *meaning;     // one line
  std::string Env::*path = nullptr;
  bool Env::*flag = nullptr;
  int64_t Env::*count = nullptr;
};

/// A variable the runtime no longer reads and what took its place.
struct RemovedEnvVar {
  const char *name;
  const char *instead;
};

const std::vector<EnvVar> &envTable();
const std::vector<RemovedEnvVar> &removedEnvTable();

/// Looks a variable up: its value, or null when it is unset.
using EnvLookup = std::function<const char *(const char *name)>;

struct ParsedEnv {
  Env values;
  /// ok, or the first bad variable in table order (then the removed ones),
  /// in one sentence: the name, the value and what is accepted.
  Status status;
};

/// Parses every table entry through `lookup` (pure: env() passes getenv).
/// An unset or empty variable keeps its default. Booleans take 1, true, yes,
/// on or 0, false, no, off (any case); counts a decimal whole number from 0
/// to 2147483647; paths and texts any text.
ParsedEnv parseEnv(const EnvLookup &lookup);

/// The process environment, parsed at the first call (thread-safe).
const Env &env();
/// Whether the process environment parsed (see ParsedEnv::status).
Status envStatus();

/// The tables as Markdown (what `accel-run --help-env` prints and
/// docs/env.md holds between its markers).
std::string envHelp();

} // namespace accel::rt

#endif // ACCEL_RUNTIME_ENV_H
