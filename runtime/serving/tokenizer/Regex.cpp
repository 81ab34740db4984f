//===- Regex.cpp - Oniguruma regexes for tokenizer.json -------------------===//
#include "runtime/serving/tokenizer/Regex.h"

#include "runtime/serving/tokenizer/Unicode.h"

#ifdef ACCEL_HAVE_ONIGURUMA
#include <oniguruma.h>

#include <dlfcn.h>
#endif

#include <string>

namespace accel::rt::tok::detail {

#ifndef ACCEL_HAVE_ONIGURUMA

// Built without Oniguruma's header (libonig-dev): only the hand-written
// scanners and literal patterns are available.
struct Regex::Compiled {};

StatusOr<Regex> Regex::compile(std::string_view) {
  return unimplemented("this build of accel has no Oniguruma (install libonig-dev and rebuild)");
}
const char *Regex::engineVersion() { return ""; }
std::vector<Segment> Regex::findSegments(std::string_view text) const {
  return {{0, text.size(), false}};
}
std::string Regex::replaceAll(std::string_view text, std::string_view) const {
  return std::string(text);
}

#else


namespace {

/// Oniguruma, opened with dlopen on first use: programs that link the
/// tokenizer (accel-run, accelc, libaccel.so) start on machines without
/// libonig.so.5, and only a tokenizer.json that needs a general regex
/// needs it (the loader says so in one sentence).
struct Onig {
  decltype(&::onig_initialize) initialize = nullptr;
  decltype(&::onig_new) compile = nullptr;
  decltype(&::onig_free) free = nullptr;
  decltype(&::onig_search) search = nullptr;
  decltype(&::onig_region_new) regionNew = nullptr;
  decltype(&::onig_region_free) regionFree = nullptr;
  decltype(&::onig_region_clear) regionClear = nullptr;
  decltype(&::onig_error_code_to_str) errorString = nullptr;
  decltype(&::onig_version) version = nullptr;
  OnigEncoding utf8 = nullptr;
  OnigSyntaxType *syntax = nullptr;
  std::string error; // why it is not available, "" when it is

  Onig() {
    const char *lib = "libonig.so.5";
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      error = std::string("Oniguruma (") + lib + ", Debian's libonig5) cannot be loaded: " +
              dlerror();
      return;
    }
    auto sym = [&](const char *name) {
      void *p = dlsym(h, name);
      if (!p && error.empty())
        error = std::string(lib) + " lacks " + name;
      return p;
    };
    initialize = reinterpret_cast<decltype(initialize)>(sym("onig_initialize"));
    compile = reinterpret_cast<decltype(compile)>(sym("onig_new"));
    free = reinterpret_cast<decltype(free)>(sym("onig_free"));
    search = reinterpret_cast<decltype(search)>(sym("onig_search"));
    regionNew = reinterpret_cast<decltype(regionNew)>(sym("onig_region_new"));
    regionFree = reinterpret_cast<decltype(regionFree)>(sym("onig_region_free"));
    regionClear = reinterpret_cast<decltype(regionClear)>(sym("onig_region_clear"));
    errorString = reinterpret_cast<decltype(errorString)>(sym("onig_error_code_to_str"));
    version = reinterpret_cast<decltype(version)>(sym("onig_version"));
    utf8 = static_cast<OnigEncoding>(sym("OnigEncodingUTF8"));
    auto **defaultSyntax = static_cast<OnigSyntaxType **>(sym("OnigDefaultSyntax"));
    if (!error.empty())
      return;
    syntax = *defaultSyntax;
    OnigEncoding encodings[] = {utf8};
    if (initialize(encodings, 1) != ONIG_NORMAL)
      error = std::string(lib) + " failed to initialize";
  }
};

const Onig &onig() {
  static const Onig kOnig;
  return kOnig;
}

} // namespace

struct Regex::Compiled {
  OnigRegex re = nullptr;
  ~Compiled() {
    if (re)
      onig().free(re);
  }
};

namespace {

const OnigUChar *bytes(std::string_view s) {
  return reinterpret_cast<const OnigUChar *>(s.data());
}

} // namespace

StatusOr<Regex> Regex::compile(std::string_view pattern) {
  const Onig &o = onig();
  if (!o.error.empty())
    return unimplemented(o.error);
  auto compiled = std::make_shared<Compiled>();
  OnigErrorInfo info;
  int r = o.compile(&compiled->re, bytes(pattern), bytes(pattern) + pattern.size(),
                    ONIG_OPTION_NONE, o.utf8, o.syntax, &info);
  if (r != ONIG_NORMAL) {
    compiled->re = nullptr;
    OnigUChar msg[ONIG_MAX_ERROR_MESSAGE_LEN];
    o.errorString(msg, r, &info);
    return invalidArgument(reinterpret_cast<const char *>(msg));
  }
  Regex out;
  out.re_ = std::move(compiled);
  return out;
}

const char *Regex::engineVersion() {
  const Onig &o = onig();
  return o.error.empty() ? o.version() : "";
}

std::vector<Segment> Regex::findSegments(std::string_view text) const {
  std::vector<Segment> out;
  if (text.empty()) {
    out.push_back({0, 0, false});
    return out;
  }
  const Onig &o = onig();
  OnigRegion *region = o.regionNew();
  const OnigUChar *begin = bytes(text), *end = begin + text.size();
  // onig's FindMatches: search from lastEnd; an empty match at the end of
  // the previous match is skipped by moving on one character.
  size_t lastEnd = 0, prev = 0;
  bool haveLastMatch = false;
  size_t lastMatchEnd = 0;
  while (lastEnd <= text.size()) {
    o.regionClear(region);
    int r = o.search(re_->re, begin, end, begin + lastEnd, end, region, ONIG_OPTION_NONE);
    if (r < 0) // ONIG_MISMATCH, or an error (a retry limit): the end, as in onig
      break;
    size_t s = static_cast<size_t>(region->beg[0]), e = static_cast<size_t>(region->end[0]);
    if (e == s && haveLastMatch && lastMatchEnd == e) {
      lastEnd += lastEnd < text.size()
                     ? unicode::utf8SequenceLength(static_cast<unsigned char>(text[lastEnd]))
                     : 1;
      continue;
    }
    lastEnd = e;
    haveLastMatch = true;
    lastMatchEnd = e;
    if (prev != s)
      out.push_back({prev, s, false});
    out.push_back({s, e, true});
    prev = e;
  }
  o.regionFree(region, 1);
  if (prev != text.size())
    out.push_back({prev, text.size(), false});
  return out;
}

std::string Regex::replaceAll(std::string_view text, std::string_view content) const {
  std::string out;
  out.reserve(text.size());
  for (const Segment &s : findSegments(text)) {
    if (s.isMatch)
      out.append(content);
    else
      out.append(text.data() + s.start, s.end - s.start);
  }
  return out;
}

#endif // ACCEL_HAVE_ONIGURUMA

} // namespace accel::rt::tok::detail
