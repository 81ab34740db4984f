#!/usr/bin/env python3
"""The first bar of issue 24, chat-template half: the official `openai` client
against accel-run serving the demo plan with --chat-template of each fixture;
the prompt ids the server uses (POST /tokenize with `messages`, and
usage.prompt_tokens of a chat completion) must equal transformers'
apply_chat_template(messages, tokenize=True, add_generation_prompt=True) with
the demo's tokenizer (PreTrainedTokenizerFast(tokenizer_file=...)) and the
same template. A template's raise_exception must come back as a 400 carrying
its message. Also /tokenize with a prompt, /detokenize and /version.

For the templates that render tools (Llama-3.1, Qwen2.5, Qwen3, Mistral), the
same with `tools` and with a tool call and its result in the conversation:
the client sends OpenAI's form (the call's arguments a JSON string, the
assistant's content null); transformers gets what vLLM passes a template
(the arguments as the object the string holds, the content "").

The plan is compiled with a tokenizer_config.json whose bos_token and
eos_token are "<|endoftext|>", the demo vocabulary's one special (added)
token, so that both tokenizers split it out of the rendered text as id 0;
the templates' own markers (<|im_start|>, [INST], <start_of_turn>, ...) are
not in the demo's vocabulary, and both tokenizers encode them as byte-level
BPE pieces (the script checks that the two agree on every rendered text).

usage: chat_template_served.py ACCEL_RUN PLAN TOKENIZER_JSON FIXTURE_DIR
"""
import copy
import json
import os
import sys

import openai
from transformers import PreTrainedTokenizerFast

sys.path.insert(0, os.path.dirname(__file__))
from serve_util import Server, chat_templates, check, failures  # noqa: E402

accel_run, plan, tokenizer_json, fixtures = sys.argv[1:5]
SPECIAL = "<|endoftext|>"

SYS = {"role": "system", "content": "You are a terse assistant."}
U1 = {"role": "user", "content": "What is the capital of France?"}
A1 = {"role": "assistant", "content": "Paris."}
U2 = {"role": "user", "content": "And of Japan? Écris-le en 日本語."}
CONVERSATIONS = {"user": [U1], "system": [SYS, U1], "multi_turn": [SYS, U1, A1, U2],
                 "multi_turn_no_system": [U1, A1, U2]}
# Tools: one of a name only, so that the prompts fit the demo's 512 positions
# (chat_template_render.py renders full schemas). The call id is 9 letters
# and digits, as Mistral's template requires.
TOOLS = [{"type": "function", "function": {"name": "get_weather"}}]
CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call12345", "type": "function",
     "function": {"name": "get_weather", "arguments": "{\"city\":\"Zürich\"}"}}]}
RESULT = {"role": "tool", "tool_call_id": "call12345", "content": "{\"temp\": 21.5}"}
TOOL_CONVERSATIONS = {"tools": [U1], "tool_call_and_result": [U1, CALL, RESULT],
                      "tools_system": [SYS, U1]}
TAKES_TOOLS = {"llama-3.1-8b-instruct", "qwen2.5-instruct", "qwen3", "mistral-7b-instruct-v0.3"}
# Gemma 2 has no system role: its template raises, and the server must say so.
RAISES = {("gemma-2-it", "system"): "System role not supported",
          ("gemma-2-it", "multi_turn"): "System role not supported"}


def template_messages(messages):
    """The messages as vLLM passes them to a template: an assistant's
    tool-call arguments as the object their JSON string holds, null content
    as ""."""
    out = copy.deepcopy(messages)
    for m in out:
        if m.get("tool_calls"):
            m["content"] = m.get("content") or ""
            for c in m["tool_calls"]:
                args = c["function"].get("arguments")
                c["function"]["arguments"] = json.loads(args) if args else {}
    return out


def hf_ids(tok, messages, tools=None):
    out = tok.apply_chat_template(template_messages(messages), tools=tools, tokenize=True,
                                  add_generation_prompt=True)
    if isinstance(out, dict) or hasattr(out, "keys"):
        out = out["input_ids"]
    return list(out)


def run_conversations(name, tok, server, client):
    """The fixture's conversations against one server; the number that match."""
    equal = 0
    cases = [(case, messages, None) for case, messages in CONVERSATIONS.items()]
    if name in TAKES_TOOLS:
        cases += [(case, messages, TOOLS) for case, messages in TOOL_CONVERSATIONS.items()]
    for case, messages, tools in cases:
        label = f"{name} / {case}"
        if (name, case) in RAISES:
            want = RAISES[(name, case)]
            status, _, body = server.request("POST", "/tokenize", {"messages": messages})
            err = json.loads(body).get("error", {})
            check(status == 400 and err.get("message") == want,
                  f"{label}: /tokenize is 400 with the template's message {want!r}")
            try:
                client.chat.completions.create(model="demo", messages=messages, max_tokens=1)
                check(False, f"{label}: the chat completion is refused")
            except openai.BadRequestError as e:
                check(e.status_code == 400 and want in str(e),
                      f"{label}: the chat completion is 400 with {want!r}")
            continue
        want = hf_ids(tok, messages, tools)
        if "bos_token" in tok.chat_template and (not want or want[0] != 0):
            check(False, f"{label}: the template's bos_token is id 0 (<|endoftext|>)")
        text = tok.apply_chat_template(template_messages(messages), tools=tools, tokenize=False,
                                       add_generation_prompt=True)
        # The two tokenizers agree on the rendered text itself.
        status, _, body = server.request("POST", "/tokenize",
                                         {"prompt": text, "add_special_tokens": False})
        same_text = status == 200 and json.loads(body)["tokens"] == tok.encode(
            text, add_special_tokens=False)
        extra = {"tools": tools} if tools else {}
        status, _, body = server.request("POST", "/tokenize", {"messages": messages, **extra})
        got = json.loads(body).get("tokens") if status == 200 else body.decode()
        r = client.chat.completions.create(model="demo", messages=messages, max_tokens=1,
                                           temperature=0, **extra)
        ok = same_text and got == want and r.usage.prompt_tokens == len(want)
        if not ok:
            print(f"FAIL {label}: transformers {want}\n     accel /tokenize {got}\n"
                  f"     usage.prompt_tokens {r.usage.prompt_tokens}, same text ids {same_text}")
            failures.append(label)
        equal += ok
    return equal


total = 0
for name, path, source in chat_templates(fixtures):
    tok = PreTrainedTokenizerFast(tokenizer_file=tokenizer_json, bos_token=SPECIAL,
                                  eos_token=SPECIAL)
    tok.chat_template = source
    server = Server(accel_run, plan, ["--chat-template", path, "--served-model-name", "demo"])
    client = openai.OpenAI(base_url=server.base + "/v1", api_key="none", max_retries=0)
    try:
        equal = run_conversations(name, tok, server, client)
    except BaseException:
        server.proc.kill()
        raise
    total += equal
    check(server.stop() == 0, f"{name}: {equal} conversations with transformers' prompt ids; "
          "accel-run exits 0")

# /tokenize with a prompt, /detokenize, /version (the last server's).
server = Server(accel_run, plan, [])
tok = PreTrainedTokenizerFast(tokenizer_file=tokenizer_json)
text = "In the beginning God created the heaven and the earth."
status, _, body = server.request("POST", "/tokenize", {"prompt": text})
r = json.loads(body)
check(status == 200 and r["tokens"] == tok.encode(text) and r["count"] == len(r["tokens"])
      and r["max_model_len"] == 512, "/tokenize with a prompt: transformers' ids, count, max_model_len")
# A body over 64 KiB is tokenized off the IO threads: the same answer.
long_text = text * 2000
status, _, body = server.request("POST", "/tokenize", {"prompt": long_text})
check(status == 200 and json.loads(body)["tokens"] == tok.encode(long_text),
      f"/tokenize of a {len(long_text)}-byte prompt (worker pool): transformers' ids")
status, _, body = server.request("POST", "/detokenize", {"tokens": r["tokens"]})
check(status == 200 and json.loads(body) == {"prompt": text}, "/detokenize gives the text back")
status, _, body = server.request("GET", "/version")
check(status == 200 and "version" in json.loads(body), "/version")
# Bad bodies: 4xx with one sentence naming the field.
for path, body, want_status, want in [
        ("/tokenize", {"prompt": "a", "messages": [U1]}, 400,
         "give either 'prompt' or 'messages' to /tokenize, not both"),
        ("/tokenize", {}, 400, "/tokenize needs 'prompt' (a string) or 'messages'"),
        ("/tokenize", {"prompt": "a", "max_tokens": 3}, 400,
         "unknown parameter 'max_tokens' for /tokenize with a prompt"),
        ("/tokenize", {"prompt": [1, 2]}, 400, "'prompt' must be a string for /tokenize"),
        ("/tokenize", {"messages": [{"role": "function", "content": "x"}]}, 400,
         "'messages[0].role' is 'function'; supported roles are system, developer, user, "
         "assistant, tool"),
        ("/tokenize", {"prompt": "a", "model": "other"}, 404, "The model `other` does not exist."),
        ("/detokenize", {"tokens": [1, 99999]}, 400,
         "tokens[1] is 99999, not a token id of this model (vocabulary of 2048)"),
        ("/detokenize", {"tokens": "1"}, 400, "/detokenize needs 'tokens', an array of token ids"),
        ("/detokenize", b"{", 400, None)]:
    status, _, raw = server.request("POST", path, body)
    msg = json.loads(raw)["error"]["message"]
    check(status == want_status and (want is None or msg == want),
          f"POST {path} {body!r}: {status} {msg!r}")
status, hdrs, _ = server.request("GET", "/tokenize")
check(status == 405 and hdrs.get("Allow") == "POST", "GET /tokenize: 405, Allow: POST")
status, _, _ = server.request("POST", "/tokenize", b"{}", headers={"Content-Type": "text/plain"})
check(status == 415, "POST /tokenize as text/plain: 415")
check(server.stop() == 0, "accel-run exits 0")
# With an API key, /tokenize and /detokenize need it as /v1/ does; /version does not.
server = Server(accel_run, plan, ["--api-key", "k3y"])
status, _, _ = server.request("POST", "/tokenize", {"prompt": "a"})
check(status == 401, "/tokenize without the API key: 401")
status, _, _ = server.request("POST", "/detokenize", {"tokens": [1]},
                              headers={"Authorization": "Bearer k3y"})
check(status == 200, "/detokenize with the API key: 200")
status, _, _ = server.request("GET", "/version")
check(status == 200, "/version without the API key: 200")
check(server.stop() == 0, "accel-run exits 0")
print(f"served chat templates: {total} conversations compared")
sys.exit(1 if failures else 0)
