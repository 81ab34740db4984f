//===- StopCriteria.cpp - when a sequence stops generating ----------------===//
#include "runtime/serving/sampler/StopCriteria.h"

#include <algorithm>

namespace accel::rt::sampler {

const char *finishReasonName(FinishReason reason) {
  switch (reason) {
  case FinishReason::kStop:
    return "stop";
  case FinishReason::kLength:
    return "length";
  case FinishReason::kNone:
    break;
  }
  return "";
}

Status StopCriteria::validate() const {
  for (size_t i = 0; i < stopStrings.size(); ++i)
    if (stopStrings[i].empty())
      return invalidArgument("stop string " + std::to_string(i) +
                             " is empty; stop strings must be non-empty");
  for (int32_t id : stopTokenIds)
    if (id < 0)
      return invalidArgument("stop token ids must be >= 0, got " +
                             std::to_string(id));
  if (maxTokens == 0 || maxTokens < -1)
    return invalidArgument("max_tokens must be >= 1, got " +
                           std::to_string(maxTokens));
  if (minTokens < 0 || (maxTokens > 0 && minTokens > maxTokens))
    return invalidArgument("min_tokens must be between 0 and max_tokens (" +
                           std::to_string(maxTokens) + "), got " +
                           std::to_string(minTokens));
  return Status::ok();
}

std::optional<StopMatch> findStopString(const std::vector<std::string> &stops,
                                        std::string_view text,
                                        size_t newBytes) {
  // Matches ending after newStart: position > newStart - size.
  const size_t newStart = newBytes >= text.size() ? 0 : text.size() - newBytes;
  std::optional<StopMatch> best;
  for (size_t idx = 0; idx < stops.size(); ++idx) {
    const std::string &s = stops[idx];
    if (s.empty() || s.size() > text.size())
      continue;
    const size_t from = newStart + 1 > s.size() ? newStart + 1 - s.size() : 0;
    const size_t pos = text.find(s, from);
    if (pos != std::string_view::npos && (!best || pos < best->position))
      best = StopMatch{pos, idx};
  }
  return best;
}

StopDecision checkStop(const StopCriteria &criteria, std::string_view text,
                       size_t newBytes, int32_t lastToken,
                       int64_t numGenerated) {
  StopDecision d;
  d.outputBytes = text.size();
  newBytes = std::min(newBytes, text.size());
  if (numGenerated <= criteria.minTokens) { // vLLM v1: stops only after min_tokens
    if (criteria.maxTokens > 0 && numGenerated >= criteria.maxTokens)
      d.reason = FinishReason::kLength;
    return d;
  }
  if (std::find(criteria.stopTokenIds.begin(), criteria.stopTokenIds.end(),
                lastToken) != criteria.stopTokenIds.end()) {
    d.reason = FinishReason::kStop;
    d.stopTokenId = lastToken;
    if (!criteria.includeStopStringInOutput)
      d.outputBytes = text.size() - newBytes;
    return d;
  }
  if (std::optional<StopMatch> m =
          findStopString(criteria.stopStrings, text, newBytes)) {
    d.reason = FinishReason::kStop;
    d.stopStringIndex = int64_t(m->index);
    d.outputBytes = m->position;
    if (criteria.includeStopStringInOutput)
      d.outputBytes += criteria.stopStrings[m->index].size();
    return d;
  }
  if (criteria.maxTokens > 0 && numGenerated >= criteria.maxTokens)
    d.reason = FinishReason::kLength;
  return d;
}

size_t streamableBytes(const StopCriteria &criteria, std::string_view text,
                       bool finished) {
  const size_t n = text.size();
  if (finished)
    return n;
  size_t hold = 0;
  if (!criteria.includeStopStringInOutput)
    for (const std::string &s : criteria.stopStrings) {
      // The longest proper prefix of s that the text ends with.
      for (size_t len = std::min(s.size() - (s.empty() ? 0 : 1), n); len > hold;
           --len)
        if (text.compare(n - len, len, s, 0, len) == 0) {
          hold = len;
          break;
        }
    }
  size_t cut = n - hold;
  // Do not end inside a UTF-8 character: step back over continuation bytes
  // to the lead byte, and hold the character back if it is incomplete.
  size_t i = cut, continuation = 0;
  while (i > 0 && continuation < 3 &&
         (static_cast<unsigned char>(text[i - 1]) & 0xC0) == 0x80) {
    --i;
    ++continuation;
  }
  if (i > 0) {
    const unsigned char lead = static_cast<unsigned char>(text[i - 1]);
    const size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (lead >= 0xC0 && continuation + 1 < need)
      cut = i - 1;
  }
  return cut;
}

} // namespace accel::rt::sampler
