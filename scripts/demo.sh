#!/usr/bin/env bash
# A real differential run end to end, with nothing else to set up:
# 1. the reference server (the model over HTTP) against the model: no divergence;
# 2. a server with a planted bug: the divergence is found, saved and shrunk,
#    and the printed replay command is run to show it reproduces.
set -uo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p resonate-runner || exit 2
conform="${CARGO_TARGET_DIR:-target}/release/conform"
out=$(mktemp -d)

echo "== 1. conform run against the embedded reference server"
$conform run --seed 1 --cases 20 --steps 60 --no-progress --out-dir "$out"
echo "exit code $? (0 = no divergence)"

echo
echo "== 2. conform run against a server whose task.acquire ignores the version"
$conform serve --mutant acquire-no-version-check --port 0 >"$out/serve.log" &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
for _ in $(seq 50); do grep -q listening "$out/serve.log" && break; sleep 0.1; done
url=$(sed -n 's/^listening on //p' "$out/serve.log")
$conform run --target "$url" --seed 1 --cases 50 --steps 60 --fail-fast --no-progress --shrink-time 20 \
    --out-dir "$out" | tee "$out/run.log"
echo "exit code ${PIPESTATUS[0]} (1 = divergence found)"

echo
echo "== 3. the printed replay command, run while the server is still up"
replay=$(sed -n 's/^  replay: *//p' "$out/run.log" | head -1)
echo "\$ $replay"
$replay
echo "exit code $? (1 = the divergence reproduces)"
echo
echo "traces and logs: $out"
