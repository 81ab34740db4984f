//===- Sse.h - Server-Sent Events framing -----------------------*- C++ -*-===//
//
// OpenAI's streaming format: every event is one `data: <json>` line and a
// blank line; the stream ends with `data: [DONE]`. JSON written compactly
// has no newline in it (json::write escapes control characters), so one
// event is always one line.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_HTTP_SSE_H
#define ACCEL_RUNTIME_SERVING_HTTP_SSE_H

#include <string>
#include <string_view>
#include <vector>

namespace accel::rt::server::sse {

inline constexpr const char *kContentType = "text/event-stream; charset=utf-8";

/// "data: <payload>\n\n". A payload containing newlines becomes several
/// data lines (the SSE rule), which a client joins back with '\n'.
std::string event(std::string_view payload);
/// "data: [DONE]\n\n".
std::string done();

/// The payloads of the events in `stream` (a client's view; for tests):
/// data lines joined per event, comments and other fields ignored.
std::vector<std::string> parse(std::string_view stream);

} // namespace accel::rt::server::sse

#endif // ACCEL_RUNTIME_SERVING_HTTP_SSE_H
