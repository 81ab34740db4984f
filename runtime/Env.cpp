//===- Env.cpp - the table of environment variables -----------------------===//
#include "runtime/Env.h"

#include <cctype>
#include <cstdlib>

namespace accel::rt {

const std::vector<EnvVar> &envTable() {
  static const std::vector<EnvVar> table = [] {
    std::vector<EnvVar> t;
    auto path = [&](const char *name, const char *def, const char *meaning,
                    std::string Env::*m) { t.push_back({name, EnvType::kPath, def, meaning, m}); };
    auto flag = [&](const char *name, const char *def, const char *meaning, bool Env::*m) {
      t.push_back({name, EnvType::kBool, def, meaning, nullptr, m});
    };
    auto count = [&](const char *name, const char *def, const char *meaning, int64_t Env::*m) {
      t.push_back({name, EnvType::kCount, def, meaning, nullptr, nullptr, m});
    };
    auto text = [&](const char *name, const char *def, const char *meaning,
                    std::string Env::*m) { t.push_back({name, EnvType::kText, def, meaning, m}); };
    path("ACCEL_LIBCUDA", "libcuda.so.1",
         "the CUDA driver library (dlopen: a path, or a name the loader finds)", &Env::libcuda);
    path("ACCEL_LIBCUBLASLT", "(search)",
         "cuBLASLt; unset: libcublasLt.so.13 or .12 on the loader path, in /usr/local/cuda/lib64 "
         "or in Python's nvidia-cublas package",
         &Env::libcublasLt);
    path("ACCEL_LIBNCCL", "libnccl.so.2",
         "NCCL 2.10 or later, for tensor-parallel GPU plans", &Env::libnccl);
    flag("ACCEL_GPU_GRAPHS", "1",
         "decode steps replay CUDA graphs; 0 runs them eagerly, as --enforce-eager does",
         &Env::gpuGraphs);
    flag("ACCEL_GPU_PROFILE", "0",
         "1: synchronise around every GPU step (graphs off) and print each op's time to stderr "
         "when the executor closes",
         &Env::gpuProfile);
    flag("ACCEL_GPU_FORCE_PTX", "0",
         "1: load a plan's generated kernels from its PTX even when its cubin matches the GPU",
         &Env::gpuForcePtx);
    flag("ACCEL_GEMM_AUTOTUNE", "1",
         "time cuBLASLt's candidate algorithms for GEMMs of up to 512 rows; 0 keeps its first "
         "pick",
         &Env::gemmAutotune);
    flag("ACCEL_GPU_DECODE_KEY_PARALLEL", "1",
         "the default of GpuExecutorOptions::tuning.decodeKeyParallel: bf16/f16 decode steps "
         "with at most 4 query heads per KV head run decode_attention_kp; 0: decode_attention",
         &Env::gpuDecodeKeyParallel);
    count("ACCEL_GPU_DECODE_KP_VARIANT", "0",
          "the default of GpuExecutorOptions::tuning.decodeKpVariant: which build of "
          "decode_attention_kp decode steps run (0, or 1-3: the variants of "
          "DecodeAttentionKP.cu, for measuring them); over 3 is an error",
          &Env::gpuDecodeKpVariant);
    count("ACCEL_GPU_DECODE_SPLIT", "256",
           "the default of GpuExecutorOptions::tuning.decodeSplit: keys per split-KV chunk of "
          "decode steps whose longest context is over twice that; 0: no split by length",
          &Env::gpuDecodeSplit);
    count("ACCEL_GPU_W4_UNROLL", "4",
          "the default of GpuExecutorOptions::tuning.w4Unroll: the 64-column chunks of a 4-bit "
          "weight each lane of gemm_w4 keeps in flight at up to 16 rows of x, 4 or 8 (for "
          "measuring them); other values are an error",
          &Env::gpuW4Unroll);
    flag("ACCEL_GPU_W4_PREFETCH", "1",
         "the default of GpuExecutorOptions::tuning.w4Prefetch: 4-bit GEMMs of more than 64 rows "
         "get their weight dequantised a GEMM ahead on a side stream; 0 dequantises each when "
         "its GEMM runs (for measuring them)",
         &Env::gpuW4Prefetch);
    flag("ACCEL_GPU_MOE_MMA", "0",
         "the default of GpuExecutorOptions::tuning.moeMma: bf16/f16 moe steps that take the "
         "expert-batched GEMV (decode, CUDA graphs) run its tensor-core form, moe_mma_* (for "
         "measuring it)",
         &Env::gpuMoeMma);
    text("ACCEL_API_KEY", "(none)",
         "the HTTP server's API key when --api-key is not given: every /v1/ request then needs "
         "'Authorization: Bearer <key>' (docs/serving.md)",
         &Env::apiKey);
    count("ACCEL_PP_MICRO_BATCHES", "0",
          "the default of TpCpuExecutorOptions::microBatches (EngineOptions::ppMicroBatches), "
          "and what TpGpuExecutor uses: the micro-batches a pipelined (-pp) plan's step is split "
          "into; 0: one per stage (on GPUs: one per stage when the stages have GPUs of their "
          "own, else one), 1: the whole step through one stage after the other",
          &Env::ppMicroBatches);
    path("ACCEL_PP_TRACE", "(none)",
         "a pipelined (-pp) plan appends one JSON line per engine step to this file: its "
         "tokens, micro-batches and each stage's busy and idle milliseconds (docs/serving.md)",
         &Env::ppTrace);
    return t;
  }();
  return table;
}

const std::vector<RemovedEnvVar> &removedEnvTable() {
  static const std::vector<RemovedEnvVar> table = {
      {"ACCEL_GPU_GEMV", "one-row GEMMs always run Gemv.cu's kernels where they apply"},
      {"ACCEL_GPU_GEMV_SINGLE_ROUND", "bf16/f16 GEMVs always run the single-round gemv_m1_sr kernels"},
      {"ACCEL_GPU_GEMV_KS", "gemvShape (GemvShape.h) always picks the split-K"},
      {"ACCEL_GPU_GEMV_WARPS", "gemvShape aims at 49152 warps"},
      {"ACCEL_GPU_DECODE_ATTENTION", "decode steps run the decode_attention kernels wherever they apply"},
      {"ACCEL_GPU_PDL", "programmatic dependent launch is always on (sm_90 and later)"},
      {"ACCEL_GPU_TP_PERSISTENT_THREADS", "tensor-parallel ranks always run on persistent threads"},
      {"ACCEL_GPU_FLASH_PREFILL", "GpuExecutorOptions::tuning.flashPrefill (default on)"},
      {"ACCEL_GPU_FP8_OUTER_SCALES",
       "GpuExecutorOptions::tuning.fp8OuterScalesMinRows (default 129)"},
      {"ACCEL_GPU_P2P_ALLREDUCE", "GpuExecutorOptions::tuning.p2pAllReduce (default on)"},
  };
  return table;
}

namespace {

std::string lower(std::string s) {
  for (char &c : s)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool parseBool(const std::string &v, bool &out) {
  const std::string l = lower(v);
  const bool yes = l == "1" || l == "true" || l == "yes" || l == "on";
  const bool no = l == "0" || l == "false" || l == "no" || l == "off";
  if (yes || no)
    out = yes;
  return yes || no;
}

constexpr int64_t kMaxCount = 2147483647;

bool parseCount(const std::string &v, int64_t &out) {
  if (v.empty() || v.size() > 10)
    return false;
  int64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9')
      return false;
    n = n * 10 + (c - '0');
  }
  if (n > kMaxCount)
    return false;
  out = n;
  return true;
}

Status bad(const EnvVar &var, const std::string &value, const char *accepted) {
  return invalidArgument(std::string(var.name) + " is '" + value + "'; it takes " + accepted +
                         " (docs/env.md)");
}

} // namespace

ParsedEnv parseEnv(const EnvLookup &lookup) {
  ParsedEnv p;
  auto note = [&](Status s) {
    if (p.status.isOk())
      p.status = std::move(s);
  };
  for (const EnvVar &var : envTable()) {
    const char *raw = lookup(var.name);
    if (!raw || !*raw)
      continue;
    const std::string v = raw;
    switch (var.type) {
    case EnvType::kPath:
    case EnvType::kText:
      p.values.*var.path = v;
      break;
    case EnvType::kBool:
      if (!parseBool(v, p.values.*var.flag))
        note(bad(var, v, "1, true, yes or on, or 0, false, no or off"));
      break;
    case EnvType::kCount:
      if (!parseCount(v, p.values.*var.count))
        note(bad(var, v, "a whole number from 0 to 2147483647"));
      break;
    }
  }
  for (const RemovedEnvVar &var : removedEnvTable())
    if (const char *raw = lookup(var.name); raw && *raw)
      note(invalidArgument(std::string(var.name) + " is set to '" + raw +
                           "', but accel no longer reads it: " + var.instead +
                           "; unset it (docs/env.md)"));
  return p;
}

namespace {
const ParsedEnv &processEnv() {
  static const ParsedEnv p = parseEnv([](const char *name) { return std::getenv(name); });
  return p;
}
} // namespace

const Env &env() { return processEnv().values; }

Status envStatus() { return processEnv().status; }

std::string envHelp() {
  std::string s = "| variable | type | default | meaning |\n|---|---|---|---|\n";
  for (const EnvVar &var : envTable()) {
    const char *type = var.type == EnvType::kPath   ? "path"
                       : var.type == EnvType::kText ? "text"
                       : var.type == EnvType::kBool ? "bool"
                                                    : "count";
    const std::string def = var.defaultText[0] == '(' ? std::string(var.defaultText)
                                                      : std::string("`") + var.defaultText + "`";
    s += std::string("| `") + var.name + "` | " + type + " | " + def + " | " + var.meaning +
         " |\n";
  }
  s += "\nRemoved; accel refuses to start while one is set:\n\n"
       "| variable | instead |\n|---|---|\n";
  for (const RemovedEnvVar &var : removedEnvTable())
    s += std::string("| `") + var.name + "` | " + var.instead + " |\n";
  return s;
}

} // namespace accel::rt
