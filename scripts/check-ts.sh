#!/usr/bin/env bash
# A real server checked end to end, in one command: the TypeScript SDK's
# in-process server (@resonatehq/sdk 0.11.5, through the shim in
# scripts/ts-server), in both timeout modes, against its built-in profile
# and baseline. Prints what each baseline contains, runs the harness, and
# writes a JSON report and JUnit XML per run under $OUT (default
# target/conform-ts). Exit 0 when every run is green.
#
#   scripts/check-ts.sh [--seeds "1 2 3"] [--cases 30] [--steps 100] [--modes "eager none"]
set -uo pipefail
cd "$(dirname "$0")/.."
seeds="1"; cases=30; steps=100; modes="eager none"
while [ $# -gt 0 ]; do
    case "$1" in
        --seeds) seeds="$2"; shift 2 ;;
        --cases) cases="$2"; shift 2 ;;
        --steps) steps="$2"; shift 2 ;;
        --modes) modes="$2"; shift 2 ;;
        *) echo "usage: $0 [--seeds \"1 2\"] [--cases N] [--steps N] [--modes \"eager none\"]"; exit 2 ;;
    esac
done
command -v node >/dev/null || { echo "error: Node.js is needed for the TypeScript server"; exit 2; }
if [ ! -f scripts/ts-server/node_modules/@resonatehq/sdk/package.json ]; then
    (cd scripts/ts-server && npm ci --no-audit --no-fund --loglevel=error) || exit 2
fi
cargo build --release -q -p resonate-runner || exit 2
conform="${CARGO_TARGET_DIR:-target}/release/conform"
out="${OUT:-${CARGO_TARGET_DIR:-target}/conform-ts}"
mkdir -p "$out"
status=0
for mode in $modes; do
    echo "== the TypeScript server, timeout mode $mode"
    "$conform" baseline "ts-$mode"
    log="$out/shim-$mode.log"
    : >"$log"  # not an earlier run's log: see check-py.sh
    node scripts/ts-server/server.mjs --port 0 --timeout-mode "$mode" >"$log" 2>&1 &
    pid=$!
    url=""
    for _ in $(seq 100); do
        url=$(sed -n 's/^listening on //p' "$log")
        [ -n "$url" ] && break
        sleep 0.1
    done
    if [ -z "$url" ]; then echo "error: the shim did not start:"; cat "$log"; kill "$pid" 2>/dev/null; exit 3; fi
    for seed in $seeds; do
        "$conform" run --target "$url" --profile "ts-$mode" --baseline "ts-$mode" \
            --seed "$seed" --cases "$cases" --steps "$steps" --no-progress \
            --out-dir "$out/failures" --report "$out/ts-$mode-$seed.json" --junit "$out/ts-$mode-$seed.xml"
        code=$?
        echo "exit code $code (0 = green)"
        [ "$code" -ne 0 ] && status=$code
    done
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    echo
done
echo "reports: $out"
exit $status
