//===- WordPiece.cpp - the WordPiece and WordLevel models -----------------===//
#include "runtime/serving/tokenizer/WordPiece.h"

#include "core/Json.h"

namespace accel::rt::tok::detail {

namespace {

size_t charCount(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;
  return n;
}

/// The byte length of the last character of non-empty valid UTF-8 `s`.
size_t lastCharLen(std::string_view s) {
  size_t i = s.size() - 1;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80)
    --i;
  return s.size() - i;
}

Status pushUnk(const Vocab &vocab, const std::string &unk, std::string_view word,
               std::vector<int32_t> &out) {
  std::optional<int32_t> id = vocab.find(unk);
  if (!id)
    return invalidArgument("encode: model.unk_token " + json::quote(unk) +
                           " of the tokenizer is not in model.vocab (it is needed for " +
                           json::quote(std::string(word)) + ")");
  out.push_back(*id);
  return Status::ok();
}

} // namespace

Status WordPiece::tokenize(std::string_view word, std::vector<int32_t> &out) const {
  if (charCount(word) > maxChars_)
    return pushUnk(vocab_, unk_, word, out);
  std::vector<int32_t> pieces;
  std::string candidate;
  size_t start = 0;
  while (start < word.size()) {
    size_t end = word.size();
    std::optional<int32_t> found;
    while (start < end) {
      std::string_view sub = word.substr(start, end - start);
      candidate.assign(start > 0 ? prefix_ : std::string());
      candidate.append(sub);
      auto it = vocab_.byToken.find(candidate);
      if (it != vocab_.byToken.end()) {
        found = it->second;
        break;
      }
      end -= lastCharLen(sub);
    }
    if (!found)
      return pushUnk(vocab_, unk_, word, out);
    pieces.push_back(*found);
    start = end;
  }
  out.insert(out.end(), pieces.begin(), pieces.end());
  return Status::ok();
}

Status WordLevel::tokenize(std::string_view word, std::vector<int32_t> &out) const {
  if (std::optional<int32_t> id = vocab_.find(word)) {
    out.push_back(*id);
    return Status::ok();
  }
  return pushUnk(vocab_, unk_, word, out);
}

} // namespace accel::rt::tok::detail
