#!/usr/bin/env bash
# Smoke test of the TS-server shim (server.mjs): starts it on an ephemeral
# loopback port in each timeout mode, sends requests with curl and checks
# statuses and a few fields of the answers and snapshots. Installs the
# dependencies with `npm ci` first when node_modules is missing.
#
#   scripts/ts-server/smoke.sh
#
# Talks only to 127.0.0.1. Ends with "N passed, M failed"; exits 1 on a failure.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ ! -d "$here/node_modules/@resonatehq/sdk" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
ok() { passed=$((passed + 1)); printf 'ok    %s\n' "$1"; }
ko() { failed=$((failed + 1)); printf 'FAIL  %s\n' "$1"; }

# start MODE: start the shim, set URL.
start() {
  local out="$work/out.$1"
  node "$here/server.mjs" --port 0 --bind 127.0.0.1 --timeout-mode "$1" >"$out" 2>"$work/err.$1" &
  pids+=("$!")
  for _ in $(seq 1 100); do
    if grep -q '^listening on ' "$out"; then break; fi
    sleep 0.1
  done
  URL=$(sed -n 's/^listening on //p' "$out")
  if [ -z "$URL" ]; then
    cat "$work/err.$1" >&2
    echo "the shim did not start" >&2
    exit 1
  fi
  [ "$(wc -l <"$out")" -eq 1 ] && ok "[$1] one line on stdout: listening on $URL" || ko "[$1] stdout: $(cat "$out")"
}

# raw BODY: POST BODY to the shim; sets RESP (body) and HTTP (status code).
raw() {
  HTTP=$(curl -sS -o "$work/resp" -w '%{http_code}' -X POST "$URL/" -H 'content-type: application/json' --data-binary "$1")
  RESP=$(cat "$work/resp")
}

# call KIND DATA [TIME]: an envelope with corrId c-N and, when TIME is given,
# resonate:debug_time TIME.
n=0
call() {
  n=$((n + 1))
  local head="{\"corrId\":\"c-$n\",\"version\":\"2026-04-01\"${3:+,\"resonate:debug_time\":$3}}"
  raw "{\"kind\":\"$1\",\"head\":$head,\"data\":$2}"
}

# field EXPR: a JS expression over the last answer `r`, as JSON.
field() {
  node -e 'const r = JSON.parse(process.argv[2]); process.stdout.write(JSON.stringify(eval(process.argv[1])) ?? "undefined")' "$1" "$RESP"
}

# expect STATUS KIND DATA [TIME]: the envelope status, the HTTP status and the
# echoed corrId must agree with STATUS.
expect() {
  local want=$1
  shift
  call "$@"
  local got corr
  got=$(field 'r.head.status')
  corr=$(field 'r.head.corrId')
  if [ "$got" = "$want" ] && [ "$HTTP" = "$want" ] && [ "$corr" = "\"c-$n\"" ]; then
    ok "$1 -> $want"
  else
    ko "$1 -> $got (http $HTTP, corrId $corr), wanted $want: $RESP"
  fi
}

# is EXPR JSON: a field of the last answer.
is() {
  local got
  got=$(field "$1")
  if [ "$got" = "$2" ]; then ok "  $1 == $2"; else ko "  $1 == $got, wanted $2"; fi
}

snap() { call debug.snap '{}'; }

T='"resonate:target":"http://worker.local/a"'

# ---------------------------------------------------------------- eager ----
start eager
expect 200 debug.start '{}'
expect 200 debug.reset '{}'

expect 200 promise.create "{\"id\":\"a\",\"timeoutAt\":900000,\"param\":{\"data\":\"eA==\"},\"tags\":{$T}}" 1000
is 'r.data.promise.state' '"pending"'
is 'r.data.promise.createdAt' '1000'
snap
is 'r.data.tasks' '[{"id":"a","version":0,"state":"pending","resumes":[]}]'
is 'r.data.taskTimeouts' '[{"id":"a","type":0,"timeout":31000}]'
is 'r.data.messages[0].message' '{"kind":"execute","head":{},"data":{"task":{"id":"a","version":0}}}'
is 'Object.keys(r.data).join()' '"promises,promiseTimeouts,callbacks,listeners,tasks,taskTimeouts,messages,schedules,scheduleTimeouts,resumes"'

expect 200 task.acquire '{"id":"a","version":0,"pid":"p1","ttl":5000}' 1000
is 'r.data.task' '{"id":"a","version":1,"state":"acquired","resumes":[],"pid":"p1","ttl":5000}'
is 'r.data.preload' '[]'
expect 409 task.acquire '{"id":"a","version":0,"pid":"p1","ttl":5000}' 1000
is 'typeof r.data' '"string"'

expect 200 promise.create '{"id":"a.1","timeoutAt":50000,"param":{},"tags":{}}' 1000
expect 200 task.suspend '{"id":"a","version":1,"actions":[{"kind":"promise.register_callback","head":{"corrId":"","version":"2026-04-01"},"data":{"awaited":"a.1","awaiter":"a"}}]}' 1000
snap
is 'r.data.callbacks' '[{"awaiter":"a","awaited":"a.1"}]'
is 'r.data.tasks[0].state' '"suspended"'
is 'r.data.taskTimeouts' '[]'

expect 200 promise.settle '{"id":"a.1","state":"resolved","value":{}}' 2000
is 'r.data.promise.settledAt' '2000'
expect 200 task.get '{"id":"a"}' 2000
is 'r.data.task' '{"id":"a","version":1,"state":"pending","resumes":["a.1"]}'
snap
is 'r.data.resumes' '[{"id":"a","awaited":"a.1"}]'
is 'r.data.messages[0].message.data.task' '{"id":"a","version":1}'
is 'r.data.taskTimeouts' '[{"id":"a","type":0,"timeout":32000}]'

# debug.tick fires the retry due at 32000
expect 200 debug.tick '{"time":40000}' 40000
is 'r.data' '[]'
snap
is 'r.data.taskTimeouts' '[{"id":"a","type":0,"timeout":70000}]'
expect 400 debug.tick '{"time":40000}' 40001
expect 400 debug.tick '{}' 40000
expect 400 debug.tick '{"time":-1}'

# a promise with neither target nor timer has no listeners (SDK: 422)
expect 200 promise.create '{"id":"b","timeoutAt":900000,"param":{},"tags":{}}' 40000
expect 422 promise.register_listener '{"awaited":"b","address":"http://listener.local/1"}' 40000
expect 200 promise.register_listener '{"awaited":"a","address":"http://listener.local/1"}' 40000

# schedules: the occurrence due at 60000 is fired by the tick
expect 200 schedule.create "{\"id\":\"s1\",\"cron\":\"* * * * *\",\"promiseId\":\"{{.id}}.{{.timestamp}}\",\"promiseTimeout\":60000,\"promiseParam\":{},\"promiseTags\":{$T}}" 40000
is 'r.data.schedule.nextRunAt' '60000'
expect 200 debug.tick '{"time":60000}' 60000
snap
is 'r.data.schedules[0].lastRunAt' '60000'
is 'r.data.schedules[0].nextRunAt' '120000'
is 'r.data.scheduleTimeouts' '[{"id":"s1","timeout":120000}]'
is 'r.data.promises.find(p => p.id === "s1.60000").tags["resonate:schedule"]' '"s1"'
expect 400 schedule.create "{\"id\":\"s2\",\"cron\":\"* * * * *\",\"promiseId\":\"x\",\"promiseTimeout\":1,\"promiseParam\":{},\"promiseTags\":{}}" 60000

# task.create and a fenced create
expect 200 task.create "{\"pid\":\"p1\",\"ttl\":10000,\"action\":{\"kind\":\"promise.create\",\"head\":{\"corrId\":\"\",\"version\":\"2026-04-01\"},\"data\":{\"id\":\"c\",\"timeoutAt\":900000,\"param\":{},\"tags\":{$T}}}}" 60000
is 'r.data.task.version' '1'
expect 200 task.fence '{"id":"c","version":1,"action":{"kind":"promise.create","head":{"corrId":"inner","version":"2026-04-01"},"data":{"id":"c.1","timeoutAt":900000,"param":{},"tags":{}}}}' 60000
is 'r.data.action.kind' '"promise.create"'
is 'r.data.action.head' '{"corrId":"inner","status":200,"version":"2026-04-01"}'
expect 200 task.heartbeat '{"pid":"p1","tasks":[{"id":"c","version":1}]}' 61000
expect 501 promise.search '{}' 61000

# eager mode materialises an expired promise a request names
expect 200 promise.create '{"id":"d.1","timeoutAt":62000,"param":{},"tags":{}}' 61000
expect 300 task.suspend '{"id":"c","version":1,"actions":[{"kind":"promise.register_callback","head":{"corrId":"","version":"2026-04-01"},"data":{"awaited":"d.1","awaiter":"c"}}]}' 63000
is 'r.data' '{"preload":[]}'
expect 200 promise.get '{"id":"d.1"}' 63000
is 'r.data.promise.state' '"rejected_timedout"'
snap
is 'r.data.promises.find(p => p.id === "d.1").settledAt' '62000'

# guards (400 before Server.apply)
expect 400 promise.create '{"id":"g","timeoutAt":900000,"param":{}}' 63000
expect 400 promise.create '{"id":"g","timeoutAt":"900000","param":{},"tags":{}}' 63000
expect 400 promise.settle '{"id":"b","state":"pending","value":{}}' 63000
expect 400 task.acquire '{"id":"a","version":1,"pid":"p1","ttl":"5000"}' 63000
expect 400 task.fence '{"id":"c","version":1,"action":{"kind":"promise.settle","data":{"id":"c.1","state":"resolved","value":{}}}}' 63000
expect 400 task.heartbeat '{"pid":"p1","tasks":[{"id":"c","version":1},null]}' 63000
expect 400 schedule.create "{\"id\":\"s3\",\"cron\":\"* * * * *\",\"promiseId\":5,\"promiseTimeout\":1,\"promiseParam\":{},\"promiseTags\":{$T}}" 63000
snap
is 'r.data.promises.some(p => p.id === "g")' 'false'

# envelopes
expect 400 no.such.kind '{}' 63000
raw 'not json'
[ "$HTTP" = 400 ] && ok "bad JSON -> 400" || ko "bad JSON -> $HTTP"
raw '{"kind":"promise.get","head":{"corrId":"v","version":"2025-01-01"},"data":{"id":"a"}}'
[ "$HTTP" = 400 ] && ok "wrong version -> 400" || ko "wrong version -> $HTTP"
raw '{"kind":"promise.get","head":{"corrId":"v","version":"2026-04-01","resonate:debug_time":-5},"data":{"id":"a"}}'
[ "$HTTP" = 400 ] && ok "negative debug_time -> 400" || ko "negative debug_time -> $HTTP"

# an exception inside apply is a 500 and the shim stays up
expect 500 task.suspend '{"id":"a","version":1,"actions":"x"}' 63000
expect 200 promise.get '{"id":"a"}'
is 'r.data.promise.id' '"a"'

expect 200 debug.reset '{}'
snap
is 'r.data.promises' '[]'
is 'r.data.schedules' '[]'
expect 200 debug.stop '{}'

# ----------------------------------------------------------------- none ----
start none
expect 200 debug.reset '{}'
expect 200 promise.create '{"id":"w.1","timeoutAt":3000,"param":{},"tags":{}}' 1000
expect 200 task.create "{\"pid\":\"p1\",\"ttl\":60000,\"action\":{\"kind\":\"promise.create\",\"head\":{\"corrId\":\"\",\"version\":\"2026-04-01\"},\"data\":{\"id\":\"w\",\"timeoutAt\":900000,\"param\":{},\"tags\":{$T}}}}" 1000
# reads project, storage stays pending
expect 200 promise.get '{"id":"w.1"}' 5000
is 'r.data.promise.state' '"rejected_timedout"'
snap
is 'r.data.promises.find(p => p.id === "w.1").state' '"pending"'
# task.suspend reads the awaited promise's stored state (DIALECT.md, B4)
expect 200 task.suspend '{"id":"w","version":1,"actions":[{"kind":"promise.register_callback","head":{"corrId":"","version":"2026-04-01"},"data":{"awaited":"w.1","awaiter":"w"}}]}' 5000

# --------------------------------------------------------------- refusal ---
if node "$here/server.mjs" --port 0 --bind 0.0.0.0 >/dev/null 2>&1; then
  ko "--bind 0.0.0.0 accepted"
else
  rc=$?
  [ "$rc" = 2 ] && ok "--bind 0.0.0.0 refused with exit 2" || ko "--bind 0.0.0.0 exit $rc"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
