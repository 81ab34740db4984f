//===- Decoders.cpp - the decoders of tokenizer.json ----------------------===//
#include "runtime/serving/tokenizer/Decoders.h"

#include "runtime/serving/tokenizer/Text.h"
#include "runtime/serving/tokenizer/Unicode.h"

namespace accel::rt::tok::detail {

namespace {

/// The WordPiece decoder's cleanup (decoders::wordpiece::cleanup).
std::string cleanup(std::string s) {
  static const char *const kPairs[][2] = {
      {" .", "."},   {" ?", "?"},     {" !", "!"},          {" ,", ","},
      {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},        {" do not", " don't"},
      {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"},
  };
  for (const auto &p : kPairs)
    s = replaceAll(s, p[0], p[1]);
  return s;
}

} // namespace

Status loadDecoder(const Loader &loader, const json::Value &v, const std::string &path,
                   std::vector<Decoder> &out) {
  std::string type;
  ACCEL_RT_RETURN_IF_ERROR(loader.getType(v, path, type));
  if (type == "Sequence") {
    const json::Value *list = v.find("decoders");
    if (!list || !list->isArray())
      return loader.bad("expected an array 'decoders'", path);
    for (size_t i = 0; i < list->size(); ++i)
      ACCEL_RT_RETURN_IF_ERROR(
          loadDecoder(loader, list->items()[i], path + ".decoders[" + std::to_string(i) + "]", out));
    return Status::ok();
  }
  Decoder step;
  step.kind = Decoder::Kind::kByteLevel;
  if (type == "ByteLevel") {
    step.kind = Decoder::Kind::kByteLevel;
  } else if (type == "Metaspace") {
    step.kind = Decoder::Kind::kMetaspace;
    std::string utf8;
    ACCEL_RT_RETURN_IF_ERROR(loader.getChar(v, "replacement", path, step.ch, utf8));
    std::optional<std::string> scheme;
    ACCEL_RT_RETURN_IF_ERROR(loader.getString(v, "prepend_scheme", path, scheme));
    step.prependNever = scheme && *scheme == "never";
    const json::Value *aps = v.find("add_prefix_space");
    if (aps && aps->isBool() && !aps->asBool())
      step.prependNever = true;
  } else if (type == "Replace") {
    step.kind = Decoder::Kind::kReplace;
    ACCEL_RT_RETURN_IF_ERROR(loader.getReplace(v, path, "decoder", step.a, step.regex, step.b));
  } else if (type == "ByteFallback") {
    step.kind = Decoder::Kind::kByteFallback;
  } else if (type == "Fuse") {
    step.kind = Decoder::Kind::kFuse;
  } else if (type == "Strip") {
    step.kind = Decoder::Kind::kStrip;
    std::string utf8;
    ACCEL_RT_RETURN_IF_ERROR(loader.getChar(v, "content", path, step.ch, utf8));
    ACCEL_RT_RETURN_IF_ERROR(loader.getSize(v, "start", path, step.start));
    ACCEL_RT_RETURN_IF_ERROR(loader.getSize(v, "stop", path, step.stop));
  } else if (type == "WordPiece") {
    step.kind = Decoder::Kind::kWordPiece;
    std::optional<std::string> prefix = std::string("##");
    ACCEL_RT_RETURN_IF_ERROR(loader.getString(v, "prefix", path, prefix));
    step.a = *prefix;
    ACCEL_RT_RETURN_IF_ERROR(loader.getBool(v, "cleanup", path, step.cleanup));
  } else if (type == "BPEDecoder") {
    step.kind = Decoder::Kind::kBpe;
    std::optional<std::string> suffix = std::string("</w>");
    ACCEL_RT_RETURN_IF_ERROR(loader.getString(v, "suffix", path, suffix));
    step.a = *suffix;
  } else if (type == "CTC") {
    step.kind = Decoder::Kind::kCtc;
    std::optional<std::string> pad = std::string("<pad>"), delim = std::string("|");
    ACCEL_RT_RETURN_IF_ERROR(loader.getString(v, "pad_token", path, pad));
    ACCEL_RT_RETURN_IF_ERROR(loader.getString(v, "word_delimiter_token", path, delim));
    step.a = *pad;
    step.b = *delim;
    ACCEL_RT_RETURN_IF_ERROR(loader.getBool(v, "cleanup", path, step.cleanup));
  } else {
    return loader.unsupported("decoder type '" + type + "'", path);
  }
  out.push_back(std::move(step));
  return Status::ok();
}

std::vector<std::string> decodeChain(const std::vector<Decoder> &decoders,
                                     std::vector<std::string> tokens, bool midText) {
  for (const Decoder &d : decoders) {
    switch (d.kind) {
    case Decoder::Kind::kByteLevel: {
      const ByteAlphabet &a = byteAlphabet();
      std::string bytes;
      for (const std::string &t : tokens) {
        // A token made only of alphabet characters becomes its bytes; any
        // other token (an added token, say) is kept as it is.
        std::string mapped;
        bool all = true;
        size_t i = 0;
        while (i < t.size()) {
          size_t len;
          char32_t c = unicode::decodeAt(t, i, len);
          if (c >= 0x144 || a.charToByte[c] < 0) {
            all = false;
            break;
          }
          mapped += static_cast<char>(a.charToByte[c]);
          i += len;
        }
        bytes += all ? mapped : t;
      }
      tokens.assign(1, midText ? bytes : unicode::utf8Lossy(bytes));
      break;
    }
    case Decoder::Kind::kMetaspace: {
      for (size_t i = 0; i < tokens.size(); ++i) {
        std::string out;
        for (const std::string &c : splitChars(tokens[i])) {
          size_t len;
          if (unicode::decodeAt(c, 0, len) == d.ch) {
            if (i == 0 && !d.prependNever && !midText)
              continue;
            out += ' ';
          } else {
            out += c;
          }
        }
        tokens[i] = std::move(out);
      }
      break;
    }
    case Decoder::Kind::kReplace:
      for (std::string &t : tokens)
        t = d.regex ? d.regex->replaceAll(t, d.b) : replaceAll(t, d.a, d.b);
      break;
    case Decoder::Kind::kWordPiece:
      for (size_t i = 0; i < tokens.size(); ++i) {
        std::string &t = tokens[i];
        if (i != 0 || midText) {
          if (t.compare(0, d.a.size(), d.a) == 0)
            t.erase(0, d.a.size());
          else
            t.insert(t.begin(), ' ');
        }
        if (d.cleanup)
          t = cleanup(t);
      }
      break;
    case Decoder::Kind::kBpe:
      for (size_t i = 0; i < tokens.size(); ++i)
        tokens[i] = replaceAll(tokens[i], d.a, i + 1 == tokens.size() ? "" : " ");
      break;
    case Decoder::Kind::kCtc: {
      std::vector<std::string> out;
      for (size_t i = 0; i < tokens.size(); ++i) {
        if (i > 0 && tokens[i] == tokens[i - 1])
          continue; // dedup
        std::string t = d.a.empty() ? tokens[i] : replaceAll(tokens[i], d.a, "");
        if (d.cleanup) {
          t = cleanup(t);
          if (!d.b.empty())
            t = replaceAll(t, d.b, " ");
        }
        if (!t.empty())
          out.push_back(std::move(t));
      }
      tokens.swap(out);
      break;
    }
    case Decoder::Kind::kByteFallback: {
      std::vector<std::string> out;
      std::string pending;
      size_t pendingCount = 0;
      auto flush = [&] {
        if (pendingCount == 0)
          return;
        if (midText || unicode::findInvalidUtf8(pending) == std::string_view::npos) {
          out.push_back(pending);
        } else {
          for (size_t k = 0; k < pendingCount; ++k)
            out.push_back("\xEF\xBF\xBD");
        }
        pending.clear();
        pendingCount = 0;
      };
      for (std::string &t : tokens) {
        // "<0xAB>": u8::from_str_radix on the two characters after "<0x"
        // (which accepts a leading '+').
        int value = -1;
        if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>') {
          auto hex = [](char c) {
            if (c >= '0' && c <= '9')
              return c - '0';
            if (c >= 'a' && c <= 'f')
              return c - 'a' + 10;
            if (c >= 'A' && c <= 'F')
              return c - 'A' + 10;
            return -1;
          };
          int h = hex(t[3]), l = hex(t[4]);
          if (h >= 0 && l >= 0)
            value = h * 16 + l;
          else if (t[3] == '+' && l >= 0)
            value = l;
        }
        if (value >= 0) {
          pending += static_cast<char>(value);
          ++pendingCount;
        } else {
          flush();
          out.push_back(std::move(t));
        }
      }
      flush();
      tokens.swap(out);
      break;
    }
    case Decoder::Kind::kFuse: {
      std::string all;
      for (const std::string &t : tokens)
        all += t;
      tokens.assign(1, std::move(all));
      break;
    }
    case Decoder::Kind::kStrip:
      if (midText)
        break;
      for (std::string &t : tokens) {
        std::vector<std::string> chars = splitChars(t);
        auto is = [&](const std::string &c) {
          size_t len;
          return unicode::decodeAt(c, 0, len) == d.ch;
        };
        size_t startCut = 0;
        for (size_t i = 0; i < d.start && i < chars.size() && is(chars[i]); ++i)
          startCut = i + 1;
        size_t stopCut = chars.size();
        for (size_t i = 0; i < d.stop && i < chars.size() && is(chars[chars.size() - i - 1]);
             ++i)
          stopCut = chars.size() - i - 1;
        std::string out;
        for (size_t i = startCut; i < stopCut; ++i)
          out += chars[i];
        t = std::move(out);
      }
      break;
    }
  }
  return tokens;
}

} // namespace accel::rt::tok::detail
