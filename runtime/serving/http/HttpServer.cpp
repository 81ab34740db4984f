//===- HttpServer.cpp - HTTP/1.1 connections over Boost.Asio --------------===//
//
// Beast parses requests (with its header and body limits); responses are
// written as plain bytes (status line, headers, body or chunks) from a
// per-connection queue, so that a stream of small SSE chunks costs one
// gathered write per wake-up, not one per token.
//
//===----------------------------------------------------------------------===//
#include "runtime/serving/http/HttpServer.h"

#include "core/Json.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

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
  std::string body = "{\"error\":{\"message\":" + json::write(json::Value(message)) +
                     ",\"type\":\"invalid_request_error\",\"param\":null,\"code\":null}}";
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
  bool cut_ = false;    // closed before it ended (client gone, stall)
  bool head_ = false;   // HEAD: headers only
  bool http11_ = true;  // HTTP/1.1 (interim responses allowed)
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
  std::atomic<int64_t> busy{0}; // connections answering or writing
  std::atomic<bool> stopping{false};
  std::atomic<bool> draining{false};
  net::io_context ioc;
  tcp::acceptor acceptor{ioc};
  net::steady_timer acceptRetry{ioc};
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  // SIGINT/SIGTERM: one signal_set for the server's life, so that a signal
  // between two waitForSignal calls is queued, not fatal.
  struct Signals {
    net::io_context ioc;
    net::signal_set set{ioc, SIGINT, SIGTERM};
    int pending = 0;
    bool armed = false;
  };
  std::mutex sigMu;
  std::unique_ptr<Signals> signals;
  bool sigStopRequested = false;

  void accept();
};

namespace {

/// Why a request's framing is refused (RFC 9112 6.1, 6.3, 3.2), or "".
std::string framingError(const http::request_parser<http::string_body> &parser) {
  const auto &msg = parser.get();
  int te = 0;
  bool cl = false;
  std::string coding;
  for (const auto &f : msg) {
    if (f.name() == http::field::transfer_encoding) {
      ++te;
      coding = std::string(f.value());
    } else if (f.name() == http::field::content_length) {
      cl = true;
    }
  }
  if (te > 0) {
    size_t b = coding.find_first_not_of(" \t"), e = coding.find_last_not_of(" \t");
    std::string c = b == std::string::npos ? "" : coding.substr(b, e - b + 1);
    if (te > 1 || !beast::iequals(c, "chunked"))
      return "Transfer-Encoding '" + coding + "'" + (te > 1 ? " (given twice)" : "") +
             " is refused: this server reads only 'chunked' alone, and no other framing tells "
             "where the body ends";
    if (cl)
      return "Transfer-Encoding and Content-Length are both given: the body's length is "
             "ambiguous";
    if (msg.version() < 11)
      return "Transfer-Encoding in an HTTP/1.0 request is refused (RFC 9112 6.1)";
  }
  if (msg.version() >= 11 && msg.find(http::field::host) == msg.end())
    return "an HTTP/1.1 request needs a Host header";
  return "";
}

class Connection : public std::enable_shared_from_this<Connection> {
public:
  Connection(tcp::socket socket, HttpServer::Impl &srv)
      : socket_(std::move(socket)), idleTimer_(socket_.get_executor()),
        writeTimer_(socket_.get_executor()), peerTimer_(socket_.get_executor()), srv_(srv) {}
  ~Connection() {
    if (busy_)
      srv_.busy.fetch_sub(1, std::memory_order_relaxed);
    srv_.connections.fetch_sub(1, std::memory_order_relaxed);
  }

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
    if (closed_ || reading_ || peerEof_)
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
    if (std::string why = framingError(*parser_); !why.empty()) {
      // Read no further: whatever follows has no known boundary.
      reading_ = false;
      return refuse(transportError(400, why));
    }
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

  /// Answers `response` (an error) and closes: after the exchange in
  /// flight, if any.
  void refuse(std::string response) {
    if (exchange_) {
      pendingError_ = std::move(response);
      return;
    }
    keepAlive_ = false;
    enqueue(std::move(response));
    closeAfterFlush_ = true;
    syncBusy();
  }

  void onRead(beast::error_code ec) {
    reading_ = false;
    if (closed_)
      return;
    if (ec) {
      const bool eof = ec == http::error::end_of_stream || ec == net::error::eof;
      if (exchange_ && eof) {
        // The client sent all it will send: maybe a half-close, after which
        // it still reads. Answer, then close; a client that closed both ways
        // is noticed when a write fails (probePeer).
        peerEof_ = true;
        keepAlive_ = false;
        probePeer();
        return;
      }
      if (eof || ec == net::error::operation_aborted || ec == net::error::connection_reset ||
          ec == net::error::broken_pipe) {
        closeNow(); // between requests, or the client reset the connection
        return;
      }
      refuse(errorFor(ec));
      return;
    }
    http::request<http::string_body> msg = parser_->release();
    HttpRequest req;
    req.arrival = std::chrono::steady_clock::now();
    req.method = std::string(msg.method_string());
    req.target = std::string(msg.target());
    req.version = msg.version();
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
    if (ec == http::error::bad_transfer_encoding)
      return transportError(400, "the request's Transfer-Encoding is refused (given twice, or "
                                 "beside Content-Length): its body's length is ambiguous");
    if (ec == http::error::bad_content_length)
      return transportError(400, "the request's Content-Length is invalid, repeated with another "
                                 "value, or beside Transfer-Encoding");
    return transportError(400, "malformed HTTP request: " + ec.message());
  }

  void dispatch(HttpRequest req, bool keepAlive) {
    keepAlive_ = keepAlive && !srv_.stopping.load() && !srv_.draining.load() && !peerEof_;
    idleTimer_.cancel();
    exchange_ = std::make_shared<Exchange>(shared_from_this());
    exchange_->head_ = req.method == "HEAD";
    exchange_->http11_ = req.version >= 11;
    syncBusy();
    // Keep reading: a reset now means the client went away.
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

  /// Whether this response closes the connection (draining closes all).
  bool closing() {
    if (srv_.draining.load())
      keepAlive_ = false;
    return !keepAlive_;
  }

  void respond(Exchange *ex, int status, const std::string &ct, std::string body,
               const Headers &extra) {
    if (!current(ex) || ex->streaming_)
      return;
    std::string out = head(status, ct, extra, closing());
    if (status == 204 || status == 304) {
      out += "\r\n"; // no body, and no Content-Length (RFC 9110 8.6)
    } else {
      out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
      if (!ex->head_)
        out += body;
    }
    enqueue(std::move(out));
    endExchange();
  }

  void startStream(Exchange *ex, int status, const std::string &ct, const Headers &extra) {
    if (!current(ex) || ex->streaming_)
      return;
    ex->streaming_ = true;
    std::string out = head(status, ct, extra, closing());
    out += "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";
    enqueue(std::move(out));
  }

  void writeChunk(Exchange *ex, std::string data) {
    if (!current(ex) || !ex->streaming_ || data.empty() || ex->head_)
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
    if (!ex->head_)
      enqueue("0\r\n\r\n");
    endExchange();
  }

  void endExchange() {
    exchange_->ended_ = true;
    exchange_->open_.store(false, std::memory_order_release);
    exchange_->onClose_ = nullptr;
    exchange_.reset();
    peerTimer_.cancel();
    if (closed_)
      return;
    if (!keepAlive_ || srv_.draining.load()) {
      keepAlive_ = false;
      closeAfterFlush_ = true;
      if (!writing_)
        closeNow();
      syncBusy();
      return;
    }
    if (pendingError_) {
      keepAlive_ = false;
      enqueue(std::move(*pendingError_));
      pendingError_.reset();
      closeAfterFlush_ = true;
      syncBusy();
      return;
    }
    if (held_) {
      auto [req, ka] = std::move(*held_);
      held_.reset();
      dispatch(std::move(req), ka);
      return;
    }
    syncBusy();
    armIdle();
    doRead();
  }

  // --- a client that sent EOF ----------------------------------------------
  /// A whole response writes nothing until it is done: send an interim
  /// 100 Continue (RFC 9110 15.2: HTTP/1.1 clients parse unexpected 1xx) so
  /// that a client that closed both ways answers with a reset. A stream is
  /// probed by its own chunks. Then check the socket until the exchange ends.
  void probePeer() {
    if (closed_ || !exchange_)
      return;
    if (!exchange_->streaming_ && exchange_->http11_)
      enqueue("HTTP/1.1 100 Continue\r\n\r\n");
    armPeerCheck();
  }

  void armPeerCheck() {
    peerTimer_.expires_after(std::chrono::milliseconds(100));
    peerTimer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->closed_ || !self->exchange_)
        return;
      if (self->peerGone()) {
        self->closeNow();
        return;
      }
      self->armPeerCheck();
    });
  }

  /// The peer reset the connection after its FIN (TCP state CLOSE).
  bool peerGone() {
    struct tcp_info ti {};
    socklen_t len = sizeof ti;
    if (::getsockopt(socket_.native_handle(), IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
      return false;
    return ti.tcpi_state == TCP_CLOSE;
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
    syncBusy();
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
      closeNow(); // the client is gone: cancel what it asked for
      return;
    }
    if (!pending_.empty()) {
      doWrite();
      return;
    }
    if (closeAfterFlush_) {
      beast::error_code ignored;
      socket_.shutdown(tcp::socket::shutdown_send, ignored);
      if (reading_)
        closeNow(); // a read is pending: nothing was refused mid-request
      else
        linger();
      return;
    }
    syncBusy();
  }

  /// After refusing a request (413, 400, 503) the client may still be
  /// sending it; closing now would make its kernel drop our answer and see
  /// a reset. Read and discard for a little while (or until its EOF), then
  /// close: a lingering close, as nginx does.
  void linger() {
    peerTimer_.expires_after(std::chrono::seconds(2));
    peerTimer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec)
        self->closeNow();
    });
    lingerRead();
  }

  void lingerRead() {
    if (closed_)
      return;
    if (!scratch_)
      scratch_ = std::make_unique<char[]>(kScratch);
    socket_.async_read_some(net::buffer(scratch_.get(), kScratch),
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              if (ec)
                                self->closeNow();
                              else
                                self->lingerRead();
                            });
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
      ex->cut_ = true;
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
    peerTimer_.cancel();
    syncBusy();
  }

  /// Counts this connection in HttpServer::busyConnections while it answers
  /// a request or has output to write.
  void syncBusy() {
    bool b = !closed_ && (exchange_ || writing_ || !pending_.empty());
    if (b != busy_) {
      busy_ = b;
      srv_.busy.fetch_add(b ? 1 : -1, std::memory_order_relaxed);
    }
  }

  net::any_io_executor executor() { return socket_.get_executor(); }

  std::shared_ptr<Exchange> exchange_;

private:
  tcp::socket socket_;
  net::steady_timer idleTimer_, writeTimer_, peerTimer_;
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
  bool peerEof_ = false; // the client sent EOF (half-closed, or gone)
  bool busy_ = false;
  static constexpr size_t kScratch = 16 << 10;
  std::unique_ptr<char[]> scratch_; // what linger() discards
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
    else if (self->cut_ && f)
      f(); // it went away before the handler got here
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
  {
    // SIGINT/SIGTERM are the server's from now on (queued until
    // waitForSignal), so that one right after it is up drains it rather
    // than killing the process.
    std::lock_guard<std::mutex> lock(impl_->sigMu);
    if (!impl_->signals)
      impl_->signals = std::make_unique<Impl::Signals>();
  }
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
    if (impl_->signals)
      impl_->signals->ioc.stop();
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

namespace {
/// Runs the signal context until a signal (or stop()), or `timeout` if given.
bool waitSignal(HttpServer::Impl &impl, std::optional<std::chrono::milliseconds> timeout) {
  HttpServer::Impl::Signals *s;
  {
    std::lock_guard<std::mutex> lock(impl.sigMu);
    if (impl.sigStopRequested)
      return false;
    if (!impl.signals)
      impl.signals = std::make_unique<HttpServer::Impl::Signals>();
    s = impl.signals.get();
    if (s->pending == 0) {
      if (!s->armed) {
        s->armed = true;
        s->set.async_wait([s](beast::error_code ec, int) {
          s->armed = false;
          if (!ec)
            ++s->pending;
        });
      }
      // Under the lock: a stop() from now on stops this run.
      s->ioc.restart();
    }
  }
  if (s->pending == 0) {
    if (timeout)
      s->ioc.run_for(*timeout);
    else
      s->ioc.run();
  }
  std::lock_guard<std::mutex> lock(impl.sigMu);
  if (s->pending == 0)
    return false;
  --s->pending;
  return true;
}
} // namespace

void HttpServer::waitForSignal() { waitSignal(*impl_, std::nullopt); }

bool HttpServer::waitForSignal(std::chrono::milliseconds timeout) {
  return waitSignal(*impl_, timeout);
}

void HttpServer::beginDrain() { impl_->draining.store(true); }

int64_t HttpServer::busyConnections() const { return impl_->busy.load(); }

bool HttpServer::waitIdle(std::chrono::milliseconds timeout) {
  auto end = std::chrono::steady_clock::now() + timeout;
  while (impl_->busy.load() > 0) {
    if (std::chrono::steady_clock::now() >= end)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

} // namespace accel::rt::server
