//===- HttpServer.cpp - HTTP/1.1 connections over Boost.Asio --------------===//
//
// Beast parses requests (with its header and body limits); responses are
// written as plain bytes (status line, headers, body or chunks) from a
// per-connection queue, so that a stream of small SSE chunks costs one
// gathered write per wake-up, not one per token.
//
//===----------------------------------------------------------------------===//
#include "runtime/serving/http/HttpServer.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

namespace accel::rt::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

std::string HttpRequest::header(std::string_view name) const {
  for (const auto &[k, v] : headers) {
    if (k.size() != name.size())
      continue;
    bool same = true;
    for (size_t i = 0; i < k.size() && same; ++i)
      same = std::tolower((unsigned char)k[i]) == std::tolower((unsigned char)name[i]);
    if (same)
      return v;
  }
  return "";
}

const char *reasonPhrase(int status) {
  switch (status) {
  case 100: return "Continue";
  case 200: return "OK";
  case 400: return "Bad Request";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 408: return "Request Timeout";
  case 413: return "Payload Too Large";
  case 415: return "Unsupported Media Type";
  case 429: return "Too Many Requests";
  case 431: return "Request Header Fields Too Large";
  case 500: return "Internal Server Error";
  case 501: return "Not Implemented";
  case 503: return "Service Unavailable";
  default: {
    beast::string_view r = http::obsolete_reason(http::int_to_status(unsigned(status)));
    return r.empty() ? "Unknown" : r.data();
  }
  }
}

namespace {

std::string head(int status, const std::string &contentType, const Headers &extra, bool close) {
  std::string h = "HTTP/1.1 " + std::to_string(status) + " " + reasonPhrase(status) + "\r\n";
  h += "Server: accel\r\n";
  if (!contentType.empty())
    h += "Content-Type: " + contentType + "\r\n";
  for (const auto &[k, v] : extra)
    h += k + ": " + v + "\r\n";
  if (close)
    h += "Connection: close\r\n";
  return h;
}

/// A tiny error body for the transport's own answers (413, 431, 400, 503).
std::string transportError(int status, const std::string &message) {
  std::string body = "{\"error\":{\"message\":\"" + message +
                     "\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":null}}";
  return head(status, "application/json", {}, true) +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

class Connection;

class Exchange final : public HttpExchange, public std::enable_shared_from_this<Exchange> {
public:
  explicit Exchange(std::shared_ptr<Connection> conn) : conn_(std::move(conn)) {}
  void respond(int status, std::string contentType, std::string body,
               Headers extraHeaders) override;
  void startStream(int status, std::string contentType, Headers extraHeaders) override;
  void write(std::string data) override;
  void endStream() override;
  void post(std::function<void()> fn) override;
  void onClose(std::function<void()> fn) override;
  bool isOpen() const override { return open_.load(std::memory_order_acquire); }

  // Strand-only state.
  std::shared_ptr<Connection> conn_;
  bool ended_ = false;
  bool streaming_ = false;
  std::function<void()> onClose_;
  std::atomic<bool> open_{true};
};

} // namespace

struct HttpServer::Impl {
  // Declared before the io_context: connections destroyed with its pending
  // handlers still count themselves out here.
  HttpServerOptions opts;
  Handler handler;
  std::atomic<int64_t> connections{0};
  std::atomic<bool> stopping{false};
  net::io_context ioc;
  tcp::acceptor acceptor{ioc};
  net::steady_timer acceptRetry{ioc};
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  std::mutex sigMu;
  net::io_context *sigIoc = nullptr;
  bool sigStopRequested = false;

  void accept();
};

namespace {

class Connection : public std::enable_shared_from_this<Connection> {
public:
  Connection(tcp::socket socket, HttpServer::Impl &srv)
      : socket_(std::move(socket)), idleTimer_(socket_.get_executor()),
        writeTimer_(socket_.get_executor()), srv_(srv) {}
  ~Connection() { srv_.connections.fetch_sub(1, std::memory_order_relaxed); }

  void start(bool overLimit) {
    beast::error_code ec;
    socket_.set_option(tcp::no_delay(true), ec);
    if (overLimit) {
      keepAlive_ = false;
      enqueue(transportError(503, "too many open connections"));
      closeAfterFlush_ = true;
      return;
    }
    armIdle();
    doRead();
  }

  // --- reading ------------------------------------------------------------
  void doRead() {
    if (closed_ || reading_)
      return;
    parser_.emplace();
    parser_->header_limit(uint32_t(srv_.opts.maxHeaderBytes));
    parser_->body_limit(srv_.opts.maxBodyBytes);
    reading_ = true;
    http::async_read_header(socket_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              self->onHeader(ec);
                            });
  }

  void onHeader(beast::error_code ec) {
    if (closed_)
      return;
    if (ec)
      return onRead(ec);
    // curl sends "Expect: 100-continue" for bodies over 1 KiB and waits for
    // it (1 s) before sending the body.
    auto &msg = parser_->get();
    if (!exchange_ && beast::iequals(msg[http::field::expect], "100-continue") &&
        !parser_->is_done())
      enqueue("HTTP/1.1 100 Continue\r\n\r\n");
    http::async_read(socket_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       self->onRead(ec);
                     });
  }

  void onRead(beast::error_code ec) {
    reading_ = false;
    if (closed_)
      return;
    if (ec) {
      if (exchange_) {
        // The client went away while its request was being answered (or
        // sent garbage after it): cancel, close.
        if (ec == http::error::end_of_stream || ec == net::error::eof ||
            ec == net::error::connection_reset || ec == net::error::broken_pipe ||
            ec == net::error::operation_aborted) {
          closeNow();
        } else {
          pendingError_ = errorFor(ec);
        }
        return;
      }
      if (ec == http::error::end_of_stream || ec == net::error::eof ||
          ec == net::error::operation_aborted || ec == net::error::connection_reset) {
        closeNow();
        return;
      }
      keepAlive_ = false;
      enqueue(errorFor(ec));
      closeAfterFlush_ = true;
      return;
    }
    http::request<http::string_body> msg = parser_->release();
    HttpRequest req;
    req.arrival = std::chrono::steady_clock::now();
    req.method = std::string(msg.method_string());
    req.target = std::string(msg.target());
    size_t q = req.target.find('?');
    req.path = req.target.substr(0, q);
    for (const auto &f : msg)
      req.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    req.body = std::move(msg.body());
    bool keepAlive = msg.keep_alive();
    if (exchange_) {
      held_.emplace(std::move(req), keepAlive); // pipelined: answered after this one
      return;
    }
    dispatch(std::move(req), keepAlive);
  }

  static std::string errorFor(beast::error_code ec) {
    if (ec == http::error::body_limit)
      return transportError(413, "the request body is too large");
    if (ec == http::error::header_limit)
      return transportError(431, "the request headers are too large");
    return transportError(400, "malformed HTTP request: " + ec.message());
  }

  void dispatch(HttpRequest req, bool keepAlive) {
    keepAlive_ = keepAlive && !srv_.stopping.load();
    idleTimer_.cancel();
    exchange_ = std::make_shared<Exchange>(shared_from_this());
    // Keep reading: an EOF or reset now means the client went away.
    doRead();
    std::shared_ptr<Exchange> ex = exchange_;
    try {
      srv_.handler(std::move(req), ex);
    } catch (const std::exception &e) {
      std::string body = std::string("{\"error\":{\"message\":") + "\"internal error\"" +
                         ",\"type\":\"server_error\",\"param\":null,\"code\":null}}";
      ex->respond(500, "application/json", body, {});
    }
  }

  // --- answering (called on the strand) ------------------------------------
  bool current(const Exchange *ex) const {
    return !closed_ && exchange_.get() == ex && !ex->ended_;
  }

  void respond(Exchange *ex, int status, const std::string &ct, std::string body,
               const Headers &extra) {
    if (!current(ex) || ex->streaming_)
      return;
    bool close = !keepAlive_;
    std::string out = head(status, ct, extra, close);
    out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    out += body;
    enqueue(std::move(out));
    endExchange();
  }

  void startStream(Exchange *ex, int status, const std::string &ct, const Headers &extra) {
    if (!current(ex) || ex->streaming_)
      return;
    ex->streaming_ = true;
    bool close = !keepAlive_;
    std::string out = head(status, ct, extra, close);
    out += "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";
    enqueue(std::move(out));
  }

  void writeChunk(Exchange *ex, std::string data) {
    if (!current(ex) || !ex->streaming_ || data.empty())
      return;
    char size[24];
    std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    std::string out;
    out.reserve(data.size() + 32);
    out += size;
    out += data;
    out += "\r\n";
    enqueue(std::move(out));
  }

  void endStream(Exchange *ex) {
    if (!current(ex) || !ex->streaming_)
      return;
    enqueue("0\r\n\r\n");
    endExchange();
  }

  void endExchange() {
    exchange_->ended_ = true;
    exchange_->open_.store(false, std::memory_order_release);
    exchange_->onClose_ = nullptr;
    exchange_.reset();
    if (closed_)
      return;
    if (!keepAlive_) {
      closeAfterFlush_ = true;
      if (!writing_)
        closeNow();
      return;
    }
    if (pendingError_) {
      keepAlive_ = false;
      enqueue(std::move(*pendingError_));
      pendingError_.reset();
      closeAfterFlush_ = true;
      return;
    }
    if (held_) {
      auto [req, ka] = std::move(*held_);
      held_.reset();
      dispatch(std::move(req), ka);
      return;
    }
    armIdle();
    doRead();
  }

  // --- writing ------------------------------------------------------------
  void enqueue(std::string s) {
    if (closed_)
      return;
    pendingBytes_ += s.size();
    pending_.push_back(std::move(s));
    if (pendingBytes_ > srv_.opts.maxPendingWriteBytes) {
      closeNow(); // the client does not read
      return;
    }
    if (!writing_)
      doWrite();
  }

  void doWrite() {
    writing_ = true;
    inflight_.clear();
    std::vector<net::const_buffer> bufs;
    while (!pending_.empty() && inflight_.size() < 256) {
      inflight_.push_back(std::move(pending_.front()));
      pending_.pop_front();
    }
    bufs.reserve(inflight_.size());
    for (const std::string &s : inflight_)
      bufs.emplace_back(s.data(), s.size());
    writeTimer_.expires_after(srv_.opts.writeTimeout);
    writeTimer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec)
        self->closeNow(); // the write stalled
    });
    net::async_write(socket_, bufs, [self = shared_from_this()](beast::error_code ec, size_t n) {
      self->onWrite(ec, n);
    });
  }

  void onWrite(beast::error_code ec, size_t n) {
    writing_ = false;
    writeTimer_.cancel();
    pendingBytes_ -= std::min(pendingBytes_, n);
    inflight_.clear();
    if (closed_)
      return;
    if (ec) {
      closeNow();
      return;
    }
    if (!pending_.empty()) {
      doWrite();
      return;
    }
    if (closeAfterFlush_) {
      beast::error_code ignored;
      socket_.shutdown(tcp::socket::shutdown_send, ignored);
      closeNow();
    }
  }

  // --- closing ------------------------------------------------------------
  void armIdle() {
    idleTimer_.expires_after(srv_.opts.requestTimeout);
    idleTimer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec && !self->exchange_)
        self->closeNow();
    });
  }

  void closeNow() {
    if (closed_)
      return;
    closed_ = true;
    if (exchange_) {
      std::shared_ptr<Exchange> ex = std::move(exchange_);
      ex->open_.store(false, std::memory_order_release);
      ex->ended_ = true;
      std::function<void()> cb = std::move(ex->onClose_);
      ex->onClose_ = nullptr;
      if (cb)
        cb();
    }
    held_.reset();
    pending_.clear();
    beast::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
    idleTimer_.cancel();
    writeTimer_.cancel();
  }

  net::any_io_executor executor() { return socket_.get_executor(); }

  std::shared_ptr<Exchange> exchange_;

private:
  tcp::socket socket_;
  net::steady_timer idleTimer_, writeTimer_;
  HttpServer::Impl &srv_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<std::pair<HttpRequest, bool>> held_;
  std::optional<std::string> pendingError_;
  std::deque<std::string> pending_;
  std::vector<std::string> inflight_;
  size_t pendingBytes_ = 0;
  bool reading_ = false, writing_ = false, closed_ = false;
  bool keepAlive_ = true, closeAfterFlush_ = false;
};

void Exchange::respond(int status, std::string contentType, std::string body,
                       Headers extraHeaders) {
  net::dispatch(conn_->executor(), [self = shared_from_this(), status, ct = std::move(contentType),
                                    b = std::move(body), h = std::move(extraHeaders)]() mutable {
    self->conn_->respond(self.get(), status, ct, std::move(b), h);
  });
}

void Exchange::startStream(int status, std::string contentType, Headers extraHeaders) {
  net::dispatch(conn_->executor(),
                [self = shared_from_this(), status, ct = std::move(contentType),
                 h = std::move(extraHeaders)]() { self->conn_->startStream(self.get(), status, ct, h); });
}

void Exchange::write(std::string data) {
  net::dispatch(conn_->executor(), [self = shared_from_this(), d = std::move(data)]() mutable {
    self->conn_->writeChunk(self.get(), std::move(d));
  });
}

void Exchange::endStream() {
  net::dispatch(conn_->executor(),
                [self = shared_from_this()]() { self->conn_->endStream(self.get()); });
}

void Exchange::post(std::function<void()> fn) {
  net::post(conn_->executor(), std::move(fn));
}

void Exchange::onClose(std::function<void()> fn) {
  net::dispatch(conn_->executor(), [self = shared_from_this(), f = std::move(fn)]() mutable {
    if (self->conn_->current(self.get()))
      self->onClose_ = std::move(f);
  });
}

} // namespace

void HttpServer::Impl::accept() {
  acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (stopping.load())
      return;
    if (ec) {
      if (ec == net::error::operation_aborted)
        return;
      // Out of file descriptors (EMFILE) and the like: wait a little
      // rather than spin.
      acceptRetry.expires_after(std::chrono::milliseconds(50));
      acceptRetry.async_wait([this](beast::error_code e) {
        if (!e)
          accept();
      });
      return;
    }
    int64_t n = connections.fetch_add(1, std::memory_order_relaxed) + 1;
    auto conn = std::make_shared<Connection>(std::move(socket), *this);
    net::dispatch(conn->executor(), [conn, over = n > opts.maxConnections]() { conn->start(over); });
    accept();
  });
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { stop(); }

StatusOr<std::unique_ptr<HttpServer>> HttpServer::create(const HttpServerOptions &options,
                                                         Handler handler) {
  auto impl = std::make_unique<Impl>();
  impl->opts = options;
  impl->handler = std::move(handler);
  std::string where = options.host + ":" + std::to_string(options.port);
  beast::error_code ec;
  net::ip::address addr = net::ip::make_address(options.host, ec);
  if (ec) {
    // A host name: resolve it.
    tcp::resolver resolver(impl->ioc);
    auto results = resolver.resolve(options.host, std::to_string(options.port), ec);
    if (ec || results.empty())
      return Status(StatusCode::kInvalidArgument,
                    "--host '" + options.host + "' is not an address or a known host name");
    addr = results.begin()->endpoint().address();
  }
  tcp::endpoint ep(addr, options.port);
  auto fail = [&](const char *what) {
    return Status(StatusCode::kUnavailable,
                  "cannot listen on " + where + ": " + what + ": " + ec.message());
  };
  impl->acceptor.open(ep.protocol(), ec);
  if (ec)
    return fail("open");
  impl->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  impl->acceptor.bind(ep, ec);
  if (ec)
    return fail("bind");
  impl->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return fail("listen");
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

uint16_t HttpServer::port() const {
  beast::error_code ec;
  return impl_->acceptor.local_endpoint(ec).port();
}

int64_t HttpServer::openConnections() const { return impl_->connections.load(); }

void HttpServer::start() {
  impl_->work.emplace(impl_->ioc.get_executor());
  net::post(impl_->acceptor.get_executor(), [i = impl_.get()]() { i->accept(); });
  int n = std::max(1, impl_->opts.ioThreads);
  for (int t = 0; t < n; ++t)
    impl_->threads.emplace_back([i = impl_.get()]() { i->ioc.run(); });
}

void HttpServer::stop() {
  if (impl_->stopping.exchange(true))
    return;
  {
    std::lock_guard<std::mutex> lock(impl_->sigMu);
    impl_->sigStopRequested = true;
    if (impl_->sigIoc)
      impl_->sigIoc->stop();
  }
  net::post(impl_->ioc, [i = impl_.get()]() {
    beast::error_code ec;
    i->acceptor.close(ec);
    i->acceptRetry.cancel();
  });
  impl_->work.reset();
  impl_->ioc.stop();
  for (std::thread &t : impl_->threads)
    t.join();
  impl_->threads.clear();
}

void HttpServer::waitForSignal() {
  net::io_context sig;
  net::signal_set signals(sig, SIGINT, SIGTERM);
  signals.async_wait([&](beast::error_code, int) { sig.stop(); });
  {
    std::lock_guard<std::mutex> lock(impl_->sigMu);
    if (impl_->sigStopRequested)
      return;
    impl_->sigIoc = &sig;
  }
  sig.run();
  std::lock_guard<std::mutex> lock(impl_->sigMu);
  impl_->sigIoc = nullptr;
}

} // namespace accel::rt::server
