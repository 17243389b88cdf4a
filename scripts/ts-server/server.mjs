#!/usr/bin/env node
// An HTTP shim serving the in-process Resonate server of the TypeScript SDK
// (`@resonatehq/sdk` 0.11.5, `dist/src/network/local.js`, class `Server`) with
// the envelope protocol and debug surface that `conform` speaks.
//
//   node scripts/ts-server/server.mjs --port 0 [--bind 127.0.0.1] [--timeout-mode eager|none]
//
// The shim is transport, not a fix: every request that passes the envelope
// checks and the guards below goes to `Server.apply(now, req)` unchanged, and
// its answer comes back unchanged except for the envelope head. README.md in
// this directory lists every guard with its reason; DIALECT.md lists how the
// answers differ from the Rust server's wire.
//
// Only Node built-ins and the SDK are used.

// Cron occurrences are computed by cron-parser (via luxon) in the process's
// local zone (local.js passes no `tz`). Pin it to UTC before the SDK loads;
// Node applies a runtime change of TZ to Date and Intl alike, and the check
// after the import refuses to serve if it did not take.
process.env.TZ = "UTC";

import http from "node:http";
import net from "node:net";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const PROTOCOL_VERSION = "2026-04-01";
const MAX_BODY = 32 * 1024 * 1024;
const EXIT_USAGE = 2;

const USAGE = `usage: node scripts/ts-server/server.mjs [--port 0] [--bind 127.0.0.1] [--timeout-mode eager|none] [--log]

  --port N          TCP port (0 = ephemeral; the bound address is printed)      [default 0]
  --bind ADDR       loopback address to bind: 127.0.0.0/8, ::1 or localhost     [default 127.0.0.1]
  --timeout-mode M  the SDK Server's timeoutMode: "eager" (materialise expired
                    promises a request names before handling it) or "none"
                    (project on read, settle only on debug.tick)              [default eager]
  --log             one line per request on stderr (kind, status, guard or error)

Prints "listening on http://ADDR:PORT" on stdout once listening.`;

// ---------------------------------------------------------------------------
// command line
// ---------------------------------------------------------------------------

function usageError(message) {
  process.stderr.write(`server.mjs: ${message}\n${USAGE}\n`);
  process.exit(EXIT_USAGE);
}

function parseArgs(argv) {
  const opts = { port: 0, bind: "127.0.0.1", timeoutMode: "eager", log: false };
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let value;
    const eq = arg.indexOf("=");
    if (arg.startsWith("--") && eq !== -1) {
      value = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    const next = () => {
      if (value !== undefined) return value;
      if (i + 1 >= argv.length) usageError(`${arg} needs a value`);
      return argv[++i];
    };
    switch (arg) {
      case "-h":
      case "--help":
        process.stdout.write(`${USAGE}\n`);
        process.exit(0);
        break;
      case "--port": {
        const v = next();
        if (!/^\d+$/.test(v) || Number(v) > 65535) usageError(`--port ${v}: expected an integer 0..65535`);
        opts.port = Number(v);
        break;
      }
      case "--bind":
        opts.bind = next();
        break;
      case "--timeout-mode": {
        const v = next();
        if (v !== "eager" && v !== "none") usageError(`--timeout-mode ${v}: expected eager or none`);
        opts.timeoutMode = v;
        break;
      }
      case "--log":
        if (value !== undefined) usageError("--log takes no value");
        opts.log = true;
        break;
      default:
        usageError(`unknown argument ${JSON.stringify(argv[i])}`);
    }
  }
  return opts;
}

/** The address to bind when `bind` is a loopback address, else null. */
function loopbackAddress(bind) {
  if (bind === "localhost") return "127.0.0.1";
  const family = net.isIP(bind);
  if (family === 0) return null;
  const loopback = new net.BlockList();
  if (family === 4) {
    loopback.addSubnet("127.0.0.0", 8, "ipv4");
    return loopback.check(bind, "ipv4") ? bind : null;
  }
  // ::1 in any spelling; not an IPv4-mapped address (as Rust's is_loopback).
  if (bind.includes(".")) return null;
  loopback.addAddress("::1", "ipv6");
  return loopback.check(bind, "ipv6") ? bind : null;
}

// ---------------------------------------------------------------------------
// the SDK
// ---------------------------------------------------------------------------

/** `Server` from local.js. The package's `exports` map does not export that
 *  file (nor the class from its index), so it is loaded by path from the
 *  installed package. */
async function loadServerClass() {
  const require = createRequire(import.meta.url);
  let pkgJson;
  try {
    pkgJson = require.resolve("@resonatehq/sdk/package.json");
  } catch {
    process.stderr.write("server.mjs: @resonatehq/sdk is not installed; run `npm ci` in scripts/ts-server\n");
    process.exit(1);
  }
  const pkg = require(pkgJson);
  const local = path.join(path.dirname(pkgJson), "dist", "src", "network", "local.js");
  const mod = await import(pathToFileURL(local).href);
  if (typeof mod.Server !== "function") {
    process.stderr.write(`server.mjs: ${local} has no Server class\n`);
    process.exit(1);
  }
  return { Server: mod.Server, version: pkg.version };
}

function checkUtc() {
  const zone = new Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (new Date(0).getTimezoneOffset() !== 0 || !["UTC", "Etc/UTC"].includes(zone)) {
    process.stderr.write(`server.mjs: could not pin the time zone to UTC (Intl says ${zone})\n`);
    process.exit(1);
  }
}

// ---------------------------------------------------------------------------
// envelopes
// ---------------------------------------------------------------------------

/** The kinds `Server.apply` has a `case` for. Any other kind falls out of its
 *  switch and throws (`result` is undefined, local.js:165). */
const KNOWN_KINDS = new Set([
  "promise.get",
  "promise.create",
  "promise.settle",
  "promise.register_callback",
  "promise.register_listener",
  "promise.search",
  "task.get",
  "task.create",
  "task.acquire",
  "task.release",
  "task.fulfill",
  "task.suspend",
  "task.halt",
  "task.continue",
  "task.fence",
  "task.heartbeat",
  "task.search",
  "schedule.get",
  "schedule.create",
  "schedule.delete",
  "schedule.search",
  "debug.start",
  "debug.stop",
  "debug.reset",
  "debug.snap",
  "debug.tick",
]);

function envelope(kind, corrId, status, data) {
  return { kind, head: { corrId, status, version: PROTOCOL_VERSION }, data };
}

const isObject = (v) => typeof v === "object" && v !== null;
const isPlainObject = (v) => isObject(v) && !Array.isArray(v);
const isTime = (v) => Number.isSafeInteger(v) && v >= 0;

class Refusal extends Error {
  constructor(status, message, reason) {
    super(message);
    this.status = status;
    this.reason = reason;
  }
}

/** Open the envelope as the Rust server does: a JSON object with a non-empty
 *  string `kind`, a `head` with a string `corrId`, the protocol `version` and
 *  an optional time, and an object `data`. Throws a Refusal (400). */
function openEnvelope(raw) {
  const fail = (message) => {
    const kind = isPlainObject(raw) && typeof raw.kind === "string" && raw.kind !== "" ? raw.kind : "unknown";
    const corrId = isPlainObject(raw) && isPlainObject(raw.head) && typeof raw.head.corrId === "string" ? raw.head.corrId : "0";
    return Object.assign(new Refusal(400, message, "envelope"), { kind, corrId });
  };
  if (!isPlainObject(raw)) throw fail("expected an object");
  if (typeof raw.kind !== "string" || raw.kind === "") throw fail("kind: expected a non-empty string");
  if (!isPlainObject(raw.head)) throw fail("head: expected an object");
  if (typeof raw.head.corrId !== "string") throw fail("head.corrId: expected a string");
  if (typeof raw.head.version !== "string") throw fail("head.version: expected a string");
  if (raw.head.version !== PROTOCOL_VERSION) {
    throw fail(`head.version: unsupported protocol version \`${raw.head.version}\`, expected \`${PROTOCOL_VERSION}\``);
  }
  const t = raw.head["resonate:debug_time"];
  if (t !== undefined && t !== null && !isTime(t)) {
    throw fail("head.resonate:debug_time: expected a non-negative integer (at most 2^53-1)");
  }
  if (!isPlainObject(raw.data)) throw fail("data: expected an object");
  return { kind: raw.kind, head: raw.head, data: raw.data, debugTime: t ?? undefined };
}

// ---------------------------------------------------------------------------
// guards: requests the SDK Server would take but that crash or corrupt it.
// Each is listed, with its reason, in README.md ("Guards").
// ---------------------------------------------------------------------------

/** The states local.js can settle a promise into without breaking itself. */
const SETTLED_STATES = new Set(["resolved", "rejected", "rejected_canceled", "rejected_timedout"]);

function guardCreate(d, at) {
  // G1: a deadline that is not a number.
  if (typeof d.timeoutAt !== "number") return `${at}.timeoutAt: must be a number (G1)`;
  // G2: tags absent or null.
  if (d.tags === undefined || d.tags === null) return `${at}.tags: must be present and not null (G2)`;
  return null;
}

function guardSettle(d, at) {
  // G3: a settle state that is not a settled promise state.
  if (!SETTLED_STATES.has(d.state)) {
    return `${at}.state: must be one of resolved, rejected, rejected_canceled, rejected_timedout (G3)`;
  }
  return null;
}

function guard(kind, d) {
  switch (kind) {
    case "promise.create":
      return guardCreate(d, "data");
    case "promise.settle":
      return guardSettle(d, "data");
    case "task.create":
      if (typeof d.ttl !== "number") return "data.ttl: must be a number (G1)";
      if (isObject(d.action) && isObject(d.action.data) && typeof d.action.data.timeoutAt !== "number") {
        return "data.action.data.timeoutAt: must be a number (G1)";
      }
      return null;
    case "task.acquire":
      if (typeof d.ttl !== "number") return "data.ttl: must be a number (G1)";
      return null;
    case "task.fulfill":
      if (isObject(d.action) && isObject(d.action.data)) return guardSettle(d.action.data, "data.action.data");
      return null;
    case "task.fence": {
      // G4: the action, its data and its head must be objects.
      const a = d.action;
      if (!isObject(a)) return "data.action: must be an object (G4)";
      if (!isObject(a.data)) return "data.action.data: must be an object (G4)";
      if (!isObject(a.head)) return "data.action.head: must be an object (G4)";
      // local.js runs promiseCreate for kind "promise.create" and promiseSettle
      // for every other kind, so the guards of that handler apply.
      return a.kind === "promise.create" ? guardCreate(a.data, "data.action.data") : guardSettle(a.data, "data.action.data");
    }
    case "task.heartbeat":
      // G5: a null (or non-object) element of the tasks list.
      if (Array.isArray(d.tasks)) {
        const i = d.tasks.findIndex((t) => !isObject(t));
        if (i !== -1) return `data.tasks[${i}]: must be an object (G5)`;
      }
      return null;
    case "schedule.create":
      // G1: promiseTimeout is added to each occurrence's time.
      if (typeof d.promiseTimeout !== "number") return "data.promiseTimeout: must be a number (G1)";
      // G6: the promise id template is expanded with String.replaceAll at every firing.
      if (typeof d.promiseId !== "string") return "data.promiseId: must be a string (G6)";
      return null;
    default:
      return null;
  }
}

// ---------------------------------------------------------------------------
// the shim
// ---------------------------------------------------------------------------

class Shim {
  constructor(Server, timeoutMode) {
    this.Server = Server;
    this.timeoutMode = timeoutMode;
    this.server = new Server({ timeoutMode });
    // `now` for a request without resonate:debug_time: the last time seen on
    // any request (0 before the first). Never the wall clock.
    this.lastNow = 0;
  }

  /** One request body → [envelope, note for the log]. Never throws. */
  handle(body) {
    let kind = "unknown";
    let corrId = "0";
    try {
      let raw;
      try {
        raw = JSON.parse(body);
      } catch (e) {
        return [envelope(kind, corrId, 400, `invalid request envelope: ${e.message}`), "envelope"];
      }
      let env;
      try {
        env = openEnvelope(raw);
      } catch (e) {
        if (e instanceof Refusal) return [envelope(e.kind, e.corrId, 400, e.message), "envelope"];
        throw e;
      }
      ({ kind } = env);
      corrId = env.head.corrId;
      if (!KNOWN_KINDS.has(kind)) {
        return [envelope(kind, corrId, 400, `kind: unknown kind \`${kind}\``), "unknown kind"];
      }
      if (env.debugTime !== undefined) this.lastNow = env.debugTime;
      const now = this.lastNow;
      const req = { kind, head: env.head, data: env.data };
      switch (kind) {
        case "debug.reset":
          this.server = new this.Server({ timeoutMode: this.timeoutMode });
          return [envelope(kind, corrId, 200, {}), ""];
        case "debug.snap":
          return [this.snap(now, req), ""];
        case "debug.tick": {
          const time = env.data.time;
          if (!isTime(time)) return [envelope(kind, corrId, 400, "missing or invalid 'time' field"), "tick"];
          if (env.debugTime !== undefined && env.debugTime !== time) {
            return [envelope(kind, corrId, 400, "resonate:debug_time must equal data.time"), "tick"];
          }
          this.lastNow = time;
          return [this.apply(time, req), ""];
        }
        default: {
          const refusal = guard(kind, env.data);
          if (refusal !== null) return [envelope(kind, corrId, 400, refusal), "guard"];
          return [this.apply(now, req), ""];
        }
      }
    } catch (e) {
      return [envelope(kind, corrId, 500, errorMessage(e)), "error"];
    }
  }

  /** `Server.apply`, its response re-headed as LocalNetwork.send does. */
  apply(now, req) {
    let response;
    try {
      ({ response } = this.server.apply(now, req));
    } catch (e) {
      return envelope(req.kind, req.head.corrId, 500, errorMessage(e));
    }
    return envelope(response.kind, req.head.corrId, response.head.status, response.data);
  }

  /** The SDK's own `debug.snap` (promises, promiseTimeouts, callbacks,
   *  listeners, tasks, taskTimeouts, messages) plus what it leaves out but
   *  the Server holds: schedules (each as `schedule.get` renders it),
   *  scheduleTimeouts and the buffered resumes of every task. */
  snap(now, req) {
    const env = this.apply(now, req);
    if (env.head.status !== 200 || !isPlainObject(env.data)) return env;
    const s = this.server;
    const schedules = [];
    for (const id of s.schedules.keys()) {
      const { response } = s.apply(now, {
        kind: "schedule.get",
        head: { corrId: req.head.corrId, version: PROTOCOL_VERSION },
        data: { id },
      });
      if (response.head.status !== 200) throw new Error(`schedule.get ${id} answered ${response.head.status}`);
      schedules.push(response.data.schedule);
    }
    env.data = {
      ...env.data,
      schedules,
      scheduleTimeouts: s.sTimeouts.map(({ id, timeout }) => ({ id, timeout })),
      resumes: Array.from(s.tasks.values()).flatMap((t) => Array.from(t.resumes, (awaited) => ({ id: t.id, awaited }))),
    };
    return env;
  }
}

function errorMessage(e) {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return String(e);
}

/** HTTP status for an envelope status (Node refuses codes outside 100..999). */
function httpStatus(status) {
  return Number.isInteger(status) && status >= 100 && status <= 599 ? status : 500;
}

function send(res, status, payload) {
  const body = JSON.stringify(payload);
  res.writeHead(httpStatus(status), {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const bind = loopbackAddress(opts.bind);
  if (bind === null) {
    process.stderr.write(`server.mjs: --bind ${opts.bind}: the shim binds loopback addresses only (127.0.0.0/8, ::1, localhost)\n`);
    process.exit(EXIT_USAGE);
  }
  const { Server, version } = await loadServerClass();
  checkUtc();
  const shim = new Shim(Server, opts.timeoutMode);
  const log = opts.log ? (line) => process.stderr.write(`${line}\n`) : () => {};

  const server = http.createServer((req, res) => {
    try {
      if (req.method === "GET" && req.url === "/health") {
        res.writeHead(200, { "content-length": 0 });
        res.end();
        req.resume();
        return;
      }
      if (req.url !== "/" && !req.url.startsWith("/?")) {
        req.resume();
        send(res, 404, envelope("unknown", "0", 404, `no route ${req.method} ${req.url}; POST / takes envelopes`));
        return;
      }
      if (req.method !== "POST") {
        req.resume();
        send(res, 405, envelope("unknown", "0", 405, `method ${req.method} not allowed; POST / takes envelopes`));
        return;
      }
      const chunks = [];
      let size = 0;
      let tooLarge = false;
      req.on("data", (chunk) => {
        size += chunk.length;
        if (size > MAX_BODY) tooLarge = true;
        else chunks.push(chunk);
      });
      req.on("error", () => res.destroy());
      req.on("end", () => {
        try {
          if (tooLarge) {
            send(res, 413, envelope("unknown", "0", 413, `request body over ${MAX_BODY} bytes`));
            return;
          }
          const [payload, note] = shim.handle(Buffer.concat(chunks).toString("utf8"));
          const status = payload.head.status;
          const detail = status >= 400 && typeof payload.data === "string" ? `: ${payload.data}` : "";
          log(`${payload.kind} ${status}${note ? ` (${note})` : ""}${detail}`);
          send(res, payload.head.status, payload);
        } catch (e) {
          log(`shim error: ${errorMessage(e)}`);
          if (!res.headersSent) send(res, 500, envelope("unknown", "0", 500, errorMessage(e)));
          else res.destroy();
        }
      });
    } catch (e) {
      log(`shim error: ${errorMessage(e)}`);
      if (!res.headersSent) send(res, 500, envelope("unknown", "0", 500, errorMessage(e)));
    }
  });
  // Keep idle keep-alive connections open longer than a client's pool keeps
  // them, so the client never reuses a socket the server is closing.
  server.keepAliveTimeout = 600_000;
  server.headersTimeout = 605_000;
  server.requestTimeout = 0;

  let listening = false;
  server.on("error", (e) => {
    if (listening) {
      process.stderr.write(`server.mjs: ${e.message}\n`);
      return;
    }
    process.stderr.write(`server.mjs: cannot serve on ${opts.bind}:${opts.port}: ${e.message}\n`);
    process.exit(EXIT_USAGE);
  });
  server.on("clientError", (e, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n");
    else socket.destroy();
  });
  server.listen(opts.port, bind, () => {
    listening = true;
    const a = server.address();
    const host = a.family === "IPv6" || a.family === 6 ? `[${a.address}]` : a.address;
    process.stdout.write(`listening on http://${host}:${a.port}\n`);
    log(`@resonatehq/sdk ${version} Server, timeoutMode ${opts.timeoutMode}, TZ UTC`);
  });

  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections?.();
    setTimeout(() => process.exit(0), 1000).unref();
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

// The shim must never go down because of one request.
process.on("uncaughtException", (e) => process.stderr.write(`server.mjs: uncaught: ${errorMessage(e)}\n`));
process.on("unhandledRejection", (e) => process.stderr.write(`server.mjs: unhandled rejection: ${errorMessage(e)}\n`));

main();
