#!/usr/bin/env bash
# The project's test command: formatting, lints, then every test. Tests
# that need a target start it themselves on an ephemeral loopback port:
# `conform serve`, and the TypeScript SDK's server through the shim in
# scripts/ts-server (installed here with `npm ci` when Node.js is present;
# without Node.js those tests say SKIPPED, unless CONFORM_REQUIRE_NODE=1).
# Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v npm >/dev/null 2>&1; then
    if [ ! -f scripts/ts-server/node_modules/@resonatehq/sdk/package.json ]; then
        (cd scripts/ts-server && npm ci --no-audit --no-fund --loglevel=error)
    fi
fi
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
