#!/usr/bin/env python3
"""An HTTP shim serving resonate-pg (a Resonate server written as PL/pgSQL
functions, one file `resonate.sql`) on a throwaway PostgreSQL cluster, with
the envelope protocol and debug surface that `conform` speaks.

    scripts/pg-server/.venv/bin/python scripts/pg-server/server.py --sql PATH/resonate.sql --port 0

The shim starts its own cluster (`initdb` and `postgres` in a temporary
directory, a Unix socket only: no TCP port at all), loads the user's
`resonate.sql` with `psql -f` as its README says, and removes the cluster on
the way out. Transport, not a fix: every request goes to
`resonate.resonate_rpc(jsonb)` exactly as it came and its answer comes back
exactly as the function returned it. README.md in this directory describes the
debug surface (built from the schema's tables and the file's own rendering
functions); DIALECT.md lists how the answers differ from the Rust server's
wire and where resonate.sql departs from the Lean spec.
"""

from __future__ import annotations

import ctypes
import glob
import json
import os
import pwd
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from shim_http import Shim, parse_args, serve  # noqa: E402

try:
    import psycopg  # noqa: E402
    from psycopg.types.json import Jsonb  # noqa: E402
except ImportError as e:
    sys.exit(f"server.py: psycopg is not installed ({e}); see README.md, 'Install'")

EXIT_USAGE = 2
PR_SET_PDEATHSIG = 1

#: One query for the whole snapshot, in the canonical shape, read from the
#: schema's tables through resonate.sql's own rendering functions (promise,
#: task, schedule and outbox message as its wire writes them). A timeout is
#: what `process_timeouts` would fire: a pending external promise
#: (`_promise_timed`), a pending (retry, type 0) or acquired (lease, type 1)
#: task by its `timeout_at`, every schedule by its `next_run_at`.
SNAP_SQL = """
SELECT jsonb_build_object(
  'promises', COALESCE((SELECT jsonb_agg(resonate._promise_json_raw(p) ORDER BY p.id) FROM resonate.promises p), '[]'),
  'promiseTimeouts', COALESCE((SELECT jsonb_agg(jsonb_build_object('id', p.id, 'timeout', p.timeout_at) ORDER BY p.id)
                               FROM resonate.promises p WHERE resonate._promise_timed(p)), '[]'),
  'callbacks', COALESCE((SELECT jsonb_agg(jsonb_build_object('awaiter', c.awaiter_id, 'awaited', c.awaited_id)
                                          ORDER BY c.awaited_id, c.awaiter_id) FROM resonate.callbacks c), '[]'),
  'listeners', COALESCE((SELECT jsonb_agg(jsonb_build_object('id', l.awaited_id, 'address', l.address)
                                          ORDER BY l.awaited_id, l.address) FROM resonate.listeners l), '[]'),
  'tasks', COALESCE((SELECT jsonb_agg(resonate._task_json(t) ORDER BY t.id) FROM resonate.tasks t), '[]'),
  'taskTimeouts', COALESCE((SELECT jsonb_agg(jsonb_build_object('id', t.id,
                                               'type', CASE t.state WHEN 'pending' THEN 0 ELSE 1 END,
                                               'timeout', t.timeout_at) ORDER BY t.id)
                            FROM resonate.tasks t
                            WHERE t.state IN ('pending', 'acquired') AND t.timeout_at IS NOT NULL), '[]'),
  'messages', COALESCE((SELECT jsonb_agg(jsonb_build_object('address', o.address, 'message', resonate._outbox_http_body(o))
                                         ORDER BY o.key) FROM resonate.outbox o), '[]'),
  'schedules', COALESCE((SELECT jsonb_agg(resonate._schedule_json(s) ORDER BY s.id) FROM resonate.schedules s), '[]'),
  'scheduleTimeouts', COALESCE((SELECT jsonb_agg(jsonb_build_object('id', s.id, 'timeout', s.next_run_at) ORDER BY s.id)
                                FROM resonate.schedules s), '[]'),
  'resumes', COALESCE((SELECT jsonb_agg(jsonb_build_object('id', r.task_id, 'awaited', r.awaited_id)
                                        ORDER BY r.task_id, r.awaited_id) FROM resonate.task_resumes r), '[]'))
"""


def usage_error(message: str) -> None:
    print(f"server.py: {message}", file=sys.stderr)
    sys.exit(EXIT_USAGE)


def pg_bin(given: str | None) -> Path:
    """The directory holding `initdb`, `postgres` and `psql`: `--pg-bin`,
    else `$PG_BIN`, else the one of `initdb` on PATH, else the newest
    /usr/lib/postgresql/N/bin (Debian's layout)."""
    candidates = [given, os.environ.get("PG_BIN")]
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(str(Path(on_path).resolve().parent))
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(Path(d).parent.name) if Path(d).parent.name.isdigit() else 0)
    candidates.extend(reversed(debian))
    for c in candidates:
        if c and all((Path(c) / b).is_file() for b in ("initdb", "postgres", "psql")):
            return Path(c)
    usage_error("no PostgreSQL server binaries (initdb, postgres, psql): install postgresql-15, or pass --pg-bin DIR")
    raise AssertionError


def as_user(name: str | None):
    """A `preexec_fn` that drops to user `name` (initdb and postgres refuse
    to run as root) and makes the child die with the shim."""
    ids = None
    if name is not None:
        pw = pwd.getpwnam(name)
        ids = (pw.pw_uid, pw.pw_gid)
    libc = ctypes.CDLL("libc.so.6", use_errno=True)

    def run() -> None:
        if ids is not None:
            os.setgroups([])
            os.setgid(ids[1])
            os.setuid(ids[0])
        # After the uid change, which clears it: the postmaster gets SIGQUIT
        # (immediate shutdown) if the shim dies without stopping it.
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGQUIT)

    return run


class Cluster:
    """A PostgreSQL cluster reachable only through its Unix socket in a
    temporary directory. Throwaway by default (the data in that directory,
    removed at stop); with `data_dir` persistent: the data lives there, is
    reused when it already holds a cluster, and is never removed, so a shim
    killed with SIGKILL and started again on it finds every committed
    transaction (README.md, "Crash and restart")."""

    def __init__(self, bindir: Path, log: bool, data_dir: Path | None = None) -> None:
        self.bindir = bindir
        self.user = None
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                usage_error("running as root, and there is no user `postgres` to run PostgreSQL as")
            self.user = "postgres"
        self.dir = Path(tempfile.mkdtemp(prefix="conform-pg-"))
        self.persistent = data_dir is not None
        self.data = data_dir if data_dir is not None else self.dir / "data"
        #: Whether the data directory already held a cluster (then nothing is loaded).
        self.reused = self.persistent and (self.data / "PG_VERSION").is_file()
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = log
        try:
            if self.user is not None:
                pw = pwd.getpwnam(self.user)
                os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self._start()
        except BaseException:
            self.stop()
            raise

    def _run(self, args: list[str]) -> None:
        r = subprocess.run(args, preexec_fn=as_user(self.user), capture_output=True, cwd=self.dir)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:2])} failed ({r.returncode}): {r.stderr.decode(errors='replace')[-2000:]}")

    def _wait_for_old_postmaster(self) -> None:
        """A postmaster of a killed shim is told to quit (SIGQUIT, immediate
        shutdown) when the shim dies, but may still be exiting: wait until
        the pid its lock file names is gone (else the new one refuses the
        data directory)."""
        try:
            pid = int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            except PermissionError:
                pass
            time.sleep(0.02)

    def _start(self) -> None:
        data = self.data
        if self.reused:
            self._wait_for_old_postmaster()
        elif self.persistent:
            # initdb beside the directory, then one rename: a shim killed
            # during initdb leaves no half-made cluster to be reused.
            partial = data.with_name(data.name + ".initdb-partial")
            shutil.rmtree(partial, ignore_errors=True)
            partial.mkdir(parents=True)
            if self.user is not None:
                pw = pwd.getpwnam(self.user)
                os.chown(partial, pw.pw_uid, pw.pw_gid)
            self._run([str(self.bindir / "initdb"), "-D", str(partial), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"])
            if data.exists():
                data.rmdir()  # empty (else refused in main); initdb's takes its place
            partial.rename(data)
        else:
            self._run([str(self.bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"])
        logfile = open(self.dir / "postgres.log", "wb")  # noqa: SIM115 - kept open for the postmaster's life
        # fsync off in both modes: nothing here is meant to survive a power
        # loss. A persistent cluster commits synchronously (the commit's WAL
        # is written to the kernel before the answer), so a commit survives
        # the death of every process; a throwaway one need not.
        sync = "on" if self.persistent else "off"
        self.proc = subprocess.Popen(
            [str(self.bindir / "postgres"), "-D", str(data),
             "-c", "listen_addresses=", "-c", f"unix_socket_directories={self.dir}",
             "-c", "fsync=off", "-c", f"synchronous_commit={sync}", "-c", "full_page_writes=off"],
            preexec_fn=as_user(self.user), stdout=logfile, stderr=logfile, cwd=self.dir,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                psycopg.connect(**self.dsn()).close()
                return
            except psycopg.OperationalError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    tail = (self.dir / "postgres.log").read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"postgres did not start: {tail}") from None
                time.sleep(0.05)

    def dsn(self) -> dict[str, Any]:
        return {"host": str(self.dir), "dbname": "postgres", "user": "postgres"}

    def loaded(self) -> bool:
        """Whether the database already holds resonate-pg's schema (a
        persistent cluster loaded by an earlier shim)."""
        with psycopg.connect(**self.dsn()) as c:
            return c.execute("SELECT to_regproc('resonate.get_schema_version') IS NOT NULL").fetchone()[0]

    def load(self, sql: Path) -> None:
        """`psql -f FILE`, as resonate-pg's README installs it, in one
        transaction: a shim killed while loading leaves nothing half-loaded
        in a persistent cluster (the next one loads it again)."""
        r = subprocess.run(
            [str(self.bindir / "psql"), "-h", str(self.dir), "-U", "postgres", "-d", "postgres",
             "-X", "-q", "-1", "-v", "ON_ERROR_STOP=1", "-f", str(sql)],
            capture_output=True,
        )
        out = (r.stdout + r.stderr).decode(errors="replace").strip()
        if r.returncode != 0:
            raise RuntimeError(f"loading {sql} failed: {out[-2000:]}")
        if self.log and out:
            print(out, file=sys.stderr, flush=True)

    def stop(self) -> None:
        """Fast shutdown, then remove the temporary directory (a persistent
        data directory is kept)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class PgShim(Shim):
    """resonate-pg behind the shared HTTP loop. Not serial: every HTTP
    connection's thread takes a database connection of its own from a pool,
    so requests run in PostgreSQL at once, under resonate.sql's own locks,
    each in its own transaction (autocommit)."""

    serial = False

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.idle: queue.SimpleQueue[psycopg.Connection[Any]] = queue.SimpleQueue()
        self.conn = self.connect()
        tables = [r[0] for r in self.conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'resonate' ORDER BY tablename")]
        if not tables:
            raise RuntimeError("the SQL file made no tables in schema `resonate`: is it resonate-pg's resonate.sql?")
        self.truncate = "TRUNCATE " + ", ".join(f"resonate.{t}" for t in tables) + " RESTART IDENTITY CASCADE"
        self.server_version = self.conn.execute("SHOW server_version").fetchone()[0]
        schema = self.conn.execute("SELECT resonate.get_schema_version()").fetchone()[0]
        self.schema_version = schema
        self.conn.execute(SNAP_SQL)  # fails now, naming what is missing, rather than at the first snap

    def connect(self) -> psycopg.Connection[Any]:
        return psycopg.connect(**self.cluster.dsn(), autocommit=True)

    def one(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        """One statement (one transaction) on a pooled connection; a
        connection that failed is dropped, not returned to the pool."""
        try:
            conn = self.idle.get_nowait()
        except queue.Empty:
            conn = self.connect()
        try:
            row = conn.execute(sql, params).fetchone()
        except BaseException:
            conn.close()
            raise
        self.idle.put(conn)
        return row[0] if row is not None else None

    def request(self, env: dict[str, Any]) -> dict[str, Any]:
        return self.one("SELECT resonate.resonate_rpc(%s)", (Jsonb(env),))

    def tick(self, time: int) -> None:
        self.one("SELECT resonate.process_timeouts(%s::bigint)", (time,))

    def reset(self) -> None:
        self.conn.execute(self.truncate)

    def snap(self) -> dict[str, Any]:
        return self.one(SNAP_SQL)

    def close(self) -> None:
        try:
            self.conn.close()
            while True:
                try:
                    self.idle.get_nowait().close()
                except queue.Empty:
                    break
        finally:
            self.cluster.stop()


def extra(p) -> None:
    p.add_argument("--sql", default=os.environ.get("RESONATE_PG_SQL"),
                   help="resonate-pg's resonate.sql, from your checkout (default: $RESONATE_PG_SQL)")
    p.add_argument("--pg-bin", default=None, help="directory of initdb, postgres and psql (default: found)")
    p.add_argument("--data-dir", default=None,
                   help="keep the cluster's data here (reused if it holds one, never removed): "
                        "a restart on it keeps every committed transaction (default: throwaway)")


def main() -> None:
    args = parse_args("server.py", "resonate-pg on a throwaway PostgreSQL cluster over HTTP, for conform.", extra)
    if not args.sql:
        usage_error("no resonate.sql: pass --sql FILE or set RESONATE_PG_SQL (README.md, 'Install')")
    sql = Path(args.sql)
    if not sql.is_file():
        usage_error(f"--sql {sql}: no such file")
    bindir = pg_bin(args.pg_bin)
    data_dir = Path(args.data_dir).resolve() if args.data_dir else None
    if data_dir is not None and data_dir.exists() and (
            not data_dir.is_dir() or (not (data_dir / "PG_VERSION").is_file() and any(data_dir.iterdir()))):
        usage_error(f"--data-dir {data_dir}: neither a cluster nor an empty directory")
    try:
        cluster = Cluster(bindir, args.log, data_dir)
    except RuntimeError as e:
        sys.exit(f"server.py: {e}")
    try:
        if not (cluster.reused and cluster.loaded()):
            cluster.load(sql.resolve())
        shim = PgShim(cluster)
    except (RuntimeError, psycopg.Error) as e:
        cluster.stop()
        sys.exit(f"server.py: {e}")
    where = (f"data in {cluster.data} ({'reused' if cluster.reused else 'new'}, kept), socket in {cluster.dir}"
             if cluster.persistent else f"cluster in {cluster.dir}")
    banner = (f"resonate-pg schema {shim.schema_version} from {sql}, PostgreSQL {shim.server_version} "
              f"({bindir}), {where}")
    serve(shim, args, banner)


if __name__ == "__main__":
    main()
