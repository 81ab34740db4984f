//===- StopCriteria.h - when a sequence stops generating --------*- C++ -*-===//
//
// After each generated token the engine asks checkStop() whether the
// sequence is finished, and how much of its decoded text is output. The
// checks run in vLLM's order:
//
//   0. at most minTokens tokens so far: only maxTokens can end it.
//   1. the token is one of stopTokenIds (EOS belongs here unless the request
//      sets ignore_eos): finish "stop"; the token's own text is not output
//      (it is with includeStopStringInOutput).
//   2. a stop string occurs in the decoded text: finish "stop"; the output
//      ends just before the earliest occurrence (OpenAI: the stop string is
//      not returned), or just after it with includeStopStringInOutput.
//      Strings are matched in the decoded text, so a stop string split over
//      several tokens ("<|e" + "nd|>") is found.
//   3. maxTokens tokens have been generated: finish "length".
//
// Text is bytes (UTF-8); matching is bytewise, which for valid UTF-8 only
// matches at character boundaries. For streaming, streamableBytes() says how
// much text can be sent now: a tail that may still grow into a stop string
// is held back.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_SAMPLER_STOPCRITERIA_H
#define ACCEL_RUNTIME_SERVING_SAMPLER_STOPCRITERIA_H

#include "core/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel::rt::sampler {

enum class FinishReason {
  kNone,   // not finished
  kStop,   // a stop token or a stop string
  kLength, // maxTokens reached
};

/// OpenAI's finish_reason: "stop", "length"; "" for kNone (JSON null).
const char *finishReasonName(FinishReason reason);

struct StopCriteria {
  /// Generating any of these ends the sequence (their text is not output).
  std::vector<int32_t> stopTokenIds;
  /// Non-empty strings; the earliest occurrence of any ends the output.
  std::vector<std::string> stopStrings;
  /// >= 1, or -1 for no limit here (the engine still stops at the model's
  /// maximum length).
  int64_t maxTokens = -1;
  /// vLLM's include_stop_str_in_output: keep the matched stop string (and
  /// a stop token's text).
  bool includeStopStringInOutput = false;
  /// vLLM's min_tokens: the first minTokens tokens are never ended by a
  /// stop token or a stop string (the engine also keeps stop tokens from
  /// being sampled then); only a later token can stop the sequence, and a
  /// stop string ending in the text of those first tokens is not looked for
  /// later either, as in vLLM (v1).
  int64_t minTokens = 0;

  /// kInvalidArgument for an empty stop string, a negative stop token id,
  /// a maxTokens of 0 or below -1, or a minTokens below 0 or above maxTokens.
  Status validate() const;
};

struct StopMatch {
  size_t position = 0; // byte offset of the match in the text
  size_t index = 0;    // which of stopStrings
};

/// The earliest occurrence in `text` of any of `stops` (at equal positions
/// the first listed). Only matches that end inside the last `newBytes`
/// bytes are looked for (earlier text was checked before); the default
/// searches the whole text. Empty stop strings never match.
std::optional<StopMatch> findStopString(const std::vector<std::string> &stops,
                                        std::string_view text,
                                        size_t newBytes = std::string_view::npos);

struct StopDecision {
  FinishReason reason = FinishReason::kNone;
  /// How many leading bytes of `text` are output (all of it when not
  /// finished; the text after a stop string is dropped).
  size_t outputBytes = 0;
  /// The stop token that finished the sequence, or -1.
  int32_t stopTokenId = -1;
  /// The index in stopStrings of the string that finished it, or -1.
  int64_t stopStringIndex = -1;

  bool finished() const { return reason != FinishReason::kNone; }
};

/// Call after each generated token. `text` is the decoded output so far,
/// ending with the `newBytes` bytes the last token added; `lastToken` is
/// that token and `numGenerated` counts the generated tokens, it included.
/// Stop strings are looked for only in matches ending in the new bytes, so
/// the whole loop is linear in the output length.
StopDecision checkStop(const StopCriteria &criteria, std::string_view text,
                       size_t newBytes, int32_t lastToken,
                       int64_t numGenerated);

/// Streaming: the number of leading bytes of `text` that can be sent now.
/// Unless `finished`, a tail of text that is a proper prefix of a stop
/// string is held back (it may become one), and the cut never splits a
/// UTF-8 character (a multi-byte character still being decoded stays back).
/// With includeStopStringInOutput nothing is held back for stop strings.
size_t streamableBytes(const StopCriteria &criteria, std::string_view text,
                       bool finished);

} // namespace accel::rt::sampler

#endif // ACCEL_RUNTIME_SERVING_SAMPLER_STOPCRITERIA_H
