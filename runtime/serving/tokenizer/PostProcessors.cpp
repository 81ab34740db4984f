//===- PostProcessors.cpp - the post-processors of tokenizer.json ---------===//
#include "runtime/serving/tokenizer/PostProcessors.h"

#include <algorithm>
#include <unordered_map>

namespace accel::rt::tok::detail {

namespace {

using Item = PostProcessor::Item;

/// [token, id] of Roberta/Bert processing.
Status getTokenPair(const Loader &loader, const json::Value &obj, const char *key,
                    const std::string &path, int32_t &id) {
  const json::Value *v = obj.find(key);
  std::string where = Loader::field(path, key);
  if (!v || !v->isArray() || v->size() != 2 || !v->items()[0].isString())
    return loader.bad("expected [\"token\", id]", where);
  return loader.getId(v->items()[1], where + "[1]", id);
}

Status loadTemplate(const Loader &loader, const json::Value &v, const char *key,
                    const std::string &path,
                    const std::unordered_map<std::string, std::vector<int32_t>> &specials,
                    bool pair, std::vector<Item> &out) {
  const json::Value *list = v.find(key);
  std::string sp = Loader::field(path, key);
  if (!list || list->isNull()) {
    if (!pair)
      return loader.bad(std::string("expected an array '") + key + "'", path);
    out = {{Item::Kind::kA, {}}, {Item::Kind::kB, {}}}; // the default "$A:0 $B:1"
    return Status::ok();
  }
  if (!list->isArray())
    return loader.bad(std::string("expected an array '") + key + "'", path);
  for (size_t i = 0; i < list->size(); ++i) {
    const json::Value &piece = list->items()[i];
    std::string pp = sp + "[" + std::to_string(i) + "]";
    if (!piece.isObject() || piece.size() != 1)
      return loader.bad("expected {\"SpecialToken\": ...} or {\"Sequence\": ...}", pp);
    const auto &[kind, body] = piece.members().front();
    if (!body.isObject())
      return loader.bad("expected an object", pp + "." + kind);
    const json::Value *id = body.find("id");
    if (!id || !id->isString())
      return loader.bad("expected a string 'id'", pp + "." + kind);
    if (kind == "Sequence") {
      if (id->asString() == "A")
        out.push_back({Item::Kind::kA, {}});
      else if (id->asString() == "B" && pair)
        out.push_back({Item::Kind::kB, {}});
      else
        return loader.bad(std::string("the ") + key + " template cannot hold sequence " +
                              json::quote(id->asString()),
                          pp);
    } else if (kind == "SpecialToken") {
      auto it = specials.find(id->asString());
      if (it == specials.end())
        return loader.bad("special token " + json::quote(id->asString()) +
                              " is not in special_tokens",
                          pp);
      out.push_back({Item::Kind::kSpecial, it->second});
    } else {
      return loader.bad("unknown template piece " + json::quote(kind), pp);
    }
  }
  return Status::ok();
}

Status loadTemplateProcessing(const Loader &loader, const json::Value &v,
                              const std::string &path, PostProcessor &step) {
  // special_tokens: {name: {"id": name, "ids": [...], "tokens": [...]}}
  std::unordered_map<std::string, std::vector<int32_t>> specials;
  const json::Value *st = v.find("special_tokens");
  std::string stPath = Loader::field(path, "special_tokens");
  if (st && !st->isNull()) {
    if (!st->isObject())
      return loader.bad("expected an object", stPath);
    for (const auto &[name, tokv] : st->members()) {
      std::string tp = stPath + "." + name;
      ACCEL_RT_RETURN_IF_ERROR(loader.expectObject(tokv, tp));
      const json::Value *ids = tokv.find("ids");
      if (!ids || !ids->isArray())
        return loader.bad("expected an array 'ids'", tp);
      std::vector<int32_t> list;
      for (size_t i = 0; i < ids->size(); ++i) {
        int32_t id;
        ACCEL_RT_RETURN_IF_ERROR(
            loader.getId(ids->items()[i], tp + ".ids[" + std::to_string(i) + "]", id));
        list.push_back(id);
      }
      const json::Value *toks = tokv.find("tokens");
      if (toks && toks->isArray() && toks->size() != list.size())
        return loader.bad("'ids' and 'tokens' differ in length", tp);
      specials[name] = std::move(list);
    }
  }
  ACCEL_RT_RETURN_IF_ERROR(loadTemplate(loader, v, "single", path, specials, false, step.single));
  return loadTemplate(loader, v, "pair", path, specials, true, step.pair);
}

} // namespace

Status loadPostProcessor(const Loader &loader, const json::Value &v, const std::string &path,
                         std::vector<PostProcessor> &out) {
  std::string type;
  ACCEL_RT_RETURN_IF_ERROR(loader.getType(v, path, type));
  if (type == "Sequence") {
    const json::Value *list = v.find("processors");
    if (!list || !list->isArray())
      return loader.bad("expected an array 'processors'", path);
    for (size_t i = 0; i < list->size(); ++i)
      ACCEL_RT_RETURN_IF_ERROR(loadPostProcessor(
          loader, list->items()[i], path + ".processors[" + std::to_string(i) + "]", out));
    return Status::ok();
  }
  if (type == "ByteLevel")
    return Status::ok(); // it only trims offsets
  PostProcessor step;
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    int32_t cls, sep;
    ACCEL_RT_RETURN_IF_ERROR(getTokenPair(loader, v, "cls", path, cls));
    ACCEL_RT_RETURN_IF_ERROR(getTokenPair(loader, v, "sep", path, sep));
    Item c{Item::Kind::kSpecial, {cls}}, s{Item::Kind::kSpecial, {sep}};
    Item a{Item::Kind::kA, {}}, b{Item::Kind::kB, {}};
    step.single = {c, a, s};
    if (type == "RobertaProcessing")
      step.pair = {c, a, s, s, b, s};
    else
      step.pair = {c, a, s, b, s};
  } else if (type == "TemplateProcessing") {
    ACCEL_RT_RETURN_IF_ERROR(loadTemplateProcessing(loader, v, path, step));
  } else {
    return loader.unsupported("post_processor type '" + type + "'", path);
  }
  out.push_back(std::move(step));
  return Status::ok();
}

std::vector<int32_t> postProcess(const std::vector<PostProcessor> &processors,
                                 std::vector<int32_t> a, const std::vector<int32_t> *b,
                                 bool addSpecialTokens) {
  std::vector<int32_t> ids = std::move(a);
  for (const PostProcessor &p : processors) {
    // A single sequence without special tokens through a template that
    // holds it once: nothing to do (the common case of encoding a prompt).
    if (!b && !addSpecialTokens &&
        std::count_if(p.single.begin(), p.single.end(),
                      [](const Item &i) { return i.kind != Item::Kind::kSpecial; }) == 1)
      continue;
    std::vector<int32_t> out;
    for (const Item &item : b ? p.pair : p.single) {
      if (item.kind == Item::Kind::kSpecial) {
        if (addSpecialTokens)
          out.insert(out.end(), item.ids.begin(), item.ids.end());
      } else if (item.kind == Item::Kind::kA) {
        out.insert(out.end(), ids.begin(), ids.end());
      } else {
        out.insert(out.end(), b->begin(), b->end());
      }
    }
    ids.swap(out);
    b = nullptr; // a pair is one sequence from here on
  }
  if (b)
    ids.insert(ids.end(), b->begin(), b->end());
  return ids;
}

std::optional<int32_t> leadingSpecial(const std::vector<PostProcessor> &processors) {
  for (const PostProcessor &p : processors)
    if (!p.single.empty() && p.single.front().kind == Item::Kind::kSpecial &&
        !p.single.front().ids.empty())
      return p.single.front().ids.front();
  return std::nullopt;
}

} // namespace accel::rt::tok::detail
