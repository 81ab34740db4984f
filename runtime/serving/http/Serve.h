//===- Serve.h - accel-run's serve mode -------------------------*- C++ -*-===//
//
// `accel-run model.plan` without --score/--prompt/--describe: load the plan,
// start the scheduler and the HTTP server, serve until SIGINT or SIGTERM.
// Flags and defaults: docs/serving.md.
//
// SIGINT/SIGTERM drain the server: new requests get 503 (/health too) while
// those in flight run on, up to `shutdownTimeout` seconds (a second signal
// cuts it short); what is left then ends with an error (streams: an error
// event and `data: [DONE]`; whole responses: a 503 JSON error); once the
// answers are written, serve() returns ok.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_HTTP_SERVE_H
#define ACCEL_RUNTIME_SERVING_HTTP_SERVE_H

#include "runtime/engine/Engine.h"
#include "runtime/serving/Scheduler.h"
#include "runtime/plan/PlanFile.h"
#include "runtime/serving/http/Access.h"
#include "runtime/serving/http/ChatTemplate.h"
#include "runtime/serving/http/HttpServer.h"
#include "runtime/serving/http/ToolParsers.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel::rt::server {

struct ServeOptions {
  std::string planPath;
  engine::EngineOptions engine;       // --max-model-len, checksums
  serve::SchedulerOptions scheduler;  // --max-num-seqs, --kv-cache-memory, ...
  HttpServerOptions http;             // --host, --port, --io-threads
  std::vector<std::string> servedModelNames; // empty: the plan's file name without .plan
  std::string chatTemplate = "auto";  // --chat-template: auto|chatml|llama3|plain|FILE.jinja
  std::string toolCallParser = "auto"; // --tool-call-parser: auto|hermes|llama3_json|mistral|none
  double admissionTtftTarget = 10.0;  // --admission-ttft-target (s); 0: off
  double shutdownTimeout = 30.0;      // --shutdown-timeout (s): the drain's bound
  std::string apiKey;                 // --api-key (or $ACCEL_API_KEY); "": none
  /// --allowed-hosts; unset: defaultAllowedHosts(http.host).
  std::optional<std::vector<std::string>> allowedHosts;
  std::vector<std::string> allowedOrigins; // --allowed-origins
  /// --max-prompt-bytes; 0: 16 bytes per token of the model's context, at
  /// least 1 MiB, at most the request body limit (http.maxBodyBytes).
  int64_t maxPromptBytes = 0;
};

/// The prompt byte limit `options` give for a context of `maxModelLen`
/// tokens, or an error when it exceeds the body limit.
StatusOr<int64_t> promptByteLimit(const ServeOptions &options, int64_t maxModelLen);

/// The chat templates `plan` carries (none for plans compiled without a
/// tokenizer_config.json, and for older plans).
JinjaTemplates planChatTemplates(const plan::PlanFile &plan);
/// --chat-template `name` (auto, chatml, llama3, plain or a .jinja file)
/// for `plan`; a plan template that does not parse is an error naming it.
StatusOr<ChatTemplate> chooseChatTemplate(const std::string &name, const plan::PlanFile &plan,
                                          const tok::Tokenizer *tokenizer);

/// --tool-call-parser `name` for `chatTemplate`: auto (the template's
/// family, ToolParsers.h detectToolParser; none for the built-in formats),
/// hermes, llama3_json, mistral or none; an unknown name is an error.
StatusOr<ToolParser> chooseToolParser(const std::string &name, const ChatTemplate &chatTemplate,
                                      const tok::Tokenizer *tokenizer);

/// Serves until a signal; errors (a plan that does not load, a port in
/// use, no scheduler built) come back as a Status before serving starts.
Status serve(const ServeOptions &options);

/// "1073741824", "512MiB", "1.5GiB", "64M" (K/M/G/T and KB/MB.. are
/// powers of 1024 too, as vLLM's --kv-cache-memory reads them).
StatusOr<int64_t> parseByteSize(std::string_view text);

/// The default model id: the plan's file name without directory and .plan.
std::string defaultModelName(const std::string &planPath);

} // namespace accel::rt::server

#endif // ACCEL_RUNTIME_SERVING_HTTP_SERVE_H
