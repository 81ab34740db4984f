//===- HttpRequestFuzzer.cpp - libFuzzer target for the HTTP request parser =//
//
// Sends arbitrary bytes to a live HttpServer (runtime/serving/http) over a
// loopback TCP connection, then half-closes it and reads until the server
// closes: the bytes go through the real accept, Beast request parser (with
// the server's header and body limits), pipelining, the handler hand-off
// and the response writer. The server runs in this process (one IO
// thread), so a crash or a sanitizer report in it is the fuzzer's.
//
// The handler answers by path: "/v1/..." first passes the server's access
// checks (Access: Host against the loopback defaults, Origin against one
// listed origin, an API key; then a POST's Content-Type must be JSON) as
// OpenAiApi does, answering a refusal with its status and error body or a
// CORS preflight with 204; "/stream" (and "/v1/stream") with a chunked
// stream, "/post" from a posted task, "/closing" from a posted task after
// setting a close callback, anything else with one response echoing the
// request. It always answers: whether a client's EOF (a half-close) cancels
// a request is the server's policy, not something this target checks.
//
// What must hold: no crash, no hang (the server closes the connection soon
// after the client's EOF), every answer starts with "HTTP/1.1 ", every
// connection is released (openConnections() back to 0), and an access
// refusal is a 401, 403 or 415 with a message.
//
//===----------------------------------------------------------------------===//
#include "runtime/serving/http/Access.h"
#include "runtime/serving/http/HttpServer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>

using namespace accel::rt;
using namespace accel::rt::server;

namespace {
HttpServer *theServer = nullptr;
const Access *theAccess = nullptr;

[[noreturn]] void die(const char *what, const std::string &detail) {
  std::fprintf(stderr, "http fuzzer: %s: %s\n", what, detail.c_str());
  std::abort();
}

void handle(HttpRequest req, std::shared_ptr<HttpExchange> ex) {
  if (req.path.compare(0, 4, "/v1/") == 0) {
    Headers cors = theAccess->responseHeaders(req);
    if (theAccess->isPreflight(req)) {
      ex->respond(204, "", "", std::move(cors));
      return;
    }
    std::optional<ApiError> refused = theAccess->check(req);
    if (!refused && req.method == "POST")
      refused = jsonBodyError(req);
    if (refused) {
      if ((refused->status != 401 && refused->status != 403 && refused->status != 415) ||
          refused->message.empty())
        die("an access refusal that is not a 401, 403 or 415 with a message",
            std::to_string(refused->status) + " " + refused->message);
      ex->respond(refused->status, "application/json", errorBody(*refused), std::move(cors));
      return;
    }
    req.path = req.path.substr(3);
  }
  if (req.path == "/stream") {
    ex->startStream(200, "text/event-stream");
    ex->write("data: " + req.body + "\n\n");
    ex->write("data: [DONE]\n\n");
    ex->endStream();
    return;
  }
  if (req.path == "/post") {
    ex->post([ex, body = std::move(req.body)]() mutable {
      ex->respond(200, "application/json", std::move(body));
    });
    return;
  }
  if (req.path == "/closing") {
    ex->onClose([] {});
    ex->post([ex] { ex->respond(204, "", ""); });
    return;
  }
  std::string echo = req.method + " " + req.target + "\n";
  for (const auto &[k, v] : req.headers)
    echo += k + ": " + v + "\n";
  echo += req.header("content-type") + "\n" + req.body;
  ex->respond(200, "text/plain", std::move(echo), {{"X-Path", req.path.substr(0, 64)}});
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  std::signal(SIGPIPE, SIG_IGN);
  HttpServerOptions o;
  o.port = 0;
  o.ioThreads = 1;
  o.maxHeaderBytes = 4096; // small limits, so that 413 and 431 are reached
  o.maxBodyBytes = 8192;
  o.requestTimeout = std::chrono::milliseconds(10000);
  o.writeTimeout = std::chrono::milliseconds(10000);
  StatusOr<std::unique_ptr<HttpServer>> s = HttpServer::create(o, handle);
  if (!s)
    die("cannot start the server", s.status().message());
  theServer = s->release();
  AccessOptions access;
  access.apiKey = "fuzz-key";
  access.allowedHosts = defaultAllowedHosts(o.host);
  access.allowedOrigins = {"http://allowed.example"};
  theAccess = new Access(std::move(access));
  theServer->start();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    die("socket", std::strerror(errno));
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(theServer->port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
    // libFuzzer's timeout alarm (SIGALRM) can interrupt connect(); the
    // connection goes on being made: wait for it.
    if (errno != EINTR)
      die("connect", std::strerror(errno));
    pollfd p{fd, POLLOUT, 0};
    while (::poll(&p, 1, 10000) < 0 && errno == EINTR) {
    }
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0)
      die("connect", std::strerror(err ? err : errno));
  }

  // Send everything (the server may close first: a 413 or a 400 stops
  // the rest), then half-close: the server sees EOF after the input.
  for (size_t done = 0; done < size;) {
    ssize_t n = ::send(fd, data + done, size - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    done += size_t(n);
  }
  ::shutdown(fd, SHUT_WR);

  std::string answer;
  char buf[16384];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      die("the server kept the connection open 10 s after the client's EOF",
          std::to_string(answer.size()) + " bytes answered");
    if (n <= 0)
      break;
    answer.append(buf, size_t(n));
  }
  ::close(fd);
  if (!answer.empty() && answer.compare(0, 9, "HTTP/1.1 ") != 0)
    die("an answer that is not HTTP/1.1", answer.substr(0, 200));

  // The connection is released soon after it closed (no reference cycle
  // between a connection and its exchange keeps it alive).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (theServer->openConnections() != 0) {
    if (std::chrono::steady_clock::now() > deadline)
      die("a closed connection was never released",
          std::to_string(theServer->openConnections()) + " still open");
    std::this_thread::yield();
  }
  return 0;
}
