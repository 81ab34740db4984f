#!/usr/bin/env python3
"""Offline-style serving load for bench/serving/run.sh: N completion requests of IN random token
ids and OUT new tokens each (greedy, ignore_eos), at most C in flight, against an accel-run server
(or any OpenAI-compatible one). Prints one JSON object: output and total tokens/s, latency p50/p99,
and, where the server exposes accel's /metrics, the step-time split of the run (engine steps,
seconds in steps and in the engine, host overhead = step time / engine time - 1).

    python3 bench/serving/client.py --port 8000 --requests 2048 --concurrency 256 --input-len 128 \\
        --output-len 128

Standard library only.
"""
import argparse
import asyncio
import json
import random
import re
import sys
import time
import urllib.request


def scrape(port):
    """accel's /metrics as {name: value} (unlabelled families and model_name-only labels)."""
    try:
        text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10).read().decode()
    except Exception:
        return {}
    out = {}
    for line in text.splitlines():
        m = re.match(r'^([a-zA-Z_:][\w:]*)(\{model_name="[^"]*"\})?\s+(\S+)$', line)
        if m:
            out[m.group(1)] = float(m.group(3))
    return out


async def one(args, model, ids, lat, toks):
    body = json.dumps({"model": model, "prompt": ids, "max_tokens": args.output_len,
                       "temperature": 0, "ignore_eos": True}).encode()
    t0 = time.time()
    reader, writer = await asyncio.open_connection("127.0.0.1", args.port)
    writer.write(b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                 b"Content-Type: application/json\r\n"
                 b"Content-Length: %d\r\nConnection: close\r\n\r\n" % (args.port, len(body)) + body)
    await writer.drain()
    data = await reader.read()
    writer.close()
    head, _, payload = data.partition(b"\r\n\r\n")
    if b" 200 " not in head.split(b"\r\n")[0]:
        toks.append(-1)
        print("client: request failed: %r %r" % (head[:80], payload[:200]), file=sys.stderr)
        return
    toks.append(json.loads(payload)["usage"]["completion_tokens"])
    lat.append(time.time() - t0)


async def run(args, model):
    rng = random.Random(args.seed)
    prompts = [[rng.randrange(args.min_id, args.max_id) for _ in range(args.input_len)]
               for _ in range(args.requests)]
    lat, toks = [], []
    sem = asyncio.Semaphore(args.concurrency)

    async def guarded(ids):
        async with sem:
            await one(args, model, ids, lat, toks)

    t0 = time.time()
    await asyncio.gather(*[guarded(p) for p in prompts])
    return time.time() - t0, lat, toks


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--requests", type=int, default=2048)
    p.add_argument("--concurrency", type=int, default=256)
    p.add_argument("--input-len", type=int, default=128)
    p.add_argument("--output-len", type=int, default=128)
    p.add_argument("--min-id", type=int, default=1000)
    p.add_argument("--max-id", type=int, default=120000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if min(args.requests, args.concurrency, args.input_len, args.output_len) < 1:
        sys.exit("client: requests, concurrency, input and output lengths must be positive")
    model = json.load(urllib.request.urlopen("http://127.0.0.1:%d/v1/models" % args.port))["data"][0]["id"]
    before = scrape(args.port)
    wall, lat, toks = asyncio.run(run(args, model))
    after = scrape(args.port)
    good = [t for t in toks if t >= 0]
    lat.sort()
    res = {"requests": args.requests, "concurrency": args.concurrency, "input_len": args.input_len,
           "output_len": args.output_len, "ok": len(good), "wall_s": round(wall, 2),
           "output_tok_s": round(sum(good) / wall, 1),
           "total_tok_s": round((sum(good) + args.input_len * len(good)) / wall, 1),
           "lat_p50_s": round(lat[len(lat) // 2], 3) if lat else None,
           "lat_p99_s": round(lat[min(len(lat) - 1, int(len(lat) * 0.99))], 3) if lat else None}
    d = {k: after.get(k, 0.0) - before.get(k, 0.0)
         for k in ("accel:engine_steps_total", "accel:step_seconds_total",
                   "accel:step_engine_seconds_total")}
    if d["accel:engine_steps_total"] > 0 and d["accel:step_engine_seconds_total"] > 0:
        steps = d["accel:engine_steps_total"]
        res.update({"engine_steps": int(steps),
                    "served_ms_per_step": round(1e3 * wall / steps, 3),
                    "step_ms": round(1e3 * d["accel:step_seconds_total"] / steps, 3),
                    "engine_ms_per_step": round(1e3 * d["accel:step_engine_seconds_total"] / steps, 3),
                    "host_overhead": round(d["accel:step_seconds_total"] /
                                           d["accel:step_engine_seconds_total"] - 1, 4),
                    "idle_fraction": round(1 - d["accel:step_seconds_total"] / wall, 4)})
    print(json.dumps(res))
    return 0 if len(good) == args.requests else 1


if __name__ == "__main__":
    sys.exit(main())
