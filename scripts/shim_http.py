"""The HTTP side shared by the Python shims (scripts/py-server, scripts/pg-server).

A shim serves one Resonate server with the envelope protocol and the debug
surface that `conform` speaks (README.md, "What your server must speak"). This
module owns everything that is the same for every shim: the command line
(`--port`, `--bind`, `--log`), the loopback rule, the HTTP loop, the envelope
checks, the `debug.tick` time checks and the dispatch of the five debug kinds.
A shim subclasses `Shim` and says how its server takes a request, a tick, a
reset and a snapshot; it never re-spells an answer.

Standard library only, and Python 3.11 compatible (scripts/pg-server runs on
the machine's 3.11; scripts/py-server on 3.12).
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import signal
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PROTOCOL_VERSION = "2026-04-01"
MAX_BODY = 32 * 1024 * 1024
EXIT_USAGE = 2
#: The largest `resonate:debug_time` taken: the Rust wire's i64.
MAX_TIME = (1 << 63) - 1

#: The debug kinds a shim answers itself; every other kind goes to the server.
DEBUG_KINDS = ("debug.start", "debug.stop", "debug.reset", "debug.snap", "debug.tick")


class Refusal(Exception):
    """A request refused before it reaches the server: a 400 envelope."""

    def __init__(self, message: str, kind: str = "unknown", corr_id: str = "0") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.corr_id = corr_id


def envelope(kind: str, corr_id: Any, status: int, data: Any) -> dict[str, Any]:
    """A response envelope in the protocol's shape."""
    return {"kind": kind, "head": {"corrId": corr_id, "status": status, "version": PROTOCOL_VERSION}, "data": data}


def is_time(v: Any) -> bool:
    """A non-negative JSON integer within the Rust wire's range (never a bool)."""
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_TIME


def open_envelope(raw: Any) -> dict[str, Any]:
    """Check an envelope as the Rust server does: an object with a non-empty
    string `kind`, a `head` object with a string `corrId`, the protocol
    `version` and an optional time, and an object `data`. Raises `Refusal`."""
    kind = raw.get("kind") if isinstance(raw, dict) else None
    kind = kind if isinstance(kind, str) and kind else "unknown"
    head = raw.get("head") if isinstance(raw, dict) else None
    corr = head.get("corrId") if isinstance(head, dict) else None
    corr = corr if isinstance(corr, str) else "0"

    def fail(message: str) -> Refusal:
        return Refusal(message, kind, corr)

    if not isinstance(raw, dict):
        raise fail("expected an object")
    if not isinstance(raw.get("kind"), str) or raw["kind"] == "":
        raise fail("kind: expected a non-empty string")
    if not isinstance(head, dict):
        raise fail("head: expected an object")
    if not isinstance(head.get("corrId"), str):
        raise fail("head.corrId: expected a string")
    if not isinstance(head.get("version"), str):
        raise fail("head.version: expected a string")
    if head["version"] != PROTOCOL_VERSION:
        raise fail(f"head.version: unsupported protocol version `{head['version']}`, expected `{PROTOCOL_VERSION}`")
    t = head.get("resonate:debug_time")
    if t is not None and not is_time(t):
        raise fail("head.resonate:debug_time: expected a non-negative integer (at most 2^63-1)")
    if not isinstance(raw.get("data"), dict):
        raise fail("data: expected an object")
    return raw


def tick_time(env: dict[str, Any]) -> int:
    """`data.time` of a `debug.tick`, checked as `conform serve` checks it."""
    time = env["data"].get("time")
    if not is_time(time):
        raise Refusal("missing or invalid 'time' field", env["kind"], env["head"]["corrId"])
    head_time = env["head"].get("resonate:debug_time")
    if head_time is not None and head_time != time:
        raise Refusal("resonate:debug_time must equal data.time", env["kind"], env["head"]["corrId"])
    return time


class Shim:
    """One served server. Subclasses implement `request`, `tick`, `reset` and
    `snap`. With `serial` (the default) `handle` is called under one lock, so
    a server sees one request at a time, in the order they arrived: an
    in-process server's state is not thread-safe. A shim whose server does
    its own locking (a database) sets `serial = False` and is called from
    every connection's thread at once, so its own concurrency is what a
    concurrent run checks."""

    #: Whether requests are handed to the server one at a time.
    serial = True

    def request(self, env: dict[str, Any]) -> dict[str, Any]:
        """A checked envelope of a non-debug kind, to the server; its answer."""
        raise NotImplementedError

    def tick(self, time: int) -> None:
        """Fire what the server has due at `time`."""
        raise NotImplementedError

    def reset(self) -> None:
        """Forget everything."""
        raise NotImplementedError

    def snap(self) -> dict[str, Any]:
        """The state, as the snapshot's components."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what the shim holds (called once, on the way out)."""

    def observe(self, env: dict[str, Any]) -> None:
        """Called with every checked envelope before it is handled."""

    def handle(self, body: bytes) -> tuple[dict[str, Any], str]:
        """One request body: the answer and a note for the log. Never raises:
        an exception is a 500 envelope carrying it."""
        kind, corr = "unknown", "0"
        try:
            try:
                raw = json.loads(body)
            except ValueError as e:
                return envelope(kind, corr, 400, f"invalid request envelope: {e}"), "envelope"
            env = open_envelope(raw)
            kind, corr = env["kind"], env["head"]["corrId"]
            self.observe(env)
            if kind == "debug.tick":
                self.tick(tick_time(env))
                return envelope(kind, corr, 200, []), ""
            if kind in ("debug.start", "debug.stop"):
                return envelope(kind, corr, 200, {}), ""
            if kind == "debug.reset":
                self.reset()
                return envelope(kind, corr, 200, {}), ""
            if kind == "debug.snap":
                return envelope(kind, corr, 200, self.snap()), ""
            return self.request(env), ""
        except Refusal as r:
            return envelope(r.kind, r.corr_id, 400, r.message), "refused"
        except Exception as e:  # noqa: BLE001 - the shim never goes down on a request
            return envelope(kind, corr, 500, f"{type(e).__name__}: {e}"), "error"


def parse_args(prog: str, description: str, extra=None) -> argparse.Namespace:
    """The shared options, plus `extra(parser)`'s. A bad option exits 2."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--port", type=int, default=0, help="TCP port; 0 picks a free one (default 0)")
    p.add_argument("--bind", default="127.0.0.1", help="loopback address: 127.0.0.0/8, ::1 or localhost")
    p.add_argument("--log", action="store_true", help="one line per request on stderr")
    if extra is not None:
        extra(p)
    args = p.parse_args()
    if not 0 <= args.port <= 65535:
        p.error(f"--port {args.port}: expected an integer 0..65535")
    bind = loopback(args.bind)
    if bind is None:
        p.error(f"--bind {args.bind}: the shim binds loopback addresses only (127.0.0.0/8, ::1, localhost)")
    args.bind = bind
    return args


def loopback(bind: str) -> str | None:
    """The address to bind when `bind` is a loopback address, else None."""
    if bind == "localhost":
        return "127.0.0.1"
    try:
        ip = ipaddress.ip_address(bind)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return None
    return bind if ip.is_loopback else None


def serve(shim: Shim, args: argparse.Namespace, banner: str) -> None:
    """Serve `shim` on `args.bind`/`args.port` until SIGINT or SIGTERM; print
    `listening on http://ADDR:PORT` once listening. Exits 0 when stopped, 2
    when the port cannot be bound."""
    lock = threading.Lock()

    def log(line: str) -> None:
        if args.log:
            print(line, file=sys.stderr, flush=True)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Head and body go out in two writes: without this, Nagle's algorithm
        # holds the body back until the client's delayed ACK (40 ms a request).
        disable_nagle_algorithm = True

        def log_message(self, format: str, *a: Any) -> None:  # noqa: A002 - the base class's name
            pass

        def send(self, status: int, payload: dict[str, Any] | None) -> None:
            body = b"" if payload is None else json.dumps(payload).encode()
            self.send_response(status if 100 <= status <= 599 else 500)
            if payload is not None:
                self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def body(self) -> bytes | None:
            n = int(self.headers.get("content-length") or 0)
            if n > MAX_BODY:
                self.close_connection = True
                return None
            return self.rfile.read(n)

        def do_GET(self) -> None:
            if self.path == "/health":
                self.send(200, None)
            else:
                self.send(404, envelope("unknown", "0", 404, f"no route GET {self.path}; POST / takes envelopes"))

        def do_POST(self) -> None:
            if self.path != "/" and not self.path.startswith("/?"):
                self.body()
                self.send(404, envelope("unknown", "0", 404, f"no route POST {self.path}; POST / takes envelopes"))
                return
            body = self.body()
            if body is None:
                self.send(413, envelope("unknown", "0", 413, f"request body over {MAX_BODY} bytes"))
                return
            if shim.serial:
                with lock:
                    payload, note = shim.handle(body)
            else:
                payload, note = shim.handle(body)
            status = payload["head"]["status"]
            status = status if isinstance(status, int) else 500
            detail = f": {payload['data']}" if status >= 400 and isinstance(payload["data"], str) else ""
            log(f"{payload['kind']} {status}{f' ({note})' if note else ''}{detail}")
            self.send(status, payload)

        def other(self) -> None:
            self.send(405, envelope("unknown", "0", 405, f"method {self.command} not allowed; POST / takes envelopes"))

        do_PUT = do_DELETE = do_PATCH = do_HEAD = other

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        address_family = socket.AF_INET6 if ":" in args.bind else socket.AF_INET

    try:
        httpd = Server((args.bind, args.port), Handler)
    except OSError as e:
        shim.close()
        print(f"cannot serve on {args.bind}:{args.port}: {e}", file=sys.stderr)
        sys.exit(EXIT_USAGE)

    def stop(*_: Any) -> None:
        threading.Thread(target=httpd.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    host, port = httpd.server_address[:2]
    shown = f"[{host}]" if ":" in host else host
    log(banner)  # before the address line, so a reader of that line finds the banner written
    print(f"listening on http://{shown}:{port}", flush=True)
    try:
        httpd.serve_forever()
    finally:
        httpd.server_close()
        shim.close()
