#!/usr/bin/env bash
# Runs every test hydron has: the Rust suite in every feature combination that
# builds, lints and docs, and the Python tests: python/run-tests.sh builds the
# native module (hydron-py) into python/.venv (created on first use), checks
# its stubs, runs pytest and the interop tests both ways (hydron and stock
# pyfory). Usage: bash scripts/test-all.sh
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> [%s] %s\n' "$(date -u +%T)" "$*"; }
run() { step "$*"; "$@"; }

run cargo fmt --all -- --check

# Each library crate on its own, so that cargo does not unify its features
# with those other workspace members turn on: none, each feature alone.
# (Doctests run once per crate below, with all features; the feature-gated
# examples in them are written to compile in every combination.)
for features in "" simd approx serde fory parallel; do
  run cargo test -p hydron-core --no-default-features ${features:+--features $features} --lib --tests
done
for features in "" fory-messages fory json parallel arrow parquet; do
  run cargo test -p hydron-codec --no-default-features ${features:+--features $features} --lib --tests
done
# The root package's minimal build (its defaults are fory and json).
run cargo test -p hydron --no-default-features --lib --tests

# Everything together: all crates, all targets' tests, doctests, examples.
run cargo test --workspace --all-features

# The README's main command, on a small batch (the release run takes longer).
run cargo run --example pipeline --features simd,fory,json -- 20000

run cargo clippy --workspace --all-targets --all-features -- -D warnings
# The Python module's other builds (python/run-tests.sh tests the default
# one, which `pip install ./python` builds, and the full one): no warnings
# in either, nor with Arrow alone.
run cargo clippy -p hydron-py --all-targets -- -D warnings
run cargo clippy -p hydron-py --all-targets --features arrow -- -D warnings
step "RUSTDOCFLAGS=-D warnings cargo doc --workspace --no-deps --all-features"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features

# WebAssembly: builds for wasm32-unknown-unknown and wasm32-wasip1, and
# hydron-core's tests under Node's WASI (scalar and simd128).
run bash scripts/wasm-test.sh

# Unsafe code under Miri: targeted tests of every `unsafe` block, in the
# scalar, portable and AVX2 builds (about 3 minutes; installs Miri on the
# nightly toolchain if it is missing).
run bash scripts/miri.sh

# Python: the native module, its tests, interop both ways (about 30 s when
# the release build of hydron-py is cached; a clean one adds about 1.5 CPU-minutes).
run bash python/run-tests.sh
step "all tests passed"
