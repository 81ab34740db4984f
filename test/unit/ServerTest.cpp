//===- ServerTest.cpp - the HTTP server without a model -------------------===//
//
// runtime/serving/http against a fake scheduler: request parsing and validation,
// OpenAI error bodies, SSE framing, the Prometheus text, admission control,
// chat templates, the routes (OpenAiApi with a fake exchange), and the
// HTTP transport over real sockets (limits, keep-alive, chunked streams,
// disconnect detection, many concurrent streams).
//
//===----------------------------------------------------------------------===//
#include "core/Json.h"
#include "runtime/serving/Scheduler.h"
#include "runtime/serving/http/Admission.h"
#include "runtime/serving/http/ChatTemplate.h"
#include "runtime/serving/http/HttpServer.h"
#include "runtime/serving/http/Metrics.h"
#include "runtime/serving/http/OpenAiApi.h"
#include "runtime/serving/http/OpenAiProtocol.h"
#include "runtime/serving/http/Serve.h"
#include "runtime/serving/http/Sse.h"
#include "runtime/serving/tokenizer/Tokenizer.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <csignal>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <set>
#include <sstream>
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <regex>
#include <thread>

using namespace accel::rt;
using namespace accel::rt::server;
namespace json = accel::rt::json;

namespace {

json::Value parseJson(const std::string &s) {
  StatusOr<json::Value> v = json::parse(s);
  EXPECT_TRUE(v.isOk()) << s;
  return v.isOk() ? std::move(v).value() : json::Value();
}

// ---------------------------------------------------------------------------
// SSE
// ---------------------------------------------------------------------------

TEST(Sse, Framing) {
  EXPECT_EQ(sse::event("{\"a\":1}"), "data: {\"a\":1}\n\n");
  EXPECT_EQ(sse::done(), "data: [DONE]\n\n");
  EXPECT_EQ(sse::event("a\nb"), "data: a\ndata: b\n\n");
  std::string stream = sse::event("x") + ": comment\n\n" + sse::event("a\nb") + sse::done();
  EXPECT_EQ(sse::parse(stream), (std::vector<std::string>{"x", "a\nb", "[DONE]"}));
  EXPECT_EQ(sse::parse("data:no-space\r\n\r\n"), (std::vector<std::string>{"no-space"}));
}

// ---------------------------------------------------------------------------
// Request parsing and validation
// ---------------------------------------------------------------------------

struct ParseOutcome {
  bool ok;
  CompletionRequest req;
  ApiError err;
};
ParseOutcome parseReq(const std::string &body, Endpoint ep = Endpoint::kCompletions) {
  ParseOutcome o;
  o.ok = parseCompletionRequest(body, ep, RequestLimits{}, o.req, o.err);
  return o;
}

TEST(OpenAiProtocol, ParsesCompletion) {
  ParseOutcome o = parseReq(R"({"model":"m","prompt":"In the beginning","max_tokens":8,
    "temperature":0,"top_p":0.9,"top_k":40,"seed":7,"stop":["x","y"],"stream":true,
    "stream_options":{"include_usage":true},"logprobs":3,"n":1,"user":"ignored"})");
  ASSERT_TRUE(o.ok) << o.err.message;
  EXPECT_EQ(o.req.model, "m");
  EXPECT_EQ(o.req.prompt, "In the beginning");
  EXPECT_FALSE(o.req.promptIsIds);
  EXPECT_EQ(o.req.maxTokens, 8);
  EXPECT_EQ(o.req.sampling.temperature, 0.0f);
  EXPECT_FLOAT_EQ(o.req.sampling.topP, 0.9f);
  EXPECT_EQ(o.req.sampling.topK, 40);
  EXPECT_EQ(o.req.sampling.seed, 7u);
  EXPECT_EQ(o.req.stop, (std::vector<std::string>{"x", "y"}));
  EXPECT_TRUE(o.req.stream);
  EXPECT_TRUE(o.req.includeUsage);
  EXPECT_EQ(o.req.logprobs, 3);
}

TEST(OpenAiProtocol, Defaults) {
  ParseOutcome o = parseReq(R"({"prompt":"x","max_tokens":null,"stop":null,"seed":null})");
  ASSERT_TRUE(o.ok) << o.err.message;
  EXPECT_FALSE(o.req.maxTokens.has_value());
  EXPECT_EQ(o.req.sampling.temperature, 1.0f); // OpenAI's default
  EXPECT_FALSE(o.req.sampling.seed.has_value());
  EXPECT_FALSE(o.req.stream);
  EXPECT_EQ(o.req.logprobs, -1);
}

TEST(OpenAiProtocol, PromptForms) {
  ParseOutcome ids = parseReq(R"({"prompt":[1,2,3]})");
  ASSERT_TRUE(ids.ok);
  EXPECT_TRUE(ids.req.promptIsIds);
  EXPECT_EQ(ids.req.promptIds, (std::vector<int64_t>{1, 2, 3}));
  ParseOutcome listOfOne = parseReq(R"({"prompt":["hello"]})");
  ASSERT_TRUE(listOfOne.ok);
  EXPECT_EQ(listOfOne.req.prompt, "hello");
  ParseOutcome idsOfOne = parseReq(R"({"prompt":[[4,5]]})");
  ASSERT_TRUE(idsOfOne.ok);
  EXPECT_EQ(idsOfOne.req.promptIds, (std::vector<int64_t>{4, 5}));
  ParseOutcome two = parseReq(R"({"prompt":["a","b"]})");
  EXPECT_FALSE(two.ok);
  EXPECT_EQ(two.err.param, "prompt");
  EXPECT_NE(two.err.message.find("one prompt per request"), std::string::npos);
}

TEST(OpenAiProtocol, ParsesChat) {
  ParseOutcome o = parseReq(R"({"model":"m","messages":[
      {"role":"system","content":"Be brief."},
      {"role":"user","content":[{"type":"text","text":"Hi "},{"type":"text","text":"there"}]},
      {"role":"assistant","content":null},
      {"role":"developer","content":"x"}],
    "max_completion_tokens":5,"logprobs":true,"top_logprobs":2})",
                            Endpoint::kChat);
  ASSERT_TRUE(o.ok) << o.err.message;
  ASSERT_EQ(o.req.messages.size(), 4u);
  EXPECT_EQ(o.req.messages[1].content, "Hi there");
  EXPECT_EQ(o.req.messages[2].content, "");
  EXPECT_EQ(o.req.messages[3].role, "system");
  EXPECT_EQ(o.req.maxTokens, 5);
  EXPECT_EQ(o.req.logprobs, 2);
}

TEST(OpenAiProtocol, ErrorsNameTheField) {
  struct Case {
    const char *body;
    Endpoint ep;
    const char *param;
    const char *inMessage;
  };
  const Case cases[] = {
      {R"({"prompt":"x","temperature":"hot"})", Endpoint::kCompletions, "temperature",
       "'temperature' must be a number, got a string"},
      {R"({"prompt":"x","max_tokens":"8"})", Endpoint::kCompletions, "max_tokens",
       "'max_tokens' must be an integer, got a string"},
      {R"({"prompt":"x","max_tokens":2.5})", Endpoint::kCompletions, "max_tokens",
       "must be an integer"},
      {R"({"prompt":"x","max_tokens":0})", Endpoint::kCompletions, "max_tokens", "at least 1"},
      {R"({"prompt":"x","n":17})", Endpoint::kCompletions, "n", "'n' must be in [1, 16], got 17"},
      {R"({"prompt":"x","n":4,"best_of":3})", Endpoint::kCompletions, "best_of",
       "'best_of' must be in [n = 4, 16], got 3"},
      {R"({"prompt":"x","best_of":17})", Endpoint::kCompletions, "best_of",
       "'best_of' must be in [n = 1, 16], got 17"},
      {R"({"prompt":"x","best_of":2,"stream":true})", Endpoint::kCompletions, "best_of",
       "cannot be streamed"},
      {R"({"messages":[{"role":"user","content":"x"}],"best_of":2})", Endpoint::kChat, "best_of",
       "/v1/completions only"},
      {R"({"prompt":"x","stop":["a",3]})", Endpoint::kCompletions, "stop[1]",
       "'stop[1]' must be a string, got an integer"},
      {R"({"prompt":"x","stop":5})", Endpoint::kCompletions, "stop", "a string or an array"},
      {R"({"prompt":"x","stream":"yes"})", Endpoint::kCompletions, "stream", "a boolean"},
      {R"({"prompt":"x","model":3})", Endpoint::kCompletions, "model", "a string"},
      {R"({"prompt":"x","temperature":-1})", Endpoint::kCompletions, "temperature",
       "'temperature' must be a number >= 0"},
      {R"({"prompt":"x","top_p":0})", Endpoint::kCompletions, "top_p", "'top_p' must be in (0, 1]"},
      {R"({"prompt":"x","top_k":-5})", Endpoint::kCompletions, "top_k", "'top_k' must be"},
      {R"({"prompt":"x","logprobs":99})", Endpoint::kCompletions, "logprobs", "[0, 20]"},
      {R"({"prompt":"x","presence_penalty":"0.5"})", Endpoint::kCompletions, "presence_penalty",
       "'presence_penalty' must be a number, got a string"},
      {R"({"messages":[{"role":"user","content":"x"}],"frequency_penalty":2.5})", Endpoint::kChat,
       "frequency_penalty", "'frequency_penalty' must be in [-2, 2], got 2.5"},
      {R"({"prompt":"x","echo":true,"logprobs":1})", Endpoint::kCompletions, "echo",
       "prompt's logprobs"},
      {R"({"prompt":[1,"a"]})", Endpoint::kCompletions, "prompt[1]", "integer token id"},
      {R"({"prompt":""})", Endpoint::kCompletions, "prompt", "empty"},
      {R"({"max_tokens":3})", Endpoint::kCompletions, "prompt", "'prompt' is required"},
      {R"({"prompt":{}})", Endpoint::kCompletions, "prompt", "got an object"},
      {R"({"messages":"hi"})", Endpoint::kChat, "messages", "must be an array"},
      {R"({"messages":[]})", Endpoint::kChat, "messages", "empty"},
      {R"({"messages":[{"role":"wizard","content":"x"}]})", Endpoint::kChat,
       "messages[0].role", "supported roles"},
      {R"({"messages":[{"role":"user"}]})", Endpoint::kChat, "messages[0].content",
       "required"},
      {R"({"messages":[{"role":"user","content":5}]})", Endpoint::kChat,
       "messages[0].content", "a string or an array"},
      {R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})", Endpoint::kChat,
       "messages[0].content[0].type", "not supported"},
      {R"({"messages":[{"role":"user","content":"x"}],"top_logprobs":2})", Endpoint::kChat,
       "top_logprobs", "needs 'logprobs': true"},
      {R"({"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function"}]})",
       Endpoint::kChat, "tools[0].function", "must be an object with the function's name"},
  };
  for (const Case &c : cases) {
    ParseOutcome o = parseReq(c.body, c.ep);
    EXPECT_FALSE(o.ok) << c.body;
    EXPECT_EQ(o.err.status, 400) << c.body;
    EXPECT_EQ(o.err.param, c.param) << c.body << " -> " << o.err.message;
    EXPECT_NE(o.err.message.find(c.inMessage), std::string::npos)
        << c.body << " -> " << o.err.message;
  }
}

// Issue 20 item 4: every numeric parameter is range-checked, with int64
// extremes, negative numbers, floats where integers are expected and
// NaN/Infinity spellings; no check overflows.
TEST(OpenAiProtocol, NumericRangesAndExtremes) {
  struct Case {
    const char *member; // merged into {"prompt":"x", ...}
    const char *param;  // "" -> accepted
    const char *inMessage;
  };
  const Case cases[] = {
      {R"("max_tokens":9223372036854775807)", "", ""}, // the context check refuses it (below)
      {R"("max_tokens":-9223372036854775808)", "max_tokens", "at least 1"},
      {R"("max_tokens":9223372036854775808)", "max_tokens", "an integer in [-9223372036854775808"},
      {R"("max_tokens":1e300)", "max_tokens", "an integer in ["},
      {R"("max_tokens":-1)", "max_tokens", "at least 1"},
      {R"("max_tokens":3.5)", "max_tokens", "must be an integer, got 3.5"},
      {R"("max_tokens":2e1)", "", ""},
      {R"("max_tokens":true)", "max_tokens", "an integer, got a boolean"},
      {R"("max_tokens":"Infinity")", "max_tokens", "got a string"},
      {R"("seed":-9223372036854775808)", "", ""},
      {R"("seed":9223372036854775807)", "", ""},
      {R"("seed":1e19)", "seed", "an integer in ["},
      {R"("seed":0.5)", "seed", "an integer"},
      {R"("temperature":1e39)", "temperature", "float32"},
      {R"("temperature":-0.0)", "", ""},
      {R"("temperature":1e-320)", "", ""},
      {R"("temperature":"NaN")", "temperature", "a number, got a string"},
      {R"("repetition_penalty":1e-45)", "", ""},
      {R"("repetition_penalty":1e-46)", "repetition_penalty", "float32"},
      {R"("repetition_penalty":0)", "repetition_penalty", "> 0"},
      {R"("repetition_penalty":-1)", "repetition_penalty", "> 0"},
      {R"("repetition_penalty":1e39)", "repetition_penalty", "float32"},
      {R"("top_p":1.0000001)", "top_p", "(0, 1]"},
      {R"("top_p":-0.5)", "top_p", "(0, 1]"},
      {R"("top_p":1e-300)", "top_p", "top_p must be in (0, 1]"}, // 0 as a float32
      {R"("min_p":-0.1)", "min_p", "[0, 1]"},
      {R"("min_p":1.5)", "min_p", "[0, 1]"},
      {R"("top_k":-2)", "top_k", "-1 or 0 (off) or at least 1"},
      {R"("top_k":-9223372036854775808)", "top_k", "-1 or 0"},
      {R"("top_k":9223372036854775807)", "", ""},
      {R"("top_k":-1)", "", ""},
      {R"("presence_penalty":2.5)", "presence_penalty", "[-2, 2]"},
      {R"("frequency_penalty":-3)", "frequency_penalty", "[-2, 2]"},
      {R"("presence_penalty":-2)", "", ""},
      {R"("frequency_penalty":2)", "", ""},
      {R"("presence_penalty":2.0000001)", "presence_penalty", "[-2, 2]"},
      {R"("frequency_penalty":-2.0000001)", "frequency_penalty", "[-2, 2]"},
      {R"("frequency_penalty":1e300)", "frequency_penalty", "[-2, 2]"},
      {R"("frequency_penalty":true)", "frequency_penalty", "a number, got a boolean"},
      {R"("presence_penalty":[1])", "presence_penalty", "a number, got an array"},
      {R"("logprobs":-1)", "logprobs", "in [0, 20]"},
      {R"("logprobs":9223372036854775807)", "logprobs", "in [0, 20]"},
      {R"("logprobs":1.5)", "logprobs", "an integer"},
      {R"("n":0)", "n", "must be in [1, 16]"},
      {R"("n":-9223372036854775808)", "n", "must be in [1, 16]"},
      {R"("n":16)", "", ""},
      {R"("best_of":9223372036854775807)", "best_of", "must be in [n = 1, 16]"},
      {R"("min_tokens":-1)", "min_tokens", "at least 0"},
      {R"("min_tokens":9223372036854775807)", "", ""}, // no max_tokens: checked in fitContext
      {R"("max_tokens":4,"min_tokens":5)", "min_tokens", "in [0, max_tokens = 4]"},
      {R"("truncate_prompt_tokens":0)", "truncate_prompt_tokens", "at least 1"},
      {R"("truncate_prompt_tokens":-1)", "truncate_prompt_tokens", "at least 1"},
      {R"("truncate_prompt_tokens":9223372036854775807)", "", ""},
      {R"("stop_token_ids":[-1])", "stop_token_ids[0]", "not a token id"},
      {R"("stop_token_ids":[100])", "stop_token_ids[0]", "vocabulary of 100"},
      {R"("stop_token_ids":[1,2.5])", "stop_token_ids[1]", "an integer"},
      {R"("stop_token_ids":["1"])", "stop_token_ids[0]", "got a string"},
      {R"("stop_token_ids":5)", "stop_token_ids", "an array of token ids"},
      {R"("allowed_token_ids":[9223372036854775807])", "allowed_token_ids[0]", "not a token id"},
      {R"("allowed_token_ids":[])", "allowed_token_ids", "empty"},
      {R"("logit_bias":{"5":100.5})", "logit_bias.5", "[-100, 100]"},
      {R"("logit_bias":{"100":1})", "logit_bias.100", "vocabulary of 100"},
      {R"("logit_bias":{"-1":1})", "logit_bias.-1", "not a token id"},
      {R"("logit_bias":{"x":1})", "logit_bias.x", "not a token id"},
      {R"("logit_bias":{"5":"1"})", "logit_bias.5", "a number"},
      {R"("logit_bias":[1])", "logit_bias", "an object"},
      {R"("logit_bias":{"5":-100})", "", ""},
      {R"("prompt":[9223372036854775807])", "", ""}, // the vocabulary check refuses it (API)
      {R"("prompt":[1e3])", "prompt[0]", "an integer token id"},
  };
  RequestLimits limits;
  limits.vocabSize = 100;
  for (const Case &c : cases) {
    std::string body = std::string("{\"prompt\":\"x\",") + c.member + "}";
    CompletionRequest req;
    ApiError err;
    bool ok = parseCompletionRequest(body, Endpoint::kCompletions, limits, req, err);
    if (!*c.param) {
      EXPECT_TRUE(ok) << body << " -> " << err.message;
      continue;
    }
    EXPECT_FALSE(ok) << body;
    EXPECT_EQ(err.status, 400) << body;
    EXPECT_EQ(err.param, c.param) << body << " -> " << err.message;
    EXPECT_NE(err.message.find(c.inMessage), std::string::npos) << body << " -> " << err.message;
  }
  // NaN and the infinities are no JSON: 400, the body is not valid JSON.
  for (const char *bad : {R"({"prompt":"x","temperature":NaN})",
                          R"({"prompt":"x","temperature":Infinity})",
                          R"({"prompt":"x","top_p":-Infinity})",
                          R"({"prompt":"x","max_tokens":1e999})"}) {
    ParseOutcome o = parseReq(bad);
    EXPECT_FALSE(o.ok) << bad;
    EXPECT_NE(o.err.message.find("not valid JSON"), std::string::npos) << o.err.message;
  }
  // The float32 parameters keep their values.
  ParseOutcome tiny = parseReq(R"({"prompt":"x","repetition_penalty":1e-45,"seed":-1})");
  ASSERT_TRUE(tiny.ok) << tiny.err.message;
  EXPECT_GT(tiny.req.sampling.repetitionPenalty, 0.0f);
  EXPECT_EQ(tiny.req.sampling.seed, ~uint64_t(0));
  // The penalties reach the sampler as given (OpenAI's names, vLLM's ranges).
  ParseOutcome pen = parseReq(R"({"prompt":"x","presence_penalty":-2,"frequency_penalty":1.5})");
  ASSERT_TRUE(pen.ok) << pen.err.message;
  EXPECT_EQ(pen.req.sampling.presencePenalty, -2.0f);
  EXPECT_EQ(pen.req.sampling.frequencyPenalty, 1.5f);
  EXPECT_TRUE(pen.req.sampling.hasPenalties());
  ParseOutcome none = parseReq(R"({"prompt":"x","presence_penalty":0,"frequency_penalty":0})");
  ASSERT_TRUE(none.ok) << none.err.message;
  EXPECT_FALSE(none.req.sampling.hasPenalties());
}

TEST(OpenAiProtocol, FitContextIsOverflowSafe) {
  auto fit = [](const std::string &member, std::vector<int64_t> ids, Endpoint ep, int64_t &max,
                ApiError &err) {
    std::string body = ep == Endpoint::kChat
                           ? R"({"messages":[{"role":"user","content":"x"}])" + member + "}"
                           : R"({"prompt":"x")" + member + "}";
    CompletionRequest req;
    if (!parseCompletionRequest(body, ep, RequestLimits{}, req, err))
      return false;
    return fitContext(req, 32, 16, ids, max, err);
  };
  int64_t max = 0;
  ApiError err;
  EXPECT_FALSE(fit(R"(,"max_tokens":9223372036854775807)", {1, 2}, Endpoint::kCompletions, max,
                   err));
  EXPECT_EQ(err.code, "context_length_exceeded");
  EXPECT_EQ(err.param, "max_tokens");
  EXPECT_NE(err.message.find("you requested more than 9223372036854775807 tokens (2 in the "
                             "prompt, 9223372036854775807 for the completion)"),
            std::string::npos)
      << err.message;
  EXPECT_FALSE(fit(R"(,"max_completion_tokens":9223372036854775806)", {1}, Endpoint::kChat, max,
                   err));
  EXPECT_EQ(err.param, "max_completion_tokens");
  EXPECT_TRUE(fit(R"(,"max_tokens":30)", {1, 2}, Endpoint::kCompletions, max, err));
  EXPECT_EQ(max, 30);
  EXPECT_FALSE(fit(R"(,"max_tokens":31)", {1, 2}, Endpoint::kCompletions, max, err));
  EXPECT_NE(err.message.find("you requested 33 tokens"), std::string::npos);
  EXPECT_TRUE(fit("", {1, 2}, Endpoint::kChat, max, err));
  EXPECT_EQ(max, 30); // the rest of the context
  // min_tokens against the resolved default.
  EXPECT_FALSE(fit(R"(,"min_tokens":9223372036854775807)", {1}, Endpoint::kCompletions, max,
                   err));
  EXPECT_EQ(err.param, "min_tokens");
  EXPECT_TRUE(fit(R"(,"min_tokens":16)", {1}, Endpoint::kCompletions, max, err));
  // truncate_prompt_tokens keeps the last ids, and then the prompt fits.
  std::vector<int64_t> longPrompt(40, 7);
  longPrompt.back() = 9;
  EXPECT_FALSE(fit("", longPrompt, Endpoint::kCompletions, max, err));
  EXPECT_EQ(err.param, "prompt");
  CompletionRequest req;
  ASSERT_TRUE(parseCompletionRequest(R"({"prompt":"x","truncate_prompt_tokens":4})",
                                     Endpoint::kCompletions, RequestLimits{}, req, err));
  ASSERT_TRUE(fitContext(req, 32, 16, longPrompt, max, err)) << err.message;
  EXPECT_EQ(longPrompt, (std::vector<int64_t>{7, 7, 7, 9}));
  EXPECT_EQ(max, 16);
}

TEST(OpenAiProtocol, UnknownParametersAreRefused) {
  ParseOutcome typo = parseReq(R"({"prompt":"x","max_token":5})");
  EXPECT_FALSE(typo.ok);
  EXPECT_EQ(typo.err.param, "max_token");
  EXPECT_NE(typo.err.message.find("unknown parameter 'max_token' for /v1/completions"),
            std::string::npos)
      << typo.err.message;
  // A long name is cut in the answer.
  ParseOutcome longName = parseReq("{\"prompt\":\"x\",\"" + std::string(5000, 'a') + "\":1}");
  EXPECT_EQ(longName.err.param, std::string(64, 'a') + "...");
  // A chat parameter is unknown to /v1/completions, and the reverse.
  EXPECT_EQ(parseReq(R"({"prompt":"x","messages":[]})").err.param, "messages");
  EXPECT_EQ(parseReq(R"({"messages":[{"role":"user","content":"x"}],"suffix":"y"})",
                     Endpoint::kChat)
                .err.message.rfind("unknown parameter 'suffix' for /v1/chat/completions", 0),
            0u);
  // Nested members: stream options, messages, content parts.
  EXPECT_EQ(parseReq(R"({"prompt":"x","stream":true,"stream_options":{"usage":true}})").err.param,
            "stream_options.usage");
  EXPECT_EQ(parseReq(R"({"messages":[{"role":"user","content":"x","tool_calls":[{"id":"1"}]}]})",
                     Endpoint::kChat)
                .err.param,
            "messages[0].tool_calls");
  EXPECT_EQ(
      parseReq(R"({"messages":[{"role":"user","content":[{"type":"text","text":"x","cache":1}]}]})",
               Endpoint::kChat)
          .err.param,
      "messages[0].content[0].cache");
  // What clients echo back from a response is fine when null or empty.
  ParseOutcome echoed = parseReq(
      R"({"messages":[{"role":"assistant","content":"x","refusal":null,"tool_calls":[]},
                      {"role":"user","content":"y","name":null}]})",
      Endpoint::kChat);
  EXPECT_TRUE(echoed.ok) << echoed.err.message;
  // stream_options without stream (vLLM refuses it too); empty is nothing.
  EXPECT_EQ(parseReq(R"({"prompt":"x","stream_options":{"include_usage":true}})").err.param,
            "stream_options");
  EXPECT_TRUE(parseReq(R"({"prompt":"x","stream_options":{}})").ok);
  EXPECT_TRUE(parseReq(R"({"prompt":"x","stream_options":{"include_usage":null}})").ok);
  EXPECT_TRUE(parseReq(R"({"prompt":"x","stream":false,"stream_options":null})").ok);
}

TEST(OpenAiProtocol, MalformedJson) {
  for (const char *body : {"", "{", "{\"prompt\": }", "[1,2]", "\"x\"", "{\"prompt\":\"x\"} x"}) {
    ParseOutcome o = parseReq(body);
    EXPECT_FALSE(o.ok) << body;
    EXPECT_EQ(o.err.status, 400);
    EXPECT_TRUE(o.err.message.find("not valid JSON") != std::string::npos ||
                o.err.message.find("must be a JSON object") != std::string::npos)
        << o.err.message;
  }
}

TEST(OpenAiProtocol, ErrorBodyShape) {
  json::Value v = parseJson(errorBody(badRequest("bad", "temperature")));
  const json::Value *e = v.find("error");
  ASSERT_TRUE(e && e->isObject());
  EXPECT_EQ(e->find("message")->asString(), "bad");
  EXPECT_EQ(e->find("type")->asString(), "invalid_request_error");
  EXPECT_EQ(e->find("param")->asString(), "temperature");
  EXPECT_TRUE(e->find("code")->isNull());
  json::Value v2 = parseJson(errorBody(badRequest("bad")));
  EXPECT_TRUE(v2.find("error")->find("param")->isNull());
}

TEST(OpenAiProtocol, ResponseObjects) {
  ResponseHeader h{Endpoint::kCompletions, "cmpl-1", 123, "demo"};
  Usage u{4, 2, -1};
  json::Value c = parseJson(completeResponse(h, "Hi", "length", u, nullptr));
  EXPECT_EQ(c.find("object")->asString(), "text_completion");
  EXPECT_EQ(c.find("id")->asString(), "cmpl-1");
  EXPECT_EQ(c.find("choices")->items()[0].find("text")->asString(), "Hi");
  EXPECT_EQ(c.find("choices")->items()[0].find("finish_reason")->asString(), "length");
  EXPECT_EQ(c.find("usage")->find("total_tokens")->asInt(), 6);
  EXPECT_EQ(c.find("usage")->find("prompt_tokens_details"), nullptr);

  h.endpoint = Endpoint::kChat;
  std::vector<TokenLogprob> lps{{"Hi", -0.5f, {{"Hi", -0.5f}, {"Ho", -1.5f}}}};
  json::Value chat = parseJson(completeResponse(h, "Hi", "stop", Usage{4, 1, 2}, &lps));
  EXPECT_EQ(chat.find("object")->asString(), "chat.completion");
  const json::Value &choice = chat.find("choices")->items()[0];
  EXPECT_EQ(choice.find("message")->find("role")->asString(), "assistant");
  EXPECT_EQ(choice.find("message")->find("content")->asString(), "Hi");
  const json::Value &lp = choice.find("logprobs")->find("content")->items()[0];
  EXPECT_EQ(lp.find("token")->asString(), "Hi");
  EXPECT_EQ(lp.find("bytes")->items().size(), 2u);
  EXPECT_EQ(lp.find("top_logprobs")->items().size(), 2u);
  EXPECT_EQ(chat.find("usage")->find("prompt_tokens_details")->find("cached_tokens")->asInt(), 2);

  json::Value role = parseJson(streamChunk(h, "", "", nullptr, 0, true));
  EXPECT_EQ(role.find("object")->asString(), "chat.completion.chunk");
  EXPECT_EQ(role.find("choices")->items()[0].find("delta")->find("role")->asString(),
            "assistant");
  json::Value last = parseJson(streamChunk(h, "", "stop", nullptr, 0));
  EXPECT_EQ(last.find("choices")->items()[0].find("delta")->size(), 0u);
  EXPECT_EQ(last.find("choices")->items()[0].find("finish_reason")->asString(), "stop");
  json::Value usage = parseJson(usageChunk(h, u));
  EXPECT_EQ(usage.find("choices")->size(), 0u);
  EXPECT_EQ(usage.find("usage")->find("completion_tokens")->asInt(), 2);

  h.endpoint = Endpoint::kCompletions;
  std::vector<TokenLogprob> two{{"a", -1.f, {{"a", -1.f}}}, {"bc", -2.f, {{"bc", -2.f}}}};
  json::Value cl = parseJson(streamChunk(h, "abc", "", &two, 5));
  const json::Value *l = cl.find("choices")->items()[0].find("logprobs");
  EXPECT_EQ(l->find("tokens")->items()[1].asString(), "bc");
  EXPECT_EQ(l->find("text_offset")->items()[0].asInt(), 5);
  EXPECT_EQ(l->find("text_offset")->items()[1].asInt(), 6);
  EXPECT_EQ(l->find("top_logprobs")->items()[0].find("a")->asDouble(), -1.0);
}

// ---------------------------------------------------------------------------
// Chat templates
// ---------------------------------------------------------------------------

TEST(ChatTemplate, Formats) {
  std::vector<ChatMessage> m{{"system", "S"}, {"user", "U"}};
  EXPECT_EQ(ChatTemplate(ChatTemplate::Format::kChatML).render(m, true),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(ChatTemplate(ChatTemplate::Format::kLlama3).render(m, false),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nU<|eot_id|>");
  EXPECT_EQ(ChatTemplate(ChatTemplate::Format::kPlain).render(m, true),
            "system: S\nuser: U\nassistant:");
  EXPECT_TRUE(ChatTemplate(ChatTemplate::Format::kPlain).addSpecialTokens());
  EXPECT_FALSE(ChatTemplate(ChatTemplate::Format::kChatML).addSpecialTokens());
  // continue_final_message: the last message has no end marker.
  std::vector<ChatMessage> c{{"user", "U"}, {"assistant", "The"}};
  EXPECT_EQ(ChatTemplate(ChatTemplate::Format::kChatML).render(c, false, true),
            "<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\nThe");
  EXPECT_EQ(ChatTemplate(ChatTemplate::Format::kLlama3).render(c, false, true),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nU<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nThe");
  EXPECT_EQ(ChatTemplate(ChatTemplate::Format::kPlain).render(c, false, true),
            "user: U\nassistant: The");
}

TEST(ChatTemplate, Choose) {
  EXPECT_EQ(ChatTemplate::choose("auto", nullptr)->format(), ChatTemplate::Format::kPlain);
  EXPECT_EQ(ChatTemplate::choose("llama3", nullptr)->format(), ChatTemplate::Format::kLlama3);
  StatusOr<ChatTemplate> bad = ChatTemplate::choose("{{ messages }}", nullptr);
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("auto, chatml, llama3, plain"), std::string::npos);
  const char *chatml = R"({"version":"1.0","added_tokens":[
      {"id":0,"content":"<|im_start|>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},
      {"id":1,"content":"<|im_end|>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}],
    "normalizer":null,"pre_tokenizer":null,"post_processor":null,"decoder":null,
    "model":{"type":"BPE","vocab":{"<|im_start|>":0,"<|im_end|>":1,"a":2},"merges":[]}})";
  StatusOr<tok::Tokenizer> t = tok::Tokenizer::fromJson(chatml);
  ASSERT_TRUE(t.isOk()) << t.status().message();
  EXPECT_EQ(ChatTemplate::choose("auto", &*t)->format(), ChatTemplate::Format::kChatML);
}

TEST(ChatTemplate, Jinja) {
  JinjaTemplates j;
  j.templates = {{"default", "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}"
                             "{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}"
                             "{{ extra }}"},
                 {"tool_use", "T:{{ tools | length }}:{{ messages[0].content }}"}};
  j.specialTokens = {{"bos_token", "<s>"}};
  j.origin = "tokenizer_config.json chat_template";
  StatusOr<ChatTemplate> t = ChatTemplate::fromJinja(j);
  ASSERT_TRUE(t.isOk()) << t.status().message();
  EXPECT_EQ(t->format(), ChatTemplate::Format::kJinja);
  EXPECT_EQ(t->name(), "jinja (tokenizer_config.json chat_template)");
  EXPECT_FALSE(t->addSpecialTokens()); // the template writes BOS itself
  ChatInput in;
  in.messages = *json::parse(R"([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hel"}])");
  EXPECT_EQ(*t->apply(in), "<s><user>Hi<assistant>Hel<assistant>");
  in.kwargs = *json::parse(R"({"extra": "!"})");
  in.addGenerationPrompt = false;
  EXPECT_EQ(*t->apply(in), "<s><user>Hi<assistant>Hel!");
  // continue_final_message: the text ends with the last message's content.
  in.continueFinalMessage = true;
  EXPECT_EQ(*t->apply(in), "<s><user>Hi<assistant>Hel");
  // Tools select "tool_use".
  in = ChatInput();
  in.messages = *json::parse(R"([{"role": "user", "content": "Hi"}])");
  in.tools = *json::parse(R"([{"type": "function", "function": {"name": "f"}}])");
  EXPECT_EQ(*t->apply(in), "T:1:Hi");
  // A template that does not parse is refused naming it and the line.
  j.templates = {{"default", "{% if x %}"}};
  StatusOr<ChatTemplate> bad = ChatTemplate::fromJinja(j);
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().message(),
            "the chat template tokenizer_config.json chat_template, line 1: the block opened here "
            "is not closed: expected 'elif' or 'else' or 'endif' before the end of the template");
}

// ---------------------------------------------------------------------------
// Metrics
// ---------------------------------------------------------------------------

/// name{labels} -> value for every sample line; fails the test on a line
/// that is not valid Prometheus text.
std::map<std::string, double> scrape(const std::string &text) {
  static const std::regex sample(
      R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*")*\})? ([-+]?(?:[0-9.]+(?:[eE][-+]?[0-9]+)?|Inf|NaN))$)");
  static const std::regex meta(R"(^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$)");
  std::map<std::string, double> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    EXPECT_NE(nl, std::string::npos) << "the text must end with a newline";
    if (nl == std::string::npos)
      break;
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    std::smatch m;
    if (line.rfind("#", 0) == 0) {
      EXPECT_TRUE(std::regex_match(line, meta)) << line;
      continue;
    }
    EXPECT_TRUE(std::regex_match(line, m, sample)) << line;
    if (!m.empty())
      out[m[1].str() + m[2].str()] = std::stod(m[3].str() == "+Inf" ? "inf" : m[3].str());
  }
  return out;
}

TEST(Metrics, PrometheusText) {
  Metrics metrics("demo");
  metrics.observeTtft(0.003);
  metrics.observeTtft(0.2);
  metrics.observeTtft(100.0);
  metrics.observeItl(0.01);
  metrics.observeE2e(1.0);
  metrics.observeQueueTime(0.0001);
  metrics.requestFinished("stop", 4, 10);
  metrics.requestFinished("abort", 4, 3);
  metrics.requestRejected("admission");
  metrics.httpResponse(200);
  metrics.httpResponse(429);
  serve::SchedulerStats st;
  st.running = 3;
  st.waiting = 2;
  st.kvBlocksTotal = 100;
  st.kvBlocksUsed = 25;
  st.prefixCacheQueries = 50;
  st.prefixCacheHits = 20;
  st.promptTokensTotal = 8;
  st.generationTokensTotal = 13;
  st.stepSecondsTotal = 3.0;
  st.engineSecondsTotal = 2.5;
  st.recentStepSeconds = 1.2;
  st.recentEngineSeconds = 1.0;
  Metrics::ServerGauges g;
  g.openConnections = 7;
  g.admission.limit = 128;
  std::string text = metrics.render(st, g);
  std::map<std::string, double> s = scrape(text);
  const std::string m = "{model_name=\"demo\"}";
  EXPECT_EQ(s["accel:num_requests_running" + m], 3);
  EXPECT_EQ(s["accel:num_requests_waiting" + m], 2);
  EXPECT_DOUBLE_EQ(s["accel:kv_cache_usage_perc" + m], 0.25);
  EXPECT_EQ(s["accel:kv_cache_blocks_used" + m], 25);
  EXPECT_EQ(s["accel:prefix_cache_hits_total" + m], 20);
  EXPECT_EQ(s["accel:prefix_cache_queries_total" + m], 50);
  EXPECT_EQ(s["accel:prompt_tokens_total" + m], 8);
  EXPECT_EQ(s["accel:generation_tokens_total" + m], 13);
  EXPECT_EQ(s["accel:http_open_connections" + m], 7);
  EXPECT_EQ(s["accel:admission_limit" + m], 128);
  EXPECT_DOUBLE_EQ(s["accel:step_seconds_total" + m], 3.0);
  EXPECT_DOUBLE_EQ(s["accel:step_engine_seconds_total" + m], 2.5);
  EXPECT_NEAR(s["accel:step_host_overhead_ratio" + m], 0.2, 1e-12);
  EXPECT_EQ(s["accel:request_success_total{model_name=\"demo\",finished_reason=\"stop\"}"], 1);
  EXPECT_EQ(s["accel:request_success_total{model_name=\"demo\",finished_reason=\"abort\"}"], 1);
  EXPECT_EQ(s["accel:request_success_total{model_name=\"demo\",finished_reason=\"length\"}"], 0);
  EXPECT_EQ(s["accel:request_rejected_total{model_name=\"demo\",reason=\"admission\"}"], 1);
  EXPECT_EQ(s["accel:http_responses_total{model_name=\"demo\",code=\"429\"}"], 1);
  // Histograms: cumulative buckets, +Inf == count, sum.
  const std::string ttft = "accel:time_to_first_token_seconds";
  EXPECT_EQ(s[ttft + "_bucket{model_name=\"demo\",le=\"0.001\"}"], 0);
  EXPECT_EQ(s[ttft + "_bucket{model_name=\"demo\",le=\"0.005\"}"], 1);
  EXPECT_EQ(s[ttft + "_bucket{model_name=\"demo\",le=\"0.25\"}"], 2);
  EXPECT_EQ(s[ttft + "_bucket{model_name=\"demo\",le=\"80.0\"}"], 2);
  EXPECT_EQ(s[ttft + "_bucket{model_name=\"demo\",le=\"+Inf\"}"], 3);
  EXPECT_EQ(s[ttft + "_count" + m], 3);
  EXPECT_NEAR(s[ttft + "_sum" + m], 100.203, 1e-9);
  for (const char *h : {"accel:inter_token_latency_seconds", "accel:e2e_request_latency_seconds",
                        "accel:request_queue_time_seconds", "accel:request_prompt_tokens",
                        "accel:request_generation_tokens"}) {
    EXPECT_NE(text.find(std::string("# TYPE ") + h + " histogram"), std::string::npos) << h;
    EXPECT_EQ(s[std::string(h) + "_count" + m], std::string(h).find("tokens") != std::string::npos
                                                    ? 2
                                                    : 1)
        << h;
  }
  // Every family is declared once.
  std::regex type(R"(# TYPE (\S+) )");
  std::map<std::string, int> seen;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), type); it != std::sregex_iterator();
       ++it)
    EXPECT_EQ(++seen[(*it)[1].str()], 1) << (*it)[1].str();
}

// A pipelined plan's stages (SchedulerStats::pipeline): busy, idle and
// micro-batch counters labelled by stage; none for a plan of one stage.
TEST(Metrics, PipelineStagesByStage) {
  Metrics metrics("demo");
  serve::SchedulerStats st;
  Metrics::ServerGauges g;
  EXPECT_EQ(metrics.render(st, g).find("accel:pp_stage"), std::string::npos);
  st.pipeline = engine::PipelineStats();
  st.pipeline->stages.resize(2);
  st.pipeline->stages[0] = {1.5, 0.25, 4, 7};
  st.pipeline->stages[1] = {0.5, 1.25, 4, 7};
  std::string text = metrics.render(st, g);
  std::map<std::string, double> s = scrape(text);
  const std::string l0 = "{model_name=\"demo\",stage=\"0\"}", l1 = "{model_name=\"demo\",stage=\"1\"}";
  EXPECT_DOUBLE_EQ(s["accel:pp_stage_busy_seconds_total" + l0], 1.5);
  EXPECT_DOUBLE_EQ(s["accel:pp_stage_busy_seconds_total" + l1], 0.5);
  EXPECT_DOUBLE_EQ(s["accel:pp_stage_idle_seconds_total" + l0], 0.25);
  EXPECT_DOUBLE_EQ(s["accel:pp_stage_idle_seconds_total" + l1], 1.25);
  EXPECT_EQ(s["accel:pp_stage_micro_batches_total" + l1], 7);
  EXPECT_NE(text.find("# TYPE accel:pp_stage_idle_seconds_total counter"), std::string::npos);
}

TEST(Metrics, HistogramBuckets) {
  Histogram h({1.0, 2.0});
  h.observe(1.0); // le is inclusive
  h.observe(1.5);
  h.observe(5.0);
  EXPECT_EQ(h.cumulativeCounts(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(h.count(), 3);
  EXPECT_DOUBLE_EQ(h.sum(), 7.5);
}

// ---------------------------------------------------------------------------
// Admission
// ---------------------------------------------------------------------------

TEST(Admission, BoundedAndAdaptive) {
  AdmissionOptions o;
  o.minLimit = 4;
  o.maxInFlight = 20;
  o.targetTtftP95 = 1.0;
  o.window = 10;
  Admission a(o);
  EXPECT_EQ(a.snapshot().limit, 20); // starts at the ceiling
  for (int i = 0; i < 20; ++i)
    EXPECT_TRUE(a.tryAcquire());
  EXPECT_FALSE(a.tryAcquire()); // the bounded queue
  EXPECT_EQ(a.snapshot().rejected, 1);
  a.release();
  EXPECT_TRUE(a.tryAcquire());

  // Slow (p95 over the target): multiplicative decrease, not below the floor.
  for (int i = 0; i < 10; ++i)
    a.observeTtft(i == 9 ? 5.0 : 0.1); // p95 of 10 samples = the largest
  EXPECT_EQ(a.snapshot().limit, 16);
  EXPECT_DOUBLE_EQ(a.snapshot().lastWindowP95, 5.0);
  for (int w = 0; w < 10; ++w)
    for (int i = 0; i < 10; ++i)
      a.observeTtft(i == 9 ? 5.0 : 0.1);
  EXPECT_EQ(a.snapshot().limit, 4);
  EXPECT_GE(a.snapshot().decreases, 4);
  EXPECT_FALSE(a.tryAcquire()); // 20 in flight > 4
  EXPECT_EQ(a.retryAfterSeconds(), 1);
  for (int i = 0; i < 17; ++i)
    a.release();
  EXPECT_TRUE(a.tryAcquire()); // 3 in flight < 4: 4
  EXPECT_FALSE(a.tryAcquire());

  // Fast and at the limit: additive increase.
  for (int i = 0; i < 10; ++i)
    a.observeTtft(0.1);
  EXPECT_EQ(a.snapshot().limit, 5);
  EXPECT_EQ(a.snapshot().increases, 1);

  // Back to fast while the limit binds: grows up to the ceiling, not past it.
  for (int w = 0; w < 200; ++w) {
    a.tryAcquire();
    for (int i = 0; i < 10; ++i)
      a.observeTtft(0.01);
  }
  EXPECT_EQ(a.snapshot().limit, 20);
}

TEST(Admission, KvPressureAndIdle) {
  AdmissionOptions o;
  o.minLimit = 2;
  o.maxInFlight = 100;
  o.targetTtftP95 = 0; // latency ignored
  o.window = 4;
  Admission a(o);
  EXPECT_EQ(a.snapshot().limit, 100);
  // Latency ignored: no change.
  for (int i = 0; i < 8; ++i)
    a.observeTtft(100.0);
  EXPECT_EQ(a.snapshot().limit, 100);
  // KV full with requests waiting: shrink.
  a.observeLoad(0.99, 3);
  for (int i = 0; i < 4; ++i)
    a.observeTtft(0.01);
  EXPECT_EQ(a.snapshot().limit, 80);
  // KV full but nobody waits: no pressure; idle (limit never reached): no growth.
  a.observeLoad(0.99, 0);
  for (int i = 0; i < 4; ++i)
    a.observeTtft(0.01);
  EXPECT_EQ(a.snapshot().limit, 80);
}

TEST(Admission, Quantile) {
  std::vector<double> v{5, 1, 4, 2, 3};
  EXPECT_EQ(quantile(v, 0.5), 3);
  EXPECT_EQ(quantile(v, 0.95), 5);
  EXPECT_EQ(quantile(v, 0.0), 1);
}

TEST(Serve, ByteSizes) {
  EXPECT_EQ(*parseByteSize("1024"), 1024);
  EXPECT_EQ(*parseByteSize("512MiB"), 512ll << 20);
  EXPECT_EQ(*parseByteSize("1.5GiB"), 3ll << 29);
  EXPECT_EQ(*parseByteSize("64m"), 64ll << 20);
  EXPECT_EQ(*parseByteSize("2KB"), 2048);
  EXPECT_FALSE(parseByteSize("lots").isOk());
  EXPECT_FALSE(parseByteSize("5 parsecs").isOk());
  EXPECT_FALSE(parseByteSize("-1").isOk());
  EXPECT_EQ(defaultModelName("/tmp/x/demo.plan"), "demo");
  EXPECT_EQ(defaultModelName("m"), "m");
}

// ---------------------------------------------------------------------------
// The routes, with a fake scheduler and a fake exchange
// ---------------------------------------------------------------------------

class FakeScheduler : public serve::Scheduler {
public:
  struct Entry {
    serve::Request req;
    serve::RequestCallbacks cb;
  };
  Status submit(serve::Request r, serve::RequestCallbacks cb) override {
    if (!nextStatus.isOk()) {
      Status s = nextStatus;
      nextStatus = Status::ok();
      return s;
    }
    std::lock_guard<std::mutex> lock(mu);
    std::string id = r.id;
    entries[id] = Entry{std::move(r), std::move(cb)};
    order.push_back(id);
    return Status::ok();
  }
  void cancel(const std::string &id) override {
    std::lock_guard<std::mutex> lock(mu);
    cancelled.push_back(id);
  }
  StatusOr<bool> step() override { return false; }
  void start() override {}
  void stop() override {}
  serve::SchedulerStats stats() const override { return statsValue; }

  // Test drivers (call callbacks like the scheduler thread would).
  void token(const std::string &id, int64_t t, std::string text, float lp = 0.0f,
             std::vector<std::pair<int64_t, float>> top = {}) {
    serve::TokenEvent ev;
    ev.token = t;
    ev.textDelta = std::move(text);
    ev.logprob = lp;
    ev.topLogprobs = std::move(top);
    entries.at(id).cb.onToken(ev);
  }
  void finish(const std::string &id, serve::FinishReason r, int64_t completion,
              std::string text = "") {
    serve::FinishEvent ev;
    ev.reason = r;
    ev.textDelta = std::move(text);
    ev.promptTokens = int64_t(entries.at(id).req.promptIds.size());
    ev.completionTokens = completion;
    entries.at(id).cb.onFinish(ev);
  }
  const std::string &last() const { return order.back(); }

  std::mutex mu;
  std::map<std::string, Entry> entries;
  std::vector<std::string> order, cancelled;
  Status nextStatus;
  serve::SchedulerStats statsValue;
};

class FakeExchange : public HttpExchange {
public:
  void respond(int s, std::string ct, std::string b, Headers h) override {
    if (!open)
      return;
    status = s;
    contentType = std::move(ct);
    body = std::move(b);
    headers = std::move(h);
    open = false;
    ended = true;
  }
  void startStream(int s, std::string ct, Headers h) override {
    if (!open)
      return;
    status = s;
    contentType = std::move(ct);
    headers = std::move(h);
    streaming = true;
  }
  void write(std::string d) override {
    if (open && streaming)
      body += d;
  }
  void endStream() override {
    if (!open)
      return;
    open = false;
    ended = true;
  }
  void post(std::function<void()> fn) override {
    std::lock_guard<std::mutex> lock(queueMu);
    queue.push_back(std::move(fn));
  }
  void onClose(std::function<void()> fn) override {
    if (cut)
      fn(); // gone already
    else
      closeFn = std::move(fn);
  }
  bool isOpen() const override { return open; }

  void drain() {
    while (true) {
      std::vector<std::function<void()>> q;
      {
        std::lock_guard<std::mutex> lock(queueMu);
        q = std::move(queue);
        queue.clear();
      }
      if (q.empty())
        return;
      for (auto &f : q)
        f();
    }
  }
  /// Waits (up to 5 s) until something was posted, e.g. from a worker.
  bool waitForPost() {
    for (int i = 0; i < 500; ++i) {
      {
        std::lock_guard<std::mutex> lock(queueMu);
        if (!queue.empty())
          return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  void disconnect() {
    open = false;
    cut = true;
    if (closeFn)
      closeFn();
  }
  std::string header(const std::string &name) const {
    for (const auto &[k, v] : headers)
      if (k == name)
        return v;
    return "";
  }
  json::Value bodyJson() const { return parseJson(body); }

  int status = 0;
  std::string contentType, body;
  Headers headers;
  std::atomic<bool> open{true};
  bool ended = false, streaming = false, cut = false;
  std::mutex queueMu;
  std::vector<std::function<void()>> queue;
  std::function<void()> closeFn;
};

struct ApiFixture : ::testing::Test {
  FakeScheduler sched;
  Metrics metrics{"demo"};
  std::unique_ptr<Admission> admission;
  std::unique_ptr<OpenAiApi> api;

  void SetUp() override { make(AdmissionOptions{}); }
  std::function<void(ApiOptions &)> configure; // options beyond the fixture's
  void make(AdmissionOptions ao, std::shared_ptr<const tok::Tokenizer> tokenizer = nullptr) {
    admission = std::make_unique<Admission>(ao);
    ApiOptions o;
    o.modelNames = {"demo", "alias"};
    o.maxModelLen = 32;
    o.vocabSize = 100;
    if (configure)
      configure(o);
    api = std::make_unique<OpenAiApi>(sched, tokenizer, metrics, *admission, o);
  }
  std::shared_ptr<const tok::Tokenizer> demoTokenizer() {
    StatusOr<tok::Tokenizer> t =
        tok::Tokenizer::fromFile(ACCEL_TEST_FIXTURES "/demo/tokenizer.json");
    EXPECT_TRUE(t.isOk()) << t.status().message();
    return std::make_shared<const tok::Tokenizer>(std::move(*t));
  }
  /// A request as the transport hands it over; a POST is JSON unless
  /// `headers` say otherwise.
  std::shared_ptr<FakeExchange> call(const std::string &method, const std::string &path,
                                     const std::string &body = "", Headers headers = {}) {
    HttpRequest r;
    r.method = method;
    r.path = r.target = path;
    r.body = body;
    bool typed = false;
    for (const auto &[k, v] : headers)
      typed = typed || k == "Content-Type";
    if (method == "POST" && !typed)
      headers.emplace_back("Content-Type", "application/json");
    r.headers = std::move(headers);
    r.arrival = std::chrono::steady_clock::now();
    auto ex = std::make_shared<FakeExchange>();
    api->handle(r, ex);
    return ex;
  }
  const ApiError parseErr(const FakeExchange &ex) {
    json::Value v = ex.bodyJson();
    ApiError e;
    e.status = ex.status;
    const json::Value *err = v.find("error");
    EXPECT_TRUE(err) << ex.body;
    if (!err)
      return e;
    e.message = err->find("message")->asString();
    e.type = err->find("type")->asString();
    e.param = err->find("param")->isNull() ? "" : err->find("param")->asString();
    e.code = err->find("code")->isNull() ? "" : err->find("code")->asString();
    return e;
  }
};

TEST_F(ApiFixture, CompletionWhole) {
  auto ex = call("POST", "/v1/completions", R"({"model":"demo","prompt":[1,2,3],"max_tokens":4})");
  ASSERT_EQ(sched.order.size(), 1u) << ex->body;
  const serve::Request &r = sched.entries.at(sched.last()).req;
  EXPECT_EQ(r.promptIds, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(r.maxTokens, 4);
  EXPECT_EQ(r.id.rfind("cmpl-", 0), 0u);
  EXPECT_EQ(api->activeRequests(), 1);
  sched.token(r.id, 10, "Hello");
  sched.token(r.id, 11, "");
  sched.token(r.id, 12, " world");
  EXPECT_EQ(ex->status, 0); // nothing until the strand runs the events
  sched.finish(r.id, serve::FinishReason::kLength, 4, "!");
  ex->drain();
  ASSERT_EQ(ex->status, 200) << ex->body;
  json::Value v = ex->bodyJson();
  EXPECT_EQ(v.find("id")->asString(), r.id);
  EXPECT_EQ(v.find("model")->asString(), "demo");
  EXPECT_EQ(v.find("choices")->items()[0].find("text")->asString(), "Hello world!");
  EXPECT_EQ(v.find("choices")->items()[0].find("finish_reason")->asString(), "length");
  EXPECT_EQ(v.find("usage")->find("prompt_tokens")->asInt(), 3);
  EXPECT_EQ(v.find("usage")->find("completion_tokens")->asInt(), 4);
  EXPECT_EQ(api->activeRequests(), 0);
  EXPECT_EQ(admission->snapshot().inFlight, 0);
  std::map<std::string, double> s = scrape(metrics.render({}, {}));
  EXPECT_EQ(s["accel:request_success_total{model_name=\"demo\",finished_reason=\"length\"}"], 1);
  EXPECT_EQ(s["accel:time_to_first_token_seconds_count{model_name=\"demo\"}"], 1);
  EXPECT_EQ(s["accel:inter_token_latency_seconds_count{model_name=\"demo\"}"], 2);
}

TEST_F(ApiFixture, DefaultsAndAliases) {
  // No model (allowed), no max_tokens (16, within the context).
  call("POST", "/v1/completions", R"({"prompt":[1,2,3]})");
  EXPECT_EQ(sched.entries.at(sched.last()).req.maxTokens, 16);
  EXPECT_EQ(sched.entries.at(sched.last()).req.sampling.temperature, 1.0f);
  // A second served name; chat without max_tokens: the rest of the context.
  // (No tokenizer: chat is refused; see NoTokenizer.)
  auto ex = call("POST", "/v1/completions", R"({"model":"alias","prompt":[1],"max_tokens":31})");
  EXPECT_EQ(sched.entries.at(sched.last()).req.maxTokens, 31);
  EXPECT_EQ(ex->status, 0);
}

TEST_F(ApiFixture, Streaming) {
  auto ex = call("POST", "/v1/completions",
                 R"({"prompt":[5],"max_tokens":3,"stream":true,
                     "stream_options":{"include_usage":true}})");
  ASSERT_TRUE(ex->streaming);
  EXPECT_EQ(ex->status, 200);
  EXPECT_EQ(ex->contentType, sse::kContentType);
  const std::string id = sched.last();
  sched.token(id, 1, "a");
  sched.token(id, 2, "");
  sched.token(id, 3, "b");
  sched.finish(id, serve::FinishReason::kStop, 3);
  ex->drain();
  EXPECT_TRUE(ex->ended);
  std::vector<std::string> events = sse::parse(ex->body);
  ASSERT_EQ(events.size(), 5u) << ex->body; // a, b, finish, usage, [DONE]
  EXPECT_EQ(events.back(), "[DONE]");
  std::string text;
  for (size_t i = 0; i + 2 < events.size(); ++i) {
    json::Value c = parseJson(events[i]);
    EXPECT_EQ(c.find("object")->asString(), "text_completion");
    text += c.find("choices")->items()[0].find("text")->asString();
  }
  EXPECT_EQ(text, "ab");
  json::Value fin = parseJson(events[2]);
  EXPECT_EQ(fin.find("choices")->items()[0].find("finish_reason")->asString(), "stop");
  json::Value usage = parseJson(events[3]);
  EXPECT_EQ(usage.find("usage")->find("completion_tokens")->asInt(), 3);
}

TEST_F(ApiFixture, DisconnectCancels) {
  auto ex = call("POST", "/v1/completions", R"({"prompt":[5],"max_tokens":20,"stream":true})");
  const std::string id = sched.last();
  sched.token(id, 1, "a");
  ex->drain();
  ex->disconnect();
  ASSERT_EQ(sched.cancelled, (std::vector<std::string>{id}));
  EXPECT_EQ(admission->snapshot().inFlight, 1); // until the scheduler confirms
  sched.finish(id, serve::FinishReason::kCancelled, 1);
  ex->drain();
  EXPECT_EQ(admission->snapshot().inFlight, 0);
  EXPECT_EQ(api->activeRequests(), 0);
  std::map<std::string, double> s = scrape(metrics.render({}, {}));
  EXPECT_EQ(s["accel:request_success_total{model_name=\"demo\",finished_reason=\"abort\"}"], 1);
}

TEST_F(ApiFixture, Logprobs) {
  auto ex = call("POST", "/v1/completions", R"({"prompt":[5],"max_tokens":2,"logprobs":1})");
  const std::string id = sched.last();
  EXPECT_EQ(sched.entries.at(id).req.logprobs, 1);
  sched.token(id, 7, "x", -0.25f, {{7, -0.25f}});
  sched.finish(id, serve::FinishReason::kStop, 1);
  ex->drain();
  json::Value v = ex->bodyJson();
  const json::Value *lp = v.find("choices")->items()[0].find("logprobs");
  ASSERT_TRUE(lp && lp->isObject()) << ex->body;
  EXPECT_EQ(lp->find("tokens")->items()[0].asString(), "token_id:7"); // no tokenizer
  EXPECT_DOUBLE_EQ(lp->find("token_logprobs")->items()[0].asDouble(), -0.25);
}

TEST_F(ApiFixture, Errors) {
  auto badJson = call("POST", "/v1/completions", "{\"prompt\": ");
  EXPECT_EQ(badJson->status, 400);
  EXPECT_EQ(parseErr(*badJson).type, "invalid_request_error");

  auto wrongType = call("POST", "/v1/completions", R"({"prompt":[1],"top_p":"x"})");
  EXPECT_EQ(wrongType->status, 400);
  EXPECT_EQ(parseErr(*wrongType).param, "top_p");

  auto unknown = call("POST", "/v1/completions", R"({"model":"gpt-4","prompt":[1]})");
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(parseErr(*unknown).code, "model_not_found");
  EXPECT_NE(parseErr(*unknown).message.find("gpt-4"), std::string::npos);

  std::string longPrompt = "[";
  for (int i = 0; i < 32; ++i)
    longPrompt += (i ? ",1" : "1");
  longPrompt += "]";
  auto tooLong = call("POST", "/v1/completions", "{\"prompt\":" + longPrompt + "}");
  EXPECT_EQ(tooLong->status, 400);
  EXPECT_EQ(parseErr(*tooLong).code, "context_length_exceeded");
  EXPECT_EQ(parseErr(*tooLong).param, "prompt");

  auto tooMany = call("POST", "/v1/completions", R"({"prompt":[1,2],"max_tokens":31})");
  EXPECT_EQ(tooMany->status, 400);
  EXPECT_EQ(parseErr(*tooMany).param, "max_tokens");
  EXPECT_NE(parseErr(*tooMany).message.find("you requested 33 tokens"), std::string::npos);

  auto outside = call("POST", "/v1/completions", R"({"prompt":[1,100]})");
  EXPECT_EQ(outside->status, 400);
  EXPECT_NE(parseErr(*outside).message.find("prompt[1] = 100"), std::string::npos);

  auto n2 = call("POST", "/v1/chat/completions",
                 R"({"messages":[{"role":"user","content":"x"}],"n":17})");
  EXPECT_EQ(n2->status, 400);
  EXPECT_EQ(parseErr(*n2).param, "n");

  EXPECT_TRUE(sched.order.empty()); // nothing reached the scheduler
  std::map<std::string, double> s = scrape(metrics.render({}, {}));
  EXPECT_EQ(s["accel:http_responses_total{model_name=\"demo\",code=\"400\"}"], 6);
  EXPECT_EQ(s["accel:http_responses_total{model_name=\"demo\",code=\"404\"}"], 1);
}

TEST_F(ApiFixture, NoTokenizer) {
  auto chat = call("POST", "/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(chat->status, 400);
  EXPECT_NE(parseErr(*chat).message.find("no tokenizer"), std::string::npos);
  auto text = call("POST", "/v1/completions", R"({"prompt":"hello"})");
  EXPECT_EQ(text->status, 400);
  EXPECT_NE(parseErr(*text).message.find("token ids"), std::string::npos);
}

TEST_F(ApiFixture, SchedulerRefusals) {
  sched.nextStatus = Status(StatusCode::kResourceExhausted, "the waiting queue is full (1024)");
  auto full = call("POST", "/v1/completions", R"({"prompt":[1]})");
  EXPECT_EQ(full->status, 429);
  EXPECT_EQ(parseErr(*full).message, "the waiting queue is full (1024)");
  EXPECT_FALSE(full->header("Retry-After").empty());
  sched.nextStatus = invalidArgument("top_k is odd");
  auto bad = call("POST", "/v1/completions", R"({"prompt":[1]})");
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(admission->snapshot().inFlight, 0);
  EXPECT_EQ(api->activeRequests(), 0);
}

TEST_F(ApiFixture, AdmissionLimit) {
  AdmissionOptions ao;
  ao.minLimit = 1;
  ao.maxInFlight = 1;
  make(ao);
  auto first = call("POST", "/v1/completions", R"({"prompt":[1],"stream":true})");
  auto second = call("POST", "/v1/completions", R"({"prompt":[1]})");
  EXPECT_EQ(second->status, 429);
  EXPECT_EQ(parseErr(*second).code, "rate_limit_exceeded");
  EXPECT_EQ(second->header("Retry-After"), "1");
  sched.finish(sched.last(), serve::FinishReason::kStop, 0);
  first->drain();
  auto third = call("POST", "/v1/completions", R"({"prompt":[1]})");
  EXPECT_EQ(third->status, 0); // admitted, in flight
  EXPECT_EQ(sched.order.size(), 2u);
}

TEST_F(ApiFixture, ChatWithTokenizer) {
  StatusOr<tok::Tokenizer> t = tok::Tokenizer::fromFile(ACCEL_TEST_FIXTURES "/demo/tokenizer.json");
  ASSERT_TRUE(t.isOk()) << t.status().message();
  auto tokenizer = std::make_shared<const tok::Tokenizer>(std::move(*t));
  make(AdmissionOptions{}, tokenizer);
  auto ex = call("POST", "/v1/chat/completions",
                 R"({"model":"demo","messages":[{"role":"user","content":"Hi"}],"stream":true,
                     "max_tokens":3})");
  ASSERT_TRUE(ex->streaming) << ex->body;
  const serve::Request &r = sched.entries.at(sched.last()).req;
  EXPECT_EQ(r.id.rfind("chatcmpl-", 0), 0u);
  std::vector<int32_t> want = *tokenizer->encode("user: Hi\nassistant:", true);
  EXPECT_EQ(r.promptIds, std::vector<int64_t>(want.begin(), want.end()));
  sched.token(r.id, 1, " And");
  sched.finish(r.id, serve::FinishReason::kStop, 1);
  ex->drain();
  std::vector<std::string> events = sse::parse(ex->body);
  ASSERT_EQ(events.size(), 4u) << ex->body; // role, " And", finish, [DONE]
  json::Value role = parseJson(events[0]);
  EXPECT_EQ(role.find("choices")->items()[0].find("delta")->find("role")->asString(), "assistant");
  json::Value tokenChunk = parseJson(events[1]);
  EXPECT_EQ(tokenChunk.find("choices")->items()[0].find("delta")->find("content")->asString(),
            " And");
  // Text completion through the tokenizer.
  auto c = call("POST", "/v1/completions", R"({"prompt":"In the beginning","max_tokens":2})");
  EXPECT_EQ(sched.entries.at(sched.last()).req.promptIds,
            (std::vector<int64_t>{1143, 259, 1796, 1239}));
}

// The request extensions reach the scheduler; echo, truncation, special
// tokens and continue_final_message shape the prompt and the response.
TEST_F(ApiFixture, RequestExtensionsArePlumbed) {
  StatusOr<tok::Tokenizer> t = tok::Tokenizer::fromFile(ACCEL_TEST_FIXTURES "/demo/tokenizer.json");
  ASSERT_TRUE(t.isOk()) << t.status().message();
  auto tokenizer = std::make_shared<const tok::Tokenizer>(std::move(*t));
  make(AdmissionOptions{}, tokenizer);

  auto ex = call("POST", "/v1/completions",
                 R"({"prompt":[1,2,3,4,5],"max_tokens":6,"stop_token_ids":[7,8],"min_tokens":2,
                     "include_stop_str_in_output":true,"allowed_token_ids":[9,3,9,4],
                     "bad_words":["Moses"],"skip_special_tokens":false,
                     "truncate_prompt_tokens":3,"echo":true,"logit_bias":{"7":-2.5}})");
  ASSERT_EQ(ex->status, 0) << ex->body;
  const serve::Request r = sched.entries.at(sched.last()).req;
  EXPECT_EQ(r.promptIds, (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(r.stopTokenIds, (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(r.minTokens, 2);
  EXPECT_TRUE(r.includeStopStrInOutput);
  EXPECT_EQ(r.allowedTokenIds, (std::vector<int64_t>{3, 4, 9}));
  EXPECT_EQ(r.badWords, (std::vector<std::string>{"Moses"}));
  EXPECT_EQ(r.logitBias, (std::vector<std::pair<int64_t, float>>{{7, -2.5f}}));
  EXPECT_FALSE(r.skipSpecialTokens);
  sched.token(r.id, 9, " And");
  sched.finish(r.id, serve::FinishReason::kLength, 1);
  ex->drain();
  // echo: the (truncated) prompt, decoded, before the completion.
  std::string prompt = tokenizer->decode({3, 4, 5}, false);
  EXPECT_EQ(ex->bodyJson().find("choices")->items()[0].find("text")->asString(), prompt + " And");

  // A text prompt is echoed as given, streamed or not.
  auto whole = call("POST", "/v1/completions", R"({"prompt":"In the beginning","echo":true})");
  sched.token(sched.last(), 9, " God");
  sched.finish(sched.last(), serve::FinishReason::kLength, 1);
  whole->drain();
  EXPECT_EQ(whole->bodyJson().find("choices")->items()[0].find("text")->asString(),
            "In the beginning God");
  auto streamed =
      call("POST", "/v1/completions", R"({"prompt":"In the beginning","echo":true,"stream":true})");
  sched.token(sched.last(), 9, " God");
  sched.finish(sched.last(), serve::FinishReason::kLength, 1);
  streamed->drain();
  std::vector<std::string> events = sse::parse(streamed->body);
  ASSERT_EQ(events.size(), 4u) << streamed->body; // echo, " God", finish, [DONE]
  EXPECT_EQ(parseJson(events[0]).find("choices")->items()[0].find("text")->asString(),
            "In the beginning");

  // add_special_tokens: false leaves out the BOS that completions add (a
  // Llama-2-style tokenizer: the demo's adds none).
  {
    StatusOr<tok::Tokenizer> bos = tok::Tokenizer::fromJson(R"({"version":"1.0",
      "added_tokens":[
        {"id":0,"content":"<unk>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},
        {"id":1,"content":"<s>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}],
      "normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},
                    {"type":"Replace","pattern":{"String":" "},"content":"▁"}]},
      "pre_tokenizer":null,
      "post_processor":{"type":"TemplateProcessing",
         "single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],
         "pair":[],"special_tokens":{"<s>":{"id":"<s>","ids":[1],"tokens":["<s>"]}}},
      "model":{"type":"BPE","unk_token":"<unk>","fuse_unk":true,"byte_fallback":true,
        "vocab":{"<unk>":0,"<s>":1,"▁":4,"h":5,"i":6,"▁h":7,"▁hi":8},
        "merges":["▁ h","▁h i"]}})");
    ASSERT_TRUE(bos.isOk()) << bos.status().message();
    make(AdmissionOptions{}, std::make_shared<const tok::Tokenizer>(std::move(*bos)));
    call("POST", "/v1/completions", R"({"prompt":"hi hi"})");
    EXPECT_EQ(sched.entries.at(sched.last()).req.promptIds, (std::vector<int64_t>{1, 8, 8}));
    call("POST", "/v1/completions", R"({"prompt":"hi hi","add_special_tokens":false})");
    EXPECT_EQ(sched.entries.at(sched.last()).req.promptIds, (std::vector<int64_t>{8, 8}));
    make(AdmissionOptions{}, tokenizer);
  }

  // continue_final_message: the assistant's message left open; with echo
  // the reply starts with it.
  auto cont = call("POST", "/v1/chat/completions",
                   R"({"messages":[{"role":"user","content":"Hi"},
                                   {"role":"assistant","content":"Hello"}],
                       "continue_final_message":true,"echo":true,"max_tokens":3})");
  ASSERT_EQ(cont->status, 0) << cont->body;
  std::vector<int32_t> want = *tokenizer->encode("user: Hi\nassistant: Hello", true);
  EXPECT_EQ(sched.entries.at(sched.last()).req.promptIds,
            std::vector<int64_t>(want.begin(), want.end()));
  sched.token(sched.last(), 9, " there");
  sched.finish(sched.last(), serve::FinishReason::kStop, 1);
  cont->drain();
  EXPECT_EQ(cont->bodyJson().find("choices")->items()[0].find("message")->find("content")->asString(),
            "Hello there");

  // Refusals from the scheduler name their parameter.
  sched.nextStatus = invalidArgument("bad_words need the model's tokenizer");
  auto bw = call("POST", "/v1/completions", R"({"prompt":[1],"bad_words":["x"]})");
  EXPECT_EQ(bw->status, 400);
  EXPECT_EQ(parseErr(*bw).param, "bad_words");
  sched.nextStatus = invalidArgument("stop_token_ids[0] = 5 is outside the vocabulary [0, 4)");
  EXPECT_EQ(parseErr(*call("POST", "/v1/completions", R"({"prompt":[1]})")).param,
            "stop_token_ids[0]");
  sched.nextStatus = invalidArgument("the prompt is empty");
  EXPECT_EQ(parseErr(*call("POST", "/v1/completions", R"({"prompt":[1]})")).param, "");

  // max_tokens at int64's edge never overflows into acceptance.
  const size_t before = sched.order.size();
  auto huge = call("POST", "/v1/completions", R"({"prompt":[1,2],"max_tokens":9223372036854775807})");
  EXPECT_EQ(huge->status, 400);
  EXPECT_EQ(parseErr(*huge).code, "context_length_exceeded");
  auto huge2 = call("POST", "/v1/chat/completions",
                    R"({"messages":[{"role":"user","content":"x"}],
                        "max_completion_tokens":9223372036854775807})");
  EXPECT_EQ(huge2->status, 400);
  EXPECT_EQ(parseErr(*huge2).param, "max_completion_tokens");
  auto outside = call("POST", "/v1/completions", R"({"prompt":[9223372036854775807]})");
  EXPECT_EQ(outside->status, 400);
  EXPECT_EQ(sched.order.size(), before);
}

// ---------------------------------------------------------------------------
// Tool calls (docs/serving.md "Tool calls"): tools and tool messages reach
// the template, replies are parsed into tool_calls (the fake scheduler
// plays the model's text), tool_choice forces calls, errors name the field.
// ---------------------------------------------------------------------------

/// The fixture with a real template of test/fixtures/chat_templates and a
/// tool-call parser, the demo's tokenizer and room for the long prompts.
void useTools(ApiFixture &f, const char *templateName, ToolParser parser,
              const std::shared_ptr<const tok::Tokenizer> &tokenizer) {
  StatusOr<ChatTemplate> tpl = ChatTemplate::choose(
      std::string(ACCEL_TEST_FIXTURES "/chat_templates/") + templateName + ".jinja",
      tokenizer.get());
  ASSERT_TRUE(tpl.isOk()) << tpl.status().message();
  f.configure = [tpl = *tpl, parser](ApiOptions &o) {
    o.chatTemplate = tpl;
    o.toolParser = parser;
    o.maxModelLen = 8192;
  };
  f.make(AdmissionOptions{}, tokenizer);
}

const char *kWeatherTools =
    R"("tools":[{"type":"function","function":{"name":"get_weather","description":"The weather.",
       "parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},
       {"type":"function","function":{"name":"add"}}])";

std::string chatBody(const std::string &members) {
  return std::string("{") + kWeatherTools +
         R"(,"messages":[{"role":"user","content":"Weather in Paris?"}])" +
         (members.empty() ? "" : "," + members) + "}";
}

json::Value firstChoice(const json::Value &body) {
  const json::Value *choices = body.find("choices");
  EXPECT_TRUE(choices && choices->size() > 0) << json::write(body);
  return choices && choices->size() > 0 ? choices->items()[0] : json::Value::object();
}

TEST_F(ApiFixture, ToolCallsInAWholeResponse) {
  auto tokenizer = demoTokenizer();
  useTools(*this, "qwen2.5-instruct", ToolParser::kHermes, tokenizer);
  auto ex = call("POST", "/v1/chat/completions", chatBody(""));
  ASSERT_EQ(ex->status, 0) << ex->body;
  const serve::Request &r = sched.entries.at(sched.last()).req;
  // The tools are in the prompt, as the template writes them.
  const std::string prompt =
      tokenizer->decode(std::vector<int32_t>(r.promptIds.begin(), r.promptIds.end()), false);
  EXPECT_NE(prompt.find("<tools>\n{\"type\": \"function\", \"function\": {\"name\": "
                        "\"get_weather\", \"description\": \"The weather.\""),
            std::string::npos)
      << prompt;
  sched.token(r.id, 1, "<tool_call>");
  sched.token(r.id, 2, "\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\"}}\n");
  sched.token(r.id, 3, "</tool_call>");
  sched.finish(r.id, serve::FinishReason::kStop, 3);
  ex->drain();
  ASSERT_EQ(ex->status, 200) << ex->body;
  const json::Value choice = firstChoice(ex->bodyJson());
  EXPECT_EQ(choice.find("finish_reason")->asString(), "tool_calls");
  const json::Value *msg = choice.find("message");
  EXPECT_TRUE(msg->find("content")->isNull()) << ex->body;
  ASSERT_TRUE(msg->find("tool_calls") && msg->find("tool_calls")->size() == 1) << ex->body;
  const json::Value &call0 = msg->find("tool_calls")->items()[0];
  EXPECT_TRUE(std::regex_match(call0.find("id")->asString(), std::regex("call_[A-Za-z0-9]{24}")))
      << ex->body;
  EXPECT_EQ(call0.find("type")->asString(), "function");
  EXPECT_EQ(call0.find("function")->find("name")->asString(), "get_weather");
  EXPECT_EQ(call0.find("function")->find("arguments")->asString(), "{\"city\": \"Paris\"}");

  // A reply that is no call: plain content, no tool_calls, its own finish_reason.
  auto text = call("POST", "/v1/chat/completions", chatBody(""));
  sched.token(sched.last(), 1, "It is sunny <b>today</b>.");
  sched.finish(sched.last(), serve::FinishReason::kLength, 1);
  text->drain();
  const json::Value plain = firstChoice(text->bodyJson());
  EXPECT_EQ(plain.find("finish_reason")->asString(), "length");
  EXPECT_EQ(plain.find("message")->find("content")->asString(), "It is sunny <b>today</b>.");
  EXPECT_EQ(plain.find("message")->find("tool_calls"), nullptr);

  // Malformed JSON in the call: the text as it is.
  auto bad = call("POST", "/v1/chat/completions", chatBody(""));
  sched.token(sched.last(), 1, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\"");
  sched.finish(sched.last(), serve::FinishReason::kStop, 1);
  bad->drain();
  EXPECT_EQ(firstChoice(bad->bodyJson()).find("message")->find("content")->asString(),
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\"");
  EXPECT_EQ(firstChoice(bad->bodyJson()).find("finish_reason")->asString(), "stop");

  // Content before the calls; parallel_tool_calls false keeps the first call.
  auto two = call("POST", "/v1/chat/completions", chatBody(R"("parallel_tool_calls":false)"));
  sched.token(sched.last(), 1,
              "Checking both.\n<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1}}"
              "</tool_call>\n<tool_call>{\"name\": \"get_weather\"}</tool_call>");
  sched.finish(sched.last(), serve::FinishReason::kStop, 1);
  two->drain();
  const json::Value twoChoice = firstChoice(two->bodyJson());
  const json::Value *twoMsg = twoChoice.find("message");
  EXPECT_EQ(twoMsg->find("content")->asString(), "Checking both.");
  ASSERT_EQ(twoMsg->find("tool_calls")->size(), 1u) << two->body;
  EXPECT_EQ(twoMsg->find("tool_calls")->items()[0].find("function")->find("name")->asString(),
            "add");
  EXPECT_EQ(api->activeRequests(), 0);
}

TEST_F(ApiFixture, ToolCallsAndResultsInTheConversationReachTheTemplate) {
  auto tokenizer = demoTokenizer();
  useTools(*this, "qwen2.5-instruct", ToolParser::kHermes, tokenizer);
  // arguments come as OpenAI's JSON string (compact here) and reach the
  // template as the object they hold: its tojson writes them again.
  const std::string messages =
      R"("messages":[{"role":"user","content":"Weather in Paris?"},
          {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
            "function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
          {"role":"tool","tool_call_id":"call_1","content":"{\"temp\": 21}"}])";
  auto ex = call("POST", "/v1/chat/completions",
                 std::string("{") + kWeatherTools + "," + messages + "}");
  ASSERT_EQ(ex->status, 0) << ex->body;
  const serve::Request &r = sched.entries.at(sched.last()).req;
  const std::string prompt =
      tokenizer->decode(std::vector<int32_t>(r.promptIds.begin(), r.promptIds.end()), false);
  EXPECT_NE(prompt.find("<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", "
                        "\"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>\n"
                        "<|im_start|>user\n<tool_response>\n{\"temp\": 21}\n</tool_response>"
                        "<|im_end|>\n<|im_start|>assistant\n"),
            std::string::npos)
      << prompt;
  // /tokenize takes tools too and gives the same ids.
  auto tok = call("POST", "/tokenize", std::string("{") + kWeatherTools + "," + messages + "}");
  ASSERT_EQ(tok->status, 200) << tok->body;
  std::vector<int64_t> ids;
  const json::Value tokBody = tok->bodyJson();
  for (const json::Value &v : tokBody.find("tokens")->items())
    ids.push_back(v.asInt());
  EXPECT_EQ(ids, r.promptIds);
  // tool_choice "none": the tools are still in the prompt, the reply is text.
  call("POST", "/v1/chat/completions", chatBody(""));
  const std::vector<int64_t> withAuto = sched.entries.at(sched.last()).req.promptIds;
  auto none = call("POST", "/v1/chat/completions", chatBody(R"("tool_choice":"none")"));
  EXPECT_EQ(sched.entries.at(sched.last()).req.promptIds, withAuto);
  sched.token(sched.last(), 1, "<tool_call>{\"name\": \"add\"}</tool_call>");
  sched.finish(sched.last(), serve::FinishReason::kStop, 1);
  none->drain();
  EXPECT_EQ(firstChoice(none->bodyJson()).find("message")->find("content")->asString(),
            "<tool_call>{\"name\": \"add\"}</tool_call>");
  EXPECT_EQ(firstChoice(none->bodyJson()).find("finish_reason")->asString(), "stop");
}

TEST_F(ApiFixture, ToolCallsStreamed) {
  auto tokenizer = demoTokenizer();
  useTools(*this, "qwen2.5-instruct", ToolParser::kHermes, tokenizer);
  auto ex = call("POST", "/v1/chat/completions",
                 chatBody(R"("stream":true,"logprobs":true)"));
  ASSERT_TRUE(ex->streaming) << ex->body;
  const std::string id = sched.last();
  sched.token(id, 1, "Let");
  sched.token(id, 2, " me check.");
  sched.token(id, 3, "\n");
  sched.token(id, 4, "<tool_call>");
  sched.token(id, 5, "\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n");
  sched.token(id, 6, "</tool_call>");
  sched.finish(id, serve::FinishReason::kStop, 6);
  ex->drain();
  std::vector<std::string> events = sse::parse(ex->body);
  // role, "Let", " me check.", the calls (with the held tokens' logprobs),
  // the finish, [DONE].
  ASSERT_EQ(events.size(), 6u) << ex->body;
  std::string content;
  size_t logprobs = 0;
  for (size_t i = 1; i + 1 < events.size(); ++i) {
    const json::Value c = firstChoice(parseJson(events[i]));
    if (const json::Value *t = c.find("delta")->find("content"))
      content += t->asString();
    if (const json::Value *lp = c.find("logprobs"); lp && !lp->isNull())
      logprobs += lp->find("content")->size();
  }
  EXPECT_EQ(content, "Let me check.");
  EXPECT_EQ(logprobs, 6u);
  const json::Value calls = firstChoice(parseJson(events[3]));
  const json::Value *tc = calls.find("delta")->find("tool_calls");
  ASSERT_TRUE(tc && tc->size() == 1) << events[3];
  EXPECT_EQ(tc->items()[0].find("index")->asInt(), 0);
  EXPECT_EQ(tc->items()[0].find("function")->find("name")->asString(), "get_weather");
  EXPECT_EQ(tc->items()[0].find("function")->find("arguments")->asString(),
            "{\"city\": \"Paris\"}");
  EXPECT_TRUE(calls.find("finish_reason")->isNull());
  EXPECT_EQ(firstChoice(parseJson(events[4])).find("finish_reason")->asString(), "tool_calls");
  EXPECT_EQ(events[5], "[DONE]");

  // No call: what was held back comes with the finish; the text is whole.
  auto text = call("POST", "/v1/chat/completions", chatBody(R"("stream":true)"));
  sched.token(sched.last(), 1, "Hello");
  sched.token(sched.last(), 2, " <");
  sched.token(sched.last(), 3, "b> and <tool");
  sched.finish(sched.last(), serve::FinishReason::kLength, 3);
  text->drain();
  events = sse::parse(text->body);
  content.clear();
  for (size_t i = 1; i + 1 < events.size(); ++i) {
    const json::Value ci = firstChoice(parseJson(events[i]));
    if (const json::Value *t = ci.find("delta")->find("content"))
      content += t->asString();
  }
  EXPECT_EQ(content, "Hello <b> and <tool");
  // "Hello", " <b> and", then " <tool" with the finish.
  ASSERT_EQ(events.size(), 5u) << text->body;
  EXPECT_EQ(firstChoice(parseJson(events[3])).find("delta")->find("content")->asString(),
            " <tool");
  EXPECT_EQ(firstChoice(parseJson(events[3])).find("finish_reason")->asString(), "length");
}

TEST_F(ApiFixture, ToolChoiceForcesACall) {
  auto tokenizer = demoTokenizer();
  useTools(*this, "qwen2.5-instruct", ToolParser::kHermes, tokenizer);
  auto promptOf = [&](const std::string &id) {
    const std::vector<int64_t> &ids = sched.entries.at(id).req.promptIds;
    return tokenizer->decode(std::vector<int32_t>(ids.begin(), ids.end()), false);
  };
  auto endsWith = [](const std::string &s, const std::string &tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  // A named function: the assistant's turn begins with its call; the model
  // writes the arguments. finish_reason stays (OpenAI's "stop").
  const std::string named =
      R"("tool_choice":{"type":"function","function":{"name":"get_weather"}})";
  auto ex = call("POST", "/v1/chat/completions", chatBody(named));
  ASSERT_EQ(ex->status, 0) << ex->body;
  EXPECT_TRUE(endsWith(promptOf(sched.last()),
                       "<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", "
                       "\"arguments\": "))
      << promptOf(sched.last());
  sched.token(sched.last(), 1, "{\"city\": \"Paris\"}}\n</tool_call>");
  sched.finish(sched.last(), serve::FinishReason::kStop, 1);
  ex->drain();
  const json::Value c = firstChoice(ex->bodyJson());
  EXPECT_EQ(c.find("finish_reason")->asString(), "stop");
  ASSERT_TRUE(c.find("message")->find("tool_calls")) << ex->body;
  EXPECT_EQ(c.find("message")->find("tool_calls")->items()[0].find("function")->find("arguments")
                ->asString(),
            "{\"city\": \"Paris\"}");
  // The model does not finish the call: the turn's text as content.
  auto lost = call("POST", "/v1/chat/completions", chatBody(named));
  sched.token(sched.last(), 1, "I would rather not.");
  sched.finish(sched.last(), serve::FinishReason::kStop, 1);
  lost->drain();
  EXPECT_EQ(firstChoice(lost->bodyJson()).find("message")->find("content")->asString(),
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": I would rather not.");
  EXPECT_EQ(firstChoice(lost->bodyJson()).find("message")->find("tool_calls"), nullptr);
  // "required": the model names the function.
  auto req = call("POST", "/v1/chat/completions",
                  chatBody(R"("tool_choice":"required","stream":true)"));
  ASSERT_TRUE(req->streaming) << req->body;
  EXPECT_TRUE(endsWith(promptOf(sched.last()), "<tool_call>\n{\"name\": \""));
  sched.token(sched.last(), 1, "add\", \"arguments\": {\"a\": 1, \"b\": 2}}\n</tool_call>");
  sched.finish(sched.last(), serve::FinishReason::kStop, 1);
  req->drain();
  std::vector<std::string> events = sse::parse(req->body);
  ASSERT_EQ(events.size(), 4u) << req->body; // role, calls, finish, [DONE]
  const json::Value callChunk = firstChoice(parseJson(events[1]));
  const json::Value *tc = callChunk.find("delta")->find("tool_calls");
  ASSERT_TRUE(tc) << events[1];
  EXPECT_EQ(tc->items()[0].find("function")->find("name")->asString(), "add");
  EXPECT_EQ(tc->items()[0].find("function")->find("arguments")->asString(),
            "{\"a\": 1, \"b\": 2}");
  EXPECT_EQ(firstChoice(parseJson(events[2])).find("finish_reason")->asString(), "tool_calls");
}

TEST_F(ApiFixture, ToolCallsOfOtherFamilies) {
  auto tokenizer = demoTokenizer();
  // Llama 3.1: a JSON reply.
  useTools(*this, "llama-3.1-8b-instruct", ToolParser::kLlama3Json, tokenizer);
  auto ex = call("POST", "/v1/chat/completions", chatBody(""));
  ASSERT_EQ(ex->status, 0) << ex->body;
  EXPECT_TRUE(sched.entries.at(sched.last()).req.skipSpecialTokens);
  sched.token(sched.last(), 1, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}");
  sched.finish(sched.last(), serve::FinishReason::kStop, 1);
  ex->drain();
  const json::Value llamaChoice = firstChoice(ex->bodyJson());
  const json::Value *msg = llamaChoice.find("message");
  ASSERT_TRUE(msg->find("tool_calls")) << ex->body;
  EXPECT_EQ(msg->find("tool_calls")->items()[0].find("function")->find("arguments")->asString(),
            "{\"city\": \"Paris\"}");
  // Mistral: [TOOL_CALLS] is a special token, so its text is kept; ids are
  // the 9 characters its template takes back.
  useTools(*this, "mistral-7b-instruct-v0.3", ToolParser::kMistral, tokenizer);
  auto m = call("POST", "/v1/chat/completions", chatBody(""));
  ASSERT_EQ(m->status, 0) << m->body;
  EXPECT_FALSE(sched.entries.at(sched.last()).req.skipSpecialTokens);
  sched.token(sched.last(), 1,
              "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]");
  sched.finish(sched.last(), serve::FinishReason::kStop, 1);
  m->drain();
  const json::Value mistralChoice = firstChoice(m->bodyJson());
  ASSERT_TRUE(mistralChoice.find("message")->find("tool_calls")) << m->body;
  const json::Value &call0 = mistralChoice.find("message")->find("tool_calls")->items()[0];
  const std::string id = call0.find("id")->asString();
  EXPECT_TRUE(std::regex_match(id, std::regex("[A-Za-z0-9]{9}"))) << id;
  // The call and its result back in the next request: the template takes them.
  auto next = call("POST", "/v1/chat/completions",
                   std::string("{") + kWeatherTools +
                       R"(,"messages":[{"role":"user","content":"Weather in Paris?"},
                         {"role":"assistant","content":null,"tool_calls":[)" +
                       json::write(call0) + R"(]},{"role":"tool","tool_call_id":")" + id +
                       R"(","content":"21 C"}]})");
  EXPECT_EQ(next->status, 0) << next->body;
  // Without tools the request is as before: special tokens skipped.
  call("POST", "/v1/chat/completions", R"({"messages":[{"role":"user","content":"Hi"}]})");
  EXPECT_TRUE(sched.entries.at(sched.last()).req.skipSpecialTokens);
}

TEST_F(ApiFixture, ToolRequestErrorsNameTheField) {
  auto tokenizer = demoTokenizer();
  useTools(*this, "qwen2.5-instruct", ToolParser::kHermes, tokenizer);
  const std::string user = R"("messages":[{"role":"user","content":"Hi"}])";
  struct Case {
    std::string body, param, inMessage;
  };
  const Case cases[] = {
      {"{" + user + R"(,"tools":{"type":"function"}})", "tools", "must be an array of tools"},
      {"{" + user + R"(,"tools":[{"type":"function","function":{"name":"f"}},{"type":"function"}]})",
       "tools[1].function", "'tools[1].function' must be an object"},
      {"{" + user + R"(,"tools":[{"type":"retrieval","function":{"name":"f"}}]})",
       "tools[0].type", "must be \"function\""},
      {"{" + user + R"(,"tools":[{"type":"function","function":{"name":"a b"}}]})",
       "tools[0].function.name", "letters, digits"},
      {"{" + user + R"(,"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"f"}}]})",
       "tools[1].function.name", "is tools[0]'s name already"},
      {"{" + user + R"(,"tools":[{"type":"function","function":{"name":"f","params":{}}}]})",
       "tools[0].function.params", "not a member of a function"},
      {"{" + user + R"(,"tools":[{"type":"function","function":{"name":"f","parameters":"x"}}]})",
       "tools[0].function.parameters", "an object"},
      {"{" + user + R"(,"tools":[{"type":"function","function":{"name":"f"}}],
          "tool_choice":{"type":"function","function":{"name":"g"}}})",
       "tool_choice.function.name", "\"g\", which is not one of the request's tools (f)"},
      {"{" + user + R"(,"tool_choice":"required"})", "tool_choice", "needs 'tools'"},
      {"{" + user + R"(,"tool_choice":{"type":"function","function":{"name":"g"}}})",
       "tool_choice.function.name", "(it has none)"},
      {"{" + user + R"(,"tool_choice":"sometimes"})", "tool_choice", "got \"sometimes\""},
      {"{" + user + R"(,"tools":[{"type":"function","function":{"name":"f"}}],"parallel_tool_calls":"no"})",
       "parallel_tool_calls", "a boolean"},
      {R"({"messages":[{"role":"user","content":"Hi"},{"role":"tool","content":"x"}]})",
       "messages[1].tool_call_id", "the id of the tool call"},
      {R"({"messages":[{"role":"user","content":"Hi","tool_call_id":"c"}]})",
       "messages[0].tool_call_id", "on a tool message only"},
      {R"({"messages":[{"role":"user","content":"Hi","tool_calls":[{"function":{"name":"f"}}]}]})",
       "messages[0].tool_calls", "on an assistant message only"},
      {R"({"messages":[{"role":"user","content":"Hi"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{"}}]}]})",
       "messages[1].tool_calls[0].function.arguments", "must hold a JSON object: invalid JSON"},
      {R"({"messages":[{"role":"user","content":"Hi"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"[1]"}}]}]})",
       "messages[1].tool_calls[0].function.arguments", "got an array"},
      {R"({"messages":[{"role":"user","content":"Hi"},{"role":"assistant","tool_calls":[{"id":"c","function":{"arguments":"{}"}}]}]})",
       "messages[1].tool_calls[0].function.name", "a function's name"},
      {R"({"messages":[{"role":"user","content":"Hi"},{"role":"assistant","tool_calls":[{"id":3,"function":{"name":"f"}}]}]})",
       "messages[1].tool_calls[0].id", "a string"},
      {R"({"messages":[{"role":"function","content":"x"}]})", "messages[0].role",
       "supported roles are system, developer, user, assistant, tool"},
      {"{" + user + R"(,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required","add_generation_prompt":false})",
       "tool_choice", "needs 'add_generation_prompt' true"},
  };
  const size_t before = sched.order.size();
  for (const Case &c : cases) {
    auto ex = call("POST", "/v1/chat/completions", c.body);
    EXPECT_EQ(ex->status, 400) << c.body << " -> " << ex->body;
    if (ex->status != 400)
      continue;
    ApiError e = parseErr(*ex);
    EXPECT_EQ(e.param, c.param) << c.body << " -> " << e.message;
    EXPECT_NE(e.message.find(c.inMessage), std::string::npos) << c.body << " -> " << e.message;
  }
  EXPECT_EQ(sched.order.size(), before);

  // The built-in formats render role and content only: tools, tool calls and
  // tool messages are refused there, and a server without a parser refuses
  // tool_choice that asks for calls.
  configure = nullptr;
  make(AdmissionOptions{}, tokenizer);
  const Case plain[] = {
      {chatBody(R"("tool_choice":"none")"), "tools", "need the model's Jinja chat template"},
      {chatBody(""), "tool_choice", "needs a tool-call parser"},
      {R"({"messages":[{"role":"user","content":"Hi"},{"role":"tool","tool_call_id":"c","content":"x"}]})",
       "messages[1].role", "the built-in format 'plain' renders a message's role and content only"},
  };
  for (const Case &c : plain) {
    auto ex = call("POST", "/v1/chat/completions", c.body);
    ASSERT_EQ(ex->status, 400) << c.body << " -> " << ex->body;
    ApiError e = parseErr(*ex);
    EXPECT_EQ(e.param, c.param) << c.body << " -> " << e.message;
    EXPECT_NE(e.message.find(c.inMessage), std::string::npos) << c.body << " -> " << e.message;
  }
  EXPECT_EQ(sched.order.size(), before);
}

// ---------------------------------------------------------------------------
// docs/serving.md's table of request parameters against the code
// ---------------------------------------------------------------------------

/// Every field of a parsed request, to tell whether a parameter changed it.
std::string summarize(const CompletionRequest &r) {
  std::ostringstream o;
  auto ids = [&](const std::vector<int64_t> &v) {
    for (int64_t x : v)
      o << x << ",";
    o << ";";
  };
  o << int(r.endpoint) << "|" << r.model << "|" << r.stream << r.includeUsage << "|" << r.prompt
    << "|";
  ids(r.promptIds);
  o << r.promptIsIds << "|";
  for (const ChatMessage &m : r.messages)
    o << m.role << ":" << m.content << ":" << json::write(m.toolCalls) << ":" << m.toolCallId
      << ";";
  o << r.addGenerationPrompt << "|" << (r.maxTokens ? std::to_string(*r.maxTokens) : "-") << "|"
    << r.sampling.temperature << "," << r.sampling.topK << "," << r.sampling.topP << ","
    << r.sampling.minP << "," << r.sampling.repetitionPenalty << ","
    << r.sampling.frequencyPenalty << "," << r.sampling.presencePenalty << ","
    << (r.sampling.seed ? std::to_string(*r.sampling.seed) : "-") << ","
    << int(r.sampling.logprobMode) << "|";
  for (const std::string &x : r.stop)
    o << x << ";";
  o << "|" << r.ignoreEos << "|" << r.n << "," << r.bestOf << "|" << r.logprobs << "|";
  ids(r.stopTokenIds);
  o << r.minTokens << "|" << r.includeStopStrInOutput << "|";
  ids(r.allowedTokenIds);
  for (const auto &[t, b] : r.logitBias)
    o << t << "=" << b << ";";
  o << "|";
  for (const std::string &x : r.badWords)
    o << x << ";";
  o << "|" << (r.truncatePromptTokens ? std::to_string(*r.truncatePromptTokens) : "-") << "|"
    << r.skipSpecialTokens << "|"
    << (r.addSpecialTokens ? std::to_string(*r.addSpecialTokens) : "-") << "|" << r.echo
    << r.continueFinalMessage << "|" << json::write(r.chatTemplateKwargs) << "|"
    << json::write(r.documents) << "|" << json::write(r.tools) << "," << int(r.toolChoice.kind)
    << r.toolChoice.name << "," << r.parallelToolCalls << "|";
  if (r.constraint)
    o << r.constraint->kind << ":" << r.constraint->text << ":" << r.constraint->whitespace;
  o << "|" << r.promptLogprobs;
  return o.str();
}

struct ParamRow {
  std::string name, endpoint, status, accepted, refused;
};

/// The rows of docs/serving.md's "Request parameters" table.
std::vector<ParamRow> parameterTable() {
  std::ifstream in(ACCEL_SOURCE_DIR "/docs/serving.md");
  EXPECT_TRUE(in.good()) << "cannot read docs/serving.md";
  std::vector<ParamRow> rows;
  std::string line;
  bool inSection = false, inTable = false;
  auto unquote = [](std::string c) {
    c.erase(0, c.find_first_not_of(' '));
    c.erase(c.find_last_not_of(' ') + 1);
    if (c.size() >= 2 && c.front() == '`' && c.back() == '`')
      c = c.substr(1, c.size() - 2);
    return c == "—" ? std::string() : c;
  };
  while (std::getline(in, line)) {
    if (line.rfind("### ", 0) == 0 || line.rfind("## ", 0) == 0) {
      inSection = line == "### Request parameters";
      inTable = false;
      continue;
    }
    if (!inSection)
      continue;
    if (line.rfind("| parameter |", 0) == 0) {
      inTable = true;
      continue;
    }
    if (!inTable || line.rfind("| `", 0) != 0)
      continue;
    std::vector<std::string> cells;
    size_t at = 1;
    for (size_t bar; (bar = line.find(" | ", at)) != std::string::npos; at = bar + 3)
      cells.push_back(line.substr(at, bar - at));
    EXPECT_EQ(cells.size(), 5u) << line;
    if (cells.size() < 5)
      continue;
    rows.push_back({unquote(cells[0]), unquote(cells[1]), unquote(cells[2]), unquote(cells[3]),
                    unquote(cells[4])});
  }
  return rows;
}

TEST_F(ApiFixture, RequestParameterTableMatchesTheCode) {
  // A real chat template with a tool-call parser, so that tools and tool
  // messages can be rendered (the built-in formats refuse them).
  useTools(*this, "qwen2.5-instruct", ToolParser::kHermes, demoTokenizer());
  const std::vector<ParamRow> rows = parameterTable();
  ASSERT_GT(rows.size(), 50u);
  RequestLimits limits;
  limits.vocabSize = 100;
  for (Endpoint ep : {Endpoint::kCompletions, Endpoint::kChat}) {
    const bool chat = ep == Endpoint::kChat;
    const char *path = chat ? "/v1/chat/completions" : "/v1/completions";
    const std::string epName = chat ? "chat" : "completions";
    const std::string baseline = chat ? R"({"messages":[{"role":"user","content":"Hi"}],"max_tokens":4})"
                                      : R"({"prompt":[1,2,3],"max_tokens":4})";
    /// baseline + `example`'s members, without `drop`.
    auto body = [&](const std::string &example, const std::string &drop) {
      json::Value b = parseJson(baseline);
      json::Value e = parseJson(example);
      for (const json::Member &m : e.members())
        if (m.first != drop)
          b.set(m.first, m.second);
      return json::write(b);
    };
    auto parsed = [&](const std::string &text) {
      CompletionRequest r;
      ApiError err;
      return parseCompletionRequest(text, ep, limits, r, err) ? summarize(r) : "error: " + err.message;
    };
    std::set<std::string> documented;
    for (const ParamRow &row : rows) {
      if (row.endpoint != "both" && row.endpoint != epName)
        continue;
      SCOPED_TRACE(row.name + " on " + epName + " (" + row.status + ")");
      const bool nested = row.name.find_first_of(".[") != std::string::npos;
      if (!nested)
        documented.insert(row.name);
      ASSERT_TRUE(row.status == "honoured" || row.status == "limited" || row.status == "no-op" ||
                  row.status == "refused");
      EXPECT_EQ(row.accepted.empty(), row.status == "refused") << "an accepted example";
      EXPECT_EQ(row.refused.empty(), false) << "a refused example";
      if (!row.accepted.empty()) {
        const size_t before = sched.order.size();
        auto ex = call("POST", path, body(row.accepted, ""));
        EXPECT_TRUE(ex->status == 0 || ex->status == 200) << ex->status << " " << ex->body;
        ASSERT_EQ(sched.order.size(), before + 1) << "not submitted: " << ex->body;
        sched.finish(sched.last(), serve::FinishReason::kStop, 0);
        ex->drain();
        if (!nested) {
          const std::string with = parsed(body(row.accepted, "")),
                            without = parsed(body(row.accepted, row.name));
          if (row.status == "honoured")
            EXPECT_NE(with, without) << "an honoured parameter that changes nothing";
          else
            EXPECT_EQ(with, without) << "a " << row.status << " example that changes the request";
        }
      }
      if (!row.refused.empty()) {
        const size_t before = sched.order.size();
        auto ex = call("POST", path, body(row.refused, ""));
        EXPECT_EQ(ex->status, 400) << ex->body;
        EXPECT_EQ(sched.order.size(), before);
        std::string want = row.name;
        if (size_t b = want.find("[]"); b != std::string::npos)
          want.replace(b, 2, "[0]");
        const std::string got = parseErr(*ex).param;
        EXPECT_TRUE(got == want || got.rfind(want + "[", 0) == 0 || got.rfind(want + ".", 0) == 0)
            << "param " << got << ": " << ex->body;
      }
    }
    const std::vector<std::string> &known = requestParameters(ep);
    EXPECT_EQ(documented, std::set<std::string>(known.begin(), known.end()))
        << "docs/serving.md's table and requestParameters(" << epName << ") differ";
  }
}

TEST_F(ApiFixture, OtherRoutes) {
  auto health = call("GET", "/health");
  EXPECT_EQ(health->status, 200);
  auto models = call("GET", "/v1/models");
  EXPECT_EQ(models->status, 200);
  json::Value m = models->bodyJson();
  EXPECT_EQ(m.find("object")->asString(), "list");
  ASSERT_EQ(m.find("data")->items().size(), 2u);
  EXPECT_EQ(m.find("data")->items()[0].find("id")->asString(), "demo");
  EXPECT_EQ(m.find("data")->items()[0].find("max_model_len")->asInt(), 32);
  EXPECT_EQ(call("GET", "/v1/models/alias")->status, 200);
  EXPECT_EQ(parseErr(*call("GET", "/v1/models/nope")).code, "model_not_found");
  sched.statsValue.running = 5;
  auto metricsEx = call("GET", "/metrics");
  EXPECT_EQ(metricsEx->status, 200);
  EXPECT_EQ(metricsEx->contentType.rfind("text/plain; version=0.0.4", 0), 0u);
  EXPECT_EQ(scrape(metricsEx->body)["accel:num_requests_running{model_name=\"demo\"}"], 5);
  EXPECT_EQ(call("GET", "/nope")->status, 404);
  auto wrong = call("GET", "/v1/completions");
  EXPECT_EQ(wrong->status, 405);
  EXPECT_EQ(wrong->header("Allow"), "POST");
}

TEST_F(ApiFixture, ApiKey) {
  configure = [](ApiOptions &o) { o.access.apiKey = "sk-right"; };
  make(AdmissionOptions{});
  auto none = call("GET", "/v1/models");
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(parseErr(*none).code, "invalid_api_key");
  EXPECT_NE(parseErr(*none).message.find("Authorization: Bearer"), std::string::npos);
  EXPECT_EQ(none->header("WWW-Authenticate"), "Bearer");
  for (const char *bad : {"Bearer sk-wrong", "Bearer sk-righ", "Bearer sk-right2", "sk-right",
                          "Basic sk-right", "Bearer "}) {
    auto ex = call("GET", "/v1/models", "", {{"Authorization", bad}});
    EXPECT_EQ(ex->status, 401) << bad;
  }
  auto post = call("POST", "/v1/completions", R"({"prompt":[1]})");
  EXPECT_EQ(post->status, 401);
  EXPECT_EQ(call("GET", "/v1/nope")->status, 401); // every /v1/ route
  EXPECT_TRUE(sched.order.empty());
  auto ok = call("GET", "/v1/models", "", {{"Authorization", "Bearer sk-right"}});
  EXPECT_EQ(ok->status, 200);
  auto okPost = call("POST", "/v1/completions", R"({"prompt":[1]})",
                     {{"Authorization", "bearer  sk-right"}, {"Content-Type", "application/json"}});
  EXPECT_EQ(okPost->status, 0) << okPost->body; // in flight
  EXPECT_EQ(sched.order.size(), 1u);
  // /health and /metrics stay open.
  EXPECT_EQ(call("GET", "/health")->status, 200);
  EXPECT_EQ(call("GET", "/metrics")->status, 200);
}

TEST(Access, ConstantTimeEqualsAndLists) {
  EXPECT_TRUE(constantTimeEquals("abc", "abc"));
  EXPECT_FALSE(constantTimeEquals("abc", "abd"));
  EXPECT_FALSE(constantTimeEquals("abc", "ab"));
  EXPECT_FALSE(constantTimeEquals("", "a"));
  EXPECT_TRUE(constantTimeEquals("", ""));
  EXPECT_EQ(splitList(" a, b ,,c "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(defaultAllowedHosts("127.0.0.1"),
            (std::vector<std::string>{"localhost", "127.0.0.1", "::1"}));
  EXPECT_EQ(defaultAllowedHosts("127.0.0.2"),
            (std::vector<std::string>{"localhost", "127.0.0.1", "::1", "127.0.0.2"}));
  EXPECT_EQ(defaultAllowedHosts("::1").size(), 3u);
  EXPECT_EQ(defaultAllowedHosts("localhost").size(), 3u);
  EXPECT_TRUE(defaultAllowedHosts("0.0.0.0").empty());
  EXPECT_TRUE(defaultAllowedHosts("10.1.2.3").empty());
}

TEST_F(ApiFixture, HostAndOrigin) {
  configure = [](ApiOptions &o) {
    o.access.allowedHosts = defaultAllowedHosts("127.0.0.1");
    o.access.allowedOrigins = {"https://app.example"};
  };
  make(AdmissionOptions{});
  // DNS rebinding: a page at evil.example:8000, its name pointed at 127.0.0.1.
  for (const char *host : {"evil.example:8000", "evil.example", "127.0.0.1.evil.example"}) {
    auto ex = call("GET", "/v1/models", "", {{"Host", host}});
    EXPECT_EQ(ex->status, 403) << host;
    EXPECT_NE(parseErr(*ex).message.find("--allowed-hosts"), std::string::npos) << host;
    EXPECT_EQ(call("GET", "/health", "", {{"Host", host}})->status, 403) << host;
  }
  for (const char *host : {"localhost:8000", "LOCALHOST", "127.0.0.1:1", "[::1]:8000", "localhost."})
    EXPECT_EQ(call("GET", "/v1/models", "", {{"Host", host}})->status, 200) << host;
  // Cross-site browser requests.
  auto cross = call("POST", "/v1/completions", R"({"prompt":[1]})",
                    {{"Host", "localhost:8000"}, {"Origin", "http://evil.example"},
                     {"Content-Type", "application/json"}});
  EXPECT_EQ(cross->status, 403);
  EXPECT_NE(parseErr(*cross).message.find("--allowed-origins"), std::string::npos);
  EXPECT_EQ(call("GET", "/v1/models", "", {{"Host", "localhost:8000"}, {"Origin", "null"}})->status,
            403);
  EXPECT_TRUE(sched.order.empty());
  // Same origin, and a listed one (with CORS headers and a preflight).
  EXPECT_EQ(call("GET", "/v1/models", "",
                 {{"Host", "localhost:8000"}, {"Origin", "http://localhost:8000"}})
                ->status,
            200);
  auto listed = call("GET", "/v1/models", "",
                     {{"Host", "localhost:8000"}, {"Origin", "https://app.example"}});
  EXPECT_EQ(listed->status, 200);
  EXPECT_EQ(listed->header("Access-Control-Allow-Origin"), "https://app.example");
  auto pre = call("OPTIONS", "/v1/chat/completions", "",
                  {{"Host", "localhost:8000"}, {"Origin", "https://app.example"}});
  EXPECT_EQ(pre->status, 204);
  EXPECT_NE(pre->header("Access-Control-Allow-Headers").find("Authorization"), std::string::npos);
  EXPECT_EQ(call("OPTIONS", "/v1/chat/completions", "",
                 {{"Host", "localhost:8000"}, {"Origin", "https://other.example"}})
                ->status,
            403);
}

TEST_F(ApiFixture, JsonBodiesOnly) {
  // A cross-site form or a fetch without preflight can only send these.
  for (const char *ct : {"text/plain", "application/x-www-form-urlencoded",
                         "multipart/form-data; boundary=x", "application/jsonx"}) {
    auto ex = call("POST", "/v1/completions", R"({"prompt":[1]})", {{"Content-Type", ct}});
    EXPECT_EQ(ex->status, 415) << ct;
    EXPECT_NE(parseErr(*ex).message.find("application/json"), std::string::npos) << ct;
  }
  HttpRequest r;
  r.method = "POST";
  r.path = r.target = "/v1/chat/completions";
  r.body = R"({"messages":[{"role":"user","content":"x"}]})";
  auto bare = std::make_shared<FakeExchange>();
  api->handle(r, bare); // no Content-Type at all
  EXPECT_EQ(bare->status, 415);
  EXPECT_TRUE(sched.order.empty());
  auto ok = call("POST", "/v1/completions", R"({"prompt":[1]})",
                 {{"Content-Type", "Application/JSON; charset=utf-8"}});
  EXPECT_EQ(ok->status, 0) << ok->body;
  EXPECT_EQ(sched.order.size(), 1u);
}

TEST_F(ApiFixture, PromptBytesAreLimitedBeforeTokenization) {
  configure = [](ApiOptions &o) { o.maxPromptBytes = 64; };
  make(AdmissionOptions{}, demoTokenizer());
  auto big = call("POST", "/v1/completions",
                  "{\"prompt\":\"" + std::string(65, 'a') + "\",\"max_tokens\":1}");
  EXPECT_EQ(big->status, 413);
  EXPECT_EQ(parseErr(*big).param, "prompt");
  EXPECT_NE(parseErr(*big).message.find("65 bytes"), std::string::npos);
  EXPECT_NE(parseErr(*big).message.find("--max-prompt-bytes"), std::string::npos);
  auto chat = call("POST", "/v1/chat/completions",
                   "{\"messages\":[{\"role\":\"user\",\"content\":\"" + std::string(40, 'a') +
                       "\"},{\"role\":\"user\",\"content\":\"" + std::string(40, 'b') + "\"}]}");
  EXPECT_EQ(chat->status, 413);
  EXPECT_EQ(parseErr(*chat).param, "messages");
  EXPECT_TRUE(sched.order.empty());
  auto fits = call("POST", "/v1/completions",
                   "{\"prompt\":\"" + std::string(64, 'a') + "\",\"max_tokens\":1}");
  EXPECT_NE(fits->status, 413) << fits->body;
}

TEST_F(ApiFixture, LargeBodiesAreTokenizedOffTheIoThread) {
  configure = [](ApiOptions &o) { o.inlineBodyBytes = 16; };
  make(AdmissionOptions{}, demoTokenizer());
  const std::thread::id io = std::this_thread::get_id();
  auto ex = call("POST", "/v1/completions",
                 R"({"prompt":"In the beginning","max_tokens":2,"stream":true})");
  // handle() returned at once; the worker submits through the strand.
  EXPECT_EQ(ex->status, 0);
  EXPECT_TRUE(sched.order.empty());
  EXPECT_EQ(api->inFlight(), 1);
  ASSERT_TRUE(ex->waitForPost());
  EXPECT_EQ(std::this_thread::get_id(), io);
  ex->drain(); // the strand runs the submit
  ASSERT_EQ(sched.order.size(), 1u);
  EXPECT_EQ(sched.entries.at(sched.last()).req.promptIds,
            (std::vector<int64_t>{1143, 259, 1796, 1239}));
  EXPECT_TRUE(ex->streaming);
  sched.finish(sched.last(), serve::FinishReason::kStop, 0);
  ex->drain();
  EXPECT_EQ(api->inFlight(), 0);
  EXPECT_EQ(sse::parse(ex->body).back(), "[DONE]");
  // A refusal from the worker is answered too.
  auto bad = call("POST", "/v1/completions", R"({"prompt":"x","temperature":"hot"})");
  for (int i = 0; i < 500 && bad->status == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(bad->status, 400);
  for (int i = 0; i < 500 && api->inFlight() > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(api->inFlight(), 0);
}

TEST_F(ApiFixture, DrainRefusesNewRequestsAndEndsTheRestWithAnError) {
  auto stream = call("POST", "/v1/completions", R"({"prompt":[5],"max_tokens":20,"stream":true})");
  const std::string streamId = sched.last();
  auto whole = call("POST", "/v1/completions", R"({"prompt":[5],"max_tokens":20})");
  const std::string wholeId = sched.last();
  auto done = call("POST", "/v1/completions", R"({"prompt":[5],"max_tokens":20,"stream":true})");
  const std::string doneId = sched.last();
  EXPECT_EQ(api->inFlight(), 3);
  api->beginDrain();
  EXPECT_EQ(call("GET", "/health")->status, 503);
  auto late = call("POST", "/v1/completions", R"({"prompt":[5]})");
  EXPECT_EQ(late->status, 503);
  EXPECT_NE(parseErr(*late).message.find("shutting down"), std::string::npos);
  EXPECT_EQ(call("GET", "/v1/models")->status, 503);
  EXPECT_EQ(call("GET", "/metrics")->status, 200);
  EXPECT_EQ(sched.order.size(), 3u);
  // One finishes within the drain, as usual.
  sched.token(doneId, 1, "a");
  sched.finish(doneId, serve::FinishReason::kLength, 1);
  done->drain();
  EXPECT_EQ(sse::parse(done->body).back(), "[DONE]");
  EXPECT_EQ(api->inFlight(), 2);
  // The timeout: the rest are cancelled and end with an error.
  api->cancelAll();
  std::sort(sched.cancelled.begin(), sched.cancelled.end());
  std::vector<std::string> want{streamId, wholeId};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(sched.cancelled, want);
  sched.token(streamId, 1, "a");
  sched.finish(streamId, serve::FinishReason::kCancelled, 1);
  sched.finish(wholeId, serve::FinishReason::kCancelled, 0);
  stream->drain();
  whole->drain();
  std::vector<std::string> events = sse::parse(stream->body);
  ASSERT_GE(events.size(), 3u) << stream->body;
  EXPECT_EQ(events.back(), "[DONE]");
  json::Value err = parseJson(events[events.size() - 2]);
  ASSERT_TRUE(err.find("error")) << stream->body;
  EXPECT_NE(err.find("error")->find("message")->asString().find("shut down"), std::string::npos);
  EXPECT_TRUE(stream->ended);
  EXPECT_EQ(whole->status, 503);
  EXPECT_NE(parseErr(*whole).message.find("--shutdown-timeout"), std::string::npos);
  EXPECT_EQ(api->inFlight(), 0);
  EXPECT_EQ(admission->snapshot().inFlight, 0);
}

TEST_F(ApiFixture, ModelsShowNoPath) {
  json::Value m = call("GET", "/v1/models")->bodyJson();
  for (const json::Value &card : m.find("data")->items())
    EXPECT_EQ(card.find("root")->asString(), card.find("id")->asString());
  auto head = call("HEAD", "/v1/models");
  EXPECT_EQ(head->status, 200);
  auto wrong = call("PUT", "/health");
  EXPECT_EQ(wrong->header("Allow"), "GET, HEAD");
}

// ---------------------------------------------------------------------------
// The HTTP transport over real sockets
// ---------------------------------------------------------------------------

int connectTo(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void sendAll(int fd, const std::string &s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0)
      return;
    off += size_t(n);
  }
}

/// Reads until `done(buffer)` or EOF or the timeout.
std::string recvUntil(int fd, const std::function<bool(const std::string &)> &done,
                      int timeoutMs = 5000) {
  std::string buf;
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  while (!done(buf)) {
    int left = int(std::chrono::duration_cast<std::chrono::milliseconds>(
                       end - std::chrono::steady_clock::now())
                       .count());
    if (left <= 0)
      break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, left) <= 0)
      break;
    char tmp[4096];
    ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
    if (n <= 0)
      break;
    buf.append(tmp, size_t(n));
  }
  return buf;
}

/// A complete Content-Length response at the start of `b`.
bool haveWholeResponse(const std::string &b) {
  size_t h = b.find("\r\n\r\n");
  if (h == std::string::npos)
    return false;
  size_t cl = b.find("Content-Length: ");
  if (cl == std::string::npos || cl > h)
    return true;
  return b.size() >= h + 4 + std::stoul(b.substr(cl + 16));
}

struct TransportFixture : ::testing::Test {
  std::unique_ptr<HttpServer> server;
  std::mutex mu;
  std::condition_variable cv;
  int closes = 0;
  std::vector<std::shared_ptr<HttpExchange>> streams, later;
  std::vector<std::string> seen; // requests answered 404

  /// Waits until `n` exchanges wait in `list`.
  bool waitFor(std::vector<std::shared_ptr<HttpExchange>> &list, size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(5), [&] { return list.size() >= n; });
  }

  void start(HttpServerOptions o = {}) {
    o.host = "127.0.0.1";
    o.port = 0;
    auto s = HttpServer::create(o, [this](HttpRequest r, std::shared_ptr<HttpExchange> ex) {
      if (r.path == "/echo") {
        ex->respond(200, "text/plain", r.method + " " + r.body);
      } else if (r.path == "/stream") {
        // Streams from another thread, as the scheduler does.
        ex->startStream(200, sse::kContentType);
        ex->onClose([this]() {
          std::lock_guard<std::mutex> lock(mu);
          ++closes;
          cv.notify_all();
        });
        std::lock_guard<std::mutex> lock(mu);
        streams.push_back(ex);
        cv.notify_all();
      } else if (r.path == "/empty") {
        ex->respond(204, "", "ignored");
      } else if (r.path == "/later") {
        // Answered by the test, from its thread, whenever it likes.
        ex->onClose([this]() {
          std::lock_guard<std::mutex> lock(mu);
          ++closes;
          cv.notify_all();
        });
        std::lock_guard<std::mutex> lock(mu);
        later.push_back(ex);
        cv.notify_all();
      } else {
        std::lock_guard<std::mutex> lock(mu);
        seen.push_back(r.method + " " + r.target);
        ex->respond(404, "text/plain", "no");
      }
    });
    ASSERT_TRUE(s.isOk()) << s.status().message();
    server = std::move(*s);
    server->start();
  }
  void TearDown() override {
    if (server)
      server->stop();
  }
};

TEST_F(TransportFixture, KeepAliveAndPipelining) {
  start();
  int fd = connectTo(server->port());
  ASSERT_GE(fd, 0);
  sendAll(fd, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
  std::string r1 = recvUntil(fd, haveWholeResponse);
  EXPECT_EQ(r1.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r1;
  EXPECT_NE(r1.find("\r\n\r\nPOST hello"), std::string::npos) << r1;
  // Same connection, two pipelined requests: both answered, in order.
  sendAll(fd, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string r2 = recvUntil(fd, [](const std::string &b) {
    return b.find("\r\n\r\nno") != std::string::npos;
  });
  size_t a = r2.find("200 OK"), b = r2.find("404 Not Found");
  EXPECT_NE(a, std::string::npos) << r2;
  EXPECT_NE(b, std::string::npos) << r2;
  EXPECT_LT(a, b);
  ::close(fd);
}

TEST_F(TransportFixture, Limits) {
  HttpServerOptions o;
  o.maxBodyBytes = 100;
  o.maxHeaderBytes = 512;
  start(o);
  auto ask = [&](const std::string &req) {
    int fd = connectTo(server->port());
    sendAll(fd, req);
    std::string r = recvUntil(fd, haveWholeResponse);
    ::close(fd);
    return r;
  };
  std::string big = ask("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n" +
                        std::string(1000, 'x'));
  EXPECT_EQ(big.rfind("HTTP/1.1 413 ", 0), 0u) << big;
  std::string hdr = ask("GET /echo HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(2000, 'y') +
                        "\r\n\r\n");
  EXPECT_EQ(hdr.rfind("HTTP/1.1 431 ", 0), 0u) << hdr;
  std::string junk = ask("NOT HTTP AT ALL\r\n\r\n");
  EXPECT_EQ(junk.rfind("HTTP/1.1 400 ", 0), 0u) << junk;
  EXPECT_NE(junk.find("\"error\""), std::string::npos);
}

TEST_F(TransportFixture, IdleTimeout) {
  HttpServerOptions o;
  o.requestTimeout = std::chrono::milliseconds(200);
  start(o);
  int fd = connectTo(server->port());
  sendAll(fd, "GET /echo HTTP/1.1\r\n"); // never finished
  auto t0 = std::chrono::steady_clock::now();
  std::string r = recvUntil(fd, [](const std::string &) { return false; }, 3000);
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(waited, 2.0); // closed by the server, not by our timeout
  ::close(fd);
}

TEST_F(TransportFixture, StreamAndDisconnect) {
  start();
  int fd = connectTo(server->port());
  sendAll(fd, "POST /stream HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(5), [&] { return streams.size() == 1; }));
  }
  std::thread producer([&]() {
    std::shared_ptr<HttpExchange> ex = streams[0];
    ex->write(sse::event("{\"n\":1}"));
    ex->write(sse::event("{\"n\":2}"));
  });
  producer.join();
  std::string r = recvUntil(fd, [](const std::string &b) {
    return b.find("{\"n\":2}") != std::string::npos;
  });
  EXPECT_NE(r.find("Transfer-Encoding: chunked"), std::string::npos) << r;
  EXPECT_NE(r.find("Content-Type: text/event-stream"), std::string::npos) << r;
  EXPECT_NE(r.find("data: {\"n\":1}\n\n"), std::string::npos) << r;
  // The client goes away mid-stream: its FIN alone could be a half-close,
  // so the next write (refused by the client's kernel) tells.
  ::close(fd);
  streams[0]->write(sse::event("{\"n\":3}"));
  {
    std::unique_lock<std::mutex> lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(2), [&] { return closes == 1; }));
  }
  EXPECT_FALSE(streams[0]->isOpen());
  streams[0]->write("ignored"); // harmless after close
  streams[0]->endStream();
}

TEST_F(TransportFixture, StreamEndsAndConnectionIsReused) {
  start();
  int fd = connectTo(server->port());
  sendAll(fd, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(5), [&] { return streams.size() == 1; }));
  }
  streams[0]->write(sse::event("x"));
  streams[0]->write(sse::done());
  streams[0]->endStream();
  std::string r = recvUntil(fd, [](const std::string &b) {
    return b.find("\r\n0\r\n\r\n") != std::string::npos;
  });
  EXPECT_NE(r.find("data: [DONE]"), std::string::npos) << r;
  sendAll(fd, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string r2 = recvUntil(fd, haveWholeResponse);
  EXPECT_EQ(r2.rfind("HTTP/1.1 200 OK", 0), 0u) << r2;
  EXPECT_EQ(closes, 0);
  ::close(fd);
}

TEST_F(TransportFixture, ManyConcurrentStreams) {
  // Both ends of every connection live in this process: 2 descriptors each.
  const int kConns = 400;
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  if (rl.rlim_cur < rlim_t(2 * kConns + 64))
    GTEST_SKIP() << "file descriptor limit " << rl.rlim_cur;
  HttpServerOptions o;
  o.ioThreads = 1;
  start(o);
  std::vector<int> fds;
  for (int i = 0; i < kConns; ++i) {
    int fd = connectTo(server->port());
    ASSERT_GE(fd, 0) << i;
    sendAll(fd, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
    fds.push_back(fd);
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(
        cv.wait_for(lock, std::chrono::seconds(20), [&] { return int(streams.size()) == kConns; }));
  }
  EXPECT_EQ(server->openConnections(), kConns);
  // 20 tokens to every stream from one producer thread.
  std::thread producer([&]() {
    for (int t = 0; t < 20; ++t)
      for (auto &ex : streams)
        ex->write(sse::event("{\"t\":" + std::to_string(t) + "}"));
    for (auto &ex : streams) {
      ex->write(sse::done());
      ex->endStream();
    }
  });
  producer.join();
  int complete = 0;
  for (int fd : fds) {
    std::string r = recvUntil(fd, [](const std::string &b) {
      return b.find("\r\n0\r\n\r\n") != std::string::npos;
    });
    complete += r.find("{\"t\":19}") != std::string::npos &&
                r.find("data: [DONE]") != std::string::npos;
    ::close(fd);
  }
  EXPECT_EQ(complete, kConns);
}

/// Everything the server sends until it closes the connection (or the
/// timeout); `closed` says whether it did.
std::string recvToEof(int fd, bool *closed, int timeoutMs = 3000) {
  std::string buf;
  *closed = false;
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  while (true) {
    int left = int(std::chrono::duration_cast<std::chrono::milliseconds>(
                       end - std::chrono::steady_clock::now())
                       .count());
    if (left <= 0)
      return buf;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, left) <= 0)
      return buf;
    char tmp[4096];
    ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
    if (n <= 0) {
      *closed = true;
      return buf;
    }
    buf.append(tmp, size_t(n));
  }
}

size_t count(const std::string &s, const std::string &what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1))
    ++n;
  return n;
}

TEST_F(TransportFixture, TransferEncodingOtherThanChunkedIsRefused) {
  // RFC 9112 6.1/6.3: a Transfer-Encoding whose final coding is not chunked,
  // or one beside Content-Length, leaves the body's length unknown: 400,
  // then close, so that the body can never be read as a second request.
  start();
  const std::string smuggled = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string cl = "Content-Length: " + std::to_string(smuggled.size());
  // {HTTP version, framing headers}
  const std::vector<std::pair<std::string, std::string>> framings = {
      {"1.1", "Transfer-Encoding: chunked, identity"},
      {"1.1", "Transfer-Encoding: identity\r\n" + cl},
      {"1.1", "Transfer-Encoding: gzip, chunked"},
      {"1.1", "Transfer-Encoding: xchunked"},
      {"1.1", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked"},
      {"1.1", "Transfer-Encoding: chunked\r\n" + cl},
      {"1.1", cl + "\r\nTransfer-Encoding: chunked"},
      {"1.1", "Transfer-Encoding: identity"},
      {"1.0", "Transfer-Encoding: chunked"}, // HTTP/1.0 has no transfer codings
  };
  for (const auto &[version, f] : framings) {
    int fd = connectTo(server->port());
    ASSERT_GE(fd, 0);
    sendAll(fd, "POST /echo HTTP/" + version + "\r\nHost: x\r\n" + f + "\r\n\r\n" + smuggled);
    bool closed = false;
    std::string r = recvToEof(fd, &closed);
    ::close(fd);
    EXPECT_EQ(r.rfind("HTTP/1.1 400 ", 0), 0u) << f << "\n" << r;
    EXPECT_NE(r.find("Transfer-Encoding"), std::string::npos) << f << "\n" << r;
    EXPECT_NE(r.find("Connection: close"), std::string::npos) << f << "\n" << r;
    EXPECT_EQ(count(r, "HTTP/1.1 "), 1u) << f << "\n" << r;
    EXPECT_TRUE(closed) << f;
  }
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_TRUE(seen.empty()) << seen.front();

  // Exactly chunked (any case) is read as a chunked body.
  int fd = connectTo(server->port());
  sendAll(fd, "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n"
              "5\r\nhello\r\n0\r\n\r\n");
  std::string ok = recvUntil(fd, haveWholeResponse);
  ::close(fd);
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK", 0), 0u) << ok;
  EXPECT_NE(ok.find("\r\n\r\nPOST hello"), std::string::npos) << ok;
}

TEST_F(TransportFixture, Http11WithoutHostIs400) {
  start();
  int fd = connectTo(server->port());
  sendAll(fd, "GET /echo HTTP/1.1\r\n\r\n");
  bool closed = false;
  std::string r = recvToEof(fd, &closed);
  ::close(fd);
  EXPECT_EQ(r.rfind("HTTP/1.1 400 ", 0), 0u) << r;
  EXPECT_NE(r.find("Host"), std::string::npos) << r;
  // HTTP/1.0 needs none.
  fd = connectTo(server->port());
  sendAll(fd, "GET /echo HTTP/1.0\r\n\r\n");
  r = recvToEof(fd, &closed);
  ::close(fd);
  EXPECT_NE(r.find(" 200 OK"), std::string::npos) << r;
}

TEST_F(TransportFixture, HeadHasNoBody) {
  start();
  int fd = connectTo(server->port());
  // Pipelined: if HEAD's answer carried a body, it would be read as the
  // start of the GET's answer.
  sendAll(fd, "HEAD /echo HTTP/1.1\r\nHost: x\r\n\r\nGET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string r = recvUntil(fd, [](const std::string &b) {
    return b.find("\r\n\r\nGET ") != std::string::npos;
  });
  ::close(fd);
  size_t end = r.find("\r\n\r\n");
  ASSERT_NE(end, std::string::npos) << r;
  EXPECT_EQ(r.rfind("HTTP/1.1 200 OK", 0), 0u) << r;
  EXPECT_NE(r.substr(0, end).find("Content-Length: 5"), std::string::npos) << r; // "HEAD "
  EXPECT_EQ(r.compare(end + 4, 9, "HTTP/1.1 "), 0) << r;
  EXPECT_EQ(r.find("HEAD "), std::string::npos) << r;
  EXPECT_NE(r.find("\r\n\r\nGET "), std::string::npos) << r;
}

TEST_F(TransportFixture, NoContentHasNoBodyNorLength) {
  start();
  int fd = connectTo(server->port());
  sendAll(fd, "GET /empty HTTP/1.1\r\nHost: x\r\n\r\nGET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string r = recvUntil(fd, [](const std::string &b) {
    return b.find("\r\n\r\nGET ") != std::string::npos;
  });
  ::close(fd);
  size_t end = r.find("\r\n\r\n");
  ASSERT_NE(end, std::string::npos) << r;
  EXPECT_EQ(r.rfind("HTTP/1.1 204 ", 0), 0u) << r;
  EXPECT_EQ(r.substr(0, end).find("Content-Length"), std::string::npos) << r;
  EXPECT_EQ(r.compare(end + 4, 13, "HTTP/1.1 200 "), 0) << r;
}

TEST_F(TransportFixture, HalfClosedClientGetsItsResponse) {
  // shutdown(SHUT_WR) after the request: the client still reads. Its EOF is
  // not a cancel; only a write that fails is.
  start();
  int whole = connectTo(server->port());
  sendAll(whole, "POST /later HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi");
  ::shutdown(whole, SHUT_WR);
  int stream = connectTo(server->port());
  sendAll(stream, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  ::shutdown(stream, SHUT_WR);
  ASSERT_TRUE(waitFor(later, 1));
  ASSERT_TRUE(waitFor(streams, 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(300)); // the EOFs arrive
  EXPECT_TRUE(later[0]->isOpen());
  EXPECT_TRUE(streams[0]->isOpen());
  std::thread producer([&]() {
    later[0]->respond(200, "text/plain", "done");
    streams[0]->startStream(200, sse::kContentType);
    streams[0]->write(sse::event("x"));
    streams[0]->write(sse::done());
    streams[0]->endStream();
  });
  producer.join();
  bool closed = false;
  std::string r = recvToEof(whole, &closed);
  EXPECT_NE(r.find("HTTP/1.1 200 OK"), std::string::npos) << r;
  EXPECT_NE(r.find("\r\n\r\ndone"), std::string::npos) << r;
  EXPECT_TRUE(closed); // nothing more can come on it
  std::string s = recvToEof(stream, &closed);
  EXPECT_NE(s.find("data: [DONE]"), std::string::npos) << s;
  EXPECT_TRUE(closed);
  ::close(whole);
  ::close(stream);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(closes, 0);
}

TEST_F(TransportFixture, ClientThatClosedIsNoticedWhileItsAnswerIsPending) {
  // A whole response has nothing to write until the end; the server probes
  // the client (an interim 100 Continue) once it sees EOF, and a client that
  // closed both ways refuses it: the exchange is closed (cancelled) at once.
  start();
  int fd = connectTo(server->port());
  sendAll(fd, "GET /later HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(waitFor(later, 1));
  auto t0 = std::chrono::steady_clock::now();
  ::close(fd);
  {
    std::unique_lock<std::mutex> lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(3), [&] { return closes == 1; }));
  }
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(took, 2.0);
  EXPECT_FALSE(later[0]->isOpen());
  // A close callback registered after that (a handler on another thread
  // that got here late) runs at once.
  std::promise<void> ran;
  later[0]->onClose([&ran]() { ran.set_value(); });
  EXPECT_EQ(ran.get_future().wait_for(std::chrono::seconds(2)), std::future_status::ready);
}

TEST_F(TransportFixture, DrainClosesAfterEachAnswerAndWaitsForIdle) {
  start();
  int fd = connectTo(server->port());
  sendAll(fd, "GET /later HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(waitFor(later, 1));
  EXPECT_EQ(server->busyConnections(), 1);
  server->beginDrain();
  EXPECT_FALSE(server->waitIdle(std::chrono::milliseconds(50))); // a request in flight
  later[0]->respond(200, "text/plain", "last");
  EXPECT_TRUE(server->waitIdle(std::chrono::seconds(2)));
  bool closed = false;
  std::string r = recvToEof(fd, &closed);
  ::close(fd);
  EXPECT_NE(r.find("Connection: close"), std::string::npos) << r;
  EXPECT_NE(r.find("\r\n\r\nlast"), std::string::npos) << r;
  EXPECT_TRUE(closed);
  // New connections are still read (the handler answers them).
  fd = connectTo(server->port());
  sendAll(fd, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
  r = recvToEof(fd, &closed);
  ::close(fd);
  EXPECT_EQ(r.rfind("HTTP/1.1 200 OK", 0), 0u) << r;
  EXPECT_NE(r.find("Connection: close"), std::string::npos) << r;
  EXPECT_TRUE(server->waitIdle(std::chrono::seconds(2)));
  EXPECT_EQ(server->busyConnections(), 0);
}

TEST_F(TransportFixture, SignalsAreCountedNotLost) {
  start();
  EXPECT_FALSE(server->waitForSignal(std::chrono::milliseconds(20))); // installs the handler
  ::raise(SIGTERM); // between two waits: queued
  EXPECT_TRUE(server->waitForSignal(std::chrono::seconds(2)));
  EXPECT_FALSE(server->waitForSignal(std::chrono::milliseconds(20)));
  std::thread later([&]() {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ::raise(SIGINT);
  });
  EXPECT_TRUE(server->waitForSignal(std::chrono::seconds(2)));
  later.join();
  // stop() from another thread ends a wait without a signal.
  std::thread stopper([&]() {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    server->stop();
  });
  auto t0 = std::chrono::steady_clock::now();
  server->waitForSignal();
  stopper.join();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
}

} // namespace
