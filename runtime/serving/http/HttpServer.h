//===- HttpServer.h - HTTP/1.1 connections over Boost.Asio ------*- C++ -*-===//
//
// The transport of the OpenAI-compatible server (docs/serving.md): accepts
// connections, parses requests with Boost.Beast's parser under size limits
// and timeouts, hands each request to a Handler as an HttpExchange, and
// writes what the handler answers: one whole response, or a chunked stream
// (Server-Sent Events).
//
// Threading: `ioThreads` threads run one io_context; every connection has a
// strand, so its handlers never run concurrently. HttpExchange methods may
// be called from ANY thread (the scheduler's, typically): they post to the
// connection's strand and never block. Output that the client does not read
// is buffered up to `maxPendingWriteBytes`; beyond that, or when a write
// stalls for `writeTimeout`, the connection is closed (and the exchange's
// close callback runs, so the request is cancelled).
//
// Keep-alive and pipelining: requests on one connection are answered in
// order. While a response is being produced the connection keeps reading,
// so a client that resets the connection is noticed at once. An EOF is not
// a cancel: the client may have half-closed (shutdown(SHUT_WR)) and still
// read. The connection then answers and closes; a client that closed both
// ways is noticed when a write fails (its kernel refuses the data) or, for
// a whole response that has nothing to write yet, by an interim
// `100 Continue` probe (HTTP/1.1) that such a client refuses; either way
// the exchange's close callback runs on the strand.
//
// Framing (RFC 9112): a Transfer-Encoding other than exactly `chunked`, or
// one beside Content-Length, is answered 400 and the connection closed
// (the body's length is unknown: reading on could take it for a second
// request); so is an HTTP/1.1 request without Host. HEAD is answered with
// the headers GET would get and no body.
//
// Draining (SIGTERM): beginDrain() makes every response from then on close
// its connection; waitIdle() waits until no request is being answered and
// no output is pending; stop() then closes what is left.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_HTTP_HTTPSERVER_H
#define ACCEL_RUNTIME_SERVING_HTTP_HTTPSERVER_H

#include "core/Status.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace accel::rt::server {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method; // "GET", "POST", ...
  std::string target; // "/v1/completions?x=y"
  std::string path;   // target without the query
  Headers headers;    // as received
  std::string body;
  unsigned version = 11; // 11: HTTP/1.1, 10: HTTP/1.0
  std::chrono::steady_clock::time_point arrival;

  /// The first header named `name` (case-insensitive), or "".
  std::string header(std::string_view name) const;
};

/// One request being answered. Every method may be called from any thread;
/// calls after the exchange ended (or after the client went away) are
/// ignored.
class HttpExchange {
public:
  virtual ~HttpExchange() = default;

  /// A whole response; ends the exchange.
  virtual void respond(int status, std::string contentType, std::string body,
                       Headers extraHeaders = {}) = 0;
  /// Starts a chunked response (for SSE: text/event-stream).
  virtual void startStream(int status, std::string contentType, Headers extraHeaders = {}) = 0;
  /// One more chunk of a stream (empty data is skipped).
  virtual void write(std::string data) = 0;
  /// Ends a stream; ends the exchange.
  virtual void endStream() = 0;

  /// Runs `fn` on the exchange's strand (after any call made before it).
  /// The handler's per-request state is only touched from there.
  virtual void post(std::function<void()> fn) = 0;
  /// `fn` runs once, on the strand, if the client goes away (or the
  /// connection is closed for a stall) before the exchange ended; at once
  /// if that happened already (so a handler that registers it late, from
  /// another thread, misses nothing).
  virtual void onClose(std::function<void()> fn) = 0;
  /// False once the client went away or the exchange ended.
  virtual bool isOpen() const = 0;
};

/// Called on the connection's strand for every complete request.
using Handler = std::function<void(HttpRequest, std::shared_ptr<HttpExchange>)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8000; // 0: any free port (see HttpServer::port())
  int ioThreads = 2;
  /// Request line + headers; beyond it: 431.
  size_t maxHeaderBytes = 16 << 10;
  /// Body; beyond it: 413.
  size_t maxBodyBytes = 8 << 20;
  /// While no request is being answered, the next one must arrive
  /// completely within this (counted from the connection's opening or the
  /// previous response's end): the keep-alive idle timeout, which also
  /// bounds slow senders. Then the connection is closed.
  std::chrono::milliseconds requestTimeout{60000};
  /// A write that makes no progress for this long closes the connection.
  std::chrono::milliseconds writeTimeout{30000};
  /// Output buffered for a client that does not read; beyond it the
  /// connection is closed.
  size_t maxPendingWriteBytes = 16 << 20;
  /// Open connections; beyond it new ones get 503 and are closed.
  int64_t maxConnections = 8192;
};

class HttpServer {
public:
  /// Binds and listens (errors: kUnavailable naming host:port and why).
  static StatusOr<std::unique_ptr<HttpServer>> create(const HttpServerOptions &options,
                                                      Handler handler);
  ~HttpServer();

  /// The bound port (the chosen one when options.port was 0).
  uint16_t port() const;
  /// Starts the IO threads and returns.
  void start();
  /// Stops accepting, closes every connection, joins the IO threads.
  void stop();
  /// Blocks until SIGINT or SIGTERM (or stop() from another thread).
  void waitForSignal();
  /// Waits up to `timeout` for SIGINT or SIGTERM: true when one came (each
  /// signal is reported once; one that came between calls is not lost),
  /// false on timeout or stop(). One thread at a time.
  bool waitForSignal(std::chrono::milliseconds timeout);

  /// From now on every response closes its connection (Connection: close).
  /// New requests are still read and handed to the handler, which answers
  /// them (503 while draining).
  void beginDrain();
  /// Waits up to `timeout` until no connection is answering a request or
  /// has output pending; false on timeout.
  bool waitIdle(std::chrono::milliseconds timeout);
  /// Connections answering a request or writing (for tests and draining).
  int64_t busyConnections() const;

  int64_t openConnections() const;

  struct Impl;

private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// "OK", "Bad Request", ... for a status code.
const char *reasonPhrase(int status);

} // namespace accel::rt::server

#endif // ACCEL_RUNTIME_SERVING_HTTP_HTTPSERVER_H
