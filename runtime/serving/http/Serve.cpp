//===- Serve.cpp - accel-run's serve mode ---------------------------------===//
#include "runtime/serving/http/Serve.h"

#include "runtime/serving/http/Admission.h"
#include "runtime/serving/http/ChatTemplate.h"
#include "runtime/serving/http/Metrics.h"
#include "runtime/serving/http/OpenAiApi.h"
#include "runtime/serving/tokenizer/Tokenizer.h"

#include <sys/resource.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace accel::rt::server {

StatusOr<int64_t> parseByteSize(std::string_view text) {
  std::string s(text);
  char *end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || errno || !std::isfinite(v) || v < 0)
    return invalidArgument("'" + s + "' is not a size (bytes, or a number with KiB/MiB/GiB)");
  std::string unit(end);
  for (char &c : unit)
    c = char(std::tolower((unsigned char)c));
  double scale = 0;
  if (unit.empty() || unit == "b")
    scale = 1;
  else if (unit == "k" || unit == "kb" || unit == "kib")
    scale = 1024.0;
  else if (unit == "m" || unit == "mb" || unit == "mib")
    scale = 1024.0 * 1024;
  else if (unit == "g" || unit == "gb" || unit == "gib")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "t" || unit == "tb" || unit == "tib")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else
    return invalidArgument("'" + s + "' has an unknown unit '" + std::string(end) +
                           "' (use B, KiB, MiB, GiB or TiB)");
  double bytes = v * scale;
  if (bytes > 9.0e18)
    return invalidArgument("'" + s + "' is too large");
  return int64_t(bytes);
}

std::string defaultModelName(const std::string &planPath) {
  std::string name = planPath;
  size_t slash = name.find_last_of('/');
  if (slash != std::string::npos)
    name = name.substr(slash + 1);
  if (name.size() > 5 && name.substr(name.size() - 5) == ".plan")
    name.resize(name.size() - 5);
  return name.empty() ? "model" : name;
}

namespace {
/// 1000 connections need more descriptors than the usual soft limit
/// (1024): raise it to the hard limit.
void raiseFileLimit() {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}
} // namespace

Status serve(const ServeOptions &o) {
#ifndef ACCEL_HAVE_SCHEDULER
  (void)o;
  return unimplemented("serving needs the scheduler (runtime/serving), which this build lacks");
#else
  raiseFileLimit();
  ACCEL_RT_ASSIGN_OR_RETURN(std::unique_ptr<engine::Engine> engine,
                            engine::Engine::open(o.planPath, o.engine));
  std::shared_ptr<const tok::Tokenizer> tokenizer;
  if (std::optional<std::string_view> json = engine->plan().tokenizerJson()) {
    StatusOr<tok::Tokenizer> t = tok::Tokenizer::fromJson(*json);
    if (!t)
      return Status(t.status().code(), o.planPath +
                                           ": the tokenizer the plan carries does not load: " +
                                           t.status().message());
    tokenizer = std::make_shared<const tok::Tokenizer>(std::move(*t));
  }
  ACCEL_RT_ASSIGN_OR_RETURN(ChatTemplate chatTemplate,
                            ChatTemplate::choose(o.chatTemplate, tokenizer.get()));

  ApiOptions api;
  api.modelNames = o.servedModelNames;
  if (api.modelNames.empty())
    api.modelNames.push_back(defaultModelName(o.planPath));
  api.modelRoot = o.planPath;
  api.maxModelLen = engine->maxModelLen();
  api.vocabSize = engine->vocabSize();
  api.chatTemplate = chatTemplate;
  api.limits.maxLogprobs = o.scheduler.maxLogprobs;
  api.reportCachedTokens = o.scheduler.enablePrefixCaching;

  AdmissionOptions ao;
  ao.minLimit = o.scheduler.maxNumSeqs;
  ao.maxInFlight = o.scheduler.maxNumSeqs + o.scheduler.maxWaiting;
  ao.targetTtftP95 = o.admissionTtftTarget;

  Metrics metrics(api.modelNames.front());
  Admission admission(ao);

  ACCEL_RT_ASSIGN_OR_RETURN(std::unique_ptr<serve::Scheduler> scheduler,
                            serve::Scheduler::create(*engine, tokenizer, o.scheduler));
  HttpServer *serverPtr = nullptr;
  OpenAiApi handler(*scheduler, tokenizer, metrics, admission, api,
                    [&serverPtr]() { return serverPtr ? serverPtr->openConnections() : 0; });
  ACCEL_RT_ASSIGN_OR_RETURN(
      std::unique_ptr<HttpServer> server,
      HttpServer::create(o.http, [&handler](HttpRequest r, std::shared_ptr<HttpExchange> ex) {
        handler.handle(std::move(r), std::move(ex));
      }));
  serverPtr = server.get();
  scheduler->start();
  server->start();
  serve::SchedulerStats st = scheduler->stats();
  std::fprintf(stderr,
               "accel-run: serving '%s' (max model len %lld, %lld KV blocks, chat template %s) "
               "at http://%s:%u\n",
               api.modelNames.front().c_str(), (long long)api.maxModelLen,
               (long long)st.kvBlocksTotal, chatTemplate.name(), o.http.host.c_str(),
               unsigned(server->port()));
  std::fflush(stderr);
  server->waitForSignal();
  std::fprintf(stderr, "accel-run: shutting down\n");
  // Order: no more IO handlers run; then the scheduler stops and finishes
  // what is left (its callbacks post to the stopped IO context, which is
  // still alive); then the server goes.
  server->stop();
  scheduler->stop();
  scheduler.reset();
  serverPtr = nullptr;
  server.reset();
  return Status::ok();
#endif
}

} // namespace accel::rt::server
