"""Helpers of the tests in test/Serve: start accel-run, talk HTTP, read the
fixtures (HF's generated text, the chat templates)."""
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def hf_reference(path):
    """The prompt and HF's greedy continuation from generated.txt."""
    text = open(path, encoding="utf-8").read()
    prompt = re.search(r"^prompt: '(.*)'$", text, re.M).group(1)
    body = text.split("\ntext:\n", 1)[1]
    if body.endswith("\n"):
        body = body[:-1]
    assert body.startswith(prompt), "generated.txt: the text does not start with the prompt"
    return prompt, body[len(prompt):]


def chat_templates(folder):
    """(name, path, source) of every NAME.jinja in `folder`, by name."""
    for fname in sorted(os.listdir(folder)):
        if not fname.endswith(".jinja"):
            continue
        path = os.path.join(folder, fname)
        with open(path, encoding="utf-8") as f:
            yield fname[:-len(".jinja")], path, f.read()


class Server:
    """`accel-run PLAN --port 0 ARGS...`; stderr is echoed to ours."""

    def __init__(self, accel_run, plan, args=(), env=None):
        e = dict(os.environ)
        e.update(env or {})
        self.proc = subprocess.Popen([accel_run, plan, "--port", "0", *args],
                                     stderr=subprocess.PIPE, text=True, env=e)
        self.base = None
        self.lines = []
        for line in self.proc.stderr:
            sys.stderr.write(line)
            self.lines.append(line)
            m = re.search(r"at http://(\S+):(\d+)", line)
            if m:
                self.host, self.port = m.group(1), int(m.group(2))
                self.base = f"http://{self.host}:{self.port}"
                break
        if self.base is None:
            sys.exit("accel-run exited before serving (rc %s)" % self.proc.wait())
        # Keep reading stderr so that the server never blocks on it.
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    def _pump(self):
        for line in self.proc.stderr:
            sys.stderr.write(line)
            self.lines.append(line)

    def signal(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)

    def wait(self, timeout=60):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return "killed"

    def stop(self):
        if self.proc.poll() is None:
            self.signal()
        return self.wait()

    def conn(self, timeout=120):
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None, timeout=120):
        """(status, headers dict, body bytes) of one request on a new connection."""
        h = {"Content-Type": "application/json"} if body is not None else {}
        h.update(headers or {})
        c = self.conn(timeout)
        try:
            if isinstance(body, (dict, list)):
                body = json.dumps(body).encode()
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            return r.status, dict(r.getheaders()), r.read()
        finally:
            c.close()

    def try_request(self, *a, **kw):
        """request(), or (None, {}, b"") when the connection fails."""
        try:
            return self.request(*a, **kw)
        except (OSError, http.client.HTTPException):
            return None, {}, b""


def read_stream(resp):
    """The SSE payloads of a streamed response, up to the end of the body."""
    events = []
    for line in resp:
        line = line.rstrip(b"\r\n")
        if line.startswith(b"data: "):
            events.append(line[6:].decode())
    return events


def metrics(server, timeout=10):
    """/metrics as {series: value}, series as written ('name{labels}')."""
    status, _, body = server.request("GET", "/metrics", timeout=timeout)
    if status != 200:
        raise OSError(f"/metrics answered {status}")
    out = {}
    for line in body.decode().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


def metric(ms, name):
    """The sum of every series of metric `name` (all its labels)."""
    return sum(v for k, v in ms.items() if k == name or k.startswith(name + "{"))
