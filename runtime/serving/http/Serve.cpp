//===- Serve.cpp - accel-run's serve mode ---------------------------------===//
#include "runtime/serving/http/Serve.h"

#include "runtime/serving/http/Admission.h"
#include "runtime/serving/http/ChatTemplate.h"
#include "runtime/serving/http/Metrics.h"
#include "runtime/serving/http/OpenAiApi.h"
#include "runtime/serving/tokenizer/Tokenizer.h"

#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>

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

StatusOr<int64_t> promptByteLimit(const ServeOptions &o, int64_t maxModelLen) {
  const int64_t body = int64_t(o.http.maxBodyBytes);
  if (o.maxPromptBytes > 0) {
    if (o.maxPromptBytes > body)
      return invalidArgument("--max-prompt-bytes (" + std::to_string(o.maxPromptBytes) +
                             ") is above the request body limit, --max-request-bytes (" +
                             std::to_string(body) +
                             "): no such prompt could arrive; raise --max-request-bytes too");
    return o.maxPromptBytes;
  }
  return std::min(body, std::max<int64_t>(int64_t(1) << 20, 16 * maxModelLen));
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

namespace {
/// Drains after the first signal (Serve.h).
void drain(HttpServer &server, OpenAiApi &api, double timeoutSeconds) {
  using Clock = std::chrono::steady_clock;
  api.beginDrain();
  server.beginDrain();
  std::fprintf(stderr,
               "accel-run: draining: %lld request(s) in flight, new ones get 503; waiting up to "
               "%g s (--shutdown-timeout; a second signal ends them now)\n",
               (long long)api.inFlight(), timeoutSeconds);
  std::fflush(stderr);
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(std::max(0.0, timeoutSeconds)));
  bool interrupted = false;
  while (api.inFlight() > 0) {
    Clock::duration left = deadline - Clock::now();
    if (left <= Clock::duration::zero())
      break;
    auto slice = std::min<Clock::duration>(left, std::chrono::milliseconds(20));
    if (server.waitForSignal(
            std::max(std::chrono::milliseconds(1),
                     std::chrono::duration_cast<std::chrono::milliseconds>(slice)))) {
      interrupted = true;
      break;
    }
  }
  // Always: a request that slipped in as the drain began is cancelled too.
  const int64_t left = api.inFlight();
  api.cancelAll();
  if (left > 0) {
    std::fprintf(stderr, "accel-run: ending %lld request(s) still in flight (%s)\n",
                 (long long)left, interrupted ? "a second signal" : "--shutdown-timeout");
    std::fflush(stderr);
  }
  // The cancelled requests' error events come from the scheduler's thread;
  // a prompt still being tokenized finishes that first.
  const Clock::time_point cutoff = Clock::now() + std::chrono::seconds(30);
  while (api.inFlight() > 0 && Clock::now() < cutoff)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  // Then the answers reach the clients (one that does not read is cut).
  server.waitIdle(std::chrono::seconds(5));
}
} // namespace

JinjaTemplates planChatTemplates(const plan::PlanFile &plan) {
  JinjaTemplates t;
  if (!plan.metadata().has_chat_templates())
    return t;
  const accel::plan::ChatTemplates &c = plan.metadata().chat_templates();
  for (const accel::plan::ChatTemplate &e : c.templates())
    t.templates.emplace_back(e.name(), e.source());
  for (const auto &[name, text] : c.special_tokens())
    t.specialTokens.emplace_back(name, text);
  std::sort(t.specialTokens.begin(), t.specialTokens.end()); // a proto map has no order
  t.origin = c.origin().empty() ? "the plan's chat template" : c.origin();
  return t;
}

StatusOr<ChatTemplate> chooseChatTemplate(const std::string &name, const plan::PlanFile &plan,
                                          const tok::Tokenizer *tokenizer) {
  JinjaTemplates fromPlan = planChatTemplates(plan);
  StatusOr<ChatTemplate> t = ChatTemplate::choose(name, tokenizer, &fromPlan);
  if (!t && name == "auto")
    return Status(t.status().code(),
                  plan.path() + ": " + t.status().message() +
                      " (give --chat-template chatml, llama3, plain or a .jinja file instead)");
  return t;
}

StatusOr<ToolParser> chooseToolParser(const std::string &name, const ChatTemplate &chatTemplate,
                                      const tok::Tokenizer *tokenizer) {
  if (name == "auto")
    return chatTemplate.format() == ChatTemplate::Format::kJinja
               ? detectToolParser(chatTemplate.toolTemplateSource(), tokenizer)
               : ToolParser::kNone;
  if (std::optional<ToolParser> p = toolParserFromName(name))
    return *p;
  return invalidArgument("--tool-call-parser '" + name +
                         "' is not one of auto, hermes, llama3_json, mistral, none");
}

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
                            chooseChatTemplate(o.chatTemplate, engine->plan(), tokenizer.get()));

  ACCEL_RT_ASSIGN_OR_RETURN(ToolParser toolParser,
                            chooseToolParser(o.toolCallParser, chatTemplate, tokenizer.get()));

  ApiOptions api;
  api.toolParser = toolParser;
  api.modelNames = o.servedModelNames;
  if (api.modelNames.empty())
    api.modelNames.push_back(defaultModelName(o.planPath));
  api.maxModelLen = engine->maxModelLen();
  ACCEL_RT_ASSIGN_OR_RETURN(int64_t promptBytes, promptByteLimit(o, api.maxModelLen));
  api.maxPromptBytes = size_t(promptBytes);
  api.access.apiKey = o.apiKey;
  api.access.allowedHosts = o.allowedHosts ? *o.allowedHosts : defaultAllowedHosts(o.http.host);
  api.access.allowedOrigins = o.allowedOrigins;
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
               "accel-run: serving '%s' (max model len %lld, %lld KV blocks, chat template %s, "
               "tool-call parser %s) at http://%s:%u\n",
               api.modelNames.front().c_str(), (long long)api.maxModelLen,
               (long long)st.kvBlocksTotal, chatTemplate.name().c_str(),
               toolParserName(toolParser), o.http.host.c_str(), unsigned(server->port()));
  std::fflush(stderr);
  server->waitForSignal();
  drain(*server, handler, o.shutdownTimeout);
  std::fprintf(stderr, "accel-run: shutting down\n");
  // Every answer is written (or its client is gone): no more IO handlers
  // run; then the scheduler stops (nothing is left in it); then the server
  // goes.
  server->stop();
  scheduler->stop();
  // The final accounting (test/Serve/serve-soak.test checks it): every
  // request has had its answer, so a KV block still owned here leaked;
  // read before the scheduler's destructor cancels what is left.
  const serve::SchedulerStats last = scheduler->stats();
  std::fprintf(stderr,
               "accel-run: stopped: %lld request(s) finished, %lld cancelled, %lld failed; "
               "%lld of %lld KV blocks held\n",
               (long long)last.requestsFinished, (long long)last.requestsCancelled,
               (long long)last.requestsFailed, (long long)engine->pool().allocator().numUsed(),
               (long long)engine->pool().numBlocks());
  std::fflush(stderr);
  scheduler.reset();
  serverPtr = nullptr;
  server.reset();
  return Status::ok();
#endif
}

} // namespace accel::rt::server
