//===- Access.h - who may call the server -----------------------*- C++ -*-===//
//
// The checks every request passes before its route (docs/serving.md,
// "Access"), in this order:
//   1. Host (DNS rebinding): when `allowedHosts` is not empty, the Host
//      header's name must be one of them (any port). A server listening on a
//      loopback address allows localhost, 127.0.0.1 and ::1 by default, so a
//      web page whose name an attacker points at 127.0.0.1 is refused.
//   2. Origin (cross-site browser requests): a request carrying Origin is
//      refused unless that origin is this server itself (its authority
//      equals the Host header) or is listed in `allowedOrigins` ("*": any);
//      listed origins get CORS headers and preflight answers.
//   3. API key: with `apiKey` set, every /v1/ route, /tokenize and
//      /detokenize need `Authorization: Bearer <key>` (compared in constant
//      time); /health, /metrics and /version stay open.
// Refusals: 403 (Host, Origin), 401 (key, with WWW-Authenticate), each one
// sentence naming the header and the flag that governs it. POST bodies must
// be `Content-Type: application/json` (jsonBodyError: 415).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_HTTP_ACCESS_H
#define ACCEL_RUNTIME_SERVING_HTTP_ACCESS_H

#include "runtime/serving/http/HttpServer.h"
#include "runtime/serving/http/OpenAiProtocol.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel::rt::server {

struct AccessOptions {
  std::string apiKey;                       // --api-key / $ACCEL_API_KEY; "": none
  std::vector<std::string> allowedHosts;    // --allowed-hosts; empty: any Host; "*": any
  std::vector<std::string> allowedOrigins;  // --allowed-origins; "*": any
};

/// What --allowed-hosts is when not given: for a loopback listening address
/// (127.0.0.0/8, ::1, "localhost") localhost, 127.0.0.1, ::1 and the address
/// itself; otherwise empty (any Host).
std::vector<std::string> defaultAllowedHosts(const std::string &listenHost);

/// Splits "a,b, c" into its non-empty, trimmed items.
std::vector<std::string> splitList(std::string_view text);

/// Equal strings, in time that depends only on their lengths.
bool constantTimeEquals(std::string_view a, std::string_view b);

class Access {
public:
  explicit Access(AccessOptions options);

  /// The refusal for `r`, or nullopt when it may proceed to its route.
  std::optional<ApiError> check(const HttpRequest &r) const;
  /// Headers that a response to `r` carries: CORS ones when its Origin is
  /// one of allowedOrigins (and not this server itself).
  Headers responseHeaders(const HttpRequest &r) const;
  /// Whether `r` is a CORS preflight (OPTIONS with an allowed Origin) that
  /// responseHeaders + 204 answers.
  bool isPreflight(const HttpRequest &r) const;

  const AccessOptions &options() const { return opts_; }

private:
  bool originListed(std::string_view origin) const;
  AccessOptions opts_;
};

/// The 415 for a POST whose Content-Type is not application/json (any
/// parameters, such as charset, allowed), or nullopt.
std::optional<ApiError> jsonBodyError(const HttpRequest &r);

} // namespace accel::rt::server

#endif // ACCEL_RUNTIME_SERVING_HTTP_ACCESS_H
