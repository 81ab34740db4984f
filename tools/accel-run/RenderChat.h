//===- RenderChat.h - accel-run --render-chat ---------------------*- C++ -*-===//
//
//   accel-run model.plan --render-chat chat.json [--chat-template T] [--print-ids]
//
// Prints the prompt the server would build for a chat request: the plan's
// chat template (or --chat-template's) rendered over chat.json, which is a
// list of messages or an object with `messages` and optionally `tools`,
// `documents`, `add_generation_prompt` (default true),
// `continue_final_message` and `chat_template_kwargs`. The text goes to
// stdout as it is (no newline added); with --print-ids, the token ids the
// server would encode it to follow on stderr.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_TOOLS_ACCEL_RUN_RENDERCHAT_H
#define ACCEL_TOOLS_ACCEL_RUN_RENDERCHAT_H

#include "core/Status.h"
#include "runtime/plan/PlanFile.h"

#include <string>

namespace accel::rt {

Status renderChat(const std::string &planPath, const plan::LoadOptions &load,
                  const std::string &chatJsonPath, const std::string &chatTemplate,
                  bool printIds);

} // namespace accel::rt

#endif // ACCEL_TOOLS_ACCEL_RUN_RENDERCHAT_H
