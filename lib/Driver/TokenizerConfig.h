//===- TokenizerConfig.h - the chat template a plan carries -----*- C++ -*-===//
//
// Internal to lib/Driver. Reads HF's tokenizer_config.json: its
// `chat_template` (a string, or a list of {name, template}) or, without one,
// chat_template.jinja beside it (what newer transformers save), and the
// special-token strings templates read (bos_token, eos_token, unk_token,
// pad_token: a string or an AddedToken object's `content`). Each template is
// parsed once here so that a template accel's interpreter cannot run is
// reported at compile time (a warning: the plan still carries it, and
// accel-run refuses it in one sentence unless --chat-template is given).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_LIB_DRIVER_TOKENIZERCONFIG_H
#define ACCEL_LIB_DRIVER_TOKENIZERCONFIG_H

#include "accel/Plan/PlanWriter.h"
#include "core/Status.h"

#include <functional>
#include <string>

namespace accel::driver {

/// Fills options.chatTemplates / specialTokens / chatTemplateOrigin from
/// `configPath` (a tokenizer_config.json; chat_template.jinja is looked for
/// in its folder). An unreadable or malformed file is an error naming it.
rt::Status readChatTemplates(const std::string &configPath, plan::PlanOptions &options,
                             const std::function<void(const std::string &)> &warn);

} // namespace accel::driver

#endif // ACCEL_LIB_DRIVER_TOKENIZERCONFIG_H
