//===- accel-run.cpp - run a compiled plan --------------------------------===//
//
//   accel-run model.plan --score ids.npy --logits-out logits.npy [--chunk N]
//   accel-run model.plan --prompt "text" [-n 64] [--temperature T] [--top-p P]
//                        [--top-k K] [--seed S]
//   accel-run model.plan --describe
//   accel-run model.plan --render-chat chat.json [--chat-template T]
//   accel-run model.plan [--host H] [--port P] [--max-num-seqs N] ...   (serve)
//
// Thin: parses flags and hands over to runtime/. Links no LLVM or MLIR.
//
//===----------------------------------------------------------------------===//
#include "runtime/Env.h"
#include "runtime/Version.h"
#include "core/Npy.h"
#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/GpuExecutor.h"
#include "runtime/engine/Engine.h"
#include "runtime/engine/TextGeneration.h"
#include "runtime/plan/Describe.h"
#include "runtime/serving/http/Serve.h"
#include "RenderChat.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

using namespace accel::rt;

namespace {

void printUsage() {
  std::puts(
      "usage: accel-run <model.plan> [options]\n"
      "\n"
      "Scoring (logits at every position):\n"
      "  --score <ids.npy>        token ids, int32/int64 [S] or [1, S]\n"
      "  --logits-out <out.npy>   where to write float32 logits [1, S, vocab]\n"
      "  --chunk <N>              feed N tokens per step through the KV cache\n"
      "                           (0, the default: the whole sequence; 1: decode)\n"
      "\n"
      "Generation:\n"
      "  --prompt <text>          the prompt (the plan must carry a tokenizer)\n"
      "  --prompt-ids <ids.npy>   the prompt as token ids instead\n"
      "  -n, --max-tokens <N>     tokens to generate (default 64)\n"
      "  --temperature <T>        0 is greedy (default 0)\n"
      "  --top-p <P>  --top-k <K>  --min-p <P>  --repetition-penalty <R>\n"
      "  --frequency-penalty <F>  --presence-penalty <P>  in [-2, 2], OpenAI's\n"
      "  --seed <S>               make sampling reproducible\n"
      "  --stop <text>            stop before this text (repeatable)\n"
      "  --ignore-eos             do not stop at the end-of-sequence token\n"
      "  --print-ids              also print the generated token ids\n"
      "\n"
      "Speculative decoding (generation and serving; docs/cli.md):\n"
      "  --speculative-method ngram|draft  propose tokens by prompt lookup, or with\n"
      "                           the --draft plan\n"
      "  --num-speculative-tokens <K>  tokens proposed per step, 1..16\n"
      "  --speculative-ngram-max <N>  --speculative-ngram-min <N>  the n-gram\n"
      "                           lengths looked up, longest first (default 4, 1)\n"
      "  --draft <draft.plan>     a small plan with the same tokenizer that proposes\n"
      "                           (implies --speculative-method draft)\n"
      "\n"
      "Serving (the default without --score/--prompt/--describe; docs/serving.md):\n"
      "  --host <addr>            address to listen on (default 127.0.0.1)\n"
      "  --port <N>               port (default 8000; 0: any free port)\n"
      "  --served-model-name <n>  the model id in the API (repeatable; default:\n"
      "                           the plan's file name without .plan)\n"
      "  --max-num-seqs <N>       running sequences per step (default 64)\n"
      "  --max-num-batched-tokens <N>  tokens per engine step (default 2048)\n"
      "  --max-waiting <N>        waiting queue; beyond it 429 (default 1024)\n"
      "  --kv-cache-memory <size> KV cache bytes, e.g. 512MiB (default 256MiB)\n"
      "  --num-kv-blocks <N>      KV cache blocks (overrides --kv-cache-memory)\n"
      "  --enable-prefix-caching  share full KV blocks between prompts\n"
      "  --max-logprobs <N>       largest logprobs/top_logprobs (default 20)\n"
      "  --sampler-threads <N>    threads that sample a step's sequences (default: automatic)\n"
      "  --chat-template <name>   auto, chatml, llama3, plain, or a Jinja file\n"
      "                           (default auto: the plan's template, else chosen\n"
      "                           from the tokenizer's special tokens)\n"
      "  --tool-call-parser <name>  how tool calls are read from replies: hermes,\n"
      "                           llama3_json, mistral, none (default auto: the chat\n"
      "                           template's family; none for built-in formats)\n"
      "  --admission-ttft-target <s>  p95 time to first token the admission\n"
      "                           limit aims at (default 10; 0: off)\n"
      "  --io-threads <N>         HTTP IO threads (default 2)\n"
      "  --shutdown-timeout <s>   on SIGTERM/SIGINT, how long requests in flight may\n"
      "                           finish before they end with an error (default 30)\n"
      "  --api-key <key>          /v1/ requests need 'Authorization: Bearer <key>'\n"
      "                           (default: $ACCEL_API_KEY; none when unset)\n"
      "  --allowed-hosts <a,b>    Host header names accepted ('*': any; default on a\n"
      "                           loopback --host: localhost,127.0.0.1,::1; else any)\n"
      "  --allowed-origins <o,p>  browser origins allowed cross-site, with CORS\n"
      "                           (e.g. https://app.example; '*': any; default none)\n"
      "  --max-prompt-bytes <size>  longest prompt text tokenized; 413 beyond it\n"
      "                           (default 16 B per token of context, >= 1MiB)\n"
      "  --max-request-bytes <size> longest request body; 413 beyond it (default 8MiB)\n"
      "\n"
      "Common:\n"
      "  --max-model-len <N>      longest sequence (default: the model's positions)\n"
      "  --no-verify-checksums    skip the CRC check of the weights at load\n"
      "  --dtype f32|bf16|f16     GPU plans: the compute dtype (default: the plan's, from\n"
      "                           accelc -precision; f32 when it records none)\n"
      "  --device <N>             GPU plans: the CUDA device (default 0; with --tp-rank:\n"
      "                           $LOCAL_RANK, $OMPI_COMM_WORLD_LOCAL_RANK, $SLURM_LOCALID\n"
      "                           or $MPI_LOCALRANKID, else the rank modulo the GPUs)\n"
      "  --tp-master <host:port>  a tensor-parallel plan as one process per rank (GPU\n"
      "                           plans: one GPU each, NCCL between them): rank 0\n"
      "                           listens there, the others connect\n"
      "  --tp-rank <R>            this process's rank (default: $OMPI_COMM_WORLD_RANK,\n"
      "                           $PMI_RANK, $SLURM_PROCID or $RANK); rank 0 alone\n"
      "                           writes --logits-out and prints; serving: rank 0\n"
      "                           serves and the others run the steps it sends\n"
      "  --tp-timeout <s>         how long ranks wait for each other (default 120)\n"
      "  --gpu-memory-utilization <F>  GPU plans: the fraction of the GPU's memory to\n"
      "                           use; the KV cache gets what weights and activations\n"
      "                           leave (default 0.9; --kv-cache-memory and\n"
      "                           --num-kv-blocks override it)\n"
      "  --enforce-eager          GPU plans: no CUDA graphs for decode steps\n"
      "  --share-gpus             GPU plans of more tensor-parallel ranks than GPUs:\n"
      "                           the ranks share the GPUs there are, every collective\n"
      "                           through the one-shot all-reduce (tests; slow)\n"
      "  --pp-micro-batches <N>   pipelined (-pp) plans: the micro-batches a step is\n"
      "                           split into (default: $ACCEL_PP_MICRO_BATCHES, else\n"
      "                           one per stage; on GPUs one when the stages share\n"
      "                           GPUs)\n"
      "  --cuda-graph-max-bs <N>  GPU plans: the largest decode batch replayed from a\n"
      "                           CUDA graph (default: --max-num-seqs)\n"
      "  --describe               print the plan's header, sections and schedule\n"
      "  --render-chat <chat.json>  print the prompt the chat template makes of these\n"
      "                           messages (with --chat-template; --print-ids: and its\n"
      "                           token ids, on stderr), then exit\n"
      "  --list-devices           list the GPUs the CUDA driver sees, then exit\n"
      "  --version                print the version, then exit\n"
      "  --help-env               list the ACCEL_* environment variables, then exit\n"
      "  -h, --help               print this help, then exit\n");
}

int listDevices() {
  StatusOr<CudaDriver *> driver = CudaDriver::get();
  if (!driver) {
    std::fprintf(stderr, "accel-run: %s\n", driver.status().message().c_str());
    return 1;
  }
  StatusOr<std::vector<GpuInfo>> gpus = (*driver)->listDevices();
  if (!gpus) {
    std::fprintf(stderr, "accel-run: %s\n", gpus.status().message().c_str());
    return 1;
  }
  std::printf("CUDA driver %d.%d, %zu GPU(s)\n", (*driver)->driverVersion() / 1000,
              ((*driver)->driverVersion() % 1000) / 10, gpus->size());
  for (const GpuInfo &g : *gpus)
    std::printf("  %d: %s, sm_%d%d, %d SMs, %.1f GiB\n", g.ordinal, g.name.c_str(),
                g.smMajor, g.smMinor, g.multiprocessors,
                double(g.totalMemoryBytes) / (1024.0 * 1024 * 1024));
  return 0;
}

int fail(const Status &s) {
  std::fprintf(stderr, "accel-run: %s\n", s.message().c_str());
  switch (s.code()) {
  case StatusCode::kInvalidArgument:
  case StatusCode::kNotFound:
    return 2;
  default:
    return 1;
  }
}

int usageError(const std::string &msg) {
  std::fprintf(stderr, "accel-run: %s (see --help)\n", msg.c_str());
  return 2;
}

struct Flags {
  std::string plan;
  std::string score, logitsOut, prompt, promptIds;
  bool havePrompt = false;
  int64_t chunk = 0;
  int64_t maxTokens = 64;
  int64_t maxModelLen = 0;
  double temperature = 0.0, topP = 1.0, minP = 0.0, repetitionPenalty = 1.0;
  double frequencyPenalty = 0.0, presencePenalty = 0.0;
  int64_t topK = 0;
  std::optional<uint64_t> seed;
  std::vector<std::string> stop;
  DType dtype = DType::kF32; // GPU plans: the compute dtype
  bool dtypeGiven = false;    // else the plan's compute_dtype
  int64_t device = 0;
  bool deviceGiven = false;
  int64_t tpRank = -1;     // one process per tensor-parallel rank (--tp-rank)
  std::string tpMaster;    // rank 0's host:port
  double tpTimeout = 120.0;
  double gpuMemoryUtilization = 0.9;
  bool enforceEager = false;
  bool shareGpus = false;
  int64_t ppMicroBatches = 0; // 0: the engine's default
  int64_t cudaGraphMaxBs = 0; // 0: --max-num-seqs
  bool kvSizeGiven = false;   // --kv-cache-memory or --num-kv-blocks
  bool ignoreEos = false, printIds = false, describe = false, verify = true;
  std::string renderChat; // --render-chat: the chat JSON file
  // Speculative decoding.
  engine::SpeculativeConfig spec;
  bool specFlag = false, methodGiven = false, kGiven = false;
  // Serve mode.
  server::ServeOptions serve;
  bool anyServeFlag = false;
};

/// Parses an integer flag value; false when it is not one.
bool parseInt(const char *s, int64_t &out) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(s, &end, 10);
  if (errno || end == s || *end)
    return false;
  out = v;
  return true;
}
bool parseDouble(const char *s, double &out) {
  char *end = nullptr;
  errno = 0;
  double v = std::strtod(s, &end);
  if (errno || end == s || *end)
    return false;
  out = v;
  return true;
}

std::vector<int64_t> idsOf(const Tensor &t) { return t.toInt64s(); }

int runScore(engine::Engine &e, const Flags &f) {
  StatusOr<Tensor> ids = readNpy(f.score);
  if (!ids)
    return fail(ids.status());
  if (!isInteger(ids->dtype()) || !(ids->rank() == 1 || (ids->rank() == 2 && ids->dim(0) == 1)))
    return fail(Status(StatusCode::kInvalidArgument,
                       f.score + ": the token ids must be integers of shape [S] or [1, S], got " +
                           ids->describe()));
  StatusOr<Tensor> logits = e.score(idsOf(*ids), f.chunk);
  if (!logits)
    return fail(logits.status());
  StatusOr<Tensor> shaped = logits->reshaped({1, logits->dim(0), logits->dim(1)});
  if (!shaped)
    return fail(shaped.status());
  if (f.tpRank > 0)
    return 0; // rank 0 writes the logits
  if (Status s = writeNpy(f.logitsOut, *shaped); !s.isOk())
    return fail(s);
  std::fprintf(stderr, "accel-run: wrote logits %s to %s\n", shaped->describe().c_str(),
               f.logitsOut.c_str());
  return 0;
}

int runGenerate(engine::Engine &e, const Flags &f) {
  StatusOr<std::unique_ptr<engine::TextGenerator>> gen = engine::TextGenerator::create(e);
  if (!gen)
    return fail(gen.status());
  engine::GenerationRequest req;
  if (!f.promptIds.empty()) {
    StatusOr<Tensor> ids = readNpy(f.promptIds);
    if (!ids)
      return fail(ids.status());
    if (!isInteger(ids->dtype()) || !(ids->rank() == 1 || (ids->rank() == 2 && ids->dim(0) == 1)))
      return fail(Status(StatusCode::kInvalidArgument,
                         f.promptIds + ": the prompt ids must be integers of shape [S] or [1, S], "
                                       "got " + ids->describe()));
    req.promptIds = ids->toInt64s();
    if (req.promptIds.empty())
      return fail(Status(StatusCode::kInvalidArgument, f.promptIds + ": the prompt is empty"));
  } else {
    req.prompt = f.prompt;
  }
  req.maxTokens = f.maxTokens;
  req.sampling.temperature = float(f.temperature);
  req.sampling.topP = float(f.topP);
  req.sampling.topK = f.topK;
  req.sampling.minP = float(f.minP);
  req.sampling.repetitionPenalty = float(f.repetitionPenalty);
  req.sampling.frequencyPenalty = float(f.frequencyPenalty);
  req.sampling.presencePenalty = float(f.presencePenalty);
  req.sampling.seed = f.seed;
  req.stop = f.stop;
  req.ignoreEos = f.ignoreEos;

  std::unique_ptr<engine::Speculator> spec;
  if (f.spec.enabled()) {
    StatusOr<std::unique_ptr<engine::Speculator>> s =
        engine::Speculator::create(e, f.spec, f.serve.scheduler.draftEngine);
    if (!s)
      return fail(s.status());
    spec = std::move(*s);
    (*gen)->setSpeculator(spec.get());
  }
  const bool text = (*gen)->hasTokenizer();
  bool echoed = false;
  auto start = std::chrono::steady_clock::now();
  StatusOr<engine::GenerationResult> r =
      (*gen)->generate(req, [&](std::string_view piece) {
        if (!echoed && !f.prompt.empty()) {
          std::fputs(f.prompt.c_str(), stdout);
          echoed = true;
        }
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
      });
  if (!r) {
    if (echoed)
      std::fputc('\n', stdout);
    return fail(r.status());
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (text) {
    if (!echoed)
      std::fputs(f.prompt.c_str(), stdout);
    std::fputc('\n', stdout);
  }
  if (f.printIds || !text) {
    std::printf("ids:");
    for (int64_t t : r->tokens)
      std::printf(" %lld", (long long)t);
    std::printf("\n");
  }
  std::fflush(stdout);
  std::fprintf(stderr,
               "accel-run: %zu prompt + %zu generated tokens in %.2f s (%.1f tokens/s), "
               "finish: %s\n",
               r->promptIds.size(), r->tokens.size(), secs,
               secs > 0 ? double(r->tokens.size()) / secs : 0.0, r->finishReason.c_str());
  if (spec)
    std::fprintf(stderr, "accel-run: speculative (%s, K=%lld): %s\n",
                 f.spec.method == engine::SpeculativeMethod::kNgram ? "ngram" : "draft",
                 (long long)f.spec.numTokens, r->speculative.summary().c_str());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Flags f;
  bool anyPromptFlag = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *&out) -> bool {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    const char *v = nullptr;
    auto needValue = [&]() { return usageError("option '" + arg + "' needs a value"); };
    auto badValue = [&]() {
      return usageError("option '" + arg + "' got '" + std::string(v) + "', not a number");
    };
    if (arg == "-h" || arg == "--help") {
      printUsage();
      return 0;
    }
    if (arg == "--version") {
      std::printf("accel-run %s (plan format %u.x)\n", kAccelVersion, unsigned(plan::kFormatMajor));
      return 0;
    }
    if (arg == "--help-env") {
      std::fputs(envHelp().c_str(), stdout);
      return 0;
    }
    if (arg == "--list-devices")
      return envStatus().isOk() ? listDevices() : fail(envStatus());
    if (arg == "--render-chat") {
      if (!value(v))
        return needValue();
      f.renderChat = v;
    } else if (arg == "--describe") {
      f.describe = true;
    } else if (arg == "--no-verify-checksums") {
      f.verify = false;
    } else if (arg == "--ignore-eos") {
      f.ignoreEos = true;
    } else if (arg == "--print-ids") {
      f.printIds = true;
    } else if (arg == "--score" || arg == "--logits-out" || arg == "--prompt" ||
               arg == "--prompt-ids") {
      if (!value(v))
        return needValue();
      (arg == "--score"        ? f.score
       : arg == "--logits-out" ? f.logitsOut
       : arg == "--prompt"     ? f.prompt
                               : f.promptIds) = v;
      if (arg == "--prompt")
        f.havePrompt = true;
    } else if (arg == "--dtype") {
      if (!value(v))
        return needValue();
      std::optional<DType> d = dtypeFromName(v);
      if (!d || (*d != DType::kF32 && *d != DType::kBF16 && *d != DType::kF16))
        return usageError("option '--dtype' takes f32, bf16 or f16, not '" + std::string(v) + "'");
      f.dtype = *d;
      f.dtypeGiven = true;
    } else if (arg == "--enforce-eager") {
      f.enforceEager = true;
    } else if (arg == "--share-gpus") {
      f.shareGpus = true;
    } else if (arg == "--gpu-memory-utilization") {
      if (!value(v))
        return needValue();
      if (!parseDouble(v, f.gpuMemoryUtilization))
        return badValue();
      if (!(f.gpuMemoryUtilization > 0.0 && f.gpuMemoryUtilization <= 1.0))
        return usageError("option '--gpu-memory-utilization' must be in (0, 1], got " +
                          std::string(v));
    } else if (arg == "--pp-micro-batches") {
      if (!value(v))
        return needValue();
      if (!parseInt(v, f.ppMicroBatches) || f.ppMicroBatches < 1 || f.ppMicroBatches > 1024)
        return usageError("option '--pp-micro-batches' must be an integer from 1 to 1024, got '" +
                          std::string(v) + "'");
    } else if (arg == "--cuda-graph-max-bs") {
      if (!value(v))
        return needValue();
      if (!parseInt(v, f.cudaGraphMaxBs) || f.cudaGraphMaxBs < 1)
        return usageError("option '--cuda-graph-max-bs' must be a positive integer, got " +
                          std::string(v));
    } else if (arg == "--device") {
      if (!value(v))
        return needValue();
      if (!parseInt(v, f.device) || f.device < 0)
        return badValue();
      f.deviceGiven = true;
    } else if (arg == "--tp-rank") {
      if (!value(v))
        return needValue();
      if (!parseInt(v, f.tpRank) || f.tpRank < 0)
        return usageError("option '--tp-rank' must be a rank (0, 1, ...), got '" +
                          std::string(v) + "'");
    } else if (arg == "--tp-master") {
      if (!value(v))
        return needValue();
      f.tpMaster = v;
    } else if (arg == "--tp-timeout") {
      if (!value(v))
        return needValue();
      if (!parseDouble(v, f.tpTimeout) || !(f.tpTimeout > 0))
        return usageError("option '--tp-timeout' must be a positive number of seconds, got '" +
                          std::string(v) + "'");
    } else if (arg == "--stop") {
      if (!value(v))
        return needValue();
      f.stop.push_back(v);
      anyPromptFlag = true;
    } else if (arg == "--chunk" || arg == "-n" || arg == "--max-tokens" || arg == "--top-k" ||
               arg == "--max-model-len" || arg == "--seed") {
      if (!value(v))
        return needValue();
      int64_t n;
      if (!parseInt(v, n))
        return badValue();
      if (arg == "--chunk")
        f.chunk = n;
      else if (arg == "--top-k")
        f.topK = n, anyPromptFlag = true;
      else if (arg == "--max-model-len")
        f.maxModelLen = n;
      else if (arg == "--seed")
        f.seed = uint64_t(n), anyPromptFlag = true;
      else
        f.maxTokens = n, anyPromptFlag = true;
    } else if (arg == "--temperature" || arg == "--top-p" || arg == "--min-p" ||
               arg == "--repetition-penalty" || arg == "--frequency-penalty" ||
               arg == "--presence-penalty") {
      if (!value(v))
        return needValue();
      double d;
      if (!parseDouble(v, d))
        return badValue();
      (arg == "--temperature"         ? f.temperature
       : arg == "--top-p"             ? f.topP
       : arg == "--min-p"             ? f.minP
       : arg == "--frequency-penalty" ? f.frequencyPenalty
       : arg == "--presence-penalty"  ? f.presencePenalty
                                      : f.repetitionPenalty) = d;
      anyPromptFlag = true;
    } else if (arg == "--speculative-method" || arg == "--draft") {
      if (!value(v))
        return needValue();
      f.specFlag = true;
      if (arg == "--draft") {
        f.spec.draftPlan = v;
        if (!f.methodGiven)
          f.spec.method = engine::SpeculativeMethod::kDraft;
      } else if (std::string(v) == "ngram" || std::string(v) == "draft") {
        f.spec.method = std::string(v) == "ngram" ? engine::SpeculativeMethod::kNgram
                                                  : engine::SpeculativeMethod::kDraft;
        f.methodGiven = true;
      } else {
        return usageError("option '--speculative-method' takes ngram or draft, not '" +
                          std::string(v) + "'");
      }
    } else if (arg == "--num-speculative-tokens" || arg == "--speculative-ngram-max" ||
               arg == "--speculative-ngram-min") {
      if (!value(v))
        return needValue();
      int64_t n;
      if (!parseInt(v, n))
        return badValue();
      f.specFlag = true;
      if (arg == "--num-speculative-tokens")
        f.spec.numTokens = n, f.kGiven = true;
      else if (arg == "--speculative-ngram-max")
        f.spec.ngramMax = n;
      else
        f.spec.ngramMin = n;
    } else if (arg == "--enable-prefix-caching") {
      f.serve.scheduler.enablePrefixCaching = true;
      f.anyServeFlag = true;
    } else if (arg == "--api-key" || arg == "--allowed-hosts" || arg == "--allowed-origins") {
      if (!value(v))
        return needValue();
      f.anyServeFlag = true;
      std::vector<std::string> list = server::splitList(v);
      if (arg == "--api-key") {
        if (std::string(v).empty())
          return usageError("option '--api-key' needs a non-empty key");
        f.serve.apiKey = v;
      } else if (list.empty()) {
        return usageError("option '" + arg + "' needs a comma-separated list, got '" +
                          std::string(v) + "'");
      } else if (arg == "--allowed-hosts") {
        f.serve.allowedHosts = list;
      } else {
        for (const std::string &o : list)
          if (o != "*" && o.find("://") == std::string::npos)
            return usageError("option '--allowed-origins': '" + o +
                              "' is not an origin (scheme://host[:port], or '*')");
        f.serve.allowedOrigins = list;
      }
    } else if (arg == "--shutdown-timeout") {
      if (!value(v))
        return needValue();
      double d;
      if (!parseDouble(v, d) || !(d >= 0) || d > 1e6)
        return usageError("option '--shutdown-timeout' must be a number of seconds >= 0, got '" +
                          std::string(v) + "'");
      f.serve.shutdownTimeout = d;
      f.anyServeFlag = true;
    } else if (arg == "--tool-call-parser") {
      if (!value(v))
        return needValue();
      if (std::string_view(v) != "auto" && !server::toolParserFromName(v))
        return usageError("option '--tool-call-parser' must be auto, hermes, llama3_json, "
                          "mistral or none, got '" + std::string(v) + "'");
      f.serve.toolCallParser = v;
      f.anyServeFlag = true;
    } else if (arg == "--host" || arg == "--served-model-name" || arg == "--chat-template" ||
               arg == "--kv-cache-memory" || arg == "--max-prompt-bytes" ||
               arg == "--max-request-bytes") {
      if (!value(v))
        return needValue();
      f.anyServeFlag = true;
      if (arg == "--host") {
        f.serve.http.host = v;
      } else if (arg == "--served-model-name") {
        f.serve.servedModelNames.push_back(v);
      } else if (arg == "--chat-template") {
        f.serve.chatTemplate = v;
      } else {
        StatusOr<int64_t> bytes = server::parseByteSize(v);
        if (!bytes)
          return usageError("option '" + arg + "': " + bytes.status().message());
        if (arg == "--kv-cache-memory") {
          f.serve.scheduler.kvCacheBytes = *bytes;
          f.kvSizeGiven = true;
        } else if (*bytes < 1) {
          return usageError("option '" + arg + "' must be at least 1 byte, got '" +
                            std::string(v) + "'");
        } else if (arg == "--max-prompt-bytes") {
          f.serve.maxPromptBytes = *bytes;
        } else {
          f.serve.http.maxBodyBytes = size_t(*bytes);
        }
      }
    } else if (arg == "--port" || arg == "--max-num-seqs" || arg == "--max-num-batched-tokens" ||
               arg == "--max-waiting" || arg == "--num-kv-blocks" || arg == "--io-threads" ||
               arg == "--max-logprobs" || arg == "--sampler-threads") {
      if (!value(v))
        return needValue();
      int64_t n;
      if (!parseInt(v, n))
        return badValue();
      f.anyServeFlag = true;
      auto atLeast = [&](int64_t lo) {
        return usageError("option '" + arg + "' must be at least " + std::to_string(lo) +
                          ", got " + std::string(v));
      };
      if (arg == "--port") {
        if (n < 0 || n > 65535)
          return usageError("option '--port' must be in [0, 65535], got " + std::string(v));
        f.serve.http.port = uint16_t(n);
      } else if (arg == "--max-num-seqs") {
        if (n < 1)
          return atLeast(1);
        f.serve.scheduler.maxNumSeqs = n;
      } else if (arg == "--max-num-batched-tokens") {
        if (n < 1)
          return atLeast(1);
        f.serve.scheduler.maxNumBatchedTokens = n;
      } else if (arg == "--max-waiting") {
        if (n < 0)
          return atLeast(0);
        f.serve.scheduler.maxWaiting = n;
      } else if (arg == "--num-kv-blocks") {
        if (n < 1)
          return atLeast(1);
        f.serve.scheduler.numKvBlocks = n;
        f.kvSizeGiven = true;
      } else if (arg == "--max-logprobs") {
        if (n < 0)
          return atLeast(0);
        f.serve.scheduler.maxLogprobs = n;
      } else if (arg == "--sampler-threads") {
        if (n < 0 || n > 256)
          return usageError("option '--sampler-threads' must be in [0, 256], got " +
                            std::string(v));
        f.serve.scheduler.samplerThreads = int(n);
      } else {
        if (n < 1)
          return atLeast(1);
        f.serve.http.ioThreads = int(n);
      }
    } else if (arg == "--admission-ttft-target") {
      if (!value(v))
        return needValue();
      double d;
      if (!parseDouble(v, d))
        return badValue();
      if (d < 0)
        return usageError("option '--admission-ttft-target' must be >= 0, got " + std::string(v));
      f.serve.admissionTtftTarget = d;
      f.anyServeFlag = true;
    } else if (!arg.empty() && arg[0] == '-') {
      return usageError("unknown option '" + arg + "'");
    } else if (!f.plan.empty()) {
      return usageError("more than one plan given ('" + f.plan + "' and '" + arg + "')");
    } else {
      f.plan = arg;
    }
  }
  // Every mode reads the environment (docs/env.md): a value that does not
  // parse, or a removed switch, stops it before a plan is opened.
  if (Status s = envStatus(); !s.isOk())
    return fail(s);
  if (f.plan.empty())
    return usageError("no plan given");
  const bool scoring = !f.score.empty() || !f.logitsOut.empty();
  const bool generating = f.havePrompt || !f.promptIds.empty();
  if (scoring && (f.score.empty() || f.logitsOut.empty()))
    return usageError("--score and --logits-out go together");
  if (scoring && generating)
    return usageError("give either --score or --prompt, not both");
  if (f.havePrompt && !f.promptIds.empty())
    return usageError("give either --prompt or --prompt-ids, not both");
  if (anyPromptFlag && !generating)
    return usageError("sampling options need --prompt or --prompt-ids");
  if (f.chunk != 0 && !scoring)
    return usageError("--chunk goes with --score");
  if (f.anyServeFlag && (scoring || generating || f.describe))
    return usageError("serving options go without --score, --prompt and --describe");
  if (f.serve.maxPromptBytes > int64_t(f.serve.http.maxBodyBytes))
    return usageError("--max-prompt-bytes (" + std::to_string(f.serve.maxPromptBytes) +
                      ") is above --max-request-bytes (" +
                      std::to_string(f.serve.http.maxBodyBytes) +
                      "): no such prompt could arrive; raise --max-request-bytes too");
  if (f.serve.apiKey.empty())
    f.serve.apiKey = env().apiKey;
  if (f.specFlag) {
    if (f.spec.method == engine::SpeculativeMethod::kNone)
      return usageError("speculative options need --speculative-method ngram|draft or --draft");
    if (!f.kGiven)
      return usageError("speculative decoding needs --num-speculative-tokens K");
    if (f.spec.method == engine::SpeculativeMethod::kNgram && !f.spec.draftPlan.empty())
      return usageError("--draft goes with --speculative-method draft, not ngram");
    if (Status s = f.spec.validate(); !s.isOk())
      return usageError(s.message());
    if (scoring || f.describe)
      return usageError("speculative options go with --prompt, --prompt-ids or serving");
    if (f.tpRank >= 0)
      return usageError("speculative decoding does not run with --tp-rank yet");
  }
  // One process per tensor-parallel rank: the rank from the flag or from
  // the launcher's environment (mpirun, srun, torchrun-style RANK).
  if (!f.tpMaster.empty() && f.tpRank < 0)
    for (const char *var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK"})
      if (const char *env = std::getenv(var)) {
        if (!parseInt(env, f.tpRank) || f.tpRank < 0)
          return usageError(std::string("$") + var + " is '" + env + "', not a rank");
        break;
      }
  if (f.tpRank >= 0 && f.tpMaster.empty())
    return usageError("--tp-rank needs --tp-master HOST:PORT (rank 0's address)");
  if (!f.tpMaster.empty() && f.tpRank < 0)
    return usageError("--tp-master needs --tp-rank (or $OMPI_COMM_WORLD_RANK, $PMI_RANK, "
                      "$SLURM_PROCID or $RANK from the launcher)");
  if (f.tpRank >= 0 && f.temperature > 0.0 && !f.seed)
    return usageError("sampling with --tp-rank needs --seed, so that every rank draws the same "
                      "tokens");

  plan::LoadOptions load;
  load.verifyChecksums = f.verify;
  if (!f.renderChat.empty()) {
    if (scoring || generating || f.describe)
      return usageError("--render-chat goes without --score, --prompt and --describe");
    if (Status s = renderChat(f.plan, load, f.renderChat, f.serve.chatTemplate, f.printIds);
        !s.isOk())
      return fail(s);
    return 0;
  }
  if (f.describe) {
    StatusOr<std::shared_ptr<const plan::PlanFile>> p = plan::PlanFile::open(f.plan, load);
    if (!p)
      return fail(p.status());
    std::fputs(plan::describePlan(**p).c_str(), stdout);
    if (!scoring && !generating)
      return 0;
  }
  engine::EngineOptions options;
  options.maxModelLen = f.maxModelLen;
  options.load = load;
  options.tpRank = int(f.tpRank);
  options.tpMaster = f.tpMaster;
  options.tpTimeoutSeconds = f.tpTimeout;
  // Ranks other than 0 compute the same steps and keep quiet.
  if (f.tpRank > 0 && !std::freopen("/dev/null", "w", stdout))
    return fail(Status(StatusCode::kUnavailable, "cannot silence rank " +
                                                     std::to_string(f.tpRank) + "'s output"));
  // Plans for a GPU target run on runtime/cuda/GpuExecutor.
  engine::GpuExecutorOptions gpu;
  gpu.dtype = f.dtype;
  gpu.dtypeFromPlan = !f.dtypeGiven;
  gpu.device = int(f.device);
  // One GPU rank per process: the launcher's local rank picks the GPU,
  // else the rank modulo the GPUs the process sees (GpuProcessRank.h).
  if (f.tpRank >= 0 && !f.deviceGiven) {
    gpu.device = -1;
    for (const char *var :
         {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID"})
      if (const char *env = std::getenv(var)) {
        if (!parseInt(env, f.device) || f.device < 0)
          return usageError(std::string("$") + var + " is '" + env + "', not a local rank");
        gpu.device = int(f.device);
        break;
      }
  }
  gpu.cudaGraphs = !f.enforceEager;
  gpu.shareGpus = f.shareGpus;
  gpu.ppMicroBatches = int(f.ppMicroBatches);
  options.ppMicroBatches = int(f.ppMicroBatches);
  gpu.graphMaxBatch = f.cudaGraphMaxBs > 0 ? f.cudaGraphMaxBs : f.serve.scheduler.maxNumSeqs;
  gpu.maxModelLen = f.maxModelLen;
  gpu.gpuMemoryUtilization = f.gpuMemoryUtilization;
  gpu.maxNumBatchedTokens = f.serve.scheduler.maxNumBatchedTokens;
  options.gpuBackend = engine::makeGpuBackend(gpu);
  if (f.kvSizeGiven) {
    // GPU plans size their cache when the engine opens: give it the size.
    options.numKvBlocks = f.serve.scheduler.numKvBlocks;
    options.kvCacheBytes = f.serve.scheduler.numKvBlocks ? 0 : f.serve.scheduler.kvCacheBytes;
  }
  if (!scoring && !generating && f.tpRank > 0) {
    // Serving with one process per rank: rank 0 serves and sends every
    // step; this rank runs them until rank 0 stops.
    options.tpServing = true;
    StatusOr<std::unique_ptr<engine::Engine>> e = engine::Engine::open(f.plan, options);
    if (!e)
      return fail(e.status());
    if (Status s = (*e)->follow(); !s.isOk())
      return fail(s);
    return 0;
  }
  if (!scoring && !generating) {
    // Serve mode: the OpenAI-compatible HTTP server (docs/serving.md); with
    // --tp-rank 0, it leads the other ranks' processes.
    options.tpServing = f.tpRank == 0;
    f.serve.planPath = f.plan;
    f.serve.engine = options;
    f.serve.scheduler.speculative = f.spec;
    f.serve.scheduler.draftEngine = options;
    if (Status s = server::serve(f.serve); !s.isOk())
      return fail(s);
    return 0;
  }
  StatusOr<std::unique_ptr<engine::Engine>> e = engine::Engine::open(f.plan, options);
  if (!e)
    return fail(e.status());
  f.serve.scheduler.draftEngine = options; // how a --draft plan opens
  return scoring ? runScore(**e, f) : runGenerate(**e, f);
}
