"""HTTP/1.1 over raw sockets for the server tests in test/Serve: requests
written byte by byte (so that a test can stop anywhere in them), responses
read strictly (status line, headers, a Content-Length or chunked body, SSE
events), and nothing taken on trust: a response that ends early or is
framed wrongly raises Malformed."""
import json
import socket
import struct
import time


class Malformed(Exception):
    """The response broke HTTP/1.1 framing or ended before it was complete."""


def request_bytes(host, port, method, path, body=b"", content_type="application/json"):
    """One request's bytes, with Host and (for a POST or a body)
    Content-Type and Content-Length."""
    h = [("Host", f"{host}:{port}")]
    if body or method == "POST":
        if content_type:
            h.append(("Content-Type", content_type))
        h.append(("Content-Length", str(len(body))))
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h) + "\r\n"
    return head.encode() + body


def post_bytes(server, body, extra=b""):
    return (b"POST /v1/completions HTTP/1.1\r\nHost: %s:%d\r\n"
            b"Content-Type: application/json\r\n" % (server.host.encode(), server.port) +
            extra + b"Content-Length: %d\r\n\r\n" % len(body) + body)


def raw(server, data, half_close=False, timeout=10):
    """Sends `data` on a new connection; everything received until the
    server closes it (or the timeout), and whether it closed it."""
    s = socket.create_connection((server.host, server.port), timeout=timeout)
    got, closed = b"", False
    try:
        s.sendall(data)
    except OSError:  # refused before all was sent: read what came back
        pass
    if half_close:
        s.shutdown(socket.SHUT_WR)
    end = time.time() + timeout
    try:
        while time.time() < end:
            chunk = s.recv(65536)
            if not chunk:
                closed = True
                break
            got += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    return got, closed


def reset(sock):
    """Closes `sock` with a TCP reset (SO_LINGER 0) rather than a FIN."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()


class Response:
    def __init__(self):
        self.status = None
        self.headers = []      # (lower-case name, value)
        self.body = b""
        self.events = []       # SSE `data:` payloads (str), in order
        self.event_times = []  # time.time() at which each arrived
        self.complete = False  # the whole body arrived, framed correctly

    def header(self, name):
        name = name.lower()
        for k, v in self.headers:
            if k == name:
                return v
        return None

    def json(self):
        return json.loads(self.body)


class Reader:
    """Reads responses from a connected socket, one after the other."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise Malformed("the connection closed before the response was complete")
        self.buf += data

    def _line(self, limit=65536):
        while b"\r\n" not in self.buf:
            if len(self.buf) > limit:
                raise Malformed("a line longer than %d bytes" % limit)
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exactly(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def head(self, resp=None):
        """Status line and headers (1xx interim responses are skipped)."""
        resp = resp or Response()
        while True:
            line = self._line()
            parts = line.split(b" ", 2)
            if len(parts) < 2 or parts[0] != b"HTTP/1.1" or not parts[1].isdigit():
                raise Malformed(f"bad status line {line[:80]!r}")
            resp.status = int(parts[1])
            resp.headers = []
            while True:
                line = self._line()
                if not line:
                    break
                name, sep, value = line.partition(b":")
                if not sep:
                    raise Malformed(f"bad header line {line[:80]!r}")
                resp.headers.append((name.decode().strip().lower(), value.decode().strip()))
            if 100 <= resp.status < 200:
                continue
            return resp

    def body(self, resp, on_event=None):
        """The body of `resp` (after head()). For an SSE stream, `on_event`
        is called with each event as it arrives; when it returns False the
        reading stops there (resp.complete stays False)."""
        te = resp.header("transfer-encoding")
        cl = resp.header("content-length")
        if te is not None:
            if te.lower() != "chunked" or cl is not None:
                raise Malformed(f"Transfer-Encoding {te!r} (Content-Length {cl!r})")
            pending = b""
            while True:
                size_line = self._line()
                try:
                    size = int(size_line.split(b";")[0], 16)
                except ValueError:
                    raise Malformed(f"bad chunk size {size_line[:40]!r}")
                if size == 0:
                    if self._line() != b"":  # no trailers expected
                        raise Malformed("trailers after the last chunk")
                    break
                data = self._exactly(size)
                if self._exactly(2) != b"\r\n":
                    raise Malformed("a chunk not followed by CRLF")
                resp.body += data
                pending += data
                while b"\n\n" in pending:
                    ev, pending = pending.split(b"\n\n", 1)
                    for line in ev.split(b"\n"):
                        if line.startswith(b"data: "):
                            resp.events.append(line[6:].decode())
                            resp.event_times.append(time.time())
                            if on_event is not None and on_event(resp.events[-1]) is False:
                                return resp
            if pending.strip():
                raise Malformed(f"a stream ending inside an event {pending[:60]!r}")
        elif cl is not None:
            if not cl.isdigit():
                raise Malformed(f"Content-Length {cl!r}")
            resp.body = self._exactly(int(cl))
        elif resp.status in (204, 304):
            pass
        else:
            raise Malformed(f"a {resp.status} response with neither Content-Length nor "
                            "Transfer-Encoding")
        resp.complete = True
        return resp

    def response(self, on_event=None):
        resp = self.head()
        return self.body(resp, on_event)
