//===- PostProcessors.h - the post-processors of tokenizer.json (internal) -*- C++ -*-===//
//
// TemplateProcessing (single and pair templates), RobertaProcessing,
// BertProcessing, ByteLevel (nothing to do for ids) and Sequence: the
// special tokens put around one sequence or a pair.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_TOKENIZER_POSTPROCESSORS_H
#define ACCEL_RUNTIME_SERVING_TOKENIZER_POSTPROCESSORS_H

#include "runtime/serving/tokenizer/Loader.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace accel::rt::tok::detail {

struct PostProcessor {
  struct Item {
    enum class Kind { kSpecial, kA, kB } kind;
    std::vector<int32_t> ids; // kSpecial
  };
  std::vector<Item> single, pair;
};

/// Appends the post-processor at `path` (a Sequence flattened) to `out`.
Status loadPostProcessor(const Loader &loader, const json::Value &v, const std::string &path,
                         std::vector<PostProcessor> &out);

/// The ids of sequence `a` (and `b` for a pair) through every processor in
/// turn: a template's sequences in its order, its special tokens only when
/// `addSpecialTokens`. A pair without processors is a then b.
std::vector<int32_t> postProcess(const std::vector<PostProcessor> &processors,
                                 std::vector<int32_t> a, const std::vector<int32_t> *b,
                                 bool addSpecialTokens);

/// The first special token the first processor puts before a single
/// sequence, if any (the BOS).
std::optional<int32_t> leadingSpecial(const std::vector<PostProcessor> &processors);

} // namespace accel::rt::tok::detail

#endif // ACCEL_RUNTIME_SERVING_TOKENIZER_POSTPROCESSORS_H
