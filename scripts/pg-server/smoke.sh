#!/usr/bin/env bash
# Smoke test of the resonate-pg shim (server.py): starts it (and with it a
# throwaway PostgreSQL cluster) on an ephemeral loopback port, sends requests
# with curl and checks statuses and fields of the answers and snapshots, then
# checks that the cluster is gone after the shim stops. Needs the venv and a
# resonate.sql of your own (README.md, "Install").
#
#   RESONATE_PG_SQL=PATH/resonate.sql scripts/pg-server/smoke.sh
#
# Talks only to 127.0.0.1. Ends with "N passed, M failed"; exits 1 on a failure.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
py="$here/.venv/bin/python"
if [ ! -x "$py" ] || ! "$py" -c 'import psycopg' 2>/dev/null; then
  echo "no venv with psycopg at $here/.venv: see $here/README.md, 'Install'" >&2
  exit 1
fi
if [ -z "${RESONATE_PG_SQL:-}" ] || [ ! -f "$RESONATE_PG_SQL" ]; then
  echo "set RESONATE_PG_SQL to resonate-pg's resonate.sql from your checkout (README.md, 'Install')" >&2
  exit 1
fi
# shellcheck source=../shim_smoke.sh
. "$here/../shim_smoke.sh"

T='"resonate:target":"http://worker.local/a"'
H='"head":{"corrId":"","version":"2026-04-01"}'

start pg "$py" "$here/server.py" --sql "$RESONATE_PG_SQL" --log
cluster=$(sed -n 's/.*, cluster in //p' "$work/err.pg")
[ -d "$cluster" ] && ok "cluster in $cluster" || ko "no cluster directory named on stderr: $(cat "$work/err.pg")"
expect 200 debug.start '{}'
expect 200 debug.reset '{}'

# promise.create: param and value as {headers, data} (DIALECT.md)
expect 200 promise.create "{\"id\":\"a\",\"timeoutAt\":900000,\"param\":{},\"tags\":{$T}}" 1000
is 'r["data"]["promise"]["state"]' '"pending"'
is 'r["data"]["promise"]["value"]' '{"data":null,"headers":{}}'
snap
is 'r["data"]["tasks"]' '[{"id":"a","pid":null,"resumes":0,"state":"pending","ttl":null,"version":0}]'
is 'r["data"]["taskTimeouts"]' '[{"id":"a","timeout":6000,"type":0}]'
is 'r["data"]["promiseTimeouts"]' '[{"id":"a","timeout":900000}]'
is 'r["data"]["messages"]' '[{"address":"http://worker.local/a","message":{"data":{"task":{"id":"a","version":0}},"head":{},"kind":"execute"}}]'
is 'sorted(r["data"])' '["callbacks","listeners","messages","promiseTimeouts","promises","resumes","scheduleTimeouts","schedules","taskTimeouts","tasks"]'

expect 200 task.acquire '{"id":"a","version":0,"pid":"p1","ttl":5000}' 1000
is 'r["data"]["task"]' '{"id":"a","pid":"p1","resumes":0,"state":"acquired","ttl":5000,"version":1}'
expect 409 task.acquire '{"id":"a","version":0,"pid":"p1","ttl":5000}' 1000
is 'r["data"]' '"conflict"'

# suspend on an external promise, settle it, the task is resumed
expect 200 promise.create "{\"id\":\"a.1\",\"timeoutAt\":50000,\"param\":{},\"tags\":{$T}}" 1000
expect 200 task.suspend "{\"id\":\"a\",\"version\":1,\"actions\":[{\"kind\":\"promise.register_callback\",$H,\"data\":{\"awaited\":\"a.1\",\"awaiter\":\"a\"}}]}" 1000
is 'r["data"]' '{"preload":[]}'
snap
is 'r["data"]["callbacks"]' '[{"awaited":"a.1","awaiter":"a"}]'
expect 200 promise.settle '{"id":"a.1","state":"resolved","value":{}}' 2000
snap
is 'r["data"]["resumes"]' '[{"awaited":"a.1","id":"a"}]'
is '[t for t in r["data"]["tasks"] if t["id"] == "a"][0]["state"]' '"pending"'
is '[m["address"] for m in r["data"]["messages"] if m["message"]["data"].get("task", {}).get("id") == "a.1"]' '[]'

# a plain (internal) promise is not awaitable: 422 (DIALECT.md)
expect 200 promise.create '{"id":"b","timeoutAt":900000,"param":{},"tags":{}}' 2000
expect 200 promise.register_listener '{"awaited":"b","address":"http://listener.local/1"}' 2000
snap
is 'r["data"]["listeners"]' '[{"address":"http://listener.local/1","id":"b"}]'
expect 422 promise.register_callback '{"awaited":"b","awaiter":"a"}' 2000
expect 200 promise.settle '{"id":"b","state":"rejected","value":{}}' 3000
snap
is '[m["message"]["kind"] for m in r["data"]["messages"] if m["address"] == "http://listener.local/1"]' '["unblock"]'

# debug.tick: the retry of `a` (pending since 2000) fires at 7000 and re-arms
expect 200 debug.tick '{"time":7000}' 7000
is 'r["data"]' '[]'
snap
is '[t for t in r["data"]["taskTimeouts"] if t["id"] == "a"]' '[{"id":"a","timeout":12000,"type":0}]'
# a promise timeout fires at its deadline
expect 200 promise.create "{\"id\":\"c\",\"timeoutAt\":8000,\"param\":{},\"tags\":{$T}}" 7000
expect 200 debug.tick '{"time":9000}' 9000
snap
is '[[p["state"], p["settledAt"]] for p in r["data"]["promises"] if p["id"] == "c"]' '[["rejected_timedout",8000]]'

# task.fence: the inner action with its own head
expect 200 task.create "{\"pid\":\"p1\",\"ttl\":10000,\"action\":{\"kind\":\"promise.create\",$H,\"data\":{\"id\":\"f\",\"timeoutAt\":900000,\"param\":{},\"tags\":{$T}}}}" 9000
is 'r["data"]["task"]["version"]' '1'
expect 200 task.fence "{\"id\":\"f\",\"version\":1,\"action\":{\"kind\":\"promise.create\",$H,\"data\":{\"id\":\"f.1\",\"timeoutAt\":900000,\"param\":{},\"tags\":{}}}}" 9000
is 'r["data"]["action"]["head"]["status"]' '200'
is 'r["data"]["action"]["data"]["promise"]["id"]' '"f.1"'
expect 200 task.heartbeat '{"pid":"p1","tasks":[{"id":"f","version":1}]}' 9500

# schedules fire at a tick, catching up every occurrence
expect 200 schedule.create "{\"id\":\"s1\",\"cron\":\"* * * * *\",\"promiseId\":\"{{.id}}.{{.timestamp}}\",\"promiseTimeout\":60000,\"promiseParam\":{},\"promiseTags\":{$T}}" 9500
is 'r["data"]["schedule"]["nextRunAt"]' '60000'
expect 200 debug.tick '{"time":190000}' 190000
snap
is 'r["data"]["scheduleTimeouts"]' '[{"id":"s1","timeout":240000}]'
is 'sorted(p["id"] for p in r["data"]["promises"] if p["id"].startswith("s1."))' '["s1.120000","s1.180000","s1.60000"]'
expect 501 promise.search '{}' 190000

envelopes

expect 200 debug.reset '{}'
snap
is 'r["data"]["promises"]' '[]'
is 'r["data"]["schedules"]' '[]'
is 'r["data"]["messages"]' '[]'
expect 200 debug.stop '{}'

# the cluster goes with the shim
kill -TERM "${pids[-1]}"
for _ in $(seq 1 100); do kill -0 "${pids[-1]}" 2>/dev/null || break; sleep 0.1; done
if [ -n "$cluster" ] && [ -e "$cluster" ]; then ko "cluster directory $cluster left behind"; else ok "cluster directory removed on SIGTERM"; fi

refuse_bind "$py" "$here/server.py" --sql "$RESONATE_PG_SQL"
if "$py" "$here/server.py" --port 0 --sql /nonexistent/resonate.sql >/dev/null 2>&1; then
  ko "a missing --sql file accepted"
else
  rc=$?
  [ "$rc" = 2 ] && ok "a missing --sql file refused with exit 2" || ko "a missing --sql file: exit $rc"
fi
summary
