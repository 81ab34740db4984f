#!/usr/bin/env python3
"""A soak test of accel-run's server (docs/serving.md, "Soak test").

One accel-run on the demo plan, kept small (4 running sequences, a queue of
12, 48 KV blocks, a 256-token step budget, the prefix cache on) so that
queueing, chunked prefill, preemption and prefix hits all happen. Then, for
--seconds (default $ACCEL_SOAK_SECONDS, else 10), --workers clients on raw
sockets send a mixed load:

- completions and chat completions, whole and streamed, with prompts of 0 to
  150 words (some with multi-byte characters, some as token ids) and
  max_tokens from 1 to 128, greedy or sampled, some with stop strings,
  logprobs or usage; some on keep-alive or pipelined connections, from
  clients that half-close after sending or send slowly;
- clients that go away on purpose, by FIN or by reset: part-way through
  sending the request, right after the response's headers, in the middle of
  a stream, or while waiting for a whole answer;
- bad requests, each of which must get its 4xx with an OpenAI error.

Checked:
- every request not abandoned gets one complete answer: 200 JSON with its
  choice, finish_reason and usage, or a stream of JSON events with one
  finish_reason ending with `data: [DONE]`; a 429 (with Retry-After) counts
  as an answer; no 5xx, no cut connection, no error event, no hang;
- /health answers 200 and /metrics stays within --max-num-seqs running,
  --max-waiting waiting and the pool's blocks throughout;
- a few fixed requests (greedy, or seeded) give the same text every time,
  streamed or not, whatever ran beside them; response ids are unique;
- once the load stops: /metrics shows 0 KV blocks used, 0 running, 0
  waiting, 0 admitted in flight, no connection but ours, and the server's
  file descriptors are back to their count before the load;
- a last burst of streams and whole requests, SIGTERM while it runs: /health
  and new requests get 503; every stream ends with its finish_reason and
  `data: [DONE]` (an error event only once --shutdown-timeout has passed),
  every whole request with 200 (or a 503 after the timeout); accel-run exits
  0 and its last line reports 0 KV blocks held.

The seed (--seed, else $ACCEL_SOAK_SEED, else random) is printed; it fixes
every client's choices (not the timing). Prints one line per check; exits 1
on a failure.
"""
import argparse
import json
import os
import random
import re
import signal
import socket
import sys
import threading
import time

from raw_http import Malformed, Reader, request_bytes, reset
from serve_util import Server, check, failures, metric, metrics

MAX_MODEL_LEN = 512  # the demo plan's
WORDS = ("in the beginning god created the heaven and the earth and the earth was without form "
         "and void and darkness was upon the face of the deep and moses spake unto the "
         "children of israel caf\u00e9 na\u00efve \u65e5\u672c\u8a9e \U0001f600").split()
# Sent again and again: each must give the same text every time.
FIXED = [
    {"prompt": "In the beginning", "max_tokens": 48, "temperature": 0},
    {"prompt": "And the LORD spake unto Moses, saying", "max_tokens": 40, "temperature": 0.8,
     "seed": 7, "top_p": 0.9},
    {"messages": [{"role": "user", "content": "Who made the light?"}], "max_tokens": 40,
     "temperature": 0},
    {"messages": [{"role": "system", "content": "Be brief."},
                  {"role": "user", "content": "Tell me of Egypt"}], "max_tokens": 32,
     "temperature": 0.7, "seed": 99},
]
# How a client behaves: "normal", "keep-alive", "pipelined", "half-close",
# "slow", or one of these, which leave and expect nothing.
ABANDONING = ("partial request", "after the headers", "mid-stream", "waiting")


class Req:
    """One request and how its client behaves."""

    def __init__(self, kind, body, path="/v1/completions", method="POST", raw_body=None,
                 content_type="application/json", expect=None, param=None, code=None,
                 fixed=None):
        self.kind, self.body, self.path, self.method = kind, body, path, method
        self.raw_body, self.content_type = raw_body, content_type
        self.expect, self.param, self.code = expect, param, code  # expect: a 4xx, or None
        self.fixed = fixed  # index into FIXED
        self.mode = "normal"

    chat = property(lambda self: self.path == "/v1/chat/completions")
    stream = property(lambda self: bool(self.body and self.body.get("stream")))

    def bytes(self, host, port):
        body = self.raw_body if self.raw_body is not None else (
            json.dumps(self.body).encode() if self.body is not None else b"")
        return request_bytes(host, port, self.method, self.path, body,
                             content_type=self.content_type)


def words(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def generation(rng, stream=None, max_tokens=None):
    """A valid completion or chat request with random parameters."""
    fixed = rng.randrange(len(FIXED)) if max_tokens is None and rng.random() < 0.2 else None
    if fixed is not None:
        body = json.loads(json.dumps(FIXED[fixed]))
    else:
        body = {"max_tokens": max_tokens or rng.choice([1, 2, 8, 16, 32, 64, 128])}
        text = ("In the beginning " + words(rng, rng.choice([0, 3, 20, 80, 150]))).strip()
        if rng.random() < 0.4:
            body["messages"] = [{"role": "user", "content": text}]
            if rng.random() < 0.3:
                body["messages"].insert(0, {"role": "system", "content": words(rng, 5)})
        elif rng.random() < 0.15:
            body["prompt"] = [rng.randrange(3, 250) for _ in range(rng.randint(1, 60))]
        else:
            body["prompt"] = text
        if rng.random() < 0.5:
            body["temperature"] = 0
        else:
            body["temperature"] = round(rng.uniform(0.3, 1.5), 2)
            body["seed"] = rng.randrange(1 << 31)
        if rng.random() < 0.4:
            body["ignore_eos"] = True
        if rng.random() < 0.15:
            body["stop"] = [rng.choice(["\n", " the", ","])]
        if rng.random() < 0.1:
            if "messages" in body:
                body["logprobs"], body["top_logprobs"] = True, rng.randint(0, 3)
            else:
                body["logprobs"] = rng.randint(0, 3)
    body["model"] = "demo"
    body["stream"] = rng.random() < 0.5 if stream is None else stream
    if body["stream"] and rng.random() < 0.5:
        body["stream_options"] = {"include_usage": True}
    chat = "messages" in body
    return Req("chat" if chat else "completion", body,
               "/v1/chat/completions" if chat else "/v1/completions", fixed=fixed)


def bad_request(rng):
    """A request the server must refuse with a 4xx."""
    x = {"model": "demo", "prompt": "x"}
    name, kw = rng.choice([
        ("malformed JSON", dict(body=None, raw_body=b'{"model": "demo", "prompt": "x", ',
                                expect=400)),
        ("unknown parameter", dict(body={**x, "max_token": 5}, expect=400, param="max_token")),
        ("max_tokens 0", dict(body={**x, "max_tokens": 0}, expect=400, param="max_tokens")),
        ("over the context", dict(body={**x, "prompt": words(rng, 700)}, expect=400,
                                  code="context_length_exceeded")),
        ("a token id outside the vocabulary", dict(body={**x, "prompt": [1 << 30]}, expect=400,
                                                   param="prompt")),
        ("text/plain", dict(body=x, content_type="text/plain", expect=415)),
        ("unknown model", dict(body={**x, "model": "nope"}, expect=404, code="model_not_found")),
        ("GET of a POST route", dict(body=None, method="GET", content_type=None, expect=405)),
        ("no such route", dict(body=x, path="/v1/nothing", expect=404)),
    ])
    return Req("bad request: " + name, **kw)


def pick(rng):
    r = rng.random()
    if r < 0.15:
        return bad_request(rng)
    if r < 0.40:
        mode = rng.choice(ABANDONING)
        req = generation(rng, stream=mode in ("after the headers", "mid-stream"))
    else:
        m = rng.random()
        mode = ("keep-alive" if m < 0.05 else "pipelined" if m < 0.10 else
                "half-close" if m < 0.15 else "slow" if m < 0.20 else "normal")
        req = generation(rng)
    req.mode = mode
    return req


# --- one client -----------------------------------------------------------
class Outcome:
    def __init__(self, req):
        self.req, self.resps, self.error = req, [], None
        self.t_end = None  # when the (last) answer was complete


def send(server, req, rng, timeout, leave=None):
    """Runs `req` on a new connection the way its mode says. `leave`: an
    Event after which a mid-stream client leaves (else after 1 to 12 events)."""
    out = Outcome(req)
    sock = None
    try:
        sock = socket.create_connection((server.host, server.port), timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        data = req.bytes(server.host, server.port)
        if req.mode == "partial request":
            sock.sendall(data[:rng.randrange(len(data))])
            time.sleep(rng.choice([0, 0.01, 0.1]))
            return out
        if req.mode == "slow":
            step = max(1, len(data) // 5)
            for i in range(0, len(data), step):
                sock.sendall(data[i:i + step])
                time.sleep(0.02)
        else:
            sock.sendall(data + data if req.mode == "pipelined" else data)
        if req.mode == "half-close":
            sock.shutdown(socket.SHUT_WR)
        reader = Reader(sock)
        if req.mode == "after the headers":
            out.resps.append(reader.head())
        elif req.mode == "mid-stream":
            resp = reader.head()
            k = rng.randint(1, 12)
            reader.body(resp, on_event=lambda ev: not leave.is_set() if leave else
                        len(resp.events) < k)
        elif req.mode == "waiting":
            sock.settimeout(rng.choice([0.001, 0.05, 0.3]))
            try:
                reader.response()
            except socket.timeout:
                pass
        else:
            for i in range(2 if req.mode in ("keep-alive", "pipelined") else 1):
                if req.mode == "keep-alive" and i:
                    sock.sendall(data)
                out.resps.append(reader.response())
            out.t_end = time.time()
    except (OSError, Malformed) as e:
        out.error = f"{type(e).__name__}: {e}"
    finally:
        if sock is not None:
            (reset if rng.random() < 0.5 else socket.socket.close)(sock)
    return out


# --- what a correct answer is ---------------------------------------------
def error_of(resp):
    try:
        e = resp.json()["error"]
        return e if isinstance(e["message"], str) and e["message"] else None
    except (ValueError, KeyError, TypeError):
        return None


def check_usage(usage, max_tokens, finish_reason):
    ct, pt = usage.get("completion_tokens", -1), usage.get("prompt_tokens", 0)
    if not (0 <= ct <= max_tokens and pt >= 1 and usage.get("total_tokens") == pt + ct):
        return f"usage {usage} (max_tokens {max_tokens})"
    if finish_reason == "length" and ct != max_tokens and pt + ct != MAX_MODEL_LEN:
        return f"finish_reason length after {ct} of {max_tokens} tokens"
    return None


def judge_whole(req, resp):
    """(problem or None, text)."""
    try:
        d = resp.json()
        ch = d["choices"]
        text = ch[0]["message"]["content"] if req.chat else ch[0]["text"]
        fr = ch[0]["finish_reason"]
    except (ValueError, KeyError, IndexError, TypeError):
        return f"not a completion: {resp.body[:120]!r}", None
    want = "chat.completion" if req.chat else "text_completion"
    if d.get("object") != want or len(ch) != 1 or not isinstance(text, str):
        return f"not one {want}: {resp.body[:120]!r}", None
    if fr not in ("stop", "length"):
        return f"finish_reason {fr!r}", None
    return check_usage(d.get("usage") or {}, req.body["max_tokens"], fr), text


def judge_stream(req, resp, cut_after):
    """(problem or None, text or None). `cut_after`: the time from which an
    error event (the drain's timeout) is an answer."""
    if not (resp.header("content-type") or "").startswith("text/event-stream"):
        return f"content-type {resp.header('content-type')!r}", None
    ev = resp.events
    if not ev or ev[-1] != "[DONE]" or ev.count("[DONE]") != 1:
        return f"does not end with one data: [DONE] (ends {ev[-2:]})", None
    try:
        chunks = [json.loads(e) for e in ev[:-1]]
    except ValueError:
        return "an event that is not JSON", None
    usage = None
    if chunks and chunks[-1].get("usage") and not chunks[-1].get("choices"):
        usage = chunks.pop()["usage"]
    if chunks and "error" in chunks[-1]:
        msg = str(chunks[-1]["error"].get("message"))
        if cut_after is None or "shut down" not in msg or \
                resp.event_times[len(chunks) - 1] < cut_after:
            return f"an error event: {msg!r}", None
        return None, None  # cut by --shutdown-timeout
    want = "chat.completion.chunk" if req.chat else "text_completion"
    if any("error" in c or c.get("object") != want for c in chunks) or \
            len({c.get("id") for c in chunks}) != 1:
        return f"chunks that are not one {want}: {ev[:2]}", None
    reasons = [ch["finish_reason"] for c in chunks for ch in c["choices"]
               if ch.get("finish_reason")]
    if len(reasons) != 1 or reasons[0] not in ("stop", "length"):
        return f"finish_reasons {reasons}", None
    if req.body.get("stream_options"):
        p = check_usage(usage or {}, req.body["max_tokens"], reasons[0])
        if p:
            return p, None
    if req.chat:
        return None, "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks
                             if c["choices"])
    return None, "".join(c["choices"][0]["text"] for c in chunks if c["choices"])


class Ledger:
    """Every outcome, judged."""

    def __init__(self):
        self.lock = threading.Lock()
        self.counts, self.problems = {}, []
        self.texts = {}  # FIXED index -> {text: count}
        self.ids = set()
        self.answered = self.abandoned = self.n429 = self.cut = 0

    def _count(self, what):
        self.counts[what] = self.counts.get(what, 0) + 1

    def judge(self, out, cut_after=None):
        req = out.req
        with self.lock:
            if out.error:  # a cut connection, bad framing, a hang
                return self._problem(req, out.error)
            if req.mode in ABANDONING:
                self.abandoned += 1
                self._count(req.mode)
                return  # nothing more is owed
            for resp in out.resps:
                self.answered += 1
                p = self._one(out, resp, cut_after)
                if p:
                    self._problem(req, p)

    def _one(self, out, resp, cut_after):
        req = out.req
        if req.expect is not None:
            self._count(req.kind)
            e = error_of(resp)
            if resp.status != req.expect or e is None:
                return f"{resp.status} {resp.body[:100]!r} (want {req.expect})"
            if req.param and e.get("param") != req.param:
                return f"param {e.get('param')!r} (want {req.param!r})"
            if req.code and e.get("code") != req.code:
                return f"code {e.get('code')!r} (want {req.code!r})"
            return None
        if resp.status == 429:
            self.n429 += 1
            ra, e = resp.header("retry-after") or "", error_of(resp)
            if not ra.isdigit() or not e or e.get("code") != "rate_limit_exceeded":
                return f"a bad 429: Retry-After {ra!r}, {resp.body[:100]!r}"
            return None
        if resp.status == 503 and cut_after is not None:
            e = error_of(resp) or {}
            if "shut down before" not in e.get("message", "") or out.t_end < cut_after:
                return f"503 before --shutdown-timeout: {resp.body[:100]!r}"
            self.cut += 1
            return None
        if resp.status != 200:
            return f"status {resp.status}: {resp.body[:160]!r}"
        self._count(req.kind + (" stream" if req.stream else ""))
        if req.stream:
            p, text = judge_stream(req, resp, cut_after)
            if p is None and text is None:
                self.cut += 1
                return None
            rid = json.loads(resp.events[0]).get("id")
        else:
            p, text = judge_whole(req, resp)
            rid = resp.json().get("id")
        if p:
            return p
        if rid in self.ids:
            return f"response id {rid} seen twice"
        self.ids.add(rid)
        if req.fixed is not None:
            seen = self.texts.setdefault(req.fixed, {})
            seen[text] = seen.get(text, 0) + 1
        return None

    def _problem(self, req, what):
        what = f"{req.kind} [{req.mode}{', stream' if req.stream else ''}]: {what}"
        self.problems.append(what)
        if len(self.problems) <= 20:
            print("     problem: " + what, flush=True)


# --- the server's side --------------------------------------------------
class Monitor(threading.Thread):
    """Samples /health and /metrics: the server stays healthy and bounded."""

    def __init__(self, server, args):
        super().__init__(daemon=True)
        self.server, self.args = server, args
        self.done = threading.Event()
        self.samples, self.max_running, self.max_waiting, self.max_used = 0, 0, 0, 0
        self.violations = []

    def run(self):
        while not self.done.wait(0.2):
            try:
                health = self.server.request("GET", "/health", timeout=10)[0]
                ms = metrics(self.server)
            except OSError as e:
                self.violations.append(f"/health or /metrics: {e}")
                continue
            run, wait = metric(ms, "accel:num_requests_running"), \
                metric(ms, "accel:num_requests_waiting")
            used, total = metric(ms, "accel:kv_cache_blocks_used"), \
                metric(ms, "accel:kv_cache_blocks_total")
            self.samples += 1
            self.max_running = max(self.max_running, run)
            self.max_waiting = max(self.max_waiting, wait)
            self.max_used = max(self.max_used, used)
            if health != 200 or run > self.args.max_num_seqs or \
                    wait > self.args.max_waiting or used > total:
                self.violations.append(f"/health {health}, running {run}, waiting {wait}, "
                                       f"blocks {used}/{total}")


IDLE = ("accel:kv_cache_blocks_used", "accel:num_requests_running",
        "accel:num_requests_waiting", "accel:admission_in_flight")


def wait_idle(server, timeout):
    """Polls /metrics until nothing is held (or the timeout); the last one."""
    end = time.time() + timeout
    while True:
        ms = metrics(server)
        idle = not any(metric(ms, m) for m in IDLE) and \
            metric(ms, "accel:http_open_connections") == 1
        if idle or time.time() > end:
            return ms
        time.sleep(0.1)


def covers_every_kind(ledger):
    counts = dict(ledger.counts)
    kinds = {k.split(" ")[0] for k in counts} | set(counts)
    return {"completion", "completion stream", "chat", "chat stream", "bad", *ABANDONING} <= kinds


def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


# --- the phases -----------------------------------------------------------
def mixed_load(s, args, ledger, seed):
    """--workers clients until --seconds have passed; what each sent."""
    deadline = time.time() + args.seconds
    # On a slow or busy machine 10 s may not reach every kind: the load then goes on until it
    # has, for at most 30 s more (the check after the load still requires every kind).
    hard = deadline + 30

    def going():
        now = time.time()
        return now < deadline or (now < hard and not covers_every_kind(ledger))

    def worker(i):
        rng = random.Random(seed * 1000 + i)
        while going():
            out = send(s, pick(rng), rng, args.request_timeout)
            ledger.judge(out)
            if any(r.status == 429 for r in out.resps):
                time.sleep(rng.uniform(0.05, 0.3))  # a client backs off

    ts = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(args.workers)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(args.seconds + 30 + 2 * args.request_timeout)
    return not any(t.is_alive() for t in ts)


def last_burst(s, args, ledger, rng):
    """Streams and whole requests in flight, then SIGTERM."""
    n = min(12, int(metric(metrics(s), "accel:admission_limit")))  # no 429 in it
    reqs = [generation(rng, stream=i % 4 != 3, max_tokens=rng.choice([32, 64, 128]))
            for i in range(n)]
    for r in reqs:  # none ends before all are in
        r.body["ignore_eos"] = True
        r.body.pop("stop", None)
    for r in reqs[-2:]:  # two clients leave during the drain
        r.mode, r.body["stream"] = "mid-stream", True
    seeds = [rng.randrange(1 << 30) for _ in reqs]
    outs = [None] * n
    signalled = threading.Event()

    def client(i):
        outs[i] = send(s, reqs[i], random.Random(seeds[i]), args.request_timeout, signalled)

    ts = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(n)]
    for t in ts:
        t.start()
    end = time.time() + 20
    while time.time() < end and metric(metrics(s), "accel:admission_in_flight") < n:
        time.sleep(0.02)
    inflight = metric(metrics(s), "accel:admission_in_flight")
    t_sig = time.time()
    s.signal(signal.SIGTERM)
    signalled.set()
    health = None
    while time.time() < t_sig + 5 and health != 503:
        health = s.try_request("GET", "/health")[0]
    status, _, body = s.try_request("POST", "/v1/completions",
                                    {"model": "demo", "prompt": "In", "max_tokens": 4})
    for t in ts:
        t.join(args.shutdown_timeout + args.request_timeout)
    rc = s.wait(args.shutdown_timeout + 30)
    took = time.time() - t_sig
    check(inflight >= n, f"last burst: {inflight:.0f} of {n} requests in flight at SIGTERM")
    check(health == 503, f"draining: /health answers 503 ({health})")
    check(status == 503 and b"shutting down" in body, f"draining: a new request gets 503 ({status})")
    before, cut_before = len(ledger.problems), ledger.cut
    for i, o in enumerate(outs):
        if o is None:
            outs[i] = o = Outcome(reqs[i])
            o.error = "the client never finished"
        ledger.judge(o, cut_after=t_sig + args.shutdown_timeout - 0.5)
    streams = [o for o in outs if o.req.stream and o.req.mode == "normal"]
    wholes = [o for o in outs if not o.req.stream]
    done = sum(bool(o.resps and o.resps[-1].events[-1:] == ["[DONE]"]) for o in streams)
    whole = sum(bool(o.resps and o.resps[-1].status == 200) for o in wholes)
    check(len(ledger.problems) == before and done == len(streams),
          f"SIGTERM during the last burst: {done}/{len(streams)} streams end with [DONE], "
          f"{whole}/{len(wholes)} whole requests answered 200, "
          f"{ledger.cut - cut_before} cut by --shutdown-timeout, "
          f"{len(ledger.problems) - before} problem(s)")
    check(rc == 0, f"accel-run exits 0 ({rc}), {took:.1f} s after SIGTERM")
    m = re.search(r"accel-run: stopped: .*; (\d+) of \d+ KV blocks held", "".join(s.lines))
    check(m is not None and m.group(1) == "0",
          f"accel-run's last line: {m.group(0) if m else 'missing'}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--accel-run", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--seconds", type=float,
                    default=float(os.environ.get("ACCEL_SOAK_SECONDS") or 10),
                    help="seconds of mixed load (default $ACCEL_SOAK_SECONDS, else 10)")
    ap.add_argument("--seed", type=int, default=os.environ.get("ACCEL_SOAK_SEED") or None,
                    help="default $ACCEL_SOAK_SEED, else random")
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--max-num-seqs", type=int, default=4)
    ap.add_argument("--max-waiting", type=int, default=12)
    ap.add_argument("--shutdown-timeout", type=float, default=30)
    ap.add_argument("--request-timeout", type=float, default=30,
                    help="seconds without progress that count as a hang")
    args = ap.parse_args()
    seed = int(args.seed) if args.seed is not None else random.randrange(1 << 20)
    print(f"seed {seed}, {args.seconds:g} s of load (ACCEL_SOAK_SEED={seed} or --seed {seed} "
          "repeats the choices)", flush=True)
    rng = random.Random(seed)

    s = Server(args.accel_run, args.plan,
               ["--served-model-name", "demo", "--max-num-seqs", str(args.max_num_seqs),
                "--max-waiting", str(args.max_waiting), "--num-kv-blocks", "48",
                "--max-num-batched-tokens", "256", "--enable-prefix-caching",
                "--shutdown-timeout", str(args.shutdown_timeout)])
    wait_idle(s, 5)
    fds0 = fds(s.proc.pid)
    mon = Monitor(s, args)
    mon.start()

    t0 = time.time()
    ledger = Ledger()
    finished = mixed_load(s, args, ledger, seed)
    print(f"     {ledger.answered + ledger.abandoned} requests in {time.time() - t0:.1f} s: "
          + ", ".join(f"{k} {v}" for k, v in sorted(ledger.counts.items()))
          + f", 429 {ledger.n429}", flush=True)
    check(finished and not ledger.problems,
          f"mixed load: every request not abandoned got a complete answer ({ledger.answered} "
          f"answered, {ledger.abandoned} abandoned on purpose, {len(ledger.problems)} problem(s))")
    check(covers_every_kind(ledger),
          "the load had whole and streamed completions and chats, bad requests and every "
          "way of leaving")
    same = all(len(v) == 1 for v in ledger.texts.values())
    check(same and ledger.texts, f"fixed requests give the same text every time "
                                 f"({sum(sum(v.values()) for v in ledger.texts.values())} "
                                 f"answers to {len(ledger.texts)})")

    ms = wait_idle(s, 20)
    mon.done.set()
    mon.join()
    busy = {m: metric(ms, m) for m in IDLE}
    check(not any(busy.values()), "idle after the load: " +
          ", ".join(f"{m.split(':')[1]} {v:.0f}" for m, v in busy.items()))
    conns = metric(ms, "accel:http_open_connections")
    check(conns == 1, f"idle after the load: {conns:.0f} open connection(s) (the /metrics one)")
    end = time.time() + 10  # the last /metrics connection closes (slowly on a busy machine)
    while fds(s.proc.pid) > fds0 and time.time() < end:
        time.sleep(0.05)
    fds1 = fds(s.proc.pid)
    check(fds1 <= fds0, f"file descriptors: {fds0} before the load, {fds1} after")
    check(not mon.violations and mon.samples >= 5,
          f"healthy and bounded in {mon.samples} samples: at most {mon.max_running:.0f} running, "
          f"{mon.max_waiting:.0f} waiting, {mon.max_used:.0f} of 48 KV blocks used "
          f"({metric(ms, 'accel:num_preemptions_total'):.0f} preemptions)"
          + (f" {mon.violations[:3]}" if mon.violations else ""))

    last_burst(s, args, ledger, rng)
    if failures:
        print(f"{len(failures)} check(s) failed; ACCEL_SOAK_SEED={seed} repeats the choices",
              flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
