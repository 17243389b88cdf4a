#!/usr/bin/env bash
# Smoke test of the Python-SDK-server shim (server.py): starts it on an
# ephemeral loopback port, sends requests with curl and checks statuses and
# fields of the answers and snapshots. Needs the venv (README.md, "Install").
#
#   scripts/py-server/smoke.sh
#
# Talks only to 127.0.0.1. Ends with "N passed, M failed"; exits 1 on a failure.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
py="$here/.venv/bin/python"
if [ ! -x "$py" ] || ! "$py" -c 'import resonate.connections.local' 2>/dev/null; then
  echo "no venv with resonate-sdk at $here/.venv: see $here/README.md, 'Install'" >&2
  exit 1
fi
# shellcheck source=../shim_smoke.sh
. "$here/../shim_smoke.sh"

T='"resonate:target":"http://worker.local/a"'
H='"head":{"corrId":"","version":"2026-04-01"}'

start py "$py" "$here/server.py"
expect 200 debug.start '{}'
expect 200 debug.reset '{}'

# promise.create: 201 for a new promise, value null (DIALECT.md W1, W2)
expect 201 promise.create "{\"id\":\"a\",\"timeoutAt\":900000,\"param\":{},\"tags\":{$T}}" 1000
is 'r["data"]["promise"]["state"]' '"pending"'
is 'r["data"]["promise"]["value"]' 'null'
expect 200 promise.create "{\"id\":\"a\",\"timeoutAt\":900000,\"param\":{},\"tags\":{$T}}" 1000
snap
is 'r["data"]["tasks"]' '[{"id":"a","resumes":0,"state":"pending","version":0}]'
is 'r["data"]["taskTimeouts"]' '[{"id":"a","timeout":31000,"type":0}]'
is 'r["data"]["messages"]' '[{"address":"http://worker.local/a","message":{"data":{"task":{"id":"a","version":0}},"kind":"execute"}}]'
is 'sorted(r["data"])' '["callbacks","listeners","messages","promiseTimeouts","promises","resumes","scheduleTimeouts","schedules","taskTimeouts","tasks"]'

# task.acquire keeps the version; the task record carries promiseId and no resumes
expect 200 task.acquire '{"id":"a","version":0,"pid":"p1","ttl":5000}' 1000
is 'r["data"]["task"]' '{"id":"a","pid":"p1","promiseId":"a","state":"acquired","ttl":5000,"version":0}'
expect 409 task.acquire '{"id":"a","version":0,"pid":"p1","ttl":5000}' 1000
is 'r["data"]' '{"error":"task not in pending state (state: Acquired)"}'

# task.suspend on a pending promise, then its settlement resumes the task
expect 201 promise.create "{\"id\":\"a.1\",\"timeoutAt\":50000,\"param\":{},\"tags\":{$T}}" 1000
expect 200 task.suspend "{\"id\":\"a\",\"version\":0,\"actions\":[{\"kind\":\"promise.register_callback\",$H,\"data\":{\"awaited\":\"a.1\",\"awaiter\":\"a\"}}]}" 1000
snap
is 'r["data"]["callbacks"]' '[{"awaited":"a.1","awaiter":"a"}]'
is 'r["data"]["tasks"][0]["state"]' '"suspended"'
expect 200 promise.settle '{"id":"a.1","state":"resolved","value":{}}' 2000
is 'r["data"]["promise"]["settledAt"]' '2000'
snap
is 'r["data"]["resumes"]' '[{"awaited":"a.1","id":"a"}]'
is '[t for t in r["data"]["tasks"] if t["id"] == "a"][0]' '{"id":"a","resumes":1,"state":"pending","version":1}'
is '[m["message"]["data"]["task"] for m in r["data"]["messages"] if m["message"]["kind"] == "execute" and m["message"]["data"]["task"]["id"] == "a"]' '[{"id":"a","version":1}]'

# a suspend while a resume is buffered: 300 with redirect (DIALECT.md W4)
expect 200 task.acquire '{"id":"a","version":1,"pid":"p1","ttl":5000}' 2000
expect 201 promise.create "{\"id\":\"a.2\",\"timeoutAt\":50000,\"param\":{},\"tags\":{$T}}" 2000
expect 200 promise.settle '{"id":"a.2","state":"resolved","value":{}}' 2000
expect 300 task.suspend "{\"id\":\"a\",\"version\":1,\"actions\":[{\"kind\":\"promise.register_callback\",$H,\"data\":{\"awaited\":\"a.2\",\"awaiter\":\"a\"}}]}" 2000
is 'r["data"]' '{"preload":[],"redirect":true}'

# listeners and their unblock message
expect 201 promise.create '{"id":"b","timeoutAt":900000,"param":{},"tags":{}}' 2000
expect 200 promise.register_listener '{"awaited":"b","address":"http://listener.local/1"}' 2000
snap
is 'r["data"]["listeners"]' '[{"address":"http://listener.local/1","id":"b"}]'
expect 200 promise.settle '{"id":"b","state":"rejected","value":{}}' 3000
snap
is '[m["message"]["kind"] for m in r["data"]["messages"] if m["address"] == "http://listener.local/1"]' '["unblock"]'
is 'r["data"]["listeners"]' '[]'

# debug.tick: the lease of `a` (acquired at 2000, ttl 5000) is released at 7000
expect 200 debug.tick '{"time":7000}' 7000
is 'r["data"]' '[]'
snap
is '[t for t in r["data"]["tasks"] if t["id"] == "a"][0]' '{"id":"a","resumes":0,"state":"pending","version":2}'
is '[t for t in r["data"]["taskTimeouts"] if t["id"] == "a"]' '[{"id":"a","timeout":37000,"type":0}]'
# a promise timeout fires at its deadline
expect 201 promise.create "{\"id\":\"c\",\"timeoutAt\":8000,\"param\":{},\"tags\":{$T}}" 7000
expect 200 debug.tick '{"time":9000}' 9000
snap
is '[p["state"] for p in r["data"]["promises"] if p["id"] == "c"]' '["rejected_timedout"]'
is '[p["settledAt"] for p in r["data"]["promises"] if p["id"] == "c"]' '[8000]'

# task.fence: the action without its inner status (DIALECT.md W5)
expect 201 task.create "{\"pid\":\"p1\",\"ttl\":10000,\"action\":{\"kind\":\"promise.create\",$H,\"data\":{\"id\":\"f\",\"timeoutAt\":900000,\"param\":{},\"tags\":{$T}}}}" 9000
is 'r["data"]["task"]["version"]' '0'
expect 200 task.fence "{\"id\":\"f\",\"version\":0,\"action\":{\"kind\":\"promise.create\",$H,\"data\":{\"id\":\"f.1\",\"timeoutAt\":900000,\"param\":{},\"tags\":{}}}}" 9000
is 'r["data"]["action"]' '{"data":{"promise":{"createdAt":9000,"id":"f.1","param":{},"state":"pending","tags":{},"timeoutAt":900000,"value":null}}}'
expect 200 task.heartbeat '{"pid":"p1","tasks":[{"id":"f","version":0}]}' 9500

# schedules are stored, never fired
expect 201 schedule.create "{\"id\":\"s1\",\"cron\":\"* * * * *\",\"promiseId\":\"{{.id}}.{{.timestamp}}\",\"promiseTimeout\":60000,\"promiseParam\":{},\"promiseTags\":{$T}}" 9500
is 'r["data"]["schedule"]["nextRunAt"]' '0'
expect 200 debug.tick '{"time":200000}' 200000
snap
is 'r["data"]["schedules"][0]["id"]' '"s1"'
is 'r["data"]["scheduleTimeouts"]' '[]'
is '[p["id"] for p in r["data"]["promises"] if p["id"].startswith("s1.")]' '[]'

# kinds local.py does not implement: 400 from apply (a ServerError)
expect 400 task.get '{"id":"a"}' 200000
is 'r["data"]' '"unknown request kind: task.get"'
expect 400 promise.register_callback '{"awaited":"a.1","awaiter":"a"}' 200000
expect 400 promise.get '{}' 200000
is 'r["data"]' '"missing or empty required field: id"'

envelopes

expect 200 debug.reset '{}'
snap
is 'r["data"]["promises"]' '[]'
is 'r["data"]["messages"]' '[]'
expect 200 debug.stop '{}'

refuse_bind "$py" "$here/server.py"
summary
