#!/usr/bin/env bash
# The project's test command: formatting, lints, then every test that needs
# no external server (tests that need a target start `conform serve`
# themselves on an ephemeral loopback port). Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
