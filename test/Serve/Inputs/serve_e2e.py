#!/usr/bin/env python3
"""End-to-end test of accel-run's OpenAI-compatible server on the demo plan.

Starts `accel-run PLAN --port 0`, then talks to it with the official openai
client (and raw HTTP where the client cannot send what is tested):
completions and chat, streaming and not; greedy text equal to HF's; token-id
prompts; logprobs; seeds; stop strings; errors (bad JSON, wrong types,
unknown model, too-long prompt, n > 16); a client that disconnects mid-stream
(its KV blocks must be freed at once); then a bounded load run
(bench/serve_load.py --check). Exits non-zero on the first failure.
"""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import openai

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "bench"))
import serve_load  # noqa: E402  (metrics helpers)
sys.path.insert(0, HERE)
from serve_util import hf_reference  # noqa: E402

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def post_raw(base, path, body, content_type="application/json"):
    req = urllib.request.Request(base + path, data=body, method="POST",
                                 headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def wait_metrics(base, cond, timeout=10.0):
    deadline = time.time() + timeout
    while True:
        ms = serve_load.metrics(base)
        if cond(ms) or time.time() > deadline:
            return ms
        time.sleep(0.05)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--accel-run", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--generated", required=True, help="test/fixtures/demo/generated.txt")
    ap.add_argument("--load-requests", type=int, default=200)
    ap.add_argument("--load-concurrency", type=int, default=64)
    args = ap.parse_args()

    prompt, hf_text = hf_reference(args.generated)
    server = subprocess.Popen([args.accel_run, args.plan, "--port", "0", "--max-num-seqs", "32",
                               "--served-model-name", "demo", "--served-model-name", "kjv"],
                              stderr=subprocess.PIPE, text=True)
    base = None
    for line in server.stderr:
        sys.stderr.write(line)
        m = re.search(r"at (http://\S+)", line)
        if m:
            base = m.group(1)
            break
    if base is None:
        sys.exit("serve_e2e: accel-run exited before serving (rc %s)" % server.wait())
    try:
        run_tests(base, prompt, hf_text, args)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            rc = server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            rc = "killed"
        rest = server.stderr.read()
        sys.stderr.write(rest)
        check(rc == 0, f"accel-run exits 0 on SIGTERM (got {rc})")
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    return 0


def run_tests(base, prompt, hf_text, args):
    client = openai.OpenAI(base_url=base + "/v1", api_key="none", max_retries=0, timeout=120)

    # Basics.
    with urllib.request.urlopen(base + "/health", timeout=10) as r:
        check(r.status == 200, "/health is 200")
    models = [m.id for m in client.models.list().data]
    check(models == ["demo", "kjv"], f"/v1/models lists the served names ({models})")

    # Greedy completion == HF's 48 tokens, whole and streamed, text and ids.
    c = client.completions.create(model="demo", prompt=prompt, max_tokens=48, temperature=0)
    check(c.choices[0].text == hf_text, "greedy completion equals HF's text")
    check(c.choices[0].finish_reason == "length", "finish_reason length")
    check(c.usage.prompt_tokens == 4 and c.usage.completion_tokens == 48,
          f"usage 4 + 48 ({c.usage})")
    pieces, finish, usage = [], None, None
    for chunk in client.completions.create(model="demo", prompt=prompt, max_tokens=48,
                                           temperature=0, stream=True,
                                           stream_options={"include_usage": True}):
        if chunk.usage:
            usage = chunk.usage
        for ch in chunk.choices:
            pieces.append(ch.text)
            finish = ch.finish_reason or finish
    check("".join(pieces) == hf_text, "streamed greedy completion equals HF's text")
    check(len([p for p in pieces if p]) > 10, "the stream came in many pieces")
    check(finish == "length" and usage and usage.completion_tokens == 48,
          "stream ends with finish_reason and usage")
    ids = client.completions.create(model="kjv", prompt=[1143, 259, 1796, 1239], max_tokens=48,
                                    temperature=0)
    check(ids.choices[0].text == hf_text and ids.model == "kjv",
          "token-id prompt under the second name gives the same text")

    # Stop strings, logprobs, seeds.
    s = client.completions.create(model="demo", prompt=prompt, max_tokens=48, temperature=0,
                                  stop=["LORD"])
    check(s.choices[0].text == hf_text[:hf_text.index("LORD")] and
          s.choices[0].finish_reason == "stop", "stop string cuts before 'LORD'")
    lp = client.completions.create(model="demo", prompt=prompt, max_tokens=5, temperature=0,
                                   logprobs=2)
    l = lp.choices[0].logprobs
    check(l is not None and len(l.tokens) == 5 and len(l.top_logprobs) == 5 and
          all(len(t) >= 1 for t in l.top_logprobs) and all(x <= 0 for x in l.token_logprobs),
          "completion logprobs: 5 tokens with top alternatives")
    check("".join(l.tokens) == lp.choices[0].text, "logprob tokens spell the text")
    best = [max(t.values()) for t in l.top_logprobs]
    check(all(abs(b - x) < 1e-4 for b, x in zip(best, l.token_logprobs)),
          "greedy: every chosen token is the most likely")
    a = client.completions.create(model="demo", prompt="And God said", max_tokens=24,
                                  temperature=0.8, top_p=0.95, seed=7)
    b = client.completions.create(model="demo", prompt="And God said", max_tokens=24,
                                  temperature=0.8, top_p=0.95, seed=7)
    check(a.choices[0].text == b.choices[0].text, "the same seed gives the same text")

    # Chat, whole and streamed (plain template: "user: ...\nassistant:").
    msgs = [{"role": "user", "content": "Who made the heaven and the earth?"}]
    ch = client.chat.completions.create(model="demo", messages=msgs, max_tokens=16,
                                        temperature=0)
    ref = client.completions.create(model="demo", max_tokens=16, temperature=0,
                                    prompt="user: Who made the heaven and the earth?\nassistant:")
    check(ch.choices[0].message.role == "assistant" and
          ch.choices[0].message.content == ref.choices[0].text and
          ch.object == "chat.completion", "chat reply equals the plain-template completion")
    role, text, finish = None, [], None
    for chunk in client.chat.completions.create(model="demo", messages=msgs, max_tokens=16,
                                                temperature=0, stream=True):
        d = chunk.choices[0].delta
        role = role or d.role
        text.append(d.content or "")
        finish = chunk.choices[0].finish_reason or finish
    check(role == "assistant" and "".join(text) == ch.choices[0].message.content and
          finish == ch.choices[0].finish_reason, "streamed chat equals the whole reply")
    chl = client.chat.completions.create(model="demo", messages=msgs, max_tokens=3,
                                         temperature=0, logprobs=True, top_logprobs=2)
    content = chl.choices[0].logprobs.content
    check(len(content) == 3 and all(len(t.top_logprobs) == 2 for t in content),
          "chat logprobs with top_logprobs")

    # Errors.
    status, body = post_raw(base, "/v1/completions", b'{"model": "demo", "prompt": ')
    err = json.loads(body).get("error", {})
    check(status == 400 and "not valid JSON" in err.get("message", "") and
          err.get("type") == "invalid_request_error", f"malformed JSON -> 400 ({status} {body})")
    for kwargs, param in ((dict(temperature="hot"), "temperature"),
                          (dict(max_tokens="many"), "max_tokens"),
                          (dict(stop=[1, 2]), "stop[0]"),
                          (dict(n=17), "n")):
        try:
            client.completions.create(model="demo", prompt="x", **kwargs)
            check(False, f"{kwargs} -> 400")
        except openai.BadRequestError as e:
            check(e.status_code == 400 and e.body.get("param") == param,
                  f"{kwargs} -> 400 naming '{param}' ({e.body.get('message')})")
    try:
        client.completions.create(model="gpt-4", prompt="x")
        check(False, "unknown model -> 404")
    except openai.NotFoundError as e:
        check(e.body.get("code") == "model_not_found", "unknown model -> 404 model_not_found")
    long_prompt = "And the LORD said " * 200
    try:
        client.completions.create(model="demo", prompt=long_prompt, max_tokens=4)
        check(False, "too-long prompt -> 400")
    except openai.BadRequestError as e:
        check(e.body.get("code") == "context_length_exceeded" and
              "maximum context length is 512" in e.body.get("message", ""),
              "too-long prompt -> 400 context_length_exceeded")
    try:
        client.completions.create(model="demo", prompt=prompt, max_tokens=510)
        check(False, "prompt + max_tokens beyond the context -> 400")
    except openai.BadRequestError as e:
        check(e.body.get("param") == "max_tokens",
              "prompt + max_tokens beyond the context -> 400 naming max_tokens")

    # Issue 20: strict request parameters through the real server.
    c = client.completions.create(model="demo", prompt=prompt, max_tokens=8, temperature=0,
                                  extra_body={"repetition_penalty": 1e-45})
    check(c.choices[0].finish_reason == "length",
          "repetition_penalty 1e-45 -> 200 (saturates, no sampling failure)")
    word = hf_text.split()[3]
    kept = hf_text[:hf_text.index(word) + len(word)]
    c = client.completions.create(model="demo", prompt=prompt, max_tokens=48, temperature=0,
                                  stop=[word], extra_body={"include_stop_str_in_output": True})
    check(c.choices[0].text == kept and c.choices[0].finish_reason == "stop",
          f"include_stop_str_in_output keeps the stop string ({c.choices[0].text!r})")
    c = client.completions.create(model="demo", prompt=prompt, max_tokens=8, temperature=0,
                                  echo=True)
    check(c.choices[0].text.startswith(prompt) and len(c.choices[0].text) > len(prompt) and
          hf_text.startswith(c.choices[0].text[len(prompt):]), "echo: the prompt, then the text")
    for extra, param in (({"max_tokens": 2**63 - 1}, "max_tokens"),
                         ({"guided_json": {"type": "object", "patternProperties": {}}},
                          "guided_json"),
                         ({"response_format": {"type": "json"}}, "response_format"),
                         ({"use_beam_search": True}, "use_beam_search"),
                         ({"prompt_logprobs": 21}, "prompt_logprobs"),
                         ({"stream_options": {"include_usage": True}}, "stream_options"),
                         ({"max_token": 5}, "max_token")):
        try:
            client.completions.create(model="demo", prompt="x", extra_body=extra)
            check(False, f"{extra} -> 400")
        except openai.BadRequestError as e:
            check(e.status_code == 400 and e.body.get("param") == param,
                  f"{extra} -> 400 naming '{param}' ({e.body.get('message')})")

    # A client that disconnects mid-stream: cancelled at once, KV blocks freed.
    before = serve_load.metrics(base)
    aborted0 = before.get('accel:request_success_total{model_name="demo",finished_reason="abort"}', 0)
    host, port = base[len("http://"):].split(":")
    sock = socket.create_connection((host, int(port)))
    body = json.dumps({"model": "demo", "prompt": prompt, "max_tokens": 400, "stream": True,
                       "ignore_eos": True, "temperature": 0}).encode()
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: " + f"{host}:{port}".encode() +
                 b"\r\nContent-Type: application/json\r\n"
                 b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    got = b""
    while got.count(b"data: ") < 3:
        got += sock.recv(65536)
    mid = serve_load.metrics(base)
    check(serve_load.metric(mid, "accel:kv_cache_blocks_used") > 0,
          "a running stream holds KV blocks")
    sock.close()
    t0 = time.time()
    abort_key = 'accel:request_success_total{model_name="demo",finished_reason="abort"}'
    # The blocks are freed at once; the abort is counted when the scheduler's
    # next step reports the cancelled request: wait for both.
    after = wait_metrics(base, lambda ms: serve_load.metric(ms, "accel:kv_cache_blocks_used") == 0
                         and serve_load.metric(ms, "accel:num_requests_running") == 0
                         and ms.get(abort_key, 0) >= aborted0 + 1)
    freed_in = time.time() - t0
    aborted = after.get('accel:request_success_total{model_name="demo",finished_reason="abort"}', 0)
    check(serve_load.metric(after, "accel:kv_cache_blocks_used") == 0 and aborted == aborted0 + 1,
          f"disconnect mid-stream: cancelled (abort +1) and KV blocks freed in {freed_in:.2f} s")
    gen = after.get('accel:request_generation_tokens_sum{model_name="demo"}', 0) - \
        before.get('accel:request_generation_tokens_sum{model_name="demo"}', 0)
    check(gen < 400, f"the cancelled request stopped early ({gen:.0f} of 400 tokens)")

    # Metrics text.
    ms = serve_load.metrics(base)
    for name in ("accel:time_to_first_token_seconds_count", "accel:inter_token_latency_seconds_count",
                 "accel:e2e_request_latency_seconds_count", "accel:request_queue_time_seconds_count",
                 "accel:prompt_tokens_total", "accel:generation_tokens_total"):
        check(serve_load.metric(ms, name) > 0, f"/metrics has {name} > 0")

    # Bounded load through the same server.
    load = subprocess.run([sys.executable, os.path.join(REPO, "bench", "serve_load.py"),
                           "--base-url", base, "--num-requests", str(args.load_requests),
                           "--concurrency", str(args.load_concurrency), "--max-tokens", "32",
                           "--check"], capture_output=True, text=True, timeout=600)
    sys.stdout.write(load.stdout)
    sys.stderr.write(load.stderr)
    check(load.returncode == 0, "serve_load.py --check passes")


if __name__ == "__main__":
    sys.exit(main())
