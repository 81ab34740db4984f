//===- Access.cpp - who may call the server -------------------------------===//
#include "runtime/serving/http/Access.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace accel::rt::server {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char &c : out)
    c = char(std::tolower((unsigned char)c));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

/// The name of a Host value (or of an origin's authority, or a listening
/// address): lower case, without port and IPv6 brackets, without a trailing
/// dot.
std::string hostName(std::string_view authority) {
  std::string_view a = trim(authority);
  std::string_view name;
  if (!a.empty() && a.front() == '[') {
    size_t close = a.find(']');
    name = close == std::string_view::npos ? a.substr(1) : a.substr(1, close - 1);
  } else if (a.find(':') != a.rfind(':')) {
    name = a; // a bare IPv6 address ("::1", as --host takes it)
  } else {
    size_t colon = a.find(':');
    name = colon == std::string_view::npos ? a : a.substr(0, colon);
  }
  std::string n = lower(name);
  if (!n.empty() && n.back() == '.')
    n.pop_back();
  return n;
}

bool isLoopback(const std::string &host) {
  std::string h = hostName(host);
  if (h == "localhost")
    return true;
  unsigned char buf[16];
  if (inet_pton(AF_INET, h.c_str(), buf) == 1)
    return buf[0] == 127;
  if (inet_pton(AF_INET6, h.c_str(), buf) == 1) {
    static const unsigned char one[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    return std::memcmp(buf, one, 16) == 0;
  }
  return false;
}

bool contains(const std::vector<std::string> &list, const std::string &lowered) {
  for (const std::string &x : list)
    if (x == "*" || lower(x) == lowered)
      return true;
  return false;
}

ApiError forbidden(std::string message) {
  ApiError e;
  e.status = 403;
  e.type = "permission_error";
  e.message = std::move(message);
  return e;
}

} // namespace

std::vector<std::string> splitList(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view item =
        trim(text.substr(start, comma == std::string_view::npos ? std::string_view::npos
                                                                : comma - start));
    if (!item.empty())
      out.emplace_back(item);
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }
  return out;
}

std::vector<std::string> defaultAllowedHosts(const std::string &listenHost) {
  if (!isLoopback(listenHost))
    return {};
  std::vector<std::string> hosts{"localhost", "127.0.0.1", "::1"};
  std::string own = hostName(listenHost);
  if (std::find(hosts.begin(), hosts.end(), own) == hosts.end())
    hosts.push_back(own);
  return hosts;
}

bool constantTimeEquals(std::string_view a, std::string_view b) {
  // Every byte of the longer string is visited whatever the contents.
  size_t n = std::max(a.size(), b.size());
  unsigned diff = unsigned(a.size() != b.size());
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? (unsigned char)a[i] : 0;
    unsigned char y = i < b.size() ? (unsigned char)b[i] : 0;
    diff |= unsigned(x ^ y);
  }
  return diff == 0;
}

Access::Access(AccessOptions options) : opts_(std::move(options)) {}

bool Access::originListed(std::string_view origin) const {
  return contains(opts_.allowedOrigins, lower(trim(origin)));
}

std::optional<ApiError> Access::check(const HttpRequest &r) const {
  const std::string host = r.header("Host");
  // 1. Host. A request without one (HTTP/1.0; HTTP/1.1 needs it, the
  // transport answers 400) comes from no browser.
  if (!opts_.allowedHosts.empty() && !host.empty() &&
      !contains(opts_.allowedHosts, hostName(host)))
    return forbidden("the Host header '" + host +
                     "' is not a name of this server; allowed: " + [&] {
                       std::string list;
                       for (const std::string &h : opts_.allowedHosts)
                         list += (list.empty() ? "" : ", ") + h;
                       return list;
                     }() + " (--allowed-hosts)");
  // 2. Origin.
  const std::string origin = r.header("Origin");
  if (!origin.empty()) {
    // "scheme://authority": same-origin when the authority is the Host.
    size_t sep = origin.find("://");
    std::string authority = sep == std::string::npos ? "" : lower(trim(origin.substr(sep + 3)));
    bool same = !authority.empty() && authority == lower(trim(host));
    if (!same && !originListed(origin))
      return forbidden("cross-site requests from the Origin '" + origin +
                       "' are refused (--allowed-origins)");
  }
  // 3. The API key, on the API's routes.
  const bool keyed = r.path.rfind("/v1/", 0) == 0 || r.path == "/tokenize" ||
                     r.path == "/detokenize";
  if (!opts_.apiKey.empty() && keyed && !isPreflight(r)) {
    std::string auth = r.header("Authorization");
    std::string_view a = trim(auth);
    bool ok = a.size() > 7 && lower(a.substr(0, 7)) == "bearer " &&
              constantTimeEquals(trim(a.substr(7)), opts_.apiKey);
    if (!ok) {
      ApiError e;
      e.status = 401;
      e.code = "invalid_api_key";
      e.message = auth.empty() ? "this server needs an API key: send 'Authorization: Bearer "
                                 "<key>' (the key given by --api-key or $ACCEL_API_KEY)"
                               : "the API key in the Authorization header is not this "
                                 "server's (--api-key or $ACCEL_API_KEY)";
      return e;
    }
  }
  return std::nullopt;
}

Headers Access::responseHeaders(const HttpRequest &r) const {
  const std::string origin = r.header("Origin");
  if (origin.empty() || !originListed(origin))
    return {};
  return {{"Access-Control-Allow-Origin", origin}, {"Vary", "Origin"}};
}

bool Access::isPreflight(const HttpRequest &r) const {
  return r.method == "OPTIONS" && !r.header("Origin").empty() && originListed(r.header("Origin"));
}

std::optional<ApiError> jsonBodyError(const HttpRequest &r) {
  std::string ct = r.header("Content-Type");
  std::string_view media = ct;
  if (size_t semi = media.find(';'); semi != std::string_view::npos)
    media = media.substr(0, semi);
  if (lower(trim(media)) == "application/json")
    return std::nullopt;
  ApiError e;
  e.status = 415;
  e.message = ct.empty() ? "the request has no Content-Type; send the body as "
                           "'Content-Type: application/json'"
                         : "the Content-Type '" + ct +
                               "' is not accepted; send the body as 'Content-Type: "
                               "application/json'";
  return e;
}

} // namespace accel::rt::server
