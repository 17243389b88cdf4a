# Helpers shared by scripts/py-server/smoke.sh and scripts/pg-server/smoke.sh
# (sourced, not run): start a shim, send envelopes with curl, check fields of
# the answers with python3. Each smoke script ends with `summary`.
#
# After `start CMD...`, URL is the shim's address; `call KIND DATA [TIME]`
# sends an envelope with corrId c-N (and resonate:debug_time TIME when given)
# and sets RESP and HTTP; `expect STATUS KIND DATA [TIME]` also checks the
# envelope status, the HTTP status and the echoed corrId; `is EXPR JSON`
# checks a Python expression over the last answer `r`.

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do
    kill -TERM "$p" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
  rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
ok() { passed=$((passed + 1)); printf 'ok    %s\n' "$1"; }
ko() { failed=$((failed + 1)); printf 'FAIL  %s\n' "$1"; }

# start NAME CMD...: start a shim, wait for its one line, set URL.
start() {
  local name=$1
  shift
  local out="$work/out.$name"
  "$@" --port 0 --bind 127.0.0.1 >"$out" 2>"$work/err.$name" &
  pids+=("$!")
  for _ in $(seq 1 300); do
    if grep -q '^listening on ' "$out"; then break; fi
    if ! kill -0 "${pids[-1]}" 2>/dev/null; then break; fi
    sleep 0.1
  done
  URL=$(sed -n 's/^listening on //p' "$out")
  if [ -z "$URL" ]; then
    cat "$work/err.$name" >&2
    echo "the shim did not start" >&2
    exit 1
  fi
  [ "$(wc -l <"$out")" -eq 1 ] && ok "[$name] one line on stdout: listening on $URL" || ko "[$name] stdout: $(cat "$out")"
}

# raw BODY: POST BODY; sets RESP (body) and HTTP (status code).
raw() {
  HTTP=$(curl -sS -o "$work/resp" -w '%{http_code}' -X POST "$URL/" -H 'content-type: application/json' --data-binary "$1")
  RESP=$(cat "$work/resp")
}

n=0
call() {
  n=$((n + 1))
  local head="{\"corrId\":\"c-$n\",\"version\":\"2026-04-01\"${3:+,\"resonate:debug_time\":$3}}"
  raw "{\"kind\":\"$1\",\"head\":$head,\"data\":$2}"
}

# field EXPR: a Python expression over the last answer `r`, as compact JSON.
field() {
  python3 -c 'import json, sys; r = json.loads(sys.argv[2]); print(json.dumps(eval(sys.argv[1]), separators=(",", ":"), sort_keys=True))' "$1" "$RESP" 2>/dev/null || echo undefined
}

expect() {
  local want=$1
  shift
  call "$@"
  local got corr
  got=$(field 'r["head"]["status"]')
  corr=$(field 'r["head"]["corrId"]')
  if [ "$got" = "$want" ] && [ "$HTTP" = "$want" ] && [ "$corr" = "\"c-$n\"" ]; then
    ok "$1 -> $want"
  else
    ko "$1 -> $got (http $HTTP, corrId $corr), wanted $want: $RESP"
  fi
}

is() {
  local got
  got=$(field "$1")
  if [ "$got" = "$2" ]; then ok "  $1 == $2"; else ko "  $1 == $got, wanted $2"; fi
}

snap() { call debug.snap '{}'; }

# refuse_bind CMD...: a non-loopback --bind is exit 2.
refuse_bind() {
  if "$@" --port 0 --bind 0.0.0.0 >/dev/null 2>&1; then
    ko "--bind 0.0.0.0 accepted"
  else
    local rc=$?
    [ "$rc" = 2 ] && ok "--bind 0.0.0.0 refused with exit 2" || ko "--bind 0.0.0.0 exit $rc"
  fi
}

# envelopes: the shared envelope checks.
envelopes() {
  raw 'not json'
  [ "$HTTP" = 400 ] && ok "bad JSON -> 400" || ko "bad JSON -> $HTTP"
  raw '{"kind":"promise.get","head":{"corrId":"v","version":"2025-01-01"},"data":{"id":"a"}}'
  [ "$HTTP" = 400 ] && ok "wrong version -> 400" || ko "wrong version -> $HTTP"
  raw '{"kind":"promise.get","head":{"corrId":"v","version":"2026-04-01","resonate:debug_time":-5},"data":{"id":"a"}}'
  [ "$HTTP" = 400 ] && ok "negative debug_time -> 400" || ko "negative debug_time -> $HTTP"
  raw '{"kind":"promise.get","head":{"corrId":"v","version":"2026-04-01"},"data":[]}'
  [ "$HTTP" = 400 ] && ok "data not an object -> 400" || ko "data not an object -> $HTTP"
  expect 400 debug.tick '{"time":40000}' 40001
  expect 400 debug.tick '{}' 40000
  expect 400 debug.tick '{"time":-1}'
  HTTP=$(curl -sS -o /dev/null -w '%{http_code}' "$URL/health")
  [ "$HTTP" = 200 ] && ok "GET /health -> 200" || ko "GET /health -> $HTTP"
}

summary() {
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ]
}
