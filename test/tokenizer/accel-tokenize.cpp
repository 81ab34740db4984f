//===- accel-tokenize.cpp - test driver for the tokenizer -----------------===//
//
// Usage: accel-tokenize TOKENIZER_JSON INPUT [--jsonl | --bench]
//
// Loads a tokenizer.json and, for every line of INPUT, prints one JSON line.
//
// Plain INPUT: every line is a text (without its '\n'). With --jsonl every
// line is a JSON value: a string (a text), {"text": "..."},
// {"pair": ["a", "b"]} (a pair of sequences) or {"ids": [...]} (an id
// sequence to decode).
//
// The first output line describes the tokenizer:
//   {"vocab_size": N, "id_limit": N, "bos": id|null, "eos": id|null}
// then, for a text:
//   {"ids": [...],            encode(text, addSpecialTokens=true)
//    "ids_plain": [...],      encode(text, addSpecialTokens=false)
//    "decoded": "...",        decode(ids, skipSpecialTokens=true)
//    "decoded_special": "...", decode(ids, skipSpecialTokens=false)
//    "stream": ["...", ...]}  DecodeStream(skip=true) over ids, one entry
//                             per step ("" where a step returns nothing)
// for a pair: {"ids", "ids_plain"} of encodePair(a, b, true / false),
// and for ids: {"decoded", "decoded_special", "stream"} of those ids.
// A failure is {"error": "..."} on that line. Exit status: 0, or 1 when the
// tokenizer cannot be loaded or INPUT cannot be read.
//
// It exists for test/tokenizer/check_tokenizer.py, which compares the output
// with the `tokenizers` Python package.
//
// accel-tokenize TOKENIZER_JSON INPUT --bench measures encode speed instead:
// INPUT is cut into texts of about 4 KiB at line ends, every text is encoded
// (without special tokens) over and over for about a second, three times,
// and the best rate is printed as "encode: X.XX MB/s (N bytes, M tokens)".
//
//===----------------------------------------------------------------------===//
#include "core/Json.h"
#include "runtime/serving/tokenizer/Tokenizer.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <fstream>
#include <iterator>
#include <iostream>
#include <string>
#include <vector>

using namespace accel::rt;

namespace {

json::Value idArray(const std::vector<int32_t> &ids) {
  json::Value a = json::Value::array();
  for (int32_t id : ids)
    a.push(json::Value(id));
  return a;
}

json::Value optionalId(std::optional<int32_t> id) {
  return id ? json::Value(*id) : json::Value();
}

json::Value decodeResults(const tok::Tokenizer &t, const std::vector<int32_t> &ids,
                          json::Value out) {
  out.set("decoded", json::Value(t.decode(ids, true)));
  out.set("decoded_special", json::Value(t.decode(ids, false)));
  tok::DecodeStream stream(t, /*skipSpecialTokens=*/true);
  json::Value pieces = json::Value::array();
  for (int32_t id : ids) {
    StatusOr<std::string> piece = stream.step(id);
    if (!piece.isOk()) {
      out.set("stream_error", json::Value(piece.status().toString()));
      break;
    }
    pieces.push(json::Value(*piece));
  }
  out.set("stream", std::move(pieces));
  return out;
}

json::Value errorLine(const std::string &msg) {
  json::Value v = json::Value::object();
  v.set("error", json::Value(msg));
  return v;
}

json::Value process(const tok::Tokenizer &t, const std::string &line, bool jsonl) {
  std::string text;
  if (jsonl) {
    StatusOr<json::Value> v = json::parse(line);
    if (!v.isOk())
      return errorLine(v.status().toString());
    if (v->isString()) {
      text = v->asString();
    } else if (const json::Value *tv = v->find("text"); tv && tv->isString()) {
      text = tv->asString();
    } else if (const json::Value *pv = v->find("pair");
               pv && pv->isArray() && pv->size() == 2 && pv->items()[0].isString() &&
               pv->items()[1].isString()) {
      const std::string &a = pv->items()[0].asString(), &b = pv->items()[1].asString();
      StatusOr<std::vector<int32_t>> ids = t.encodePair(a, b, true);
      if (!ids.isOk())
        return errorLine(ids.status().toString());
      StatusOr<std::vector<int32_t>> plain = t.encodePair(a, b, false);
      if (!plain.isOk())
        return errorLine(plain.status().toString());
      json::Value out = json::Value::object();
      out.set("ids", idArray(*ids));
      out.set("ids_plain", idArray(*plain));
      return out;
    } else if (const json::Value *iv = v->find("ids"); iv && iv->isArray()) {
      std::vector<int32_t> ids;
      for (const json::Value &x : iv->items())
        ids.push_back(static_cast<int32_t>(x.asInt()));
      return decodeResults(t, ids, json::Value::object());
    } else {
      return errorLine("input line is not a string, {\"text\"} or {\"ids\"}");
    }
  } else {
    text = line;
  }
  StatusOr<std::vector<int32_t>> ids = t.encode(text, true);
  if (!ids.isOk())
    return errorLine(ids.status().toString());
  StatusOr<std::vector<int32_t>> plain = t.encode(text, false);
  if (!plain.isOk())
    return errorLine(plain.status().toString());
  json::Value out = json::Value::object();
  out.set("ids", idArray(*ids));
  out.set("ids_plain", idArray(*plain));
  return decodeResults(t, *ids, std::move(out));
}

/// See the header comment: the best of three ~1 s rounds, in MB/s.
int bench(const tok::Tokenizer &t, const std::string &all) {
  std::vector<std::string> texts;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = std::min(all.size(), start + 4096);
    size_t nl = all.find('\n', end);
    end = nl == std::string::npos ? all.size() : nl + 1;
    texts.push_back(all.substr(start, end - start));
    start = end;
  }
  double best = 0;
  size_t tokens = 0;
  for (int round = 0; round < 3; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    size_t bytes = 0, reps = 0;
    double secs = 0;
    do {
      tokens = 0;
      for (const std::string &text : texts) {
        StatusOr<std::vector<int32_t>> ids = t.encode(text, false);
        if (!ids.isOk()) {
          std::fprintf(stderr, "accel-tokenize: %s\n", ids.status().toString().c_str());
          return 1;
        }
        tokens += ids->size();
        bytes += text.size();
      }
      ++reps;
      secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } while (secs < 1.0);
    best = std::max(best, bytes / secs / 1e6);
    (void)reps;
  }
  std::printf("encode: %.2f MB/s (%zu bytes, %zu tokens)\n", best, all.size(), tokens);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  bool jsonl = false, benchMode = false;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--jsonl") == 0)
      jsonl = true;
    else if (std::strcmp(argv[i], "--bench") == 0)
      benchMode = true;
    else
      args.emplace_back(argv[i]);
  }
  if (args.size() != 2) {
    std::fprintf(stderr, "usage: accel-tokenize TOKENIZER_JSON INPUT [--jsonl | --bench]\n");
    return 2;
  }
  StatusOr<tok::Tokenizer> t = tok::Tokenizer::fromFile(args[0]);
  if (!t.isOk()) {
    std::fprintf(stderr, "accel-tokenize: %s\n", t.status().toString().c_str());
    return 1;
  }
  std::ifstream in(args[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "accel-tokenize: cannot open %s\n", args[1].c_str());
    return 1;
  }
  if (benchMode) {
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return bench(*t, all);
  }
  json::Value header = json::Value::object();
  header.set("vocab_size", json::Value(t->vocabSize()));
  header.set("id_limit", json::Value(t->idLimit()));
  header.set("bos", optionalId(t->bosId()));
  header.set("eos", optionalId(t->eosId()));
  std::string out = json::write(header) + "\n";
  std::string line;
  while (std::getline(in, line))
    out += json::write(process(*t, line, jsonl)) + "\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}
