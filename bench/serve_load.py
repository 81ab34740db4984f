#!/usr/bin/env python3
"""Bounded load test of an OpenAI-compatible server (accel-run's serve mode).

Sends N streaming requests with random prompts and lengths, at most C at a
time, through the official `openai` client, and prints the numbers vLLM's
benchmark_serving.py prints (throughput, TTFT, ITL, E2E). With --check it
also fails (exit 1) unless every request was answered (200, or 429 when the
server is full) and the server's /metrics show no KV block still in use and
no request still running or waiting afterwards.

  accel-run demo.plan --port 8000 &
  python3 bench/serve_load.py --base-url http://127.0.0.1:8000 \
      --num-requests 500 --concurrency 64 --check

--client raw speaks HTTP over asyncio sockets instead of the openai client
(completions only): much less client CPU, for thousands of concurrent
streams (--concurrency 1000).

--start-server PLAN starts `accel-run PLAN --port 0` itself (accel-run from
--accel-run or PATH) and stops it at the end.
"""
import argparse
import asyncio
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import time
import urllib.request

openai = httpx = None  # imported by load_openai() for --client openai only


def load_openai():
    """--client openai needs the openai package; --client raw needs nothing."""
    global openai, httpx
    try:
        import openai as _openai
    except ImportError:  # pragma: no cover
        sys.exit("--client openai needs the openai package (pip install openai; "
                 "scripts/setup.sh); --client raw needs none")
    try:  # the HTTP library the openai client is built on (httpx2 in newer releases)
        import httpx2 as _httpx
    except ImportError:
        import httpx as _httpx
    openai, httpx = _openai, _httpx

WORDS = ("and the LORD said unto him in the beginning God created heaven earth light "
         "darkness waters spirit face deep day night evening morning firmament land seas "
         "grass herb seed fruit tree kind stars sun moon great whales creature living "
         "cattle beast man image likeness dominion fish fowl blessed them behold good").split()


def metrics(base_url):
    with urllib.request.urlopen(base_url + "/metrics", timeout=10) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$', line)
        if m:
            out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return out


def metric(ms, name):
    """The value of `name` whatever its labels (summed over label sets)."""
    return sum(v for k, v in ms.items() if k == name or k.startswith(name + "{"))


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    k = max(0, min(len(xs) - 1, int(round(p / 100.0 * len(xs) + 0.5)) - 1))
    return xs[k]


async def one(client, model, rng, args, results):
    n_words = rng.randint(args.min_prompt_words, args.max_prompt_words)
    prompt = " ".join(rng.choice(WORDS) for _ in range(n_words))
    max_tokens = rng.randint(args.min_tokens, args.max_tokens)
    chat = args.chat_fraction > 0 and rng.random() < args.chat_fraction
    t0 = time.perf_counter()
    ttft, last, itls, text, usage = None, None, [], [], None
    try:
        kwargs = dict(model=model, max_tokens=max_tokens, stream=True,
                      temperature=args.temperature, stream_options={"include_usage": True},
                      extra_body={"ignore_eos": True})
        if chat:
            stream = await client.chat.completions.create(
                messages=[{"role": "user", "content": prompt}], **kwargs)
        else:
            stream = await client.completions.create(prompt=prompt, **kwargs)
        async for chunk in stream:
            if chunk.usage is not None:
                usage = chunk.usage
            if not chunk.choices:
                continue
            c = chunk.choices[0]
            piece = (c.delta.content if chat else c.text) or ""
            if piece:
                now = time.perf_counter()
                if ttft is None:
                    ttft = now - t0
                else:
                    itls.append(now - last)
                last = now
                text.append(piece)
        e2e = time.perf_counter() - t0
        results["ok"].append(dict(ttft=ttft, itls=itls, e2e=e2e,
                                  prompt_tokens=usage.prompt_tokens if usage else 0,
                                  output_tokens=usage.completion_tokens if usage else 0,
                                  max_tokens=max_tokens))
    except openai.RateLimitError:
        results["429"] += 1
    except Exception as e:  # anything else is a failure of the server
        results["errors"].append(f"{type(e).__name__}: {e}")


async def one_raw(host, port, model, rng, args, results):
    """One streaming completion over a raw connection (no openai client)."""
    n_words = rng.randint(args.min_prompt_words, args.max_prompt_words)
    prompt = " ".join(rng.choice(WORDS) for _ in range(n_words))
    max_tokens = rng.randint(args.min_tokens, args.max_tokens)
    body = json.dumps({"model": model, "prompt": prompt, "max_tokens": max_tokens,
                       "stream": True, "temperature": args.temperature, "ignore_eos": True,
                       "stream_options": {"include_usage": True}}).encode()
    t0 = time.perf_counter()
    ttft, last, itls, usage = None, None, [], None
    try:
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(b"POST /v1/completions HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n"
                     b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                     % (host.encode(), port, len(body)) + body)
        await writer.drain()
        status = int((await reader.readline()).split()[1])
        if status == 429:
            results["429"] += 1
            writer.close()
            return
        if status != 200:
            raise RuntimeError(f"HTTP {status}")
        while True:
            line = await asyncio.wait_for(reader.readline(), args.timeout)
            if not line:
                raise RuntimeError("the stream ended without [DONE]")
            if not line.startswith(b"data: "):
                continue
            payload = line[6:].strip()
            if payload == b"[DONE]":
                break
            event = json.loads(payload)
            if event.get("usage"):
                usage = event["usage"]
            if event.get("choices") and event["choices"][0].get("text"):
                now = time.perf_counter()
                if ttft is None:
                    ttft = now - t0
                else:
                    itls.append(now - last)
                last = now
        writer.close()
        results["ok"].append(dict(ttft=ttft, itls=itls, e2e=time.perf_counter() - t0,
                                  prompt_tokens=usage["prompt_tokens"] if usage else 0,
                                  output_tokens=usage["completion_tokens"] if usage else 0,
                                  max_tokens=max_tokens))
    except Exception as e:
        results["errors"].append(f"{type(e).__name__}: {e}")


async def run(args, base_url):
    if args.client == "raw":
        host, port = base_url[len("http://"):].rstrip("/").split(":")
        with urllib.request.urlopen(base_url + "/v1/models", timeout=10) as r:
            model = args.model or json.loads(r.read())["data"][0]["id"]
        rng = random.Random(args.seed)
        results = {"ok": [], "429": 0, "errors": []}
        sem = asyncio.Semaphore(args.concurrency)
        peak = [0, 0]

        async def limited_raw(i):
            async with sem:
                peak[0] += 1
                peak[1] = max(peak[1], peak[0])
                await one_raw(host, int(port), model, random.Random(rng.random()), args,
                              results)
                peak[0] -= 1

        t0 = time.perf_counter()
        await asyncio.gather(*(limited_raw(i) for i in range(args.num_requests)))
        results["peak"] = peak[1]
        return model, results, time.perf_counter() - t0

    load_openai()
    limits = httpx.Limits(max_connections=args.concurrency + 16,
                          max_keepalive_connections=args.concurrency + 16)
    client = openai.AsyncOpenAI(base_url=base_url + "/v1", api_key="none", max_retries=0,
                                timeout=args.timeout,
                                http_client=openai.DefaultAsyncHttpxClient(
                                    limits=limits, timeout=args.timeout))
    model = args.model or (await client.models.list()).data[0].id
    rng = random.Random(args.seed)
    results = {"ok": [], "429": 0, "errors": []}
    sem = asyncio.Semaphore(args.concurrency)

    async def limited(i):
        async with sem:
            await one(client, model, random.Random(rng.random()), args, results)

    t0 = time.perf_counter()
    await asyncio.gather(*(limited(i) for i in range(args.num_requests)))
    duration = time.perf_counter() - t0
    await client.close()
    return model, results, duration


def report(results, duration, args):
    ok = results["ok"]
    ttfts = [r["ttft"] * 1000 for r in ok if r["ttft"] is not None]
    itls = [x * 1000 for r in ok for x in r["itls"]]
    e2es = [r["e2e"] * 1000 for r in ok]
    tin = sum(r["prompt_tokens"] for r in ok)
    tout = sum(r["output_tokens"] for r in ok)
    line = lambda k, v: print(f"{k:<40}{v:<10}")
    print("{s:{c}^50}".format(s=" Serving Benchmark Result ", c="="))
    line("Successful requests:", len(ok))
    line("Rejected (429):", results["429"])
    line("Failed requests:", len(results["errors"]))
    line("Max concurrency:", args.concurrency)
    if "peak" in results:
        line("Peak concurrent connections:", results["peak"])
    line("Benchmark duration (s):", f"{duration:.2f}")
    line("Total input tokens:", tin)
    line("Total generated tokens:", tout)
    line("Request throughput (req/s):", f"{len(ok) / duration:.2f}")
    line("Output token throughput (tok/s):", f"{tout / duration:.2f}")
    line("Total Token throughput (tok/s):", f"{(tin + tout) / duration:.2f}")
    for title, xs, name in (("Time to First Token", ttfts, "TTFT"),
                            ("Inter-token Latency", itls, "ITL"),
                            ("End-to-end Latency", e2es, "E2EL")):
        print("{s:{c}^50}".format(s=title, c="-"))
        line(f"Mean {name} (ms):", f"{statistics.fmean(xs) if xs else float('nan'):.2f}")
        line(f"Median {name} (ms):", f"{pct(xs, 50):.2f}")
        line(f"P99 {name} (ms):", f"{pct(xs, 99):.2f}")
    print("=" * 50)
    for e in results["errors"][:10]:
        print("error:", e)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-url", default="http://127.0.0.1:8000")
    ap.add_argument("--model", default=None, help="default: the first of /v1/models")
    ap.add_argument("--num-requests", type=int, default=500)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--min-prompt-words", type=int, default=2)
    ap.add_argument("--max-prompt-words", type=int, default=60)
    ap.add_argument("--min-tokens", type=int, default=4)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--chat-fraction", type=float, default=0.25,
                    help="share of requests sent to /v1/chat/completions")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--client", choices=["openai", "raw"], default="openai")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless every request got 200 or 429 and /metrics shows no "
                         "KV block or request left over")
    ap.add_argument("--start-server", metavar="PLAN")
    ap.add_argument("--accel-run", default="accel-run")
    ap.add_argument("--server-args", default="", help="extra accel-run flags")
    args = ap.parse_args()

    server = None
    base_url = args.base_url
    if args.start_server:
        cmd = [args.accel_run, args.start_server, "--port", "0"] + args.server_args.split()
        server = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        for line in server.stderr:
            sys.stderr.write(line)
            m = re.search(r"at (http://\S+)", line)
            if m:
                base_url = m.group(1)
                break
        else:
            sys.exit("serve_load.py: accel-run exited before serving")
    try:
        before = metrics(base_url) if args.check else None
        model, results, duration = asyncio.run(run(args, base_url))
        report(results, duration, args)
        failed = []
        if args.check:
            answered = len(results["ok"]) + results["429"]
            if results["errors"] or answered != args.num_requests:
                failed.append(f"{len(results['errors'])} requests failed")
            short = [r for r in results["ok"] if r["output_tokens"] != r["max_tokens"]]
            if short:
                failed.append(f"{len(short)} requests (ignore_eos) did not get max_tokens")
            deadline = time.time() + 10
            while True:
                ms = metrics(base_url)
                left = (metric(ms, "accel:kv_cache_blocks_used"),
                        metric(ms, "accel:num_requests_running"),
                        metric(ms, "accel:num_requests_waiting"),
                        metric(ms, "accel:admission_in_flight"))
                if left == (0, 0, 0, 0) or time.time() > deadline:
                    break
                time.sleep(0.1)
            print(f"after: kv blocks used {left[0]:.0f} of "
                  f"{metric(ms, 'accel:kv_cache_blocks_total'):.0f}, running {left[1]:.0f}, "
                  f"waiting {left[2]:.0f}, in flight {left[3]:.0f}")
            if left != (0, 0, 0, 0):
                failed.append("KV blocks or requests left over after the load")
            done = (metric(ms, "accel:request_success_total") -
                    metric(before, "accel:request_success_total"))
            if done != len(results["ok"]):
                failed.append(f"/metrics counts {done:.0f} finished requests, "
                              f"the client {len(results['ok'])}")
        for f in failed:
            print("CHECK FAILED:", f)
        return 1 if failed else 0
    finally:
        if server:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()


if __name__ == "__main__":
    sys.exit(main())
