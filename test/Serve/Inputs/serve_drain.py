#!/usr/bin/env python3
"""SIGTERM drains accel-run's server (docs/serving.md, "Shutdown").

1. 64 streams and 8 whole completions in flight, then SIGTERM: new requests
   and /health get 503 while they run; every stream ends with `data: [DONE]`
   and its finish_reason, every whole one with 200; exit 0.
2. --shutdown-timeout 1 with more work than fits in it: what is left ends
   with an error event and `data: [DONE]` (streams) or a 503 JSON error, and
   the server exits 0 soon after the second.
3. A second signal ends the drain at once, the same way.
Prints one line per check; exits non-zero on a failure.
"""
import argparse
import json
import signal
import sys
import threading
import time

from serve_util import Server, check, failures, read_stream

PROMPT = "In the beginning"


class Client(threading.Thread):
    """One completion, streamed or not; records what came back."""

    def __init__(self, server, stream, max_tokens):
        super().__init__(daemon=True)
        self.server, self.stream, self.max_tokens = server, stream, max_tokens
        self.status, self.events, self.body, self.error = None, [], None, None
        self.first = threading.Event()

    def run(self):
        try:
            c = self.server.conn(timeout=300)
            body = json.dumps({"model": "demo", "prompt": PROMPT, "max_tokens": self.max_tokens,
                               "temperature": 0, "ignore_eos": True,
                               "stream": self.stream}).encode()
            c.request("POST", "/v1/completions", body=body,
                      headers={"Content-Type": "application/json"})
            r = c.getresponse()
            self.status = r.status
            if self.stream and r.status == 200:
                for line in r:
                    line = line.rstrip(b"\r\n")
                    if line.startswith(b"data: "):
                        self.events.append(line[6:].decode())
                        self.first.set()
            else:
                self.body = json.loads(r.read() or b"null")
            c.close()
        except Exception as e:  # a cut connection, a reset
            self.error = f"{type(e).__name__}: {e}"
        self.first.set()

    # A stream's outcome.
    def done(self):
        return bool(self.events) and self.events[-1] == "[DONE]"

    def finish_reason(self):
        for e in reversed(self.events[:-1]):
            d = json.loads(e)
            for ch in d.get("choices", []):
                if ch.get("finish_reason"):
                    return ch["finish_reason"]
        return None

    def error_event(self):
        return len(self.events) >= 2 and "error" in json.loads(self.events[-2])


def wait_for(cond, timeout):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.01)
    return cond()


def drain_finishes_everything(args):
    s = Server(args.accel_run, args.plan, ["--served-model-name", "demo", "--max-num-seqs", "64"])
    streams = [Client(s, True, args.max_tokens) for _ in range(64)]
    wholes = [Client(s, False, args.max_tokens) for _ in range(8)]
    for c in streams + wholes:
        c.start()
    started = wait_for(lambda: all(c.first.is_set() for c in streams), 120)
    check(started, "64 streams in flight")
    t0 = time.time()
    s.signal(signal.SIGTERM)
    health = wait_for(lambda: s.try_request("GET", "/health")[0] == 503, 5)
    check(health, "draining: /health answers 503")
    status, _, body = s.try_request("POST", "/v1/completions",
                                {"model": "demo", "prompt": PROMPT, "max_tokens": 4})
    check(status == 503 and b"shutting down" in body, f"draining: a new request gets 503 ({status})")
    for c in streams + wholes:
        c.join(120)
    rc = s.wait(60)
    took = time.time() - t0
    done = sum(c.done() for c in streams)
    check(done == 64, f"SIGTERM with 64 streams in flight: {done}/64 end with [DONE]")
    finished = sum(c.finish_reason() == "length" and not c.error_event() for c in streams)
    check(finished == 64, f"{finished}/64 streams finished (finish_reason length, no error)")
    whole_ok = sum(c.status == 200 and c.body["usage"]["completion_tokens"] == args.max_tokens
                   for c in wholes)
    check(whole_ok == 8, f"{whole_ok}/8 whole completions answered 200 in full")
    check(rc == 0, f"accel-run exits 0 after draining ({rc}, {took:.1f} s after SIGTERM)")


def timeout_ends_the_rest(args):
    s = Server(args.accel_run, args.plan, ["--served-model-name", "demo", "--max-num-seqs", "2",
                                           "--shutdown-timeout", "1"])
    streams = [Client(s, True, 400) for _ in range(6)]
    wholes = [Client(s, False, 400) for _ in range(3)]
    for c in streams + wholes:
        c.start()
    wait_for(lambda: sum(c.first.is_set() for c in streams) >= 2 and
             all(c.status for c in streams), 60)
    t0 = time.time()
    s.signal(signal.SIGTERM)
    for c in streams + wholes:
        c.join(60)
    rc = s.wait(60)
    took = time.time() - t0
    done = sum(c.done() for c in streams)
    check(done == 6, f"--shutdown-timeout 1: {done}/6 streams end with [DONE]")
    cut = [c for c in streams if c.error_event()]
    ok = all(c.error_event() or c.finish_reason() == "length" for c in streams)
    msgs = {json.loads(c.events[-2])["error"]["message"] for c in cut}
    check(cut and ok and all("shut down" in m for m in msgs),
          f"{len(cut)} stream(s) cut by the timeout end with an error event before [DONE] {msgs}")
    answered = [c for c in wholes if c.status in (200, 503)]
    errs = [c for c in wholes if c.status == 503 and "shut down" in c.body["error"]["message"]]
    check(len(answered) == 3 and errs,
          f"whole completions: {len(answered)}/3 answered, {len(errs)} with a 503 JSON error")
    check(rc == 0 and took < 15, f"accel-run exits 0, {took:.1f} s after SIGTERM")


def second_signal_ends_the_rest(args):
    s = Server(args.accel_run, args.plan, ["--served-model-name", "demo", "--max-num-seqs", "1"])
    streams = [Client(s, True, 400) for _ in range(6)]
    for c in streams:
        c.start()
    wait_for(lambda: streams[0].first.is_set() and all(c.status for c in streams), 60)
    s.signal(signal.SIGTERM)
    time.sleep(0.3)
    t0 = time.time()
    s.signal(signal.SIGINT)
    for c in streams:
        c.join(60)
    rc = s.wait(60)
    took = time.time() - t0
    check(all(c.done() for c in streams) and any(c.error_event() for c in streams),
          "a second signal: the streams left end with an error event and [DONE]")
    check(rc == 0 and took < 10, f"accel-run exits 0, {took:.1f} s after the second signal")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--accel-run", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--max-tokens", type=int, default=64)
    args = ap.parse_args()
    drain_finishes_everything(args)
    timeout_ends_the_rest(args)
    second_signal_ends_the_rest(args)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
