#!/usr/bin/env python3
"""Serving a tensor-parallel plan as one accel-run process per rank (docs/serving.md,
"One process per rank"): rank 0 serves HTTP and sends every step to the others, which run it on
their weights and KV shard.

usage: serve_tp_processes.py --accel-run BIN --plan PLAN --ranks N --generated generated.txt
                             --generated-ids generated_ids.npy

Starts ranks N-1 .. 1 (`--tp-rank R --tp-master 127.0.0.1:PORT`, serving flags as rank 0's),
then rank 0 with `--port 0`, and checks through the openai client:
  - greedy completions equal HF's text (test/fixtures/demo/generated.txt), one at a time and
    four at once (continuous batching across the ranks), and a streamed one;
  - a token-id prompt of HF's first 36 tokens, whose leading blocks the earlier requests left in
    the prefix cache (shared blocks, read by every rank from its own KV shard), continues with
    HF's tokens;
  - SIGTERM to rank 0: every process exits 0;
then, with a new group, a rank killed while rank 0 serves: the next request fails with an error
that names the rank, and rank 0's /health turns 503 with the same sentence.
Prints one line per check; exits non-zero on the first failure.
"""
import argparse
import concurrent.futures
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import numpy as np
import openai

from serve_e2e import hf_reference  # the prompt and HF's text from generated.txt

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args, serve_flags):
    port = free_port()
    procs = {}
    for r in range(args.ranks - 1, -1, -1):
        cmd = [args.accel_run, args.plan, "--tp-rank", str(r), "--tp-master",
               f"127.0.0.1:{port}", "--tp-timeout", "60"] + serve_flags
        procs[r] = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    text=True)
    base = None
    for line in procs[0].stderr:
        sys.stderr.write(line)
        m = re.search(r"at (http://\S+)", line)
        if m:
            base = m.group(1)
            break
    return procs, base


def stop(procs, sig_rank0=True):
    if sig_rank0:
        procs[0].send_signal(signal.SIGTERM)
    rcs = {}
    for r, p in procs.items():
        try:
            rcs[r] = p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            rcs[r] = "killed"
        sys.stderr.write(p.stderr.read())
    return rcs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--accel-run", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--generated", required=True)
    ap.add_argument("--generated-ids", required=True)
    args = ap.parse_args()
    prompt, hf_text = hf_reference(args.generated)
    flags = ["--port", "0", "--max-num-seqs", "8", "--served-model-name", "demo"]

    procs, base = start(args, flags)
    if base is None:
        print("FAIL rank 0 exited before serving: %s" % stop(procs, False))
        return 1
    try:
        client = openai.OpenAI(base_url=base + "/v1", api_key="none", max_retries=0, timeout=120)
        c = client.completions.create(model="demo", prompt=prompt, max_tokens=48, temperature=0)
        check(c.choices[0].text == hf_text,
              f"{args.ranks} processes: greedy completion equals HF's text")
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            texts = list(pool.map(
                lambda n: client.completions.create(model="demo", prompt=prompt, max_tokens=n,
                                                    temperature=0).choices[0].text,
                [48, 40, 32, 24]))
        check(all(hf_text.startswith(t) and len(t) > 0 for t in texts) and texts[0] == hf_text,
              "four requests at once (one batch across the ranks) give HF's text")
        pieces = [ch.text for chunk in client.completions.create(
            model="demo", prompt=prompt, max_tokens=48, temperature=0, stream=True)
            for ch in chunk.choices]
        check("".join(pieces) == hf_text, "a streamed greedy completion equals HF's text")
        # HF's first 36 tokens as the prompt: its two full blocks are in the prefix cache.
        ids = [int(i) for i in np.load(args.generated_ids).reshape(-1)]
        again = client.completions.create(model="demo", prompt=ids[:36], max_tokens=12,
                                          temperature=0).choices[0].text
        check(len(again) > 0 and again in hf_text,
              "a prompt sharing cached blocks continues with HF's tokens")
    finally:
        rcs = stop(procs)
    check(all(rc == 0 for rc in rcs.values()), f"SIGTERM to rank 0: every rank exits 0 ({rcs})")

    # A rank that dies while rank 0 serves.
    procs, base = start(args, flags)
    if base is None:
        print("FAIL rank 0 exited before serving: %s" % stop(procs, False))
        return 1
    try:
        victim = args.ranks - 1
        procs[victim].kill()
        procs[victim].wait()
        time.sleep(0.5)
        client = openai.OpenAI(base_url=base + "/v1", api_key="none", max_retries=0, timeout=60)
        err = ""
        try:
            client.completions.create(model="demo", prompt=prompt, max_tokens=8, temperature=0)
        except openai.APIError as e:
            err = str(e)
        check(f"rank {victim} left the tensor-parallel group" in err,
              f"after rank {victim} died, a request fails naming it ({err[:160]})")
        try:
            with urllib.request.urlopen(base + "/health", timeout=10) as r:
                code, body = r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            code, body = e.code, e.read().decode()
        check(code == 503 and f"rank {victim} left" in body,
              f"rank 0's /health is 503 naming the rank ({code} {body[:120]})")
    finally:
        rcs = stop(procs)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
