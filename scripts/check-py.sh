#!/usr/bin/env bash
# A real server checked end to end, in one command: the Python SDK's
# in-process server (resonate-sdk 0.8.1, through the shim in
# scripts/py-server) against its built-in profile (with its declarative
# dialect) and baseline. Prints what the baseline contains, runs the
# harness, and writes a JSON report and JUnit XML per seed under $OUT
# (default target/conform-py). Exit 0 when every run is green.
#
#   scripts/check-py.sh [--seeds "1 2 3"] [--cases 30] [--steps 100]
#
# Needs the venv (scripts/py-server/install.sh); without it, exit 2, or
# with CONFORM_REQUIRE_PYTHON unset, SKIPPED and exit 0.
set -uo pipefail
cd "$(dirname "$0")/.."
seeds="1"; cases=30; steps=100
while [ $# -gt 0 ]; do
    case "$1" in
        --seeds) seeds="$2"; shift 2 ;;
        --cases) cases="$2"; shift 2 ;;
        --steps) steps="$2"; shift 2 ;;
        *) echo "usage: $0 [--seeds \"1 2\"] [--cases N] [--steps N]"; exit 2 ;;
    esac
done
python=scripts/py-server/.venv/bin/python
if [ ! -x "$python" ]; then
    if [ "${CONFORM_REQUIRE_PYTHON:-}" = 1 ]; then
        echo "error: no venv for the Python server: run scripts/py-server/install.sh"; exit 2
    fi
    echo "SKIPPED: no venv for the Python server (scripts/py-server/install.sh)"; exit 0
fi
cargo build --release -q -p resonate-runner || exit 2
conform="${CARGO_TARGET_DIR:-target}/release/conform"
out="${OUT:-${CARGO_TARGET_DIR:-target}/conform-py}"
mkdir -p "$out"
echo "== the Python server"
"$conform" baseline py
log="$out/shim.log"
# Emptied first: the server's redirection truncates it only once its
# process runs, and a log left by an earlier run (an older port) must not
# be read as this server's.
: >"$log"
"$python" scripts/py-server/server.py --port 0 >"$log" 2>&1 &
pid=$!
url=""
for _ in $(seq 600); do  # up to a minute: importing the SDK is slow on a loaded machine
    url=$(sed -n 's/^listening on //p' "$log")
    [ -n "$url" ] && break
    sleep 0.1
done
if [ -z "$url" ]; then echo "error: the shim did not start:"; cat "$log"; kill "$pid" 2>/dev/null; exit 3; fi
status=0
for seed in $seeds; do
    "$conform" run --target "$url" --profile py --baseline py \
        --seed "$seed" --cases "$cases" --steps "$steps" --no-progress \
        --out-dir "$out/failures" --report "$out/py-$seed.json" --junit "$out/py-$seed.xml"
    code=$?
    echo "exit code $code (0 = green)"
    [ "$code" -ne 0 ] && status=$code
done
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
echo "reports: $out"
exit $status
