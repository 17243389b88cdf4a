#!/usr/bin/env python3
"""An HTTP shim serving the Python SDK's in-process Resonate server
(`resonate-sdk` 0.8.1, `resonate/connections/local.py`, class `ServerState`)
with the envelope protocol and debug surface that `conform` speaks.

    scripts/py-server/.venv/bin/python scripts/py-server/server.py --port 0 [--bind 127.0.0.1] [--log]

Transport, not a fix: a request goes to the server exactly as the SDK's own
`LocalConnection.send` hands it over (`unwrap_request_envelope`, then
`ServerState.apply(now, req)`) and the answer comes back as `send` wraps it
(`wrap_response_envelope`). README.md in this directory says what the shim
adds (the debug surface, the outbox it keeps as the receiver of the
server's messages, the rendering of a `ServerError`); DIALECT.md lists how
the answers differ from the Rust server's wire and where local.py departs
from the Lean spec.
"""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from shim_http import Shim, envelope, parse_args, serve  # noqa: E402

if sys.version_info < (3, 12):
    sys.exit(f"server.py: resonate-sdk 0.8.1 needs Python >= 3.12, this is {sys.version.split()[0]} (README.md, 'Python')")

try:
    from resonate.connections.local import (  # noqa: E402
        ServerState,
        unwrap_request_envelope,
        wrap_response_envelope,
    )
    from resonate.error import ServerError  # noqa: E402
except ImportError as e:
    sys.exit(f"server.py: resonate-sdk is not installed ({e}); see README.md, 'Install'")

SDK_VERSION = metadata.version("resonate-sdk")


def outbox_key(message: Any, address: str) -> str:
    """The spec's `OutboxEntry.key` (state.lean:84-86): an `execute` by its
    task id, an `unblock` by `{promise}:notify:{address}`."""
    data = message.get("data") if isinstance(message, dict) else None
    if isinstance(message, dict) and message.get("kind") == "execute":
        return str(data["task"]["id"])
    if isinstance(message, dict) and message.get("kind") == "unblock":
        return f"{data['promise']['id']}:notify:{address}"
    return repr(message)


class PyShim(Shim):
    """`ServerState` behind the shared HTTP loop."""

    def __init__(self) -> None:
        self.state = ServerState()
        # The messages the server sent, as their receiver keeps them: the
        # latest per outbox key, never drained (README.md, "Messages").
        self.outbox: dict[str, dict[str, Any]] = {}
        # `now` of a request without resonate:debug_time: the last time seen.
        self.last_now = 0

    def observe(self, env: dict[str, Any]) -> None:
        t = env["head"].get("resonate:debug_time")
        if t is not None:
            self.last_now = t

    def deliver(self) -> None:
        """Take the server's outgoing messages, as `LocalConnection` does
        after each `apply` and each tick, and keep them by outbox key."""
        for m in self.state.outgoing:
            self.outbox[outbox_key(m.message, m.address)] = {"address": m.address, "message": m.message}
        self.state.outgoing = []

    def request(self, env: dict[str, Any]) -> dict[str, Any]:
        flat = unwrap_request_envelope(env)
        try:
            response = self.state.apply(self.last_now, flat)
        except ServerError as e:
            # `send` lets the exception out; the next `apply` clears whatever
            # was queued before it, so nothing is delivered.
            self.state.outgoing = []
            return envelope(env["kind"], env["head"]["corrId"], e.code, e.message)
        self.deliver()
        return wrap_response_envelope(response)

    def tick(self, time: int) -> None:
        self.last_now = time
        self.state.outgoing.clear()
        self.state.tick(time)
        self.deliver()

    def reset(self) -> None:
        self.state = ServerState()
        self.outbox = {}

    def snap(self) -> dict[str, Any]:
        """Every component the server keeps, in the canonical shape,
        read from `ServerState`'s fields (the SDK has no snapshot of its own)."""
        s = self.state
        promises = sorted(s.promises.values(), key=lambda p: p.id)
        tasks = sorted(s.tasks.values(), key=lambda t: t.id)
        return {
            "promises": [p.to_record() for p in promises],
            "promiseTimeouts": [{"id": t.id, "timeout": t.timeout} for t in s.p_timeouts],
            "callbacks": [{"awaiter": a, "awaited": p.id} for p in promises for a in sorted(p.awaiters)],
            "listeners": [{"id": p.id, "address": a} for p in promises for a in sorted(p.subscribers)],
            "tasks": [task_record(t) for t in tasks],
            "taskTimeouts": [{"id": t.id, "type": t.typ, "timeout": t.timeout} for t in s.t_timeouts],
            "messages": [self.outbox[k] for k in sorted(self.outbox)],
            "schedules": [s.schedules[k].to_record() for k in sorted(s.schedules)],
            # local.py keeps no schedule timers: its schedules never fire.
            "scheduleTimeouts": [],
            "resumes": [{"id": t.id, "awaited": a} for t in tasks for a in sorted(t.resumes)],
        }


def task_record(t: Any) -> dict[str, Any]:
    """A task in the snapshot's shape: `resumes` is the count of the set,
    whose ids are the `resumes` component."""
    r: dict[str, Any] = {"id": t.id, "state": t.state, "version": t.version, "resumes": len(t.resumes)}
    if t.pid is not None:
        r["pid"] = t.pid
    if t.ttl is not None:
        r["ttl"] = t.ttl
    return r


def main() -> None:
    args = parse_args("server.py", "The Python SDK's in-process Resonate server over HTTP, for conform.")
    banner = f"resonate-sdk {SDK_VERSION} ServerState, Python {sys.version.split()[0]}"
    serve(PyShim(), args, banner)


if __name__ == "__main__":
    main()
