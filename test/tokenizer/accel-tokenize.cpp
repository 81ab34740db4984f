//===- accel-tokenize.cpp - test driver for the tokenizer -----------------===//
//
// Usage: accel-tokenize TOKENIZER_JSON INPUT [--jsonl]
//
// Loads a tokenizer.json and, for every line of INPUT, prints one JSON line.
//
// Plain INPUT: every line is a text (without its '\n'). With --jsonl every
// line is a JSON value: a string (a text), {"text": "..."} or
// {"ids": [...]} (an id sequence to decode).
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
// and for ids: {"decoded", "decoded_special", "stream"} of those ids.
// A failure is {"error": "..."} on that line. Exit status: 0, or 1 when the
// tokenizer cannot be loaded or INPUT cannot be read.
//
// It exists for test/tokenizer/check_tokenizer.py, which compares the output
// with the `tokenizers` Python package.
//
//===----------------------------------------------------------------------===//
#include "core/Json.h"
#include "runtime/serving/tokenizer/Tokenizer.h"

#include <cstdio>
#include <cstring>
#include <fstream>
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

} // namespace

int main(int argc, char **argv) {
  bool jsonl = false;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--jsonl") == 0)
      jsonl = true;
    else
      args.emplace_back(argv[i]);
  }
  if (args.size() != 2) {
    std::fprintf(stderr, "usage: accel-tokenize TOKENIZER_JSON INPUT [--jsonl]\n");
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
