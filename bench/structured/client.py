#!/usr/bin/env python3
"""N completions of IN random prompt ids and up to OUT new tokens, C in flight,
temperature 1, against accel-run on 127.0.0.1:PORT, with or without an output
constraint; prints one JSON line: output tok/s, tokens, how many outputs are
valid (parse as JSON and validate, or match the regex).

    client.py PORT N C IN OUT MODE     MODE: none | json_object | json_schema | regex
"""
import asyncio
import json
import os
import random
import re
import sys
import time
import urllib.request

try:
    import jsonschema
except ImportError:  # the GPU machine may lack it: outputs are then only parsed
    jsonschema = None

SCHEMA = {"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 24},
    "age": {"type": "integer", "minimum": 0, "maximum": 120},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 12}, "maxItems": 4},
    "active": {"type": "boolean"}}, "required": ["name", "age", "active"]}
REGEX = r"[A-Za-z ,.]{20,200}"

port, N, C, IN, OUT, MODE = (int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
                             int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
ID_LO, ID_HI = int(os.environ.get("ID_LO", "1000")), int(os.environ.get("ID_HI", "120000"))
MODEL = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models"))["data"][0]["id"]


def body(rng):
    b = {"model": MODEL, "prompt": [rng.randrange(ID_LO, ID_HI) for _ in range(IN)],
         "max_tokens": OUT, "temperature": 1.0, "seed": rng.randrange(1 << 30)}
    if MODE == "none":
        b["ignore_eos"] = True
    elif MODE == "json_object":
        b["response_format"] = {"type": "json_object"}
    elif MODE == "json_schema":
        b["response_format"] = {"type": "json_schema", "json_schema": {"name": "p", "schema": SCHEMA}}
    elif MODE == "regex":
        b["guided_regex"] = REGEX
    return json.dumps(b).encode()


def valid(text):
    try:
        if MODE == "json_object":
            return isinstance(json.loads(text), dict)
        if MODE == "json_schema":
            doc = json.loads(text)
            if jsonschema:
                jsonschema.validate(doc, SCHEMA)
            return isinstance(doc, dict)
        if MODE == "regex":
            return re.fullmatch(REGEX, text) is not None
    except Exception:  # ValueError, jsonschema.ValidationError
        return False
    return True


async def one(b, toks, oks):
    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(b"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(b) + b)
    await w.drain()
    data = await r.read()
    w.close()
    head, _, payload = data.partition(b"\r\n\r\n")
    if b" 200 " not in head.split(b"\r\n")[0]:
        if -1 not in toks:
            print("ERR", head[:80], payload[:200], file=sys.stderr)
        toks.append(-1)
        return
    p = json.loads(payload)
    toks.append(p["usage"]["completion_tokens"])
    oks.append(valid(p["choices"][0]["text"]))


async def main():
    rng = random.Random(0)
    bodies = [body(rng) for _ in range(N)]
    toks, oks = [], []
    sem = asyncio.Semaphore(C)

    async def guarded(b):
        async with sem:
            await one(b, toks, oks)
    t0 = time.time()
    await asyncio.gather(*[guarded(b) for b in bodies])
    dt = time.time() - t0
    good = [t for t in toks if t >= 0]
    print(json.dumps({"mode": MODE, "validator": "jsonschema" if jsonschema else "json only", "requests": N, "concurrency": C, "in": IN, "out": OUT,
                      "ok": len(good), "valid": sum(oks), "wall_s": round(dt, 2),
                      "output_tokens": sum(good), "output_tok_s": round(sum(good) / dt, 1),
                      "ms_per_token_per_seq": round(1000 * dt * min(C, N) / max(sum(good), 1), 3)}))


asyncio.run(main())
