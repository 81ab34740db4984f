#!/usr/bin/env python3
"""n and best_of on accel-run's OpenAI server (docs/serving.md, "Several
choices"), through the official openai client on the demo plan, with
--enable-prefix-caching: n=4 gives 4 distinct seeded choices that repeat;
greedy n=2 equals n=1; a streamed n=3 joined per index equals the same
request unstreamed; usage counts the prompt once; best_of=3 returns the
choice of highest cumulative logprob; bad values are 400 naming the field;
/metrics shows the prompt's full blocks computed once. One line per check.
"""
import argparse
import json
import socket
import sys
import time

import openai

from serve_util import Server, check, failures, hf_reference, metric, metrics


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--accel-run", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--generated", required=True, help="test/fixtures/demo/generated.txt")
    args = ap.parse_args()
    prompt, _ = hf_reference(args.generated)
    s = Server(args.accel_run, args.plan,
               ["--served-model-name", "demo", "--enable-prefix-caching"])
    try:
        run(s, prompt)
    finally:
        rc = s.stop()
        check(rc == 0, f"accel-run exits 0 on SIGTERM (got {rc})")
    # One running sequence and one waiting at most: choice 1 of n=3 waits,
    # choice 2 finds the queue full, and the request is a 429.
    s = Server(args.accel_run, args.plan,
               ["--served-model-name", "demo", "--max-num-seqs", "1", "--max-waiting", "1"])
    try:
        queue_full(s, prompt)
    finally:
        s.stop()
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    return 0


def run(s, prompt):
    client = openai.OpenAI(base_url=s.base + "/v1", api_key="none", max_retries=0, timeout=120)
    cmp = client.completions.create

    # n=4 at temperature 1 with a seed: indexes 0..3, distinct, repeatable.
    kw = dict(model="demo", prompt=prompt, max_tokens=24, temperature=1.0, seed=1234)
    a = cmp(n=4, **kw)
    idx = [c.index for c in a.choices]
    texts = [c.text for c in a.choices]
    check(idx == [0, 1, 2, 3], f"n=4 returns 4 choices indexed 0..3 ({idx})")
    check(len(set(texts)) == 4, f"n=4 seeded choices differ from each other ({texts})")
    b = cmp(n=4, **kw)
    check([c.text for c in b.choices] == texts, "n=4 with a seed repeats exactly")
    one = cmp(n=1, **kw)
    check(one.choices[0].text == texts[0], "choice 0 of n=4 equals the n=1 request (same seed)")
    check(a.usage.prompt_tokens == one.usage.prompt_tokens,
          f"usage.prompt_tokens counts the prompt once ({a.usage.prompt_tokens} == "
          f"{one.usage.prompt_tokens})")
    # Greedy n=2: two choices equal to the n=1 greedy text.
    g1 = cmp(model="demo", prompt=prompt, max_tokens=24, temperature=0)
    g2 = cmp(model="demo", prompt=prompt, max_tokens=24, temperature=0, n=2)
    check([c.text for c in g2.choices] == [g1.choices[0].text] * 2 and
          [c.index for c in g2.choices] == [0, 1],
          "greedy n=2 gives two choices equal to the n=1 text")

    # Chat with n=2: two choices, each its own finish_reason.
    ch = client.chat.completions.create(model="demo", messages=[{"role": "user", "content": prompt}],
                                        max_tokens=8, temperature=1.0, seed=7, n=2)
    check([c.index for c in ch.choices] == [0, 1] and
          all(c.finish_reason in ("stop", "length") for c in ch.choices),
          "chat n=2 returns choices 0 and 1 with their finish_reason")

    # Streaming n=3: joined per index equals the unstreamed request.
    kw3 = dict(model="demo", prompt=prompt, max_tokens=24, temperature=1.0, seed=99, n=3)
    whole = cmp(**kw3)
    parts, finish, usage = {}, {}, None
    for chunk in cmp(stream=True, stream_options={"include_usage": True}, **kw3):
        if chunk.usage:
            usage = chunk.usage
        for c in chunk.choices:
            parts[c.index] = parts.get(c.index, "") + c.text
            if c.finish_reason:
                finish[c.index] = c.finish_reason
    check(sorted(parts) == [0, 1, 2] and
          [parts[i] for i in range(3)] == [c.text for c in whole.choices],
          "streamed n=3 joined per index equals the unstreamed request")
    check(sorted(finish) == [0, 1, 2], f"each streamed choice has its finish_reason ({finish})")
    check(usage is not None and usage.prompt_tokens == whole.usage.prompt_tokens and
          usage.completion_tokens == whole.usage.completion_tokens,
          "streamed usage equals the unstreamed usage")
    cchunks = {}
    for chunk in client.chat.completions.create(
            model="demo", messages=[{"role": "user", "content": prompt}], max_tokens=6,
            temperature=1.0, seed=5, n=2, stream=True):
        for c in chunk.choices:
            cchunks[c.index] = cchunks.get(c.index, "") + (c.delta.content or "")
    check(sorted(cchunks) == [0, 1], "streamed chat n=2 delivers choices 0 and 1")

    # best_of=3, n=1: the choice of the highest cumulative logprob of the 3.
    kwb = dict(model="demo", prompt=prompt, max_tokens=16, temperature=1.0, seed=4321)
    three = cmp(n=3, logprobs=1, **kwb)
    cum = [sum(c.logprobs.token_logprobs) for c in three.choices]
    best = three.choices[max(range(3), key=lambda i: cum[i])].text
    check(three.usage.completion_tokens == sum(len(c.logprobs.tokens) for c in three.choices)
          and three.usage.prompt_tokens == one.usage.prompt_tokens,
          f"usage.completion_tokens sums every choice's tokens ({three.usage.completion_tokens})")
    bo = cmp(n=1, best_of=3, **kwb)
    check(bo.usage.completion_tokens == three.usage.completion_tokens,
          "best_of=3 usage counts all 3 choices generated")
    check(len(bo.choices) == 1 and bo.choices[0].index == 0 and bo.choices[0].text == best,
          f"best_of=3 returns the highest cumulative logprob of the 3 ({cum})")
    bo2 = cmp(n=2, best_of=3, logprobs=1, **kwb)
    want = sorted(range(3), key=lambda i: -cum[i])[:2]
    check([c.text for c in bo2.choices] == [three.choices[i].text for i in want] and
          [c.index for c in bo2.choices] == [0, 1],
          "best_of=3, n=2 returns the best two, indexed 0..1")

    # Bad values: 400, one sentence naming the field.
    for extra, param in ((dict(n=0), "n"), (dict(n=17), "n"), (dict(n=4, best_of=2), "best_of"),
                         (dict(best_of=17), "best_of"),
                         (dict(best_of=2, stream=True), "best_of")):
        try:
            r = cmp(model="demo", prompt="x", max_tokens=2, **extra)
            if extra.get("stream"):
                list(r)
            check(False, f"{extra} -> 400")
        except openai.BadRequestError as e:
            msg = e.body.get("message", "")
            check(e.status_code == 400 and e.body.get("param") == param and
                  msg.count(". ") == 0 and f"'{param}'" in msg,
                  f"{extra} -> 400 naming {param} ({msg})")
    try:
        client.chat.completions.create(model="demo", messages=[{"role": "user", "content": "x"}],
                                       best_of=2)
        check(False, "chat best_of=2 -> 400")
    except (openai.BadRequestError, TypeError) as e:
        ok = isinstance(e, openai.BadRequestError) and e.body.get("param") == "best_of"
        if isinstance(e, TypeError):  # the client does not take it: send it raw
            st, _, body = s.request("POST", "/v1/chat/completions",
                                    {"messages": [{"role": "user", "content": "x"}], "best_of": 2})
            ok = st == 400 and b'"param":"best_of"' in body.replace(b" ", b"")
        check(ok, "chat best_of=2 -> 400 naming best_of")

    # The prompt computed once: choices 1.. take its full blocks from the
    # prefix cache. A fresh prompt of many blocks, n=4.
    long_prompt = " ".join(f"word{i}" for i in range(120))
    m0 = metrics(s)
    r = cmp(model="demo", prompt=long_prompt, max_tokens=4, temperature=1.0, seed=3, n=4)
    m1 = metrics(s)
    P = r.usage.prompt_tokens
    hits = metric(m1, "accel:prefix_cache_hits_total") - metric(m0, "accel:prefix_cache_hits_total")
    queries = (metric(m1, "accel:prefix_cache_queries_total") -
               metric(m0, "accel:prefix_cache_queries_total"))
    per = hits / 3
    check(queries == 4 * P and hits % 3 == 0 and P / 2 <= per < P,
          f"/metrics: choices 1..3 take the prompt's full blocks from the prefix cache "
          f"(prompt {P} tokens, hits {hits:.0f} = 3 x {per:.0f})")

    # A client that leaves a streamed n=3 mid-way: every choice is
    # cancelled and every KV block freed at once.
    sock = socket.create_connection((s.host, s.port))
    body = json.dumps({"model": "demo", "prompt": prompt, "max_tokens": 400, "stream": True,
                       "ignore_eos": True, "temperature": 1.0, "n": 3}).encode()
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: " + f"{s.host}:{s.port}".encode() +
                 b"\r\nContent-Type: application/json\r\n"
                 b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    got = b""
    while got.count(b"data: ") < 12:
        got += sock.recv(65536)
    running = metric(metrics(s), "accel:num_requests_running")
    sock.close()
    deadline = time.time() + 10
    while True:
        m = metrics(s)
        done = (metric(m, "accel:num_requests_running") == 0 and
                metric(m, "accel:kv_cache_blocks_used") == 0)
        if done or time.time() > deadline:
            break
        time.sleep(0.05)
    check(running == 3 and done,
          f"disconnect mid-stream of n=3: the 3 running choices cancelled and KV blocks freed "
          f"(running {running:.0f})")


def queue_full(s, prompt):
    client = openai.OpenAI(base_url=s.base + "/v1", api_key="none", max_retries=0, timeout=120)
    try:
        client.completions.with_raw_response.create(model="demo", prompt=prompt, max_tokens=8, n=3)
        check(False, "n=3 past a full queue -> 429 (it succeeded)")
    except openai.RateLimitError as e:
        retry = e.response.headers.get("retry-after")
        check("choice 2 of the request could not be queued" in e.message and retry is not None,
              f"n=3 past a full queue -> 429 naming choice 2, Retry-After {retry}")
    except openai.APIError as e:
        check(False, f"n=3 past a full queue -> 429 (got {e})")
    # The server still answers afterwards.
    one = client.completions.create(model="demo", prompt=prompt, max_tokens=4, temperature=0)
    check(one.choices[0].finish_reason == "length", "after the 429, a request of one choice runs")


if __name__ == "__main__":
    sys.exit(main())
