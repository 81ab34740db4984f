//===- Models.cpp - loading the model of tokenizer.json -------------------===//
#include "runtime/serving/tokenizer/Models.h"

#include "core/Json.h"
#include "runtime/serving/tokenizer/Bpe.h"
#include "runtime/serving/tokenizer/Loader.h"
#include "runtime/serving/tokenizer/Unigram.h"
#include "runtime/serving/tokenizer/WordPiece.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

namespace accel::rt::tok::detail {

int64_t Vocab::idLimit() const {
  int64_t limit = 0;
  for (const auto &[tok, id] : byToken)
    limit = std::max<int64_t>(limit, int64_t(id) + 1);
  return limit;
}

namespace {

/// The double `tokenizers` reads for a JSON number whose shortest text is
/// that of `d`: serde_json (without float_roundtrip, as `tokenizers` builds
/// it) parses the digits into an integer and divides by a power of ten,
/// which can be one ulp away from the correctly rounded value that
/// core/Json reads. Unigram scores need the same bits: a Viterbi tie that
/// rounding decides must go the same way.
double serdeJsonF64(double d) {
  if (!std::isfinite(d) || d == 0)
    return d;
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d); // shortest round trip
  if (ec != std::errc())
    return d;
  const char *p = buf;
  bool negative = *p == '-';
  if (negative)
    ++p;
  uint64_t significand = 0;
  int exponent = 0;
  bool afterPoint = false;
  for (; p < end && *p != 'e'; ++p) {
    if (*p == '.') {
      afterPoint = true;
      continue;
    }
    significand = significand * 10 + static_cast<uint64_t>(*p - '0');
    if (afterPoint)
      --exponent;
  }
  if (p < end && *p == 'e')
    exponent += std::atoi(p + 1);
  double f = static_cast<double>(significand);
  while (true) {
    int k = exponent < 0 ? -exponent : exponent;
    if (k <= 308) {
      double pow = std::strtod(("1e" + std::to_string(k)).c_str(), nullptr);
      f = exponent >= 0 ? f * pow : f / pow;
      break;
    }
    if (exponent >= 0)
      return d;
    f /= 1e308;
    exponent += 308;
  }
  return negative ? -f : f;
}

/// "vocab" as an object of token: id.
Status loadVocab(const Loader &loader, const json::Value &v, Vocab &out) {
  const json::Value *vocabV = v.find("vocab");
  if (!vocabV)
    return loader.bad("missing field 'vocab'", "model");
  if (!vocabV->isObject())
    return loader.bad(std::string("expected an object of token: id but found ") +
                          json::typeName(vocabV->type()),
                      "model.vocab");
  out.byToken.reserve(vocabV->size());
  for (const auto &[tok, idv] : vocabV->members()) {
    int32_t id;
    ACCEL_RT_RETURN_IF_ERROR(loader.getId(idv, "model.vocab." + json::quote(tok), id));
    out.byToken[tok] = id;
  }
  for (const auto &[tok, id] : out.byToken)
    out.byId[id] = tok;
  return Status::ok();
}

Status loadBpe(const Loader &loader, const json::Value &v, std::unique_ptr<Model> &out) {
  const std::string path = "model";
  const json::Value *dropout = v.find("dropout");
  if (dropout && !dropout->isNull()) {
    if (!dropout->isNumber() || dropout->asDouble() < 0 || dropout->asDouble() > 1)
      return loader.bad("dropout must be null or a number in [0, 1]", "model.dropout");
    if (dropout->asDouble() != 0.0)
      return loader.unsupported("BPE dropout (it makes encoding random)", "model.dropout");
  }

  Bpe::Options opts;
  ACCEL_RT_RETURN_IF_ERROR(loader.getString(v, "unk_token", path, opts.unkToken));
  ACCEL_RT_RETURN_IF_ERROR(
      loader.getString(v, "continuing_subword_prefix", path, opts.continuingSubwordPrefix));
  ACCEL_RT_RETURN_IF_ERROR(loader.getString(v, "end_of_word_suffix", path, opts.endOfWordSuffix));
  ACCEL_RT_RETURN_IF_ERROR(loader.getBool(v, "fuse_unk", path, opts.fuseUnk));
  ACCEL_RT_RETURN_IF_ERROR(loader.getBool(v, "byte_fallback", path, opts.byteFallback));
  ACCEL_RT_RETURN_IF_ERROR(loader.getBool(v, "ignore_merges", path, opts.ignoreMerges));

  const json::Value *vocabV = v.find("vocab");
  if (!vocabV)
    return loader.bad("missing field 'vocab'", path);
  if (!vocabV->isObject())
    return loader.bad(std::string("expected an object of token: id but found ") +
                   json::typeName(vocabV->type()),
               "model.vocab");
  std::unordered_map<std::string, int32_t> vocab;
  vocab.reserve(vocabV->size());
  for (const auto &[tok, idv] : vocabV->members()) {
    int32_t id;
    ACCEL_RT_RETURN_IF_ERROR(loader.getId(idv, "model.vocab." + json::quote(tok), id));
    vocab[tok] = id;
  }

  const json::Value *mergesV = v.find("merges");
  if (!mergesV)
    return loader.bad("missing field 'merges'", path);
  if (!mergesV->isArray())
    return loader.bad(std::string("expected an array but found ") + json::typeName(mergesV->type()),
               "model.merges");
  std::vector<std::pair<std::string, std::string>> merges;
  merges.reserve(mergesV->size());
  // Either all "a b" strings (the legacy form, where lines starting with
  // "#version" are skipped) or all ["a", "b"] pairs.
  bool legacy = mergesV->size() > 0 && mergesV->items()[0].isString();
  for (size_t i = 0; i < mergesV->size(); ++i) {
    const json::Value &m = mergesV->items()[i];
    std::string where = "model.merges[" + std::to_string(i) + "]";
    if (legacy) {
      if (!m.isString())
        return loader.bad("expected a string \"a b\" like the first merge", where);
      const std::string &line = m.asString();
      if (line.rfind("#version", 0) == 0)
        continue;
      size_t sp = line.find(' ');
      if (sp == std::string::npos || line.find(' ', sp + 1) != std::string::npos)
        return loader.bad("merge " + json::quote(line) + " is not two tokens separated by one space",
                   where);
      merges.emplace_back(line.substr(0, sp), line.substr(sp + 1));
    } else {
      if (!m.isArray() || m.size() != 2 || !m.items()[0].isString() ||
          !m.items()[1].isString())
        return loader.bad("expected a pair [\"a\", \"b\"]", where);
      merges.emplace_back(m.items()[0].asString(), m.items()[1].asString());
    }
  }
  StatusOr<Bpe> built =
      Bpe::build(std::move(vocab), merges, std::move(opts), "model.merges");
  if (!built.isOk())
    return invalidArgument(loader.name() + ": " + built.status().message());
  out = std::make_unique<Bpe>(std::move(built).value());
  return Status::ok();
}

Status loadUnigram(const Loader &loader, const json::Value &v, std::unique_ptr<Model> &out) {
  const json::Value *vocabV = v.find("vocab");
  if (!vocabV)
    return loader.bad("missing field 'vocab'", "model");
  if (!vocabV->isArray())
    return loader.bad(std::string("expected an array of [piece, score] but found ") +
                          json::typeName(vocabV->type()),
                      "model.vocab");
  std::vector<std::pair<std::string, double>> pieces;
  pieces.reserve(vocabV->size());
  for (size_t i = 0; i < vocabV->size(); ++i) {
    const json::Value &p = vocabV->items()[i];
    if (!p.isArray() || p.size() != 2 || !p.items()[0].isString() || !p.items()[1].isNumber())
      return loader.bad("expected [piece, score]", "model.vocab[" + std::to_string(i) + "]");
    pieces.emplace_back(p.items()[0].asString(), serdeJsonF64(p.items()[1].asDouble()));
  }
  std::optional<int32_t> unkId;
  if (const json::Value *u = v.find("unk_id"); u && !u->isNull()) {
    int32_t id;
    ACCEL_RT_RETURN_IF_ERROR(loader.getId(*u, "model.unk_id", id));
    if (static_cast<size_t>(id) >= pieces.size())
      return loader.bad("unk_id " + std::to_string(id) + " is not below the vocabulary size " +
                            std::to_string(pieces.size()),
                        "model.unk_id");
    unkId = id;
  }
  bool byteFallback = false;
  ACCEL_RT_RETURN_IF_ERROR(loader.getBool(v, "byte_fallback", "model", byteFallback));
  out = std::make_unique<Unigram>(std::move(pieces), unkId, byteFallback);
  return Status::ok();
}

Status loadWordPiece(const Loader &loader, const json::Value &v, std::unique_ptr<Model> &out) {
  Vocab vocab;
  ACCEL_RT_RETURN_IF_ERROR(loadVocab(loader, v, vocab));
  std::optional<std::string> unk = std::string("[UNK]"), prefix = std::string("##");
  ACCEL_RT_RETURN_IF_ERROR(loader.getString(v, "unk_token", "model", unk));
  ACCEL_RT_RETURN_IF_ERROR(loader.getString(v, "continuing_subword_prefix", "model", prefix));
  size_t maxChars = 100;
  ACCEL_RT_RETURN_IF_ERROR(loader.getSize(v, "max_input_chars_per_word", "model", maxChars));
  out = std::make_unique<WordPiece>(std::move(vocab), *unk, *prefix, maxChars);
  return Status::ok();
}

Status loadWordLevel(const Loader &loader, const json::Value &v, std::unique_ptr<Model> &out) {
  Vocab vocab;
  ACCEL_RT_RETURN_IF_ERROR(loadVocab(loader, v, vocab));
  std::optional<std::string> unk = std::string("<unk>");
  ACCEL_RT_RETURN_IF_ERROR(loader.getString(v, "unk_token", "model", unk));
  out = std::make_unique<WordLevel>(std::move(vocab), *unk);
  return Status::ok();
}

} // namespace

Status loadModel(const Loader &loader, const json::Value &v, std::unique_ptr<Model> &out) {
  const std::string path = "model";
  ACCEL_RT_RETURN_IF_ERROR(loader.expectObject(v, path));
  std::optional<std::string> type;
  ACCEL_RT_RETURN_IF_ERROR(loader.getString(v, "type", path, type));
  if (!type && !v.find("merges"))
    return loader.unsupported("a model without \"type\" and without merges", path);
  if (!type || *type == "BPE")
    return loadBpe(loader, v, out);
  if (*type == "Unigram")
    return loadUnigram(loader, v, out);
  if (*type == "WordPiece")
    return loadWordPiece(loader, v, out);
  if (*type == "WordLevel")
    return loadWordLevel(loader, v, out);
  return loader.unsupported("model type '" + *type + "'", path);
}

} // namespace accel::rt::tok::detail
