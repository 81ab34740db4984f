//===- Sse.cpp - Server-Sent Events framing -------------------------------===//
#include "runtime/serving/http/Sse.h"

namespace accel::rt::server::sse {

std::string event(std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 8);
  size_t start = 0;
  while (true) {
    size_t nl = payload.find('\n', start);
    out += "data: ";
    out += payload.substr(start, nl == std::string_view::npos ? std::string_view::npos
                                                              : nl - start);
    out += '\n';
    if (nl == std::string_view::npos)
      break;
    start = nl + 1;
  }
  out += '\n';
  return out;
}

std::string done() { return "data: [DONE]\n\n"; }

std::vector<std::string> parse(std::string_view stream) {
  std::vector<std::string> events;
  std::string data;
  bool have = false;
  size_t pos = 0;
  while (pos < stream.size()) {
    size_t nl = stream.find('\n', pos);
    std::string_view line =
        stream.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? stream.size() : nl + 1;
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    if (line.empty()) {
      if (have)
        events.push_back(data);
      data.clear();
      have = false;
      continue;
    }
    if (line.substr(0, 5) != "data:")
      continue; // comments (":...") and other fields
    std::string_view v = line.substr(5);
    if (!v.empty() && v.front() == ' ')
      v.remove_prefix(1);
    if (have)
      data += '\n';
    data += v;
    have = true;
  }
  return events;
}

} // namespace accel::rt::server::sse
