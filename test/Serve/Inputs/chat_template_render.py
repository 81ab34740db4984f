#!/usr/bin/env python3
"""Renders every chat template fixture with accel's Jinja interpreter
(accel-run PLAN --render-chat) and with transformers' (render_jinja_template,
what apply_chat_template(tokenize=False) runs), over conversations with and
without a system message, multi-turn, with tools and tool calls (templates
that take them), a continued final message, and add_generation_prompt true
and false; the texts must be equal byte for byte, and where transformers'
template raises (raise_exception), accel must refuse with the same message.

usage: chat_template_render.py ACCEL_RUN PLAN FIXTURE_DIR WORK_DIR
The plan must carry bos_token <s> and eos_token </s> (its tokenizer_config.json).
"""
import json
import os
import random
import subprocess
import sys

from transformers.utils.chat_template_utils import render_jinja_template

sys.path.insert(0, os.path.dirname(__file__))
from serve_util import chat_templates  # noqa: E402

accel_run, plan, fixtures, work = sys.argv[1:5]
SPECIAL = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"}

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the weather in a city, in °C or °F.",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "The city, e.g. \"Paris\""},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 7.5}},
        "required": ["city"]}}}
CALC = {"type": "function", "function": {"name": "add", "description": "Add two numbers.",
                                         "parameters": {"type": "object", "properties": {
                                             "a": {"type": "number"}, "b": {"type": "number"}}}}}

SYS = {"role": "system", "content": "You are a terse assistant.\nAnswer in one line."}
U1 = {"role": "user", "content": "  What is the capital of France?  "}
A1 = {"role": "assistant", "content": "Paris."}
U2 = {"role": "user", "content": "And of Japan? Écris-le en 日本語 too."}
CALL = {"role": "assistant", "content": "", "tool_calls": [
    {"id": "call12345", "type": "function",
     "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}}]}
RESULT = {"role": "tool", "tool_call_id": "call12345", "content": "{\"temp\": 21.5}"}

CONVERSATIONS = {
    "user": [U1],
    "system_user": [SYS, U1],
    "multi_turn": [SYS, U1, A1, U2],
    "multi_turn_no_system": [U1, A1, U2],
    "unicode_and_spaces": [{"role": "user", "content": "\t naïve café — ☕ \n\n"}],
}
TOOL_CONVERSATIONS = {
    "tools": ([U1], [WEATHER, CALC]),
    "tools_system": ([SYS, U1], [WEATHER]),
    "tool_call_and_result": ([U1, CALL, RESULT], [WEATHER]),
}
# Random conversations (fixed seed) of tricky contents: template syntax inside
# the data, special-token text, quotes and backslashes, whitespace at either
# end, reasoning blocks (Qwen3 splits assistant messages at </think>).
PIECES = ["", " ", "\n", "hi", "{{ messages }}", "{% if true %}x{% endif %}", "<|im_end|>",
          "'\"\\", "日本語", "emoji 🎉", "a\tb", "  padded  ", "<think>\nplan\n</think>\n\nanswer",
          "before</think>after", "[INST]", "line1\nline2\n"]


def random_conversations(rng, n):
    out = {}
    for k in range(n):
        msgs = []
        if rng.random() < 0.5:
            msgs.append({"role": "system", "content": "".join(rng.choice(PIECES) for _ in range(2))})
        for t in range(rng.randint(1, 4)):
            role = "user" if t % 2 == 0 else "assistant"
            msgs.append({"role": role, "content": "".join(rng.choice(PIECES) for _ in range(3))})
        out[f"random{k}"] = msgs
    return out


# Templates that render tools (the others ignore them, so tools add nothing there).
TAKES_TOOLS = {"llama-3.1-8b-instruct", "qwen2.5-instruct", "qwen3", "mistral-7b-instruct-v0.3"}


def ours(template_path, chat):
    path = os.path.join(work, "chat.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(chat, f, ensure_ascii=False)
    r = subprocess.run([accel_run, plan, "--render-chat", path, "--chat-template", template_path],
                       capture_output=True)
    if r.returncode != 0:
        return None, r.stderr.decode().strip()
    return r.stdout.decode("utf-8"), None


def theirs(source, chat):
    try:
        out, _ = render_jinja_template(
            conversations=[chat["messages"]], tools=chat.get("tools"), chat_template=source,
            add_generation_prompt=chat["add_generation_prompt"],
            continue_final_message=chat.get("continue_final_message", False), **SPECIAL)
        return out[0], None
    except Exception as e:  # raise_exception: jinja2's TemplateError
        return None, str(e)


failures = []
checked = 0
for name, path, source in chat_templates(fixtures):
    rng = random.Random(24)
    cases = [(k, {"messages": m}) for k, m in CONVERSATIONS.items()]
    cases += [(k, {"messages": m}) for k, m in random_conversations(rng, 6).items()]
    if name in TAKES_TOOLS:
        cases += [(k, {"messages": m, "tools": t}) for k, (m, t) in TOOL_CONVERSATIONS.items()]
    cases.append(("continue_final", {"messages": [U1, {"role": "assistant", "content": "The capital is"}],
                                     "continue_final_message": True}))
    for case, chat in cases:
        for gen in ([False] if chat.get("continue_final_message") else [True, False]):
            chat = dict(chat, add_generation_prompt=gen)
            want, want_err = theirs(source, chat)
            got, got_err = ours(path, chat)
            checked += 1
            label = f"{name} / {case} / add_generation_prompt={gen}"
            if want_err is not None:
                if got_err is None or want_err not in got_err:
                    failures.append(f"{label}: transformers raised {want_err!r}, accel gave "
                                    f"{got_err if got_err else repr(got)}")
                continue
            if got_err is not None:
                failures.append(f"{label}: accel failed: {got_err}")
            elif got != want:
                failures.append(f"{label}: differs\n  transformers: {want!r}\n  accel:        {got!r}")

for f in failures:
    print("FAIL", f)
print(f"chat templates: {checked - len(failures)} of {checked} renderings equal to transformers'")
sys.exit(1 if failures else 0)
