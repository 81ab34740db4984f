//===- OpenAiApi.cpp - the OpenAI-compatible routes -----------------------===//
#include "runtime/serving/http/OpenAiApi.h"

#include "core/Json.h"
#include "runtime/serving/http/Sse.h"
#include "runtime/serving/http/Tokenize.h"
#include "runtime/serving/http/ToolRequest.h"
#include "runtime/serving/structured/Grammar.h"
#include "runtime/serving/tokenizer/Tokenizer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>

namespace accel::rt::server {

namespace json = accel::rt::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char *kJson = "application/json";

/// What the chat template renders for request `cr`.
ChatInput chatInput(const CompletionRequest &cr) {
  ChatInput in;
  for (const ChatMessage &m : cr.messages) {
    json::Value msg = json::Value::object();
    msg.set("role", m.role);
    msg.set("content", m.content);
    if (!m.toolCalls.isNull())
      msg.set("tool_calls", m.toolCalls);
    if (m.role == "tool")
      msg.set("tool_call_id", m.toolCallId);
    in.messages.push(std::move(msg));
  }
  in.tools = cr.tools;
  in.documents = cr.documents;
  in.kwargs = cr.chatTemplateKwargs;
  in.addGenerationPrompt = cr.addGenerationPrompt;
  in.continueFinalMessage = cr.continueFinalMessage;
  return in;
}

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

const char *finishName(serve::FinishReason r) {
  switch (r) {
  case serve::FinishReason::kStop:
    return "stop";
  case serve::FinishReason::kLength:
    return "length";
  case serve::FinishReason::kCancelled:
    return "abort";
  case serve::FinishReason::kError:
    return "error";
  }
  return "error";
}

ApiError notFound(std::string message, std::string code) {
  ApiError e;
  e.status = 404;
  e.message = std::move(message);
  e.code = std::move(code);
  return e;
}

ApiError methodNotAllowed(const HttpRequest &r) {
  ApiError e;
  e.status = 405;
  e.message = "method " + r.method + " is not allowed on " + r.path;
  return e;
}

/// One choice of a generation request: one scheduler sequence.
struct ChoiceState {
  std::string id; // the scheduler's request id
  bool finished = false, sawToken = false;
  serve::FinishReason reason = serve::FinishReason::kStop;
  std::string error;
  int refusedStatus = 0; // a later choice the scheduler refused: 429 (queue full) or 503
  Clock::time_point lastToken;
  std::string text;              // whole response: the text so far
  size_t streamedBytes = 0;      // stream: text bytes sent
  std::vector<TokenLogprob> lps; // whole response: logprobs so far
  double cumLogprob = 0;         // best_of: the sampled tokens' logprobs summed
  // Tool calls: the reply (after the forced call's beginning, if any),
  // parsed when it ends; a stream sends its settled content as it comes
  // and holds the rest (and the logprobs of the tokens held).
  std::string reply;
  size_t replySent = 0;
  std::vector<TokenLogprob> heldLps;
  int64_t promptTokens = 0, completionTokens = 0, cachedPromptTokens = 0;
};

/// One generation request (n / best_of choices), on its exchange's strand.
struct Generation {
  OpenAiApi *api = nullptr;
  Metrics *metrics = nullptr;
  Admission *admission = nullptr;
  const tok::Tokenizer *tokenizer = nullptr;
  std::shared_ptr<HttpExchange> ex;
  ResponseHeader hdr;
  bool stream = false, includeUsage = false, reportCached = false;
  int64_t logprobs = -1; // what the client asked (best_of asks the scheduler for >= 0)
  int64_t promptLogprobs = -1; // prompt_logprobs asked (choice 0 computes them)
  json::Value promptLps;       // [null, {id: {logprob, rank, decoded_token}}, ...]
  int64_t n = 1;         // choices returned (the best n of choices.size())
  Clock::time_point arrival;
  bool sawToken = false, finished = false;
  std::vector<ChoiceState> choices;
  int64_t open = 0; // choices not finished
  std::atomic<int64_t> *active = nullptr;
  InFlightRequests *inFlight = nullptr;
  Headers extra; // on the response (CORS)
  // Tool calls (docs/serving.md "Tool calls"); toolParser kNone: the reply
  // is plain text.
  ToolParser toolParser = ToolParser::kNone;
  std::vector<std::string> toolFunctions;
  bool namedTool = false; // tool_choice names the function: finish_reason stays
  bool parallelToolCalls = true;
  std::string echo; // whole response: the text before the reply
  /// Choices 1.. wait until choice 0 has computed the prompt (its first
  /// token), so that their prefill finds its full blocks in the prefix
  /// cache; submitRest submits them (set by OpenAiApi::start).
  std::function<void()> submitRest;

  std::string tokenText(int64_t id) const {
    if (tokenizer && tokenizer->isLoaded())
      return tokenizer->decode({int32_t(id)}, /*skipSpecialTokens=*/false);
    return "token_id:" + std::to_string(id);
  }

  /// Choice c's reply parsed for tool calls, each with a new id.
  ToolCallReply toolReply(const ChoiceState &c) const {
    ToolCallReply r = parseToolCalls(toolParser, c.reply, toolFunctions);
    if (!parallelToolCalls && r.calls.size() > 1)
      r.calls.resize(1);
    for (ToolCall &call : r.calls)
      call.id = newToolCallId(toolParser);
    return r;
  }

  /// The end of choice i's stream when its reply is parsed for tool calls:
  /// what was held back goes out as content, or as the calls (and the
  /// content before them not sent yet), then the finish chunk.
  void endToolStream(size_t i, const serve::FinishEvent &ev, bool good) {
    ChoiceState &c = choices[i];
    std::vector<TokenLogprob> none;
    std::vector<TokenLogprob> *held = logprobs >= 0 ? &c.heldLps : nullptr;
    std::vector<TokenLogprob> *empty = logprobs >= 0 ? &none : nullptr;
    const std::string rest = c.reply.substr(std::min(c.replySent, c.reply.size()));
    if (!good) {
      if (!rest.empty())
        ex->write(sse::event(streamChunk(hdr, rest, "", held, 0, false, int64_t(i))));
      return;
    }
    ToolCallReply r = toolReply(c);
    if (r.calls.empty()) {
      ex->write(sse::event(
          streamChunk(hdr, rest, finishName(ev.reason), held, 0, false, int64_t(i))));
      return;
    }
    const std::string content = r.content.value_or("");
    if (content.size() > c.replySent) {
      ex->write(sse::event(
          streamChunk(hdr, content.substr(c.replySent), "", held, 0, false, int64_t(i))));
      held = empty;
    }
    ex->write(sse::event(toolCallsChunk(hdr, r.calls, held, int64_t(i))));
    ex->write(sse::event(streamChunk(hdr, "", namedTool ? finishName(ev.reason) : "tool_calls",
                                     empty, 0, false, int64_t(i))));
  }

  void releaseRest() {
    if (submitRest) {
      auto f = std::move(submitRest);
      submitRest = nullptr;
      f();
    }
  }

  void onToken(size_t i, const serve::TokenEvent &ev) {
    ChoiceState &c = choices[i];
    if (finished || c.finished)
      return;
    Clock::time_point now = Clock::now();
    if (!sawToken) {
      double ttft = seconds(now - arrival);
      metrics->observeTtft(ttft);
      admission->observeTtft(ttft);
      sawToken = true;
    } else if (c.sawToken) {
      metrics->observeItl(seconds(now - c.lastToken));
    }
    c.sawToken = true;
    c.lastToken = now;
    c.cumLogprob += double(ev.logprob);
    if (i == 0 && promptLogprobs >= 0 && promptLps.isNull()) {
      // vLLM's form: null for the first prompt token (nothing before it),
      // then each token and the top alternatives by id.
      promptLps = json::Value::array();
      promptLps.push(json::Value());
      for (const serve::PromptLogprob &p : ev.promptLogprobs) {
        json::Value pos = json::Value::object();
        auto entry = [&](int64_t id, float lp, int64_t rank) {
          json::Value e = json::Value::object();
          e.set("logprob", double(lp));
          e.set("rank", rank);
          e.set("decoded_token", tokenText(id));
          pos.set(std::to_string(id), std::move(e));
        };
        entry(p.token, p.logprob, p.rank);
        for (size_t k = 0; k < p.top.size(); ++k)
          if (p.top[k].first != p.token)
            entry(p.top[k].first, p.top[k].second, int64_t(k) + 1);
        promptLps.push(std::move(pos));
      }
      // Streamed: a chunk of its own, before the first token's (vLLM sends
      // them with the first chunk).
      if (stream && ex->isOpen())
        ex->write(sse::event(streamChunk(hdr, "", "", nullptr, 0, false, 0, &promptLps)));
    }
    if (i == 0)
      releaseRest();
    TokenLogprob lp;
    if (logprobs >= 0) {
      lp.token = tokenText(ev.token);
      lp.logprob = ev.logprob;
      for (const auto &[id, v] : ev.topLogprobs)
        if (int64_t(lp.top.size()) < logprobs)
          lp.top.emplace_back(tokenText(id), v);
    }
    if (toolParser != ToolParser::kNone)
      c.reply += ev.textDelta;
    if (stream && toolParser != ToolParser::kNone) {
      // Only the content that no call can follow; the rest waits.
      if (!ex->isOpen())
        return;
      if (logprobs >= 0)
        c.heldLps.push_back(std::move(lp));
      const size_t settled = settledContent(toolParser, c.reply);
      if (settled <= c.replySent)
        return;
      ex->write(sse::event(streamChunk(hdr, c.reply.substr(c.replySent, settled - c.replySent),
                                       "", logprobs >= 0 ? &c.heldLps : nullptr, 0, false,
                                       int64_t(i))));
      c.replySent = settled;
      c.heldLps.clear();
    } else if (stream) {
      if (!ex->isOpen() || (ev.textDelta.empty() && logprobs < 0))
        return;
      std::vector<TokenLogprob> one;
      if (logprobs >= 0)
        one.push_back(std::move(lp));
      ex->write(sse::event(streamChunk(hdr, ev.textDelta, "", logprobs >= 0 ? &one : nullptr,
                                       c.streamedBytes, false, int64_t(i))));
      c.streamedBytes += ev.textDelta.size();
    } else {
      c.text += ev.textDelta;
      if (logprobs >= 0)
        c.lps.push_back(std::move(lp));
    }
  }

  /// Choice i failed to start (its submit was refused): a full queue is
  /// the request's 429, a server shutting down its 503.
  void refuse(size_t i, const Status &why) {
    serve::FinishEvent ev;
    ev.reason = serve::FinishReason::kError;
    ev.error = why.message();
    choices[i].refusedStatus = why.code() == StatusCode::kResourceExhausted ? 429
                               : why.code() == StatusCode::kUnavailable     ? 503
                                                                            : 0;
    onFinish(i, ev);
  }

  void onFinish(size_t i, const serve::FinishEvent &ev) {
    ChoiceState &c = choices[i];
    if (finished || c.finished)
      return;
    c.finished = true;
    c.reason = ev.reason;
    c.error = ev.error;
    c.promptTokens = ev.promptTokens;
    c.completionTokens = ev.completionTokens;
    c.cachedPromptTokens = ev.cachedPromptTokens;
    {
      std::lock_guard<std::mutex> lock(inFlight->mu);
      inFlight->ids.erase(c.id);
    }
    if (i == 0) {
      if (ev.reason == serve::FinishReason::kStop || ev.reason == serve::FinishReason::kLength)
        releaseRest();
      else // the request fails anyway: the rest never starts
        for (size_t k = 1; k < choices.size(); ++k)
          if (submitRest && !choices[k].finished) {
            choices[k].finished = true;
            choices[k].reason = ev.reason;
            --open;
          }
    }
    --open;
    const bool good =
        ev.reason == serve::FinishReason::kStop || ev.reason == serve::FinishReason::kLength;
    if (toolParser != ToolParser::kNone)
      c.reply += ev.textDelta;
    if (stream && ex->isOpen() && toolParser != ToolParser::kNone) {
      endToolStream(i, ev, good);
    } else if (stream && ex->isOpen()) {
      if (!good) {
        if (!ev.textDelta.empty())
          ex->write(sse::event(
              streamChunk(hdr, ev.textDelta, "", nullptr, c.streamedBytes, false, int64_t(i))));
      } else {
        std::vector<TokenLogprob> none;
        ex->write(sse::event(streamChunk(hdr, ev.textDelta, finishName(ev.reason),
                                         logprobs >= 0 ? &none : nullptr, c.streamedBytes, false,
                                         int64_t(i))));
      }
    } else {
      c.text += ev.textDelta;
    }
    if (open > 0)
      return;
    finish();
  }

  /// Every choice is done: the response (or the stream's end).
  void finish() {
    finished = true;
    submitRest = nullptr;
    active->fetch_sub(1);
    admission->release();
    // The request's outcome: its first failed choice's, else choice 0's.
    const ChoiceState *worst = &choices[0];
    for (const ChoiceState &c : choices)
      if (c.reason == serve::FinishReason::kError || c.reason == serve::FinishReason::kCancelled) {
        worst = &c;
        break;
      }
    Usage usage;
    usage.promptTokens = choices[0].promptTokens; // the prompt, once
    for (const ChoiceState &c : choices)
      usage.completionTokens += c.completionTokens;
    if (reportCached)
      usage.cachedTokens = choices[0].cachedPromptTokens;
    metrics->observeE2e(seconds(Clock::now() - arrival));
    metrics->requestFinished(finishName(worst->reason), usage.promptTokens,
                             usage.completionTokens);
    if (!ex->isOpen())
      return; // the client went away (that is why it was cancelled)
    ApiError error;
    error.status = 500;
    error.type = "server_error";
    error.message = worst->error.empty() ? "the request failed" : worst->error;
    const bool failed = worst->reason == serve::FinishReason::kError ||
                        worst->reason == serve::FinishReason::kCancelled;
    if (worst->reason == serve::FinishReason::kCancelled) {
      // With the client still there, only the server cancels: it is
      // shutting down (--shutdown-timeout ran out).
      error.status = 503;
      error.message = "the server shut down before the request finished (--shutdown-timeout)";
    }
    Headers headers = extra;
    if (worst->refusedStatus == 429) {
      error = rateLimited("choice " + std::to_string(worst - choices.data()) +
                          " of the request could not be queued: " + worst->error);
      headers.emplace_back("Retry-After", std::to_string(admission->retryAfterSeconds()));
      metrics->requestRejected("queue_full");
    } else if (worst->refusedStatus == 503) {
      error.status = 503;
      error.type = "service_unavailable";
    }
    if (stream) {
      if (failed)
        ex->write(sse::event(errorBody(error)));
      if (includeUsage)
        ex->write(sse::event(usageChunk(hdr, usage)));
      ex->write(sse::done());
      ex->endStream();
      return;
    }
    if (failed) {
      metrics->httpResponse(error.status);
      ex->respond(error.status, kJson, errorBody(error), headers);
      return;
    }
    // best_of: the n choices of the highest cumulative logprob, in the
    // order they were generated among equals.
    std::vector<size_t> order(choices.size());
    for (size_t k = 0; k < order.size(); ++k)
      order[k] = k;
    if (int64_t(choices.size()) > n)
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return choices[a].cumLogprob > choices[b].cumLogprob;
      });
    std::vector<ChoiceResult> out;
    for (int64_t k = 0; k < n; ++k) {
      const ChoiceState &c = choices[order[size_t(k)]];
      out.push_back(ChoiceResult{c.text, finishName(c.reason), logprobs >= 0 ? &c.lps : nullptr,
                                 promptLogprobs >= 0 ? &promptLps : nullptr});
      if (toolParser == ToolParser::kNone)
        continue;
      ToolCallReply r = toolReply(c);
      ChoiceResult &res = out.back();
      res.text = echo + (r.calls.empty() ? c.reply : r.content.value_or(""));
      if (r.calls.empty())
        continue;
      res.toolCalls = std::move(r.calls);
      res.nullContent = res.text.empty();
      if (!namedTool)
        res.finishReason = "tool_calls";
    }
    metrics->httpResponse(200);
    ex->respond(200, kJson, completeResponse(hdr, out, usage), extra);
  }
};

} // namespace

OpenAiApi::~OpenAiApi() = default;

OpenAiApi::OpenAiApi(serve::Scheduler &scheduler, std::shared_ptr<const tok::Tokenizer> tokenizer,
                     Metrics &metrics, Admission &admission, ApiOptions options,
                     std::function<int64_t()> openConnections)
    : scheduler_(scheduler), tokenizer_(std::move(tokenizer)), metrics_(metrics),
      admission_(admission), opts_(std::move(options)),
      openConnections_(std::move(openConnections)), created_(int64_t(std::time(nullptr))),
      access_(opts_.access) {
  if (opts_.modelNames.empty())
    opts_.modelNames.push_back("model");
  opts_.limits.vocabSize = opts_.vocabSize;
  std::random_device rd;
  idSalt_ = (uint64_t(rd()) << 32) ^ rd();
}

std::string OpenAiApi::newId(Endpoint endpoint) {
  uint64_t n = counter_.fetch_add(1) + 1;
  uint64_t x = (n * 0x9E3779B97F4A7C15ull) ^ idSalt_;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s-%016llx%llx",
                endpoint == Endpoint::kChat ? "chatcmpl" : "cmpl", (unsigned long long)x,
                (unsigned long long)n);
  return buf;
}

void OpenAiApi::reply(HttpExchange &ex, int status, std::string contentType, std::string body,
                      Headers extra) {
  metrics_.httpResponse(status);
  ex.respond(status, std::move(contentType), std::move(body), std::move(extra));
}

void OpenAiApi::fail(HttpExchange &ex, const ApiError &e, Headers extra) {
  reply(ex, e.status, kJson, errorBody(e), std::move(extra));
}

void OpenAiApi::cancelAll() {
  std::vector<std::string> ids;
  {
    std::lock_guard<std::mutex> lock(inFlight_.mu);
    inFlight_.cancelling = true;
    ids.assign(inFlight_.ids.begin(), inFlight_.ids.end());
  }
  for (const std::string &id : ids)
    scheduler_.cancel(id);
}

void OpenAiApi::handle(HttpRequest request, std::shared_ptr<HttpExchange> ex) {
  const std::string &path = request.path;
  if (std::optional<ApiError> refused = access_.check(request)) {
    Headers h;
    if (refused->status == 401)
      h.emplace_back("WWW-Authenticate", "Bearer");
    return fail(*ex, *refused, std::move(h));
  }
  Headers extra = access_.responseHeaders(request);
  if (access_.isPreflight(request)) {
    extra.emplace_back("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
    extra.emplace_back("Access-Control-Allow-Headers", "Authorization, Content-Type");
    extra.emplace_back("Access-Control-Max-Age", "600");
    return reply(*ex, 204, "", "", std::move(extra));
  }
  const bool get = request.method == "GET" || request.method == "HEAD";
  const bool post = request.method == "POST";
  auto notAllowed = [&](const char *allow) {
    Headers h = extra;
    h.emplace_back("Allow", allow);
    return fail(*ex, methodNotAllowed(request), std::move(h));
  };
  if (draining_.load() && path != "/metrics") {
    ApiError e;
    e.status = 503;
    e.type = "service_unavailable";
    e.message = "the server is shutting down and takes no new requests";
    return fail(*ex, e, std::move(extra));
  }
  if (path == "/health") {
    if (!get)
      return notAllowed("GET, HEAD");
    if (Status h = scheduler_.health(); !h.isOk()) {
      ApiError e;
      e.status = 503;
      e.message = h.message();
      e.type = "service_unavailable";
      return fail(*ex, e, std::move(extra));
    }
    return reply(*ex, 200, "", "", std::move(extra));
  }
  if (path == "/metrics") {
    if (!get)
      return notAllowed("GET, HEAD");
    Metrics::ServerGauges g;
    g.openConnections = openConnections_ ? openConnections_() : 0;
    g.admission = admission_.snapshot();
    return reply(*ex, 200, "text/plain; version=0.0.4; charset=utf-8",
                 metrics_.render(scheduler_.stats(), g), std::move(extra));
  }
  // No file path in any answer: "root" is the served name.
  auto modelCard = [&](const std::string &name) {
    json::Value m = json::Value::object();
    m.set("id", name);
    m.set("object", "model");
    m.set("created", created_);
    m.set("owned_by", "accel");
    m.set("root", name);
    m.set("parent", json::Value());
    m.set("max_model_len", opts_.maxModelLen);
    return m;
  };
  if (path == "/v1/models") {
    if (!get)
      return notAllowed("GET, HEAD");
    json::Value list = json::Value::object();
    list.set("object", "list");
    json::Value data = json::Value::array();
    for (const std::string &n : opts_.modelNames)
      data.push(modelCard(n));
    list.set("data", std::move(data));
    return reply(*ex, 200, kJson, json::write(list), std::move(extra));
  }
  if (path.rfind("/v1/models/", 0) == 0) {
    if (!get)
      return notAllowed("GET, HEAD");
    std::string name = path.substr(11);
    for (const std::string &n : opts_.modelNames)
      if (n == name)
        return reply(*ex, 200, kJson, json::write(modelCard(n)), std::move(extra));
    return fail(*ex, notFound("The model `" + name + "` does not exist.", "model_not_found"),
                std::move(extra));
  }
  if (path == "/v1/completions" || path == "/v1/chat/completions") {
    if (!post)
      return notAllowed("POST");
    // A cross-site form or fetch without a preflight can send text/plain:
    // only JSON bodies are read.
    if (std::optional<ApiError> ct = jsonBodyError(request))
      return fail(*ex, *ct, std::move(extra));
    const Endpoint endpoint =
        path == "/v1/completions" ? Endpoint::kCompletions : Endpoint::kChat;
    preparing_.fetch_add(1);
    if (request.body.size() <= opts_.inlineBodyBytes) {
      if (std::optional<Prepared> p = prepare(endpoint, request, *ex, extra))
        start(*p, std::move(ex));
      preparing_.fetch_sub(1);
      return;
    }
    // Large: parse and tokenize off the IO threads; then submit from the
    // exchange's strand (where the scheduler's events land, after it).
    std::call_once(poolOnce_,
                   [this]() { pool_ = std::make_unique<WorkerPool>(opts_.tokenizerThreads); });
    auto req = std::make_shared<HttpRequest>(std::move(request));
    pool_->post([this, endpoint, req, ex = std::move(ex), extra = std::move(extra)]() mutable {
      std::optional<Prepared> p;
      if (ex->isOpen()) // the client may have gone meanwhile
        p = prepare(endpoint, *req, *ex, extra);
      if (!p) {
        preparing_.fetch_sub(1);
        return;
      }
      auto prepared = std::make_shared<Prepared>(std::move(*p));
      ex->post([this, prepared, ex]() {
        if (ex->isOpen())
          start(*prepared, ex);
        preparing_.fetch_sub(1);
      });
    });
    return;
  }
  if (path == "/tokenize" || path == "/detokenize") {
    if (!post)
      return notAllowed("POST");
    if (std::optional<ApiError> ct = jsonBodyError(request))
      return fail(*ex, *ct, std::move(extra));
    const bool tok = path == "/tokenize";
    if (request.body.size() <= opts_.inlineBodyBytes)
      return tok ? tokenize(request, *ex, extra) : detokenize(request, *ex, extra);
    // Large: tokenize off the IO threads, as the completion routes do.
    std::call_once(poolOnce_,
                   [this]() { pool_ = std::make_unique<WorkerPool>(opts_.tokenizerThreads); });
    auto req = std::make_shared<HttpRequest>(std::move(request));
    preparing_.fetch_add(1);
    pool_->post([this, tok, req, ex = std::move(ex), extra = std::move(extra)]() {
      if (ex->isOpen())
        tok ? tokenize(*req, *ex, extra) : detokenize(*req, *ex, extra);
      preparing_.fetch_sub(1);
    });
    return;
  }
  if (path == "/version") {
    if (!get)
      return notAllowed("GET, HEAD");
    return reply(*ex, 200, kJson, versionResponse(), std::move(extra));
  }
  return fail(*ex,
              notFound("no route " + request.method + " " + path +
                           " (this server has /v1/completions, /v1/chat/completions, "
                           "/v1/models, /tokenize, /detokenize, /version, /health, /metrics)",
                       "not_found"),
              std::move(extra));
}

bool OpenAiApi::encodePrompt(CompletionRequest &cr, std::vector<int64_t> &ids,
                             ApiError &err) const {
  const bool chat = cr.endpoint == Endpoint::kChat;
  const char *promptField = chat ? "messages" : "prompt";
  if (!chat && cr.promptIsIds) {
    for (size_t i = 0; i < cr.promptIds.size(); ++i) {
      int64_t t = cr.promptIds[i];
      if (t < 0 || (opts_.vocabSize > 0 && t >= opts_.vocabSize)) {
        err = badRequest("prompt[" + std::to_string(i) + "] = " + std::to_string(t) +
                             " is not a token id of this model (vocabulary of " +
                             std::to_string(opts_.vocabSize) + ")",
                         "prompt");
        return false;
      }
    }
    ids = std::move(cr.promptIds);
    return true;
  }
  if (!tokenizer_ || !tokenizer_->isLoaded()) {
    err = badRequest(std::string("the plan carries no tokenizer, so this server takes no text") +
                         (chat ? "; chat needs one" : ": send the prompt as an array of token ids"),
                     promptField);
    return false;
  }
  // The byte limit, before any tokenization.
  size_t bytes = 0;
  if (chat)
    for (const ChatMessage &m : cr.messages)
      bytes += m.content.size();
  else
    bytes = cr.prompt.size();
  if (bytes > opts_.maxPromptBytes) {
    err = ApiError();
    err.status = 413;
    err.param = promptField;
    err.code = "prompt_too_large";
    err.message = std::string(chat ? "the messages' contents are " : "the prompt is ") +
                  std::to_string(bytes) + " bytes; this server tokenizes at most " +
                  std::to_string(opts_.maxPromptBytes) + " (--max-prompt-bytes)";
    return false;
  }
  std::string text;
  if (chat) {
    if (std::optional<ApiError> e = toolsNeedJinja(cr, opts_.chatTemplate)) {
      err = *e;
      return false;
    }
    StatusOr<std::string> rendered = opts_.chatTemplate.apply(chatInput(cr));
    if (!rendered) {
      err = badRequest(rendered.status().message(), "messages");
      return false;
    }
    text = std::move(*rendered) + toolCallPrefix(cr);
  } else {
    text = cr.prompt;
  }
  bool special = cr.addSpecialTokens.value_or(chat ? opts_.chatTemplate.addSpecialTokens() : true);
  StatusOr<std::vector<int32_t>> enc = tokenizer_->encode(text, special);
  if (!enc) {
    err = badRequest(enc.status().message(), promptField);
    return false;
  }
  ids.assign(enc->begin(), enc->end());
  return true;
}

void OpenAiApi::tokenize(HttpRequest &request, HttpExchange &ex, const Headers &extra) {
  TokenizeRequest tr;
  ApiError err;
  if (!parseTokenizeRequest(request.body, opts_.limits, tr, err))
    return fail(ex, err, extra);
  if (!knownModel(tr.req.model))
    return fail(ex, unknownModel(tr.req.model), extra);
  std::vector<int64_t> ids;
  if (!encodePrompt(tr.req, ids, err))
    return fail(ex, err, extra);
  std::vector<std::string> strs;
  if (tr.returnTokenStrs)
    for (int64_t id : ids)
      strs.push_back(tokenizer_->idToToken(int32_t(id)).value_or(""));
  reply(ex, 200, kJson, tokenizeResponse(ids, opts_.maxModelLen, tr.returnTokenStrs ? &strs : nullptr),
        extra);
}

void OpenAiApi::detokenize(HttpRequest &request, HttpExchange &ex, const Headers &extra) {
  std::string model;
  std::vector<int32_t> ids;
  ApiError err;
  if (!parseDetokenizeRequest(request.body, opts_.vocabSize, model, ids, err))
    return fail(ex, err, extra);
  if (!knownModel(model))
    return fail(ex, unknownModel(model), extra);
  if (!tokenizer_ || !tokenizer_->isLoaded())
    return fail(ex, badRequest("the plan carries no tokenizer, so this server cannot detokenize",
                               "tokens"),
                extra);
  reply(ex, 200, kJson, detokenizeResponse(tokenizer_->decode(ids, /*skipSpecialTokens=*/false)),
        extra);
}

bool OpenAiApi::knownModel(const std::string &model) const {
  if (model.empty())
    return true;
  for (const std::string &n : opts_.modelNames)
    if (n == model)
      return true;
  return false;
}

ApiError OpenAiApi::unknownModel(const std::string &model) const {
  ApiError e = notFound("The model `" + model + "` does not exist.", "model_not_found");
  e.param = "model";
  return e;
}

std::optional<OpenAiApi::Prepared> OpenAiApi::prepare(Endpoint endpoint, HttpRequest &request,
                                                     HttpExchange &exchange,
                                                     const Headers &extra) {
  HttpExchange *ex = &exchange;
  CompletionRequest cr;
  ApiError err;
  auto fail = [this](HttpExchange &x, const ApiError &e, Headers h) {
    this->fail(x, e, std::move(h));
    return std::nullopt;
  };
  if (!parseCompletionRequest(request.body, endpoint, opts_.limits, cr, err))
    return fail(*ex, err, extra);
  request.body = std::string(); // the prompt is in `cr` now
  if (!knownModel(cr.model))
    return fail(*ex, unknownModel(cr.model), extra);
  if (std::optional<ApiError> e = toolChoiceError(cr, opts_.toolParser))
    return fail(*ex, *e, extra);

  // Tokens.
  std::vector<int64_t> ids;
  if (!encodePrompt(cr, ids, err))
    return fail(*ex, err, extra);
  int64_t maxTokens = 0;
  if (!fitContext(cr, opts_.maxModelLen, opts_.defaultCompletionMaxTokens, ids, maxTokens, err))
    return fail(*ex, err, extra);
  std::string echo;
  if (!echoText(cr, ids, tokenizer_.get(), echo, err))
    return fail(*ex, err, extra);
  std::shared_ptr<structured::Grammar> grammar;
  if (!outputGrammar(cr, grammar, err))
    return fail(*ex, err, extra);
  Prepared p;
  p.grammar = std::move(grammar);
  p.endpoint = endpoint;
  p.cr = std::move(cr);
  p.ids = std::move(ids);
  p.maxTokens = maxTokens;
  p.echo = std::move(echo);
  p.toolPrefix = toolCallPrefix(p.cr);
  p.arrival = request.arrival;
  p.extra = extra;
  return p;
}

void OpenAiApi::start(Prepared &p, std::shared_ptr<HttpExchange> ex) {
  const bool chat = p.endpoint == Endpoint::kChat;
  const Endpoint endpoint = p.endpoint;
  CompletionRequest &cr = p.cr;
  const Headers &extra = p.extra;

  // Admission.
  serve::SchedulerStats st = scheduler_.stats();
  admission_.observeLoad(st.kvBlocksTotal > 0 ? double(st.kvBlocksUsed) / double(st.kvBlocksTotal)
                                              : 0.0,
                         st.waiting);
  if (!admission_.tryAcquire()) {
    metrics_.requestRejected("admission");
    int after = admission_.retryAfterSeconds();
    ApiError e = rateLimited("the server is at its limit of " +
                             std::to_string(admission_.snapshot().limit) +
                             " requests in flight; retry after " + std::to_string(after) + " s");
    Headers h = extra;
    h.emplace_back("Retry-After", std::to_string(after));
    return fail(*ex, e, std::move(h));
  }

  serve::Request r;
  r.id = newId(endpoint);
  r.promptIds = std::move(p.ids);
  r.maxTokens = p.maxTokens;
  r.sampling = cr.sampling;
  r.stop = cr.stop;
  r.ignoreEos = cr.ignoreEos;
  r.logprobs = cr.logprobs;
  r.stopTokenIds = cr.stopTokenIds;
  r.minTokens = cr.minTokens;
  r.includeStopStrInOutput = cr.includeStopStrInOutput;
  r.allowedTokenIds = cr.allowedTokenIds;
  r.logitBias = cr.logitBias;
  r.badWords = cr.badWords;
  r.skipSpecialTokens = cr.skipSpecialTokens;
  r.grammar = p.grammar;
  r.promptLogprobs = cr.promptLogprobs;

  auto g = std::make_shared<Generation>();
  g->api = this;
  g->metrics = &metrics_;
  g->admission = &admission_;
  g->tokenizer = tokenizer_.get();
  g->ex = ex;
  g->hdr.endpoint = endpoint;
  g->hdr.id = r.id;
  g->hdr.created = int64_t(std::time(nullptr));
  g->hdr.model = cr.model.empty() ? opts_.modelNames.front() : cr.model;
  g->stream = cr.stream;
  g->includeUsage = cr.includeUsage;
  g->reportCached = opts_.reportCachedTokens;
  g->logprobs = cr.logprobs;
  g->promptLogprobs = cr.promptLogprobs;
  g->n = cr.n;
  g->arrival = p.arrival;
  g->active = &active_;
  g->inFlight = &inFlight_;
  g->extra = extra;
  if (cr.toolChoice.kind != ToolChoice::kNone) {
    g->toolParser = opts_.toolParser;
    g->toolFunctions = toolFunctionNames(cr);
    g->namedTool = cr.toolChoice.kind == ToolChoice::kNamed;
    g->parallelToolCalls = cr.parallelToolCalls;
    g->echo = p.echo;
    // Mistral's [TOOL_CALLS] is a special token: its text must stay (as
    // vLLM's mistral parser asks).
    if (g->toolParser == ToolParser::kMistral)
      r.skipSpecialTokens = false;
  }

  // The choices: one scheduler sequence each. Choice i > 0 gets its own id
  // and, with a seed, stream i of the seed (choice 0 keeps stream 0, so
  // n = 1 is unchanged); best_of needs each token's logprob.
  const size_t numChoices = size_t(std::max<int64_t>(cr.bestOf, cr.n));
  if (numChoices > size_t(cr.n) && r.logprobs < 0)
    r.logprobs = 0;
  std::vector<serve::Request> reqs(numChoices);
  g->choices.resize(numChoices);
  g->open = int64_t(numChoices);
  for (size_t i = numChoices; i-- > 0;) {
    reqs[i] = i ? r : std::move(r);
    if (i) {
      reqs[i].id = g->hdr.id + "-" + std::to_string(i);
      reqs[i].samplerStream = uint64_t(i); // with a seed: stream i of it
      reqs[i].promptLogprobs = -1;          // choice 0's serve every choice
    }
    g->choices[i].id = reqs[i].id;
    g->choices[i].reply = p.toolPrefix;
    if (!cr.stream)
      g->choices[i].text = p.echo; // echo: the text starts with it
  }
  auto callbacks = [g](size_t i) {
    serve::RequestCallbacks cb;
    cb.onToken = [g, i](const serve::TokenEvent &ev) {
      g->ex->post([g, i, ev]() { g->onToken(i, ev); });
    };
    cb.onFinish = [g, i](const serve::FinishEvent &ev) {
      g->ex->post([g, i, ev]() { g->onFinish(i, ev); });
    };
    return cb;
  };
  // Under the lock, so that cancelAll either sees the id or has made this
  // submit refuse.
  auto submit = [this, callbacks](serve::Request req, size_t i) {
    const std::string id = req.id;
    std::lock_guard<std::mutex> lock(inFlight_.mu);
    Status s = inFlight_.cancelling
                   ? Status(StatusCode::kUnavailable, "the server is shutting down and takes no "
                                                      "new requests")
                   : scheduler_.submit(std::move(req), callbacks(i));
    if (s.isOk())
      inFlight_.ids.insert(id);
    return s;
  };
  metrics_.observeQueueTime(seconds(Clock::now() - p.arrival));
  active_.fetch_add(1);
  Status s = submit(std::move(reqs[0]), 0);
  if (!s.isOk()) {
    g->finished = true;
    active_.fetch_sub(1);
    admission_.release();
    if (s.code() == StatusCode::kResourceExhausted) {
      metrics_.requestRejected("queue_full");
      ApiError e = rateLimited(s.message());
      Headers h = extra;
      h.emplace_back("Retry-After", std::to_string(admission_.retryAfterSeconds()));
      return fail(*ex, e, std::move(h));
    }
    if (s.code() == StatusCode::kInvalidArgument) {
      // The scheduler's sentence starts with the parameter when one is at fault.
      std::string param = s.message().substr(0, s.message().find(' '));
      const std::vector<std::string> &known = requestParameters(endpoint);
      if (std::find(known.begin(), known.end(), param.substr(0, param.find('['))) == known.end())
        param.clear();
      return fail(*ex, badRequest(s.message(), param), extra);
    }
    ApiError e;
    e.status = s.code() == StatusCode::kUnavailable ? 503 : 500;
    e.type = s.code() == StatusCode::kUnavailable ? "service_unavailable" : "server_error";
    e.message = s.message();
    return fail(*ex, e, extra);
  }
  if (numChoices > 1) {
    // The other choices start once choice 0 computed the prompt (its first
    // token, on this strand): their prefill then takes its full KV blocks
    // from the prefix cache (--enable-prefix-caching) instead of computing
    // them again.
    auto rest = std::make_shared<std::vector<serve::Request>>(std::move(reqs));
    std::weak_ptr<Generation> weak = g;
    g->submitRest = [weak, rest, submit]() {
      std::shared_ptr<Generation> gen = weak.lock();
      if (!gen)
        return;
      for (size_t i = 1; i < rest->size(); ++i) {
        Status st = submit(std::move((*rest)[i]), i);
        if (!st.isOk())
          gen->refuse(i, st);
      }
    };
  }
  // The client going away cancels the request at once (onClose runs at
  // once if it went away already, e.g. while the prompt was tokenized).
  std::vector<std::string> ids;
  for (const ChoiceState &c : g->choices)
    ids.push_back(c.id);
  ex->onClose([this, ids]() {
    for (const std::string &id : ids)
      scheduler_.cancel(id);
  });
  if (cr.stream) {
    metrics_.httpResponse(200);
    ex->startStream(200, sse::kContentType, extra);
    for (size_t i = 0; i < numChoices; ++i) {
      if (chat)
        ex->write(sse::event(streamChunk(g->hdr, "", "", nullptr, 0, /*roleChunk=*/true,
                                         int64_t(i))));
      if (!p.echo.empty()) { // echo: the first chunk
        ex->write(sse::event(streamChunk(g->hdr, p.echo, "", nullptr, 0, false, int64_t(i))));
        g->choices[i].streamedBytes = p.echo.size();
      }
    }
  }
}

} // namespace accel::rt::server
