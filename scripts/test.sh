#!/usr/bin/env bash
# The project's test command: formatting, lints, then every test. Tests
# that need a target start it themselves on an ephemeral loopback port:
# `conform serve`, and the TypeScript SDK's server through the shim in
# scripts/ts-server (installed here with `npm ci` when Node.js is present;
# without Node.js those tests say SKIPPED, unless CONFORM_REQUIRE_NODE=1).
# The Python SDK's server (scripts/py-server) is installed here when a
# Python >= 3.12 is found (scripts/py-server/install.sh; CI builds one with
# --build-python), resonate-pg's shim (scripts/pg-server) when
# RESONATE_PG_SQL names your resonate.sql; without them their tests say
# SKIPPED. Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v npm >/dev/null 2>&1; then
    if [ ! -f scripts/ts-server/node_modules/@resonatehq/sdk/package.json ]; then
        (cd scripts/ts-server && npm ci --no-audit --no-fund --loglevel=error)
    fi
fi
rc=0
scripts/py-server/install.sh 2>/dev/null || rc=$?
if [ "$rc" = 3 ]; then
    echo "scripts/py-server: no Python >= 3.12, its tests will say SKIPPED (scripts/py-server/README.md)"
elif [ "$rc" != 0 ]; then
    scripts/py-server/install.sh  # again, with its messages
fi
if [ -n "${RESONATE_PG_SQL:-}" ]; then
    scripts/pg-server/install.sh
fi
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
