//===- Normalizers.cpp - the normalizers of tokenizer.json ----------------===//
#include "runtime/serving/tokenizer/Normalizers.h"

#include "runtime/serving/tokenizer/Text.h"
#include "runtime/serving/tokenizer/Unicode.h"

namespace accel::rt::tok::detail {

namespace {

/// The CJK ideographs BertNormalizer puts spaces around (is_chinese_char).
bool isChineseChar(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/// Keeps the characters for which `keep` holds, each mapped by `map` to
/// one or more characters (appended to the output).
template <typename Keep, typename Map>
std::string filterMap(std::string_view s, Keep keep, Map map) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    size_t len;
    char32_t c = unicode::decodeAt(s, i, len);
    if (keep(c))
      map(c, s.substr(i, len), out);
    i += len;
  }
  return out;
}

const auto kSame = [](char32_t, std::string_view utf8, std::string &out) { out.append(utf8); };

std::string bertNormalize(const Normalizer &n, std::string s) {
  if (n.cleanText)
    s = filterMap(
        s, [](char32_t c) { return c != 0 && c != 0xFFFD && !unicode::isBertCleaned(c); },
        [](char32_t c, std::string_view utf8, std::string &out) {
          if (unicode::isWhitespace(c))
            out += ' ';
          else
            out.append(utf8);
        });
  if (n.chineseChars)
    s = filterMap(
        s, [](char32_t) { return true; },
        [](char32_t c, std::string_view utf8, std::string &out) {
          if (isChineseChar(c)) {
            out += ' ';
            out.append(utf8);
            out += ' ';
          } else {
            out.append(utf8);
          }
        });
  if (n.stripAccents)
    s = filterMap(
        unicode::nfd(s), [](char32_t c) { return !unicode::isNonspacingMark(c); }, kSame);
  if (n.lowercase)
    s = unicode::lowercase(s);
  return s;
}

std::string nmt(const std::string &s) {
  return filterMap(
      s,
      [](char32_t c) {
        return !((c >= 0x01 && c <= 0x08) || c == 0x0B || (c >= 0x0E && c <= 0x1F) ||
                 c == 0x7F || c == 0x8F || c == 0x9F);
      },
      [](char32_t c, std::string_view utf8, std::string &out) {
        bool space = c == 0x09 || c == 0x0A || c == 0x0C || c == 0x0D || c == 0x1680 ||
                     (c >= 0x200B && c <= 0x200F) || c == 0x2028 || c == 0x2029 ||
                     c == 0x2581 || c == 0xFEFF || c == 0xFFFD;
        if (space)
          out += ' ';
        else
          out.append(utf8);
      });
}

} // namespace

Status loadNormalizer(const Loader &loader, const json::Value &v, const std::string &path,
                      std::vector<Normalizer> &out) {
  std::string type;
  ACCEL_RT_RETURN_IF_ERROR(loader.getType(v, path, type));
  if (type == "Sequence") {
    const json::Value *list = v.find("normalizers");
    if (!list || !list->isArray())
      return loader.bad("expected an array 'normalizers'", path);
    for (size_t i = 0; i < list->size(); ++i)
      ACCEL_RT_RETURN_IF_ERROR(loadNormalizer(
          loader, list->items()[i], path + ".normalizers[" + std::to_string(i) + "]", out));
    return Status::ok();
  }
  using Kind = Normalizer::Kind;
  Normalizer step;
  if (type == "NFC") {
    step.kind = Kind::kNFC;
  } else if (type == "NFD") {
    step.kind = Kind::kNFD;
  } else if (type == "NFKC") {
    step.kind = Kind::kNFKC;
  } else if (type == "NFKD") {
    step.kind = Kind::kNFKD;
  } else if (type == "Lowercase") {
    step.kind = Kind::kLowercase;
  } else if (type == "StripAccents") {
    step.kind = Kind::kStripAccents;
  } else if (type == "Nmt") {
    step.kind = Kind::kNmt;
  } else if (type == "Prepend") {
    step.kind = Kind::kPrepend;
    std::optional<std::string> p;
    ACCEL_RT_RETURN_IF_ERROR(loader.getString(v, "prepend", path, p, /*required=*/true));
    step.a = *p;
  } else if (type == "Replace") {
    step.kind = Kind::kReplace;
    ACCEL_RT_RETURN_IF_ERROR(loader.getReplace(v, path, "normalizer", step.a, step.regex, step.b));
  } else if (type == "Strip") {
    step.kind = Kind::kStrip;
    ACCEL_RT_RETURN_IF_ERROR(loader.getBool(v, "strip_left", path, step.left));
    ACCEL_RT_RETURN_IF_ERROR(loader.getBool(v, "strip_right", path, step.right));
  } else if (type == "BertNormalizer") {
    step.kind = Kind::kBert;
    ACCEL_RT_RETURN_IF_ERROR(loader.getBool(v, "clean_text", path, step.cleanText));
    ACCEL_RT_RETURN_IF_ERROR(
        loader.getBool(v, "handle_chinese_chars", path, step.chineseChars));
    ACCEL_RT_RETURN_IF_ERROR(loader.getBool(v, "lowercase", path, step.lowercase));
    // strip_accents: null means "as lowercase".
    step.stripAccents = step.lowercase;
    ACCEL_RT_RETURN_IF_ERROR(loader.getBool(v, "strip_accents", path, step.stripAccents));
  } else if (type == "ByteLevel") {
    step.kind = Kind::kByteLevel;
  } else {
    return loader.unsupported("normalizer type '" + type + "'", path);
  }
  out.push_back(std::move(step));
  return Status::ok();
}

namespace {

/// Whether normalizer `n` removes the first character of `s` (or more in
/// front of what becomes the first character of its result).
bool dropsFirst(const Normalizer &n, const std::string &s, const std::string &result) {
  using Kind = Normalizer::Kind;
  if (s.empty() || result.empty())
    return false;
  size_t len;
  char32_t c = unicode::decodeAt(s, 0, len);
  switch (n.kind) {
  case Kind::kStrip:
    return n.left && leadingWhitespace(s) > 0;
  case Kind::kStripAccents:
    return unicode::isMark(c);
  case Kind::kNmt:
    return (c >= 0x01 && c <= 0x08) || c == 0x0B || (c >= 0x0E && c <= 0x1F) || c == 0x7F ||
           c == 0x8F || c == 0x9F;
  case Kind::kBert: {
    if (n.cleanText && (c == 0 || c == 0xFFFD || unicode::isBertCleaned(c)))
      return true;
    if (n.stripAccents) {
      std::string d = unicode::nfd(s.substr(0, len));
      return unicode::isNonspacingMark(unicode::decodeAt(d, 0, len));
    }
    return false;
  }
  case Kind::kReplace: {
    if (!n.b.empty())
      return false;
    if (!n.regex)
      return s.compare(0, n.a.size(), n.a) == 0;
    std::vector<Segment> segs = n.regex->findSegments(s);
    return !segs.empty() && segs.front().isMatch && segs.front().start == 0 &&
           segs.front().end > 0;
  }
  default:
    return false;
  }
}

} // namespace

std::string normalize(const std::vector<Normalizer> &normalizers, std::string s,
                      bool *atOrigin) {
  using Kind = Normalizer::Kind;
  for (const Normalizer &n : normalizers) {
    std::string before;
    if (atOrigin && *atOrigin)
      before = s;
    switch (n.kind) {
    case Kind::kNFC:
      s = unicode::nfc(s);
      break;
    case Kind::kNFD:
      s = unicode::nfd(s);
      break;
    case Kind::kNFKC:
      s = unicode::nfkc(s);
      break;
    case Kind::kNFKD:
      s = unicode::nfkd(s);
      break;
    case Kind::kLowercase:
      s = unicode::lowercase(s);
      break;
    case Kind::kStripAccents:
      s = filterMap(s, [](char32_t c) { return !unicode::isMark(c); }, kSame);
      break;
    case Kind::kNmt:
      s = nmt(s);
      break;
    case Kind::kPrepend:
      if (!s.empty())
        s = n.a + s;
      break;
    case Kind::kReplace:
      s = n.regex ? n.regex->replaceAll(s, n.b) : replaceAll(s, n.a, n.b);
      break;
    case Kind::kStrip: {
      size_t start = n.left ? leadingWhitespace(s) : 0;
      size_t end = n.right ? trailingWhitespaceStart(s) : s.size();
      s = end > start ? s.substr(start, end - start) : std::string();
      break;
    }
    case Kind::kBert:
      s = bertNormalize(n, std::move(s));
      break;
    case Kind::kByteLevel:
      s = byteLevelEncode(s);
      break;
    }
    if (atOrigin && *atOrigin && dropsFirst(n, before, s))
      *atOrigin = false;
  }
  return s;
}

} // namespace accel::rt::tok::detail
