//===- Tokenizer.cpp - Hugging Face tokenizer.json in C++ -----------------===//
//
// The pipeline of `tokenizers`' TokenizerImpl::encode, step by step:
//   1. split the raw text on the added tokens that are not `normalized`
//      (leftmost-longest, honouring single_word / lstrip / rstrip);
//   2. normalize every other piece (Normalizers.cpp), then split it on the
//      `normalized` added tokens;
//   3. pre-tokenize every remaining piece (PreTokenizers.cpp);
//   4. run the model on every pre-token (Models.h: BPE, Unigram, WordPiece,
//      WordLevel);
//   5. post-process (PostProcessors.cpp: the template's special tokens when
//      asked, a pair's two sequences).
// Decoding maps ids back to token strings (added tokens first) and runs the
// decoder chain (Decoders.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/serving/tokenizer/Tokenizer.h"

#include "core/Json.h"
#include "core/RegularFile.h"
#include "runtime/serving/tokenizer/Decoders.h"
#include "runtime/serving/tokenizer/Loader.h"
#include "runtime/serving/tokenizer/Models.h"
#include "runtime/serving/tokenizer/Normalizers.h"
#include "runtime/serving/tokenizer/PostProcessors.h"
#include "runtime/serving/tokenizer/PreTokenizers.h"
#include "runtime/serving/tokenizer/Text.h"
#include "runtime/serving/tokenizer/Unicode.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace accel::rt::tok {

using namespace detail;

namespace {

//===----------------------------------------------------------------------===//
// Added tokens
//===----------------------------------------------------------------------===//

struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool singleWord = false, lstrip = false, rstrip = false, normalized = true, special = false;
  bool operator==(const AddedToken &o) const {
    return content == o.content && singleWord == o.singleWord && lstrip == o.lstrip &&
           rstrip == o.rstrip && normalized == o.normalized && special == o.special;
  }
};

/// A byte trie of the added tokens, for leftmost-longest matching.
class Trie {
public:
  Trie() { nodes_.push_back(-1); }
  void insert(std::string_view s, int32_t value) {
    size_t n = 0;
    for (unsigned char b : s) {
      uint64_t key = (static_cast<uint64_t>(n) << 8) | b;
      auto it = edges_.find(key);
      if (it == edges_.end()) {
        nodes_.push_back(-1);
        it = edges_.emplace(key, nodes_.size() - 1).first;
      }
      n = it->second;
    }
    nodes_[n] = value;
  }
  bool empty() const { return nodes_.size() == 1; }
  /// The longest entry starting at s[pos]: its length (0: none) and value.
  size_t longestAt(std::string_view s, size_t pos, int32_t &value) const {
    size_t n = 0, best = 0;
    for (size_t i = pos; i < s.size(); ++i) {
      auto it = edges_.find((static_cast<uint64_t>(n) << 8) | static_cast<unsigned char>(s[i]));
      if (it == edges_.end())
        break;
      n = it->second;
      if (nodes_[n] >= 0) {
        best = i + 1 - pos;
        value = nodes_[n];
      }
    }
    return best;
  }

private:
  std::vector<int32_t> nodes_; // value per node, -1: not an entry
  std::unordered_map<uint64_t, size_t> edges_;
};

} // namespace

struct Tokenizer::Impl {
  std::unique_ptr<Model> model;
  std::vector<Normalizer> normalizers;
  std::vector<PreTokenizer> preTokenizers;
  std::vector<PostProcessor> post;
  bool hasDecoder = false;
  std::vector<Decoder> decoders;

  std::unordered_map<int32_t, AddedToken> addedById;
  std::unordered_map<std::string, int32_t> addedByContent;
  std::unordered_map<int32_t, std::string> normalizedContent; // for normalized tokens
  std::unordered_set<std::string> specialSet;
  Trie rawTrie, normTrie;

  std::optional<int32_t> bos, eos;

  void findAdded(std::string_view s, const Trie &trie,
                 std::vector<std::pair<std::pair<size_t, size_t>, int32_t>> &out) const;
  /// The ids of one sequence, without the post-processor's tokens.
  Status encodeSequence(std::string_view text, std::vector<int32_t> &ids) const;
};

namespace {

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

Status loadAddedTokens(const Loader &loader, const json::Value *list, Tokenizer::Impl &impl) {
  if (!list || list->isNull())
    return Status::ok();
  if (!list->isArray())
    return loader.bad("expected an array", "added_tokens");
  std::vector<AddedToken> tokens;
  for (size_t i = 0; i < list->size(); ++i) {
    const json::Value &t = list->items()[i];
    std::string path = "added_tokens[" + std::to_string(i) + "]";
    ACCEL_RT_RETURN_IF_ERROR(loader.expectObject(t, path));
    AddedToken tok;
    std::optional<std::string> content;
    ACCEL_RT_RETURN_IF_ERROR(loader.getString(t, "content", path, content, /*required=*/true));
    tok.content = *content;
    const json::Value *id = t.find("id");
    if (!id)
      return loader.bad("missing field 'id'", path);
    ACCEL_RT_RETURN_IF_ERROR(loader.getId(*id, path + ".id", tok.id));
    ACCEL_RT_RETURN_IF_ERROR(loader.getBool(t, "special", path, tok.special));
    tok.normalized = !tok.special;
    ACCEL_RT_RETURN_IF_ERROR(loader.getBool(t, "single_word", path, tok.singleWord));
    ACCEL_RT_RETURN_IF_ERROR(loader.getBool(t, "lstrip", path, tok.lstrip));
    ACCEL_RT_RETURN_IF_ERROR(loader.getBool(t, "rstrip", path, tok.rstrip));
    ACCEL_RT_RETURN_IF_ERROR(loader.getBool(t, "normalized", path, tok.normalized));
    tokens.push_back(std::move(tok));
  }
  // AddedVocabulary::add_tokens: a token the model (or an earlier added
  // token) knows keeps that id; the others are numbered from the model's
  // vocabulary size on, in order. The "id" in the file is not used, as
  // in tokenizers (which only warns when they differ).
  int64_t modelSize = static_cast<int64_t>(impl.model->vocabSize());
  int64_t nextId = modelSize;
  for (AddedToken &tok : tokens) {
    if (tok.content.empty())
      continue;
    auto known = impl.addedByContent.find(tok.content);
    if (known != impl.addedByContent.end()) {
      auto same = impl.addedById.find(known->second);
      if (same != impl.addedById.end() && same->second == tok)
        continue;
    }
    int32_t id;
    if (known != impl.addedByContent.end()) {
      id = known->second;
    } else if (std::optional<int32_t> m = impl.model->tokenToId(tok.content)) {
      id = *m;
    } else {
      if (nextId > std::numeric_limits<int32_t>::max())
        return loader.bad("too many added tokens", "added_tokens");
      id = static_cast<int32_t>(nextId++);
    }
    tok.id = id;
    if (tok.normalized && !impl.normalizers.empty()) {
      std::string n = normalize(impl.normalizers, tok.content);
      if (n != tok.content)
        impl.normalizedContent[id] = n;
    }
    impl.addedByContent[tok.content] = id;
    if (tok.special)
      impl.specialSet.insert(tok.content);
    impl.addedById[id] = tok;
  }
  // The two tries, from the final id -> token map.
  std::vector<int32_t> ids;
  for (const auto &[id, tok] : impl.addedById)
    ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (int32_t id : ids) {
    const AddedToken &tok = impl.addedById[id];
    if (tok.normalized) {
      auto n = impl.normalizedContent.find(id);
      const std::string &pattern = n != impl.normalizedContent.end() ? n->second : tok.content;
      if (!pattern.empty())
        impl.normTrie.insert(pattern, id);
    } else {
      impl.rawTrie.insert(tok.content, id);
    }
  }
  return Status::ok();
}

Status load(const Loader &loader, const json::Value &root, Tokenizer::Impl &impl) {
  ACCEL_RT_RETURN_IF_ERROR(loader.expectObject(root, "the top level"));
  std::optional<std::string> version;
  ACCEL_RT_RETURN_IF_ERROR(loader.getString(root, "version", "", version));
  if (version && *version != "1.0")
    return loader.bad("unknown tokenizer version " + json::quote(*version), "version");

  const json::Value *model = root.find("model");
  if (!model)
    return loader.bad("missing field 'model'", "the top level");
  ACCEL_RT_RETURN_IF_ERROR(loadModel(loader, *model, impl.model));

  if (const json::Value *n = root.find("normalizer"); n && !n->isNull())
    ACCEL_RT_RETURN_IF_ERROR(loadNormalizer(loader, *n, "normalizer", impl.normalizers));
  if (const json::Value *p = root.find("pre_tokenizer"); p && !p->isNull())
    ACCEL_RT_RETURN_IF_ERROR(loadPreTokenizer(loader, *p, "pre_tokenizer", impl.preTokenizers));
  if (const json::Value *p = root.find("post_processor"); p && !p->isNull())
    ACCEL_RT_RETURN_IF_ERROR(loadPostProcessor(loader, *p, "post_processor", impl.post));
  if (const json::Value *d = root.find("decoder"); d && !d->isNull()) {
    impl.hasDecoder = true;
    ACCEL_RT_RETURN_IF_ERROR(loadDecoder(loader, *d, "decoder", impl.decoders));
  }
  ACCEL_RT_RETURN_IF_ERROR(loadAddedTokens(loader, root.find("added_tokens"), impl));
  // "truncation" and "padding" are ignored: the runtime never truncates or
  // pads a prompt behind the caller's back.
  return Status::ok();
}

} // namespace

//===----------------------------------------------------------------------===//
// Encoding
//===----------------------------------------------------------------------===//

void Tokenizer::Impl::findAdded(
    std::string_view s, const Trie &trie,
    std::vector<std::pair<std::pair<size_t, size_t>, int32_t>> &out) const {
  // AddedVocabulary::find_matches; pieces that are not tokens carry -1.
  out.clear();
  if (s.empty())
    return;
  if (trie.empty()) {
    out.push_back({{0, s.size()}, -1});
    return;
  }
  size_t startOffset = 0;
  size_t pos = 0;
  while (pos < s.size()) {
    int32_t id = -1;
    size_t len = trie.longestAt(s, pos, id);
    if (len == 0) {
      ++pos;
      continue;
    }
    size_t start = pos, stop = pos + len;
    pos = stop; // the matcher resumes after the match, whatever happens to it
    const AddedToken &tok = addedById.at(id);
    if (tok.singleWord) {
      bool startSpace = start == 0 || !unicode::isWordChar(lastCodePoint(s.substr(0, start)));
      bool stopSpace = stop == s.size() || [&] {
        size_t l;
        return !unicode::isWordChar(unicode::decodeAt(s, stop, l));
      }();
      if (!startSpace || !stopSpace)
        continue;
    }
    if (tok.lstrip)
      start = std::max(trailingWhitespaceStart(s.substr(0, start)), startOffset);
    if (tok.rstrip)
      stop += leadingWhitespace(s.substr(stop));
    if (startOffset < start)
      out.push_back({{startOffset, start}, -1});
    out.push_back({{start, stop}, id});
    startOffset = stop;
  }
  if (startOffset < s.size())
    out.push_back({{startOffset, s.size()}, -1});
}

Status Tokenizer::Impl::encodeSequence(std::string_view text, std::vector<int32_t> &ids) const {
  std::vector<std::pair<std::pair<size_t, size_t>, int32_t>> raw, norm;
  findAdded(text, rawTrie, raw);
  for (const auto &[range, id] : raw) {
    if (id >= 0) {
      ids.push_back(id);
      continue;
    }
    auto [start, end] = range;
    if (end <= start)
      continue;
    bool atOrigin = start == 0;
    std::string normalized =
        normalize(normalizers, std::string(text.substr(start, end - start)), &atOrigin);
    findAdded(normalized, normTrie, norm);
    for (const auto &[r2, id2] : norm) {
      if (id2 >= 0) {
        ids.push_back(id2);
        continue;
      }
      if (r2.second <= r2.first)
        continue;
      Piece piece{normalized.substr(r2.first, r2.second - r2.first),
                  atOrigin && r2.first == 0};
      for (const Piece &word : preTokenize(preTokenizers, std::move(piece)))
        ACCEL_RT_RETURN_IF_ERROR(model->tokenize(word.text, ids));
    }
  }
  return Status::ok();
}

StatusOr<Tokenizer> Tokenizer::fromJson(std::string_view text, const std::string &name) {
  json::ParseOptions opts;
  opts.maxDepth = 128;
  StatusOr<json::Value> root = json::parse(text, opts);
  if (!root.isOk())
    return invalidArgument(name + ": " + root.status().message());
  auto impl = std::make_shared<Impl>();
  ACCEL_RT_RETURN_IF_ERROR(load(Loader(name), *root, *impl));

  // BOS / EOS (see the header for the rule).
  impl->bos = leadingSpecial(impl->post);
  auto findSpecial = [&](std::initializer_list<const char *> names) -> std::optional<int32_t> {
    std::optional<int32_t> best;
    for (const char *n : names) {
      auto it = impl->addedByContent.find(n);
      if (it == impl->addedByContent.end() || !impl->specialSet.count(n))
        continue;
      if (!best || it->second < *best)
        best = it->second;
    }
    return best;
  };
  if (!impl->bos)
    impl->bos = findSpecial({"<|begin_of_text|>", "<s>", "<bos>", "<|startoftext|>"});
  impl->eos = findSpecial(
      {"</s>", "<eos>", "<|endoftext|>", "<|end_of_text|>", "<|im_end|>", "<|eot_id|>", "<|end|>"});
  return Tokenizer(std::move(impl));
}

StatusOr<Tokenizer> Tokenizer::fromFile(const std::string &path) {
  // Only a regular file (a FIFO would block), read up to its size.
  StatusOr<std::string> json = readRegularFile(path, "tokenizer");
  if (!json)
    return json.status();
  return fromJson(*json, path);
}

namespace {
Status checkUtf8(std::string_view text) {
  size_t bad = unicode::findInvalidUtf8(text);
  if (bad != std::string_view::npos)
    return invalidArgument("encode: the text is not valid UTF-8 (at byte " +
                           std::to_string(bad) + ")");
  return Status::ok();
}
} // namespace

StatusOr<std::vector<int32_t>> Tokenizer::encode(std::string_view text,
                                                 bool addSpecialTokens) const {
  if (!impl_)
    return invalidArgument("encode: the tokenizer is not loaded");
  ACCEL_RT_RETURN_IF_ERROR(checkUtf8(text));
  std::vector<int32_t> ids;
  ACCEL_RT_RETURN_IF_ERROR(impl_->encodeSequence(text, ids));
  if (impl_->post.empty())
    return ids;
  return postProcess(impl_->post, std::move(ids), nullptr, addSpecialTokens);
}

StatusOr<std::vector<int32_t>> Tokenizer::encodePair(std::string_view a, std::string_view b,
                                                     bool addSpecialTokens) const {
  if (!impl_)
    return invalidArgument("encode: the tokenizer is not loaded");
  ACCEL_RT_RETURN_IF_ERROR(checkUtf8(a));
  ACCEL_RT_RETURN_IF_ERROR(checkUtf8(b));
  std::vector<int32_t> ia, ib;
  ACCEL_RT_RETURN_IF_ERROR(impl_->encodeSequence(a, ia));
  ACCEL_RT_RETURN_IF_ERROR(impl_->encodeSequence(b, ib));
  return postProcess(impl_->post, std::move(ia), &ib, addSpecialTokens);
}

//===----------------------------------------------------------------------===//
// Decoding
//===----------------------------------------------------------------------===//

std::string Tokenizer::decode(const std::vector<int32_t> &ids, bool skipSpecialTokens) const {
  if (!impl_)
    return std::string();
  const Impl &m = *impl_;
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    const std::string *tok = nullptr;
    auto added = m.addedById.find(id);
    if (added != m.addedById.end()) {
      auto n = m.normalizedContent.find(id);
      tok = n != m.normalizedContent.end() ? &n->second : &added->second.content;
    } else {
      tok = m.model->idToToken(id);
    }
    if (!tok)
      continue;
    if (skipSpecialTokens && m.specialSet.count(*tok))
      continue;
    tokens.push_back(*tok);
  }
  if (!m.hasDecoder) {
    std::string out;
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i)
        out += ' ';
      out += tokens[i];
    }
    return out;
  }
  std::string out;
  for (const std::string &t : decodeChain(m.decoders, std::move(tokens)))
    out += t;
  return out;
}

//===----------------------------------------------------------------------===//
// Vocabulary
//===----------------------------------------------------------------------===//

int64_t Tokenizer::vocabSize() const {
  if (!impl_)
    return 0;
  int64_t n = static_cast<int64_t>(impl_->model->vocabSize());
  for (const auto &[content, id] : impl_->addedByContent)
    if (!impl_->model->tokenToId(content))
      ++n;
  return n;
}

int64_t Tokenizer::idLimit() const {
  if (!impl_)
    return 0;
  int64_t limit = impl_->model->idLimit();
  for (const auto &[id, tok] : impl_->addedById)
    limit = std::max<int64_t>(limit, int64_t(id) + 1);
  return limit;
}

std::optional<int32_t> Tokenizer::tokenToId(std::string_view token) const {
  if (!impl_)
    return std::nullopt;
  auto it = impl_->addedByContent.find(std::string(token));
  if (it != impl_->addedByContent.end())
    return it->second;
  return impl_->model->tokenToId(token);
}

std::optional<std::string> Tokenizer::idToToken(int32_t id) const {
  if (!impl_)
    return std::nullopt;
  auto it = impl_->addedById.find(id);
  if (it != impl_->addedById.end()) {
    auto n = impl_->normalizedContent.find(id);
    return n != impl_->normalizedContent.end() ? n->second : it->second.content;
  }
  if (const std::string *t = impl_->model->idToToken(id))
    return *t;
  return std::nullopt;
}

std::optional<std::string> Tokenizer::tokenBytes(int32_t id) const {
  if (!impl_)
    return std::nullopt;
  const Impl &m = *impl_;
  const std::string *tok = nullptr;
  auto added = m.addedById.find(id);
  if (added != m.addedById.end()) {
    if (added->second.special)
      return std::nullopt;
    auto n = m.normalizedContent.find(id);
    tok = n != m.normalizedContent.end() ? &n->second : &added->second.content;
  } else {
    tok = m.model->idToToken(id);
  }
  if (!tok || m.specialSet.count(*tok))
    return std::nullopt;
  if (!m.hasDecoder)
    return " " + *tok; // decode() joins tokens with spaces
  std::string out;
  for (const std::string &t : decodeChain(m.decoders, {*tok}, /*midText=*/true))
    out += t;
  return out;
}

bool Tokenizer::isSpecial(int32_t id) const {
  if (!impl_)
    return false;
  auto it = impl_->addedById.find(id);
  return it != impl_->addedById.end() && it->second.special;
}

std::optional<int32_t> Tokenizer::bosId() const {
  return impl_ ? impl_->bos : std::nullopt;
}

std::optional<int32_t> Tokenizer::eosId() const {
  return impl_ ? impl_->eos : std::nullopt;
}

//===----------------------------------------------------------------------===//
// DecodeStream
//===----------------------------------------------------------------------===//

DecodeStream::DecodeStream(Tokenizer tokenizer, bool skipSpecialTokens)
    : tok_(std::move(tokenizer)), skipSpecial_(skipSpecialTokens) {}

void DecodeStream::reset() {
  ids_.clear();
  prefix_.clear();
  prefixIndex_ = 0;
}

namespace {
bool endsWithReplacement(const std::string &s) {
  return s.size() >= 3 && s.compare(s.size() - 3, 3, "\xEF\xBF\xBD") == 0;
}
} // namespace

StatusOr<std::string> DecodeStream::step(int32_t id) {
  // tokenizers' step_decode_stream.
  if (prefix_.empty() && !ids_.empty()) {
    std::string newPrefix = tok_.decode(ids_, skipSpecial_);
    if (!endsWithReplacement(newPrefix)) {
      prefix_ = std::move(newPrefix);
      prefixIndex_ = ids_.size();
    }
  }
  ids_.push_back(id);
  std::string text = tok_.decode(ids_, skipSpecial_);
  if (text.size() > prefix_.size() && !endsWithReplacement(text)) {
    if (text.compare(0, prefix_.size(), prefix_) != 0)
      return internalError("decode stream: the decoder rewrote text already returned (" +
                           json::quote(prefix_) + " is no longer a prefix of " +
                           json::quote(text) + ")");
    std::string newText = text.substr(prefix_.size());
    size_t newPrefixIndex = ids_.size() - prefixIndex_;
    ids_.erase(ids_.begin(), ids_.begin() + static_cast<long>(prefixIndex_));
    prefix_ = tok_.decode(ids_, skipSpecial_);
    prefixIndex_ = newPrefixIndex;
    return newText;
  }
  return std::string();
}

} // namespace accel::rt::tok
