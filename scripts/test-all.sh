#!/usr/bin/env bash
# Runs every test hydron has: the Rust suite in every feature combination that
# builds, lints and docs, and the Python interop tests (in a virtualenv that this
# script creates on first use). Usage: bash scripts/test-all.sh
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

# Every feature combination that matters: none, each feature alone, all.
step "cargo test --workspace --no-default-features"
cargo test --workspace --no-default-features
for feature in simd approx serde fory json; do
  step "cargo test --workspace --no-default-features --features $feature"
  cargo test --workspace --no-default-features --features "$feature"
done
step "cargo test --workspace --all-features"
cargo test --workspace --all-features

step "cargo clippy --all-targets --all-features -- -D warnings"
cargo clippy --workspace --all-targets --all-features -- -D warnings
step "cargo doc (warnings denied)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features

if [ -d python ]; then
  step "python interop tests"
  bash python/run-tests.sh
fi
step "all tests passed"
