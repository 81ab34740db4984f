#!/usr/bin/env python3
"""Serving pipelined plans (accelc -pp) on the CPU (test/Serve/serve-pp.test).

usage: serve_pp.py --accel-run BIN --plan demo.plan --generated generated.txt --work DIR
                   --pp LABEL=PLAN:STAGES[:MICRO_BATCHES] ...

A server of the TP=1 plan gives the reference: greedy completions of several prompts, run
concurrently. Then each pipelined plan is served (each step split into micro-batches, one per
stage unless MICRO_BATCHES sets ACCEL_PP_MICRO_BATCHES; ACCEL_PP_TRACE set; prefill chunks of at
most 16 tokens a step, so that steps mix prefill chunks and decode tokens of several sequences):
  - a greedy completion equals HF's text;
  - the prompts, concurrently and streamed, give the TP=1 server's texts;
  - /metrics has accel:pp_stage_busy_seconds_total, accel:pp_stage_idle_seconds_total and
    accel:pp_stage_micro_batches_total for every stage, each > 0, and no other stage;
  - the trace has one valid line per engine step (test/Partition/Inputs/check_pp_trace.py),
    some split into several parts, and its sums are the /metrics counters;
  - SIGTERM: exit 0.
One line per check ('ok ' or 'FAIL ').
"""
import argparse
import concurrent.futures
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Partition", "Inputs"))
import openai  # noqa: E402
from check_pp_trace import check_lines  # noqa: E402
from serve_util import Server, check, failures, hf_reference, metric, metrics  # noqa: E402

PROMPTS = ["And the LORD spake unto Moses, saying",
           "The LORD is my shepherd",
           "And it came to pass",
           "Blessed are the poor in spirit",
           "For God so loved the world",
           "Let every thing that hath breath praise the LORD. Praise ye"]
N = 24
FLAGS = ["--served-model-name", "demo", "--max-num-seqs", "8", "--max-num-batched-tokens", "16"]


def client_of(server):
    return openai.OpenAI(base_url=server.base + "/v1", api_key="none", max_retries=0,
                         timeout=120)


def streamed(client, prompt):
    return "".join(ch.text for chunk in client.completions.create(
        model="demo", prompt=prompt, max_tokens=N, temperature=0, stream=True)
        for ch in chunk.choices)


def concurrently(client, stream=False):
    with concurrent.futures.ThreadPoolExecutor(len(PROMPTS)) as pool:
        if stream:
            return list(pool.map(lambda p: streamed(client, p), PROMPTS))
        return list(pool.map(lambda p: client.completions.create(
            model="demo", prompt=p, max_tokens=N, temperature=0).choices[0].text, PROMPTS))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--accel-run", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--generated", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--pp", nargs="+", required=True)
    a = ap.parse_args()
    prompt, hf_text = hf_reference(a.generated)

    plain = Server(a.accel_run, a.plan, FLAGS)
    try:
        ref = concurrently(client_of(plain))
        check("accel:pp_stage_busy_seconds_total" not in
              "".join(metrics(plain)), "a plan of one stage has no accel:pp_stage_* series")
    finally:
        check(plain.stop() == 0, "the TP=1 server exits 0")

    for spec in a.pp:
        label, rest = spec.split("=", 1)
        parts = rest.split(":")
        path, stages = parts[0], int(parts[1])
        micro = int(parts[2]) if len(parts) > 2 else stages
        trace = os.path.join(a.work, label + ".jsonl")
        env = {"ACCEL_PP_TRACE": trace}
        if len(parts) > 2:
            env["ACCEL_PP_MICRO_BATCHES"] = str(micro)
        s = Server(a.accel_run, path, FLAGS, env=env)
        try:
            c = client_of(s)
            text = c.completions.create(model="demo", prompt=prompt, max_tokens=48,
                                        temperature=0).choices[0].text
            check(text == hf_text, f"{label}: greedy completion equals HF's text")
            check(concurrently(c) == ref,
                  f"{label}: {len(PROMPTS)} concurrent requests equal the TP=1 server's text")
            check(concurrently(c, stream=True) == ref,
                  f"{label}: {len(PROMPTS)} concurrent streams equal the TP=1 server's text")
            ms = metrics(s)
        finally:
            check(s.stop() == 0, f"{label}: the server exits 0")
        series = {}
        for name in ("busy_seconds", "idle_seconds", "micro_batches"):
            full = f"accel:pp_stage_{name}_total"
            series[name] = [ms.get(f'{full}{{model_name="demo",stage="{st}"}}', 0.0)
                            for st in range(stages)]
            check(all(v > 0 for v in series[name]) and
                  abs(metric(ms, full) - sum(series[name])) < 1e-9,
                  f"{label}: /metrics: {full} of stages 0..{stages - 1} all > 0, no other "
                  f"stage ({', '.join(f'{v:.4g}' for v in series[name])})")
        with open(trace) as f:
            lines = [json.loads(line) for line in f]
        errors = check_lines(lines, stages, micro)
        for e in errors[:5]:
            print("     trace:", e)
        check(not errors and lines, f"{label}: ACCEL_PP_TRACE: {len(lines)} valid step lines")
        check(any(l["parts"] == micro for l in lines) and any(l["parts"] == 1 for l in lines),
              f"{label}: ACCEL_PP_TRACE: steps split into {micro} parts, and 1-token steps "
              "into 1")
        sums_ok = True
        for st in range(stages):
            mb = sum(l["stages"][st]["micro_batches"] for l in lines)
            busy = sum(l["stages"][st]["busy_ms"] for l in lines) / 1e3
            idle = sum(l["stages"][st]["idle_ms"] for l in lines) / 1e3
            tol = 1e-7 * len(lines) + 1e-6
            sums_ok &= mb == series["micro_batches"][st] and \
                abs(busy - series["busy_seconds"][st]) < tol and \
                abs(idle - series["idle_seconds"][st]) < tol
        check(sums_ok, f"{label}: the trace's sums are the /metrics counters")
    print("done")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
